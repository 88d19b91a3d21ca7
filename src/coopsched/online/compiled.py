"""The compiled (numba) engine for the built-in policies.

:func:`simulate` in :mod:`coopsched.online.engine` is the reference: an event loop in
Python that asks a :class:`~coopsched.online.engine.Policy` for every pick. For the
built-in policies (FIFO, ROUNDROBIN, the fair-share family, DIRECTCONTR and RAND's
grand coalition) this module runs the *same* event loop compiled, with each policy's
pick rule written out in the loop; ``simulate`` dispatches here for the policies that the
declared table :data:`coopsched.online.backends.COMPILED` lists (only those exact classes,
never a user subclass). The schedules are identical, start by start and machine by machine
(tests compare both paths with hypothesis):

* events, queues and machine choice as in the Python engine (docs/conventions.md §1): at ``t``
  completions first (in machine order), then releases (submission order), then greedy
  picks; the lowest-numbered free machine, or for DIRECTCONTR a uniformly random free
  machine drawn from the very stream Python's ``random.Random(seed)`` gives (the
  Mersenne Twister state is copied from it and advanced here, see :func:`randbelow`);
* pinned jobs (:attr:`Instance.pinned`, docs/conventions.md §5) first: while one waits and a
  machine is free, the oldest waiting pinned job starts without consulting the rule (pinned
  jobs head their organizations' queues, so they start in submission order);
* the pick rules, their exact integer comparisons and their ties (the organization whose
  oldest waiting job was submitted first; ROUNDROBIN cycles in the canonical order).

Integers are int64 here, so the inputs are checked first (:func:`int64_bounds`): event
times, heap keys, ``psi_sp`` and every product a rule compares must provably fit. When
they do not, ``simulate`` falls back to the Python path (exact integers) and says so in
``Schedule.info`` and with a :class:`CompiledFallback` warning.
"""

from __future__ import annotations

import random

import numba
import numpy as np

from ..workloads.instance import Instance
from .backends import (
    CURRFAIRSHARE,
    DIRECTCONTR,
    FAIRSHARE,
    FIFO,
    RAND,
    ROUNDROBIN,
    UTFAIRSHARE,
    rule_named,
)
from .kernels import JIT_OPTIONS
from .kernels import _heap_pop as _pop
from .kernels import _heap_push as _push
from .utilities import exact_total

_LIMIT = 2**62  # every int64 quantity must stay below this (margin for one addition)
_BIG = np.int64(2**62)


class CompiledFallback(UserWarning):
    """The compiled engine could not guarantee exact int64 arithmetic; Python ran instead."""


# ------------------------------------------------------------ Python's random stream


@numba.njit(**JIT_OPTIONS)
def _genrand(mt):
    """Next 32-bit output of MT19937 (Matsumoto & Nishimura 1998); ``mt[624]`` is the index."""
    if mt[624] >= 624:
        for kk in range(624):
            y = (mt[kk] & 0x80000000) | (mt[(kk + 1) % 624] & 0x7FFFFFFF)
            v = mt[(kk + 397) % 624] ^ (y >> 1)
            if y & 1:
                v ^= 0x9908B0DF
            mt[kk] = v
        mt[624] = 0
    y = mt[mt[624]]
    mt[624] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & 0xFFFFFFFF


@numba.njit(**JIT_OPTIONS)
def randbelow(mt, n):
    """A uniform integer in ``[0, n)`` for ``1 <= n < 2**32``, as ``random.Random.randrange(n)``.

    CPython draws ``getrandbits(b)`` with ``b = n.bit_length()`` (the top ``b`` bits of one
    32-bit output) until the draw is below ``n``; so does this function, on a copy of the
    generator's state (:func:`mt_state`).
    """
    b = 0
    x = n
    while x > 0:
        b += 1
        x >>= 1
    while True:
        r = _genrand(mt) >> (32 - b)
        if r < n:
            return r


def mt_state(seed) -> np.ndarray:
    """The Mersenne Twister state of ``random.Random(seed)``: 624 words and the index."""
    return np.array(random.Random(seed).getstate()[1], dtype=np.int64)


# ---------------------------------------------------------------------------- kernel


@numba.njit(**JIT_OPTIONS)
def _mul_lt(a, b, c, d):
    """``a * b < c * d`` exactly, for ``0 <= a, c < 2^62`` and ``0 <= b, d < 2^31``.

    The products may pass int64, so each is taken in two words: with ``a = ah 2^31 + al``,
    ``a b = (ah b + (al b >> 31)) 2^31 + (al b mod 2^31)``, where ``ah b < 2^62`` and
    ``al b < 2^62``; the pairs (high, low) compare lexicographically.
    """
    x = (a & 0x7FFFFFFF) * b
    y = (c & 0x7FFFFFFF) * d
    xh = (a >> 31) * b + (x >> 31)
    yh = (c >> 31) * d + (y >> 31)
    return xh < yh or (xh == yh and (x & 0x7FFFFFFF) < (y & 0x7FFFFFFF))


@numba.njit(**JIT_OPTIONS)
def _older(x, u, org_jobs, org_ptr, head):
    """Is ``x``'s oldest waiting job earlier in submission order than ``u``'s? (Jobs are
    numbered in that order here.) The tie rule of every pick (docs/conventions.md), called
    with the queue heads as the picks at the current time began (``rhead``), so one ranking
    holds for the whole event time."""
    return org_jobs[org_ptr[x] + head[x]] < org_jobs[org_ptr[u] + head[u]]


@numba.njit(**JIT_OPTIONS)
def _engine(
    rule,
    k,
    rel,
    owner,
    size,
    machines,
    member,
    machine_owner,
    free_init,
    pinned,
    order,
    T,
    randm,
    mt,
    c_ptr,
    c_time,
    c_delta,
    coeff,
    n_samples,
    out_start,
    out_machine,
    state,
):
    n = rel.shape[0]
    M = machine_owner.shape[0]
    MM = max(M, 1)
    sh = 0  # completion keys are (end << sh) | machine: ordered by (end, machine)
    while (1 << sh) < MM:
        sh += 1
    mask = (1 << sh) - 1
    # each organization's jobs in submission order (a counting sort)
    org_ptr = np.zeros(k + 1, np.int64)
    for j in range(n):
        org_ptr[owner[j] + 1] += 1
    for u in range(k):
        org_ptr[u + 1] += org_ptr[u]
    fill = org_ptr[:k].copy()
    org_jobs = np.empty(max(n, 1), np.int64)
    for j in range(n):
        org_jobs[fill[owner[j]]] = j
        fill[owner[j]] += 1
    track = rule in (FAIRSHARE, UTFAIRSHARE, DIRECTCONTR, RAND)
    free = np.zeros(MM, np.int64)
    nfree = free_init.shape[0]
    free[:nfree] = free_init  # sorted: a valid heap
    comp = np.zeros(MM, np.int64)
    ncomp = np.int64(0)  # not the literal 0: one specialization of _pop
    on_machine = np.full(MM, -1, np.int64)
    waiting = np.zeros(k, np.int64)
    running = np.zeros(k, np.int64)
    psi = np.zeros(k, np.int64)
    work = np.zeros(k, np.int64)
    tl = np.zeros(k, np.int64)
    head = np.zeros(k, np.int64)
    rhead = np.zeros(k, np.int64)  # the queue heads as the rule's picks at t began: ties
    ranked_at = np.int64(-1)
    key = np.zeros(k, np.int64)
    key_t = np.int64(-1)
    # DIRECTCONTR: contribution accumulators per machine owner (state rows 0-3)
    phi = state[0]
    wc = state[1]
    rc = state[2]
    tv = state[3]
    last = state[4, 0]  # ROUNDROBIN's last served position in ``order`` (canonical order)
    no = order.shape[0]
    # RAND: kept coalitions' values, advanced along their running counts' events
    nc = c_ptr.shape[0] - 1
    cV = np.zeros(max(nc, 1), np.int64)
    cW = np.zeros(max(nc, 1), np.int64)
    cR = np.zeros(max(nc, 1), np.int64)
    cT = np.zeros(max(nc, 1), np.int64)
    cpos = np.zeros(max(nc, 1), np.int64)
    for c in range(nc):
        cpos[c] = c_ptr[c]
    nxt = 0  # FIFO: the oldest unstarted job
    # pinned jobs start first, oldest first: in submission order, as they are released
    pin_pos = np.flatnonzero(pinned)
    pp = 0  # the next pinned job to start
    pin_waiting = 0
    i = 0
    total_waiting = 0
    while True:
        t_rel = rel[i] if i < n else _BIG
        t_comp = comp[0] >> sh if ncomp > 0 else _BIG
        t = min(t_rel, t_comp)
        if t >= _BIG or t >= T:
            break
        # completions at t, in machine order
        while ncomp > 0 and comp[0] >> sh == t:
            m = comp[0] & mask
            ncomp = _pop(comp, ncomp)
            pos = on_machine[m]
            u = owner[pos]
            if track:
                d = t - tl[u]
                if d:
                    r = running[u]
                    psi[u] += work[u] * d + r * (d * (d + 1) // 2)
                    work[u] += r * d
                    tl[u] = t
            running[u] -= 1
            on_machine[m] = -1
            if randm:
                free[nfree] = m
                nfree += 1
            else:
                nfree = _push(free, nfree, m)
            if rule == DIRECTCONTR:
                v = machine_owner[m]
                d = t - tv[v]
                if d:
                    r = rc[v]
                    phi[v] += wc[v] * d + r * (d * (d + 1) // 2)
                    wc[v] += r * d
                    tv[v] = t
                rc[v] -= 1
        # releases at t
        while i < n and rel[i] == t:
            waiting[owner[i]] += 1
            total_waiting += 1
            if pinned[i]:
                pin_waiting += 1
            i += 1
        # greedy picks at t (waiting pinned jobs first, without the rule)
        while nfree > 0 and total_waiting > 0:
            u = np.int64(-1)  # typed int64, not Literal[-1]: one _older for all
            if pin_waiting == 0 and ranked_at != t:  # the rule's first pick at t: tie order
                ranked_at = t
                rhead[:] = head
            if pin_waiting > 0:  # the oldest waiting pinned job heads its organization's queue
                u = owner[pin_pos[pp]]
                pp += 1
                pin_waiting -= 1
            elif rule == FIFO:  # FIFO: the oldest unstarted job (pinned ones may have gone ahead)
                while out_start[nxt] >= 0:
                    nxt += 1
                u = owner[nxt]
                nxt += 1
            elif rule == ROUNDROBIN:  # ROUNDROBIN, cyclically in the canonical order
                y = last
                for _ in range(no):
                    y = (y + 1) % no
                    if waiting[order[y]] > 0:
                        break
                last = y
                u = order[y]
            elif rule in (FAIRSHARE, UTFAIRSHARE, CURRFAIRSHARE):  # fair shares
                bn = np.int64(0)
                bd = np.int64(0)
                for x in range(k):
                    if waiting[x] == 0:
                        continue
                    if rule == CURRFAIRSHARE:
                        num = running[x]
                    else:
                        d = t - tl[x]
                        if rule == FAIRSHARE:
                            num = work[x] + running[x] * d
                        else:
                            num = psi[x] + work[x] * d + running[x] * (d * (d + 1) // 2)
                    dx = machines[x]
                    if u < 0:
                        u, bn, bd = x, num, dx
                        continue
                    # num / dx against bn / bd (a zero share is an infinite ratio); equal
                    # ratios go to the older queue head (docs/conventions.md, ties)
                    if dx == 0:
                        better = bd == 0 and _older(x, u, org_jobs, org_ptr, rhead)
                    elif bd == 0 or _mul_lt(num, bd, bn, dx):
                        better = True
                    else:
                        better = not _mul_lt(bn, dx, num, bd) and _older(
                            x, u, org_jobs, org_ptr, rhead
                        )
                    if better:
                        u, bn, bd = x, num, dx
            elif rule == DIRECTCONTR:  # DIRECTCONTR: phi - psi, fixed during one event
                if key_t != t:
                    key_t = t
                    for x in range(k):
                        if member[x]:
                            d = t - tv[x]
                            e = t - tl[x]
                            key[x] = (phi[x] + wc[x] * d + rc[x] * (d * (d + 1) // 2)) - (
                                psi[x] + work[x] * e + running[x] * (e * (e + 1) // 2)
                            )
                for x in range(k):
                    if waiting[x] > 0 and (
                        u < 0
                        or key[x] > key[u]
                        or (key[x] == key[u] and _older(x, u, org_jobs, org_ptr, rhead))
                    ):
                        u = x
            else:  # RAND: sampled phi - psi, fixed during one event
                ncand = 0
                first = np.int64(-1)
                for x in range(k):
                    if waiting[x] > 0:
                        ncand += 1
                        if first < 0 or _older(x, first, org_jobs, org_ptr, rhead):
                            first = x
                if ncand == 1 or nfree >= total_waiting:
                    u = first  # the pick cannot change any start time
                else:
                    if key_t != t:
                        key_t = t
                        for c in range(nc):
                            a = cpos[c]
                            end = c_ptr[c + 1]
                            while a < end and c_time[a] <= t:  # the coalition's events to t
                                x = c_time[a]
                                d = x - cT[c]
                                if d:
                                    cV[c] += cW[c] * d + cR[c] * (d * (d + 1) // 2)
                                    cW[c] += cR[c] * d
                                    cT[c] = x
                                cR[c] += c_delta[a]
                                a += 1
                            cpos[c] = a
                        for x in range(k):
                            acc = np.int64(0)
                            for c in range(nc):
                                if coeff[x, c] != 0:
                                    d = t - cT[c]
                                    val = cV[c] + cW[c] * d + cR[c] * (d * (d + 1) // 2)
                                    acc += coeff[x, c] * val
                            e = t - tl[x]
                            acc -= n_samples * (
                                psi[x] + work[x] * e + running[x] * (e * (e + 1) // 2)
                            )
                            key[x] = acc
                    for x in range(k):
                        if waiting[x] > 0 and (
                            u < 0
                            or key[x] > key[u]
                            or (key[x] == key[u] and _older(x, u, org_jobs, org_ptr, rhead))
                        ):
                            u = x
            pos = org_jobs[org_ptr[u] + head[u]]
            head[u] += 1
            waiting[u] -= 1
            total_waiting -= 1
            if randm:
                j = randbelow(mt, nfree)
                m = free[j]
                free[j] = free[nfree - 1]
                nfree -= 1
            else:
                m = free[0]
                nfree = _pop(free, nfree)
            if track:
                d = t - tl[u]
                if d:
                    r = running[u]
                    psi[u] += work[u] * d + r * (d * (d + 1) // 2)
                    work[u] += r * d
                    tl[u] = t
            running[u] += 1
            out_start[pos] = t
            out_machine[pos] = m
            on_machine[m] = pos
            ncomp = _push(comp, ncomp, ((t + size[pos]) << sh) | m)
            if rule == DIRECTCONTR:
                v = machine_owner[m]
                d = t - tv[v]
                if d:
                    r = rc[v]
                    phi[v] += wc[v] * d + r * (d * (d + 1) // 2)
                    wc[v] += r * d
                    tv[v] = t
                rc[v] += 1
    state[4, 0] = last
    state[4, 1] = key_t


# ---------------------------------------------------------------------------- driver


def int64_bounds(
    rule: str,
    release: np.ndarray,
    size: np.ndarray,
    total_machines: int,
    member_machines: int,
    machines_max: int,
    horizon: int | None,
    n_samples: int = 0,
    rigid: bool = False,
) -> str | None:
    """Why int64 could overflow for this run (``None``: it cannot).

    With rigid jobs (``rigid``) machines may idle while jobs wait (a job waits for enough
    machines), but some job always runs then, so every job ends by the last release plus
    the sum of the run times plus the longest job: that bounds ``t_end`` instead.

    Event times are at most ``t_end``: the horizon, or (greedy schedules) the last
    release plus the coalition's work divided by its ``Mc`` machines plus the longest
    job; a completion key is ``end * 2^b + machine`` with ``2^b < 2M``; any ``psi_sp`` (an organization's,
    a coalition's, DIRECTCONTR's contribution) is at most ``Mc * t_end * (t_end + 1) / 2``
    (Eq. 3 with every machine busy from 0); the fair shares compare products of those with
    machine counts (below ``2^31``) in two words (:func:`_mul_lt`), so the factors alone
    must fit; RAND sums ``N`` of them (``|coeff|`` sums to ``2N``, plus ``N * psi``).
    """
    if len(release) == 0 or member_machines == 0:
        return None  # nothing starts: no arithmetic beyond the releases
    M = max(int(total_machines), 1)
    Mc = int(member_machines)
    p_max = int(size.max())
    # greedy: a job waits only while all Mc machines are busy with other jobs, so every
    # job ends by r_max + W / Mc + p_max (W: the coalition's total work)
    t_end = int(release.max()) + -(-exact_total(size) // (1 if rigid else Mc)) + p_max
    if horizon is not None:
        t_end = min(t_end, int(horizon))
    if M >= 2**31:
        return f"{M} machines"
    if (t_end + p_max + 1) * 2 * M >= _LIMIT:  # keys (end << bits(M)) | machine
        return (
            f"completion times up to {t_end + p_max} s (last release {int(release.max())} s, "
            f"largest job {p_max} s) with {M} machines"
        )
    vmax = Mc * t_end * (t_end + 1) // 2
    need = {
        "fifo": 0,
        "roundrobin": 0,
        "currfairshare": M,
        "fairshare": M * t_end,
        "utfairshare": vmax,
        "directcontr": 2 * vmax,
        "rand": (3 * int(n_samples) + 1) * vmax,
    }[rule]
    if rule_named(rule).tracks_psi:
        need = max(need, vmax)
    if need >= _LIMIT:
        return f"psi_sp up to {vmax} (horizon {t_end}, {M} machines) needs more than int64"
    return None


def run_compiled(
    instance: Instance,
    rule: str,
    *,
    horizon: int | None,
    members: tuple[int, ...],
    seed=0,
    random_machines: bool = False,
    rand: dict | None = None,
    state: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | str:
    """Starts and machines (in instance job order) and the final state, or why not (a str).

    ``rand``: RAND's kept coalitions (``c_ptr``; ``c_time``, ``c_delta``: each coalition's
    running-count events, :func:`~coopsched.online.utilities.step_events`, below ``2^62``;
    ``coeff[k, nc]``, ``n_samples``). ``state``: a ``(5, k)`` int64 array
    of initial policy state (ROUNDROBIN's last organization in ``state[4, 0]``).
    """
    inst = instance
    k = inst.k
    is_member = np.zeros(k, dtype=bool)
    is_member[list(members)] = True
    order = inst.fifo_order()
    if len(members) < k:
        order = order[is_member[inst.org[order]]]
    rel = np.ascontiguousarray(inst.release[order])
    owner = np.ascontiguousarray(inst.org[order])
    size = np.ascontiguousarray(inst.size[order])
    machines = inst.machines
    n_samples = rand["n_samples"] if rand is not None else 0
    why = int64_bounds(
        rule,
        rel,
        size,
        inst.total_machines,
        int(machines[is_member].sum()),
        int(machines.max()) if k else 0,
        horizon,
        n_samples,
    )
    if why is not None:
        return why
    canon = inst.canonical_order()
    machine_owner = np.repeat(canon, machines[canon])  # inst.machine_owner()
    free_init = np.flatnonzero(is_member[machine_owner]).astype(np.int64)
    if inst.pinned is None:
        pinned = np.zeros(len(order), dtype=np.bool_)
    else:
        pinned = np.ascontiguousarray(inst.pinned[order], dtype=np.bool_)
    state = np.zeros((5, k + 2), dtype=np.int64) if state is None else state.copy()
    if state.shape[1] < k + 2:
        state = np.pad(state, ((0, 0), (0, k + 2 - state.shape[1])))
    mt = mt_state(seed) if random_machines else np.zeros(625, dtype=np.int64)
    if rand is None:
        rand = {
            "c_ptr": np.zeros(1, dtype=np.int64),
            "c_time": np.zeros(0, dtype=np.int64),
            # int32 as RAND's own deltas (Rand._delta_type): one specialization of the
            # kernel for every policy, not a second one compiled for the others
            "c_delta": np.zeros(0, dtype=np.int32),
            "coeff": np.zeros((k, 1), dtype=np.int64),
            "n_samples": 0,
        }
    out_start = np.full(len(order), -1, dtype=np.int64)
    out_machine = np.full(len(order), -1, dtype=np.int64)
    _engine(
        rule_named(rule).rule,
        k,
        rel,
        owner,
        size,
        machines,
        is_member,
        machine_owner,
        free_init,
        pinned,
        np.ascontiguousarray(canon[is_member[canon]]),
        # int64_bounds keeps every event below 2^62: a larger horizon is never reached
        np.int64(_BIG if horizon is None else min(int(horizon), int(_BIG))),
        bool(random_machines),
        mt,
        rand["c_ptr"],
        rand["c_time"],
        rand["c_delta"],
        rand["coeff"],
        np.int64(rand["n_samples"]),
        out_start,
        out_machine,
        state,
    )
    start = np.full(inst.n, -1, dtype=np.int64)
    machine = np.full(inst.n, -1, dtype=np.int64)
    start[order] = out_start
    machine[order] = out_machine
    return start, machine, state[:, :k]
