"""The typed audit report prints the JSON the dict report printed.

``tests/fixtures/audit-golden/*.json`` were written by the audit before it returned a typed
report (``python tests/test_audit_json_golden.py`` rewrites them from the current code:
only do that when the JSON output is meant to change). Each case audits the small Slurm
log of ``tests/fixtures/slurm-tree`` or a small recorded instance: exact and sampled, with
an account tree (its Owen section), rigid and sequential jobs, with counterfactuals.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
TREE = HERE / "fixtures" / "slurm-tree"
GOLDEN = HERE / "fixtures" / "audit-golden"
LOG = "sacct_X_utc.txt"  # relative: the report names the log as it was given
SHARES = "sacctmgr_assoc.txt"
COMMON = dict(timezone="UTC", machines=202, points=2)

CASES: dict[str, dict] = {
    "exact_shares_owen": dict(org_by="account", shares=SHARES, **COMMON),
    "exact_sequential": dict(org_by="account", jobs="sequential", **COMMON),
    "sampled_shares_owen": dict(
        org_by="account", shares=SHARES, method="sampled", samples=40, seed=3, **COMMON
    ),
    "sampled_fixed_bernstein": dict(
        org_by="user",
        method="sampled",
        samples=24,
        adaptive=False,
        interval="bernstein",
        with_counterfactuals=False,
        **COMMON,
    ),
}


def _recorded_instance():
    """Two organizations, rigid jobs, recorded under FIFO with EASY backfilling."""
    import numpy as np

    import coopsched as cs
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    base = cs.make_instance([2, 2], [(0, 0, 3), (0, 1, 2), (1, 0, 4), (1, 2, 2)], names=["a", "b"])
    inst = dataclasses.replace(
        base, processors=np.array([1, 2, 2, 1]), requested=np.array([4, 3, 5, 3])
    )
    return dataclasses.replace(
        inst, start=simulate(inst, get_policy("fifo"), 12, backfill="easy").start
    )


def _run(name: str) -> str:
    from coopsched.audit import audit
    from coopsched.audit.report import to_json

    if name == "instance_rigid":
        return to_json(audit(_recorded_instance(), horizon=12, backfill="easy", points=3))
    return to_json(audit(LOG, **CASES[name]))


NAMES = [*CASES, "instance_rigid"]


@pytest.mark.parametrize("name", NAMES)
def test_the_json_report_is_unchanged(name, monkeypatch):
    monkeypatch.chdir(TREE)
    assert _run(name) == (GOLDEN / f"{name}.json").read_text()


if __name__ == "__main__":  # rewrite the golden files from the current code
    sys.path.insert(0, str(HERE))
    GOLDEN.mkdir(exist_ok=True)
    os.chdir(TREE)
    for case in NAMES if len(sys.argv) < 2 else sys.argv[1:]:
        (GOLDEN / f"{case}.json").write_text(_run(case))
        print("wrote", case)
