"""The compiled (numba) engine for rigid parallel jobs under a backfilling rule.

:func:`coopsched.online.rigid.simulate_rigid` is the reference (the semantics are in its
module docstring); this module runs the same event loop compiled, for the policies of the
declared table :data:`coopsched.online.backends.COMPILED`, with identical schedules
(hypothesis compares both, pinned jobs, coalitions and horizons included):

* completions at ``t`` in start order (a heap of ``(end, start sequence)``), then releases
  (jobs wider than the coalition never queued), then pinned jobs, then the rule;
* the policy's pick among the organizations the step allows (``shown``: what the Python
  engine shows in ``view.waiting``), with the rules' exact comparisons and ties (the older
  queue head);
* EASY's running jobs in a sorted array of ``(start + requested, start sequence)``, so a
  reservation walks it from the front;
* machine identities only for DIRECTCONTR (random machines: the stream of Python's
  ``random.Random(seed)``, :func:`~coopsched.online.compiled.randbelow`), drawn and freed in
  the Python engine's order (a chain per running job), each credited to its owner;
* quantities that may pass 2^63 (DIRECTCONTR's utilities and contributions on a large
  platform, REF's keys inside a coalition, ``REFC``) kept modulo 2^64 beside float64
  copies and compared by :func:`_key_cmp`, exact by bounds proven before the run
  (:func:`_wraps_safely`, :func:`_ref_keys_wrap_safely`).

The cost is that of the events, the picks and, for DIRECTCONTR, one draw per processor
started; the schedule keeps starts only (``Schedule.allocation`` assigns machines on
demand).
"""

from __future__ import annotations

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
from .compiled import _BIG, _mul_lt, _older, int64_bounds, mt_state, randbelow
from .kernels import JIT_OPTIONS, _pop2, _push2

NONE, FIRST_FIT, EASY = 0, 1, 2
#: REF inside one coalition (coopsched.online.ref.rigid): RAND's key with the coalition's
#: subsets as the kept coalitions, its own value as one more term, ranked once per time
#: (keys modulo 2^64 beside float64 copies, :func:`_key_cmp`)
REFC = 7
_BACKFILL = {"none": NONE, "first-fit": FIRST_FIT, "easy": EASY}


@numba.njit(**JIT_OPTIONS)
def _advance(u, t, psi, work, tl, running, psi_f):
    """``psi_sp`` and processed work of ``u`` brought to ``t`` (Eq. 3 in closed form). ``psi``
    may wrap around 2^64 (DIRECTCONTR on a large platform): it is then exact modulo 2^64,
    and ``psi_f`` (the same sums in float64) tells the rest (:func:`_key_cmp`)."""
    d = t - tl[u]
    if d:
        r = running[u]
        tri = d * (d + 1) // 2
        psi[u] += work[u] * d + r * tri
        psi_f[u] += float(work[u]) * float(d) + float(r) * float(tri)
        work[u] += r * d
        tl[u] = t


@numba.njit(**JIT_OPTIONS)
def _advance_c(v, t, phi, wc, rc, tv, phi_f):
    """DIRECTCONTR's contribution accumulators of machine owner ``v``, brought to ``t``
    (``phi`` exact modulo 2^64, ``phi_f`` in float64, as in :func:`_advance`)."""
    d = t - tv[v]
    if d:
        r = rc[v]
        tri = d * (d + 1) // 2
        phi[v] += wc[v] * d + r * tri
        phi_f[v] += float(wc[v]) * float(d) + float(r) * float(tri)
        wc[v] += r * d
        tv[v] = t


#: Float differences at least this large decide a comparison by their sign alone.
_DECIDE = 2.0**61


@numba.njit(**JIT_OPTIONS)
def _key_cmp(key, key_f, x, u):
    """The sign of ``key[x] - key[u]``, exactly: keys are exact modulo 2^64 (int64 that may
    wrap) with float64 copies whose error the driver proves below 2^59. A float difference
    of at least 2^61 has the true sign; a smaller one means the true difference is below
    2^62 in magnitude, and the wrapped integer difference is then exactly it."""
    df = key_f[x] - key_f[u]
    if df >= _DECIDE:
        return 1
    if df <= -_DECIDE:
        return -1
    d = key[x] - key[u]
    return 1 if d > 0 else (-1 if d < 0 else 0)


@numba.njit(inline="always", **JIT_OPTIONS)
def _share_pick(rule, act, t, shown, qptr, qjobs, head, rhead, machines, running, psi, work, tl):
    """FIFO's and the fair shares' pick among the organizations ``shown`` (as :func:`_pick`),
    scanning only ``act`` (those with a waiting job). Inlined in the engine: a call passing
    :func:`_pick`'s many arrays cost more than the pick."""
    u = np.int64(-1)
    if rule == FIFO:
        for x in act:
            if shown[x] > 0 and (u < 0 or _older(x, u, qjobs, qptr, head)):
                u = x
        return u
    bn = np.int64(0)
    bd = np.int64(0)
    # strict improvements only, ties to the older queue head
    for x in act:
        if shown[x] == 0:
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
        if dx == 0:
            better = bd == 0 and _older(x, u, qjobs, qptr, rhead)
        elif bd == 0 or _mul_lt(num, bd, bn, dx):
            better = True
        else:
            better = not _mul_lt(bn, dx, num, bd) and _older(x, u, qjobs, qptr, rhead)
        if better:
            u, bn, bd = x, num, dx
    return u


@numba.njit(**JIT_OPTIONS)
def _pick(
    rule,
    k,
    t,
    shown,
    rhead,
    qptr,
    qjobs,
    running,
    psi,
    work,
    tl,
    member,
    key,
    misc,
    order,
    phi,
    wc,
    rc,
    tv,
    c_ptr,
    c_time,
    c_delta,
    coeff,
    n_samples,
    cV,
    cW,
    cR,
    cT,
    cpos,
    key_f,
    phi_f,
    psi_f,
    queued,
    own,
    rank,
):
    """The organization the rule picks among those ``shown`` (as the Python policies do,
    ties to the older queue head as the rule's picks at ``t`` began: ``rhead``, one ranking
    for the whole event time), for the rules with state of their own: ROUNDROBIN,
    DIRECTCONTR, RAND and REF inside a coalition (FIFO and the fair shares:
    :func:`_share_pick`). ``misc[0]``: the event time the keys were computed at;
    ``misc[1]``: ROUNDROBIN's last served position in ``order``."""
    u = np.int64(-1)  # typed int64, not Literal[-1]: one _older / _key_cmp for all
    if rule == ROUNDROBIN:
        no = order.shape[0]
        y = misc[1]
        for _ in range(no):
            y = (y + 1) % no
            if shown[order[y]] > 0:
                break
        misc[1] = y
        u = order[y]
    elif rule == DIRECTCONTR:
        if misc[0] != t:
            misc[0] = t
            for x in range(k):
                if member[x]:
                    d = t - tv[x]
                    e = t - tl[x]
                    td = d * (d + 1) // 2
                    te = e * (e + 1) // 2
                    key[x] = (phi[x] + wc[x] * d + rc[x] * td) - (
                        psi[x] + work[x] * e + running[x] * te
                    )
                    key_f[x] = (phi_f[x] + float(wc[x]) * float(d) + float(rc[x]) * float(td)) - (
                        psi_f[x] + float(work[x]) * float(e) + float(running[x]) * float(te)
                    )
        for x in range(k):
            if shown[x] > 0:
                if u < 0:
                    u = x
                    continue
                c = _key_cmp(key, key_f, x, u)
                if c > 0 or (c == 0 and _older(x, u, qjobs, qptr, rhead)):
                    u = x
    else:  # RAND (sampled phi - psi) or REF inside one coalition (REFC), fixed at t
        ncand = 0
        first = np.int64(-1)
        for x in range(k):
            if shown[x] > 0:
                ncand += 1
                if first < 0 or _older(x, first, qjobs, qptr, rhead):
                    first = x
        if ncand == 1:
            return first
        if misc[0] != t:
            misc[0] = t
            nc = c_ptr.shape[0] - 1
            for c in range(nc):
                a = cpos[c]
                end = c_ptr[c + 1]
                while a < end and c_time[a] <= t:
                    x = c_time[a]
                    d = x - cT[c]
                    if d:
                        cV[c] += cW[c] * d + cR[c] * (d * (d + 1) // 2)
                        cW[c] += cR[c] * d
                        cT[c] = x
                    cR[c] += c_delta[a]
                    a += 1
                cpos[c] = a
            # REFC: the sums may wrap around 2^64 (exact modulo 2^64), beside float64 copies
            # (the values themselves, cV and psi, never wrap: the driver's proof)
            wrapped = rule == REFC
            for x in range(k):
                acc = np.int64(0)
                acc_f = 0.0
                for c in range(nc):
                    if coeff[x, c] != 0:
                        d = t - cT[c]
                        val = cV[c] + cW[c] * d + cR[c] * (d * (d + 1) // 2)
                        acc += coeff[x, c] * val
                        if wrapped:
                            acc_f += float(coeff[x, c]) * float(val)
                e = t - tl[x]
                px = psi[x] + work[x] * e + running[x] * (e * (e + 1) // 2)
                acc -= n_samples * px
                key[x] = acc
                if wrapped:
                    key_f[x] = acc_f - float(n_samples) * float(px)
            if rule == REFC:
                # + own[x] v(C): the coalition's own value, its members' psi at t
                vC = np.int64(0)
                for y in range(k):
                    if member[y]:
                        e = t - tl[y]
                        vC += psi[y] + work[y] * e + running[y] * (e * (e + 1) // 2)
                nr = 0
                for x in range(k):
                    if member[x]:
                        key[x] += own[x] * vC
                        key_f[x] += float(own[x]) * float(vC)
                    if queued[x] > 0:  # one ranking for every pick at t (the literal reading)
                        y = nr
                        while y > 0:
                            c = _key_cmp(key, key_f, rank[y - 1], x)
                            if c > 0 or (c == 0 and not _older(x, rank[y - 1], qjobs, qptr, rhead)):
                                break
                            rank[y] = rank[y - 1]
                            y -= 1
                        rank[y] = x
                        nr += 1
                misc[2] = nr
        if rule == REFC:
            for y in range(misc[2]):
                if shown[rank[y]] > 0:
                    return rank[y]
            return -1
        for x in range(k):
            if shown[x] > 0 and (
                u < 0 or key[x] > key[u] or (key[x] == key[u] and _older(x, u, qjobs, qptr, rhead))
            ):
                u = x
    return u


@numba.njit(**JIT_OPTIONS)
def _reservation(ex_e, ex_q, nexp, free, q, t):
    """EASY's shadow time and extra machines (``coopsched.online.rigid._reservation``)."""
    avail = free
    x = 0
    while x < nexp:
        e = max(ex_e[x], t + 1)
        while x < nexp and max(ex_e[x], t + 1) == e:
            avail += ex_q[x]
            x += 1
        if avail >= q:
            return e, avail - q
    return _BIG, 0


@numba.njit(**JIT_OPTIONS)
def _engine_rigid(
    rule,
    bf,
    k,
    rel,
    owner,
    size,
    width,
    req,
    pinned,
    wide,
    qptr,
    qjobs,
    machines,
    member,
    order,
    M,
    T,
    randm,
    mt,
    machine_owner,
    free_init,
    c_ptr,
    c_time,
    c_delta,
    coeff,
    n_samples,
    own,
    out_start,
    state,
    state_f,
):
    n = rel.shape[0]
    track = rule in (FAIRSHARE, UTFAIRSHARE, DIRECTCONTR, RAND, REFC)
    queued = np.zeros(k, np.int64)
    shown = np.zeros(k, np.int64)
    # the organizations with a waiting job, in no particular order (every pick is the
    # same whatever the order it scans them in: ties go to the older queue head)
    act = np.zeros(k, np.int64)
    apos = np.zeros(k, np.int64)
    nact = 0
    head = np.zeros(k, np.int64)
    rhead = np.zeros(k, np.int64)  # the queue heads as the rule's picks at t began: ties
    ranked_at = np.int64(-1)
    running = np.zeros(k, np.int64)
    psi = np.zeros(k, np.int64)
    work = np.zeros(k, np.int64)
    tl = np.zeros(k, np.int64)
    key = np.zeros(k, np.int64)
    key_f = np.zeros(k)
    psi_f = state_f[1]
    phi_f = state_f[0]
    misc = np.zeros(3, np.int64)
    rank = np.zeros(k, np.int64)
    misc[0] = -1
    misc[1] = state[4, 0]
    phi = state[0]
    wc = state[1]
    rc = state[2]
    tv = state[3]
    nc = c_ptr.shape[0] - 1
    cV = np.zeros(max(nc, 1), np.int64)
    cW = np.zeros(max(nc, 1), np.int64)
    cR = np.zeros(max(nc, 1), np.int64)
    cT = np.zeros(max(nc, 1), np.int64)
    cpos = np.zeros(max(nc, 1), np.int64)
    for c in range(nc):
        cpos[c] = c_ptr[c]
    nn = max(n, 1)
    ht = np.zeros(nn, np.int64)  # completions: (end, start sequence)
    hs = np.zeros(nn, np.int64)
    nheap = np.int64(0)  # not the literal 0: one specialization of _pop2
    seq_pos = np.zeros(nn + 1, np.int64)
    ex_e = np.zeros(nn, np.int64)  # EASY: running jobs by (start + requested, sequence)
    ex_s = np.zeros(nn, np.int64)
    ex_q = np.zeros(nn, np.int64)
    nexp = 0
    # random machines: a free list (swap-remove) and each running job's chain of machines
    MM = max(machine_owner.shape[0], 1)
    free_ids = np.zeros(MM, np.int64)
    nfree_ids = free_init.shape[0]
    free_ids[:nfree_ids] = free_init
    next_m = np.full(MM, -1, np.int64)
    by_owner = np.zeros(k, np.int64)  # one job's machines per owner
    first_m = np.full(nn, -1, np.int64)
    nfree = M
    seq = 0
    total = 0
    pin_waiting = 0
    i = 0
    while True:
        t_rel = rel[i] if i < n else _BIG
        t_comp = ht[0] if nheap > 0 else _BIG
        t = min(t_rel, t_comp)
        if t >= _BIG or t >= T:
            break
        base = nfree_ids  # the machines freed at t return in machine order
        while nheap > 0 and ht[0] == t:  # completions, in start order
            sq = hs[0]
            nheap = _pop2(ht, hs, nheap)
            pos = seq_pos[sq]
            u = owner[pos]
            q = width[pos]
            if track:
                _advance(u, t, psi, work, tl, running, psi_f)
            running[u] -= q
            nfree += q
            if bf == EASY:
                e = out_start[pos] + req[pos]
                x = 0
                while ex_e[x] != e or ex_s[x] != sq:
                    x += 1
                for y in range(x, nexp - 1):
                    ex_e[y] = ex_e[y + 1]
                    ex_s[y] = ex_s[y + 1]
                    ex_q[y] = ex_q[y + 1]
                nexp -= 1
            if randm:
                m = first_m[pos]
                while m >= 0:
                    nxt = next_m[m]
                    free_ids[nfree_ids] = m
                    nfree_ids += 1
                    by_owner[machine_owner[m]] += 1
                    m = nxt
                for v in range(k):  # credit the owners once per job, not per machine
                    if by_owner[v]:
                        if rule == DIRECTCONTR:
                            _advance_c(v, t, phi, wc, rc, tv, phi_f)
                            rc[v] -= by_owner[v]
                        by_owner[v] = 0
        if randm and nfree_ids - base > 1:
            free_ids[base:nfree_ids] = np.sort(free_ids[base:nfree_ids])
        while i < n and rel[i] == t:  # releases
            if not wide[i]:
                u = owner[i]
                if queued[u] == 0:
                    apos[u] = nact
                    act[nact] = u
                    nact += 1
                queued[u] += 1
                total += 1
                if pinned[i]:
                    pin_waiting += 1
            i += 1
        phase = 0  # 0 pinned, 1 the rule, 2 EASY's backfill, 3 done
        res_u = -1
        shadow = np.int64(0)
        extra = np.int64(0)
        while phase < 3:
            pos = -1
            if phase == 0:
                if pin_waiting == 0:
                    phase = 1
                    continue
                for x in range(k):  # the oldest waiting pinned job (pinned jobs head)
                    if queued[x] > 0:
                        h = qjobs[qptr[x] + head[x]]
                        if pinned[h] and (pos < 0 or h < pos):
                            pos = h
                if width[pos] > nfree:
                    phase = 1
                    continue
            else:
                if total == 0 or nfree == 0:
                    break
                if ranked_at != t:  # the rule's first pick at t: fix the tie order
                    ranked_at = t
                    rhead[:] = head
                anyone = False
                for a in range(nact):
                    x = act[a]
                    ok = True
                    if phase == 2:  # EASY's backfill beside the reservation
                        h = qjobs[qptr[x] + head[x]]
                        ok = (
                            x != res_u
                            and width[h] <= nfree
                            and (t + req[h] <= shadow or width[h] <= extra)
                        )
                    elif bf == FIRST_FIT:
                        ok = width[qjobs[qptr[x] + head[x]]] <= nfree
                    shown[x] = queued[x] if ok else 0
                    anyone = anyone or ok
                if not anyone:
                    break
                if rule in (FIFO, FAIRSHARE, UTFAIRSHARE, CURRFAIRSHARE):
                    u = _share_pick(
                        rule,
                        act[:nact],
                        t,
                        shown,
                        qptr,
                        qjobs,
                        head,
                        rhead,
                        machines,
                        running,
                        psi,
                        work,
                        tl,
                    )
                else:
                    u = _pick(
                        rule,
                        k,
                        t,
                        shown,
                        rhead,
                        qptr,
                        qjobs,
                        running,
                        psi,
                        work,
                        tl,
                        member,
                        key,
                        misc,
                        order,
                        phi,
                        wc,
                        rc,
                        tv,
                        c_ptr,
                        c_time,
                        c_delta,
                        coeff,
                        n_samples,
                        cV,
                        cW,
                        cR,
                        cT,
                        cpos,
                        key_f,
                        phi_f,
                        psi_f,
                        queued,
                        own,
                        rank,
                    )
                pos = qjobs[qptr[u] + head[u]]
                if width[pos] > nfree:
                    if bf == EASY and phase == 1:
                        res_u = u
                        shadow, extra = _reservation(ex_e, ex_q, nexp, nfree, width[pos], t)
                        phase = 2
                    else:
                        break  # none: the pick does not fit, nothing more starts
                    continue
                if phase == 2 and t + req[pos] > shadow:
                    extra -= width[pos]
            # start the job at pos
            u = owner[pos]
            q = width[pos]
            head[u] += 1
            queued[u] -= 1
            if queued[u] == 0:  # out of the waiting list (swap with its last)
                shown[u] = 0
                nact -= 1
                y = act[nact]
                act[apos[u]] = y
                apos[y] = apos[u]
            total -= 1
            if pinned[pos]:
                pin_waiting -= 1
            if track:
                _advance(u, t, psi, work, tl, running, psi_f)
            running[u] += q
            nfree -= q
            out_start[pos] = t
            seq += 1
            seq_pos[seq] = pos
            nheap = _push2(ht, hs, nheap, min(t + size[pos], _BIG), seq)
            if bf == EASY:
                e = t + req[pos]
                x = nexp
                while x > 0 and (ex_e[x - 1] > e or (ex_e[x - 1] == e and ex_s[x - 1] > seq)):
                    ex_e[x] = ex_e[x - 1]
                    ex_s[x] = ex_s[x - 1]
                    ex_q[x] = ex_q[x - 1]
                    x -= 1
                ex_e[x] = e
                ex_s[x] = seq
                ex_q[x] = q
                nexp += 1
            if randm:
                last = -1
                for _ in range(q):
                    j = randbelow(mt, nfree_ids)
                    m = free_ids[j]
                    free_ids[j] = free_ids[nfree_ids - 1]
                    nfree_ids -= 1
                    next_m[m] = -1
                    if last < 0:
                        first_m[pos] = m
                    else:
                        next_m[last] = m
                    last = m
                    by_owner[machine_owner[m]] += 1
                for v in range(k):
                    if by_owner[v]:
                        if rule == DIRECTCONTR:
                            _advance_c(v, t, phi, wc, rc, tv, phi_f)
                            rc[v] += by_owner[v]
                        by_owner[v] = 0
    state[4, 0] = misc[1]


class RigidInputs:
    """What the engine reads of an instance, whatever the coalition: its jobs in global
    submission order (:meth:`~coopsched.workloads.instance.Instance.fifo_order`) and
    the organizations' canonical order and machines. Built once, it serves every
    coalition of the instance (:func:`run_compiled_rigid`'s ``inputs``: the sampled audit
    simulates thousands); the instance must not change meanwhile."""

    def __init__(self, instance: Instance) -> None:
        inst = instance
        self.instance = inst
        self.order = inst.fifo_order()
        o = self.order
        self.owner = inst.org[o]
        self.release = inst.release[o]
        self.size = inst.size[o]
        self.width = inst.width[o]
        self.requested = (
            np.full(len(o), -1, dtype=np.int64) if inst.requested is None else inst.requested[o]
        )
        self.pinned = None if inst.pinned is None else inst.pinned[o]
        self.machines = inst.machines
        self.canon = inst.canonical_order()
        self.machine_owner = np.repeat(self.canon, self.machines[self.canon])

    def coalition(self, is_member: np.ndarray) -> np.ndarray:
        """Positions (in submission order) of the jobs of the members ``is_member``."""
        return np.flatnonzero(is_member[self.owner])


def run_compiled_rigid(
    instance: Instance,
    rule: str,
    backfill: str,
    *,
    horizon: int | None,
    members: tuple[int, ...],
    seed=0,
    random_machines: bool = False,
    rand: dict | None = None,
    state: np.ndarray | None = None,
    own: np.ndarray | None = None,
    inputs: RigidInputs | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | str:
    """Starts (instance job order), the final state, and the too-wide jobs (instance
    indices), or why int64 cannot be proven exact (a str); the arguments as
    :func:`~coopsched.online.compiled.run_compiled`'s. ``inputs``: the instance's
    :class:`RigidInputs`, when several coalitions of it are run (built here otherwise)."""
    inst = instance
    k = inst.k
    if inputs is None:
        inputs = RigidInputs(inst)
    elif inputs.instance is not inst:
        raise ValueError("inputs: prepared for another instance")
    is_member = np.zeros(k, dtype=bool)
    is_member[list(members)] = True
    sel = inputs.coalition(is_member)
    order = inputs.order[sel]
    rel = inputs.release[sel]
    owner = inputs.owner[sel]
    size = inputs.size[sel]
    width = inputs.width[sel]
    req = inputs.requested[sel]
    machines = inputs.machines
    M = int(machines[is_member].sum())
    n_samples = rand["n_samples"] if rand is not None else 0
    wrapped = False  # DIRECTCONTR's contributions kept modulo 2^64 (unwrapped at the end)
    if rule == "ref-coalition":
        # REF's keys always run wrapped beside float64 copies; only the values must fit
        why = _ref_keys_wrap_safely(rel, size, M, horizon, rand, own)
        if why is not None:
            return why
    else:
        why = int64_bounds(
            rule,
            rel,
            size,
            int(machines.sum()),
            M,
            int(machines.max()) if k else 0,
            horizon,
            n_samples,
            rigid=True,
        )
        if why is not None:
            if not (rule == "directcontr" and _wraps_safely(rel, size, M, horizon)):
                return why
            wrapped = True
    wide = width > M
    if backfill == "easy":
        bad = np.flatnonzero(~wide & (req < 1))
        if bad.size:
            raise ValueError(
                f"backfill='easy' reads requested times, and job {int(order[bad[0]])} has none "
                "(give every job a requested time, or choose first-fit)"
            )
    # each organization's queue: its jobs that fit, in submission order (a counting sort)
    fits = np.flatnonzero(~wide)
    by_org = fits[np.argsort(owner[fits], kind="stable")]
    qptr = np.zeros(k + 1, dtype=np.int64)
    qptr[1:] = np.cumsum(np.bincount(owner[fits], minlength=k))
    pinned = (
        np.zeros(len(order), dtype=np.bool_)
        if inputs.pinned is None
        else np.ascontiguousarray(inputs.pinned[sel], dtype=np.bool_)
    )
    canon = inputs.canon
    machine_owner = inputs.machine_owner  # inst.machine_owner()
    free_init = np.flatnonzero(is_member[machine_owner]).astype(np.int64)
    state = np.zeros((5, k + 2), dtype=np.int64) if state is None else state.copy()
    if state.shape[1] < k + 2:
        state = np.pad(state, ((0, 0), (0, k + 2 - state.shape[1])))
    mt = mt_state(seed) if random_machines else np.zeros(625, dtype=np.int64)
    if rand is None:
        rand = {
            "c_ptr": np.zeros(1, dtype=np.int64),
            "c_time": np.zeros(0, dtype=np.int64),
            "c_delta": np.zeros(0, dtype=np.int64),
            "coeff": np.zeros((k, 1), dtype=np.int64),
            "n_samples": 0,
        }
    out_start = np.full(len(order), -1, dtype=np.int64)
    state_f = state[:4].astype(np.float64)
    _engine_rigid(
        REFC if rule == "ref-coalition" else rule_named(rule).rule,
        _BACKFILL[backfill],
        k,
        rel,
        owner,
        size,
        width,
        req,
        pinned,
        wide,
        qptr,
        by_org.astype(np.int64),
        machines,
        is_member,
        np.ascontiguousarray(canon[is_member[canon]]),
        np.int64(M),
        np.int64(_BIG if horizon is None else min(int(horizon), int(_BIG))),
        bool(random_machines),
        mt,
        machine_owner,
        free_init,
        rand["c_ptr"],
        rand["c_time"],
        rand["c_delta"].astype(np.int64),
        rand["coeff"],
        np.int64(rand["n_samples"]),
        np.zeros(k, dtype=np.int64) if own is None else np.ascontiguousarray(own, dtype=np.int64),
        out_start,
        state,
        state_f,
    )
    start = np.full(inst.n, -1, dtype=np.int64)
    start[order] = out_start
    out = state[:, :k]
    if wrapped:  # contributions wrapped around 2^64: exact values from the floats
        out = out.astype(object)
        out[0] = [_unwrap(int(r), float(f)) for r, f in zip(out[0], state_f[0, :k], strict=True)]
    return start, out, order[wide], M


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
