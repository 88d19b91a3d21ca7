"""Theorem 6.2 (Skowron & Rzadca, Sec. 6) for rigid jobs: the family F(m, L) of
coopsched.online.greedy_bound drives every greedy policy, under every backfilling rule,
to a utilization ratio of L / (m (L - 1)) against the best schedule: no constant bound."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

from coopsched.online.greedy_bound import greedy_ratio, greedy_trap, patient_schedule
from coopsched.online.policies import available, get_policy
from coopsched.online.rigid import BACKFILL


def _work_before(inst, starts, T: int) -> int:
    """Unit parts done before T by jobs started at ``starts`` (written out)."""
    q, p = inst.width.tolist(), inst.size.tolist()
    return sum(q[j] * max(0, min(T, s + p[j]) - s) for j, s in enumerate(starts) if 0 <= s < T)


def _best_work(inst, T: int) -> int:
    """Brute force over every pair of integer starts: A and B cannot overlap (B takes every
    machine); the most work done before T by any schedule, greedy or not."""
    L = int(inst.size[0])
    best = 0
    for sa, sb in itertools.product(range(0, 2 * L + 3), range(1, 2 * L + 3)):
        if sa < sb + L and sb < sa + L:  # overlap: A's machine is one of B's m
            continue
        best = max(best, _work_before(inst, [sa, sb], T))
    return best


@pytest.mark.parametrize("m, L", [(2, 2), (2, 7), (4, 5), (8, 30), (16, 100)])
def test_the_best_schedule_is_the_patient_one(m, L):
    inst = greedy_trap(m, L)
    sched = patient_schedule(inst)
    assert sum(sched.work(L)) == _work_before(inst, sched.start.tolist(), L) == m * (L - 1)
    assert _best_work(inst, L) == m * (L - 1)


@pytest.mark.parametrize("backfill", BACKFILL)
@pytest.mark.parametrize("name", sorted(c.name for c in available()))
@pytest.mark.parametrize("m, L, orgs", [(2, 9, 1), (4, 6, 2), (8, 25, 3)])
def test_every_greedy_policy_falls_to_one_over_m(name, backfill, m, L, orgs):
    inst = greedy_trap(m, L, orgs)
    sched = get_policy(name).run(inst, 3 * L, backfill=backfill)
    assert sched.start.tolist() == [0, L]  # A at once, B when A ends
    done = sum(sched.work(L))
    assert done == L
    assert Fraction(done, _best_work(inst, L)) == greedy_ratio(m, L)
    assert sched.utilization(L) == pytest.approx(1 / m)


def test_the_ratio_falls_below_any_constant():
    # Theorem 6.2's 3/4 holds for sequential jobs; rigid jobs: L / (m (L - 1)) -> 1/m
    assert greedy_ratio(2, 2) == 1
    assert greedy_ratio(4, 100) < Fraction(3, 4)
    assert greedy_ratio(64, 10**6) < Fraction(1, 63)


def test_bad_family_parameters():
    with pytest.raises(ValueError, match="m >= 2"):
        greedy_trap(1, 5)
    with pytest.raises(ValueError, match="cannot share"):
        greedy_trap(2, 5, orgs=3)
