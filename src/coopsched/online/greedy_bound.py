"""What becomes of Theorem 6.2 (Skowron & Rzadca, "Non-monetary fair scheduling", Sec. 6)
for rigid parallel jobs.

Theorem 6.2: for sequential jobs every greedy algorithm is 3/4-competitive for resource
utilization (Definition 6.1: at every time ``T``, the work done before ``T`` is at least 3/4
of what any other schedule of the same jobs does before ``T``); the paper's Fig. 7 is the
tight example. Sec. 6 ends by noting that for parallel jobs "the loss of the global
efficiency of an arbitrary greedy algorithm can be higher". This module gives the family
that shows how much higher: no constant bound holds, the ratio falls to ``1/m`` on ``m``
machines.

The family ``F(m, L)`` (``m >= 2`` machines, ``L >= 2``), one organization or several:

* job ``A``: 1 processor, run time ``L``, released at 0;
* job ``B``: ``m`` processors, run time ``L``, released at 1 (requested times exact).

At time 0 only ``A`` is known and a machine is free, so every greedy rule, whatever the
policy and under every backfilling rule (none, first-fit, EASY), starts ``A`` at 0. ``B``
needs every machine and waits until ``A`` ends at ``L``. Before ``T = L`` the greedy
schedule has done ``L`` units of work. The schedule that leaves the machines idle at 0,
runs ``B`` on ``[1, L + 1)`` and ``A`` after it has done ``m (L - 1)`` units before ``L``.
The ratio ``L / (m (L - 1))`` tends to ``1/m`` as ``L`` grows: greedy rigid scheduling
is not ``alpha``-competitive for utilization for any constant ``alpha > 0``. (With all jobs
of one processor, ``m = 1`` and the family is not a counterexample, as Theorem 6.2
requires.)

The wasted machines are not a fairness cost: with one organization there is nothing to be
fair about, and every policy builds the same greedy schedule. The family is tested in
``tests/test_greedy_bound.py`` against every registered policy and backfilling rule.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..workloads.instance import Instance, Organization
from .schedule import Schedule


def greedy_trap(m: int, L: int, orgs: int = 1) -> Instance:
    """The instance ``F(m, L)``: ``A`` (1 processor, ``L``, released at 0) and ``B``
    (``m`` processors, ``L``, released at 1), requested times exact. With ``orgs >= 2`` the
    ``m`` machines are split as evenly as possible and ``A`` and ``B`` belong to the first
    two organizations (only the total matters to utilization)."""
    if m < 2 or L < 2 or orgs < 1:
        raise ValueError("greedy_trap needs m >= 2 machines, L >= 2 and orgs >= 1")
    if orgs > m:
        raise ValueError(f"greedy_trap: {orgs} organizations cannot share {m} machines")
    share = [m // orgs + (1 if u < m % orgs else 0) for u in range(orgs)]
    return Instance(
        [Organization(f"O{u}", share[u]) for u in range(orgs)],
        org=np.array([0, 1 if orgs > 1 else 0]),
        release=np.array([0, 1]),
        size=np.array([L, L]),
        processors=np.array([1, m]),
        requested=np.array([L, L]),
    )


def patient_schedule(inst: Instance) -> Schedule:
    """The non-greedy schedule of ``F(m, L)``: ``B`` at 1 on every machine, ``A`` at
    ``L + 1`` (machine 0)."""
    L = int(inst.size[0])
    return Schedule(
        inst,
        start=np.array([L + 1, 1], dtype=np.int64),
        machine=np.array([0, 0], dtype=np.int64),
        policy="patient",
    )


def greedy_ratio(m: int, L: int) -> Fraction:
    """The greedy schedule's work before ``L`` over the patient schedule's:
    ``L / (m (L - 1))``."""
    return Fraction(L, m * (L - 1))
