"""The Owen value: Shapley fairness when organizations are grouped in units (account trees).

G. Owen, "Values of games with a priori unions", in R. Henn & O. Moeschlin (eds.),
*Mathematical Economics and Game Theory*, Springer, 1977, pp. 76-88. Given a partition of
the players into unions ``B_1 .. B_m``, the Owen value of player ``i`` in union ``B_j`` is

    ``sum over R in M \\ {j}, T in B_j \\ {i} of
    r! (m-r-1)! / m!  *  t! (b-t-1)! / b!  *  (v(Q_R + T + i) - v(Q_R + T))``

(``M = {1..m}``, ``Q_R`` the union of the ``B_l`` with ``l in R``, ``r = |R|``, ``b = |B_j|``,
``t = |T|``): the expected marginal contribution of ``i`` over the orders of the players in
which every union is contiguous, the unions in a uniformly random order and the members of
each union in a uniformly random order. Its properties (Owen 1977): efficiency (the values sum
to ``v(N)``); the quotient game property (a union's members' values sum to the union's Shapley
value in the *quotient game*, whose players are the unions and ``v_Q(R) = v(Q_R)``); with one
union, or with every union a singleton, it is the Shapley value.

Nested units (a tree deeper than one level, Slurm's account tree): the same expectation over
the orders in which the players of every unit of the tree are contiguous, the children of each
unit in a uniformly random order; for a two-level tree it is Owen's value, and it is the
levels-structure value of Winter ("A value for cooperative games with levels structure of
cooperation", Int. J. Game Theory 18, 1989). :func:`owen` computes it exactly for any depth:
at each level on the path from the root to ``i``, a subset ``R_l`` of the other children of
that level's unit precedes ``i``, with the Shapley weight ``r! (m-r-1)! / m!``; the weights
multiply.

* :func:`owen` -- exact, from a table of ``2**k`` coalition values (integers give exact
  :class:`fractions.Fraction` results), in ``O(k 2^(k-1))`` at most;
* :func:`quotient_shapley` -- the top-level units' Shapley values in the quotient game;
* :func:`owen_antithetic` -- a sampled estimate: antithetic pairs of orders that keep every
  unit contiguous (the reverse of such an order keeps them contiguous too, and has the same
  distribution), per-player intervals from the observed variance
  (:func:`coopsched.audit.estimation.shapley_antithetic`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..online.shapley import shapley, shapley_weights
from .estimation import AntitheticEstimate, shapley_antithetic, unanimity_control
from .estimation.budget import Budget


@dataclass
class Unit:
    """A unit of a hierarchy: a name and its members (player indices or sub-units)."""

    name: str
    members: list[int | Unit] = field(default_factory=list)

    @staticmethod
    def of(nested: Sequence, name: str = "root") -> Unit:
        """A hierarchy from nested lists of player indices (units named by their path)."""
        out = Unit(name)
        for i, x in enumerate(nested):
            out.members.append(int(x) if isinstance(x, int) else Unit.of(x, f"{name}.{i}"))
        return out

    def players(self) -> list[int]:
        """The players in this unit, at any depth, in the tree's order."""
        out: list[int] = []
        for x in self.members:
            out.extend([x] if isinstance(x, int) else x.players())
        return out

    def mask(self) -> int:
        """The coalition (bitmask) of the unit's players."""
        m = 0
        for u in self.players():
            m |= 1 << u
        return m

    def units(self) -> list[tuple[Unit, int]]:
        """Every unit below this one with its depth (1 for a child), parents first."""
        out: list[tuple[Unit, int]] = []
        for x in self.members:
            if isinstance(x, Unit):
                out.append((x, 1))
                out.extend((u, d + 1) for u, d in x.units())
        return out

    @property
    def depth(self) -> int:
        """Levels of the tree: 1 when every member is a player."""
        return 1 + max((x.depth for x in self.members if isinstance(x, Unit)), default=0)


def check_hierarchy(root: Unit, k: int) -> None:
    """Every player ``0..k-1`` exactly once, and no empty unit."""
    got = root.players()
    if sorted(got) != list(range(k)):
        raise ValueError(f"hierarchy: its players {sorted(got)} are not 0..{k - 1} once each")
    for u, _d in [(root, 0), *root.units()]:
        if not u.members:
            raise ValueError(f"hierarchy: unit {u.name!r} is empty")


def _mask(x: int | Unit) -> int:
    return 1 << x if isinstance(x, int) else x.mask()


def _contains(x: int | Unit, player: int) -> bool:
    return x == player if isinstance(x, int) else player in x.players()


def _predecessors(root: Unit, player: int) -> list[tuple[int, int]]:
    """``(S, weight)`` for every set of players that can precede ``player`` in an order that
    keeps every unit contiguous; ``weight`` is its probability times ``L ** depth(player)``
    (``L = lcm(1..k)``, :func:`coopsched.online.shapley.shapley_weights`)."""
    k = len(root.players())
    _L, omega = shapley_weights(max(k, 1))
    out = [(0, 1)]
    unit: int | Unit = root
    while isinstance(unit, Unit):
        mine = next(x for x in unit.members if _contains(x, player))
        others = [_mask(x) for x in unit.members if x is not mine]
        m = len(unit.members)
        level: list[tuple[int, int]] = [(0, 0)]
        for om in others:
            level += [(s | om, r + 1) for s, r in level]
        out = [(s | t, w * int(omega[m, r])) for s, w in out for t, r in level]
        unit = mine
    return out


def _levels(root: Unit, player: int) -> int:
    n = 0
    unit: int | Unit = root
    while isinstance(unit, Unit):
        unit = next(x for x in unit.members if _contains(x, player))
        n += 1
    return n


def owen(v: Sequence, root: Unit) -> list[Fraction]:
    """Exact Owen values (nested: Winter's levels-structure value) of all players.

    ``v``: a table of ``2**k`` coalition values (bitmasks, ``v[0] = 0``); ``root``: the
    hierarchy (:class:`Unit`), covering the players ``0..k-1`` once each. Integer values give
    exact results."""
    vals = list(v)
    k = len(vals).bit_length() - 1
    if len(vals) != 1 << k:
        raise ValueError(f"a value table needs 2**k entries, got {len(vals)}")
    check_hierarchy(root, k)
    L, _omega = shapley_weights(max(k, 1))
    out = []
    for i in range(k):
        ib = 1 << i
        acc = sum(w * (vals[s | ib] - vals[s]) for s, w in _predecessors(root, i))
        den = L ** _levels(root, i)
        out.append(Fraction(acc, den) if isinstance(acc, int) else acc / den)
    return out


def quotient_shapley(v: Sequence, root: Unit) -> list[Fraction]:
    """The Shapley values of the root's members (its top-level units and single players) in
    the quotient game ``v_Q(R) = v(union of the members in R)`` (Owen 1977)."""
    vals = list(v)
    masks = [_mask(x) for x in root.members]
    m = len(masks)
    table = []
    for R in range(1 << m):
        c = 0
        for j in range(m):
            if R >> j & 1:
                c |= masks[j]
        table.append(vals[c])
    return shapley(table)


def contiguous_order(
    root: Unit, order: Sequence[int] | None = None
) -> Callable[[np.random.Generator], list[int]]:
    """A function drawing a uniformly random order that keeps every unit contiguous (the
    children of each unit in a uniformly random order, recursively). ``order``: the players
    in a canonical order (as :func:`~coopsched.audit.estimation.shapley_antithetic`'s); the
    children of a unit are then permuted from their rank in it (of their first player), so
    that a seed's orders do not depend on how the tree lists them."""
    rank = {int(p): i for i, p in enumerate(order)} if order is not None else None

    def listed(x: Unit) -> list[int | Unit]:
        if rank is None:
            return x.members
        return sorted(
            x.members,
            key=lambda m: rank[m] if isinstance(m, int) else min(rank[p] for p in m.players()),
        )

    def draw(rng: np.random.Generator) -> list[int]:
        def walk(x: int | Unit) -> list[int]:
            if isinstance(x, int):
                return [x]
            members = listed(x)
            out: list[int] = []
            for j in rng.permutation(len(members)):
                out += walk(members[int(j)])
            return out

        return walk(root)

    return draw


def owen_antithetic(
    value: Callable[[int], object],
    root: Unit,
    max_orders: int,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    decide: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    seconds: float | None = None,
    interval: str = "auto",
    first_orders: int = 20,
    order: Sequence[int] | None = None,
    grand_offset: object = None,
    budget: Budget | None = None,
) -> AntitheticEstimate:
    """Sampled Owen values: :func:`~coopsched.audit.estimation.shapley_antithetic` over the
    orders drawn by :func:`contiguous_order` (each with its reverse), the same intervals
    (per player, from the observed variance of the pair means) and adaptive looks.
    ``order``: the players in a canonical order (:func:`contiguous_order`).

    ``grand_offset``: ``v(N) - v'(N)`` (a number or 1-D array), where ``v'`` values the grand
    coalition as the other coalitions are: the orders then sample ``v'`` and each player gets
    ``grand_offset`` times its Owen value in the unanimity game of the grand coalition
    (:func:`last_share`), exactly (the control variate of
    :func:`~coopsched.audit.estimation.unanimity_control`, for orders that keep the units
    contiguous). ``budget`` or ``seconds``: as
    :func:`~coopsched.audit.estimation.shapley_antithetic`."""
    k = len(root.players())
    check_hierarchy(root, k)
    control = control_phi = None
    if grand_offset is not None:
        control, _ = unanimity_control(k, grand_offset)
        off = np.atleast_1d(np.asarray(grand_offset, dtype=np.float64))
        control_phi = np.outer(last_share(root, k), off)
    return shapley_antithetic(
        value,
        k,
        max_orders,
        seed=seed,
        confidence=confidence,
        decide=decide,
        seconds=seconds,
        budget=budget,
        interval=interval,
        first_orders=first_orders,
        draw=contiguous_order(root, order),
        control=control,
        control_phi=control_phi,
    )


def last_share(root: Unit, k: int) -> np.ndarray:
    """Per player, the probability of being last in an order that keeps every unit
    contiguous (:func:`contiguous_order`): the product, over the units on its path from the
    root, of one over the unit's number of members. It is the player's Owen value in the
    unanimity game of the grand coalition (1 for it, 0 otherwise), whose only nonzero
    marginal contribution is the last player's; for the trivial hierarchy, ``1/k``."""
    out = np.zeros(k)

    def walk(x: int | Unit, p: float) -> None:
        if isinstance(x, int):
            out[x] = p
            return
        for m in x.members:
            walk(m, p / len(x.members))

    walk(root, 1.0)
    return out


#: Levels of nested units a hierarchy may have (the Owen value's walks recurse over them;
#: a chain of accounts with one child each collapses and does not count).
MAX_DEPTH = 200


def build_hierarchy(
    names: Sequence[str], children: Callable[[str], Sequence[str]], tops: Sequence[str]
) -> Unit:
    """The hierarchy over the players ``names`` (player ``i`` is ``names[i]``) given as a
    forest: ``tops`` its roots, ``children(node)`` a node's children. A node that is also a
    player's name is that player, placed among its own children (a Slurm account with users
    of its own beside its sub-accounts); nodes without players are dropped, a unit of one
    member is that member, and players of no node stand alone at the top."""
    index = {n: i for i, n in enumerate(names)}
    placed: set[int] = set()

    def node(top: str) -> int | Unit | None:
        """The unit of ``top``, built from the leaves up with a stack of its own (a tree of
        any depth; a chain of single children collapses)."""
        built: dict[str, tuple[int | Unit | None, int]] = {}  # name -> (unit, its depth)
        stack = [(top, False)]
        while stack:
            name, ready = stack.pop()
            kids = children(name)
            if not ready:
                stack.append((name, True))
                stack.extend((c, False) for c in reversed(kids))
                continue
            members: list[int | Unit] = []
            if name in index:
                members.append(index[name])
                placed.add(index[name])
            below = [built.pop(c) for c in kids]
            members += [x for x, _ in below if x is not None]
            depth = max((d for x, d in below if x is not None), default=0)
            if len(members) > 1:
                built[name] = (Unit(name, members), depth + 1)
                if depth + 1 > MAX_DEPTH:
                    raise ValueError(
                        f"the units nest more than {MAX_DEPTH} levels deep under {top!r}: "
                        "flatten the tree of accounts (or units) that hold organizations"
                    )
            else:
                built[name] = (members[0] if members else None, depth)
        return built[top][0]

    top: list[int | Unit] = []
    for t in tops:
        x = node(t)
        if x is not None:
            top.append(x)
    top += [i for i in range(len(names)) if i not in placed]
    if len(top) == 1 and isinstance(top[0], Unit):
        return top[0]
    return Unit("(platform)", top)


def hierarchy_from_tree(tree, names: Sequence[str]) -> Unit:
    """The hierarchy of a Slurm account tree
    (:class:`coopsched.workloads.slurm_assoc.AccountTree`) over the audit's organizations
    (accounts): the root's sub-accounts are the top-level units; the root account itself (its
    own users) and an organization the tree lacks (``other``) stand alone beside them."""
    kids: dict[str, list[str]] = {}
    for a, p in tree.parent.items():
        if p is not None:
            kids.setdefault(p, []).append(a)
    # the root's children are the top-level units; the root's own users (an organization
    # named as the root) and organizations the tree lacks stand beside them
    return build_hierarchy(names, lambda a: kids.get(a, []), kids.get(tree.root, []))


def hierarchy_from_units(units: dict[str, list[str]], names: Sequence[str]) -> Unit:
    """The hierarchy of a mapping file's ``[[unit]]`` tables over the audit's organizations."""
    inner = {m for ms in units.values() for m in ms}
    tops = [u for u in units if u not in inner]
    return build_hierarchy(names, lambda n: units.get(n, []), tops)


def trivial(root: Unit) -> bool:
    """Owen's value is Shapley's for this hierarchy whatever the game: one level only."""
    return root.depth == 1


def _unit_of(root: Unit, k: int) -> list[list[str]]:
    """Per player, the names of the units holding it, outermost first (the root excluded)."""
    out: list[list[str]] = [[] for _ in range(k)]
    for u, _d in root.units():
        for p in u.players():
            out[p].append(u.name)
    return out


def owen_report(
    root: Unit,
    names: Sequence[str],
    psi: Sequence[int],
    phi: Sequence | np.ndarray,
    *,
    source: str,
    values: Sequence[int] | None = None,
    estimate: AntitheticEstimate | None = None,
    decided: np.ndarray | None = None,
) -> dict:
    """The audit report's ``owen`` section: per organization its Owen value and surplus
    against it, per unit (every unit of the tree) its sums; exact from ``values`` (the game's
    table), else from a sampled ``estimate`` (:func:`owen_antithetic`)."""
    k = len(names)
    path = _unit_of(root, k)
    if values is not None:
        ow: list = owen(values, root)
        hw = [0.0] * k
        sign = [True] * k
    else:
        assert estimate is not None
        ow = [float(x) for x in estimate.phi[:, 0]]
        hw = [float(x) for x in estimate.halfwidth[:, 0]]
        sign = [True] * k if decided is None else [bool(x) for x in decided]
    orgs = []
    for i in range(k):
        o = ow[i]
        orgs.append(
            {
                "name": names[i],
                "units": path[i],
                "psi": int(psi[i]),
                "phi": float(phi[i]),
                "owen": float(o),
                "owen_exact": f"{o.numerator}/{o.denominator}" if isinstance(o, Fraction) else None,
                "owen_low": float(o) - hw[i],
                "owen_high": float(o) + hw[i],
                "sign_decided": sign[i],
                "owen_surplus": float(psi[i] - o),
                "owen_minus_phi": float(o - phi[i]),
            }
        )
    quotient = quotient_shapley(values, root) if values is not None else None
    units = []
    parent_of = {id(x): u.name for u, _d in [(root, 0), *root.units()] for x in u.members}
    for u, depth in root.units():
        ps = u.players()
        row = {
            "name": u.name,
            "parent": parent_of.get(id(u)) if depth > 1 else None,
            "level": depth,
            "members": [names[p] for p in ps],
            "psi": int(sum(psi[p] for p in ps)),
            "phi": float(sum(phi[p] for p in ps)),
            "owen": float(sum(ow[p] for p in ps)),
            "owen_surplus": float(sum(psi[p] - ow[p] for p in ps)),
            "value_alone": int(values[u.mask()]) if values is not None else None,
            "shapley_quotient": None,
        }
        if quotient is not None and depth == 1:
            top = next(i for i, x in enumerate(root.members) if x is u)
            row["shapley_quotient"] = float(quotient[top])
        units.append(row)
    return {
        "hierarchy": source,
        "levels": root.depth,
        "method": "exact" if values is not None else "sampled",
        "text": (
            "Owen value (Owen 1977; nested units: Winter 1989): the expected marginal "
            "contribution over the orders in which every unit's organizations are contiguous; "
            "a top-level unit's organizations sum to its Shapley value in the game between "
            "units (v(alone): the unit's own coalition value)"
            + (
                ""
                if values is not None
                else "; sampled: antithetic pairs of such orders, the same game as phi"
            )
        ),
        "organizations": orgs,
        "units": units,
    }


def sampled_owen(
    inst,
    horizon: int,
    root: Unit,
    *,
    samples: int,
    seed: int,
    confidence: float,
    value_policy: str,
    exact_upto: int,
    adaptive: bool,
    seconds: float | None,
    interval: str,
    backfill: str | None,
    estimator: str = "split",
    cpu_seconds: float | None = None,
) -> tuple[AntitheticEstimate, np.ndarray]:
    """The sampled audit's Owen values at the horizon: the game of the sampled ``phi``
    (:mod:`.sampling`: ``v(grand)`` the recorded total, other coalitions under
    ``value_policy``, those of at most ``exact_upto`` members under REF) and
    :func:`owen_antithetic`, stopping once every organization's sign against its Owen value
    is decided. Returns the estimate and, per organization, whether its sign is decided.
    ``estimator``: ``"split"`` (default), ``"ends"`` or ``"plain"``, as the sampled ``phi``
    (:mod:`.sampling`): with ``split`` the grand coalition is also valued under
    ``value_policy`` and the recorded total's difference to it shared by
    :func:`last_share` (``grand_offset`` of :func:`owen_antithetic`); ``ends`` (stratified
    by position for uniform orders) does the same here, the orders keeping units
    contiguous. The budget, ``cpu_seconds`` of CPU time and/or ``seconds`` of wall-clock
    time, is its own (as large as the sampled ``phi``'s)."""
    from ..online.policies import get_policy
    from ..online.ref import ref_schedule
    from ..online.shapley import members as coalition_members
    from ..online.utilities import psi_sp
    from .game import recorded_starts
    from .sampling import sign_decided

    k = inst.k
    G = (1 << k) - 1
    psi = np.array(
        psi_sp(inst.org, recorded_starts(inst), inst.size, horizon, k, inst.processors),
        dtype=np.float64,
    )

    def value(mask: int, grand: bool = False) -> float:
        if mask == 0:
            return 0.0
        if mask == G and not grand:
            return float(psi.sum())
        members = coalition_members(mask, k)
        if inst.rigid:
            name = "ref" if len(members) <= exact_upto else value_policy
            sched = get_policy(name).run(inst, horizon, members=members, backfill=backfill)
        elif len(members) <= exact_upto:
            sched, _ = ref_schedule(inst.restrict(members), horizon)
        else:
            sched = get_policy(value_policy).run(inst, horizon, members=members)
        return float(sum(sched.psi(horizon)))

    def decide(phi: np.ndarray, hw: np.ndarray) -> np.ndarray:
        return sign_decided(psi, phi[:, 0], hw[:, 0])

    offset = None
    if estimator in ("split", "ends") and exact_upto < k - 1:
        offset = float(psi.sum()) - value(G, grand=True)
    est = owen_antithetic(
        value,
        root,
        samples,
        seed=seed,
        confidence=confidence,
        decide=decide if adaptive else None,
        budget=Budget(cpu_seconds, seconds),
        interval=interval,
        order=inst.canonical_order().tolist(),  # orders drawn over it: names do not matter
        grand_offset=offset,
    )
    return est, sign_decided(psi, est.phi[:, 0], est.halfwidth[:, 0])
