"""What settling an undecided organization would take (issue 29 item 3): the sampled audit
records when each organization was settled and projects, for those left open, the samples
their observed spread needs (:func:`coopsched.audit.sampling.samples_to_settle`)."""

import math

import numpy as np
import pytest
from conftest import fifo_recorded

from coopsched.audit.sampling import sampled_game, samples_to_settle, small_surplus


def test_samples_to_settle_by_hand():
    """Student's t at 95 %: t_{m-1} s / sqrt(m) <= h for the fewest m."""
    from coopsched.audit.estimation import t_quantile

    psi = np.array([100.0, 100.0, 100.0, 0.0, 100.0])
    phi = np.array([120.0, 100.0, 150.0, 0.0, 100.0])
    n = np.array([10, 10, 10, 10, 10])
    se = np.array([40.0, 10.0, 1.0, 5.0, 0.1]) / np.sqrt(n)  # spreads 40, 10, 1, 5, 0.1
    got = samples_to_settle(psi, phi, se, n, level=0.95, share=0.05)

    def fewest(s, h):
        m = 2
        while t_quantile(0.975, m - 1) * s / math.sqrt(m) > h:
            m += 1
        return m

    # 1: the sign needs a half-width below |psi - phi| = 20
    assert got[0] == fewest(40, 20) == 18
    # 2: no sign to decide; the room inside 100/1.05 .. 100/0.95 is 100 - 100/1.05
    assert got[1] == fewest(10, 100 - 100 / 1.05) == 20
    # 3: decided already: never fewer than the draws done; 4: nothing can be shown;
    # 5: already shown within 5 %
    assert got.tolist()[2:] == [10, math.inf, 10]
    assert small_surplus(psi[4:], phi[4:], 1.96 * se[4:], 0.05).all()


@pytest.mark.parametrize("refine", [False, True])
def test_settle_times_and_projections_match_the_verdicts(refine):
    rec = fifo_recorded(7, 70, 5)
    sg = sampled_game(rec, 60, [], samples=12, seed=3, refine=refine)
    at = sg.settled_at
    assert at is not None and sg.projection is not None
    assert np.array_equal(np.isnan(at), ~sg.sign_decided)
    assert np.all((at[~np.isnan(at)] >= 0) & (at[~np.isnan(at)] <= sg.seconds_spent))
    open_ = set(np.flatnonzero(~sg.sign_decided).tolist())
    assert open_ and set(sg.projection) == open_
    for u, p in sg.projection.items():
        if refine:
            assert sg.refinement is not None and u in sg.refinement.players
            j = sg.refinement.players.index(u)
            assert (p.unit, p.done) == ("rounds", int(sg.refinement.rounds[j]))
        else:
            assert (p.unit, p.done) == ("orders", sg.samples)
        assert p.samples >= 0 and p.coalitions >= p.samples and p.seconds >= 0


def test_the_projection_lands_near_the_interval_it_promises():
    """Without adaptivity (one look, Student's t at the same level), the orders projected
    for an open organization give an interval of about the half-width the projection asked
    for: within a factor 2 either way (only the spread's estimate moves between the runs)."""
    ratios = []
    for seed in (3, 4, 5):
        for k, n in ((7, 70), (8, 120), (10, 200)):
            rec = fifo_recorded(k, n, seed)
            kw = dict(seed=seed, adaptive=False, refine=False, estimator="plain", interval="t")
            few = sampled_game(rec, 60, [], samples=8, **kw)
            psi = np.asarray(few.psi, dtype=np.float64)
            for u, p in few.projection.items():
                total = p.done + int(p.samples)
                if p.samples == 0 or total > 400:
                    continue
                assert p.unit == "orders" and total % 2 == 0  # whole antithetic pairs
                many = sampled_game(rec, 60, [], samples=total, **kw)
                target = max(
                    abs(psi[u] - few.phi[u]),
                    min(few.phi[u] - psi[u] / 1.05, psi[u] / 0.95 - few.phi[u]),
                )
                ratios.append(many.halfwidth[u] / target)
    assert len(ratios) >= 5
    assert all(0.5 < r < 2 for r in ratios), ratios


def test_the_report_projects_the_undecided_organizations():
    from coopsched.audit import audit

    rec = fifo_recorded(7, 70, 5)
    kw = dict(horizon=60, method="sampled", samples=12, seed=3, points=0)
    r = audit(rec, with_counterfactuals=False, **kw).to_dict()
    proj = r["sampling"]["projection"]
    assert set(proj["organizations"]) == set(r["sampling"]["undecided"])
    assert any("would take, projected" in n for n in r["notes"])


@pytest.mark.parametrize("ends", [False, True])
def test_the_standard_errors_are_the_t_half_widths_before_their_quantile(ends):
    """``se`` of both estimators: Student's t half-width divided by its quantile, over the
    antithetic pairs (the valid ones with ``ends``) or the rounds."""
    from coopsched.audit.estimation import shapley_antithetic, shapley_stratified, t_quantile
    from coopsched.testing import airport_game

    table, _ = airport_game(7, seed=2)
    v = table.__getitem__
    a = shapley_antithetic(v, 7, 40, seed=1, interval="t", ends=ends)
    assert np.all(np.isfinite(a.se)) and np.all(a.se >= 0)
    np.testing.assert_array_equal(a.se == 0, a.halfwidth == 0)  # no spread, no width
    if not ends:  # every player in every pair
        q = t_quantile(1 - (1 - a.level) / 2, a.orders // 2 - 1)
        np.testing.assert_allclose(a.halfwidth, q * a.se)
    s = shapley_stratified(v, 7, [0, 3], 30, seed=1, interval="t")
    for j, n in enumerate(s.rounds):
        q = t_quantile(1 - (1 - s.level) / 2, int(n) - 1)
        np.testing.assert_allclose(s.halfwidth[j], q * s.se[j])
