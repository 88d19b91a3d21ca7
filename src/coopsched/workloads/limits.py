"""Bounds on input sizes and the checks every reader applies before any work starts.

coopsched computes with exact integers (int64 arrays, docs/conventions.md §1): a number in an input
is accepted only if it is exactly representable both as a float64 and as an int64, so that
it is never wrapped or rounded on the way in. The resource limits turn inputs that would
exhaust memory only after minutes (a billion machines, a job on 10^8 processors) into an
immediate one-line error. They are far above every real trace (RICC, the largest trace
used here, has 8192 processors and about 450,000 jobs).
"""

from __future__ import annotations

import math
import numbers
import stat
from collections.abc import Iterable
from pathlib import Path

#: Input numbers must be smaller than 2^53 in magnitude: below it every integer is exact in
#: a float64 (and JSON integers are interoperable, RFC 8259 Sec. 6); a float64 of 2^53 or
#: more may already be a rounded larger number.
MAX_EXACT = 2**53
#: Machines (processors) of a whole platform.
MAX_MACHINES = 10_000_000
#: Sequential jobs of one instance (after splitting parallel jobs, docs/conventions.md §1).
MAX_JOBS = 50_000_000
#: Sampled orderings (RAND) or random starts of one run.
MAX_SAMPLES = 1_000_000
#: Bytes of one table an option scales (RAND's coefficients of its sampled coalitions: one
#: int64 per organization and coalition, and its dictionaries), checked before it is built.
MAX_TABLE_BYTES = 2 * 1024**3
#: Organizations of a sampled audit (each antithetic pair of orders values 2 (k - 1)
#: coalitions, and each coalition's bitmask takes k / 8 bytes; a Slurm site's accounts number
#: in the thousands).
MAX_ORGANIZATIONS = 20_000
#: Characters of one SWF line (18 numeric fields need a few hundred).
MAX_SWF_LINE = 4096
#: Bytes of a log once decompressed (the largest archive log is a few hundred MB): a small
#: ``.gz`` that expands beyond this (a decompression bomb) is refused before it fills memory.
MAX_DECOMPRESSED = 4 * 1024**3


class LimitError(ValueError):
    """An input exceeds a documented bound or is not an ordinary file."""


def exact_number(value: float, where: str) -> None:
    """Raise :class:`LimitError` unless ``value`` is finite with ``|value| < 2^53``."""
    if not math.isfinite(value):
        raise LimitError(f"{where}: {value!r} is not a finite number")
    if abs(value) >= MAX_EXACT:
        raise LimitError(f"{where}: {value!r} is not below 2^53 (not exact as a float64)")


def check_count(value: int, limit: int, what: str) -> None:
    """Raise :class:`LimitError` when a size ``value`` exceeds ``limit``."""
    if value > limit:
        raise LimitError(f"{what}: {value:,} is more than the limit of {limit:,}")


def regular_file(path: str | Path, error: type[Exception] = LimitError) -> Path:
    """``path`` as a :class:`Path` if it is an existing ordinary file; otherwise raise
    ``error`` (a FIFO, a device or a directory would block or make no sense as input)."""
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise error(f"{p}: no such file") from None
    except OSError as exc:
        raise error(f"{p}: cannot read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise error(f"{p}: is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise error(f"{p}: not an ordinary file (a FIFO, socket or device is not read)")
    return p


def check_horizon(
    horizon: object, name: str = "horizon", *, below: int | None = None
) -> int | None:
    """``horizon`` as an int (``None`` stays ``None``): a positive integer, never a bool,
    a float or a string, and less than ``below`` when given (the public entry points pass
    :data:`MAX_EXACT`, the command line's limit; the exact kernels alone go to 2^63); the
    error names the parameter (``name``)."""
    if horizon is None:
        return None
    if isinstance(horizon, bool) or not isinstance(horizon, numbers.Integral):
        raise TypeError(f"{name}: expected a positive integer (seconds), got {horizon!r}")
    value = int(horizon)
    if value < 1:
        raise ValueError(f"{name}: {value} is not a positive number of seconds")
    if below is not None and value >= below:
        limit = "2^53" if below == MAX_EXACT else f"{below:,}"
        raise LimitError(f"{name}: {value:,} s is not below {limit}")
    return value


def check_members(members: Iterable[object], k: int, name: str = "members") -> tuple[int, ...]:
    """A coalition as sorted distinct organization indices in ``0 .. k-1``; anything else
    (a bool, a float, a negative or out-of-range index, a string) is an error naming the
    parameter."""
    if isinstance(members, str | bytes):
        raise TypeError(f"{name}: expected organization indices, got the string {members!r}")
    if not isinstance(members, Iterable):
        raise TypeError(f"{name}: expected a list of organization indices, got {members!r}")
    out = set()
    for u in members:
        if isinstance(u, bool) or not isinstance(u, numbers.Integral):
            raise TypeError(f"{name}: {u!r} is not an organization index (an integer)")
        if not 0 <= int(u) < k:
            raise ValueError(f"{name}: organization index {int(u)} is out of range 0..{k - 1}")
        out.add(int(u))
    return tuple(sorted(out))


def check_seed(seed: object, name: str = "seed") -> int:
    """``seed`` as an int: a whole number in ``0 .. 2^63 - 1`` (numpy's generators take no
    negative seed; a bool, a float or a string is refused), or an error naming ``name``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name}: expected a whole number >= 0, got {seed!r}")
    if not 0 <= int(seed) < 2**63:
        raise ValueError(f"{name}: {int(seed)} is not in 0..2^63-1")
    return int(seed)


def check_type(value: object, kind: type | tuple[type, ...], name: str, what: str) -> None:
    """A :class:`TypeError` naming the parameter ``name`` unless ``value`` is a ``kind``
    (``what`` says what was expected, e.g. ``"an Instance"``)."""
    if not isinstance(value, kind):
        raise TypeError(f"{name}: expected {what}, got {type(value).__name__} {value!r:.60}")


def check_int(value: object, name: str, low: int = 0) -> int:
    """``value`` as an int ``>= low``: a whole number, never a bool, a float or a string."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected a whole number, got {value!r}")
    if int(value) < low:
        raise ValueError(f"{name}: {int(value)} is below {low}")
    return int(value)
