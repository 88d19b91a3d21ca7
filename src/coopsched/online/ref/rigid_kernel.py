"""The lockstep kernel of REF for rigid jobs (Skowron & Rzadca, Fig. 1 with Fig. 3's
``psi_sp``, extended to rigid jobs under a backfilling rule; docs/conventions.md, rigid
jobs), in numba, imported on first use by :func:`coopsched.online.ref.rigid.ref_rigid_schedule`.

Every coalition ``C`` is simulated at once, event time by event time, exactly as the
compiled engine (:mod:`coopsched.online.compiled`, policy ``REFC``) simulates
it alone:

* at each event time ``t`` of ``C`` (a release by one of its members, too wide or not, or a
  completion in its schedule): completions, then releases (a job wider than ``C``'s
  machines never queued), then pinned jobs (the oldest waiting one while it fits), then
  the rule (none, first-fit, EASY with its reservation from requested times, backfilling
  from the other members' queue heads, ``easy``, or from every queued job, ``easy-queue``:
  :func:`_candidates`);
* REF's pick: the member with the largest ``phi_u(C) - psi_u``, ranked once at ``t`` (at the
  first pick with two candidates or more) and kept for every pick at ``t``, ties to the
  older queue head at the time of the ranking.

Only the ranking differs in how it is computed. ``phi_u(C)`` depends on the values at
``t`` of ``C``'s subcoalitions, which depend only on their schedules before ``t`` (a job
started at ``t`` adds nothing at ``t``): in lockstep they are all at hand, as records
``co[S, CO_VALUE .. CO_LAST]`` brought to ``t`` in closed form. At an event time where
ranking by Eq. (1) (``2^(|C|-1)`` terms per member) would cost more over the coalitions
that may rank, the Hart and Mas-Colell potential of every coalition is computed once in
float64 (:func:`~coopsched.online.ref.kernel._float_potential`, ``k 2^k`` operations),
``phi_u(C) = P(C) - P(C - u)``, and the order is taken from it only when its proven error
bounds decide it (:func:`~coopsched.online.ref.kernel._certified_ranks`); every other
ranking is computed by Eq. (1) on the exact values in two int64 words
(:func:`_eq1_key`). The ranking, hence every schedule, is the exact one.

A coalition whose queued jobs fit its free machines all together starts them all
whatever the order, so it is not ranked; the per-organization EASY's reservation is
computed only when another member's queue head fits the free machines (else nothing could
backfill). Under ``easy-queue`` a later job may start before its organization's queue
head: such starts are kept in a set (:attr:`State.gaps`, with a count per coalition and
member, ``MEM_GAPS``) that the backfill's scan and the head's advance read, and the head
skips them. Completions are
kept in buckets, one per (job, start time) shared by every coalition that started the job
then, as in the sequential kernel (:mod:`coopsched.online.ref.kernel`); EASY's running
jobs of each coalition are a doubly linked list of its entries (with their expected end
``start + requested`` and processors) in order of expected end, but a start appends its
entry (marking the list out of order if it ends earlier than the last) and the next
reservation sorts the list (reservations are far fewer than starts and completions, and
a blocked coalition reserves again and again with its list in order). Entries and buckets
come from pools: before a coalition's starts at an event time the kernel checks that the
entries' pool would stay at most 3/4 full with one more entry for each job it could start
(a start takes a free machine and a queued job), and that the buckets' would hold as
many more; when they would not, it returns, the driver enlarges them, and the
kernel resumes at the same point (its scalars are kept in ``State.sc``). Entries are taken
in address order (a cursor that skips live slots, as in the sequential kernel), so those
made together lie together.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numba
import numpy as np

from ..compiled import _BIG, EASY, EASY_QUEUE, FIRST_FIT, FIRST_FIT_QUEUE, NONE  # noqa: F401
from ..kernels import JIT_OPTIONS, _pop2, _push2
from .kernel import (
    CO_RUNNING,
    _advance_coalition,
    _advance_member,
    _certified_ranks,
    _float_potential,
    _mirror,
    _record_value,
    _values_at,
)

PSI_SP = 0  # the sequential kernel's utility code of psi_sp (rigid REF values only it)

_MASK = (1 << 32) - 1

# co[C, .]: one record per coalition; fields 0-3 (value, work, running processors, time of
# the last update) are those of the sequential kernel, copied for _float_potential into
# State.fco by kernel._mirror at the end of each event time
CO_FREE = 4  # free machines
CO_WAITING = 5  # queued jobs
CO_WAITW = 6  # their processors
CO_WMASK = 7  # members with queued jobs
CO_PINNED = 8  # queued pinned jobs
CO_VISIT = 9  # the event number of the last visit (-1: never)
CO_EFIRST = 10  # EASY: the first and last entries of the running jobs
CO_ELAST = 11
CO_EDIRTY = 12  # EASY: 1 when they may be out of order of expected end
CO_FIELDS = 13
# mem[C, u, .]: one record per (coalition, member)
MEM_PSI = 0  # psi_u as of MEM_LAST
MEM_WORK = 1  # u's processed work (processor-seconds) by MEM_LAST
MEM_LAST = 2
MEM_RUNNING = 3  # u's processors in use in C
MEM_HEAD = 4  # index in org_jobs of u's next job that fits C (the queue head when queued)
MEM_QUEUED = 5  # u's queued jobs in C
MEM_FIELDS = 6
# easy-queue only: u's jobs that started in C beyond its queue head (backfilled later jobs,
# each in State.gaps until the head passes it)
MEM_GAPS = 6
MEM_FIELDS_QUEUE = 7
# ent[e, .]: an entry, a coalition running a job (listed by its completion bucket), with
# EASY's fields when the rule is EASY (its coalition's list of running jobs)
E_COAL = 0  # the coalition (-1: a free slot)
E_LINK = 1  # the next entry of the bucket
E_END = 2  # EASY: start + requested
E_Q = 3  # EASY: processors
E_PREV = 4  # EASY: the neighbours in the list
E_NEXT = 5
E_FIELDS = 2  # without EASY
E_FIELDS_EASY = 6  # with EASY
# bkt[b, .]: a completion bucket, one per (job, start event)
B_POS = 0  # the job (FIFO position)
B_HEAD = 1  # its first entry
B_LINK = 2  # the next free bucket
# sc[.]: the kernel's scalars, kept to resume after the pools are enlarged
SC_I = 0  # the next release
SC_EV = 1  # the event number
SC_CP = 2  # the next checkpoint
SC_ECUR = 3  # the entries' cursor (the next slot to try)
SC_BFREE = 4  # the first free bucket
SC_BN = 5  # completion heap size
SC_LIVE = 6  # live entries
SC_T = 7  # the event time being processed
SC_NVIS = 8  # coalitions visited at it
SC_RESUME = 9  # 1: resume at the starts of the event time SC_T
SC_NEED = 10  # the entries the pool must hold to resume
SC_BLIVE = 11  # live buckets
SC_BNEED = 12  # the buckets the pool must hold to resume
SC_AT = 13  # the visited coalition to resume at
SC_USE_POT = 14  # whether the event time ranks from the potential
SC_FIELDS = 15
# stats[.]
ST_EVENTS = 0  # event times processed
ST_VISITS = 1  # coalition visits
ST_READY = 2  # visits with free machines and queued jobs
ST_RANKINGS = 3  # rankings computed
ST_POTENTIAL = 4  # event times that computed the float potential
ST_UNPROVEN = 5  # rankings the float potential did not prove (taken from Eq. (1))
ST_STARTS = 6  # jobs started over all coalitions
ST_PEAK = 7  # the most entries (coalition, running job) live at once
ST_GROWN = 8  # times the pools were enlarged
ST_FINAL = 9  # 1: the values at the grand coalition's last completion were taken
ST_T_END = 10  # that time
ST_CPS = 11  # checkpoints evaluated (the first ones; the others lie after every event)
ST_EQ1_TERMS = 12  # terms of Eq. (1) summed
ST_RESERVATIONS = 13  # EASY's reservations
ST_LATER = 14  # easy-queue: jobs started beyond their organization's queue head
ST_SLOTS = 15


class Run(NamedTuple):
    """The run's scalars."""

    k: int  # organizations
    bf: int  # the rule: NONE, FIRST_FIT, EASY
    T: Any  # the horizon (np.int64; _BIG without one)
    has_T: bool
    L: Any  # lcm(1..k), np.int64 (Eq. (1)'s scale)
    eta: float  # the float potential's error bound (driver.float_potential_error)
    cost_fpot: int  # the float potential's cost, in additions
    fblocks: bool  # the potential's lattice in blocks of 16
    last_fit: int  # one past the last job (FIFO order) that fits the platform
    mode: int  # 0: the cheaper of Eq. (1) and the potential; 1 Eq. (1) only; 2 potential
    t0: Any  # the first release (np.int64): the float copies' times are relative to it


class Jobs(NamedTuple):
    """The jobs in FIFO order, and each organization's jobs (all widths)."""

    rel: np.ndarray
    owner: np.ndarray
    size: np.ndarray
    width: np.ndarray
    req: np.ndarray  # requested times (EASY)
    pinned: np.ndarray  # bool
    org_ptr: np.ndarray  # org_jobs[org_ptr[u]:org_ptr[u + 1]]: u's jobs, FIFO positions
    org_jobs: np.ndarray


class Coalitions(NamedTuple):
    """The coalitions: sizes, machines, simulated stand-ins, who sees whose releases."""

    pc: np.ndarray  # popcounts
    mC: np.ndarray  # machines
    canon: np.ndarray  # stand-ins (driver.canonical_coalitions)
    canon_list: np.ndarray  # the simulated coalitions, increasing
    rel_ptr: np.ndarray  # rel_idx[rel_ptr[u]:rel_ptr[u + 1]]: simulated, hold u, have machines
    rel_idx: np.ndarray
    omega: np.ndarray  # Eq. (1)'s integer weights (shapley.shapley_weights(k))
    rinv: np.ndarray  # 1 / |D| by |D| (kernel.reciprocals)


class State(NamedTuple):
    """The records, the pools, the buffers of the values and the potential, the scalars."""

    co: np.ndarray  # co[C, CO_*]
    mem: np.ndarray  # mem[C, u, MEM_*]
    ent: np.ndarray  # ent[e, E_*]
    bkt: np.ndarray  # bkt[b, B_*]
    bh: np.ndarray  # the completion heap: (end, bucket) in two rows (kernels._push2)
    bstamp: np.ndarray  # bstamp[pos]: the event at which the job last started somewhere
    bid: np.ndarray  # and its bucket then
    vis: np.ndarray  # the coalitions visited at the current event time
    pf: np.ndarray  # P(D) in float64
    fco: np.ndarray  # fco[FL_*, C]: float copies of co's value fields (kernel._mirror)
    vv: np.ndarray  # exact values at the current event (Eq. (1))
    vstamp: np.ndarray  # the event at which vv[S] was computed
    sc: np.ndarray  # sc[SC_*]
    # easy-queue: the jobs started beyond their organization's queue head, keyed ``C * n +
    # x`` (``x`` the job's index in ``Jobs.org_jobs``; the value is unused), removed when
    # the head passes them (:func:`_start`)
    gaps: Any


class Outputs(NamedTuple):
    """What the run returns."""

    out_start: np.ndarray  # the grand coalition's starts (FIFO order)
    stats: np.ndarray  # stats[ST_*]
    cps: np.ndarray  # checkpoint times the kernel evaluates
    cp_vals: np.ndarray  # cp_vals[i, S]: v(S) at cps[i]
    final_v: np.ndarray  # without a horizon: v(S) at the grand coalition's last completion


def gap_set() -> Any:
    """An empty :attr:`State.gaps` (a numba typed dict of int64)."""
    return numba.typed.Dict.empty(numba.types.int64, numba.types.int64)


@numba.njit(**JIT_OPTIONS)
def _easy_append(co, C, e, ent):
    """Entry ``e`` at the end of ``C``'s running jobs, which are then marked out of order
    unless its expected end is the latest (the next reservation sorts them: reservations
    are far fewer than starts)."""
    last = co[C, CO_ELAST]
    ent[e, E_PREV] = last
    ent[e, E_NEXT] = -1
    if last < 0:
        co[C, CO_EFIRST] = e
    else:
        ent[last, E_NEXT] = e
        if ent[last, E_END] > ent[e, E_END]:
            co[C, CO_EDIRTY] = 1
    co[C, CO_ELAST] = e


@numba.njit(**JIT_OPTIONS)
def _easy_sort(co, C, ent, ids, ends):
    """``C``'s running jobs relinked in order of expected end (a removal keeps it)."""
    r = 0
    x = co[C, CO_EFIRST]
    while x >= 0:
        ids[r] = x
        ends[r] = ent[x, E_END]
        r += 1
        x = ent[x, E_NEXT]
    order = np.argsort(ends[:r], kind="mergesort")
    prev = -1
    for y in range(r):
        x = ids[order[y]]
        ent[x, E_PREV] = prev
        if prev < 0:
            co[C, CO_EFIRST] = x
        else:
            ent[prev, E_NEXT] = x
        prev = x
    if prev >= 0:
        ent[prev, E_NEXT] = -1
    else:
        co[C, CO_EFIRST] = -1
    co[C, CO_ELAST] = prev
    co[C, CO_EDIRTY] = 0


@numba.njit(**JIT_OPTIONS)
def _easy_unlink(co, C, e, ent):
    """Entry ``e`` out of ``C``'s running jobs."""
    p = ent[e, E_PREV]
    nx = ent[e, E_NEXT]
    if p < 0:
        co[C, CO_EFIRST] = nx
    else:
        ent[p, E_NEXT] = nx
    if nx < 0:
        co[C, CO_ELAST] = p
    else:
        ent[nx, E_PREV] = p


@numba.njit(**JIT_OPTIONS)
def _reservation(co, C, ent, free, q, t, ids, ends):
    """EASY's shadow time and extra machines for a job of ``q`` processors in ``C``, as
    ``coopsched.online.compiled._reservation`` computes them: walking the running
    jobs by expected end (sorted first if out of order; a job past its requested time is
    expected at ``t + 1``; equal ends together) up to the first at which ``q`` machines
    are free."""
    if co[C, CO_EDIRTY]:
        _easy_sort(co, C, ent, ids, ends)
    avail = free
    x = co[C, CO_EFIRST]
    while x >= 0:
        e = max(ent[x, E_END], t + 1)
        while x >= 0 and max(ent[x, E_END], t + 1) == e:
            avail += ent[x, E_Q]
            x = ent[x, E_NEXT]
        if avail >= q:
            return e, avail - q
    return _BIG, np.int64(0)


@numba.njit(**JIT_OPTIONS)
def _subset_values(C, t, ev, co, canon, vv, vstamp):
    """``vv[S]``: the exact value at ``t`` of every subset ``S`` of ``C`` (its stand-in's),
    each computed once per event."""
    S = C
    while True:
        if vstamp[S] != ev:
            vstamp[S] = ev
            vv[S] = _record_value(PSI_SP, co, canon[S], t)
        if S == 0:
            break
        S = (S - 1) & C


@numba.njit(**JIT_OPTIONS)
def _eq1_key(C, c, u, vv, omega, pc, L, psi):
    """``L (phi_u(C) - psi_u)`` by Eq. (1) (``L phi_u = sum_{S <= C-u} omega[c, |S|]
    (v(S+u) - v(S))``, integer weights summing to ``L``), exactly, as two int64 words
    ``(h, l)``, ``0 <= l < 2^32``, compared lexicographically. Values lie in ``[0,
    2^62)``, so a marginal contribution fits a word; split into words it is summed
    without overflow (a high word stays below ``L 2^30``, a low one below ``L 2^32``)."""
    ub = 1 << u
    rest = C ^ ub
    s = rest
    xh = np.int64(0)
    xl = np.int64(0)
    while True:
        wgt = omega[c, pc[s]]
        dv = vv[s | ub] - vv[s]
        xh += wgt * (dv >> 32)
        xl += wgt * (dv & _MASK)
        if s == 0:
            break
        s = (s - 1) & rest
    xh -= L * (psi >> 32)
    xl -= L * (psi & _MASK)
    xh += xl >> 32
    return xh, xl & _MASK


@numba.njit(**JIT_OPTIONS)
def _rank_members(run, jobs, coal, state, C, t, ev, use_pot, flags, scr, rank, stats):
    """REF's ranking of ``C``'s members with queued jobs at ``t`` into ``rank``; returns
    their number. By ``phi_u(C) - psi_u`` (Eq. (1), or the Hart and Mas-Colell potential
    ``phi_u(C) = P(C) - P(C - u)`` when ``use_pot`` and its float error bounds prove the
    order), largest first, ties to the older queue head."""
    k = run.k
    co = state.co
    mem = state.mem
    org_jobs = jobs.org_jobs
    wl, hd, ordr, psi_f, lo, hi, cls, ordx, rk, kh, kl = scr
    c = coal.pc[C]
    nw = 0
    rest = co[C, CO_WMASK]
    while rest != 0:  # the members with queued jobs, lowest index first
        w = rest & -rest
        rest ^= w
        u = 0
        while (w >> u) != 1:
            u += 1
        _advance_member(mem, C, u, t)  # records mem[C, u]
        wl[nw] = u
        hd[nw] = org_jobs[mem[C, u, MEM_HEAD]]
        nw += 1
    stats[ST_RANKINGS] += 1
    proven = False
    if use_pot:
        if flags[0] != ev:  # the potential of every coalition, once per event time
            flags[0] = ev
            stats[ST_POTENTIAL] += 1
            # the float copies are refreshed at the end of each event time: one that
            # changed at t still gives its exact value at t (the change acts after t)
            _float_potential(
                k,
                t,
                0,
                state.fco,
                run.t0,
                coal.canon_list.shape[0] < (1 << k) - 1,
                coal.canon,
                coal.canon_list,
                coal.rinv,
                state.pf,
                run.fblocks,
            )
        for x in range(nw):
            psi_f[x] = float(mem[C, wl[x], MEM_PSI])
        proven = _certified_ranks(
            state.pf, C, c, wl, nw, psi_f, run.eta, 0, lo, hi, cls, ordx, rk, 0
        )
        if proven:
            for x in range(nw):
                kh[x] = rk[x]
                kl[x] = 0
        else:
            stats[ST_UNPROVEN] += 1
    if not proven:
        _subset_values(C, t, ev, co, coal.canon, state.vv, state.vstamp)
        stats[ST_EQ1_TERMS] += nw << (c - 1)
        for x in range(nw):
            kh[x], kl[x] = _eq1_key(
                C, c, wl[x], state.vv, coal.omega, coal.pc, run.L, mem[C, wl[x], MEM_PSI]
            )
    for x in range(nw):  # insertion sort: larger key first, then the older queue head
        y = x
        while y > 0:
            z = ordr[y - 1]
            if kh[z] > kh[x] or (
                kh[z] == kh[x] and (kl[z] > kl[x] or (kl[z] == kl[x] and hd[z] < hd[x]))
            ):
                break
            ordr[y] = z
            y -= 1
        ordr[y] = x
    for y in range(nw):
        rank[y] = wl[ordr[y]]
    return nw


@numba.njit(**JIT_OPTIONS)
def _visit(co, C, ev, vis, nvis):
    """``C`` on the list of coalitions visited at event ``ev`` (once); the list's length."""
    if co[C, CO_VISIT] != ev:
        co[C, CO_VISIT] = ev
        vis[nvis] = C
        nvis += 1
    return nvis


@numba.njit(**JIT_OPTIONS)
def _complete(e, pos, t, ev, bf, jobs, co, mem, ent, vis, nvis):
    """Job ``pos`` completes at ``t`` in every coalition of the bucket's entries from
    ``e``: its processors are freed there (the values brought to ``t`` first), the entries
    freed, the coalitions visited. Returns the visited list's length and the number of
    entries freed."""
    u = jobs.owner[pos]
    q = jobs.width[pos]
    freed = 0
    while e >= 0:
        C = ent[e, E_COAL]
        nx = ent[e, E_LINK]
        _advance_coalition(co, C, t)
        _advance_member(mem, C, u, t)  # records mem[C, u]
        mem[C, u, MEM_RUNNING] -= q
        co[C, CO_RUNNING] -= q
        co[C, CO_FREE] += q
        if bf in (EASY, EASY_QUEUE):
            _easy_unlink(co, C, e, ent)
        ent[e, E_COAL] = -1
        freed += 1
        nvis = _visit(co, C, ev, vis, nvis)
        e = nx
    return nvis, freed


@numba.njit(**JIT_OPTIONS)
def _release(i, ev, jobs, coal, co, mem, vis, nvis):
    """Job ``i``'s release: queued in every simulated coalition holding its owner whose
    machines it fits; every such coalition with free machines and queued jobs is visited
    (it decides anew at this time, a release too wide for it included: its ranking
    changes with the time). Returns the visited list's length."""
    u = jobs.owner[i]
    q = jobs.width[i]
    pin = jobs.pinned[i]
    ub = 1 << u
    mC = coal.mC
    rel_idx = coal.rel_idx
    for y in range(coal.rel_ptr[u], coal.rel_ptr[u + 1]):
        C = rel_idx[y]
        if q <= mC[C]:
            mem[C, u, MEM_QUEUED] += 1
            co[C, CO_WAITING] += 1
            co[C, CO_WAITW] += q
            co[C, CO_WMASK] |= ub
            if pin:
                co[C, CO_PINNED] += 1
        if co[C, CO_FREE] > 0 and co[C, CO_WAITING] > 0:
            nvis = _visit(co, C, ev, vis, nvis)
    return nvis


@numba.njit(**JIT_OPTIONS)
def _started_beyond_head(C, u, x, n, mem, gaps):
    """easy-queue: whether ``u``'s job at ``org_jobs[x]``, at or beyond its queue head in
    ``C``, has started there (a backfilled later job)."""
    return mem[C, u, MEM_GAPS] > 0 and C * n + x in gaps


#: What a step shows the rule (:func:`_candidates`): every queue head, the heads that fit
#: (first-fit), EASY's backfill from the queue heads (``easy``) or from every queued job
#: (``easy-queue``).
SHOW_ALL, SHOW_FITS, SHOW_HEADS, SHOW_QUEUE = 0, 1, 2, 3


@numba.njit(**JIT_OPTIONS)
def _candidates(C, show, t, jobs, co, mem, gaps, bitpos, cand, reserved, shadow, extra):
    """The members whose candidate this step shows (a bitmask), how many, and the one whose
    candidate is the oldest; ``cand[x]`` is set to the index in ``org_jobs`` of member
    ``x``'s candidate. ``show`` (``SHOW_*``): every member with a queued job, its queue
    head; under first-fit those whose head fits the free machines; in EASY's backfill,
    beside the ``reserved`` job, a job that fits the free machines now and ends by the
    shadow time or uses at most the ``extra`` machines: each member's queue head
    (``easy``), or its oldest such queued job (``easy-queue``, as the compiled engine's
    ``_candidates_queue``: scanned forward from ``cand[x]``, where it was, as a job stops
    being a candidate only when the free or extra machines fall)."""
    org_jobs = jobs.org_jobs
    width = jobs.width
    rel = jobs.rel
    req = jobs.req
    n = org_jobs.shape[0]
    nfree = co[C, CO_FREE]
    shown = 0
    ncand = 0
    first = -1
    fh = np.int64(0)
    rest = co[C, CO_WMASK]
    while rest != 0:
        w = rest & -rest
        rest ^= w
        x = bitpos[w % 37]
        i = mem[C, x, MEM_HEAD]
        if show == SHOW_QUEUE:
            i = max(cand[x], i)  # the jobs before the head have started
            end = jobs.org_ptr[x + 1]
            ok = False
            while i < end and rel[org_jobs[i]] <= t:
                h = org_jobs[i]
                if (
                    width[h] <= nfree
                    and h != reserved
                    and (t + req[h] <= shadow or width[h] <= extra)
                    and not _started_beyond_head(C, x, i, n, mem, gaps)
                ):
                    ok = True
                    break
                i += 1
        else:
            h = org_jobs[i]
            if show == SHOW_HEADS:
                ok = (
                    h != reserved
                    and width[h] <= nfree
                    and (t + req[h] <= shadow or width[h] <= extra)
                )
            elif show == SHOW_FITS:
                ok = width[h] <= nfree
            else:
                ok = True
        cand[x] = i
        if ok:
            shown |= w
            ncand += 1
            h = org_jobs[i]
            if first < 0 or h < fh:
                first = x
                fh = h
    return shown, ncand, first


@numba.njit(**JIT_OPTIONS)
def _oldest_pinned(C, jobs, co, mem, bitpos):
    """The oldest queued pinned job of ``C`` (pinned jobs head their queues)."""
    pos = -1
    rest = co[C, CO_WMASK]
    while rest != 0:
        w = rest & -rest
        rest ^= w
        h = jobs.org_jobs[mem[C, bitpos[w % 37], MEM_HEAD]]
        if jobs.pinned[h] and (pos < 0 or h < pos):
            pos = h
    return pos


@numba.njit(**JIT_OPTIONS)
def _someone_else_fits(C, u, jobs, co, mem, bitpos):
    """Whether a member of ``C`` other than ``u`` has a queue head that fits the free
    machines (else EASY's backfill can start nothing, and the reservation is not needed)."""
    nfree = co[C, CO_FREE]
    rest = co[C, CO_WMASK] & ~(1 << u)
    while rest != 0:
        w = rest & -rest
        rest ^= w
        if jobs.width[jobs.org_jobs[mem[C, bitpos[w % 37], MEM_HEAD]]] <= nfree:
            return True
    return False


@numba.njit(**JIT_OPTIONS)
def _start(C, x, t, mc, jobs, co, mem, gaps, whole):
    """Job ``pos = org_jobs[x]`` starts at ``t`` in ``C`` (``mc`` machines): out of its
    owner's queue, its processors in use. The queue head's start moves the head to the
    owner's next job that fits ``C`` and (``whole``: under easy-queue) has not started
    there; a later job's (easy-queue's backfill) is kept in ``gaps`` until the head passes
    it. Returns whether the job was such a later one."""
    width = jobs.width
    org_jobs = jobs.org_jobs
    pos = org_jobs[x]
    u = jobs.owner[pos]
    q = width[pos]
    n = org_jobs.shape[0]
    hx = mem[C, u, MEM_HEAD]
    later = x != hx
    if not later:
        hx += 1
        end = jobs.org_ptr[u + 1]
        while hx < end:
            if width[org_jobs[hx]] > mc:
                hx += 1  # jobs too wide for C are not in its queue
            elif whole and _started_beyond_head(C, u, hx, n, mem, gaps):
                del gaps[C * n + hx]
                mem[C, u, MEM_GAPS] -= 1
                hx += 1
            else:
                break
        mem[C, u, MEM_HEAD] = hx
    else:
        gaps[C * n + x] = np.int64(t)
        mem[C, u, MEM_GAPS] += 1
    mem[C, u, MEM_QUEUED] -= 1
    if mem[C, u, MEM_QUEUED] == 0:
        co[C, CO_WMASK] ^= 1 << u
    co[C, CO_WAITING] -= 1
    co[C, CO_WAITW] -= q
    if jobs.pinned[pos]:
        co[C, CO_PINNED] -= 1
    _advance_member(mem, C, u, t)  # records mem[C, u]
    mem[C, u, MEM_RUNNING] += q
    _advance_coalition(co, C, t)
    co[C, CO_RUNNING] += q
    co[C, CO_FREE] -= q
    return later


@numba.njit(**JIT_OPTIONS)
def _rigid_kernel(run, jobs, coal, state, out):
    """Every coalition's REF schedule in lockstep (module docstring), from the scalars in
    ``state.sc`` (a fresh run, or one resumed after the pools were enlarged)."""
    k = run.k
    bf = run.bf
    T = run.T
    rel = jobs.rel
    size = jobs.size
    width = jobs.width
    req = jobs.req
    org_jobs = jobs.org_jobs
    pc = coal.pc
    mC = coal.mC
    canon = coal.canon
    co = state.co
    mem = state.mem
    ent = state.ent
    bkt = state.bkt
    bh = state.bh
    bstamp = state.bstamp
    bid = state.bid
    vis = state.vis
    sc = state.sc
    out_start = out.out_start
    stats = out.stats
    cps = out.cps
    cp_vals = out.cp_vals
    NC = 1 << k
    G = NC - 1
    n = rel.shape[0]
    ecap = ent.shape[0]
    i = sc[SC_I]
    ev = sc[SC_EV]
    cp = sc[SC_CP]
    ecur = sc[SC_ECUR]
    bfree = sc[SC_BFREE]
    bn = sc[SC_BN]
    live = sc[SC_LIVE]
    blive = sc[SC_BLIVE]
    bcap = bkt.shape[0]
    resume = sc[SC_RESUME] == 1
    bitpos = np.zeros(37, np.int64)  # bitpos[2^u mod 37] = u (distinct residues for u < 36)
    for u in range(k):
        bitpos[(1 << u) % 37] = u
    flags = np.full(1, -1, np.int64)  # the event at which the potential was computed
    rank = np.zeros(k, np.int64)
    scr = (
        np.zeros(k, np.int64),  # members ranked
        np.zeros(k, np.int64),  # their queue heads
        np.zeros(k, np.int64),  # their order
        np.zeros(k),  # the float route's buffers (_certified_ranks)
        np.zeros(k),
        np.zeros(k),
        np.zeros(k, np.int64),
        np.zeros(k, np.int64),
        np.zeros(k, np.int8),
        np.zeros(k, np.int64),  # keys, high and low words
        np.zeros(k, np.int64),
    )
    ncp = cps.shape[0]
    r_ids = np.zeros(max(n, 1), np.int64)  # a coalition's running jobs (at most n), to sort
    r_end = np.zeros(max(n, 1), np.int64)
    easy = bf in (EASY, EASY_QUEUE)  # a reservation, from requested times
    whole = bf in (EASY_QUEUE, FIRST_FIT_QUEUE)  # candidates from the whole queue
    gaps = state.gaps
    cand = np.zeros(k, np.int64)  # easy-queue's backfill: each member's oldest candidate
    while True:
        if resume:  # the coalition of the event time where the pools ran short
            resume = False
            t = sc[SC_T]
            nvis = sc[SC_NVIS]
            a0 = sc[SC_AT]
            use_pot = sc[SC_USE_POT] == 1
        else:
            has = False
            t = np.int64(0)
            if i < n:
                t = rel[i]
                has = True
            if bn > 0 and (not has or bh[0, 0] < t):
                t = bh[0, 0]
                has = True
            # checkpoints up to this event: every value in closed form (jobs starting at t
            # add nothing at t)
            while has and cp < ncp and cps[cp] <= t:
                _values_at(PSI_SP, co, canon, cps[cp], cp_vals[cp])
                cp += 1
                stats[ST_CPS] = cp
            if not has or t >= _BIG or t >= T:
                break
            ev += 1
            stats[ST_EVENTS] += 1
            nvis = 0
            # completions at t: each frees its processors in every coalition that ran it
            while bn > 0 and bh[0, 0] == t:
                b = bh[1, 0]
                bn = _pop2(bh, 0, bn)
                nvis, freed = _complete(
                    bkt[b, B_HEAD], bkt[b, B_POS], t, ev, bf, jobs, co, mem, ent, vis, nvis
                )
                live -= freed
                bkt[b, B_LINK] = bfree
                bfree = b
                blive -= 1
            # then releases
            while i < n and rel[i] == t:
                nvis = _release(i, ev, jobs, coal, co, mem, vis, nvis)
                i += 1
            stats[ST_VISITS] += nvis
            # the rankings' cost by Eq. (1) over the coalitions that may rank (two
            # members queued, more processors queued than free), against the potential's
            cost_eq1 = 0
            for a in range(nvis):
                C = vis[a]
                free = co[C, CO_FREE]
                wm = co[C, CO_WMASK]
                if free > 0 and wm & (wm - 1) != 0 and co[C, CO_WAITW] > free:
                    c = pc[C]
                    cost_eq1 += (3 << c) + pc[wm] * (1 << c)
            use_pot = run.mode == 2 or (run.mode == 0 and cost_eq1 > run.cost_fpot)
            a0 = 0
        for a in range(a0, nvis):
            C = vis[a]
            if co[C, CO_FREE] == 0 or co[C, CO_WAITING] == 0:
                continue
            # the starts C may make (each takes a free machine and a queued job), each
            # with an entry and perhaps a bucket: with too few, the driver enlarges the
            # pools (entries at most 3/4 full) and the kernel resumes here
            starts = min(co[C, CO_FREE], co[C, CO_WAITING])
            if 4 * (live + starts) > 3 * ecap or blive + starts > bcap:
                sc[SC_I] = i
                sc[SC_EV] = ev
                sc[SC_CP] = cp
                sc[SC_ECUR] = ecur
                sc[SC_BFREE] = bfree
                sc[SC_BN] = bn
                sc[SC_LIVE] = live
                sc[SC_T] = t
                sc[SC_NVIS] = nvis
                sc[SC_RESUME] = 1
                sc[SC_NEED] = live + starts
                sc[SC_BLIVE] = blive
                sc[SC_BNEED] = blive + starts
                sc[SC_AT] = a
                sc[SC_USE_POT] = use_pot
                return
            stats[ST_READY] += 1
            mc = mC[C]
            # all queued jobs fit at once: they all start, whatever the order
            allfit = co[C, CO_WAITW] <= co[C, CO_FREE]
            ranked = False
            nr = 0
            phase = 0  # 0 pinned, 1 the rule, 2 EASY's backfill, 3 done
            res_pos = -1
            shadow = np.int64(0)
            extra = np.int64(0)
            if bf == FIRST_FIT_QUEUE:  # the whole queue's scan without a reservation
                shadow = _BIG
                extra = _BIG
                cand[:] = 0  # each member's scan from its queue head
            while phase < 3:
                pos = -1
                x = -1  # pos = org_jobs[x]
                nfree = co[C, CO_FREE]
                if phase == 0:
                    if co[C, CO_PINNED] == 0:
                        phase = 1
                        continue
                    pos = _oldest_pinned(C, jobs, co, mem, bitpos)
                    if width[pos] > nfree:
                        phase = 1
                        continue
                    x = mem[C, jobs.owner[pos], MEM_HEAD]  # pinned jobs head their queues
                else:
                    if co[C, CO_WAITING] == 0 or nfree == 0:
                        break
                    show = SHOW_FITS if bf == FIRST_FIT else SHOW_ALL
                    if bf == FIRST_FIT_QUEUE or phase == 2:
                        show = SHOW_QUEUE if whole else SHOW_HEADS
                    shown, ncand, first = _candidates(
                        C, show, t, jobs, co, mem, gaps, bitpos, cand, res_pos, shadow, extra
                    )
                    if ncand == 0:
                        break
                    u = first
                    if ncand > 1 and not allfit:
                        if not ranked:  # one ranking per event time (the literal reading)
                            ranked = True
                            nr = _rank_members(
                                run, jobs, coal, state, C, t, ev, use_pot, flags, scr, rank, stats
                            )
                        for y in range(nr):  # the best ranked shown keeps receiving machines
                            if (shown >> rank[y]) & 1:
                                u = rank[y]
                                break
                    x = cand[
                        u
                    ]  # the pick's candidate (its queue head but in easy-queue's backfill)
                    pos = org_jobs[x]
                    if width[pos] > nfree:
                        if not easy or phase == 2:
                            break  # none: the pick does not fit, nothing more starts
                        # EASY: a reservation for it, which (per organization) matters only
                        # if another member's queue head fits now (else nothing can
                        # backfill); over the whole queue any other queued job may
                        if not whole and not _someone_else_fits(C, u, jobs, co, mem, bitpos):
                            break
                        res_pos = pos
                        stats[ST_RESERVATIONS] += 1
                        shadow, extra = _reservation(co, C, ent, nfree, width[pos], t, r_ids, r_end)
                        phase = 2
                        if whole:  # every member's scan from its queue head
                            rest = co[C, CO_WMASK]
                            while rest != 0:
                                w = rest & -rest
                                rest ^= w
                                y = bitpos[w % 37]
                                cand[y] = mem[C, y, MEM_HEAD]
                        continue
                    if phase == 2 and t + req[pos] > shadow:
                        extra -= width[pos]
                # start the job at pos in C, with an entry in its completion bucket
                if _start(C, x, t, mc, jobs, co, mem, gaps, whole):
                    stats[ST_LATER] += 1
                stats[ST_STARTS] += 1
                if C == G:
                    out_start[pos] = t
                if bstamp[pos] != ev:  # a new bucket: pos starts at t
                    b = bfree
                    bfree = bkt[b, B_LINK]
                    bkt[b, B_POS] = pos
                    bkt[b, B_HEAD] = -1
                    blive += 1
                    bstamp[pos] = ev
                    bid[pos] = b
                    bn = _push2(bh, 0, bn, min(t + size[pos], _BIG), b)
                else:
                    b = bid[pos]
                # the next free slot in address order: entries made together (one
                # bucket's, one coalition's) lie close together; the pool is at most 3/4
                # full (checked above), so few slots are skipped
                while ent[ecur, E_COAL] >= 0:
                    ecur = ecur + 1 if ecur + 1 < ecap else 0
                e = ecur
                ecur = ecur + 1 if ecur + 1 < ecap else 0
                ent[e, E_COAL] = C
                ent[e, E_LINK] = bkt[b, B_HEAD]
                bkt[b, B_HEAD] = e
                live += 1
                if live > stats[ST_PEAK]:
                    stats[ST_PEAK] = live
                if easy:
                    ent[e, E_END] = t + req[pos]
                    ent[e, E_Q] = width[pos]
                    _easy_append(co, C, e, ent)
        if run.mode != 1:  # the float copies of the records that changed at t
            for a in range(nvis):
                _mirror(co, state.fco, run.t0, vis[a])
        # without a horizon the values are taken at the grand coalition's last completion
        if (
            not run.has_T
            and stats[ST_FINAL] == 0
            and i >= run.last_fit
            and co[G, CO_RUNNING] == 0
            and co[G, CO_WAITING] == 0
        ):
            stats[ST_FINAL] = 1
            stats[ST_T_END] = t
            _values_at(PSI_SP, co, canon, t, out.final_v)
    sc[SC_RESUME] = 0
