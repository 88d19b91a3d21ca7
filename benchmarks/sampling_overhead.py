"""What the sampled audit costs besides its coalitions' valuations: the same audit, paired.

    PYTHONPATH=src python benchmarks/sampling_overhead.py
    python benchmarks/paired.py --before f8f5774 --rounds 3 -- benchmarks/sampling_overhead.py

A recorded JSON schedule of ``k`` organizations (one machine and four jobs each, recorded
under FIFO in a four-hour window) is audited by sampling with a fixed number of orders
(``adaptive=False``: every run values the same coalitions, whatever the version), no
counterfactuals, the default 24 curve points. Printed per case: the CPU seconds of the
audit (the schedule built before the clock starts) and the coalitions valued. Run under
``benchmarks/paired.py`` against the package before the budget's chunks of coalitions
(issue 41 item 3), it says what reading the budget before every chunk costs: the same
coalitions are valued by both, so the ratio is the sampling's own overhead.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

import coopsched as cs
from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy

T = 4 * 3600
CASES = ((50, 80), (300, 12))  # organizations, orders


def schedule(k: int):
    rng = np.random.default_rng(0)
    jobs = [
        (u, int(rng.integers(0, 3600)), int(rng.integers(60, 1800)))
        for u in range(k)
        for _ in range(4)
    ]
    inst = cs.make_instance([1] * k, jobs)
    return dataclasses.replace(inst, start=simulate(inst, get_policy("fifo"), T).start)


def main() -> None:
    for k, orders in CASES:
        inst = schedule(k)
        cs.audit(
            inst,
            horizon=T,
            method="sampled",
            samples=4,
            adaptive=False,
            points=2,
            with_counterfactuals=False,
        )  # warm-up
        t0 = time.process_time()
        r = cs.audit(
            inst,
            horizon=T,
            method="sampled",
            samples=orders,
            adaptive=False,
            with_counterfactuals=False,
        )
        cpu = time.process_time() - t0
        s = r.sampling
        assert s is not None
        print(f"k = {k}, {orders} orders: {cpu:.2f} CPU s, {s.coalitions_valued:,} coalitions")


if __name__ == "__main__":
    main()
