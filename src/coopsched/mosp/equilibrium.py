"""Best responses, epsilon-approximate equilibria and best-response dynamics of the MOSP
game (Cohen, Cordeiro, Trystram, Sec. 5: pure and epsilon-approximate equilibria).

**Exact best response by decomposition.** The mechanism is local to every cluster: what a
cluster runs depends only on the jobs sent to it. So once the other agents' strategies are
fixed, agent ``k``'s cost is ``max_c g_c(S_c)``, where ``S_c`` is the part of its jobs it
sends to cluster ``c`` and ``g_c`` the last completion among them there. Jobs of ``k`` that
the mechanism cannot tell apart (same ``p``, ``q`` and priority, adjacent in the list
order, no other agent's job of equal priority) are interchangeable, so ``S_c`` is a vector
of counts per *type*, and the best response is a min-max dynamic program over clusters
with the vector of jobs still to place as state -- exact, and polynomial when the agent
has few job types (the instances of Theorems 4 and 5 have many equal jobs).
:func:`strategies` enumerates strategies one by one; the tests use it as the brute-force
reference.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..workloads.instance import Instance
from ..workloads.limits import MAX_SAMPLES, check_count
from .game import Mechanism, cluster_sequence, costs, list_positions, owner_profile
from .profile import ClusterProfile
from .schedule import mosp_arrays

INF = np.iinfo(np.int64).max
DP_LIMIT = 20_000_000  # elementary steps of one best response before we refuse


def agent_types(inst: Instance, k: int, mech: Mechanism) -> list[list[int]]:
    """Agent ``k``'s jobs in groups of interchangeable ones, each group in list order.

    Two jobs are interchangeable when they have the same ``p``, ``q`` and priority, no
    other job of ``k`` lies between them in the list order, and no other agent has a job
    of that priority: then every cluster places them at the same point of its sequence.
    """
    p, q, owner, _ = mosp_arrays(inst)
    pr = mech.priorities(inst)
    pos = list_positions(inst, mech)
    shared = set(pr[owner != k].tolist())
    groups: list[list[int]] = []
    key_prev = None
    for j in sorted(np.flatnonzero(owner == k).tolist(), key=lambda j: pos[j]):
        key = (int(p[j]), int(q[j]), float(pr[j]))
        if groups and key == key_prev and key[2] not in shared:
            groups[-1].append(j)
        else:
            groups.append([j])
        key_prev = key
    return groups


class _Counts:
    """All count vectors ``0 <= s <= n`` (one digit per type) in mixed radix."""

    def __init__(self, n: Sequence[int]):
        self.n = np.asarray(n, dtype=np.int64)
        self.radix = np.ones(len(n), dtype=np.int64)
        for t in range(1, len(n)):
            self.radix[t] = self.radix[t - 1] * (self.n[t - 1] + 1)
        self.size = int(np.prod(self.n + 1))
        grids = np.meshgrid(*[np.arange(x + 1) for x in self.n], indexing="ij")
        digits = (
            np.stack([g.ravel() for g in grids], axis=1) if len(n) else np.zeros((1, 0), np.int64)
        )
        self.digits = digits[
            np.argsort(digits @ self.radix, kind="stable")
        ]  # row s = vector of index s

    def box(self, upper: np.ndarray) -> np.ndarray:
        """Indices of all vectors ``u <= upper``."""
        idx = np.zeros(1, dtype=np.int64)
        for t in range(len(self.n)):
            idx = (idx[:, None] + np.arange(upper[t] + 1) * self.radix[t]).ravel()
        return idx


def _completions(
    arrays: tuple[np.ndarray, ...],
    config: np.ndarray,
    k: int,
    c: int,
    groups: list[list[int]],
    counts: _Counts,
) -> np.ndarray:
    """``g_c(s)`` for every count vector ``s``: the last completion of the jobs ``s`` of
    agent ``k`` sent to cluster ``c`` (INF when one of them is too wide, 0 for none).

    The cluster places jobs in a fixed sequence, and the members of a group are adjacent in
    it, so the sequence is a list of items -- other agents' jobs and k's groups -- and
    ``s`` takes the first ``s_t`` members of group t. On another agent's cluster its owner's
    jobs are list-scheduled first (:func:`~coopsched.mosp.game.owner_profile`) and a
    depth-first walk over the remaining items shares every prefix: each profile is built
    once per distinct prefix of choices. At home (``c == k``) k's jobs come first and are
    list-scheduled, which is not incremental: every subset is list-scheduled on its own.
    """
    p, q, owner, m, pr, pos = (
        arrays  # mosp_arrays, then the mechanism's priorities and list positions
    )
    fixed = [int(j) for j in np.flatnonzero(config == c) if owner[j] != k]
    out = np.full(counts.size, INF, dtype=np.int64)
    if c == k:  # my jobs first: the chosen subset alone, list-scheduled in list order
        for index in range(counts.size):
            digits = counts.digits[index]
            if any(x and q[groups[t][0]] > m[c] for t, x in enumerate(digits)):
                continue
            chosen = sorted(
                (j for t, x in enumerate(digits) for j in groups[t][:x]), key=pos.__getitem__
            )
            out[index] = owner_profile(int(m[c]), chosen, p, q).makespan
        return out
    group_of = {g[0]: t for t, g in enumerate(groups)}
    members = {j for g in groups for j in g}
    items: list[tuple[str, int]] = []  # ("job", j) or ("group", t), in the cluster's order
    for j in cluster_sequence(fixed + [g[0] for g in groups], c, owner, pos, pr):
        if j in group_of:
            items.append(("group", group_of[j]))
        elif j not in members:
            items.append(("job", j))
    while items and items[-1][0] == "job":  # jobs placed after all of k's cannot delay them
        items.pop()

    def walk(i: int, prof: ClusterProfile, index: int, end: int) -> None:
        while i < len(items) and items[i][0] == "job":
            j = items[i][1]
            prof.insert(j, int(p[j]), int(q[j]))
            i += 1
        if i == len(items):
            out[index] = end
            return
        t = items[i][1]
        g = groups[t]
        walk(i + 1, prof.copy() if i + 1 < len(items) else prof, index, end)  # none of group t here
        if q[g[0]] > m[c]:
            return  # too wide: INF stays for every s with s_t > 0
        for x, j in enumerate(g, start=1):
            end = max(end, prof.insert(j, int(p[j]), int(q[j])) + int(p[j]))
            walk(
                i + 1,
                prof.copy() if i + 1 < len(items) else prof,
                index + x * int(counts.radix[t]),
                end,
            )

    own = [j for it, j in items if it == "job" and owner[j] == c]  # c's owner's, first
    walk(len(own), owner_profile(int(m[c]), own, p, q), 0, 0)
    return out


@dataclass
class BestResponse:
    """Agent ``k``'s exact best response to the others' strategies."""

    cost: int
    config: np.ndarray  # the configuration with k's jobs moved to the best response
    home: int  # how many of k's jobs stay at home (maximal among best responses)


def best_response(
    inst: Instance, config: Sequence[int] | np.ndarray, mech: Mechanism, k: int
) -> BestResponse:
    """Agent ``k``'s lowest cost over all its strategies (others fixed), exactly.

    Among the strategies of lowest cost, one keeping the most jobs at home is returned
    (Sec. 7.1's "maximal set of jobs at home"). Raises ``ValueError`` when the agent has
    so many distinct jobs that the dynamic program would exceed :data:`DP_LIMIT` steps.
    """
    base = np.array(config, dtype=np.int64)
    groups = agent_types(inst, k, mech)
    if not groups:
        return BestResponse(0, base, 0)
    n = [len(g) for g in groups]
    others = [c for c in range(inst.k) if c != k]
    work = int(np.prod([(x + 1) * (x + 2) // 2 for x in n], dtype=float)) * max(len(others), 1)
    if work > DP_LIMIT:
        raise ValueError(
            f"agent {k} has {sum(n)} jobs of {len(n)} kinds: an exact best response needs about "
            f"{work:.2e} steps (limit {DP_LIMIT:.0e}); best responses are NP-hard, exact ones are "
            "for agents with few distinct jobs"
        )
    counts = _Counts(n)
    arrays = (*mosp_arrays(inst), mech.priorities(inst), list_positions(inst, mech))
    g = {c: _completions(arrays, base, k, c, groups, counts) for c in range(inst.k)}
    # dp[i][r]: lowest max completion placing the jobs r on clusters others[i:]
    dp_next = np.full(counts.size, INF, dtype=np.int64)
    dp_next[0] = 0
    args = []
    r: np.ndarray | int  # count indices: an array in the DP, one index when tracing back
    for c in reversed(others):
        dp = np.full(counts.size, INF, dtype=np.int64)
        arg = np.zeros(counts.size, dtype=np.int64)
        for s in range(counts.size):
            if g[c][s] == INF:
                continue
            u = counts.box(counts.n - counts.digits[s])
            cand = np.maximum(g[c][s], dp_next[u])
            r = u + s
            better = cand < dp[r]
            dp[r[better]] = cand[better]
            arg[r[better]] = s
        args.append(arg)
        dp_next = dp
    args.reverse()
    full = counts.size - 1  # all of k's jobs
    best_cost, best_home, best_s = INF, -1, 0
    for s in range(counts.size):
        if g[k][s] == INF:
            continue
        rest = dp_next[full - s]
        cost = max(int(g[k][s]), int(rest))
        home = int(counts.digits[s].sum())
        if rest != INF and (cost < best_cost or (cost == best_cost and home > best_home)):
            best_cost, best_home, best_s = cost, home, s
    if best_cost == INF:
        raise ValueError(f"agent {k} has a job no cluster can run")
    new = base.copy()
    taken = np.zeros(len(groups), dtype=np.int64)

    def send(c: int, s: int) -> None:
        for t, x in enumerate(counts.digits[s]):
            for j in groups[t][taken[t] : taken[t] + x]:
                new[j] = c
            taken[t] += x

    send(k, best_s)
    r = full - best_s
    for i, c in enumerate(others):
        s = int(args[i][r])
        send(c, s)
        r -= s
    return BestResponse(best_cost, new, best_home)


def strategies(inst: Instance, k: int, mech: Mechanism | None = None, limit: int = 200_000):
    """Every strategy of agent ``k`` (a dict job -> cluster), one per way of placing its
    interchangeable jobs (:func:`agent_types`); raises beyond ``limit`` strategies."""
    _, q, _, m = mosp_arrays(inst)
    per_group = []
    for jobs in agent_types(inst, k, mech or Mechanism()):
        ok = [c for c in range(inst.k) if m[c] >= q[jobs[0]]]
        per_group.append(
            [(jobs, combo) for combo in itertools.combinations_with_replacement(ok, len(jobs))]
        )
    count = int(np.prod([len(g) for g in per_group], dtype=float))
    if count > limit:
        raise ValueError(
            f"agent {k} has {count} strategies; exhaustive enumeration is for small instances"
        )
    for choice in itertools.product(*per_group):
        yield {j: c for jobs, combo in choice for j, c in zip(jobs, combo, strict=True)}


def epsilon(
    inst: Instance, config: Sequence[int] | np.ndarray, mech: Mechanism
) -> tuple[float, list[float]]:
    """Smallest epsilon making the configuration an epsilon-approximate pure equilibrium
    (Sec. 5: ``cost_k <= epsilon * cost_k(s, M_-k)`` for every agent and strategy), and
    each agent's ratio ``cost / best response``."""
    cur = costs(inst, config, mech)
    ratios = []
    for k in range(inst.k):
        br = best_response(inst, config, mech, k).cost
        ratios.append(float(cur[k]) / br if br else 1.0)
    return max(ratios, default=1.0), ratios


@dataclass
class Dynamics:
    """A run of best-response dynamics: whether it converged, the cycle it entered if not, its
    steps and configurations."""

    converged: bool
    cycle: list[tuple[int, ...]] | None
    steps: int
    config: np.ndarray
    history: list[tuple[int, ...]]


def best_response_dynamics(
    inst: Instance,
    mech: Mechanism,
    config: Sequence[int] | np.ndarray | None = None,
    max_rounds: int = 50,
    order: Sequence[int] | None = None,
) -> Dynamics:
    """Agents in turn (``order``, default index order) switch to a strictly better best
    response (keeping most jobs at home among the best); stop at an equilibrium or when a
    configuration repeats (a cycle, reported)."""
    _, _, owner, _ = mosp_arrays(inst)
    cfg = np.array(owner if config is None else config, dtype=np.int64)
    agents = list(range(inst.k)) if order is None else [int(k) for k in order]
    seen: dict[tuple[int, ...], int] = {tuple(cfg): 0}
    history = [tuple(cfg)]
    steps = 0
    for _ in range(max_rounds):
        improved = False
        for k in agents:
            cur = int(costs(inst, cfg, mech)[k])
            br = best_response(inst, cfg, mech, k)
            if br.cost < cur:
                cfg = br.config
                steps += 1
                key = tuple(cfg)
                history.append(key)
                if key in seen:
                    return Dynamics(False, history[seen[key] :], steps, cfg, history)
                seen[key] = len(history) - 1
                improved = True
        if not improved:
            return Dynamics(True, None, steps, cfg, history)
    return Dynamics(False, None, steps, cfg, history)


@dataclass
class FoundEquilibrium:
    """An equilibrium found by the search: its configuration, makespan and which random start
    reached it."""

    config: np.ndarray
    makespan: int
    start: int  # which random start reached it


def search_equilibria(
    inst: Instance,
    mech: Mechanism,
    starts: int = 100,
    seed: int = 0,
    max_rounds: int = 30,
) -> list[FoundEquilibrium]:
    """Pure equilibria reached by best-response dynamics from ``starts`` random
    configurations (random agent orders), distinct, worst (largest makespan) first.

    A lower bound on the price of anarchy where the game is too large to enumerate: the
    worst equilibrium found, over the optimum.
    """
    check_count(starts, MAX_SAMPLES, "random starts")
    _, q, _, m = mosp_arrays(inst)
    rng = np.random.default_rng(seed)
    fits = [np.flatnonzero(m >= q[j]) for j in range(inst.n)]
    found: dict[tuple[int, ...], FoundEquilibrium] = {}
    for s in range(starts):
        cfg = np.array([rng.choice(f) for f in fits], dtype=np.int64)
        dyn = best_response_dynamics(
            inst, mech, cfg, max_rounds, order=rng.permutation(inst.k).tolist()
        )
        key = tuple(dyn.config)
        if dyn.converged and key not in found:
            found[key] = FoundEquilibrium(dyn.config, int(costs(inst, dyn.config, mech).max()), s)
    return sorted(found.values(), key=lambda e: (-e.makespan, e.start))
