"""The compiled kernel of REF (Skowron & Rzadca, Fig. 1 with Fig. 3's ``psi_sp``; Sec. 3-4),
in numba, kept apart so that importing the package does not import numba:
:func:`coopsched.online.ref.driver.ref_schedule` imports this module on first use. The
algorithm, its exact arithmetic and its bounds are documented in
:mod:`coopsched.online.ref.driver`.
"""

from __future__ import annotations

import functools
import types
from typing import Any, NamedTuple

import numba
import numpy as np

from ..kernels import JIT_OPTIONS, _heap_pop, _heap_push, _pop2, _push2

_MASK = (1 << 32) - 1

# The layout of the kernel's state (module-level ints, which numba folds as constants at
# compile time). They live in this file, not in a module of their own, because numba's
# on-disk cache is invalidated by changes to the file that defines the kernel only.
#
# co[C, .]: one record per coalition C (values as of CO_LAST, brought to t in closed form)
CO_VALUE = 0  # v(C): psi_sp (Eq. 3) summed over C's jobs, as of CO_LAST
CO_WORK = 1  # unit parts processed by CO_LAST (the value of ``work``; psi_sp's slope)
CO_RUNNING = 2  # jobs running in C's schedule
CO_LAST = 3  # time of the last update of the three fields above
CO_FREE = 4  # free machines
CO_WAITING = 5  # waiting jobs
CO_WMASK = 6  # bitmask of the members with waiting jobs
CO_VISIT = 7  # the last event time at which C was visited (-1: never)
CO_SLOT = 8  # C's slot in mem (1, 2, ... for the simulated coalitions, in increasing order)
CO_FIELDS = 9
# mem[u, co[C, CO_SLOT], .]: one record per (member, simulated coalition), u's part of C's
# schedule; member-major, so that the records a completion walks (one member, many
# coalitions) lie in one slice of 40 bytes per simulated coalition (2.6 MB at k = 16, within
# a core's L2 cache) rather than over all k slices. Only the simulated coalitions have a
# slot: indexed by C itself, the slices spanned all 2^k coalitions and a window whose
# interchangeable idle organizations leave few coalitions simulated touched every page of
# them anyway (k = 20: 838 MB, twice the run time of the coalition-major layout before)
MEM_PSI = 0  # psi_u as of MEM_LAST
MEM_WORK = 1  # u's unit parts processed by MEM_LAST
MEM_LAST = 2  # time of the last update of the two fields above
MEM_RUNNING = 3  # u's jobs running in C
MEM_STARTED = 4  # u's jobs started in C (the position of u's next job in its queue)
MEM_FIELDS = 5
# stats[.]: counters the driver reports in ``Schedule.info``, and the run's outcome
ST_EVENTS = 0  # event times processed ("event_times")
ST_DECISIONS = 1  # coalitions that had to rank members ("decisions")
ST_DIRECT = 2  # event times that used Eq. (1) only ("direct_events")
ST_POTENTIAL = 3  # event times that computed the potential ("potential_events")
ST_T_END = 4  # the time the final values are taken at (horizon, or G's last completion)
ST_VISITS = 5  # coalition visits ("coalition_visits")
ST_READY = 6  # visits with free machines and waiting jobs ("coalition_ready")
ST_STARTS = 7  # jobs started over all coalitions ("coalition_starts")
ST_UNPROVEN = 8  # float-route decisions taken from Eq. (1) instead ("float_unproven")
ST_POOL_FULL = 9  # 1: the bucket pool ran out, the run stopped (the driver reruns it)
ST_SLOTS = 10
#: The counters the driver reports in ``Schedule.info``, by name.
STAT_NAMES = {
    "event_times": ST_EVENTS,
    "decisions": ST_DECISIONS,
    "direct_events": ST_DIRECT,
    "potential_events": ST_POTENTIAL,
    "coalition_visits": ST_VISITS,
    "coalition_starts": ST_STARTS,
    "coalition_ready": ST_READY,
    "float_unproven": ST_UNPROVEN,
}

# fco[., C]: the float route's copy of the fields of co[C, .] that the potential reads at
# every event time, as float64, one contiguous row per field (from the records it read one
# 64-byte line per coalition and converted integers: three times slower at k = 16): value,
# work and running count (each rounded once), and the time of the last update relative to
# the run's first release t0 (exact: on the compiled route every elapsed time is below
# 2^32, driver.plan_arithmetic). Refreshed wherever those fields change (:func:`_mirror`).
FL_VALUE = 0
FL_WORK = 1
FL_RUNNING = 2
FL_LAST = 3
FL_FIELDS = 4


# The closed forms of psi_sp (Eq. 3) and of work between events: with ``r`` jobs running
# from ``t`` to ``t + d`` and none starting or completing in between, the work grows by
# ``r d`` and psi_sp, which adds at every unit of time the work done so far (docs/
# conventions.md §1's integer form), by ``W d + r (1 + ... + d)``. Every record (a
# coalition's, a member's) and every value read at an event time goes through these.
# They are scalar functions of integers: on Python integers the kernel runs with their
# ``py_func`` (:func:`python_kernel`).


@numba.njit(**JIT_OPTIONS)
def _psi_sp_at(x0, x1, r, d):
    """psi_sp at ``t + d`` from psi_sp ``x0`` and work ``x1`` at ``t``, ``r`` jobs running."""
    return x0 + x1 * d + r * (d * (d + 1) // 2)


@numba.njit(**JIT_OPTIONS)
def _work_at(x1, r, d):
    """The work at ``t + d`` from the work ``x1`` at ``t``, ``r`` jobs running."""
    return x1 + r * d


@numba.njit(**JIT_OPTIONS)
def _value_at(utility, x0, x1, r, d):
    """The value at ``t + d`` of a record ``(x0, x1)`` at ``t``: psi_sp (``utility == 0``)
    or work (``utility == 1``)."""
    if utility == 0:
        return _psi_sp_at(x0, x1, r, d)
    return _work_at(x1, r, d)


@numba.njit(inline="always", **JIT_OPTIONS)
def _advance_coalition(co, C, t):
    """Coalition ``C``'s record (value, work) brought to ``t`` in closed form: the one
    update of a coalition's ``psi_sp`` (Eq. 3) between events."""
    d = int(t) - int(co[C, CO_LAST])
    if d > 0:
        r = int(co[C, CO_RUNNING])
        if co[C, CO_WORK] != 0 or r != 0:
            co[C, CO_VALUE] = _psi_sp_at(co[C, CO_VALUE], co[C, CO_WORK], r, d)
            co[C, CO_WORK] = _work_at(co[C, CO_WORK], r, d)
        co[C, CO_LAST] = t


@numba.njit(inline="always", **JIT_OPTIONS)
def _advance_member(mem, u, C, t):
    """Member ``u``'s record in ``C`` (``psi_u``, work) brought to ``t``: the one update of
    a member's ``psi_sp`` between events. It updates ``mem[u, C]`` (``C``: the coalition's
    slot, ``CO_SLOT``): the rigid kernel, whose records are ``mem[C, u]``, passes ``C``
    first."""
    d = int(t) - int(mem[u, C, MEM_LAST])
    if d > 0:
        r = int(mem[u, C, MEM_RUNNING])
        if r != 0 or mem[u, C, MEM_WORK] != 0:
            mem[u, C, MEM_PSI] = _psi_sp_at(mem[u, C, MEM_PSI], mem[u, C, MEM_WORK], r, d)
            mem[u, C, MEM_WORK] = _work_at(mem[u, C, MEM_WORK], r, d)
        mem[u, C, MEM_LAST] = t


#: the helpers the kernel calls with values (int64 or Python integers)
_VALUE_HELPERS = (
    "_psi_sp_at",
    "_work_at",
    "_value_at",
    "_record_value",
    "_advance_coalition",
    "_advance_member",
    "_values_at",
    "_simulated_values",
    "_subset_values",
    "_exact_potential",
    "_complete_jobs",
    "_release_jobs",
)


_U = 2.0**-53  # unit roundoff of float64
_CHUNK = 64  # deciding coalitions whose members' records pass 2 reads together


@numba.njit(**JIT_OPTIONS)
def _mirror(co, fco, t0, C):
    """Copy coalition ``C``'s value fields from its record to the float route's ``fco``
    (its time of last update relative to ``t0``)."""
    fco[FL_VALUE, C] = float(co[C, CO_VALUE])
    fco[FL_WORK, C] = float(co[C, CO_WORK])
    fco[FL_RUNNING, C] = float(co[C, CO_RUNNING])
    fco[FL_LAST, C] = float(co[C, CO_LAST] - t0)


@numba.njit(inline="always", **JIT_OPTIONS)
def _float_value(utility, fco, tf, S):
    """Coalition ``S``'s value at time ``tf`` (relative to the run's first release, as
    the times in ``fco``) in float64, in closed form from ``fco``.

    ``d = tf - last`` is exact (integers below 2^53); ``d (d + 1) / 2`` rounds once; the
    value is a sum of non-negative terms, each rounded at most four times in all, so its
    relative error is at most ``(1 + u)^4 - 1``
    (:func:`~coopsched.online.ref.driver.float_potential_error`).
    """
    d = tf - fco[FL_LAST, S]
    if utility == 0:
        return fco[FL_VALUE, S] + fco[FL_WORK, S] * d + fco[FL_RUNNING, S] * (d * (d + 1.0) * 0.5)
    return fco[FL_WORK, S] + fco[FL_RUNNING, S] * d


@numba.njit(**JIT_OPTIONS)
def _float_potential(k, t, utility, fco, t0, sym, canon, canon_list, rinv, pf, blocks):
    """The potential ``P(D)`` of every simulated coalition at ``t`` in float64, in ``pf``.

    Values come in closed form from the float copies of the coalitions' records
    (:func:`_float_value`); ``P(D) = (v(D) + sum_w P(D - w)) / |D|`` (Hart and
    Mas-Colell), the division a product with ``rinv[|D|] = 1 / |D|`` (rounded; a division
    per coalition cost more than the additions). Either over the simulated coalitions only
    (each ``P(D - w)`` read from ``D - w``'s stand-in), or, with ``blocks`` (``k >= 4``),
    over every coalition, in blocks of 16 that share their high bits (a coalition that is
    not simulated takes its stand-in's value, so its ``P`` is its stand-in's): the terms
    ``P(D - w)`` for high bits ``w`` are added to the whole block at once, into sixteen
    scalar accumulators (kept in registers), and the block's own four bits are written out,
    so that no loop has a data-dependent trip count (a mispredicted loop exit per
    coalition cost more than its additions). Every value is a sum of non-negative terms,
    so the relative error is bounded by
    :func:`coopsched.online.ref.driver.float_potential_error`, whatever the order.
    """
    NC = 1 << k
    tf = float(t - t0)
    pf[0] = 0.0
    if not blocks:
        for y in range(canon_list.shape[0]):
            D = canon_list[y]
            a = _float_value(utility, fco, tf, D)
            rest = D
            c = 0
            while rest != 0:
                w = rest & -rest
                a += pf[canon[D ^ w]]
                rest ^= w
                c += 1
            pf[D] = a * rinv[c]
        return
    for B in range(NC >> 4):
        base = B << 4
        if sym:  # a coalition that is not simulated reads its stand-in's record
            a0 = _float_value(utility, fco, tf, canon[base])
            a1 = _float_value(utility, fco, tf, canon[base + 1])
            a2 = _float_value(utility, fco, tf, canon[base + 2])
            a3 = _float_value(utility, fco, tf, canon[base + 3])
            a4 = _float_value(utility, fco, tf, canon[base + 4])
            a5 = _float_value(utility, fco, tf, canon[base + 5])
            a6 = _float_value(utility, fco, tf, canon[base + 6])
            a7 = _float_value(utility, fco, tf, canon[base + 7])
            a8 = _float_value(utility, fco, tf, canon[base + 8])
            a9 = _float_value(utility, fco, tf, canon[base + 9])
            a10 = _float_value(utility, fco, tf, canon[base + 10])
            a11 = _float_value(utility, fco, tf, canon[base + 11])
            a12 = _float_value(utility, fco, tf, canon[base + 12])
            a13 = _float_value(utility, fco, tf, canon[base + 13])
            a14 = _float_value(utility, fco, tf, canon[base + 14])
            a15 = _float_value(utility, fco, tf, canon[base + 15])
        else:
            a0 = _float_value(utility, fco, tf, base)
            a1 = _float_value(utility, fco, tf, base + 1)
            a2 = _float_value(utility, fco, tf, base + 2)
            a3 = _float_value(utility, fco, tf, base + 3)
            a4 = _float_value(utility, fco, tf, base + 4)
            a5 = _float_value(utility, fco, tf, base + 5)
            a6 = _float_value(utility, fco, tf, base + 6)
            a7 = _float_value(utility, fco, tf, base + 7)
            a8 = _float_value(utility, fco, tf, base + 8)
            a9 = _float_value(utility, fco, tf, base + 9)
            a10 = _float_value(utility, fco, tf, base + 10)
            a11 = _float_value(utility, fco, tf, base + 11)
            a12 = _float_value(utility, fco, tf, base + 12)
            a13 = _float_value(utility, fco, tf, base + 13)
            a14 = _float_value(utility, fco, tf, base + 14)
            a15 = _float_value(utility, fco, tf, base + 15)
        rest = B
        cB = 0  # |B|, the members among the high bits
        while rest != 0:
            w = rest & -rest
            ob = (B ^ w) << 4
            a0 += pf[ob]
            a1 += pf[ob + 1]
            a2 += pf[ob + 2]
            a3 += pf[ob + 3]
            a4 += pf[ob + 4]
            a5 += pf[ob + 5]
            a6 += pf[ob + 6]
            a7 += pf[ob + 7]
            a8 += pf[ob + 8]
            a9 += pf[ob + 9]
            a10 += pf[ob + 10]
            a11 += pf[ob + 11]
            a12 += pf[ob + 12]
            a13 += pf[ob + 13]
            a14 += pf[ob + 14]
            a15 += pf[ob + 15]
            rest ^= w
            cB += 1
        r1 = rinv[cB + 1]
        r2 = rinv[cB + 2]
        r3 = rinv[cB + 3]
        p0 = a0 * rinv[cB]  # rinv[0] = 0: the empty coalition's P is 0
        p1 = (a1 + p0) * r1
        p2 = (a2 + p0) * r1
        p4 = (a4 + p0) * r1
        p8 = (a8 + p0) * r1
        p3 = (a3 + p1 + p2) * r2
        p5 = (a5 + p1 + p4) * r2
        p6 = (a6 + p2 + p4) * r2
        p9 = (a9 + p1 + p8) * r2
        p10 = (a10 + p2 + p8) * r2
        p12 = (a12 + p4 + p8) * r2
        p7 = (a7 + p3 + p5 + p6) * r3
        p11 = (a11 + p3 + p9 + p10) * r3
        p13 = (a13 + p5 + p9 + p12) * r3
        p14 = (a14 + p6 + p10 + p12) * r3
        p15 = (a15 + p7 + p11 + p13 + p14) * rinv[cB + 4]
        pf[base] = p0
        pf[base + 1] = p1
        pf[base + 2] = p2
        pf[base + 3] = p3
        pf[base + 4] = p4
        pf[base + 5] = p5
        pf[base + 6] = p6
        pf[base + 7] = p7
        pf[base + 8] = p8
        pf[base + 9] = p9
        pf[base + 10] = p10
        pf[base + 11] = p11
        pf[base + 12] = p12
        pf[base + 13] = p13
        pf[base + 14] = p14
        pf[base + 15] = p15


def reciprocals(k: int) -> np.ndarray:
    """``rinv[c] = 1 / c`` rounded to float64 for ``c = 1 .. k + 4`` and ``rinv[0] = 0``:
    :func:`_float_potential`'s divisions by ``|D|``, as products."""
    rinv = np.zeros(k + 5)
    rinv[1:] = 1.0 / np.arange(1, k + 5)
    return rinv


@numba.njit(**JIT_OPTIONS)
def _certified_ranks(pf, C, c, wl, nw, psi_f, eta, rule, lo, hi, cls, ordx, rk, off):
    """Rank ``C``'s waiting members by ``phi_u - psi_u`` from the float potential, or
    return False when the float keys cannot prove the exact order.

    For member ``x`` the key is ``K = P(C) - P(C - u) - psi_u`` (``rule == 0``) or its
    image under the clamp ``min(max(K + 1/c, 0), 1)``, which orders as Fig. 1's
    ``Distance`` does (``rule == 1``). Each key gets an interval ``[lo, hi]`` that holds
    its exact value: the float key plus or minus ``eta (P(C) + P(C - u) + psi_u)`` and
    the rounding of the last operations. ``cls`` marks keys whose exact value is known
    and shared by every member of the class: 1, every value in ``C`` and ``psi_u`` are 0
    (``K = 0``); 2 and 3, the clamp's lower and upper ends. Members are sorted by the
    intervals' midpoints (stable); every adjacent pair must be proven strictly ordered
    (``lo`` of the upper one above ``hi`` of the lower one) or proven equal (same
    non-zero class). Then the order is the exact one and ``rk[x]`` holds ranks (larger
    first, equal for exact ties, which the caller breaks by index as the exact keys do),
    at ``rk[off + x]``.
    """
    inv_c = 1.0 / c
    for x in range(nw):
        pC = pf[C]
        pU = pf[C ^ (1 << wl[x])]
        ps = psi_f[x]
        kf = (pC - pU) - ps
        tot = pC + pU + ps
        e = eta * tot + 8.0 * _U * (abs(kf) + 2.0)
        cl = 0
        if rule == 0:
            lo[x] = kf - e
            hi[x] = kf + e
            if tot == 0.0:
                cl = 1
                lo[x] = 0.0
                hi[x] = 0.0
        elif tot == 0.0:  # K = 0: the key is 1/c, the same for every member
            cl = 1
            lo[x] = inv_c * (1.0 - 4.0 * _U)
            hi[x] = inv_c * (1.0 + 4.0 * _U)
        else:
            yl = kf + inv_c - e
            yh = kf + inv_c + e
            if yh <= 0.0:
                cl = 2
                lo[x] = 0.0
                hi[x] = 0.0
            elif yl >= 1.0:
                cl = 3
                lo[x] = 1.0
                hi[x] = 1.0
            else:
                lo[x] = max(yl, 0.0)
                hi[x] = min(yh, 1.0)
        cls[x] = cl
    for x in range(nw):  # insertion sort by midpoint, largest first, stable
        m = lo[x] + hi[x]
        y = x
        while y > 0 and lo[ordx[y - 1]] + hi[ordx[y - 1]] < m:
            ordx[y] = ordx[y - 1]
            y -= 1
        ordx[y] = x
    rk[off + ordx[0]] = nw
    for y in range(1, nw):
        a = ordx[y - 1]
        b = ordx[y]
        if cls[a] != 0 and cls[a] == cls[b]:
            rk[off + b] = rk[off + a]
        elif lo[a] > hi[b]:
            rk[off + b] = rk[off + a] - 1
        else:
            return False
    return True


# The kernel's arguments in named groups (typing.NamedTuple classes: numba passes them as
# tuples of arrays and scalars); the kernel unpacks them once, into locals, before its
# loops, so its body reads as before and no array is reassigned inside a loop.


class Run(NamedTuple):
    """The run's scalars."""

    k: int  # organizations
    has_T: bool  # whether there is a horizon
    T: Any  # the horizon (np.int64; 0 without one)
    utility: int  # 0 psi_sp (Fig. 3), 1 work
    rule: int  # 0 Fig. 3's phi - psi, 1 Fig. 1's Distance
    mode: int  # Shapley values: 0 auto, 1 Eq. (1), 2 potential, 3 float potential
    ecap: int  # capacity of the completion entries (live (coalition, run) pairs + 1)
    bcap: int  # capacity of the completion buckets
    cost_pot: int  # the exact potential's cost, in additions
    anypin: bool  # whether any job is pinned (docs/conventions.md §5)
    do_final: bool  # whether to compute every coalition's value at the end


class Jobs(NamedTuple):
    """The jobs, in FIFO order, and the organizations' queues."""

    machines: np.ndarray  # machines per organization
    rel: np.ndarray  # release times
    size: np.ndarray  # sizes
    org: np.ndarray  # owners
    org_ptr: np.ndarray  # org_jobs[org_ptr[u]:org_ptr[u + 1]] is u's queue
    org_jobs: np.ndarray
    run_end: np.ndarray  # runs of identical jobs (driver.job_runs)
    run_head: np.ndarray
    pinned: np.ndarray  # pinned jobs (bool)


class Coalitions(NamedTuple):
    """The coalitions: sizes, simulated stand-ins, release visits, machines."""

    pc: np.ndarray  # popcounts
    canon: np.ndarray  # every coalition's simulated stand-in (driver.canonical_coalitions)
    canon_list: np.ndarray  # the simulated coalitions, increasing
    rel_ptr: np.ndarray  # rel_idx[rel_ptr[u]:rel_ptr[u + 1]]: those u's releases visit
    rel_idx: np.ndarray
    mC: np.ndarray  # machines per coalition


class Arith(NamedTuple):
    """Exact arithmetic (driver module docstring, "Exact arithmetic")."""

    L: Any  # lcm(1..k), np.int64 or a Python integer
    omega: np.ndarray  # Eq. (1)'s integer weights (shapley.shapley_weights)
    python_ints: bool  # running as plain Python on Python integers (python_kernel)
    one_word: bool  # Shapley sums fit one int64 word
    dtz: np.ndarray  # exact division by c <= k (driver._exact_division)
    dodd: np.ndarray
    dinv32: np.ndarray
    dinv64: np.ndarray


class FloatRoute(NamedTuple):
    """The float potential and its proven decisions (driver module docstring)."""

    filt: bool  # whether the float route is on
    pf: np.ndarray  # P(D) in float64
    fco: np.ndarray  # fco[FL_*, C]: float copies of the records' value fields
    t0: Any  # the run's first release (np.int64): fco's times are relative to it
    rinv: np.ndarray  # 1 / |D| by |D| (reciprocals)
    eta: float  # the error bound (driver.float_potential_error)
    cost_fpot: int  # its cost, in additions
    fblocks: bool  # the lattice in blocks of 16


class State(NamedTuple):
    """The records and the Shapley buffers."""

    mem: np.ndarray  # mem[u, co[C, CO_SLOT], MEM_*]
    co: np.ndarray  # co[C, CO_*]
    vv: np.ndarray  # values at the current event
    qh: np.ndarray  # the exact potential's (or sums') high words
    ql: np.ndarray  # and low words


class Outputs(NamedTuple):
    """What the run returns, and the checkpoints it evaluates."""

    final_v: np.ndarray  # every coalition's value at the end
    out_start: np.ndarray  # the grand coalition's starts (FIFO order)
    out_machine: np.ndarray  # and machines
    stats: np.ndarray  # stats[ST_*]
    cps: np.ndarray  # checkpoint times
    cp_vals: np.ndarray  # cp_vals[i, S]: v(S) at cps[i]


@numba.njit(inline="always", **JIT_OPTIONS)
def _record_value(utility, co, X, t):
    """``v(X)`` at ``t`` (not before its last update) from coalition ``X``'s record, in
    closed form; both REF kernels read values through it."""
    d = max(int(t) - int(co[X, CO_LAST]), 0)
    return _value_at(utility, co[X, CO_VALUE], co[X, CO_WORK], int(co[X, CO_RUNNING]), d)


@numba.njit(**JIT_OPTIONS)
def _values_at(utility, co, canon, t, dst):
    """Every coalition's value at ``t`` in ``dst`` (``dst[S]`` from the record of ``S``'s
    stand-in ``canon[S]``, in closed form: checkpoints and the final values)."""
    for S in range(canon.shape[0]):
        dst[S] = _record_value(utility, co, canon[S], t)


@numba.njit(**JIT_OPTIONS)
def _simulated_values(utility, co, canon_list, t, vv):
    """Every simulated coalition's exact value at ``t``, in ``vv`` (the exact potential's
    input)."""
    for y in range(canon_list.shape[0]):
        S = canon_list[y]
        d = int(t) - int(co[S, CO_LAST])
        r = int(co[S, CO_RUNNING])
        vv[S] = _value_at(utility, co[S, CO_VALUE], co[S, CO_WORK], r, d)


@numba.njit(inline="always", **JIT_OPTIONS)
def _subset_values(t, ev, utility, co, canon, sym, ready, nready, decide, pot, vv, vstamp):
    """The exact values at ``t`` of the subsets of the deciding coalitions that Eq. (1)
    needs, each once per event ``ev`` (a subset that is not simulated takes its simulated
    twin's); on the float route (``pot``), only those of the coalitions whose order it
    did not prove (``decide == 2``)."""
    for a in range(nready):
        if decide[a] == 0 or (pot and decide[a] == 1):
            continue
        top = ready[a]
        S = top
        while True:
            if vstamp[S] != ev:
                vstamp[S] = ev
                X = canon[S] if sym else S
                if X != S and vstamp[X] == ev:
                    vv[S] = vv[X]
                else:
                    vstamp[X] = ev
                    d = int(t) - int(co[X, CO_LAST])
                    r = int(co[X, CO_RUNNING])
                    v = _value_at(utility, co[X, CO_VALUE], co[X, CO_WORK], r, d)
                    vv[X] = v
                    vv[S] = v
            if S == 0:
                break
            S = (S - 1) & top


@numba.njit(**JIT_OPTIONS)
def _exact_potential(coal, arith, sym, vv, qh, ql, zero):
    """Hart and Mas-Colell's potential of every simulated coalition in exact integers,
    scaled by ``L`` (``L P(D)`` in the words ``qh[D]``, ``ql[D]``), from the values in
    ``vv`` (driver module docstring: the arithmetic and its bounds)."""
    canon = coal.canon
    canon_list = coal.canon_list
    pc = coal.pc
    L = arith.L
    one_word = arith.one_word
    python_ints = arith.python_ints
    dtz = arith.dtz
    dodd = arith.dodd
    dinv32 = arith.dinv32
    dinv64 = arith.dinv64
    NC = canon.shape[0]
    ncl = canon_list.shape[0]
    qh[0] = zero
    ql[0] = zero
    for y in range(ncl if one_word and sym else 0):
        # one word suffices (plan_arithmetic): L P(D) = (L v(D) + sum_w
        # L P(D - w)) / |D|, divided exactly by the odd part's inverse; only
        # simulated coalitions (D - w's twin is simulated and smaller)
        D = canon_list[y]
        h = L * vv[D]
        rest = D
        while rest != 0:
            w = rest & -rest
            h += qh[canon[D ^ w]]
            rest ^= w
        c = int(pc[D])
        qh[D] = np.int64(np.uint64(h >> dtz[c]) * dinv64[c])
    for D in range(1, NC if one_word and not sym else 0):
        # the same when every coalition is simulated (no lookups)
        h = L * vv[D]
        rest = D
        while rest != 0:
            w = rest & -rest
            h += qh[D ^ w]
            rest ^= w
        c = int(pc[D])
        qh[D] = np.int64(np.uint64(h >> dtz[c]) * dinv64[c])
    for y in range(ncl if one_word else 0, ncl):  # two words
        D = canon_list[y]
        h = L * (vv[D] >> 32)
        lo = L * (vv[D] & _MASK)
        rest = D
        if sym:
            while rest != 0:
                w = rest & -rest
                X = canon[D ^ w]
                h += qh[X]
                lo += ql[X]
                rest ^= w
        else:  # every coalition is simulated: no lookups
            while rest != 0:
                w = rest & -rest
                h += qh[D ^ w]
                lo += ql[D ^ w]
                rest ^= w
        h += lo >> 32
        lo &= _MASK
        c = int(pc[D])
        if python_ints:  # exact Python integers: plain division
            hq = h // c
            lo = ((h - hq * c) << 32) + lo
            qh[D] = hq
            ql[D] = lo // c
        else:  # exact division without idiv (see _exact_division)
            a = dtz[c]
            if a > 0:
                lo = (lo >> a) | ((h & ((1 << a) - 1)) << (32 - a))
                h = h >> a
            qlo = np.int64((np.uint64(lo) * np.uint64(dinv32[c])) & np.uint64(_MASK))
            h += (lo - dodd[c] * qlo) >> 32
            qh[D] = np.int64(np.uint64(h) * dinv64[c])
            ql[D] = qlo


@numba.njit(**JIT_OPTIONS)
def _float_decisions(t, utility, rule, co, mem, ready, nready, decide, pc, bitpos, fl, fbuf, stats):
    """Pass 2 on the float route: every deciding coalition's waiting members ranked from
    the float potential in ``fl.pf`` where :func:`_certified_ranks` proves the order (ranks
    in ``f_rk`` from ``f_off[a]``), else marked ``decide[a] = 2`` (Eq. (1) on exact values).
    The members' ``psi`` at ``t`` are read a chunk of deciding coalitions at a time: first
    every record of the chunk (in closed form, not written back: pass 3 brings the records
    it changes to ``t``), reads that miss the caches and, independent of each other,
    overlap; then each decision."""
    g_a, g_s, g_u, g_psi, f_lo, f_hi, f_cls, f_ord, f_rk, f_off = fbuf
    pf = fl.pf
    eta = fl.eta
    off = np.int64(0)
    a = 0
    while a < nready:
        ng = 0
        nm = 0
        while a < nready and ng < _CHUNK:
            if decide[a] != 0:
                C = ready[a]
                ci = co[C, CO_SLOT]  # C's member records
                g_a[ng] = a
                g_s[ng] = nm
                rest = co[C, CO_WMASK]
                while rest != 0:  # the waiting members, lowest index first
                    w = rest & -rest
                    rest ^= w
                    u = bitpos[w % 37]
                    d = t - mem[u, ci, MEM_LAST]
                    r = mem[u, ci, MEM_RUNNING]
                    x = _value_at(utility, mem[u, ci, MEM_PSI], mem[u, ci, MEM_WORK], r, d)
                    g_psi[nm] = float(x)
                    g_u[nm] = u
                    nm += 1
                ng += 1
            a += 1
        g_s[ng] = nm
        for y in range(ng):
            b = g_a[y]
            C = ready[b]
            s0 = g_s[y]
            nw = g_s[y + 1] - s0
            f_off[b] = off
            if _certified_ranks(
                pf,
                C,
                pc[C],
                g_u[s0:],
                nw,
                g_psi[s0:],
                eta,
                rule,
                f_lo,
                f_hi,
                f_cls,
                f_ord,
                f_rk,
                off,
            ):
                off += nw
            else:
                decide[b] = 2
                stats[ST_UNPROVEN] += 1


@numba.njit(inline="always", **JIT_OPTIONS)
def _complete_jobs(t, bh, bn, b_u, b_head, b_next, bfree, ent, co, mem, vis, nvis):
    """The completions at ``t``, in one walk over each bucket ending then (a job and its
    start time, with the coalitions that ran it): each coalition is visited, its value
    brought to ``t`` at its first completion, each member's before its running count
    drops; the entries and buckets freed. Returns the buckets' heap size, the free list's
    head and the visited list's length."""
    while bn > 0 and bh[0, 0] == t:
        b = bh[1, 0]
        bn = _pop2(bh, 0, bn)
        u = b_u[b]
        e = b_head[b]
        while e >= 0:
            C = ent[e, 0]
            ci = co[C, CO_SLOT]  # C's member records
            if co[C, CO_VISIT] != t:
                co[C, CO_VISIT] = t
                vis[nvis] = C
                nvis += 1
                _advance_coalition(co, C, t)
            _advance_member(mem, u, ci, t)
            c = ent[e, 2]
            mem[u, ci, MEM_RUNNING] -= c
            co[C, CO_RUNNING] -= c
            co[C, CO_FREE] += c
            ent[e, 2] = 0
            e = ent[e, 1]
        b_next[b] = bfree
        bfree = b
    return bn, bfree, nvis


@numba.njit(inline="always", **JIT_OPTIONS)
def _release_jobs(t, i, rel, org, relcnt, nrel, rel_ptr, rel_idx, co, vis, nvis):
    """The releases at ``t`` (jobs ``i`` on in FIFO order): each member's waiting jobs
    counted in every simulated coalition that holds it (and some machine), those with a
    free machine visited (a release changes no value). Returns the next job and the
    visited list's length."""
    n = rel.shape[0]
    k = relcnt.shape[0]
    relmask = 0
    while i < n and rel[i] == t:
        u = org[i]
        if (relmask >> u) & 1 == 0:
            relcnt[u] = 0
        relcnt[u] += 1
        relmask |= 1 << u
        i += 1
    if relmask != 0:
        for u in range(k):
            if (relmask >> u) & 1 == 0:
                continue
            ub = 1 << u
            cnt = relcnt[u]
            nrel[u] += cnt
            # every simulated coalition containing u (and some machine)
            for y in range(rel_ptr[u], rel_ptr[u + 1]):
                C = rel_idx[y]
                co[C, CO_WMASK] |= ub  # u has waiting jobs in C now
                co[C, CO_WAITING] += cnt
                # a release changes no value: only a coalition with a free
                # machine has something to decide
                if co[C, CO_VISIT] != t and co[C, CO_FREE] > 0:
                    co[C, CO_VISIT] = t
                    vis[nvis] = C
                    nvis += 1
    return i, nvis


@numba.njit(**JIT_OPTIONS)
def _ref_kernel(run, jobs, coal, arith, fl, state, out):
    """Every simulated coalition's REF schedule in lockstep (Fig. 1 run in each coalition,
    Fig. 3's ``psi_sp``), one event time at a time: checkpoints due (:func:`_values_at`);
    completions (:func:`_complete_jobs`) and releases (:func:`_release_jobs`), which visit
    the coalitions they change; the visited coalitions' values brought to ``t``; pass 1,
    the coalitions with free machines and waiting jobs, and among them those that must
    choose between members; pass 2, the Shapley values those choices need, by Eq. (1) on
    exact values (:func:`_subset_values`) or from the potential, in float64 with proven
    decisions (:func:`_float_potential`, :func:`_float_decisions`) or exact
    (:func:`_exact_potential`), whichever costs less at this event; pass 3, each ready
    coalition serves its members by key and starts their jobs (inline: per coalition, a
    helper call's reference counting of the records cost more than the work, measured 3 to
    5 times slower); then every coalition's value at the end (:func:`_values_at`).
    Arguments are the named records above; results are written to ``out``."""
    k = run.k
    has_T = run.has_T
    T = run.T
    utility = run.utility
    rule = run.rule
    mode = run.mode
    ecap = run.ecap
    bcap = run.bcap
    cost_pot = run.cost_pot
    anypin = run.anypin
    do_final = run.do_final
    machines = jobs.machines
    rel = jobs.rel
    size = jobs.size
    org = jobs.org
    org_ptr = jobs.org_ptr
    org_jobs = jobs.org_jobs
    run_end = jobs.run_end
    run_head = jobs.run_head
    pinned = jobs.pinned
    pc = coal.pc
    canon = coal.canon
    canon_list = coal.canon_list
    rel_ptr = coal.rel_ptr
    rel_idx = coal.rel_idx
    mC = coal.mC
    L = arith.L
    omega = arith.omega
    one_word = arith.one_word
    filt = fl.filt
    pf = fl.pf
    rinv = fl.rinv
    cost_fpot = fl.cost_fpot
    fblocks = fl.fblocks
    fco = fl.fco
    t0 = fl.t0
    mem = state.mem
    co = state.co
    vv = state.vv
    qh = state.qh
    ql = state.ql
    final_v = out.final_v
    out_start = out.out_start
    out_machine = out.out_machine
    stats = out.stats
    cps = out.cps
    cp_vals = out.cp_vals
    NC = 1 << k
    sym = canon_list.shape[0] < NC - 1  # some coalitions stand for others
    G = NC - 1
    n = rel.shape[0]
    # counters handed to the helpers start at a typed zero: a literal 0 makes numba
    # compile each helper it reaches a second time, for Literal[int](0)
    M = np.int64(0)
    for u in range(k):
        M += machines[u]
    for C in range(NC):
        co[C, CO_FREE] = mC[C]  # free machines
        co[C, CO_VISIT] = -1  # last visit
    # completion buckets: one per (job, start time), holding a list of coalitions
    b_time = np.zeros(bcap, np.int64)
    b_u = np.zeros(bcap, np.int64)
    b_head = np.full(bcap, -1, np.int64)
    b_next = np.arange(1, bcap + 1).astype(np.int64)
    b_next[bcap - 1] = -1
    bfree = np.int64(0)
    bh = np.zeros((2, bcap), np.int64)  # completion heap: (end, bucket)
    bn = np.int64(0)
    bstamp = np.full(max(n, 1), -1, np.int64)
    bid = np.zeros(max(n, 1), np.int64)
    # (coalition, next entry of the bucket, jobs started together; 0 marks a free slot),
    # taken in address order by a cursor that skips live slots: the entries one event
    # adds lie close together, so walking a bucket reads neighbouring memory (a free
    # list scattered them over the pool and made every step a cache miss); at most
    # ecap - 1 are live, so with half as many slots again the cursor skips at most two
    # live slots per entry taken, on average over a turn of the pool
    ecap2 = ecap + ecap // 2 + 1
    ent = np.zeros((ecap2, 3), np.int32)
    ecur = 0
    # the grand coalition's machines: free ones (min-heap of ids), busy ones (end, id)
    MM = max(M, 1)
    fheap = np.arange(MM).astype(np.int64).reshape(1, MM)
    fsize = M
    mh = np.zeros((2, MM), np.int64)  # busy machines: (end, machine)
    mn = np.int64(0)
    nrel = np.zeros(k, np.int64)
    relcnt = np.zeros(k, np.int64)
    vis = np.zeros(NC, np.int64)
    ready = np.zeros(NC, np.int64)
    decide = np.zeros(NC, np.int64)
    vstamp = np.full(NC, -1, np.int64)  # the event at which vv[S] was last computed
    kh = qh[:k].copy()  # same dtype as the values (int64 or Python ints)
    kl = qh[:k].copy()
    zero = qh[0] * 0
    done = np.zeros(k, np.int64)
    wl = np.zeros(k, np.int64)
    bitpos = np.zeros(37, np.int64)  # bitpos[2^u mod 37] = u (distinct residues for u < 36)
    for u in range(k):
        bitpos[(1 << u) % 37] = u
    # the float route's keys (see _certified_ranks)
    f_lo = np.zeros(k)
    f_hi = np.zeros(k)
    f_cls = np.zeros(k, np.int64)
    f_ord = np.zeros(k, np.int64)
    # pass 2's chunks: the deciding coalitions' indices (in ready), where their members
    # start in the chunk, the members and their psi in float64
    g_a = np.zeros(_CHUNK, np.int64)
    g_s = np.zeros(_CHUNK + 1, np.int64)
    g_u = np.zeros(_CHUNK * k, np.int64)
    g_psi = np.zeros(_CHUNK * k)
    # ranks proven in pass 2, per deciding coalition from f_off[a], for pass 3
    f_rk = np.zeros((canon_list.shape[0] + 1) * k if filt else 1, np.int8)
    f_off = np.zeros(NC if filt else 1, np.int64)
    fbuf = (g_a, g_s, g_u, g_psi, f_lo, f_hi, f_cls, f_ord, f_rk, f_off)
    i = np.int64(0)
    ev = 0
    t_last = 0
    g_end = np.int64(0)  # the grand coalition's last completion so far (typed: not a literal)
    g_done = False  # without a horizon: the values were taken at its last completion
    ncp = cps.shape[0]
    cp = 0
    while True:
        has = False
        t = 0
        if i < n:
            t = rel[i]
            has = True
        if bn > 0 and (not has or bh[0, 0] < t):
            t = bh[0, 0]
            has = True
        # without a horizon the run ends at the grand coalition's last completion (the
        # schedule's end, docs/conventions.md): once every job is released and started in
        # it, every event up to that time is processed when the next one is later
        if (
            not has_T
            and not g_done
            and i >= n
            and co[G, CO_WAITING] == 0
            and (not has or t > g_end)
        ):
            g_done = True
            if do_final:
                _values_at(utility, co, canon, g_end, final_v)
        # checkpoints up to this event: every coalition's value in closed form from its
        # last update (all earlier events are processed; jobs starting at t add 0 at t)
        while has and cp < ncp and cps[cp] <= t:
            _values_at(utility, co, canon, cps[cp], cp_vals[cp])
            cp += 1
        if not has or (has_T and t >= T):
            break
        stats[ST_EVENTS] += 1
        ev += 1
        t_last = t
        nvis = np.int64(0)
        # completions at t, then releases
        bn, bfree, nvis = _complete_jobs(
            t, bh, bn, b_u, b_head, b_next, bfree, ent, co, mem, vis, nvis
        )
        i, nvis = _release_jobs(t, i, rel, org, relcnt, nrel, rel_ptr, rel_idx, co, vis, nvis)
        stats[ST_VISITS] += nvis
        # bring the visited coalitions' values to t (members are brought lazily, when
        # their running count changes or their utility is needed)
        for a in range(nvis):
            C = vis[a]
            _advance_coalition(co, C, t)
            if filt:  # every record that changed at t was visited
                _mirror(co, fco, t0, C)
        while mn > 0 and mh[0, 0] == t:
            m = mh[1, 0]
            mn = _pop2(mh, 0, mn)
            fsize = _heap_push(fheap, 0, fsize, m)
        # pass 1: who has free machines and waiting jobs, and who must choose
        nready = np.int64(0)
        for a in range(nvis):
            C = vis[a]
            if co[C, CO_FREE] == 0 or co[C, CO_WAITING] == 0:
                continue
            ready[nready] = C
            wm = co[C, CO_WMASK]
            decide[nready] = 1 if (wm & (wm - 1) != 0 and co[C, CO_FREE] < co[C, CO_WAITING]) else 0
            nready += 1
        if nready == 0:
            continue
        stats[ST_READY] += nready
        # pass 2: the values (two words each) and, if cheaper, the potential
        # Eq. (1) costs 2^(|C|-1) terms per deciding member plus the values of C's
        # subsets; the potential, k 2^(k-1) additions plus every coalition's value; in
        # units of one potential addition, a term of Eq. (1) costs about 2 and a value 3
        # (measured: 1.6, 0.9 and 2.7 ns at k = 16)
        ndec = 0
        costA = 0
        for a in range(nready):
            if decide[a] == 1:
                ndec += 1
                C = ready[a]
                costA += 3 * (1 << pc[C]) + 2 * pc[co[C, CO_WMASK]] * (1 << (pc[C] - 1))
        pot = False
        if ndec > 0:
            stats[ST_DECISIONS] += ndec
            costP = cost_fpot if filt else cost_pot
            pot = mode >= 2 or (mode == 0 and costP < costA)
            if pot and filt:
                # the float potential, then every decision it proves; the others are
                # marked (decide 2) and take Eq. (1) on exact values below
                stats[ST_POTENTIAL] += 1
                _float_potential(k, t, utility, fco, t0, sym, canon, canon_list, rinv, pf, fblocks)
                _float_decisions(
                    t, utility, rule, co, mem, ready, nready, decide, pc, bitpos, fl, fbuf, stats
                )
            if pot and not filt:  # every simulated coalition's value
                _simulated_values(utility, co, canon_list, t, vv)
            else:  # those of the deciding coalitions' subsets that need them
                _subset_values(
                    t, ev, utility, co, canon, sym, ready, nready, decide, pot, vv, vstamp
                )
            if pot and not filt:
                stats[ST_POTENTIAL] += 1
                _exact_potential(coal, arith, sym, vv, qh, ql, zero)
            elif not pot:
                stats[ST_DIRECT] += 1
        # pass 3: rank the waiting members and start jobs
        for a in range(nready):
            C = ready[a]
            ci = co[C, CO_SLOT]  # C's member records
            nw = 0
            rest = co[C, CO_WMASK]
            while rest != 0:  # the waiting members, lowest index first
                w = rest & -rest
                rest ^= w
                wl[nw] = bitpos[w % 37]
                nw += 1
            c = int(pc[C])
            proven = pot and filt and decide[a] == 1  # ranks proven in pass 2
            for x in range(nw):
                done[x] = 0
                kh[x] = zero
                kl[x] = zero
                if decide[a] == 0:
                    continue
                if proven:
                    kh[x] = zero + f_rk[f_off[a] + x]
                    continue
                u = wl[x]
                ub = 1 << u
                xh = zero
                xl = zero
                if pot and not filt:
                    # C - u is simulated too: u has jobs, so it is nobody's twin
                    xh = qh[C] - qh[C ^ ub]
                    xl = ql[C] - ql[C ^ ub]
                elif one_word:
                    rest = C ^ ub
                    s = rest
                    while True:
                        xh += int(omega[c, pc[s]]) * (vv[s | ub] - vv[s])
                        if s == 0:
                            break
                        s = (s - 1) & rest
                else:
                    rest = C ^ ub
                    s = rest
                    while True:
                        wgt = int(omega[c, pc[s]])
                        # a marginal contribution fits a word (values are below
                        # 2^62); it is split into words only to be summed
                        dv = vv[s | ub] - vv[s]
                        xh += wgt * (dv >> 32)
                        xl += wgt * (dv & _MASK)
                        if s == 0:
                            break
                        s = (s - 1) & rest
                _advance_member(mem, u, ci, t)
                psi = mem[u, ci, MEM_PSI] if utility == 0 else mem[u, ci, MEM_WORK]
                if one_word:  # the whole key in xh: split it into the two words
                    xh -= L * psi
                    xl = xh & _MASK
                    xh >>= 32
                else:
                    xh -= L * (psi >> 32)
                    xl -= L * (psi & _MASK)
                    xh += xl >> 32
                    xl &= _MASK
                if rule == 0:
                    kh[x] = xh
                    kl[x] = xl
                else:
                    # |y| - |y - L| with y = X + L/c: -L below 0, L above L, else 2y - L
                    yl = xl + L // c
                    yh = xh + (yl >> 32)
                    yl &= _MASK
                    if yh < 0:
                        kl[x] = -L
                    elif yh > 0:
                        kl[x] = L
                    else:
                        kl[x] = abs(yl) - abs(yl - L)
            # pinned queue heads first (docs/conventions.md §5), oldest FIFO position first, then
            # the largest key first; ties go to the member whose oldest waiting job is older
            pin = anypin
            u = -1
            while co[C, CO_FREE] > 0:
                if pin:
                    u = -1
                    bpos = n
                    for x in range(nw):
                        w = wl[x]
                        if (co[C, CO_WMASK] >> w) & 1:
                            q = org_jobs[org_ptr[w] + mem[w, ci, MEM_STARTED]]
                            if pinned[q] and q < bpos:
                                bpos = q
                                u = w
                    if u < 0:
                        pin = False
                        continue
                elif u < 0 or (co[C, CO_WMASK] >> u) & 1 == 0:
                    best = -1
                    hb = n
                    for x in range(nw):
                        if done[x] != 0:
                            continue
                        w = wl[x]
                        # ties go to the older queue head (docs/conventions.md)
                        hx = n
                        if (co[C, CO_WMASK] >> w) & 1:
                            hx = org_jobs[org_ptr[w] + mem[w, ci, MEM_STARTED]]
                        if (
                            best < 0
                            or kh[x] > kh[best]
                            or (
                                kh[x] == kh[best]
                                and (kl[x] > kl[best] or (kl[x] == kl[best] and hx < hb))
                            )
                        ):
                            best = x
                            hb = hx
                    if best < 0:
                        break
                    done[best] = 1
                    u = wl[best]
                    continue
                # the rest of a run of identical jobs (consecutive in FIFO order, same
                # owner, release, size and pin) starts at once, as far as machines go
                x0 = org_ptr[u] + mem[u, ci, MEM_STARTED]
                cnt = min(co[C, CO_FREE], run_end[x0] - x0)
                pos = run_head[x0]
                mem[u, ci, MEM_STARTED] += cnt
                co[C, CO_WAITING] -= cnt
                if nrel[u] == mem[u, ci, MEM_STARTED]:
                    co[C, CO_WMASK] ^= 1 << u
                p = size[pos]
                # a job that cannot complete before the horizon ends "at T": never popped
                end = T if has_T and p >= T - t else t + p
                if bstamp[pos] != ev:
                    if bfree < 0:  # bucket pool full: the caller reruns with more
                        stats[ST_POOL_FULL] = 1
                        return
                    b = bfree
                    bfree = b_next[b]
                    b_time[b] = end
                    b_u[b] = u
                    b_head[b] = -1
                    bstamp[pos] = ev
                    bid[pos] = b
                    bn = _push2(bh, 0, bn, end, b)
                else:
                    b = bid[pos]
                while ent[ecur, 2] != 0:
                    ecur = ecur + 1 if ecur + 1 < ecap2 else 0
                e = ecur
                ecur = ecur + 1 if ecur + 1 < ecap2 else 0
                ent[e, 0] = C
                ent[e, 1] = b_head[b]
                ent[e, 2] = cnt
                b_head[b] = e
                _advance_member(mem, u, ci, t)
                mem[u, ci, MEM_RUNNING] += cnt
                co[C, CO_RUNNING] += cnt
                co[C, CO_FREE] -= cnt
                if filt:
                    fco[FL_RUNNING, C] = float(co[C, CO_RUNNING])
                stats[ST_STARTS] += cnt
                if C == G:
                    if end > g_end:
                        g_end = end
                    for y in range(x0, x0 + cnt):
                        q = org_jobs[y]
                        m = fheap[0, 0]
                        fsize = _heap_pop(fheap, 0, fsize)
                        out_start[q] = t
                        out_machine[q] = m
                        mn = _push2(mh, 0, mn, end, m)
    # checkpoints after the last event
    while cp < ncp:
        _values_at(utility, co, canon, cps[cp], cp_vals[cp])
        cp += 1
    # values of every coalition at the horizon (without one: at the grand coalition's last
    # completion, taken above; the last event if it never completes, nothing ever starting)
    t_end = T if has_T else (g_end if g_done else t_last)
    stats[ST_T_END] = t_end
    if do_final and not g_done:
        _values_at(utility, co, canon, t_end, final_v)


@functools.cache
def python_kernel():
    """The kernel as plain Python, for Python integers (exact at any size, slow).

    ``_ref_kernel.py_func`` alone would still call the compiled helpers, which take int64
    only; this is the same code with every helper of :data:`_VALUE_HELPERS` bound to its
    ``py_func`` (built once).
    """
    scope = dict(_ref_kernel.py_func.__globals__)
    for name in _VALUE_HELPERS:
        scope[name] = types.FunctionType(scope[name].py_func.__code__, scope, name)
    py = _ref_kernel.py_func
    return types.FunctionType(py.__code__, scope, py.__name__)
