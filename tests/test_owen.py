"""The Owen value (G. Owen, "Values of games with a priori unions", 1977) against a brute force
written from its definition: the mean marginal contribution over all orders that keep every
unit of the hierarchy contiguous."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.audit.owen import Unit, owen, owen_antithetic, quotient_shapley
from coopsched.online.rigid import BACKFILL
from coopsched.online.shapley import shapley


def brute_owen(v, root: Unit) -> list[Fraction]:
    """Definition: average of ``v(P + i) - v(P)`` over the orders in which the players of
    every unit (any depth) are contiguous."""
    k = len(root.players())
    groups = [u.players() for u, _d in root.units()]
    total = [Fraction(0)] * k
    count = 0
    for perm in itertools.permutations(range(k)):
        pos = {p: i for i, p in enumerate(perm)}
        if any(max(pos[p] for p in g) - min(pos[p] for p in g) != len(g) - 1 for g in groups):
            continue
        count += 1
        mask = 0
        for p in perm:
            total[p] += v[mask | 1 << p] - v[mask]
            mask |= 1 << p
    return [t / count for t in total]


def random_partition(rng: random.Random, k: int, nested: bool) -> Unit:
    players = list(range(k))
    rng.shuffle(players)

    def split(items: list[int], depth: int) -> list:
        if len(items) == 1 or depth == 0:
            return list(items)
        cuts = sorted(rng.sample(range(1, len(items)), rng.randint(0, len(items) - 1)))
        parts = [items[a:b] for a, b in zip([0, *cuts], [*cuts, len(items)], strict=True)]
        return [p[0] if len(p) == 1 else split(p, depth - 1) for p in parts]

    return Unit.of(split(players, 3 if nested else 2))


def random_game(rng: random.Random, k: int) -> list[int]:
    v = [rng.randint(-50, 100) for _ in range(1 << k)]
    v[0] = 0
    return v


@pytest.mark.parametrize("seed", range(12))
def test_exact_owen_is_the_brute_force_on_random_hierarchies(seed):
    rng = random.Random(seed)
    k = rng.randint(1, 6)
    v = random_game(rng, k)
    root = random_partition(rng, k, nested=seed % 2 == 1)
    assert owen(v, root) == brute_owen(v, root)


def test_a_known_example_differs_from_shapley():
    # a glove-like game: 0 holds a left glove, 1 and 2 right gloves; a pair is worth 1
    v = [0] * 8
    for S in range(8):
        v[S] = 1 if S & 1 and S & 6 else 0
    assert shapley(v) == [Fraction(2, 3), Fraction(1, 6), Fraction(1, 6)]
    # 1 and 2 bargain as a block against 0: quotient game of two players, 1/2 each
    root = Unit.of([0, [1, 2]])
    assert owen(v, root) == [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]
    assert quotient_shapley(v, root) == [Fraction(1, 2), Fraction(1, 2)]
    # 0 joins 1 in a union: the union holds the pair, 2 adds nothing to it
    assert owen(v, Unit.of([[0, 1], 2])) == [Fraction(3, 4), Fraction(1, 4), Fraction(0)]


@st.composite
def games(draw, max_k: int = 6):
    k = draw(st.integers(1, max_k))
    v = [0] + draw(st.lists(st.integers(-(10**6), 10**6), min_size=2**k - 1, max_size=2**k - 1))
    root = random_partition(random.Random(draw(st.integers(0, 2**32))), k, draw(st.booleans()))
    return v, root


@settings(max_examples=60, deadline=None)
@given(games())
def test_efficiency_and_the_quotient_game_property(game):
    v, root = game
    phi = owen(v, root)
    assert sum(phi) == v[-1]
    q = quotient_shapley(v, root)
    for member, qj in zip(root.members, q, strict=True):
        got = phi[member] if isinstance(member, int) else sum(phi[u] for u in member.players())
        assert got == qj


@settings(max_examples=40, deadline=None)
@given(games(), st.booleans())
def test_owen_is_shapley_with_one_union_or_singletons(game, one):
    v, _ = game
    k = len(v).bit_length() - 1
    root = Unit.of([list(range(k))]) if one else Unit.of(list(range(k)))
    assert owen(v, root) == shapley(v)


def test_a_malformed_hierarchy_is_refused():
    with pytest.raises(ValueError, match="not 0..2 once each"):
        owen([0] * 8, Unit.of([0, [1]]))
    with pytest.raises(ValueError, match="empty"):
        owen([0] * 8, Unit.of([0, [1, 2], []]))


@pytest.mark.parametrize("seed", range(4))
def test_sampled_owen_covers_the_exact_values(seed):
    rng = random.Random(100 + seed)
    k = 6
    v = random_game(rng, k)
    root = random_partition(rng, k, nested=True)
    exact = np.array([float(x) for x in owen(v, root)])
    misses = 0
    runs = 20
    for s in range(runs):
        est = owen_antithetic(lambda m: v[m], root, 60, seed=s, confidence=0.95)
        assert est.phi.shape == (k, 1)
        misses += int((np.abs(est.phi[:, 0] - exact) > est.halfwidth[:, 0] + 1e-9).sum())
    # 95 % intervals per player: at most 5 % misses expected; allow sampling slack
    assert misses <= 0.12 * runs * k


def test_sampled_orders_keep_every_unit_contiguous():
    root = Unit.of([[0, 1, 2], [3, [4, 5]], 6])
    seen: list[list[int]] = []

    def value(mask: int) -> float:
        seen.append([u for u in range(7) if mask >> u & 1])
        return float(bin(mask).count("1") ** 2)

    owen_antithetic(value, root, 40, seed=1)
    # the value of an order's prefix is never a coalition splitting two units at once
    for coalition in seen:
        s = set(coalition)
        cut = [g for g in ({0, 1, 2}, {3, 4, 5}) if s & g and not g <= s]
        assert len(cut) <= 1


# --- real games: the audit's table (REF coalition values) on small recorded schedules ---

from test_audit import recorded  # noqa: E402
from test_rigid import rigid_instances  # noqa: E402

from coopsched.audit.game import exact_game  # noqa: E402


@settings(max_examples=25, deadline=None)
@given(inst=recorded(), T=st.integers(1, 10), seed=st.integers(0, 2**32))
def test_owen_of_a_real_sequential_audit_is_the_brute_force(inst, T, seed):
    from reference import brute_ref, psi_job

    k = inst.k
    G = (1 << k) - 1
    v = [0] * (G + 1)  # Definition 3.2 from the brute force REF, grand = recorded total
    v[G] = sum(psi_job(int(inst.start[j]), int(inst.size[j]), T) for j in range(inst.n))
    for C in range(1, G):
        members = [u for u in range(k) if C >> u & 1]
        _, _, vals = brute_ref(inst.restrict(members), T)
        v[C] = vals[(1 << len(members)) - 1]
    g = exact_game(inst, T, [])
    assert g.values == v
    root = random_partition(random.Random(seed), k, nested=seed % 2 == 0)
    assert owen(g.values, root) == brute_owen(v, root)


@settings(max_examples=15, deadline=None)
@given(
    inst=rigid_instances(),
    rule=st.sampled_from(BACKFILL),
    seed=st.integers(0, 2**32),
)
def test_owen_of_a_real_rigid_audit_is_the_brute_force(inst, rule, seed):
    from reference import brute_ref_rigid

    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    T = 12
    rec = simulate(inst, get_policy("fifo"), T, backfill=rule)
    inst.start = rec.start
    _, brute = brute_ref_rigid(inst, T, rule)
    v = [brute[C] for C in range(1 << inst.k)]
    v[-1] = sum(rec.psi(T))
    g = exact_game(inst, T, [], backfill=rule)
    assert g.values == v
    root = random_partition(random.Random(seed), inst.k, nested=True)
    assert owen(g.values, root) == brute_owen(v, root)


# --- the audit: Slurm's account tree (tests/fixtures/slurm-tree), a mapping's units ---

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from coopsched.audit import audit  # noqa: E402
from coopsched.audit.organizations import MappingError  # noqa: E402
from coopsched.cli import main  # noqa: E402

TREE = Path(__file__).parent / "fixtures" / "slurm-tree"
LOG = TREE / "sacct_X_utc.txt"
SACCTMGR = TREE / "sacctmgr_assoc.txt"
OPTS = dict(timezone="UTC", with_counterfactuals=False, points=2, machines=202)


def _tree_game():
    """The audit's window instance and table, built as the audit builds them."""
    from coopsched.audit import load_log
    from coopsched.audit.shares import by_shares
    from coopsched.audit.window import window_instance
    from coopsched.online.rigid import resolve_backfill

    log = load_log(LOG, timezone="UTC")
    orgs = by_shares(log.jobs, SACCTMGR, None, log.path)
    win = window_instance(log, orgs, None, None, 202, "work", jobs="rigid")
    inst = win.instance
    return inst, exact_game(inst, win.horizon, [], backfill=resolve_backfill(inst, None))


def test_audit_with_the_slurm_tree_reports_owen_against_the_brute_force():
    r = audit(LOG, org_by="account", shares=SACCTMGR, **OPTS)
    inst, g = _tree_game()
    names = inst.names
    assert names == [o.name for o in r.organizations]
    ix = names.index
    # root -> root (its own user), astro, life (biology, genomics), sciences (chemistry, physics)
    root = Unit(
        "(platform)",
        [
            ix("root"),
            ix("astro"),
            Unit("life", [ix("biology"), ix("genomics")]),
            Unit("sciences", [ix("chemistry"), ix("physics")]),
        ],
    )
    want = brute_owen(g.values, root)
    ow = r.owen
    assert ow.method == "exact" and ow.levels == 2
    assert [Fraction(o.owen_exact) for o in ow.organizations] == want
    assert sum(want) == sum(o.psi for o in r.organizations)  # efficiency
    for o in ow.organizations:
        assert o.owen_surplus == pytest.approx(o.psi - o.owen)
        assert o.phi == next(x.phi for x in r.organizations if x.name == o.name)
    units = {u.name: u for u in ow.units}
    assert set(units) == {"life", "sciences"}
    assert units["life"].members == ["biology", "genomics"]
    for u in units.values():  # quotient game property, and the unit's value alone
        assert u.owen == pytest.approx(u.shapley_quotient)
        mask = sum(1 << ix(m) for m in u.members)
        assert u.value_alone == g.values[mask]
    # Owen and Shapley differ on this tree
    assert any(abs(o.owen_minus_phi) > 1 for o in ow.organizations)


def test_owen_section_off_and_required():
    r = audit(LOG, org_by="account", shares=SACCTMGR, owen=False, **OPTS)
    assert r.owen is None
    r = audit(LOG, org_by="account", **OPTS)
    assert r.owen is None
    with pytest.raises(ValueError, match="owen: needs a hierarchy of units"):
        audit(LOG, org_by="account", owen=True, **OPTS)


def test_a_flat_tree_gives_no_owen_section(tmp_path):
    flat = tmp_path / "flat.txt"  # every account directly under the root
    rows = ["coopsched|root|||1", "coopsched|root||root|1"]
    for a, u in [("astro", "cs_erin"), ("biology", "cs_dave"), ("genomics", "cs_frank")]:
        rows += [f"coopsched|{a}|root||10", f"coopsched|{a}||{u}|1"]
    for a, u in [("chemistry", "cs_carol"), ("physics", "cs_alice")]:
        rows += [f"coopsched|{a}|root||10", f"coopsched|{a}||{u}|1"]
    flat.write_text("\n".join(rows) + "\n")
    r = audit(LOG, org_by="account", shares=flat, **OPTS)
    assert r.owen is None
    with pytest.raises(ValueError, match="single level"):
        audit(LOG, org_by="account", shares=flat, owen=True, **OPTS)


def test_sampled_owen_covers_the_exact_audits_values():
    # exact_upto=16: every coalition valued under REF, the exact audit's game
    exact = audit(LOG, org_by="account", shares=SACCTMGR, **OPTS).owen
    want = [o.owen for o in exact.organizations]
    misses = 0
    for seed in range(8):
        r = audit(
            LOG,
            org_by="account",
            shares=SACCTMGR,
            method="sampled",
            exact_upto=16,
            samples=40,
            adaptive=False,
            seed=seed,
            **OPTS,
        )
        ow = r.owen
        assert ow.method == "sampled" and ow.samples == 40
        for o, w in zip(ow.organizations, want, strict=True):
            misses += not o.owen_low - 1e-6 <= w <= o.owen_high + 1e-6
        assert sum(o.owen for o in ow.organizations) == pytest.approx(
            sum(o.psi for o in ow.organizations)
        )
    assert misses <= 0.1 * 8 * len(want)


def test_cli_owen_json_csv_and_table(capsys):
    args = ["audit", str(LOG), "--org-by", "account", "--timezone", "UTC", "--points", "2"]
    args += ["--no-counterfactuals", "--shares", str(SACCTMGR), "--machines", "202"]
    assert main([*args, "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert {u["name"] for u in r["owen"]["units"]} == {"life", "sciences"}
    assert main([*args, "--format", "csv"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if not ln.startswith("#")]
    head = lines[0].split(",")
    assert head[-6:] == ["units", "owen", "owen_low", "owen_high", "owen_surplus", "owen_exact"]
    bio = next(ln for ln in lines if ln.startswith("biology,")).split(",")
    assert bio[head.index("units")] == "life"
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Owen value" in out and "Units: sums" in out
    assert main([*args, "--no-owen", "--format", "json"]) == 0
    assert "owen" not in json.loads(capsys.readouterr().out)


def _mapping(tmp_path, units: str) -> Path:
    p = tmp_path / "m.toml"
    orgs = {
        "physics": "physics",
        "chemistry": "chemistry",
        "biology": "biology",
        "genomics": "genomics",
        "astro": "astro",
    }
    text = "".join(
        f'[[organization]]\nname = "{n}"\naccounts = ["{a}"]\n\n' for n, a in orgs.items()
    )
    p.write_text(text + units)
    return p


NESTED = """
[[unit]]
name = "sciences"
members = ["physics", "chemistry"]

[[unit]]
name = "faculty"
members = ["sciences", "biology"]
"""


def test_a_mapping_with_nested_units(tmp_path):
    m = _mapping(tmp_path, NESTED)
    r = audit(LOG, mapping=m, **OPTS)
    ow = r.owen
    assert ow.levels == 3 and ow.hierarchy == f"units of mapping {m}"
    units = {u.name: u for u in ow.units}
    assert units["faculty"].parent is None and units["sciences"].parent == "faculty"
    assert units["sciences"].level == 2
    assert units["faculty"].members == ["physics", "chemistry", "biology"]
    assert units["sciences"].shapley_quotient is None  # not a player of the top game
    by = {o.name: o for o in ow.organizations}
    assert by["physics"].units == ["faculty", "sciences"]
    assert by["astro"].units == []
    assert sum(Fraction(o.owen_exact) for o in ow.organizations) == sum(
        o.psi for o in r.organizations
    )
    assert units["faculty"].owen == pytest.approx(units["faculty"].shapley_quotient)


@pytest.mark.parametrize(
    "units, message",
    [
        ('[[unit]]\nname = "a"\nmembers = ["nobody"]\n', "is no organization or unit"),
        ('[[unit]]\nname = "physics"\nmembers = ["astro"]\n', "already taken"),
        (
            '[[unit]]\nname = "a"\nmembers = ["astro"]\n[[unit]]\nname = "b"\nmembers = ["astro"]\n',
            "in two units",
        ),
        (
            '[[unit]]\nname = "a"\nmembers = ["b"]\n[[unit]]\nname = "b"\nmembers = ["a"]\n',
            "inside itself",
        ),
        ('[[unit]]\nname = "a"\nmembers = []\n', "non-empty list"),
        ('[[unit]]\nname = "a"\nmembers = ["astro"]\nmachines = 3\n', "keys name and members"),
    ],
)
def test_malformed_units_are_refused(tmp_path, units, message):
    with pytest.raises(MappingError, match=message):
        audit(LOG, mapping=_mapping(tmp_path, units), **OPTS)


def test_on_the_captured_tree_owen_minus_phi_is_the_loss_shared_by_units():
    # docs/audit.md: the loss against REF's total is shared by the 4 top-level players under
    # Owen (then halved within each two-account unit), by the 6 organizations under Shapley
    r = audit(LOG, org_by="account", shares=SACCTMGR, **OPTS)
    loss = r.efficiency.loss
    assert loss == 14009
    phi = {o.name: Fraction(o.phi_exact) for o in r.organizations}
    for o in r.owen.organizations:
        share = Fraction(loss, 4) if not o.units else Fraction(loss, 8)
        assert Fraction(o.owen_exact) - phi[o.name] == Fraction(loss, 6) - share


def test_cli_owen_without_a_hierarchy_names_the_flag(capsys):
    args = ["audit", str(LOG), "--org-by", "account", "--timezone", "UTC", "--points", "2"]
    assert main([*args, "--no-counterfactuals", "--owen"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --owen: needs a hierarchy of units") and "Traceback" not in err
    with pytest.raises(TypeError, match="owen: expected True, False or None"):
        audit(LOG, org_by="account", owen="yes", **OPTS)


def test_hierarchy_from_a_tree_places_accounts_with_users_of_their_own():
    from coopsched.audit.owen import hierarchy_from_tree
    from coopsched.workloads.slurm_assoc import AccountTree

    parent = {"root": None, "life": "root", "bio": "life", "gen": "life", "sci": "root"}
    parent |= {"phys": "sci", "chem": "sci", "astro": "root", "empty": "root", "e1": "empty"}
    tree = AccountTree("t", "sacctmgr", parent, {a: 1 for a in parent})
    # 'life' has users of its own beside its sub-accounts; 'chem' and 'e1' are not
    # organizations of this window; 'other' is not in the tree
    names = ["life", "bio", "gen", "phys", "astro", "other"]
    root = hierarchy_from_tree(tree, names)
    assert root.members[0] == Unit("life", [0, 1, 2])
    # sci holds phys only: a unit of one is its member; 'other' stands beside the units
    assert root.members[1:] == [3, 4, 5]
    assert root.depth == 2 and sorted(root.players()) == list(range(6))


def test_sampled_orders_do_not_depend_on_how_the_tree_lists_units():
    rng = random.Random(7)
    v = random_game(rng, 5)
    a = Unit.of([[0, 1], [2, 3, 4]])
    b = Unit.of([[4, 2, 3], [1, 0]])  # the same units, listed otherwise
    canon = [3, 0, 4, 1, 2]
    ea = owen_antithetic(lambda m: v[m], a, 20, seed=3, order=canon)
    eb = owen_antithetic(lambda m: v[m], b, 20, seed=3, order=canon)
    assert np.array_equal(ea.phi, eb.phi)
    ec = owen_antithetic(lambda m: v[m], b, 20, seed=3)  # without it: the listed order
    assert not np.array_equal(ea.phi, ec.phi)


@pytest.mark.parametrize("seed", range(4))
def test_last_share_is_the_owen_value_of_the_grand_unanimity_game(seed):
    from coopsched.audit.owen import last_share

    rng = random.Random(300 + seed)
    k = 7
    root = random_partition(rng, k, nested=True)
    u_n = [0] * ((1 << k) - 1) + [1]
    assert last_share(root, k).tolist() == [float(x) for x in owen(u_n, root)]


@pytest.mark.parametrize("seed", range(3))
def test_grand_offset_is_exact_on_an_additive_game_and_keeps_the_coverage(seed):
    """The sampled audit's structure (``split``): ``v'`` plus a jump at the grand coalition.
    With ``grand_offset`` the Owen estimate is exact (zero width) when ``v'`` is additive; on
    a random game with a jump, its intervals cover the exact Owen values (same allowance as
    :func:`test_sampled_owen_covers_the_exact_values`)."""
    rng = random.Random(200 + seed)
    k = 6
    root = random_partition(rng, k, nested=True)
    a = [rng.randint(1, 60) for _ in range(k)]
    v = [sum(a[u] for u in range(k) if S >> u & 1) for S in range(1 << k)]
    v[-1] -= 100
    est = owen_antithetic(lambda m: v[m], root, 20, seed=seed, grand_offset=-100)
    assert np.all(est.halfwidth == 0)
    assert np.allclose(est.phi[:, 0], [float(x) for x in owen(v, root)])
    w = random_game(rng, k)
    w[-1] -= 3 * max(abs(x) for x in w)  # a jump larger than the game's spread
    off = w[-1] - 40  # v'(N) = 40: any value keeps the estimate unbiased
    exact = np.array([float(x) for x in owen(w, root)])
    misses = 0
    for s in range(20):
        e = owen_antithetic(lambda m: w[m], root, 60, seed=s, confidence=0.95, grand_offset=off)
        misses += int((np.abs(e.phi[:, 0] - exact) > e.halfwidth[:, 0] + 1e-9).sum())
    assert misses <= 0.12 * 20 * k


def test_a_deep_tree_of_accounts_builds_without_recursion_or_is_refused():
    """Issue 41: a chain of single children collapses at any depth; units nested deeper
    than MAX_DEPTH are one clear error, never a RecursionError."""
    from coopsched.audit.owen import MAX_DEPTH, build_hierarchy

    chain = {f"x{i}": [f"x{i + 1}"] for i in range(5000)}
    assert build_hierarchy(["x5000"], lambda a: chain.get(a, []), ["x0"]).members == [0]
    names = [f"o{i}" for i in range(MAX_DEPTH + 5)]
    kids = {n: [names[i + 1]] for i, n in enumerate(names[:-1])}
    with pytest.raises(ValueError, match=f"more than {MAX_DEPTH} levels deep under 'o0'"):
        build_hierarchy(names, lambda a: kids.get(a, []), ["o0"])
    unit = build_hierarchy(names[:MAX_DEPTH], lambda a: kids.get(a, []), ["o0"])
    assert unit.depth == MAX_DEPTH - 1
