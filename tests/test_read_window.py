"""The sacct reader streams (issue 29, item 8): read in chunks of lines, and for one audit
window only, it gives what the whole-file reader of before gave, and the audit of a window
read alone is the audit of that window of the whole log."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sacct_whole import whole_read_sacct

from coopsched.audit import _sacct_window, audit
from coopsched.audit.organizations import MappingError, assign_unmatched, by_column, by_mapping
from coopsched.audit.window import WindowError, window_instance
from coopsched.workloads import sacct
from coopsched.workloads.sacct import SacctError, read_sacct

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from read_large import synthetic_log  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURES = sorted(FIXTURES.glob("slurm*/sacct_*.txt"))
TREE = FIXTURES / "slurm-tree"


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.jobs, b.jobs)
    assert list(a.excluded.items()) == list(b.excluded.items())
    assert a.notes == b.notes
    assert (a.timezone, a.epoch, a.machines, a.source) == (
        b.timezone,
        b.epoch,
        b.machines,
        b.source,
    )


def _read(reader, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            log = reader(*args, **kw)
        except SacctError as exc:
            return str(exc), [str(w.message) for w in caught]
    return log, [str(w.message) for w in caught]


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few lines, blocks of a few bytes: every boundary is crossed."""

    def set_sizes(lines: int, block: int) -> None:
        monkeypatch.setattr(sacct, "CHUNK_LINES", lines)
        monkeypatch.setattr(sacct, "BLOCK_BYTES", block)

    return set_sizes


def _variants(tmp_path: Path) -> list[Path]:
    """The real captures, concatenated (repeated header, repeated records), with a byte-order
    mark and CRLF line ends, with trailing bars, and with malformed lines."""
    out = list(CAPTURES)
    utc = (TREE / "sacct_X_utc.txt").read_text()
    steps = (TREE / "sacct_steps_utc.txt").read_text()
    body = utc.splitlines()
    p = tmp_path / "concat.txt"
    p.write_text(utc + "\n" + steps + utc)  # every job three times, blank line, headers
    out.append(p)
    p = tmp_path / "bom_crlf.txt"
    p.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(body).encode() + b"\r\n")
    out.append(p)
    p = tmp_path / "trailing.txt"
    p.write_text("\n".join(line + "|" for line in body) + "\n")
    out.append(p)
    bad = list(body)
    bad[4] = "5|cs_bob|physics"
    bad[8] = bad[8].replace("|1|COMPLETED", "|two|COMPLETED")
    bad[13] = bad[13].replace("COMPLETED", "FINISHED")
    bad[17] = bad[17].replace("2026-11-24T00:23:29", "yesterday", 1)
    bad.append(bad[9])  # a repeated record
    p = tmp_path / "malformed.txt"
    p.write_text("\n".join(bad) + "\n")
    out.append(p)
    p = tmp_path / "disagree.txt"
    p.write_text("\n".join([*body, body[5].replace("|1|COMPLETED", "|2|COMPLETED")]) + "\n")
    out.append(p)
    p = tmp_path / "not_utf8.txt"
    p.write_bytes("\n".join(body).encode() + b"\n99|b\xe9b|x|x|x|1|1|1|1|COMPLETED|1\n")
    out.append(p)
    p = tmp_path / "header_only.txt"
    p.write_text(body[0] + "\n")
    out.append(p)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("lines,block", [(1, 1), (2, 7), (3, 64), (7, 1 << 20), (10**6, 8 << 20)])
def test_chunked_reader_equals_the_whole_file_reader(tmp_path, small_chunks, lines, block):
    small_chunks(lines, block)
    for path in _variants(tmp_path):
        for zone in ("UTC", "Europe/Warsaw"):
            for skip in (False, True):
                old, old_w = _read(whole_read_sacct, path, timezone=zone, skip_malformed=skip)
                new, new_w = _read(read_sacct, path, timezone=zone, skip_malformed=skip)
                assert old_w == new_w, path
                if isinstance(old, str):
                    assert new == old, path
                else:
                    assert not isinstance(new, str), (path, new)
                    _same(old, new)


@pytest.mark.slow
def test_machines_error_and_repeated_records_across_chunks(tmp_path, small_chunks):
    small_chunks(3, 50)
    path = tmp_path / "log.txt"
    synthetic_log(path, 40, stretch=50)
    text = path.read_text().splitlines()
    again = tmp_path / "again.txt"
    again.write_text("\n".join(text + text[1:300]) + "\n")  # a second, overlapping capture
    for p in (path, again):
        for machines in (None, 3, 64):
            old, old_w = _read(whole_read_sacct, p, timezone="UTC", machines=machines)
            new, new_w = _read(read_sacct, p, timezone="UTC", machines=machines)
            assert type(old) is type(new)
            if isinstance(old, str):  # the streaming reader warns once it has read all
                assert old == new
            else:
                assert old_w == new_w
                _same(old, new)


def _log(tmp_path: Path, copies: int = 120) -> Path:
    """A year of the real capture: users and accounts that exist only early in the year."""
    rename = {c: {"User": {"cs_erin": "cs_zed"}, "Account": {"astro": "stars"}} for c in range(6)}
    path = tmp_path / "year.txt"
    synthetic_log(path, copies, stretch=40_000, rename=rename)
    return path


WINDOWS = [
    ("2026-06-01", "2026-07-01"),
    ("2026-01-01", "2026-01-20"),
    ("2026-03-03T05:00", "2026-03-09"),
    ("2025-12-01", "2026-01-02"),
    ("2026-12-25", "2027-02-01"),
    ("2027-03-01", "2027-04-01"),
]


def _window_case(path, whole, t_from, t_to, key, machines=None, jobs="rigid"):
    t0, t1 = _sacct_window(path, t_from, t_to, None, "UTC")
    part = read_sacct(path, timezone="UTC", window=(t0, t1))
    out = []
    for log in (whole, part):
        orgs = by_column(log.jobs, key, log.path)
        assign_unmatched(orgs, log.jobs, None, log.weight)
        try:
            w = window_instance(log, orgs, t0, t1, machines=machines, jobs=jobs)
        except WindowError as exc:
            out.append(str(exc))
            continue
        i = w.instance
        out.append(
            (
                w.excluded,
                w.backlog,
                w.jobs,
                w.work,
                w.machines,
                w.contribution_rule,
                i.names,
                i.machines.tolist(),
                i.org.tolist(),
                i.release.tolist(),
                i.size.tolist(),
                None if i.start is None else i.start.tolist(),
                None if i.pinned is None else i.pinned.tolist(),
                None if i.requested is None else i.requested.tolist(),
            )
        )
    return out


@pytest.mark.slow
def test_a_window_read_alone_gives_the_whole_logs_window(tmp_path, small_chunks):
    small_chunks(500, 1 << 16)
    path = _log(tmp_path)
    whole = read_sacct(path, timezone="UTC")
    _same(whole_read_sacct(path, timezone="UTC"), whole)
    for t_from, t_to in WINDOWS:
        for key in ("user", "account", "group", "partition"):
            for machines, jobs in ((None, "rigid"), (3, "rigid"), (4, "sequential"), (64, "rigid")):
                a, b = _window_case(path, whole, t_from, t_to, key, machines, jobs)
                assert a == b, (t_from, t_to, key, machines, jobs)
    part = read_sacct(path, timezone="UTC", window=(0, 10**10))
    assert part.n < whole.n + 6 * 5  # whole, but a few representatives of each name


def test_audit_of_a_window_read_alone_is_the_audit_of_the_whole_log(tmp_path):
    path = _log(tmp_path, copies=60)
    whole = read_sacct(path, timezone="UTC")
    mapping = tmp_path / "map.toml"
    mapping.write_text(
        '[[organization]]\nname = "sciences"\naccounts = ["physics", "chemistry"]\n'
        '[[organization]]\nname = "life"\naccounts = ["biology", "genomics"]\n'
    )
    options = [
        dict(org_by="account"),
        dict(org_by="user", jobs="sequential"),
        dict(mapping=mapping, other="rest"),
        dict(org_by="account", shares=TREE / "sacctmgr_assoc.txt", other="rest"),
    ]
    for opt in options:
        for t_from, t_to in WINDOWS[:3]:
            common = dict(t_from=t_from, t_to=t_to, timezone="UTC", points=4, **opt)
            a = audit(whole, **common)
            b = audit(path, **common)
            assert a == b, (opt, t_from)
    b = audit(path, t_from=WINDOWS[0][0], horizon=86400 * 3, timezone="UTC", org_by="user")
    a = audit(whole, t_from=WINDOWS[0][0], horizon=86400 * 3, timezone="UTC", org_by="user")
    assert a == b


def test_errors_over_the_whole_log_are_the_same_from_a_window(tmp_path):
    """A job that two organizations claim is an error wherever it is, and the window's
    jobs that no organization claims are one (jobs outside it need none): the same error,
    with the same count and jobs, from the whole log and from the window read alone."""
    path = _log(tmp_path, copies=60)
    whole = read_sacct(path, timezone="UTC")
    t0, t1 = _sacct_window(path, *WINDOWS[0], None, "UTC")
    part = read_sacct(path, timezone="UTC", window=(t0, t1))
    assert part.window is not None and part.window.outside.any()
    assert int(part.weight.sum()) == whole.n
    mapping = tmp_path / "map.toml"
    mapping.write_text('[[organization]]\nname = "a"\nusers = ["cs_alice", "cs_bob"]\n')
    twice = tmp_path / "twice.toml"
    twice.write_text(
        '[[organization]]\nname = "a"\nusers = ["cs_zed"]\n'
        '[[organization]]\nname = "b"\naccounts = ["stars"]\n'
    )
    messages = []
    for log in (whole, part):
        orgs = by_mapping(log.jobs, mapping)
        assign_unmatched(orgs, log.jobs, None, log.weight)
        with pytest.raises(MappingError) as e:
            window_instance(log, orgs, t0, t1)
        messages.append(str(e.value))
    assert messages[0] == messages[1] and "of the audited window match no" in messages[0]
    messages = []
    for log in (whole, part):
        with pytest.raises(MappingError) as e:
            by_mapping(log.jobs, twice)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    for log in (whole, part):
        with pytest.raises(MappingError) as e:
            audit(log, org_by="account", shares=TREE / "sacctmgr_assoc.txt", t_from=t0, t_to=t1)
        messages.append(str(e.value))
    assert messages[-1] == messages[-2] and "stars" in messages[-1]
    with pytest.raises(WindowError, match="read for the window"):
        window_instance(part, by_column(part.jobs, "user", part.path), t0, t1 + 1)


def test_window_read_keeps_what_the_window_needs_only(tmp_path):
    path = _log(tmp_path, copies=240)
    whole = read_sacct(path, timezone="UTC")
    t0, t1 = _sacct_window(path, "2026-06-01", "2026-06-08", None, "UTC")
    part = read_sacct(path, timezone="UTC", window=(t0, t1))
    assert part.n < whole.n / 8
    s, e = whole.jobs["submit"].to_numpy(), whole.jobs["end"].to_numpy()
    st = whole.jobs["start"].to_numpy()
    needed = (st >= 0) & (e > st) & (s < t1) & ((s >= t0) | (e > t0))
    assert part.window is not None
    inside = part.jobs.loc[~part.window.outside, "line"].to_numpy()
    assert np.array_equal(inside, whole.jobs["line"].to_numpy()[needed])


def test_skip_malformed_in_a_window_read_counts_and_lists_the_whole_logs(tmp_path):
    """Malformed records anywhere in the log (before, in and after the window) are counted
    and the first listed the same way when the log is read for one window."""
    path = _log(tmp_path, copies=60)
    lines = path.read_text().splitlines()
    for no in (3, 40, len(lines) // 2, len(lines) - 5):
        fields = lines[no].split("|")
        fields[8] = "many"  # AllocCPUS
        lines[no] = "|".join(fields)
    lines[len(lines) // 3] = "5|cs_bob|physics"
    path.write_text("\n".join(lines) + "\n")
    old, _ = _read(whole_read_sacct, path, timezone="UTC")
    new, _ = _read(read_sacct, path, timezone="UTC", window=(0, 10))
    assert old == new and ": 3 fields, the header has 11" in new  # strict: the same error
    whole = read_sacct(path, timezone="UTC", skip_malformed=True)
    _same(whole_read_sacct(path, timezone="UTC", skip_malformed=True), whole)
    for t_from, t_to in WINDOWS[:3]:
        common = dict(t_from=t_from, t_to=t_to, timezone="UTC", points=4, org_by="account")
        a = audit(whole, **common)
        b = audit(path, skip_malformed=True, **common)
        assert a == b and any("malformed" in n for n in b.notes)
