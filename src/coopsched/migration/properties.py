"""The fairness properties of "Migration and fairness in online scheduling", checked.

Each checker returns a :class:`Verdict`: ``holds`` on this instance, or a concrete
violation naming the jobs, their types and completion times.

* EF (Def. 2): ``j < k`` implies ``d_j <= d_k``, where ``j < k`` (Def. 1) is ``j <= k``
  (``r_j <= r_k``, ``v0_j >= v0_k``, ``t_j <= t_k``) with ``r_j < r_k`` or ``v0_j > v0_k``.
  The strict order is the paper's (Lemma 1's proof needs it: two jobs of identical type
  cannot both finish first); docs/conventions.md §3 only spells out the non-strict one.
* WPM (Def. 3): giving a job a worse type (later release, lower priority, longer
  processing), all else fixed, never makes it finish earlier. Checked by re-running with
  perturbed types.
* ILV (Def. 4): with distinct releases, a job's completion depends only on
  ``h(J)``, the jobs of higher priority or of equal priority released no later. Checked by
  re-running on ``h(J)`` alone.
* Non-wastefulness (Observation, Sec. 4): no machine is idle while a previously
  preempted job waits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .engine import MigrationPolicy, MigrationResult, RelatedInstance, simulate

PROPERTIES = ("ef", "wpm", "ilv", "non-wasteful")


@dataclass(frozen=True)
class Verdict:
    """Whether a property holds (``prop``, ``holds``), why not (``detail``, ``jobs``), and whether
    it applies to the policy."""

    prop: str
    holds: bool
    detail: str = ""
    jobs: tuple[int, ...] = ()
    applicable: bool = True

    def __str__(self) -> str:
        if not self.applicable:
            return f"{self.prop}: not applicable ({self.detail})"
        return f"{self.prop}: holds" if self.holds else f"{self.prop}: VIOLATED -- {self.detail}"


def _type(inst: RelatedInstance, j: int) -> str:
    return f"(r={inst.release[j]}, t={inst.work[j]}, v0={_num(inst.priority[j])})"


def _num(x) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def precedes(inst: RelatedInstance, j: int, k: int) -> bool:
    """``j <= k`` of Def. 1."""
    return (
        inst.release[j] <= inst.release[k]
        and inst.priority[j] >= inst.priority[k]
        and inst.work[j] <= inst.work[k]
    )


def strictly_precedes(inst: RelatedInstance, j: int, k: int) -> bool:
    """``j < k`` of Def. 1: ``j <= k`` with an earlier release or a higher priority."""
    return precedes(inst, j, k) and (
        inst.release[j] < inst.release[k] or inst.priority[j] > inst.priority[k]
    )


def ef_violations(res: MigrationResult) -> list[tuple[int, int]]:
    """All pairs ``(j, k)`` with ``j < k`` and ``d_j > d_k`` (vectorized)."""
    inst = res.instance
    if inst.n < 2:
        return []
    r = np.array(inst.release)
    t = np.array(inst.work)
    v = np.array([float(x) for x in inst.priority])
    order = sorted(range(inst.n), key=lambda j: res.completion[j])
    rank = np.empty(inst.n, dtype=np.int64)
    rank[order] = np.arange(inst.n)
    d = np.array([res.completion[j] for j in range(inst.n)], dtype=object)
    pre = (r[:, None] <= r[None, :]) & (v[:, None] >= v[None, :]) & (t[:, None] <= t[None, :])
    pre &= (r[:, None] < r[None, :]) | (v[:, None] > v[None, :])
    later = rank[:, None] > rank[None, :]
    cand = np.argwhere(pre & later)
    out = []
    for j, k in cand:
        if j != k and d[j] > d[k] and strictly_precedes(inst, int(j), int(k)):  # exact re-check
            out.append((int(j), int(k)))
    return out


def check_ef(res: MigrationResult) -> Verdict:
    """Envy-freeness (Def. 1) of one run: no job finishes after a job it strictly precedes
    (:func:`strictly_precedes`); if it fails, the verdict names the worst pair."""
    bad = ef_violations(res)
    if not bad:
        return Verdict("ef", True)
    inst = res.instance
    j, k = min(bad, key=lambda p: (res.completion[p[0]] - res.completion[p[1]], p))
    return Verdict(
        "ef",
        False,
        f"job {j} {_type(inst, j)} < job {k} {_type(inst, k)} but d_{j}={_num(res.completion[j])} > d_{k}={_num(res.completion[k])} "
        f"({len(bad)} violating pair(s))",
        (j, k),
    )


def _perturbations(
    inst: RelatedInstance, j: int, deltas: Iterable[int]
) -> list[tuple[str, RelatedInstance]]:
    out = []
    for d in deltas:
        out.append(
            (
                f"release {inst.release[j]}->{inst.release[j] + d}",
                inst.replace_job(j, r=inst.release[j] + d),
            )
        )
        out.append(
            (f"work {inst.work[j]}->{inst.work[j] + d}", inst.replace_job(j, t=inst.work[j] + d))
        )
        out.append(
            (
                f"priority {_num(inst.priority[j])}->{_num(inst.priority[j] - d)}",
                inst.replace_job(j, v0=inst.priority[j] - d),
            )
        )
    return out


def check_wpm(
    make_policy: Callable[[], MigrationPolicy],
    inst: RelatedInstance,
    *,
    jobs: Iterable[int] | None = None,
    deltas: Iterable[int] = (1, 2),
    cost=0,
    base: MigrationResult | None = None,
) -> Verdict:
    """Re-run with each job's type made worse; a worse type must not finish earlier."""
    base = base or simulate(inst, make_policy(), cost)
    deltas = list(deltas)
    for j in range(inst.n) if jobs is None else jobs:
        for what, other in _perturbations(inst, j, deltas):
            d2 = simulate(other, make_policy(), cost).completion[j]
            if d2 < base.completion[j]:
                return Verdict(
                    "wpm",
                    False,
                    f"job {j} {_type(inst, j)} finishes at {_num(base.completion[j])}, but with {what} at {_num(d2)}",
                    (j,),
                )
    return Verdict("wpm", True)


def high_set(inst: RelatedInstance, j: int) -> list[int]:
    """``h(J)`` of job ``j`` (Def. 4), ``j`` included."""
    return [
        k
        for k in range(inst.n)
        if inst.priority[k] > inst.priority[j]
        or (inst.priority[k] == inst.priority[j] and inst.release[k] <= inst.release[j])
    ]


def check_ilv(
    make_policy: Callable[[], MigrationPolicy],
    inst: RelatedInstance,
    *,
    cost=0,
    base: MigrationResult | None = None,
) -> Verdict:
    """Completion of each job on the whole instance vs on ``h(J)`` alone."""
    if len(set(inst.release)) != inst.n:
        return Verdict(
            "ilv", True, "releases are not distinct (Def. 4 needs them distinct)", applicable=False
        )
    base = base or simulate(inst, make_policy(), cost)
    for j in range(inst.n):
        h = high_set(inst, j)
        if len(h) == inst.n:
            continue
        sub = inst.subset(h)
        d_sub = simulate(sub, make_policy(), cost).completion[h.index(j)]
        if d_sub != base.completion[j]:
            return Verdict(
                "ilv",
                False,
                f"job {j} {_type(inst, j)} finishes at {_num(base.completion[j])} among all jobs but at "
                f"{_num(d_sub)} with only h(J) ({len(h)} jobs): lower-priority jobs changed it",
                (j,),
            )
    return Verdict("ilv", True)


def check_non_wasteful(res: MigrationResult) -> Verdict:
    """No machine idle while a preempted (started, unfinished, not running) job waits."""
    inst = res.instance
    points = sorted({a for _, _, a, _ in res.segments} | {b for _, _, _, b in res.segments})
    for a, b in zip(points, points[1:], strict=False):
        mid = (a + b) / 2
        running = {(j, m) for j, m, s, e in res.segments if s <= mid < e}
        busy = {m for _, m in running}
        if len(busy) == inst.machines:
            continue
        run_jobs = {j for j, _ in running}
        for j in range(inst.n):
            started = any(job == j and s < mid for job, _, s, _ in res.segments)
            if started and j not in run_jobs and res.completion[j] > mid:
                idle = sorted(set(range(inst.machines)) - busy)
                return Verdict(
                    "non-wasteful",
                    False,
                    f"during ({_num(a)}, {_num(b)}) machine(s) {idle} idle while preempted job {j} waits",
                    (j,),
                )
    return Verdict("non-wasteful", True)


def check_all(
    make_policy: Callable[[], MigrationPolicy], inst: RelatedInstance, cost=0
) -> list[Verdict]:
    """Every property (EF, WPM, ILV, non-wastefulness) of the policy ``make_policy`` builds, on
    ``inst``."""
    res = simulate(inst, make_policy(), cost)
    return [
        check_ef(res),
        check_wpm(make_policy, inst, cost=cost, base=res),
        check_ilv(make_policy, inst, cost=cost, base=res),
        check_non_wasteful(res),
    ]
