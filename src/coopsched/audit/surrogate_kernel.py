"""The compiled part of :func:`coopsched.audit.surrogate.fit_game_shapley`: for every
organization with machines, the weight of the predecessor sets in which it is pivotal for
each job (its own and the others'), from the counts of subsets by size and machine sum with
one or two organizations taken out. Imported on use (numba)."""

from __future__ import annotations

import numba
import numpy as np

from ..online.kernels import JIT_OPTIONS


@numba.njit(**JIT_OPTIONS)
def _tail(r, tail):
    """``tail[x] = sum_{y >= x} r[y]``, ``tail[len(r)] = 0``."""
    n = r.shape[0]
    tail[n] = 0.0
    for x in range(n - 1, -1, -1):
        tail[x] = tail[x + 1] + r[x]


@numba.njit(**JIT_OPTIONS)
def _at(tail, x):
    if x <= 0:
        return tail[0]
    if x >= tail.shape[0]:
        return 0.0
    return tail[x]


@numba.njit(**JIT_OPTIONS)
def pivotal_values(full, mpos, pos_org, w_own, w_zero, w_pos, starts, width, value, owner_pos):
    """Per organization (``phi[u]``, organizations with machines only), the sum over jobs of
    ``value_j`` times the weight of ``u``'s predecessor sets in which ``u`` makes job ``j``
    fit (:func:`~coopsched.audit.surrogate.fit_game_shapley`).

    ``full[i][x]``: subsets of the ``p`` organizations with machines, by size and machine
    sum; ``mpos[a]``, ``pos_org[a]``: the ``a``-th one's machines and organization;
    ``w_own``, ``w_zero``, ``w_pos``: the size weights of its own jobs, of the jobs of an
    organization without machines, and of one with machines; jobs by organization in
    ``starts`` (offsets), ``width``, ``value``; ``owner_pos[o]``: ``o``'s index among the
    organizations with machines, ``-1`` without."""
    p = mpos.shape[0]
    m1 = full.shape[1]
    k = owner_pos.shape[0]
    phi = np.zeros(k)
    pool = np.empty((p, m1))
    prev = np.empty(m1)
    cur = np.empty(m1)
    r = np.empty(m1)
    tail = np.empty(m1 + 1)
    for a in range(p):
        u = pos_org[a]
        mu = mpos[a]
        # the others with machines: full without a (size by size)
        for x in range(m1):
            pool[0, x] = full[0, x]
        for i in range(1, p):
            for x in range(m1):
                pool[i, x] = full[i, x] - (pool[i - 1, x - mu] if x >= mu else 0.0)
        # its own jobs: pivotal when the predecessors bring at least q - m_u machines
        for x in range(m1):
            acc = 0.0
            for i in range(p):
                acc += w_own[i] * pool[i, x]
            r[x] = acc
        _tail(r, tail)
        for j in range(starts[u], starts[u + 1]):
            phi[u] += value[j] * _at(tail, width[j] - mu)
        # the jobs of organizations without machines (o among the predecessors adds none)
        for x in range(m1):
            acc = 0.0
            for i in range(p):
                acc += w_zero[i] * pool[i, x]
            r[x] = acc
        _tail(r, tail)
        for o in range(k):
            if owner_pos[o] >= 0 or o == u:
                continue
            for j in range(starts[o], starts[o + 1]):
                phi[u] += value[j] * (_at(tail, width[j] - mu) - _at(tail, width[j]))
        # the jobs of another organization b with machines: the pool without b too
        for b in range(p):
            if b == a:
                continue
            o = pos_org[b]
            if starts[o] == starts[o + 1]:
                continue
            mo = mpos[b]
            for x in range(m1):
                prev[x] = pool[0, x]
                r[x] = w_pos[0] * prev[x]
            for i in range(1, p - 1):
                for x in range(m1):
                    cur[x] = pool[i, x] - (prev[x - mo] if x >= mo else 0.0)
                    r[x] += w_pos[i] * cur[x]
                prev, cur = cur, prev
            _tail(r, tail)
            for j in range(starts[o], starts[o + 1]):
                q = width[j]
                phi[u] += value[j] * (_at(tail, q - mu - mo) - _at(tail, q - mo))
    return phi
