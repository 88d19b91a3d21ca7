"""Strategy-proof utilities: the axioms, Theorem 4.1, Proposition 4.2 and the manipulations
(Skowron & Rzadca, "Non-monetary fair scheduling", Sec. 4; "Fair share is not enough").

A schedule of one organization's jobs is a list of ``(s, p)`` pairs (start, size), or of
``(s, p, r)`` triples when the release matters (flow time). A utility maps such a list and
a time ``t`` to a number; every utility here is exact (``int`` or ``Fraction``).

The three axioms of Sec. 4, for a fixed ``t`` (see :func:`check_axioms`):

1. start-time anonymity: ``psi(S + (s,p)) - psi(S + (s+1,p))`` is the same for every
   schedule ``S`` and start ``s`` (and ``> 0``);
2. number-of-tasks anonymity: ``psi(S + (s,p)) - psi(S)`` is the same for every ``S``
   (and ``> 0``);
3. strategy-resistance: ``psi(S + (s,p1) + (s+p1,p2)) = psi(S + (s,p1+p2))``.

Two readings of the paper are made precise here. Axiom 3 is printed as
``psi(S + (s,p1)) + psi(S + (s+p1,p2)) = psi(S + (s,p1+p2))``, which counts ``psi(S)`` twice;
we check what the text says (splitting or merging does not change the utility). Axiom 1 is
checked for unit jobs at every ``s <= t-1`` (the form the proof of Theorem 4.1 uses) and
for longer jobs when the delayed job still completes by ``t``: near ``t`` a delayed job
loses only its parts that cross ``t``, so no non-clairvoyant utility meets the literal
statement there.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..workloads.instance import make_instance

Job = tuple[int, ...]  # (s, p) or (s, p, r)
Utility = Callable[[Sequence[Job], int], Fraction | int]


def psi_sp(jobs: Sequence[Job], t: int) -> int:
    """Eq. (3): ``sum over s < t of q*(t-s) - q*(q-1)/2``, ``q = min(p, t-s)``."""
    out = 0
    for job in jobs:
        s, p = job[0], job[1]
        if s < t:
            q = min(p, t - s)
            out += q * (t - s) - q * (q - 1) // 2
    return out


def theorem41_form(K1, K2, K3) -> Utility:
    """Theorem 4.1's general form:
    ``sum min(p, t-s) * (K1 - K2 * (s + min(s+p-1, t-1)) / 2) + K3`` over ``s < t``.
    ``K1``, ``K2`` may be callables of ``t`` (psi_sp has ``K1 = t``)."""

    def psi(jobs: Sequence[Job], t: int) -> Fraction:
        k1 = K1(t) if callable(K1) else K1
        k2 = K2(t) if callable(K2) else K2
        out = Fraction(K3)
        for job in jobs:
            s, p = job[0], job[1]
            if s < t:
                q = min(p, t - s)
                out += q * (k1 - Fraction(k2 * (s + min(s + p - 1, t - 1)), 2))
        return out

    return psi


def work(jobs: Sequence[Job], t: int) -> int:
    """Resource utilization: unit parts processed before ``t``."""
    return sum(min(j[1], t - j[0]) for j in jobs if j[0] < t)


def neg_flow_time(jobs: Sequence[Job], t: int) -> int:
    """Minus the total flow time ``s + p - r`` of the jobs completed by ``t`` (release 0
    for ``(s, p)`` pairs); the minimisation objective as a utility (footnote 6)."""
    return -sum(j[0] + j[1] - (j[2] if len(j) > 2 else 0) for j in jobs if j[0] + j[1] <= t)


#: The utilities compared in the docs' axiom table.
UTILITIES: dict[str, Utility] = {
    "psi_sp": psi_sp,
    "Theorem 4.1, K1=3t, K2=3, K3=7 (3 psi_sp + 7)": theorem41_form(lambda t: 3 * t, 3, 7),
    "Theorem 4.1, K1=2t, K2=1": theorem41_form(lambda t: 2 * t, 1, 0),
    "Theorem 4.1 as printed, K1=1, K2=t": theorem41_form(1, lambda t: t, 0),
    "work (utilization)": work,
    "-flow time": neg_flow_time,
}


def _schedules(t: int, max_jobs: int, max_p: int):
    pairs = [(s, p) for s in range(t) for p in range(1, max_p + 1)]
    for n in range(max_jobs + 1):
        yield from itertools.combinations_with_replacement(pairs, n)


def check_axioms(psi: Utility, t: int = 6, max_jobs: int = 2, max_p: int = 3) -> dict[str, str]:
    """Each axiom: ``"holds"`` or the first counterexample found by exhaustive search over
    the schedules of up to ``max_jobs`` jobs of size up to ``max_p`` started before ``t``."""
    base = list(_schedules(t, max_jobs, max_p))
    out: dict[str, str] = {}
    # axiom 1
    seen: dict[int, tuple] = {}
    out["1 start times"] = "holds"
    for S in base:
        for s in range(t):
            for p in range(1, max_p + 1):
                if p > 1 and s + 1 + p > t:
                    continue
                d = psi([*S, (s, p)], t) - psi([*S, (s + 1, p)], t)
                if d <= 0:
                    out["1 start times"] = (
                        f"delaying ({s},{p}) by one changes psi by {'+' if d <= 0 else ''}{-d}"
                    )
                    break
                if seen.setdefault(p, (d, S, s))[0] != d:
                    out["1 start times"] = f"gain {d} != {seen[p][0]} for size {p}"
                    break
            if out["1 start times"] != "holds":
                break
        if out["1 start times"] != "holds":
            break
    # axiom 2
    out["2 number of tasks"] = "holds"
    seen2: dict[tuple[int, int], object] = {}
    for S in base:
        for s in range(t):
            for p in range(1, max_p + 1):
                d = psi([*S, (s, p)], t) - psi(list(S), t)
                if d <= 0 or seen2.setdefault((s, p), d) != d:
                    out["2 number of tasks"] = (
                        f"adding ({s},{p}) to {list(S)} changes psi by {d}"
                        + ("" if d <= 0 else f", to another schedule by {seen2[(s, p)]}")
                    )
                    break
            if out["2 number of tasks"] != "holds":
                break
        if out["2 number of tasks"] != "holds":
            break
    # axiom 3
    out["3 strategy-resistance"] = "holds"
    for S in base:
        for s in range(t):
            for p1 in range(1, max_p + 1):
                for p2 in range(1, max_p + 1):
                    split = psi([*S, (s, p1), (s + p1, p2)], t)
                    merged = psi([*S, (s, p1 + p2)], t)
                    if split != merged:
                        out["3 strategy-resistance"] = (
                            f"({s},{p1})+({s + p1},{p2}) gives {split}, ({s},{p1 + p2}) {merged}"
                        )
                        break
                if out["3 strategy-resistance"] != "holds":
                    break
            if out["3 strategy-resistance"] != "holds":
                break
        if out["3 strategy-resistance"] != "holds":
            break
    return out


def theorem41_constants(psi: Utility, t: int) -> tuple:
    """``(K1, K2, K3)`` of Theorem 4.1 read off a utility as the theorem defines them:
    ``K1 = psi({(0,1)}) - psi({})`` (a unit part at 0), ``K2 = psi({(0,1)}) - psi({(1,1)})``
    (delaying a unit part by one), ``K3 = psi({})``. For psi_sp: ``(t, 1, 0)``."""
    K3 = psi([], t)
    K2 = psi([(0, 1)], t) - psi([(1, 1)], t)
    K1 = psi([(0, 1)], t) - K3
    return K1, K2, K3


def prop42_identity(jobs: Sequence[tuple[int, int, int]], t: int) -> tuple[int, int]:
    """Proposition 4.2 for jobs ``(s, p, r)`` of one size ``p``, all completed by ``t``:
    returns ``(psi_sp, n*(p*t + (p*p+p)/2) - p*sum(r) - p*F)`` (equal), ``F`` the total
    flow time. The paper prints ``- sum(r)`` for ``- p*sum(r)``: a constant either way, so
    the proposition stands."""
    sizes = {p for _, p, _ in jobs}
    if len(sizes) > 1:
        raise ValueError("Proposition 4.2 is about jobs of one size")
    if any(s + p > t for s, p, _ in jobs):
        raise ValueError("Proposition 4.2 needs every job completed by t")
    if not jobs:
        return 0, 0
    p = sizes.pop()
    n = len(jobs)
    F = sum(s + p - r for s, p, r in jobs)
    twice = n * (2 * p * t + p * p + p) - 2 * p * sum(r for _, _, r in jobs) - 2 * p * F
    return psi_sp(jobs, t), twice // 2


# ------------------------------------------------------------------ manipulations


@dataclass(frozen=True)
class Manipulation:
    """One organization presents its workload differently; everything else is equal.

    Jobs are ``(org, release, size)``; the declared release is what the scheduler sees and
    what flow time is measured from. ``owner`` is the organization that manipulates."""

    name: str
    machines: tuple[int, ...]
    honest: tuple[tuple[int, int, int], ...]
    manipulated: tuple[tuple[int, int, int], ...]
    horizon: int
    owner: int = 0


#: The manipulations of Sec. 4 on the smallest instances that show them (FIFO schedules).
MANIPULATIONS = (
    Manipulation(
        "split a job of size 2 into two of size 1 (Fair share is not enough, Sec. 3.2)",
        (1,),
        ((0, 0, 2),),
        ((0, 0, 1), (0, 0, 1)),
        4,
    ),
    Manipulation(
        "merge two jobs of size 1 into one of size 2",
        (1,),
        ((0, 0, 1), (0, 0, 1)),
        ((0, 0, 2),),
        4,
    ),
    Manipulation(
        "delay a release from 0 to 1 (alone on its machine)",
        (1,),
        ((0, 0, 2),),
        ((0, 1, 2),),
        4,
    ),
    Manipulation(
        "delay a release from 0 to 3 behind another organization's job (B)",
        (1, 0),
        ((0, 0, 3), (1, 0, 1)),
        ((0, 0, 3), (1, 3, 1)),
        6,
        owner=1,
    ),
)


def manipulation_rows(policy: str = "fifo") -> list[dict]:
    """For each manipulation: the manipulating organization's psi_sp, work, total and mean
    flow time (from the declared releases) at the horizon, honest and manipulated, in
    ``policy``'s schedule (engine run)."""
    from .policies import get_policy

    rows = []
    for m in MANIPULATIONS:
        row: dict[str, Any] = {"manipulation": m.name}
        for label, jobs in (("honest", m.honest), ("manipulated", m.manipulated)):
            inst = make_instance(list(m.machines), list(jobs))
            sched = get_policy(policy).run(inst, m.horizon)
            u, T = m.owner, m.horizon
            done = sched.completed(T)[u]
            flow = sched.flow_time(T)[u]
            row[label] = {
                "psi_sp": sched.psi(T)[u],
                "work": sched.work(T)[u],
                "flow": flow,
                "mean_flow": Fraction(flow, done) if done else None,
            }
        rows.append(row)
    return rows


def manipulation_table(policy: str = "fifo") -> str:
    """The Markdown table of :func:`manipulation_rows` (docs/online.md prints it)."""
    lines = [
        "| manipulation | psi_sp | work | total flow time | mean flow time |",
        "|---|---|---|---|---|",
    ]

    def fmt(x) -> str:
        if x is None:
            return "-"
        if isinstance(x, Fraction) and x.denominator != 1:
            return f"{float(x):g}"
        return str(int(x))

    for r in manipulation_rows(policy):
        h, m = r["honest"], r["manipulated"]
        cells = [
            f"{fmt(h[key])} → {fmt(m[key])}" for key in ("psi_sp", "work", "flow", "mean_flow")
        ]
        lines.append(f"| {r['manipulation']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def axiom_table(t: int = 6) -> str:
    """The Markdown table of :func:`check_axioms` for every utility in :data:`UTILITIES`."""
    lines = [
        f"| utility (t = {t}) | 1 start times | 2 number of tasks | 3 strategy-resistance |",
        "|---|---|---|---|",
    ]
    for name, psi in UTILITIES.items():
        res = check_axioms(psi, t)
        lines.append(f"| {name} | " + " | ".join(res.values()) + " |")
    return "\n".join(lines) + "\n"
