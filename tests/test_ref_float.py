"""REF's float route: a float64 potential whose decisions are proven from error bounds,
with Eq. (1) on exact values for the decisions it cannot prove (issue 12)."""

from fractions import Fraction

import numpy as np
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.ref import float_potential_error, ref_schedule
from coopsched.online.ref.kernel import (
    FL_FIELDS,
    FL_LAST,
    FL_RUNNING,
    FL_VALUE,
    FL_WORK,
    _certified_ranks,
    _float_potential,
    reciprocals,
)
from coopsched.online.shapley import shapley_restricted
from coopsched.workloads.instance import make_instance


def exact_potential(v: list[int], k: int) -> list[Fraction]:
    """Hart and Mas-Colell's potential by its recursion, in exact rationals."""
    P = [Fraction(0)] * (1 << k)
    for D in range(1, 1 << k):
        members = [1 << u for u in range(k) if D >> u & 1]
        P[D] = (v[D] + sum(P[D ^ w] for w in members)) / len(members)
    return P


def float_potential(
    v: list[int],
    k: int,
    blocks: bool,
    records: tuple[list[int], list[int], list[int], list[int]] | None = None,
    utility: int = 0,
    t: int = 1 << 21,
) -> np.ndarray:
    """``_float_potential`` on records whose closed-form value at ``t`` is ``v``: by
    default each record holds its value as of ``t`` (``V = v``, nothing running); with
    ``records = (V, W, r, d)``, its value, work and running count as of ``t - d``."""
    NC = 1 << k
    if records is None:
        records = (v, [0] * NC, [0] * NC, [0] * NC)
    V, W, r, d = records
    fco = np.zeros((FL_FIELDS, NC))
    fco[FL_VALUE] = V
    fco[FL_WORK] = W
    fco[FL_RUNNING] = r
    t0 = t - (1 << 21)  # the run's first release: the kernel's times are relative to it
    fco[FL_LAST] = [t - x - t0 for x in d]
    pf = np.zeros(NC)
    ids = np.arange(NC, dtype=np.int64)
    _float_potential(
        k, np.int64(t), utility, fco, np.int64(t0), False, ids, ids[1:], reciprocals(k), pf, blocks
    )
    return pf


# values from every scale, zeros included: a game's values need not be monotone here
VALUES = st.one_of(
    st.integers(0, 10),
    st.integers(0, 2**62 - 1),
    st.integers(2**61, 2**62 - 1),
    st.integers(0, 2**40),
)


@st.composite
def games(draw, min_k=1, max_k=7):
    k = draw(st.integers(min_k, max_k))
    v = [0] + [draw(VALUES) for _ in range((1 << k) - 1)]
    return k, v


@settings(max_examples=200, deadline=None)
@given(game=games(), blocks=st.booleans())
def test_float_potential_within_its_proven_error(game, blocks):
    """Every P(D) in float64 is within eta/2 P(D) of the exact potential (the part of
    ``float_potential_error`` that bounds the potential itself), in blocks of 16 and in
    the plain loop alike; both walk the same recursion."""
    k, v = game
    exact = exact_potential(v, k)
    pf = float_potential(v, k, blocks and k >= 4)
    half = Fraction(float_potential_error(k)) / 2
    for D in range(1 << k):
        assert abs(Fraction(pf[D]) - exact[D]) <= half * Fraction(pf[D])
        assert (pf[D] == 0) == (exact[D] == 0)


@st.composite
def record_games(draw, max_k=6):
    """Records ``(V, W, r, d)`` as the kernel keeps them (value, work and running count as
    of ``t - d``), up to 2^62 in value at ``t``, and ``utility`` (0 psi_sp, 1 work)."""
    k = draw(st.integers(1, max_k))
    NC = 1 << k
    V = [0] + [draw(st.one_of(st.integers(0, 10), st.integers(0, 2**61))) for _ in range(NC - 1)]
    W = [0] + [draw(st.one_of(st.integers(0, 10), st.integers(0, 2**38))) for _ in range(NC - 1)]
    r = [0] + [draw(st.integers(0, 2**18)) for _ in range(NC - 1)]
    d = [0] + [draw(st.one_of(st.integers(0, 3), st.integers(0, 2**20))) for _ in range(NC - 1)]
    utility = draw(st.sampled_from([0, 1]))
    if utility == 0:
        v = [V[S] + W[S] * d[S] + r[S] * (d[S] * (d[S] + 1) // 2) for S in range(NC)]
    else:
        v = [W[S] + r[S] * d[S] for S in range(NC)]
    t = draw(st.sampled_from([1 << 21, (1 << 62) + 3]))  # times beyond 2^53 too
    return k, v, (V, W, r, d), utility, t


@settings(max_examples=200, deadline=None)
@given(game=record_games(), blocks=st.booleans())
def test_float_potential_from_records_within_its_proven_error(game, blocks):
    """The same bound when the values are evaluated in float64 from the records' fields
    in closed form (``V + W d + r d (d + 1) / 2``, or ``W + r d`` for work), as the
    kernel does, rather than converted from exact values, with times relative to the
    run's first release as the kernel keeps them (absolute times up to 2^62 + 3)."""
    k, v, records, utility, t = game
    exact = exact_potential(v, k)
    pf = float_potential(v, k, blocks and k >= 4, records, utility, t)
    half = Fraction(float_potential_error(k)) / 2
    for D in range(1 << k):
        assert abs(Fraction(pf[D]) - exact[D]) <= half * Fraction(pf[D])
        assert (pf[D] == 0) == (exact[D] == 0)


@st.composite
def decisions(draw):
    """A game, a coalition C, its waiting members and their psi, drawn so that keys are
    often nearly tied (within 1 of each other at values up to 2^62, far below what
    float64 resolves there) or exactly tied (interchangeable members, equal psi)."""
    k, v = draw(games(min_k=2, max_k=6))
    C = draw(st.integers(1, (1 << k) - 1).filter(lambda c: c.bit_count() >= 2))
    members = [u for u in range(k) if C >> u & 1]
    if draw(st.booleans()):  # make the first two members interchangeable in v
        a, b = members[0], members[1]
        for S in range(1 << k):
            if S >> a & 1 and not S >> b & 1:
                v[S ^ (1 << a) ^ (1 << b)] = v[S]
    waiting = sorted(draw(st.sets(st.sampled_from(members), min_size=2)))
    phi = shapley_restricted(v, C, k)
    offset = draw(st.integers(-3, 3))
    psi = []
    for u in waiting:
        # psi near phi_u: the key phi_u - psi_u lies within a few units of `offset`
        base = int(phi[u]) - offset + draw(st.sampled_from([0, 0, 1, -1]))
        psi.append(max(base, 0) if draw(st.integers(0, 4)) else draw(VALUES))
    return k, v, C, waiting, psi, phi


@settings(max_examples=400, deadline=None)
@given(dec=decisions(), rule=st.sampled_from([0, 1]))
def test_proven_ranks_follow_the_exact_keys(dec, rule):
    """When ``_certified_ranks`` claims a ranking, it is the order of the exact keys:
    strictly ordered keys get strictly ordered ranks and equal keys equal ranks (rule 0:
    ``phi - psi``; rule 1: Fig. 1's Distance, which orders as clamp(phi - psi + 1/c))."""
    k, v, C, waiting, psi, phi = dec
    c = C.bit_count()
    pf = float_potential(v, k, k >= 4)
    nw = len(waiting)
    wl = np.array(waiting + [0] * (k - nw), dtype=np.int64)
    psi_f = np.array([float(p) for p in psi] + [0.0] * (k - nw))
    lo, hi = np.zeros(k), np.zeros(k)
    cls, ordx = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
    rk = np.zeros(k + 3, dtype=np.int8)
    proven = _certified_ranks(
        pf, C, c, wl, nw, psi_f, float_potential_error(k), rule, lo, hi, cls, ordx, rk, 3
    )

    def key(x):
        K = phi[waiting[x]] - psi[x]
        return K if rule == 0 else min(max(K + Fraction(1, c), Fraction(0)), Fraction(1))

    if proven:
        for x in range(nw):
            for y in range(nw):
                assert (rk[3 + x] > rk[3 + y]) == (key(x) > key(y))


@settings(max_examples=150, deadline=None)
@given(
    inst=small_instances(max_k=6, max_jobs=16, max_release=5, max_size=6),
    T=st.integers(1, 24),
    utility=st.sampled_from(["psi_sp", "work"]),
    symmetry=st.booleans(),
    scale=st.sampled_from([1, 1, 10**6]),
)
def test_float_route_gives_the_exact_schedule(inst, T, utility, symmetry, scale):
    """The float route (forced at every event) gives the schedule, machines and values
    of the exact potential, with and without interchangeable organizations simulated
    once, at small values and at values near 2^50 (times scaled by 10^6)."""
    if scale > 1:
        inst = make_instance(
            inst.machines.tolist(),
            [
                (int(u), int(r) * scale, int(p) * scale)
                for u, r, p in zip(inst.org, inst.release, inst.size, strict=True)
            ],
        )
    a, va = ref_schedule(inst, T * scale, utility=utility, shapley="potential", symmetry=symmetry)
    b, vb = ref_schedule(inst, T * scale, utility=utility, shapley="float", symmetry=symmetry)
    assert not a.info["python_integers"]
    assert b.start.tolist() == a.start.tolist()
    assert b.machine.tolist() == a.machine.tolist()
    assert vb == va
    assert b.info["float_unproven"] <= b.info["decisions"]


def test_exact_ties_fall_back_to_exact_keys():
    """Organization 1 has no machine, so at t = 4, when the only machine frees, both
    waiting organizations have phi - psi = 0 exactly (phi_0 = v(G) = psi_0, phi_1 = 0 =
    psi_1) while values are non-zero: float keys cannot prove that tie, so Eq. (1) on
    exact values decides it, and the older queue head goes first, as with exact keys:
    organization 1's job (released at 1) before organization 0's (released at 3)."""
    inst = make_instance([1, 0], [(1, 1, 4), (0, 3, 2), (0, 0, 4)])
    a, va = ref_schedule(inst, 15, shapley="potential")
    b, vb = ref_schedule(inst, 15, shapley="float")
    assert b.info["float_unproven"] == 1 and b.info["decisions"] == 1
    assert b.start.tolist() == a.start.tolist() == [4, 8, 0] and vb == va
