"""The sampling's budget, and the valuation of coalitions in chunks that keep to it.

A :class:`Budget` counts CPU seconds (this process's, or with a cluster the driving thread's
and the CPU time its workers report for their tasks) and wall-clock seconds from its start,
each against an optional limit. A :class:`Valuation` values the coalitions an estimator
asks for in chunks sized by their measured cost (about :data:`CHUNK_SECONDS`, less when the
budget has less left), and reads the clocks before every chunk: with thousands of
organizations one antithetic pair of orders values tens of thousands of coalitions, so the
budget is checked between coalitions, not between orders. It also keeps the coalitions'
values for reuse up to a memory bound (:data:`CACHE_BYTES`): at thousands of
organizations two random orders almost never share a coalition, and each one's bitmask
alone takes ``k / 8`` bytes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["Budget", "BudgetError", "Valuation", "CHUNK_SECONDS", "CACHE_BYTES"]

#: The time a chunk of coalitions takes at most, once their cost is measured: the clocks
#: are read, and progress can be told, at least this often (less when the budget has less
#: left: a chunk never plans beyond an eighth of what is left, at least one coalition).
CHUNK_SECONDS = 1.0

#: :meth:`Valuation.require`: the coalitions an estimate needs are given up on once they
#: would cost more than this many times what the budget has left, as measured on at least
#: :data:`REQUIRE_MEASURED` coalitions.
REQUIRE_MARGIN = 1.25
REQUIRE_MEASURED = 16

#: Coalition values kept for reuse at most (bitmask and values, estimated): beyond, only
#: the chunk in hand is kept.
CACHE_BYTES = 256 * 1024**2


class BudgetError(ValueError):
    """The budget cannot buy the fewest samples an estimate needs; the message says how
    much it would take, ``clock`` which limit (``"cpu"`` or ``"wall"``) stopped it."""

    def __init__(self, message: str, clock: str = "cpu") -> None:
        super().__init__(message)
        self.clock = clock


class Budget:
    """A budget of ``cpu_seconds`` and/or ``wall_seconds`` (``None``: no limit on that
    clock), counted from the budget's creation. ``threads``: count the CPU time of the
    calling thread only (:func:`time.thread_time`), not the whole process's
    (:func:`time.process_time`): with a dask cluster, whose workers (threads of this
    process, or other processes) report their own CPU time through :meth:`add_cpu`.
    ``clocks``: the CPU and wall clocks to read instead (functions of no argument; tests
    give clocks that advance with the coalitions valued)."""

    def __init__(
        self,
        cpu_seconds: float | None = None,
        wall_seconds: float | None = None,
        *,
        threads: bool = False,
        clocks: tuple[Callable[[], float], Callable[[], float]] | None = None,
    ) -> None:
        self.cpu_seconds = None if cpu_seconds is None else float(cpu_seconds)
        self.wall_seconds = None if wall_seconds is None else float(wall_seconds)
        self._clock, self._wall = (
            (time.thread_time if threads else time.process_time, time.perf_counter)
            if clocks is None
            else clocks
        )
        self._cpu0 = self._clock()
        self._wall0 = self._wall()
        self.worker_cpu = 0.0

    def restart(self) -> None:
        """Count from now: the clocks read again, the workers' CPU time forgotten. The
        sampling restarts its budget once the engine is ready (numba's first compilation
        of its kernels, tens of seconds on a cold cache, and the instance's compiled
        inputs), which is start-up, not sampling (docs/audit.md, the budget)."""
        self._cpu0 = self._clock()
        self._wall0 = self._wall()
        self.worker_cpu = 0.0

    @property
    def limited(self) -> bool:
        """Some clock has a limit."""
        return self.cpu_seconds is not None or self.wall_seconds is not None

    def add_cpu(self, seconds: float) -> None:
        """CPU time spent elsewhere for this budget (a cluster's workers)."""
        self.worker_cpu += float(seconds)

    def cpu(self) -> float:
        """CPU seconds spent so far."""
        return self._clock() - self._cpu0 + self.worker_cpu

    def wall(self) -> float:
        """Wall-clock seconds since the start."""
        return self._wall() - self._wall0

    def left(self) -> float:
        """Seconds left on the clock closest to its limit (``inf`` without a limit): CPU
        seconds or wall seconds, whichever is fewer."""
        out = math.inf
        if self.cpu_seconds is not None:
            out = min(out, self.cpu_seconds - self.cpu())
        if self.wall_seconds is not None:
            out = min(out, self.wall_seconds - self.wall())
        return out

    def cost(self, cpu: float, wall: float) -> float:
        """Seconds spent since the clocks read ``cpu`` and ``wall``, on the clock whose
        limit binds (the costlier of the limited ones; wall-clock without a limit)."""
        spent = [
            now - then
            for limit, now, then in (
                (self.cpu_seconds, self.cpu(), cpu),
                (self.wall_seconds, self.wall(), wall),
            )
            if limit is not None
        ]
        return max(spent) if spent else self.wall() - wall

    def binding(self) -> str:
        """The clock closest to its limit: ``"cpu"`` or ``"wall"`` (``"cpu"`` without one)."""
        cpu = math.inf if self.cpu_seconds is None else self.cpu_seconds - self.cpu()
        wall = math.inf if self.wall_seconds is None else self.wall_seconds - self.wall()
        return "wall" if wall < cpu else "cpu"

    def over(self) -> bool:
        """A limit is reached."""
        return self.left() <= 0

    def describe(self) -> str:
        """The budget in words (``300 CPU seconds``, ``600 s of wall-clock time``)."""
        parts = []
        if self.cpu_seconds is not None:
            parts.append(f"{self.cpu_seconds:,.6g} CPU seconds")
        if self.wall_seconds is not None:
            parts.append(f"{self.wall_seconds:,.6g} s of wall-clock time")
        return " and ".join(parts) or "no time limit"

    def spent(self) -> str:
        """What was spent, in words, on the budget's clocks (CPU first)."""
        return f"{self.cpu():,.1f} CPU seconds, {self.wall():,.1f} s of wall-clock time"

    def report(self) -> dict[str, float | str | None]:
        """The report's ``sampling.budget``: the limits, which clock they are on, and, with
        a limit, what was spent on each."""
        kind = [
            name
            for name, limit in (("cpu", self.cpu_seconds), ("wall", self.wall_seconds))
            if limit is not None
        ]
        out: dict[str, float | str | None] = {
            "clock": " and ".join(kind) if kind else None,
            "cpu_seconds": self.cpu_seconds,
            "wall_seconds": self.wall_seconds,
        }
        if self.limited:  # (without a limit the report stays the same from run to run)
            out["cpu_seconds_spent"] = round(self.cpu(), 3)
            out["wall_seconds_spent"] = round(self.wall(), 3)
        return out


def as_budget(budget: Budget | None, seconds: float | None) -> Budget:
    """``budget``, or one of ``seconds`` of wall-clock time (an estimator's ``seconds=``)."""
    if budget is not None:
        if seconds is not None:
            raise ValueError("seconds: give seconds= or budget=, not both")
        return budget
    return Budget(wall_seconds=seconds)


class Valuation:
    """The values of one game's coalitions, for an estimator: ``value(mask)`` one at a
    time, or ``values(masks)`` a batch at once (a cluster), at least ``min_chunk``
    coalitions per call (but never more than needed). Values are 1-D float arrays. Those
    of ``cache`` are reused and new ones added to it while it holds fewer than ``keep``
    (the rest live in :attr:`fresh`, the chunk in hand, until :meth:`forget`).
    ``on_chunk(valued)`` is told after each chunk how many coalitions this valuation has
    valued so far."""

    def __init__(
        self,
        value: Callable[[int], object],
        budget: Budget,
        *,
        values: Callable[[list[int]], Sequence[object]] | None = None,
        cache: dict[int, np.ndarray] | None = None,
        keep: int | None = None,
        min_chunk: int = 1,
        on_chunk: Callable[[int], None] | None = None,
    ) -> None:
        if min_chunk < 1:
            raise ValueError(f"batch: {min_chunk}; at least 1 coalition")
        self.value, self.values, self.budget = value, values, budget
        self.cache = {} if cache is None else cache
        self.keep = keep
        self.fresh: dict[int, np.ndarray] = {}
        self.min_chunk = min_chunk
        self.on_chunk = on_chunk
        self.valued = 0
        self._cost = 0.0  # seconds of the costlier clock, over the coalitions measured
        self._measured = 0
        self._first: tuple[float, int] | None = None  # the first chunk's (cost, coalitions)
        self._need: tuple[int, Callable[[float], str]] | None = None

    def require(self, coalitions: int, why: Callable[[float], str] | None) -> None:
        """The estimate needs ``coalitions`` more to exist at all (``why`` = ``None``: no
        longer): once their measured cost says the budget cannot pay for them (by more
        than :data:`REQUIRE_MARGIN`), :meth:`ensure` stops with :class:`BudgetError`
        (``why(seconds they would take)``) instead of spending the budget first."""
        self._need = None if why is None else (self.valued + coalitions, why)

    def _store(self, mask: int, x: object) -> np.ndarray:
        arr = np.atleast_1d(np.asarray(x, dtype=np.float64))
        if self.keep is None or len(self.cache) < self.keep:
            self.cache[mask] = arr
        else:
            self.fresh[mask] = arr
        return arr

    def known(self, mask: int) -> bool:
        """Whether the coalition ``mask`` has a value already."""
        return mask in self.cache or mask in self.fresh

    def get(self, mask: int) -> np.ndarray:
        """A coalition's values (valued now, outside any chunk and budget, if unknown)."""
        x = self.cache.get(mask)
        if x is None:
            x = self.fresh.get(mask)
        if x is None:
            x = self._store(mask, self.value(mask))
            self.valued += 1
        return x

    def forget(self) -> None:
        """Drop the values kept outside the cache (their chunk's estimates are done)."""
        self.fresh.clear()

    def _chunk(self, todo: int) -> int:
        """How many coalitions the next chunk values: twice as many as measured so far
        until a chunk's cost is known, then about :data:`CHUNK_SECONDS` of them (an eighth
        of what the budget has left, if less), within ``min_chunk`` and ``todo``."""
        each = self.per_coalition()
        if each <= 0:
            return max(1, min(todo, self.min_chunk, max(1, self._measured)))
        left = self.budget.left()
        n = min(max(1, 2 * self._measured), int(min(CHUNK_SECONDS, left / 8) / each))
        n = max(self.min_chunk, n)
        if left < math.inf:  # never plan beyond the budget (a cluster's batch included)
            n = min(n, int(left / each))
        return max(1, min(todo, n))

    def ensure(self, masks: Sequence[int]) -> int:
        """Value the unknown coalitions of ``masks``, in order, chunk by chunk, reading the
        budget before each; returns how many of ``masks`` (from the start) have values:
        all of them unless the budget ran out."""
        todo = list(dict.fromkeys(m for m in masks if not self.known(m)))
        done = 0
        while done < len(todo):
            if self.budget.limited and self.budget.over():
                break
            n = self._chunk(len(todo) - done)
            part = todo[done : done + n]
            cpu, wall = self.budget.cpu(), self.budget.wall()
            got = self.values(part) if self.values is not None else [self.value(m) for m in part]
            for mask, x in zip(part, got, strict=True):
                self._store(mask, x)
            spent = self.budget.cost(cpu, wall)
            if self._first is None:
                self._first = (spent, len(part))
            self._cost += spent
            self._measured += len(part)
            done += n
            self.valued += n
            if self.on_chunk is not None:
                self.on_chunk(self.valued)
            self._check_need()
        if done >= len(todo):
            return len(masks)
        first_missing = todo[done]
        return list(masks).index(first_missing)

    def _check_need(self) -> None:
        if self._need is None or not self.budget.limited or self._measured < REQUIRE_MEASURED:
            return
        left = self._need[0] - self.valued
        cost = left * self.per_coalition()
        if cost > REQUIRE_MARGIN * max(0.0, self.budget.left()):
            raise BudgetError(self._need[1](cost), self.budget.binding())

    def per_coalition(self) -> float:
        """Measured seconds per coalition (the costlier clock), 0 before any chunk. The
        first chunk counts only while it is the only one: it pays the start-up (the
        engine's kernels loaded, the instance's inputs prepared), which later coalitions do
        not, so a projection from it would give up on budgets that suffice."""
        if not self._measured:
            return 0.0
        if self._first is not None and self._measured > self._first[1]:
            return (self._cost - self._first[0]) / (self._measured - self._first[1])
        return self._cost / self._measured


def keep_for(k: int, components: int) -> int:
    """How many coalition values of a game of ``k`` players, ``components`` numbers each,
    fit in :data:`CACHE_BYTES` (a bitmask of ``k / 8`` bytes, the values, and about 200
    bytes of Python objects each)."""
    return max(1024, CACHE_BYTES // (k // 8 + 8 * components + 200))
