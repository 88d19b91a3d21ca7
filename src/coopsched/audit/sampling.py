"""The sampled audit, for more organizations than the exact game can afford.

Permutation sampling over coalitions (Skowron & Rzadca, Eq. 2, via
:func:`coopsched.online.shapley.shapley_monte_carlo`): each sampled order of the
organizations needs the values of its ``k`` prefix coalitions. ``v(grand)`` is the
recorded total, as in the exact game. A coalition of at most ``exact_upto`` members gets
its exact REF value (REF simulates its ``2^|C|`` subcoalitions); a larger one gets the
value of the schedule it builds alone under ``value_policy``, a cheaper policy stated in the
report. The interval is Hoeffding's half-width at the stated confidence, per organization,
from the observed spread of the marginal contributions; the seed fixes the orders.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..online.policies import get_policy
from ..online.ref import ref_schedule
from ..online.shapley import shapley_monte_carlo
from ..online.utilities import psi_sp
from ..workloads.instance import Instance
from .game import recorded_starts


@dataclass
class SampledGame:
    """Estimated ``phi`` with its interval at the horizon, and estimates at ``times``."""

    psi: list[int]
    phi: np.ndarray
    halfwidth: np.ndarray
    times: list[int]
    psi_at: list[list[int]]
    phi_at: list[np.ndarray]
    samples: int
    confidence: float
    value_policy: str
    exact_upto: int
    coalitions: int


def sampled_coalitions(k: int, samples: int, seed: int, order: list[int]) -> list[int]:
    """The distinct prefix coalitions (bit masks, first use first) of the ``samples`` orders
    that :func:`~coopsched.online.shapley.shapley_monte_carlo` draws with this ``seed`` over
    ``order``: what a sampled audit must value."""
    rng = np.random.default_rng(seed)
    seen: dict[int, None] = {}
    for _ in range(samples):
        mask = 0
        for x in rng.permutation(k):
            mask |= 1 << order[x]
            seen.setdefault(mask, None)
    return list(seen)


def interchangeable(inst: Instance) -> list[list[int]]:
    """Groups of two or more organizations that are interchangeable in every coalition:
    no job at all and the same machines (the only organizations that
    :meth:`~coopsched.workloads.instance.Instance.canonical_order` leaves tied)."""
    has_jobs = np.zeros(inst.k, dtype=bool)
    has_jobs[inst.org] = True
    by: dict[int, list[int]] = {}
    for u in range(inst.k):
        if not has_jobs[u]:
            by.setdefault(int(inst.machines[u]), []).append(u)
    return [g for g in by.values() if len(g) > 1]


def symmetrize(values: np.ndarray, groups: list[list[int]], worst: bool = False) -> np.ndarray:
    """Each group's estimates replaced by their mean (their maximum if ``worst``).

    The Shapley value gives interchangeable players equal shares (symmetry axiom); the
    sampled orders place them differently, so their raw estimates differ by chance and
    would depend on the order the organizations are listed in. The mean keeps the sum."""
    out = np.array(values, dtype=np.float64)
    for g in groups:
        out[g] = out[g].max() if worst else out[g].mean()
    return out


def sampled_game(
    inst: Instance,
    horizon: int,
    times: list[int],
    *,
    samples: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    value_policy: str = "fifo",
    exact_upto: int = 8,
    progress: Callable[[int], None] | None = None,
    progress_text: Callable[[str], None] | None = None,
    backfill: str | None = None,
) -> SampledGame:
    """Sample ``samples`` orders of the organizations; see the module doc."""
    k = inst.k
    G = (1 << k) - 1
    grid = sorted(set(int(t) for t in times) | {int(horizon)})
    at = {t: i for i, t in enumerate(grid)}
    recorded = recorded_starts(inst)
    order = inst.canonical_order().tolist()  # orders drawn over it: names do not matter
    psi_grid = [psi_sp(inst.org, recorded, inst.size, t, k, inst.processors) for t in grid]
    grand = np.array([sum(p) for p in psi_grid], dtype=object)
    cache: dict[int, np.ndarray] = {0: np.zeros(len(grid), dtype=object), G: grand}

    def vec(mask: int) -> np.ndarray:
        x = cache.get(mask)
        if x is None:
            members = [u for u in range(k) if mask >> u & 1]
            if inst.rigid:  # every coalition under the platform's backfilling rule
                name = "ref" if len(members) <= exact_upto else value_policy
                sched = get_policy(name).run(inst, horizon, members=members, backfill=backfill)
            elif len(members) <= exact_upto:
                sub = inst.restrict(members)
                sched, _ = ref_schedule(sub, horizon)
            else:
                sched = get_policy(value_policy).run(inst, horizon, members=members)
            x = np.array([sum(sched.psi(t)) for t in grid], dtype=object)
            cache[mask] = x
            if progress is not None:
                progress(len(cache))
        return x

    # the orders are fixed by the seed: the coalitions they need are known before any is
    # valued, so the run time is estimated from the first ones and said before the rest
    needed = sampled_coalitions(k, samples, seed, order)
    if progress_text is not None:
        progress_text(f"{len(needed):,} coalitions to value for {samples} orders of {k}")
    clock = time.perf_counter()
    for i, mask in enumerate(needed):
        vec(mask)
        if progress_text is not None and i in (2, 20):
            per = (time.perf_counter() - clock) / (i + 1)
            progress_text(
                f"valued {i + 1:,} of {len(needed):,} coalitions; about "
                f"{per * (len(needed) - i - 1):,.0f} s to go"
            )
    est = [
        shapley_monte_carlo(
            lambda m, g=g: vec(m)[g], k, samples, seed=seed, confidence=confidence, order=order
        )
        for g in range(len(grid))
    ]
    final = est[at[int(horizon)]]
    groups = interchangeable(inst)
    return SampledGame(
        psi=psi_grid[at[int(horizon)]],
        phi=symmetrize(final.phi, groups),
        halfwidth=symmetrize(final.halfwidth, groups, worst=True),
        times=[t for t in grid if t in set(times)],
        psi_at=[psi_grid[at[t]] for t in grid if t in set(times)],
        phi_at=[symmetrize(est[at[t]].phi, groups) for t in grid if t in set(times)],
        samples=samples,
        confidence=confidence,
        value_policy=value_policy,
        exact_upto=exact_upto,
        coalitions=len(cache),
    )
