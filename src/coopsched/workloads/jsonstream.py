"""One large JSON document read a value at a time, in bounded memory.

``sacct --json`` prints one document ``{"meta": ..., "errors": [...], "jobs": [...]}`` whose
``jobs`` array may hold millions of jobs (a few kilobytes each). :class:`JSONStream` walks
the top-level object key by key and an array element by element; each value is decoded by
the standard library's decoder (:meth:`json.JSONDecoder.raw_decode`, in C) from a buffer
that holds about one block of the file, so memory follows the largest single value, never
the file. Every error is one line naming the file and the line (and column): invalid JSON,
a byte that is not UTF-8, a value nested too deeply (Python's decoder recurses: beyond
about a thousand levels it stops, and so does this reader, with an error instead of a
``RecursionError``), a single value larger than :data:`MAX_VALUE` characters, an integer
of more digits than Python converts.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import IO, Any

from .recorded import decode_utf8

#: Bytes read from the file at a time.
BLOCK_BYTES = 1 << 20
#: Characters of one value (a top-level value other than the walked array, or one element):
#: a job of ``sacct --json`` is a few thousand; beyond this the file is refused.
MAX_VALUE = 64 << 20

_WS = re.compile(r"[ \t\n\r]*")


class JSONStream:
    """A cursor over one JSON document in the binary file ``fh`` (``path`` names it in
    messages; errors are raised as ``error``)."""

    def __init__(self, fh: IO[bytes], path: str, error: type[Exception] = ValueError) -> None:
        self.fh, self.path, self.error = fh, path, error
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._decoder = json.JSONDecoder()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._lines_before = 0  # newlines in the text dropped before buf
        self._column_base = 0  # the column (from 0) of buf[0] on its line
        self._first = True

    # ------------------------------------------------------------------ positions
    def line(self, pos: int | None = None) -> int:
        """The line (from 1) of buffer position ``pos`` (default: the cursor)."""
        pos = self.pos if pos is None else pos
        return self._lines_before + self.buf.count("\n", 0, pos) + 1

    def _place(self, pos: int) -> str:
        """``path:line:column`` of a buffer position (the column when its line starts in the
        buffer)."""
        start = self.buf.rfind("\n", 0, pos)
        column = pos - start if start >= 0 else self._column_base + pos + 1
        return f"{self.path}:{self.line(pos)}:{column}"

    def fail(self, message: str, pos: int | None = None) -> Exception:
        """An error at ``pos`` (default: the cursor): ``path:line:column: message``."""
        return self.error(f"{self._place(self.pos if pos is None else pos)}: {message}")

    # ------------------------------------------------------------------ reading
    def _fill(self, at_least: int = BLOCK_BYTES) -> None:
        """Read more of the file into the buffer, dropping what the cursor has passed."""
        data = self.fh.read(max(at_least, BLOCK_BYTES))
        try:
            text = self._utf8.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            line = self._lines_before + self.buf.count("\n") + 1
            raw = exc.object if isinstance(exc.object, bytes) else data
            decode_utf8(raw[: exc.end + 1], self.path, self.error, line, bom=False)
            raise self.error(f"{self.path}: not UTF-8 text") from None  # not reached
        if self._first:
            self._first = False
            if text.startswith("\ufeff"):  # a byte-order mark
                text = text[1:]
        dropped = self.buf.count("\n", 0, self.pos)
        self._lines_before += dropped
        if dropped:
            self._column_base = self.pos - self.buf.rfind("\n", 0, self.pos) - 1
        else:
            self._column_base += self.pos
        self.buf = self.buf[self.pos :] + text
        self.pos = 0
        if not data:
            self.eof = True

    def peek(self) -> str:
        """The next character that is not white space (``""`` at the end of the file)."""
        while True:
            m = _WS.match(self.buf, self.pos)
            self.pos = m.end() if m else self.pos
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return ""
            self._fill()

    def value(self, what: str = "value") -> Any:
        """Decode the next value (``what`` names it in messages)."""
        if not self.peek():
            raise self.fail(f"invalid JSON: the file ends where {what} was expected")
        while True:
            try:
                obj, end = self._decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if not self.eof:  # perhaps only cut by the block's end
                    self._more(what)
                    continue
                raise self.fail(f"invalid JSON: {exc.msg}", exc.pos) from None
            except RecursionError:
                raise self.fail(f"{what}: JSON nested too deeply") from None
            except ValueError as exc:  # an integer of more than 4300 digits
                raise self.fail(f"invalid JSON: {exc}") from None
            if end == len(self.buf) and not self.eof:  # a number may go on in the next block
                self._more(what)
                continue
            self.pos = end
            return obj

    def _more(self, what: str) -> None:
        size = len(self.buf) - self.pos
        if size > MAX_VALUE:
            raise self.fail(f"{what} is larger than {MAX_VALUE:,} characters: refused")
        self._fill(size)

    def _expect(self, chars: str, what: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            found = repr(c) if c else "the end of the file"
            raise self.fail(f"invalid JSON: expected {what}, found {found}")
        self.pos += 1
        return c

    def members(self) -> Iterator[str]:
        """The keys of the object at the cursor, in order; after each, the caller reads its
        value (:meth:`value` or :meth:`elements`) before asking for the next key."""
        self._expect("{", "'{'")
        if self.peek() == "}":
            self.pos += 1
            return
        while True:
            if self.peek() != '"':
                raise self.fail("invalid JSON: expected a key in double quotes")
            key = self.value("a key")
            self._expect(":", "':' after a key")
            yield key
            if self._expect(",}", "',' or '}'") == "}":
                return

    def elements(self, what: str = "element") -> Iterator[Any]:
        """The elements of the array at the cursor, one decoded value at a time."""
        self._expect("[", "'['")
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value(what)
            if self._expect(",]", "',' or ']'") == "]":
                return

    def skip(self, what: str = "value") -> None:
        """Pass over the value at the cursor; an array a value at a time."""
        if self.peek() == "[":
            for _ in self.elements(what):
                pass
        else:
            self.value(what)

    def end(self) -> None:
        """Check that nothing but white space follows the document."""
        if self.peek():
            raise self.fail("invalid JSON: extra data after the document")
