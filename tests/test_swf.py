import gzip

import pytest

from coopsched.workloads.swf import FIELDS, SWFError, read_swf, write_swf

LINE = "1 0 5 100 2 -1 -1 2 -1 -1 1 7 1 -1 1 1 -1 -1"


def write(tmp_path, text, name="t.swf"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_reads_fields_and_header(tmp_path):
    p = write(
        tmp_path,
        "; MaxNodes: 70\n; MaxProcs: 140\n; UnixStartTime: 123\n; Note: x: y\n" + LINE + "\n",
    )
    tr = read_swf(p)
    assert (tr.max_nodes, tr.max_procs, tr.unix_start_time) == (70, 140, 123)
    assert len(tr.jobs) == 1
    row = tr.jobs.iloc[0]
    assert [row[f] for f in ("job", "submit", "run_time", "alloc_procs", "user")] == [
        1,
        0,
        100,
        2,
        7,
    ]
    assert row["processors"] == 2 and row["line"] == 5
    assert list(tr.jobs.columns[: len(FIELDS)]) == list(FIELDS)


def test_gzip_roundtrip(tmp_path):
    p = tmp_path / "t.swf.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("; MaxProcs: 4\n" + LINE + "\n")
    assert len(read_swf(p).jobs) == 1


def test_requested_processors_when_allocated_unknown(tmp_path):
    line = "1 0 5 100 -1 -1 -1 3 -1 -1 1 7 1 -1 1 1 -1 -1"
    assert read_swf(write(tmp_path, line + "\n")).jobs["processors"].tolist() == [3]


@pytest.mark.parametrize(
    "text, where",
    [
        (LINE + "\n1 2 3\n", "t.swf:2: expected 18 fields, found 3"),
        (LINE.replace("100", "abc") + "\n", "t.swf:1: field 4 (run_time): 'abc' is not a number"),
        (
            "; c\n" + LINE.replace("1 0 5", "1 -3 5") + "\n",
            "t.swf:2: field 2 (submit): negative submit time",
        ),
        (LINE.replace(" 7 1 ", " 7.5 1 ") + "\n", "t.swf:1: field 12 (user)"),
    ],
)
def test_malformed_lines_name_file_line_field(tmp_path, text, where):
    with pytest.raises(SWFError) as e:
        read_swf(write(tmp_path, text))
    assert where in str(e.value)


@pytest.mark.parametrize("text", ["", "; only a comment\n;\n", "\n\n"])
def test_empty_file(tmp_path, text):
    with pytest.raises(SWFError, match="no job lines"):
        read_swf(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(SWFError, match="no such file"):
        read_swf(tmp_path / "nope.swf")


def test_unrunnable_jobs_dropped_and_counted(tmp_path):
    lines = [
        LINE,
        "2" + LINE.replace(" 100 ", " 0 ")[1:],  # run time 0
        "3" + LINE.replace(" 100 ", " -1 ")[1:],  # run time unknown
        "4 0 5 100 0 -1 -1 2 -1 -1 1 7 1 -1 1 1 -1 -1",  # allocated 0
        "5 0 5 100 -1 -1 -1 -1 -1 -1 1 7 1 -1 1 1 -1 -1",  # no processor count
    ]
    tr = read_swf(write(tmp_path, "\n".join(lines) + "\n"))
    assert len(tr.jobs) == 1
    assert tr.dropped == {"run_time<=0": 2, "processors<=0": 2}
    assert tr.n_dropped == 4


def test_write_then_read(tmp_path):
    tr = read_swf(write(tmp_path, "; MaxProcs: 4\n" + LINE + "\n"))
    out = tmp_path / "o.swf"
    write_swf(out, tr.jobs, {"MaxProcs": "4"})
    again = read_swf(out)
    assert again.max_procs == 4
    assert again.jobs[list(FIELDS)].equals(tr.jobs[list(FIELDS)])


def test_a_job_number_used_twice_is_an_error_naming_both_lines(tmp_path):
    path = write(tmp_path, "; MaxProcs: 4\n" + LINE + "\n" + LINE + "\n")
    with pytest.raises(SWFError, match=r":3: field 1 \(job\): job 1 repeats line 2"):
        read_swf(path)
    other = "1" + LINE.replace(" 100 ", " 50 ")[1:]
    with pytest.raises(SWFError, match=r":3: field 1 \(job\): job 1 has the job number of line 2"):
        read_swf(write(tmp_path, "; MaxProcs: 4\n" + LINE + "\n" + other + "\n"))


def test_a_job_number_with_a_fraction_is_malformed_not_a_repeat(tmp_path):
    # '1' and '1.5' once read as job 1 twice, refused with the repeated-number error (the
    # wrong cause); the fraction itself is the error
    fraction = "1.5" + LINE[1:]
    with pytest.raises(SWFError, match=r":3: field 1 \(job\): 1\.5 is not a whole number"):
        read_swf(write(tmp_path, "; MaxProcs: 4\n" + LINE + "\n" + fraction + "\n"))


def test_a_byte_order_mark_and_a_long_comment_are_accepted(tmp_path):
    p = tmp_path / "bom.swf"
    comment = "; Note: " + "x" * 10_000_000
    p.write_bytes(b"\xef\xbb\xbf; MaxProcs: 4\n" + comment.encode() + b"\n" + LINE.encode() + b"\n")
    tr = read_swf(p)
    assert tr.max_procs == 4 and len(tr.jobs) == 1


def test_an_unreadable_regular_file_is_one_line():
    with pytest.raises(SWFError, match="/proc/self/mem: cannot read"):
        read_swf("/proc/self/mem")


def test_columns_are_the_dataframe_of_before(tmp_path):
    """``SWFTrace.columns`` (numpy, no pandas) and the lazy ``jobs`` DataFrame hold what the
    reader's DataFrame held before (every field, ``line`` and ``processors``, same dtypes and
    order): checked against a DataFrame built the old way on a real trace."""
    import numpy as np
    import pandas as pd
    from conftest import trace_path

    from coopsched.workloads.swf import FLOAT_FIELDS

    p = trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    tr = read_swf(p)
    with gzip.open(p, "rt") as fh:
        lines = fh.read().splitlines()
    data = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip() and not ln.startswith(";")]
    old = pd.DataFrame(np.array([ln.split() for _, ln in data], dtype=float), columns=list(FIELDS))
    old["line"] = [i for i, _ in data]
    for c in FIELDS:
        if c not in FLOAT_FIELDS:
            old[c] = np.floor(old[c]).astype(np.int64)
    old["processors"] = np.where(old["alloc_procs"] == -1, old["req_procs"], old["alloc_procs"])
    old = old[(old["run_time"] > 0) & (old["processors"] > 0)].reset_index(drop=True)
    pd.testing.assert_frame_equal(tr.jobs, old)
    assert tr.n == len(old)
    for c in tr.jobs.columns:
        assert tr.columns[c].dtype == old[c].dtype
        assert np.array_equal(tr.column(c), old[c].to_numpy())
