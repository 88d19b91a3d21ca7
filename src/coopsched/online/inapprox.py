"""Theorem 5.3's schedules sigma_ord and sigma_rev (Skowron & Rzadca, Sec. 5).

The theorem (no polynomial ``(1/2 - eps)``-approximation of the fair schedule unless
P = NP) rests on two schedules that serve the same organizations in opposite orders and
whose utility vectors are almost as far apart as they can be: their Manhattan distance
``dpsi`` divided by the total utility ``psi_tot`` tends to 1. An approximation within
``(1/2 - eps) psi_tot`` of the fair schedule is then closer to it than to the other one,
so it would tell which order is fair, and the proof's earlier batches make that order
answer a SUBSETSUM question. This module builds the two schedules (the last batch of the
proof; the SUBSETSUM gadget batches before it are not built) and measures ``dpsi/psi_tot``
exactly:

* the text's illustration: ``m`` organizations, one identical job each, one machine;
* the proof's last batch: ``|B|`` organizations, each with ``|O|`` jobs of size ``XH`` on
  ``|O|`` machines, after ``prefix`` time units of earlier work that both schedules share;
  the proof's bound is ``dpsi >= |O| |B|^2 XH^2 / 2`` (even ``|B|``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..workloads.instance import make_instance
from .schedule import Schedule


@dataclass(frozen=True)
class OrderedPair:
    """``sigma_ord`` and ``sigma_rev`` of one instance, their horizon and distance."""

    ord: Schedule
    rev: Schedule
    horizon: int

    @property
    def dpsi(self) -> int:
        """Manhattan distance of the two utility vectors at the horizon (Definition 5.2)."""
        a, b = self.ord.psi(self.horizon), self.rev.psi(self.horizon)
        return sum(abs(x - y) for x, y in zip(a, b, strict=True))

    @property
    def psi_tot(self) -> int:
        """Total utility (the same in both schedules)."""
        return sum(self.ord.psi(self.horizon))

    @property
    def relative_distance(self) -> Fraction:
        """``dpsi / psi_tot``: tends to 1 as the number of organizations grows."""
        return Fraction(self.dpsi, self.psi_tot)


def ordered_pair(
    orgs: int, *, machines: int = 1, jobs_per_org: int = 1, size: int = 1, prefix: int = 0
) -> OrderedPair:
    """``orgs`` organizations served in index order (``sigma_ord``) or in reverse order
    (``sigma_rev``); each releases ``jobs_per_org`` jobs of ``size`` at ``prefix`` on
    ``machines`` machines (all owned by the first organization: ownership does not enter
    the utilities). With ``prefix > 0`` an extra organization (the last index) runs one job
    of length ``prefix`` on every machine from 0 in both schedules: the earlier batches.
    Jobs go to the earliest free machine in the serving order (list scheduling)."""
    if orgs < 1 or machines < 1 or jobs_per_org < 1 or size < 1 or prefix < 0:
        raise ValueError("orgs, machines, jobs_per_org and size must be >= 1, prefix >= 0")
    k = orgs + (1 if prefix else 0)
    jobs = [(u, prefix, size) for u in range(orgs) for _ in range(jobs_per_org)]
    if prefix:
        jobs += [(orgs, 0, prefix)] * machines
    inst = make_instance([machines] + [0] * (k - 1), jobs)

    def build(order: list[int]) -> Schedule:
        free = [0] * machines
        start = np.full(inst.n, -1, dtype=np.int64)
        mach = np.full(inst.n, -1, dtype=np.int64)
        if prefix:
            for i, j in enumerate(np.flatnonzero(inst.org == orgs)):
                start[j], mach[j], free[i] = 0, i, prefix
        for u in order:
            for j in np.flatnonzero(inst.org == u):
                m = min(range(machines), key=lambda i: (free[i], i))
                start[j], mach[j] = free[m], m
                free[m] += size
        return Schedule(inst, start, mach, "sigma", None)

    a = build(list(range(orgs)))
    b = build(list(range(orgs))[::-1])
    T = int((a.start + inst.size).max())
    return OrderedPair(a, b, T)
