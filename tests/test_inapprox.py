"""Theorem 5.3 (Skowron & Rzadca): sigma_ord and sigma_rev drift apart; dpsi/psi_tot -> 1."""

from fractions import Fraction

import pytest

from coopsched.online.checker import check_schedule
from coopsched.online.inapprox import ordered_pair


def test_single_machine_relative_distance_tends_to_one():
    """The text's illustration: one identical unit job per organization, one machine:
    dpsi/psi_tot = m/(m+1) for even m (exact), increasing to 1."""
    prev = Fraction(0)
    for m in (2, 4, 8, 16, 64, 256):
        pair = ordered_pair(m)
        r = pair.relative_distance
        assert r == Fraction(m, m + 1)
        assert r > prev
        prev = r
    assert 1 - ordered_pair(1000).relative_distance < Fraction(1, 1000)


@pytest.mark.parametrize("size", [1, 3, 10])
def test_longer_jobs_also_tend_to_one(size):
    rs = [ordered_pair(m, size=size).relative_distance for m in (4, 16, 64)]
    assert rs == sorted(rs) and rs[-1] > Fraction(9, 10)


@pytest.mark.parametrize("B,n_orgs,XH", [(2, 2, 5), (4, 3, 7), (6, 2, 20)])
def test_last_batch_meets_the_proofs_bound(B, n_orgs, XH):
    """|B| organizations with |O| jobs of size XH on |O| machines:
    dpsi >= |O| |B|^2 XH^2 / 2 (the proof's bound, met with equality)."""
    pair = ordered_pair(B, machines=n_orgs, jobs_per_org=n_orgs, size=XH)
    assert pair.dpsi == n_orgs * B * B * XH * XH // 2


def test_earlier_batches_do_not_spoil_it():
    """With earlier work of length prefix <= (eps/4) XH the ratio still exceeds 1 - eps
    for |B| large enough, as in the proof."""
    eps = Fraction(1, 10)
    XH = 400
    pair = ordered_pair(40, machines=2, jobs_per_org=2, size=XH, prefix=int(eps / 4 * XH))
    assert pair.relative_distance > 1 - eps


def test_schedules_are_valid():
    pair = ordered_pair(5, machines=2, jobs_per_org=3, size=4, prefix=3)
    for s in (pair.ord, pair.rev):
        assert check_schedule(s) == []
    assert sum(pair.ord.psi(pair.horizon)) == sum(pair.rev.psi(pair.horizon))
