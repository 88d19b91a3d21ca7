"""Shapley values from a table of coalition values (Skowron & Rzadca, Sec. 3, Eq. 1-2).

Coalitions are bitmasks: organization ``u`` is in coalition ``C`` iff ``C >> u & 1``.
A table ``v`` has ``2**k`` entries, ``v[0] = 0``.

* :func:`shapley` -- exact, in O(k 2^k): Eq. (1) summed over subsets with the integer
  weights ``omega(c, s) = L / (c * binom(c-1, s))``, ``L = lcm(1..k)`` (an integer
  because ``c * binom(c-1, s)`` divides ``lcm(1..c)``), so integer tables give exact
  rational results (:class:`fractions.Fraction`).
* :func:`shapley_restricted` -- the Shapley values in the game restricted to a coalition.
* :func:`shapley_potential` -- the potential of Hart and Mas-Colell (Econometrica 1989),
  ``P(D) = (v(D) + sum_{w in D} P(D - w)) / |D|``, ``P(empty) = 0``, scaled by ``L``: then
  ``phi_u(C) = P(C) - P(C - u)`` in the game restricted to ``C``, for every ``C`` at once
  in ``O(k 2^k)`` (REF uses it when many coalitions decide at one time).

Sampled estimates (orders, antithetic pairs, stratification, their confidence intervals)
are the sampled audit's: :mod:`coopsched.audit.estimation`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np


def lcm_upto(k: int) -> int:
    """``lcm(1, ..., k)``."""
    out = 1
    for i in range(2, k + 1):
        out = out * i // math.gcd(out, i)
    return out


@lru_cache(maxsize=64)
def shapley_weights(k: int) -> tuple[int, np.ndarray]:
    """``(L, omega)`` with ``L = lcm(1..k)`` and ``omega[c, s] = L / (c * binom(c-1, s))``.

    ``phi_u(C) * L = sum over S in C \\ {u} of omega[|C|, |S|] * (v(S+u) - v(S))``.
    """
    L = lcm_upto(max(k, 1))
    omega = np.zeros((k + 1, k + 1), dtype=np.int64)
    for c in range(1, k + 1):
        for s in range(c):
            den = c * math.comb(c - 1, s)
            assert L % den == 0
            omega[c, s] = L // den
    return L, omega


def popcounts(k: int) -> np.ndarray:
    """Number of members of every coalition ``0 .. 2**k - 1``."""
    pc = np.zeros(1 << k, dtype=np.int64)
    for b in range(k):
        pc[1 << b : 1 << (b + 1)] = pc[: 1 << b] + 1
    return pc


def members(mask: int, k: int) -> list[int]:
    """The members of coalition ``mask`` among ``k`` organizations, ascending: from the
    mask's bytes (``O(k / 8)``), not one shift of a ``k``-bit integer per organization,
    which costs ``O(k^2)`` at thousands of organizations."""
    if k <= 64:
        return [u for u in range(k) if mask >> u & 1]
    raw = np.frombuffer(mask.to_bytes((k + 7) // 8, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")[:k]).tolist()


def _check_table(v, k: int | None) -> tuple[list, int]:
    vals = list(v)
    n = len(vals)
    kk = n.bit_length() - 1
    if n < 1 or (1 << kk) != n:
        raise ValueError(f"a value table needs 2**k entries, got {n}")
    if k is not None and k != kk:
        raise ValueError(f"table of {n} entries does not match k={k}")
    return vals, kk


def shapley_restricted(v, coalition: int, k: int | None = None) -> dict[int, Fraction]:
    """Exact Shapley values of the members of ``coalition`` in the game restricted to it.

    Cost O(|C| 2^|C|).
    """
    vals, k = _check_table(v, k)
    members = [u for u in range(k) if coalition >> u & 1]
    c = len(members)
    L, omega = shapley_weights(max(k, 1))
    out: dict[int, Fraction] = {}
    for u in members:
        ub = 1 << u
        rest = coalition ^ ub
        acc = 0
        s = rest
        while True:
            acc += int(omega[c, bin(s).count("1")]) * (vals[s | ub] - vals[s])
            if s == 0:
                break
            s = (s - 1) & rest
        out[u] = Fraction(acc, L)
    return out


def shapley_potential(v, k: int | None = None) -> list[int]:
    """``L * P(D)`` for every coalition ``D``: the Hart--Mas-Colell potential, scaled.

    ``P(D) = sum over nonempty T in D of v(T) / (|T| binom(|D|, |T|))``, which satisfies
    ``|D| P(D) = v(D) + sum_{w in D} P(D - w)``; ``L = lcm(1..k)`` makes every entry an
    integer for an integer table (``|T| binom(|D|, |T|) = |D| binom(|D|-1, |T|-1)``
    divides ``lcm(1..|D|)``), so the recursion divides exactly. Eq. (1) then reads
    ``L phi_u(C) = L P(C) - L P(C - u)``.
    """
    vals, k = _check_table(v, k)
    L = lcm_upto(max(k, 1))
    q = [0] * len(vals)
    for D in range(1, len(vals)):
        total = L * vals[D]
        rest = D
        while rest:
            w = rest & -rest
            total += q[D ^ w]
            rest ^= w
        c = D.bit_count()
        assert total % c == 0
        q[D] = total // c
    return q


def shapley(v, k: int | None = None) -> list[Fraction]:
    """Exact Shapley values of all organizations in the grand coalition (Eq. 1).

    ``v`` is a table of ``2**k`` coalition values (ints give exact results).
    """
    vals, k = _check_table(v, k)
    phi = shapley_restricted(vals, (1 << k) - 1, k)
    return [phi[u] for u in range(k)]
