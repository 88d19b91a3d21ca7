"""Reading logs a block of lines at a time (issue 41, item 2): the lines, their numbers and
every reader's result are those of the whole file, whatever the block size; memory follows
the block, so a line without end or a decompression bomb is refused, never held."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coopsched.workloads.swf as swf
import coopsched.workloads.textblocks as tb
from coopsched.workloads.swf import SWFError, read_swf


def _blocks(data: bytes, block: int, max_line: int = 1 << 20, long_ok=None):
    fh = io.BytesIO(data)
    out = list(
        tb.line_blocks(
            fh.read,
            lambda b, line, first: b.decode("utf-8"),
            "f",
            ValueError,
            block=block,
            max_line=max_line,
            long_ok=long_ok,
        )
    )
    return out


@settings(max_examples=300, deadline=None)
@given(
    text=st.lists(st.sampled_from([*"ab é✓\n\r;", "\r\n"]), max_size=120).map("".join),
    block=st.integers(1, 64),
)
def test_the_lines_and_their_numbers_are_those_of_the_whole_text(text, block):
    got = _blocks(text.encode(), block)
    lines = [ln for _, chunk in got for ln in chunk]
    assert lines == text.splitlines()
    n = 1
    for first, chunk in got:
        assert first == n
        n += len(chunk)


def test_a_line_longer_than_the_limit_is_refused_with_its_number_and_length():
    data = b"ok\nok\n" + b"x" * 5000 + b"\nok\n"
    for block in (7, 64, 10_000):
        with pytest.raises(ValueError, match=r"^f:3: line of 5,000 characters \(limit 100 bytes\)"):
            _blocks(data, block, max_line=100)
    # a line without end (a bomb of one line) is read past, never held
    with pytest.raises(ValueError, match="f:1: line of 100,000 characters"):
        _blocks(b"y" * 100_000, 1000, max_line=100)


def test_a_long_line_the_reader_allows_keeps_its_first_bytes():
    data = b"; " + "é".encode() * 3000 + b"\n1\n"
    for block in (5, 100, 10_000):
        got = _blocks(data, block, max_line=101, long_ok=lambda b: b.startswith(b";"))
        lines = [ln for _, chunk in got for ln in chunk]
        assert lines[0] == "; " + "é" * 49 and lines[1:] == ["1"]  # cut between characters


LINE = "{} {} 5 60 2 -1 -1 2 100 -1 1 {} 1 -1 1 -1 -1 -1"


def _trace(jobs: int) -> str:
    head = "; MaxProcs: 8\n; UnixStartTime: 100\n"
    return head + "".join(LINE.format(i + 1, 10 * i, i % 7) + "\n" for i in range(jobs))


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(block=st.integers(16, 4000), gz=st.booleans())
def test_swf_read_a_block_at_a_time_is_the_whole_file(tmp_path, monkeypatch, block, gz):
    data = _trace(300).encode()
    p = tmp_path / ("t.swf.gz" if gz else "t.swf")
    p.write_bytes(gzip.compress(data) if gz else data)
    whole = read_swf(p)
    monkeypatch.setattr(tb, "BLOCK_BYTES", block)
    monkeypatch.setattr(swf, "line_blocks", _small(block))
    part = read_swf(p)
    assert part.header == whole.header and part.lines == whole.lines == 302
    for c in swf.COLUMNS:
        assert np.array_equal(part.columns[c], whole.columns[c]), c


def _small(block):
    def blocks(*args, **kwargs):
        return tb.line_blocks(*args, **{**kwargs, "block": block})

    return blocks


def test_swf_errors_name_the_line_in_any_block(tmp_path, monkeypatch):
    text = _trace(200).splitlines()
    text[150] = text[150].replace(" 60 ", " abc ", 1)
    p = tmp_path / "t.swf"
    p.write_text("\n".join(text) + "\n")
    monkeypatch.setattr(swf, "line_blocks", _small(512))
    with pytest.raises(SWFError, match=r"t.swf:151: field 4 \(run_time\): 'abc' is not"):
        read_swf(p)
    tr = read_swf(p, skip_malformed=True)
    assert tr.n == 199 and [m[0] for m in tr.malformed] == [151]
    text[150] = text[3]  # a job number used twice, in another block
    p.write_text("\n".join(text) + "\n")
    with pytest.raises(SWFError, match=r"t.swf:151: field 1 \(job\): job 2 repeats line 4"):
        read_swf(p)


def test_a_decompression_bomb_is_refused_in_bounded_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(swf, "MAX_DECOMPRESSED", 1 << 20)
    p = tmp_path / "bomb.swf.gz"
    p.write_bytes(gzip.compress(b"\n" * (3 << 20)))  # 3 MiB of empty lines from 3 KiB
    with pytest.raises(SWFError, match="more than 1,048,576 bytes once decompressed"):
        read_swf(p)
    p.write_bytes(gzip.compress(b"0" * (3 << 20)))  # one endless line
    with pytest.raises(SWFError, match=r"bomb.swf.gz:1: line of 1,048,577 characters|more than"):
        read_swf(p)
