"""A text file read a block of whole lines at a time, so that a reader's memory follows the
block and what it keeps, never the file (the SWF and the ``sacct`` text readers).

Lines are numbered and split as ``str.splitlines`` splits the whole decoded text: a block
ends after a ``\\n`` byte, never inside a UTF-8 character or a ``\\r\\n``. A line longer than
:data:`MAX_LINE_BYTES` is refused with its length and number (a file without line breaks, a
decompression bomb of one endless line), after reading past it without keeping it, unless
the reader allows it (``long_ok``: SWF comments, free text), which then keeps only its
first :data:`MAX_LINE_BYTES`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

#: Bytes read at a time.
BLOCK_BYTES = 4 << 20
#: Bytes of one line (no log writes lines of a megabyte).
MAX_LINE_BYTES = 1 << 20


def _characters(data: bytes) -> int:
    """UTF-8 characters in ``data`` (bytes that do not continue a character)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    return int(np.count_nonzero((arr & 0xC0) != 0x80))


def _cut(line: bytes, size: int) -> bytes:
    """The first ``size`` bytes of ``line`` or fewer, never half a UTF-8 character."""
    end = size
    while 0 < end < len(line) and line[end] & 0xC0 == 0x80:
        end -= 1
    return line[:end]


def line_blocks(
    read: Callable[[int], bytes],
    decode: Callable[[bytes, int, bool], str],
    path: str,
    error: type[Exception],
    *,
    block: int = BLOCK_BYTES,
    max_line: int = MAX_LINE_BYTES,
    long_ok: Callable[[bytes], bool] | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """The lines of a file, a block at a time: ``(number of the block's first line, lines)``.

    ``read(n)`` returns up to ``n`` more bytes (``b""`` at the end; it raises the reader's
    own errors); ``decode(data, first_line, first_block)`` decodes whole lines (its errors
    name ``first_line``, the line ``data`` starts on, counted in ``\\n``). A line longer than
    ``max_line`` bytes is an ``error`` naming ``path``, the line and its length, unless
    ``long_ok(its first bytes)``: then only its first ``max_line`` bytes are kept.
    """
    rest = b""
    lineno = 1
    newlines = 0
    first = True
    while True:
        data = read(block)
        if data:
            data = rest + data
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                rest = data
                if len(rest) > max_line:  # one line longer than allowed, and no end yet
                    count, after = _past_line(read, rest, block)
                    if long_ok is None or not long_ok(rest[:max_line]):
                        raise error(
                            f"{path}:{newlines + 1}: line of {count:,} characters "
                            f"(limit {max_line:,} bytes)"
                        )
                    rest = _cut(rest, max_line) + b"\n" + after
                continue
            chunk, rest = data[:cut], data[cut:]
        else:
            chunk, rest = rest, b""
        if chunk:
            if len(chunk) > max_line:  # a block may hold a line that is too long
                chunk = _long_lines(chunk, newlines, path, error, max_line, long_ok)
            text = decode(chunk, newlines + 1, first)
            first = False
            lines = text.splitlines()
            yield lineno, lines
            lineno += len(lines)
            newlines += chunk.count(b"\n")
        if not data:
            return


def _long_lines(
    chunk: bytes,
    newlines: int,
    path: str,
    error: type[Exception],
    max_line: int,
    long_ok: Callable[[bytes], bool] | None,
) -> bytes:
    """``chunk`` with its lines longer than ``max_line`` cut (``long_ok``) or refused."""
    parts = chunk.split(b"\n")
    long = [i for i, x in enumerate(parts) if len(x) > max_line]
    for i in long:
        if long_ok is None or not long_ok(parts[i][:max_line]):
            raise error(
                f"{path}:{newlines + i + 1}: line of {_characters(parts[i]):,} characters "
                f"(limit {max_line:,} bytes)"
            )
        parts[i] = _cut(parts[i], max_line)
    return b"\n".join(parts) if long else chunk


def _past_line(read: Callable[[int], bytes], rest: bytes, block: int) -> tuple[int, bytes]:
    """Read to the end of the line that ``rest`` begins, without keeping it: its length in
    characters, and the bytes read after its ``\\n``."""
    count = _characters(rest)
    while True:
        data = read(block)
        end = data.find(b"\n")
        count += _characters(data if end < 0 else data[:end])
        if not data:
            return count, b""
        if end >= 0:
            return count, data[end + 1 :]
