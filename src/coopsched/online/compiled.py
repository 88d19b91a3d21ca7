"""The compiled (numba) engine: the one event loop of :mod:`coopsched.online.core`, compiled, for
the policies of the declared table :data:`coopsched.online.backends.COMPILED`.

:func:`~coopsched.online.engine.simulate` is the only door to it: it runs a policy here when
the table gives its class a pick rule, with identical schedules (hypothesis compares both
loops, pinned jobs, coalitions, horizons and every backfilling rule included):

* the same events in the same order: completions (the machines freed at ``t`` back in machine
  order), releases (a rigid job wider than the coalition never queued), pinned jobs, then the
  backfilling rule as one step (:func:`_rule_step`: ``none``, ``first-fit``, EASY with its
  reservation from requested times, and the whole-queue ``easy-queue`` and
  ``first-fit-queue``);
* sequential jobs are the ``q = 1`` case, specialised at compile time: ``one`` is a literal
  flag (:func:`numba.literally`), so the machine identities every such schedule stores, and
  the greedy step that every rule reduces to there, cost nothing to the rigid case and the
  rigid bookkeeping nothing to them;
* the pick rules (:func:`_pick`) are functions over one state record (the job rows ``sj``
  and the organizations', machines' and run's rows ``st``, named module-level ints, and
  ``st``'s float view; RAND's and REF's kept coalitions in :class:`Sampled`: the layout is
  stated above :data:`J_REL`), with the rules' exact comparisons and ties
  (the older queue head as the picks at ``t`` began, fixed for the event time:
  :func:`_older`);
* machine identities for the schedule (one processor per job) and for DIRECTCONTR's random
  machines (the stream of Python's ``random.Random(seed)``, :func:`randbelow`), each machine
  credited to its owner;
* quantities that may pass 2^63 (DIRECTCONTR's utilities and contributions on a large
  platform, REF's keys inside a coalition, :data:`REFC`) kept modulo 2^64 beside float64
  copies and compared by :func:`_key_cmp`, exact by bounds proven before the run
  (:func:`_wraps_safely`, :func:`_ref_keys_wrap_safely`).

Integers are int64 here, so the inputs are checked first (:func:`int64_bounds`): event times,
``psi_sp`` and every product a rule compares must provably fit. When they do not,
``simulate`` falls back to the Python loop (exact integers) and says so in ``Schedule.info``
and with a :class:`CompiledFallback` warning.
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

import numba
import numpy as np

from ..workloads.instance import Instance
from .backends import (  # noqa: F401 (CompiledFallback: also imported from here)
    CURRFAIRSHARE,
    DIRECTCONTR,
    FAIRSHARE,
    FIFO,
    RAND,
    REFC,
    ROUNDROBIN,
    UTFAIRSHARE,
    CompiledFallback,
    rule_named,
)
from .kernels import (
    JIT_OPTIONS,
    NO_REFCOUNT_OPTIONS,
    _heap_pop,
    _heap_push,
    _pop2,
    _push2,
    group_order,
    sort_row,
)
from .utilities import exact_total

_LIMIT = 2**62  # every int64 quantity must stay below this (margin for one addition)
_BIG = np.int64(2**62)
NONE, FIRST_FIT, EASY, EASY_QUEUE, FIRST_FIT_QUEUE = 0, 1, 2, 3, 4
_BACKFILL = {
    "none": NONE,
    "first-fit": FIRST_FIT,
    "easy": EASY,
    "easy-queue": EASY_QUEUE,
    "first-fit-queue": FIRST_FIT_QUEUE,
}


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


# ------------------------------------------------------------------ the state record

# The engine's state is one record in two 2D int64 arrays whose rows are named by
# module-level ints (numba folds them as constants): ``sj``, one column per job (J_*), and
# ``st``, as wide as the widest of the others: per organization (O_*, k + 1 of them), per
# machine (M_*), the scalars (SC); with ``st``'s float64 view ``stf`` (the same memory: the
# float rows F_* are read through it), beside the jobs' own rows ``jb``, so that the loop,
# its steps and the pick rules pass few arrays.
#
# jb[J_*, j]: the coalition's jobs in submission order, as the instance gives them (read
# only: :class:`Prepared` holds the whole instance's, a coalition takes its columns)
J_REL = 0
J_OWNER = 1
J_SIZE = 2
J_WIDTH = 3  # processors
J_REQ = 4  # requested time (EASY)
J_PINNED = 5
J_ROWS = 6
# sj[J_*, j]: what the run writes per job (an array of its own, as long as the jobs: _record)
J_WIDE = 0  # wider than the coalition's machines: never queued
J_START = 1  # out: the start (-1: none)
J_MACHINE = 2  # out: the machine (one processor per job); the first of a chain (random)
J_QJOBS = 3  # the queues: u's jobs that fit are sj[J_QJOBS, st[O_QPTR, u]:st[O_QPTR, u + 1]]
J_HT = 4  # the completions' heap of (end, job) on rows J_HT, J_HT + 1 (kernels._push2)
J_EXE = 6  # EASY's running jobs by expected end: (start + requested, job, q), sorted
J_EXJ = 7
J_EXQ = 8
J_RECORD_ROWS = 9
# st's rows 0 and 1 (below O_QUEUED, the job rows being sj's): kernels.sort_row's scratch
ST_SCRATCH = 0
# st[O_*, u]: the organizations (st's rows below O_QUEUED: ST_SCRATCH, or unused)
O_QUEUED = 9  # queued jobs (those that fit the coalition)
O_SHOWN = 10  # what a restricting step shows the rule (first-fit, EASY's backfill)
O_HEAD = 11  # u's jobs started: its queue head is sj[J_QJOBS, qptr[u] + head]
O_RHEAD = 12  # the same as the rule's picks at t began: the tie order of t
O_RUNNING = 13  # processors in use
O_PSI = 14  # psi_sp as of O_TL (exact modulo 2^64 when wrapped)
O_WORK = 15  # processed work (processor-seconds) as of O_TL
O_TL = 16
O_KEY = 17  # DIRECTCONTR's, RAND's and REF's keys, as of SC_KEYT
O_PHI = 18  # DIRECTCONTR: the contribution accumulators of machine owner u
O_WC = 19
O_RC = 20
O_TV = 21
O_MACHINES = 22
O_MEMBER = 23
O_OWN = 24  # REFC: the weight of the coalition's own value in u's key
O_QPTR = 25  # the queues' bounds (k + 1 entries)
O_ORDER = 26  # the members in the canonical order (a list: ROUNDROBIN)
O_RANK = 27  # REFC: the ranking of t (a list)
O_ACT = 28  # the organizations with a queued job (a list, in no particular order)
O_APOS = 29  # u's position in it
O_BYOWN = 30  # scratch: one job's machines per owner
# stf[F_*, u]: float64 copies of the fields that may wrap (wrapped runs only; zero otherwise)
F_KEY = 31
F_PHI = 32
F_PSI = 33
# st[M_*, m]: the machines (one processor per job, or random machines)
M_OWNER = 34
M_FREE = 35  # free machine ids: a heap (lowest first, kernels._heap_push) or a list (random)
M_NEXT = 36  # a running job's machines as a chain (q > 1 and random machines)
M_MT = 37  # Python's random stream (625 words)
# st[SC, .]: the run's settings and the loop's scalars
SC = 38
# st[O_CAND, u]: in a step that restricts the candidates, the index in sj[J_QJOBS] of u's
# oldest candidate (its head but under easy-queue's backfill, where it may be a later job)
O_CAND = 39
ROWS = 40
SC_RULE = 0  # the pick rule (backends: FIFO ... REFC)
SC_BF = 1  # the backfilling rule: NONE, FIRST_FIT, EASY, EASY_QUEUE, FIRST_FIT_QUEUE
SC_TRACK = 2  # 1: psi_sp kept per organization (backends' tracks_psi)
SC_RANDM = 3  # 1: random machines (Python's stream, M_MT)
SC_WRAPPED = 4  # 1: utilities (and REF's keys) modulo 2^64 beside float64 copies
SC_NFREE = 5  # free machines
SC_NIDS = 6  # free machine ids in st[M_FREE] (a heap, or a list for random ones)
SC_NCOMP = 7  # completions on the heap
SC_TOTAL = 8  # queued jobs
SC_QW = 9  # their processors
SC_PIN = 10  # queued pinned jobs
SC_NACT = 11  # organizations with a queued job
SC_NEXP = 12  # EASY: running jobs listed by expected end
SC_NXT = 13  # FIFO: every job before this one (submission order) started or too wide
SC_KEYT = 14  # the time the keys were computed at (-1: never)
SC_LAST = 15  # ROUNDROBIN: the position in the canonical order last served
SC_NRANK = 16  # REFC: the organizations ranked at SC_KEYT
SC_RANKT = 17  # the time the tie order was fixed at (-1: never)
SC_NSAMPLES = 18  # RAND, REFC: N, the scale of phi in the keys
SC_NORDER = 19  # members in O_ORDER
SC_STEPT = 20  # the time of the rule step in progress (-1: none)
SC_PHASE = 21  # its phase: 0 pinned jobs, 1 the rule, 2 EASY's backfill
SC_RESU = 22  # EASY: the organization whose queue head holds the reservation
SC_SHADOW = 23  # and its shadow time
SC_EXTRA = 24  # and the extra machines left
SC_NJOBS = 25  # the coalition's jobs
SC_K = 26  # organizations
SC_FIELDS = 27
# cs[., c]: RAND's and REF's kept coalitions, advanced along their running counts
CS_V = 0
CS_W = 1
CS_R = 2
CS_T = 3
CS_POS = 4
CS_PTR = 5  # their events: c_time/c_delta[cs[CS_PTR, c]:cs[CS_PTR, c + 1]]
CS_FIELDS = 6


class Sampled(NamedTuple):
    """RAND's kept coalitions, or REF's subsets inside one coalition (:func:`_keys_sampled`)."""

    cs: np.ndarray  # cs[CS_*, c]
    coeff: np.ndarray  # coeff[u, c]: c's value in u's key
    c_time: np.ndarray  # the coalitions' running-count events
    c_delta: np.ndarray


# ------------------------------------------------------------------ arithmetic


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


#: Float differences at least this large decide a comparison by their sign alone.
_DECIDE = 2.0**61


@numba.njit(inline="always", **JIT_OPTIONS)
def _key_cmp(st, stf, x, u):
    """The sign of ``key[x] - key[u]``, exactly: keys are exact modulo 2^64 (int64 that may
    wrap) with float64 copies whose error the driver proves below 2^59 (all zero when the
    run does not wrap: the integers are then exact). A float difference of at least 2^61 has
    the true sign; a smaller one means the true difference is below 2^62 in magnitude, and
    the wrapped integer difference is then exactly it."""
    df = stf[F_KEY, x] - stf[F_KEY, u]
    if df >= _DECIDE:
        return 1
    if df <= -_DECIDE:
        return -1
    d = st[O_KEY, x] - st[O_KEY, u]
    return 1 if d > 0 else (-1 if d < 0 else 0)


@numba.njit(inline="always", **JIT_OPTIONS)
def _accrue(st, stf, val, rate, run, last, fval, u, t, wrapped):
    """Eq. 3 in closed form on the rows ``val`` (the utility), ``rate`` (what it grows by per
    time unit), ``run`` (running unit parts) and ``last`` (as of when) of column ``u``,
    brought to ``t``; with ``wrapped`` the value may pass 2^63 and its float64 copy (row
    ``fval`` of ``stf``) follows it (:func:`_key_cmp`)."""
    d = t - st[last, u]
    if d:
        r = st[run, u]
        tri = d * (d + 1) // 2
        st[val, u] += st[rate, u] * d + r * tri
        if wrapped:
            stf[fval, u] += float(st[rate, u]) * float(d) + float(r) * float(tri)
        st[rate, u] += r * d
        st[last, u] = t


@numba.njit(inline="always", **JIT_OPTIONS)
def _advance(st, stf, u, t, wrapped):
    """``psi_sp`` and processed work of ``u`` brought to ``t``."""
    _accrue(st, stf, O_PSI, O_WORK, O_RUNNING, O_TL, F_PSI, u, t, wrapped)


@numba.njit(inline="always", **JIT_OPTIONS)
def _credit(st, stf, v, t, q, wrapped):
    """DIRECTCONTR: machine owner ``v``'s contribution brought to ``t``, then ``q`` more of
    its machines running (``q < 0``: freed)."""
    _accrue(st, stf, O_PHI, O_WC, O_RC, O_TV, F_PHI, v, t, wrapped)
    st[O_RC, v] += q


# ------------------------------------------------------------------ the pick rules


@numba.njit(inline="always", **JIT_OPTIONS)
def _older(st, sj, x, u):
    """Is ``x``'s queue head older than ``u``'s, the heads as the rule's picks at ``t``
    began? The tie rule of every pick (docs/conventions.md, "Ties and anonymity"): the one
    place it is written (jobs are numbered in submission order here)."""
    return sj[J_QJOBS, st[O_QPTR, x] + st[O_RHEAD, x]] < sj[J_QJOBS, st[O_QPTR, u] + st[O_RHEAD, u]]


@numba.njit(inline="always", **JIT_OPTIONS)
def _pick_fifo(st, sj, jb, cand):
    """FIFO: the organization of the oldest queued job it may start. Over every queued job,
    the oldest not started (a pointer: jobs start in submission order but for pinned and
    backfilled ones, which it skips); over a restricted step's candidates, each
    organization's oldest candidate (``O_CAND``)."""
    if cand == O_QUEUED:
        j = st[SC, SC_NXT]
        while sj[J_START, j] >= 0 or sj[J_WIDE, j]:
            j += 1
        st[SC, SC_NXT] = j
        return jb[J_OWNER, j]
    u = np.int64(-1)
    hu = np.int64(0)
    for a in range(st[SC, SC_NACT]):
        x = st[O_ACT, a]
        if st[cand, x] > 0:
            h = sj[J_QJOBS, st[O_CAND, x]]
            if u < 0 or h < hu:
                u, hu = x, h
    return u


@numba.njit(inline="always", **JIT_OPTIONS)
def _pick_share(st, sj, cand, t):
    """The fair-share family: the smallest ratio of processor time (FAIRSHARE), ``psi_sp``
    (UTFAIRSHARE) or running processors (CURRFAIRSHARE) to the machines contributed, the
    ratios compared exactly (cross-multiplied in two words, :func:`_mul_lt`; a zero share is
    an infinite ratio), ties to the older queue head."""
    rule = st[SC, SC_RULE]
    u = np.int64(-1)
    bn = np.int64(0)
    bd = np.int64(0)
    for a in range(st[SC, SC_NACT]):
        x = st[O_ACT, a]
        if st[cand, x] == 0:
            continue
        if rule == CURRFAIRSHARE:
            num = st[O_RUNNING, x]
        else:
            d = t - st[O_TL, x]
            if rule == FAIRSHARE:
                num = st[O_WORK, x] + st[O_RUNNING, x] * d
            else:
                num = st[O_PSI, x] + st[O_WORK, x] * d + st[O_RUNNING, x] * (d * (d + 1) // 2)
        dx = st[O_MACHINES, x]
        if u < 0:
            u, bn, bd = x, num, dx
            continue
        if dx == 0:
            better = bd == 0 and _older(st, sj, x, u)
        elif bd == 0 or _mul_lt(num, bd, bn, dx):
            better = True
        else:
            better = not _mul_lt(bn, dx, num, bd) and _older(st, sj, x, u)
        if better:
            u, bn, bd = x, num, dx
    return u


@numba.njit(inline="always", **JIT_OPTIONS)
def _pick_roundrobin(st, cand):
    """ROUNDROBIN: the next organization after the last served, cyclically in the canonical
    order, that the step shows."""
    no = st[SC, SC_NORDER]
    y = st[SC, SC_LAST]
    for _ in range(no):
        y = (y + 1) % no
        if st[cand, st[O_ORDER, y]] > 0:
            break
    st[SC, SC_LAST] = y
    return st[O_ORDER, y]


@numba.njit(inline="always", **JIT_OPTIONS)
def _pick_keyed(st, sj, stf, cand, t):
    """DIRECTCONTR, RAND and REF inside a coalition: the largest key, ties to the older
    queue head; REF takes its ranking's best shown. RAND and REF need no key when the pick
    cannot change a start (one candidate, or every queued job fits the free machines): the
    older head. ``-2`` when the keys of ``t`` are needed and not computed yet
    (:func:`_rule_step` stops, :func:`_keys` computes them, and the step resumes)."""
    rule = st[SC, SC_RULE]
    if rule != DIRECTCONTR:
        first = np.int64(-1)
        ncand = 0
        for a in range(st[SC, SC_NACT]):
            x = st[O_ACT, a]
            if st[cand, x] > 0:
                ncand += 1
                if first < 0 or _older(st, sj, x, first):
                    first = x
        if ncand == 1 or st[SC, SC_NFREE] >= st[SC, SC_QW]:
            return first
    if st[SC, SC_KEYT] != t:
        if rule != DIRECTCONTR:
            return np.int64(-2)  # RAND's and REF's keys need their kept coalitions
        st[SC, SC_KEYT] = t
        _keys_directcontr(st, stf, t)
    if rule == REFC:
        for y in range(st[SC, SC_NRANK]):  # the best ranked shown keeps receiving machines
            if st[cand, st[O_RANK, y]] > 0:
                return st[O_RANK, y]
        return np.int64(-1)
    u = np.int64(-1)
    for a in range(st[SC, SC_NACT]):
        x = st[O_ACT, a]
        if st[cand, x] > 0:
            if u < 0:
                u = x
                continue
            c = _key_cmp(st, stf, x, u)
            if c > 0 or (c == 0 and _older(st, sj, x, u)):
                u = x
    return u


@numba.njit(inline="always", **JIT_OPTIONS)
def _pick(st, sj, stf, jb, cand, t):
    """The organization the rule ``st[SC, SC_RULE]`` picks among those with ``st[cand, u] >
    0`` (``cand``: ``O_QUEUED``, or ``O_SHOWN`` in a step that restricts the candidates), as
    the Python policies pick (tested equal); ``-2``: the keys of ``t`` are needed first."""
    rule = st[SC, SC_RULE]
    if rule == FIFO:
        return _pick_fifo(st, sj, jb, cand)
    if rule == ROUNDROBIN:
        return _pick_roundrobin(st, cand)
    if rule in (FAIRSHARE, UTFAIRSHARE, CURRFAIRSHARE):
        return _pick_share(st, sj, cand, t)
    return _pick_keyed(st, sj, stf, cand, t)


@numba.njit(inline="always", **JIT_OPTIONS)
def _keys_directcontr(st, stf, t):
    """DIRECTCONTR's keys at ``t``: each member's contribution minus its utility, ``phi -
    psi`` (fixed during one event time)."""
    wrapped = st[SC, SC_WRAPPED]
    for x in range(st[SC, SC_K]):
        if st[O_MEMBER, x]:
            d = t - st[O_TV, x]
            e = t - st[O_TL, x]
            td = d * (d + 1) // 2
            te = e * (e + 1) // 2
            st[O_KEY, x] = (st[O_PHI, x] + st[O_WC, x] * d + st[O_RC, x] * td) - (
                st[O_PSI, x] + st[O_WORK, x] * e + st[O_RUNNING, x] * te
            )
            if wrapped:
                phi = stf[F_PHI, x] + float(st[O_WC, x]) * float(d) + float(st[O_RC, x]) * td
                psi = stf[F_PSI, x] + float(st[O_WORK, x]) * float(e) + float(st[O_RUNNING, x]) * te
                stf[F_KEY, x] = phi - psi


@numba.njit(**JIT_OPTIONS)
def _keys_sampled(st, sj, stf, smp, t):
    """RAND's keys at ``t`` (``N phi - N psi``, ``phi`` from the kept coalitions' values,
    advanced along their running counts' events as
    :class:`~coopsched.online.utilities.ValueCurve` evaluates them), or REF's inside one
    coalition (:data:`REFC`: Eq. (1) over its subsets, scaled, plus its own value ``v(C)``
    with the weight ``O_OWN``), then REF's ranking of every organization with a queued job.
    REF's sums may wrap around 2^64 (exact modulo 2^64, beside float64 copies; the values
    themselves never wrap: the driver's proof)."""
    cs, coeff, c_time, c_delta = smp.cs, smp.coeff, smp.c_time, smp.c_delta
    k = st[SC, SC_K]
    nc = cs.shape[1] - 1
    for c in range(nc):
        a = cs[CS_POS, c]
        end = cs[CS_PTR, c + 1]
        while a < end and c_time[a] <= t:  # the coalition's events up to t
            x = c_time[a]
            d = x - cs[CS_T, c]
            if d:
                cs[CS_V, c] += cs[CS_W, c] * d + cs[CS_R, c] * (d * (d + 1) // 2)
                cs[CS_W, c] += cs[CS_R, c] * d
                cs[CS_T, c] = x
            cs[CS_R, c] += c_delta[a]
            a += 1
        cs[CS_POS, c] = a
    wrapped = st[SC, SC_RULE] == REFC
    n_samples = st[SC, SC_NSAMPLES]
    for x in range(k):
        acc = np.int64(0)
        acc_f = 0.0
        for c in range(nc):
            if coeff[x, c] != 0:
                d = t - cs[CS_T, c]
                val = cs[CS_V, c] + cs[CS_W, c] * d + cs[CS_R, c] * (d * (d + 1) // 2)
                acc += coeff[x, c] * val
                if wrapped:
                    acc_f += float(coeff[x, c]) * float(val)
        e = t - st[O_TL, x]
        px = st[O_PSI, x] + st[O_WORK, x] * e + st[O_RUNNING, x] * (e * (e + 1) // 2)
        st[O_KEY, x] = acc - n_samples * px
        if wrapped:
            stf[F_KEY, x] = acc_f - float(n_samples) * float(px)
    if not wrapped:
        return
    vC = np.int64(0)  # + own[x] v(C): the coalition's own value, its members' psi at t
    for y in range(k):
        if st[O_MEMBER, y]:
            e = t - st[O_TL, y]
            vC += st[O_PSI, y] + st[O_WORK, y] * e + st[O_RUNNING, y] * (e * (e + 1) // 2)
    nr = 0
    for x in range(k):
        if st[O_MEMBER, x]:
            st[O_KEY, x] += st[O_OWN, x] * vC
            stf[F_KEY, x] += float(st[O_OWN, x]) * float(vC)
        if st[O_QUEUED, x] > 0:  # one ranking for every pick at t (the literal reading)
            y = nr
            while y > 0:
                z = st[O_RANK, y - 1]
                c = _key_cmp(st, stf, z, x)
                if c > 0 or (c == 0 and not _older(st, sj, x, z)):
                    break
                st[O_RANK, y] = z
                y -= 1
            st[O_RANK, y] = x
            nr += 1
    st[SC, SC_NRANK] = nr


@numba.njit(**JIT_OPTIONS)
def _keys(st, sj, stf, smp, t):
    """RAND's and REF's keys of ``t``, computed once per event time, at the first pick that
    needs them (DIRECTCONTR's: :func:`_pick_keyed`)."""
    st[SC, SC_KEYT] = t
    _keys_sampled(st, sj, stf, smp, t)


# ------------------------------------------------------------------ the loop's steps


@numba.njit(**JIT_OPTIONS)
def _draw_machines(st, sj, stf, pos, t, q):
    """``q`` random machines for job ``pos`` (chained from ``sj[J_MACHINE, pos]``), each
    owner's contribution credited once per job (DIRECTCONTR)."""
    mt = st[M_MT]
    last = -1
    for _ in range(q):
        j = randbelow(mt, st[SC, SC_NIDS])
        m = st[M_FREE, j]
        st[M_FREE, j] = st[M_FREE, st[SC, SC_NIDS] - 1]
        st[SC, SC_NIDS] -= 1
        st[M_NEXT, m] = -1
        if last < 0:
            sj[J_MACHINE, pos] = m
        else:
            st[M_NEXT, last] = m
        last = m
        st[O_BYOWN, st[M_OWNER, m]] += 1
    _credit_owners(st, stf, t, 1)


@numba.njit(**JIT_OPTIONS)
def _free_machines(st, sj, stf, pos, t):
    """Job ``pos``'s chain of random machines back on the free list, each owner's
    contribution credited once."""
    m = sj[J_MACHINE, pos]
    while m >= 0:
        nx = st[M_NEXT, m]
        st[M_FREE, st[SC, SC_NIDS]] = m
        st[SC, SC_NIDS] += 1
        st[O_BYOWN, st[M_OWNER, m]] += 1
        m = nx
    _credit_owners(st, stf, t, -1)


@numba.njit(**JIT_OPTIONS)
def _credit_owners(st, stf, t, sign):
    """DIRECTCONTR: the machines of one job counted per owner (``O_BYOWN``) started
    (``sign`` 1) or freed (-1), each owner's contribution credited once."""
    for v in range(st[SC, SC_K]):
        if st[O_BYOWN, v]:
            if st[SC, SC_RULE] == DIRECTCONTR:
                _credit(st, stf, v, t, sign * st[O_BYOWN, v], st[SC, SC_WRAPPED])
            st[O_BYOWN, v] = 0


@numba.njit(**JIT_OPTIONS)
def _easy_list(st, sj, pos, e, q):
    """EASY's running jobs: job ``pos`` (expected at ``e``, on ``q`` processors) inserted in
    order of expected end, or (``q == 0``) removed."""
    x = 0
    nexp = st[SC, SC_NEXP]
    if q == 0:
        while sj[J_EXE, x] != e or sj[J_EXJ, x] != pos:
            x += 1
        for y in range(x, nexp - 1):
            sj[J_EXE, y] = sj[J_EXE, y + 1]
            sj[J_EXJ, y] = sj[J_EXJ, y + 1]
            sj[J_EXQ, y] = sj[J_EXQ, y + 1]
        st[SC, SC_NEXP] = nexp - 1
        return
    x = nexp
    while x > 0 and (sj[J_EXE, x - 1] > e or (sj[J_EXE, x - 1] == e and sj[J_EXJ, x - 1] > pos)):
        sj[J_EXE, x] = sj[J_EXE, x - 1]
        sj[J_EXJ, x] = sj[J_EXJ, x - 1]
        sj[J_EXQ, x] = sj[J_EXQ, x - 1]
        x -= 1
    sj[J_EXE, x] = e
    sj[J_EXJ, x] = pos
    sj[J_EXQ, x] = q
    st[SC, SC_NEXP] = nexp + 1


@numba.njit(**JIT_OPTIONS)
def _reservation(st, sj, nfree, q, t):
    """EASY's shadow time and extra machines for a job on ``q`` processors
    (:func:`coopsched.online.rigid.reservation`)."""
    avail = nfree
    x = 0
    nexp = st[SC, SC_NEXP]
    while x < nexp:
        e = max(sj[J_EXE, x], t + 1)
        while x < nexp and max(sj[J_EXE, x], t + 1) == e:
            avail += sj[J_EXQ, x]
            x += 1
        if avail >= q:
            return e, avail - q
    return _BIG, np.int64(0)


@numba.njit(**JIT_OPTIONS)
def _candidates_queue(st, sj, jb, t, nfree, nact):
    """``easy-queue``'s backfill, and ``first-fit-queue``'s step (no reservation: no reserved
    organization, ``SC_RESU`` -1, the shadow time and extra machines infinite)
    (:func:`coopsched.online.rigid.rule_step`, tested equal):
    each organization's oldest candidate (``O_CAND``, scanned forward from where it was:
    a job stops being a candidate only when the free or extra machines fall), shown in
    ``O_SHOWN``; whether any organization has one. A candidate is a queued job other than
    the reserved one that fits the ``nfree`` machines now and ends by the shadow time or
    fits in the extra machines."""
    shadow, extra = st[SC, SC_SHADOW], st[SC, SC_EXTRA]
    ru = st[SC, SC_RESU]
    reserved = sj[J_QJOBS, st[O_QPTR, ru] + st[O_HEAD, ru]] if ru >= 0 else np.int64(-1)
    anyone = False
    for a in range(nact):
        x = st[O_ACT, a]
        i = st[O_CAND, x]
        end = st[O_QPTR, x + 1]
        ok = False
        while i < end:
            h = sj[J_QJOBS, i]
            if jb[J_REL, h] > t:
                break
            w = jb[J_WIDTH, h]
            if (
                w <= nfree
                and sj[J_START, h] < 0
                and h != reserved
                and (t + jb[J_REQ, h] <= shadow or w <= extra)
            ):
                ok = True
                break
            i += 1
        st[O_CAND, x] = i
        st[O_SHOWN, x] = st[O_QUEUED, x] if ok else 0
        anyone = anyone or ok
    return anyone


@numba.njit(inline="always", **JIT_OPTIONS)
def _rule_step(st, sj, stf, jb, t, one):
    """The starts at ``t`` (:func:`coopsched.online.rigid.rule_step`, tested equal): pinned
    jobs first (the oldest queued one while it fits), then, the tie order of ``t`` fixed,
    the backfilling rule ``st[SC, SC_BF]``'s picks (:func:`_pick`) with EASY's reservation
    and backfill, each start in one place (out of the queue, its processors in use, its
    machine drawn, its completion and, under EASY, its expected end listed). Returns
    ``True`` when a pick needs the keys of ``t`` first: the step stops there, its phase kept
    in the record, and resumes when called again. With one processor per job (``one``, the
    loop's literal: the step is inlined into :func:`_loop`, a call per event time cost 10%
    of FIFO's run on LPC-EGEE) every rule is the greedy step."""
    if st[SC, SC_STEPT] != t:  # a new step
        st[SC, SC_STEPT] = t
        st[SC, SC_PHASE] = 0
    bf, track, randm = st[SC, SC_BF], st[SC, SC_TRACK], st[SC, SC_RANDM]
    wrapped, rule, k = st[SC, SC_WRAPPED], st[SC, SC_RULE], st[SC, SC_K]
    phase = st[SC, SC_PHASE]
    nfree, total, qw, nact = st[SC, SC_NFREE], st[SC, SC_TOTAL], st[SC, SC_QW], st[SC, SC_NACT]
    ncomp, nids = st[SC, SC_NCOMP], st[SC, SC_NIDS]
    need_keys = False
    while total > 0 and nfree > 0:
        if phase == 0:
            pos = np.int64(-1)
            if st[SC, SC_PIN] > 0:
                for a in range(nact):  # the oldest queued pinned job heads a queue
                    x = st[O_ACT, a]
                    h = sj[J_QJOBS, st[O_QPTR, x] + st[O_HEAD, x]]
                    if jb[J_PINNED, h] and (pos < 0 or h < pos):
                        pos = h
            if pos < 0 or (not one and jb[J_WIDTH, pos] > nfree):
                phase = 1  # on to the rule
                if st[SC, SC_RANKT] != t:  # ties at t: the queue heads as the picks begin
                    st[SC, SC_RANKT] = t
                    for x in range(k):
                        st[O_RHEAD, x] = st[O_HEAD, x]
                if not one and bf == FIRST_FIT_QUEUE:  # the whole queue, no reservation
                    st[SC, SC_RESU] = -1
                    st[SC, SC_SHADOW], st[SC, SC_EXTRA] = _BIG, _BIG
                    for a in range(nact):
                        x = st[O_ACT, a]
                        st[O_CAND, x] = st[O_QPTR, x] + st[O_HEAD, x]
                continue
        else:
            cand = O_QUEUED
            if not one and (phase == 2 or bf in (FIRST_FIT, FIRST_FIT_QUEUE)):
                cand = O_SHOWN  # show only the candidates
                if (phase == 2 and bf == EASY_QUEUE) or bf == FIRST_FIT_QUEUE:
                    anyone = _candidates_queue(st, sj, jb, t, nfree, nact)
                else:
                    anyone = False
                    for a in range(nact):
                        x = st[O_ACT, a]
                        hi = st[O_QPTR, x] + st[O_HEAD, x]
                        h = sj[J_QJOBS, hi]
                        w = jb[J_WIDTH, h]
                        ok = w <= nfree
                        if phase == 2:
                            ok = (
                                ok
                                and x != st[SC, SC_RESU]
                                and (t + jb[J_REQ, h] <= st[SC, SC_SHADOW] or w <= st[SC, SC_EXTRA])
                            )
                        st[O_SHOWN, x] = st[O_QUEUED, x] if ok else 0
                        st[O_CAND, x] = hi
                        anyone = anyone or ok
                if not anyone:
                    break
            st[SC, SC_NFREE], st[SC, SC_QW], st[SC, SC_NACT] = nfree, qw, nact  # rules read
            u = _pick(st, sj, stf, jb, cand, t)
            if u == -2:
                need_keys = True
                break
            if cand == O_SHOWN:
                pos = sj[J_QJOBS, st[O_CAND, u]]
            else:
                pos = sj[J_QJOBS, st[O_QPTR, u] + st[O_HEAD, u]]
            if not one:
                w = jb[J_WIDTH, pos]
                if w > nfree:
                    if (bf != EASY and bf != EASY_QUEUE) or phase == 2:
                        break  # none: the pick does not fit, nothing more starts
                    st[SC, SC_RESU] = u
                    st[SC, SC_SHADOW], st[SC, SC_EXTRA] = _reservation(st, sj, nfree, w, t)
                    phase = 2
                    if bf == EASY_QUEUE:  # every organization's scan from its head
                        for a in range(nact):
                            x = st[O_ACT, a]
                            st[O_CAND, x] = st[O_QPTR, x] + st[O_HEAD, x]
                    continue
                if phase == 2 and t + jb[J_REQ, pos] > st[SC, SC_SHADOW]:
                    st[SC, SC_EXTRA] -= w
        # job pos starts at t
        u = jb[J_OWNER, pos]
        q = np.int64(1) if one else jb[J_WIDTH, pos]
        if one or (bf != EASY_QUEUE and bf != FIRST_FIT_QUEUE):
            st[O_HEAD, u] += 1
        else:  # a backfilled later job leaves a gap, which the head skips
            hi = st[O_QPTR, u] + st[O_HEAD, u]
            if sj[J_QJOBS, hi] == pos:
                hi += 1
                while hi < st[O_QPTR, u + 1] and sj[J_START, sj[J_QJOBS, hi]] >= 0:
                    hi += 1
                st[O_HEAD, u] = hi - st[O_QPTR, u]
        st[O_QUEUED, u] -= 1
        if st[O_QUEUED, u] == 0:  # out of the list of organizations with a queued job
            st[O_SHOWN, u] = 0
            nact -= 1
            y = st[O_ACT, nact]
            st[O_ACT, st[O_APOS, u]] = y
            st[O_APOS, y] = st[O_APOS, u]
        total -= 1
        qw -= q
        if jb[J_PINNED, pos]:
            st[SC, SC_PIN] -= 1
        if track:
            _advance(st, stf, u, t, wrapped)
        st[O_RUNNING, u] += q
        nfree -= q
        sj[J_START, pos] = t
        ncomp = _push2(sj, J_HT, ncomp, min(t + jb[J_SIZE, pos], _BIG), pos)
        if not one and (bf in (EASY, EASY_QUEUE)):
            _easy_list(st, sj, pos, t + jb[J_REQ, pos], q)
        if one:  # the schedule stores the machine: the lowest free one, or a random one
            if randm:
                j = randbelow(st[M_MT], nids)  # Python's random stream
                m = st[M_FREE, j]
                st[M_FREE, j] = st[M_FREE, nids - 1]
                nids -= 1
            else:
                m = st[M_FREE, 0]
                nids = _heap_pop(st, M_FREE, nids)
            sj[J_MACHINE, pos] = m
            if rule == DIRECTCONTR:
                _credit(st, stf, st[M_OWNER, m], t, 1, wrapped)
        elif randm:
            st[SC, SC_NIDS] = nids
            _draw_machines(st, sj, stf, pos, t, q)
            nids = st[SC, SC_NIDS]
    st[SC, SC_PHASE] = phase
    st[SC, SC_NFREE], st[SC, SC_TOTAL], st[SC, SC_QW], st[SC, SC_NACT] = nfree, total, qw, nact
    st[SC, SC_NCOMP], st[SC, SC_NIDS] = ncomp, nids
    return need_keys


@numba.njit(**JIT_OPTIONS)
def _engine(st, sj, jb, smp, T, one):
    """The engine: :func:`_loop` compiled apart for one processor per job (``one``) and for
    rigid jobs, each branch passing ``one`` as a literal."""
    stf = st.view(np.float64)
    if one:
        _loop(st, sj, stf, jb, smp, T, True)
    else:
        _loop(st, sj, stf, jb, smp, T, False)


@numba.njit(**NO_REFCOUNT_OPTIONS)
def _loop(st, sj, stf, jb, smp, T, one):
    """The event loop (module docstring): events until none is left before ``T``: the
    completions (the machines freed at ``t`` back in machine order), the releases, then the
    rule step (:func:`_rule_step`); the starts (and machines, with one processor per job)
    and the policy's final state in the record. ``one`` is a literal (numba folds it away)."""
    numba.literally(one)
    n = st[SC, SC_NJOBS]
    bf, track, randm = st[SC, SC_BF], st[SC, SC_TRACK], st[SC, SC_RANDM]
    wrapped, rule = st[SC, SC_WRAPPED], st[SC, SC_RULE]
    i = 0
    while True:
        ncomp = st[SC, SC_NCOMP]
        t_rel = jb[J_REL, i] if i < n else _BIG
        t_comp = sj[J_HT, 0] if ncomp > 0 else _BIG
        t = min(t_rel, t_comp)
        if t >= _BIG or t >= T:
            break
        nids = st[SC, SC_NIDS]
        base = nids
        nfree = st[SC, SC_NFREE]
        while ncomp > 0 and sj[J_HT, 0] == t:  # completions
            pos = sj[J_HT + 1, 0]
            ncomp = _pop2(sj, J_HT, ncomp)
            u = jb[J_OWNER, pos]
            q = np.int64(1) if one else jb[J_WIDTH, pos]
            if track:
                _advance(st, stf, u, t, wrapped)
            st[O_RUNNING, u] -= q
            nfree += q
            if not one and (bf in (EASY, EASY_QUEUE)):
                _easy_list(st, sj, pos, sj[J_START, pos] + jb[J_REQ, pos], 0)
            if one:
                m = sj[J_MACHINE, pos]
                if randm:
                    st[M_FREE, nids] = m
                    nids += 1
                else:
                    nids = _heap_push(st, M_FREE, nids, m)
                if rule == DIRECTCONTR:
                    _credit(st, stf, st[M_OWNER, m], t, -1, wrapped)
            elif randm:
                st[SC, SC_NIDS] = nids
                _free_machines(st, sj, stf, pos, t)
                nids = st[SC, SC_NIDS]
        if randm:  # the machines freed at t in machine order
            sort_row(st, M_FREE, base, nids, ST_SCRATCH)
        st[SC, SC_NCOMP], st[SC, SC_NIDS], st[SC, SC_NFREE] = ncomp, nids, nfree
        while i < n and jb[J_REL, i] == t:  # releases
            if not sj[J_WIDE, i]:
                u = jb[J_OWNER, i]
                if st[O_QUEUED, u] == 0:
                    st[O_APOS, u] = st[SC, SC_NACT]
                    st[O_ACT, st[SC, SC_NACT]] = u
                    st[SC, SC_NACT] += 1
                st[O_QUEUED, u] += 1
                st[SC, SC_TOTAL] += 1
                st[SC, SC_QW] += 1 if one else jb[J_WIDTH, i]
                if jb[J_PINNED, i]:
                    st[SC, SC_PIN] += 1
            i += 1
        if nfree > 0 and st[SC, SC_TOTAL] > 0:
            while _rule_step(st, sj, stf, jb, t, one):
                _keys(st, sj, stf, smp, t)


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

    With rigid jobs (``rigid``: some job on more than one processor) machines may idle while
    jobs wait (a job waits for enough machines), but some job always runs then, so every job
    ends by the last release plus the sum of the run times plus the longest job: that bounds
    ``t_end`` instead.

    Event times are at most ``t_end``: the horizon, or (greedy schedules) the last
    release plus the coalition's work divided by its ``Mc`` machines plus the longest
    job; any ``psi_sp`` (an organization's, a coalition's, DIRECTCONTR's contribution) is at
    most ``Mc * t_end * (t_end + 1) / 2`` (Eq. 3 with every machine busy from 0); the fair
    shares compare products of those with machine counts (below ``2^31``) in two words
    (:func:`_mul_lt`), so the factors alone must fit; RAND sums ``N`` of them (``|coeff|``
    sums to ``2N``, plus ``N * psi``).
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
    if (t_end + p_max + 1) * 2 * M >= _LIMIT:
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


class Prepared:
    """What the engine reads of an instance, whatever the coalition, built once: its jobs in
    global submission order (:meth:`~coopsched.workloads.instance.Instance.fifo_order`) as
    the record's first rows (release, owner, size, processors, requested time, pin), each
    organization's jobs in that order, and the organizations' canonical order and machines.
    It serves every coalition of the instance (:class:`~coopsched.online.engine.Backend`
    keeps one: a sampled audit simulates thousands); the instance must not change
    meanwhile."""

    def __init__(self, instance: Instance) -> None:
        inst = instance
        self.instance = inst
        self.order = o = inst.fifo_order()
        n = len(o)
        self.sorted = bool(n == 0 or (o[1:] > o[:-1]).all())  # submission order = input
        sub = slice(None) if self.sorted else o  # no gather when the order is the input's
        self.jobs = np.empty((J_ROWS, max(n, 1)), dtype=np.int64)
        self.jobs[J_REL, :n] = inst.release[sub]
        self.jobs[J_OWNER, :n] = inst.org[sub]
        self.jobs[J_SIZE, :n] = inst.size[sub]
        if inst.processors is None:
            self.jobs[J_WIDTH] = 1
        else:
            self.jobs[J_WIDTH, :n] = inst.processors[sub]
        if inst.requested is None:
            self.jobs[J_REQ] = -1
        else:
            self.jobs[J_REQ, :n] = inst.requested[sub]
        if inst.pinned is None:
            self.jobs[J_PINNED] = 0
        else:
            self.jobs[J_PINNED, :n] = inst.pinned[sub]
        self.owner = self.jobs[J_OWNER, :n]
        # the queues of every job: a stable sort by owner, and each owner's count
        self.by_org, self.org_ptr = group_order(self.owner, inst.k)
        self.one = not n or int(self.jobs[J_WIDTH, :n].max()) == 1
        self.machines = inst.machines
        self.canon = inst.canonical_order()
        self.machine_owner = np.repeat(self.canon, self.machines[self.canon])

    def coalition(self, is_member: np.ndarray) -> np.ndarray | None:
        """Positions (in submission order) of the jobs of the members ``is_member``
        (``None``: every job)."""
        if is_member.all():
            return None
        return np.flatnonzero(is_member[self.owner])


#: no kept coalitions (every rule but RAND's and REF's); the deltas in int32, as RAND's and
#: REF's own (a running count changes by at most the machines at one time), so that one
#: specialization of the engine serves every rule
_NO_SAMPLES = {
    "c_ptr": np.zeros(1, dtype=np.int64),
    "c_time": np.zeros(0, dtype=np.int64),
    "c_delta": np.zeros(0, dtype=np.int32),
    "n_samples": 0,
}


def run_compiled(
    prepared: Prepared,
    rule: str,
    backfill: str | None,
    *,
    horizon: int | None,
    members: tuple[int, ...],
    seed: int = 0,
    random_machines: bool = False,
    inputs: dict[str, Any] | None = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any], np.ndarray, int] | str:
    """One run of the engine (the caller is :func:`coopsched.online.engine.simulate` or its
    :class:`~coopsched.online.engine.Backend`): the starts and machines (instance job order),
    the policy's final state (DIRECTCONTR's contributions, ROUNDROBIN's last served), the
    too-wide jobs (instance indices) and the coalition's machines; or why int64 cannot be
    proven exact (a str). ``rule`` is a rule name of the table; ``backfill`` the rule of a
    rigid instance (``None``: sequential jobs); ``inputs`` the policy's
    (:meth:`~coopsched.online.engine.Policy.compiled_inputs`: RAND's and REF's kept
    coalitions, ``c_ptr``, ``c_time``, ``c_delta``, ``coeff``, ``n_samples``, ``own``)."""
    inst = prepared.instance
    k = inst.k
    is_member = np.zeros(k, dtype=bool)
    is_member[list(members)] = True
    sel = prepared.coalition(is_member)
    jobs = prepared.jobs if sel is None else prepared.jobs[:, sel]
    order = prepared.order if sel is None else prepared.order[sel]
    n = len(order)
    one = prepared.one or not n or int(jobs[J_WIDTH, :n].max()) == 1  # the q = 1 case
    machines = prepared.machines
    M = int(machines[is_member].sum())
    inputs = inputs or {}
    sampled = {**_NO_SAMPLES, "coeff": np.zeros((k, 0), dtype=np.int64), **inputs}
    entry = rule_named(rule)
    wrapped = _wrapping(entry, jobs, prepared, M, horizon, sampled, inputs, one)
    if isinstance(wrapped, str):
        return wrapped
    wide = jobs[J_WIDTH, :n] > M if backfill is not None else np.zeros(n, dtype=bool)
    if backfill in ("easy", "easy-queue"):
        bad = np.flatnonzero(~wide & (jobs[J_REQ, :n] < 1))
        if bad.size:
            raise ValueError(
                f"backfill={backfill!r} reads requested times, and job {int(order[bad[0]])} has none "
                "(give every job a requested time, or choose first-fit)"
            )
    st, sj = _record(prepared, is_member, jobs[J_OWNER, :n], sel, wide, M, inputs)
    sc = st[SC]
    sc[SC_RULE] = entry.rule
    sc[SC_BF] = _BACKFILL[backfill] if backfill is not None else NONE
    sc[SC_TRACK] = entry.tracks_psi
    sc[SC_RANDM] = bool(random_machines)
    sc[SC_WRAPPED] = wrapped
    sc[SC_NSAMPLES] = int(sampled["n_samples"])
    if random_machines:
        st[M_MT, :625] = mt_state(seed)
    _engine(
        st,
        sj,
        jobs,
        _sampled(sampled, k),
        # int64_bounds keeps every event below 2^62: a larger horizon is never reached
        np.int64(_BIG if horizon is None else min(int(horizon), int(_BIG))),
        one,
    )
    if sel is None and prepared.sorted:  # every job, in input order: no scatter
        start = sj[J_START, :n].copy()
        machine = sj[J_MACHINE, :n].copy() if one else np.full(n, -1, dtype=np.int64)
    else:
        start = np.full(inst.n, -1, dtype=np.int64)
        machine = np.full(inst.n, -1, dtype=np.int64)
        start[order] = sj[J_START, :n]
        if one:
            machine[order] = sj[J_MACHINE, :n]
    phi = st[O_PHI, :k].tolist()
    if wrapped:  # contributions wrapped around 2^64: exact values from the floats
        phif = st.view(np.float64)[F_PHI, :k].tolist()
        phi = [_unwrap(r, f) for r, f in zip(phi, phif, strict=True)]
    state = {
        "phi": phi,
        "wc": st[O_WC, :k].tolist(),
        "rc": st[O_RC, :k].tolist(),
        "tv": st[O_TV, :k].tolist(),
        "last": int(sc[SC_LAST]),
        "key_time": int(sc[SC_KEYT]),
    }
    return start, machine, state, order[wide], M


def _wrapping(entry, jobs, prepared, M, horizon, sampled, inputs, one) -> bool | str:
    """Whether the run keeps utilities modulo 2^64 beside float64 copies (REF's keys always;
    DIRECTCONTR when int64 cannot hold them but the copies provably decide), or why int64
    cannot be proven exact (a str)."""
    n = len(prepared.order) if jobs is prepared.jobs else jobs.shape[1]
    rel, size = jobs[J_REL, :n], jobs[J_SIZE, :n]
    machines = prepared.machines
    if entry.rule == REFC:
        why = _ref_keys_wrap_safely(rel, size, M, horizon, sampled, inputs.get("own"))
        return True if why is None else why
    why = int64_bounds(
        entry.name,
        rel,
        size,
        int(machines.sum()),
        M,
        int(machines.max()) if len(machines) else 0,
        horizon,
        int(sampled["n_samples"]),
        rigid=not one,
    )
    if why is None:
        return False
    if entry.rule == DIRECTCONTR and _wraps_safely(rel, size, M, horizon):
        return True
    return why


def _record(prepared, is_member, owner, sel, wide, M, inputs) -> tuple[np.ndarray, np.ndarray]:
    """The engine's record at the start, its two arrays: ``st`` (the organizations',
    machines' and run's rows) and ``sj`` (the job rows, :data:`J_WIDE` ...): the coalition's
    jobs' queues, every organization idle, its machines free, no key computed yet
    (``owner``: the coalition's jobs' owners). Both are zeroed memory (``np.zeros``: pages
    are zeroed when first touched) and only the rows that do not start at zero are written.
    The job rows are apart because they are as long as the jobs: numpy gives such an array
    2 MiB huge pages, each zeroed whole when first touched, so every short row that shared
    their width cost a huge page of its own (with all rows that wide, about 5 ms per run
    on the whole LPC-EGEE log, a third of FIFO's)."""
    k = len(is_member)
    n = len(owner)
    MM = len(prepared.machine_owner)
    st = np.zeros((ROWS, max(k + 1, MM, 625, SC_FIELDS)), dtype=np.int64)
    sj = np.zeros((J_RECORD_ROWS, max(n, 1)), dtype=np.int64)
    some_wide = bool(wide.any())
    if some_wide:
        sj[J_WIDE, :n] = wide
    sj[J_START, :n] = -1
    sj[J_MACHINE, :n] = -1
    # each organization's queue: its jobs that fit, in submission order
    if sel is None:
        q = prepared.by_org
    else:  # the coalition's positions of the members' jobs, in the instance's queue order
        pos = np.full(len(prepared.owner), -1, dtype=np.int64)
        pos[sel] = np.arange(n)
        q = pos[prepared.by_org]
        q = q[q >= 0]
    if some_wide:
        q = q[~wide[q]]
    sj[J_QJOBS, : len(q)] = q
    # the queues' lengths: q holds the jobs that fit, whose owners need no gather
    if sel is None and not some_wide:
        st[O_QPTR, : k + 1] = prepared.org_ptr
    else:
        st[O_QPTR, 1 : k + 1] = np.cumsum(
            np.bincount(owner[~wide] if some_wide else owner, minlength=k)
        )
    st[O_MACHINES, :k] = prepared.machines
    st[O_MEMBER, :k] = is_member
    if inputs.get("own") is not None:
        st[O_OWN, :k] = inputs["own"]
    canon = prepared.canon
    members = canon[is_member[canon]]
    st[O_ORDER, : len(members)] = members
    free = np.flatnonzero(is_member[prepared.machine_owner])  # sorted: a valid heap
    st[M_OWNER, :MM] = prepared.machine_owner
    st[M_FREE, : len(free)] = free
    sc = st[SC]
    sc[SC_K] = k
    sc[SC_NJOBS] = n
    sc[SC_NFREE] = M
    sc[SC_NIDS] = len(free)
    sc[SC_KEYT] = -1
    sc[SC_LAST] = -1  # ROUNDROBIN: nobody served yet (as its reset())
    sc[SC_RANKT] = -1
    sc[SC_STEPT] = -1
    sc[SC_NORDER] = len(members)
    return st, sj


def _sampled(sampled: dict, k: int) -> Sampled:
    """RAND's or REF's kept coalitions as the engine reads them."""
    c_ptr = np.asarray(sampled["c_ptr"], dtype=np.int64)
    nc = len(c_ptr) - 1
    cs = np.zeros((CS_FIELDS, nc + 1), dtype=np.int64)
    cs[CS_PTR] = c_ptr
    cs[CS_POS, :nc] = c_ptr[:nc]
    coeff = np.asarray(sampled["coeff"], dtype=np.int64)
    return Sampled(
        cs=cs,
        coeff=np.ascontiguousarray(coeff if coeff.shape[1] else np.zeros((k, 1), np.int64)),
        c_time=np.asarray(sampled["c_time"], dtype=np.int64),
        c_delta=np.asarray(sampled["c_delta"]),
    )


def _unwrap(residue: int, approx: float) -> int:
    """The integer congruent to ``residue`` modulo 2^64 nearest to ``approx`` (exact when
    ``approx`` is within 2^62 of it, as :func:`_wraps_safely` proves)."""
    r = residue % 2**64
    return r + 2**64 * round((int(approx) - r) / 2**64)


def _wraps_safely(rel: np.ndarray, size: np.ndarray, M: int, horizon: int | None) -> bool:
    """Whether DIRECTCONTR can run with ``psi`` and contributions wrapping around 2^64 (exact
    modulo 2^64) beside float64 copies: event times with ``t (t + 1) < 2^63`` (so
    ``d (d + 1) / 2`` is exact), processed work below 2^62, and the floats' error below 2^59, far under the
    2^61 at which :func:`_key_cmp` trusts their sign. Each accumulator takes at most one
    update per event (two events per job), each adding a rounding error of at most
    ``3 u`` of the largest value ``M t (t + 1) / 2`` (``u = 2^-53``)."""
    if not len(rel):
        return True
    p_max = int(size.max())
    t_end = int(rel.max()) + sum(size.tolist()) + p_max
    if horizon is not None:
        t_end = min(t_end, int(horizon))
    if t_end * (t_end + 1) >= 2**63 or M * t_end >= 2**62:
        return False
    vmax = M * t_end * (t_end + 1) / 2
    error = 2 * len(rel) * 4 * 3 * 2.0**-53 * vmax
    return error < 2.0**59


def _ref_keys_wrap_safely(
    rel: np.ndarray,
    size: np.ndarray,
    M: int,
    horizon: int | None,
    rand: dict | None,
    own: np.ndarray | None,
) -> str | None:
    """Why REF's keys inside one coalition (``REFC``) could be decided wrongly (``None``:
    every comparison is exact), the keys summed in int64 modulo 2^64 beside float64 copies
    and compared by :func:`_key_cmp`.

    *Values do not wrap.* Event times satisfy ``t <= t_end`` with ``t_end`` the horizon or
    the last release plus the run times plus the longest job (some job always runs while
    one waits), and ``t_end (t_end + 1) < 2^63`` is required, so ``d (d + 1) / 2`` is
    exact (and run times below 2^62, so a completion ``t + p`` fits); every value the keys read (a subset's ``v(T)`` from ``cV, cW, cR``, a member's
    ``psi``, the coalition's ``v(C)``) is at most ``vmax = Mc t_end (t_end + 1) / 2``
    (Eq. 3 with all ``Mc`` machines busy from 0; a subset has fewer machines), and
    processed work at most ``Mc t_end``: both are required below ``2^62``.

    *Keys may wrap.* A member's key is ``sum_T coeff_T v(T) - N psi_u + own_u v(C)``,
    ``N`` terms with ``N`` the number of subsets plus 2, whose absolute values sum to at
    most ``A = (max_u sum_T |coeff_T| + n_samples + max own) vmax``. Its int64 sum is exact
    modulo 2^64. Its float64 copy converts each exact value (error ``u |value|``,
    ``u = 2^-53``), multiplies by an exact coefficient (another ``u``) and adds ``N``
    terms (each addition at most ``u A``), so its error is at most ``(N + 2) u A (1 + N
    u)``; the driver requires ``4 (N + 4) u A < 2^59``, twice that margin. Then a float
    difference of two keys is within ``2^60`` of the true one, which :func:`_key_cmp`
    needs (2^61 decides by the sign, else the wrapped difference is exact)."""
    if not len(rel) or M == 0:
        return None
    p_max = int(size.max())
    t_end = int(rel.max()) + sum(size.tolist()) + p_max
    if horizon is not None:
        t_end = min(t_end, int(horizon))
    if t_end * (t_end + 1) >= 2**63:
        return f"event times up to {t_end} s: t (t + 1) passes int64"
    if p_max >= 2**62:
        return f"a job of {p_max} s"
    vmax = M * t_end * (t_end + 1) // 2
    if vmax >= 2**62 or M * t_end >= 2**62:
        return f"psi_sp up to {vmax} ({M} machines, {t_end} s) passes 2^62"
    coeff = np.zeros((1, 0), np.int64) if rand is None else np.asarray(rand["coeff"])
    n_samples = 0 if rand is None else int(rand["n_samples"])
    w_coeff = int(np.abs(coeff).sum(axis=1).max()) if coeff.size else 0
    w_own = 0 if own is None or not len(own) else int(np.abs(np.asarray(own)).max())
    terms = coeff.shape[1] + 2
    A = (w_coeff + n_samples + w_own) * vmax
    if 4 * (terms + 4) * 2.0**-53 * float(A) >= 2.0**59:
        return f"REF's keys (float error bound over {terms} terms of up to {A}) pass 2^59"
    return None
