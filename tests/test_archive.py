"""Traces by name: downloads from a local HTTP server (127.0.0.1 only) with a pinned
checksum, the cache, $COOPSCHED_TRACES, and the CLI's fetch and --trace."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import http.server
import threading

import pytest
from conftest import TRACES

from coopsched.cli import main
from coopsched.workloads import archive
from coopsched.workloads.archive import ArchiveError, fetch_trace, lookup, trace_path

SWF = "; MaxProcs: 4\n; Acknowledge: test\n" + "".join(
    f"{j} {10 * j} -1 {5 + j} 1 -1 -1 1 -1 -1 1 {j % 3} 1 -1 1 1 -1 -1\n" for j in range(1, 41)
)


@pytest.fixture
def server(tmp_path):
    """A real http.server on 127.0.0.1 serving l_test/TEST-2024-1.swf.gz."""
    root = tmp_path / "www"
    (root / "l_test").mkdir(parents=True)
    data = gzip.compress(SWF.encode(), mtime=0)
    (root / "l_test" / "TEST-2024-1.swf.gz").write_bytes(data)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", hashlib.sha256(data).hexdigest()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def test_log(server, monkeypatch, tmp_path):
    url, sha = server
    log = archive.ArchiveLog(
        "TEST-2024-1", "l_test", "TEST-2024-1.swf.gz", sha, "The Testers", "a test"
    )
    monkeypatch.setitem(archive.LOGS, log.name, log)
    monkeypatch.setenv("COOPSCHED_PWA_URL", url)
    monkeypatch.setenv("COOPSCHED_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("COOPSCHED_TRACES", raising=False)
    return log


def test_lookup_names():
    assert lookup("LPC-EGEE").name == "LPC-EGEE-2004-1.2-cln"
    assert lookup("ricc-2010-2.swf.gz").name == "RICC-2010-2"
    with pytest.raises(KeyError, match="ambiguous"):
        lookup("SDSC")
    with pytest.raises(KeyError, match="known traces"):
        lookup("nope")
    url = lookup("LPC-EGEE").url("https://www.cs.huji.ac.il/labs/parallel/workload/")
    assert url.endswith("/workload/l_lpc/LPC-EGEE-2004-1.2-cln.swf.gz")


def test_every_log_the_docs_use_is_registered():
    for name in (
        "LPC-EGEE-2004-1.2-cln",
        "RICC-2010-2",
        "HPC2N-2002-2.2-cln",
        "METACENTRUM-2009-2",
        "KTH-SP2-1996-2.1-cln",
        "SDSC-SP2-1998-4.2-cln",
        "CTC-SP2-1996-3.1-cln",
        "SDSC-Par-1996-3.1-cln",
        "LANL-CM5-1994-4.1-cln",
        "LLNL-Atlas-2006-2.1-cln",
        "SDSC-DS-2004-2.1-cln",
        "CEA-Curie-2011-2.1-cln",
        "NASA-iPSC-1993-3",
    ):
        log = lookup(name)
        assert log.acknowledge and log.directory.startswith("l_")


def test_pinned_checksums_match_the_local_copies():
    """The checksums in the registry are those of the archive files we have copies of."""
    checked = 0
    for log in archive.LOGS.values():
        p = TRACES / log.filename
        if log.sha256 and p.exists():
            assert archive.sha256_of(p) == log.sha256, log.name
            checked += 1
    if not checked:
        pytest.skip("no trace copies here")


def test_fetch_downloads_into_the_cache_and_reuses_it(test_log, tmp_path):
    p = fetch_trace("test-2024", progress=True)  # a progress bar only when tqdm is there
    assert p.parent == tmp_path / "cache" and p.name == "TEST-2024-1.swf.gz"
    assert trace_path("TEST-2024-1") == p
    from coopsched.workloads.swf import read_swf

    assert len(read_swf(p).jobs) == 40


def test_wrong_checksum_is_a_clear_error(test_log, monkeypatch, tmp_path):
    bad = dataclasses.replace(test_log, sha256="0" * 64)
    monkeypatch.setitem(archive.LOGS, bad.name, bad)
    with pytest.raises(ArchiveError, match="failed its checksum"):
        fetch_trace("TEST-2024-1")
    assert not (tmp_path / "cache" / "TEST-2024-1.swf.gz").exists()


def test_records_checksum_ignores_header_whitespace_and_compression(tmp_path):
    """The records checksum is the same for the archive's file and for a copy without
    its header, uncompressed, re-indented or with CRLF line ends; a changed or a missing
    record changes it."""
    records = [line for line in SWF.splitlines() if not line.startswith(";")]
    variants = {
        "orig.swf.gz": gzip.compress(SWF.encode(), mtime=0),
        "noheader.swf": "\n".join(records).encode(),
        "spaced.swf": "\r\n".join("  " + r.replace(" ", "\t ") for r in records).encode(),
    }
    sums = set()
    for name, data in variants.items():
        (tmp_path / name).write_bytes(data)
        sums.add(archive.records_sha256(tmp_path / name))
    assert len(sums) == 1 and next(iter(sums))[1] == 40
    (tmp_path / "short.swf").write_text("\n".join(records[:-1]))
    (tmp_path / "changed.swf").write_text("\n".join([*records[:-1], records[-1] + " 0"]))
    for name in ("short.swf", "changed.swf"):
        assert archive.records_sha256(tmp_path / name) not in sums


def test_pinned_records_checksum_matches_the_local_copy():
    """METACENTRUM's pin is the records checksum of our (header-stripped) copy."""
    log = lookup("METACENTRUM")
    p = TRACES / log.filename
    if not p.exists():
        pytest.skip("no METACENTRUM copy here")
    assert log.sha256 is None
    assert archive.records_sha256(p) == (log.records_sha256, 103_656)


def test_fetch_checks_the_records_checksum(test_log, monkeypatch, tmp_path, capsys):
    www = tmp_path / "www" / "l_test" / "TEST-2024-1.swf.gz"
    good, _ = archive.records_sha256(www)
    pinned = dataclasses.replace(test_log, sha256=None, records_sha256=good)
    monkeypatch.setitem(archive.LOGS, pinned.name, pinned)
    assert main(["fetch", "TEST-2024-1"]) == 0
    assert "no checksum pinned" not in capsys.readouterr().out
    cached = tmp_path / "cache" / "TEST-2024-1.swf.gz"
    assert cached.exists()
    cached.unlink()
    bad = dataclasses.replace(pinned, records_sha256="0" * 64)
    monkeypatch.setitem(archive.LOGS, bad.name, bad)
    with pytest.raises(ArchiveError, match="failed its checksum: the 40 job records have sha256"):
        fetch_trace("TEST-2024-1")
    assert not cached.exists()
    import logging

    import pooch

    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())
    pooch.get_logger().addHandler(handler)
    try:
        assert main(["fetch", "TEST-2024-1"]) == 1
    finally:
        pooch.get_logger().removeHandler(handler)
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("error: TEST-2024-1: download from")
    assert any(m.startswith("Downloading data from") for m in seen)
    assert not any(m.startswith("SHA256 hash of") for m in seen)  # no advice to pin the file


def test_every_log_but_the_truncated_one_has_a_pin():
    unpinned = [log.name for log in archive.LOGS.values() if not (log.sha256 or log.records_sha256)]
    assert unpinned == ["NASA-iPSC-1993-3"]


def test_unreachable_server_is_a_clear_error(test_log, monkeypatch):
    monkeypatch.setenv("COOPSCHED_PWA_URL", "http://127.0.0.1:9/")
    with pytest.raises(ArchiveError, match="cannot download"):
        fetch_trace("TEST-2024-1")


def test_coopsched_traces_folder_is_used_without_download(test_log, monkeypatch, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "TEST-2024-1.swf").write_text(SWF)
    monkeypatch.setenv("COOPSCHED_TRACES", str(folder))
    monkeypatch.setenv("COOPSCHED_PWA_URL", "http://127.0.0.1:9/")  # would fail
    assert fetch_trace("TEST-2024-1") == folder / "TEST-2024-1.swf"


def test_cli_fetch_and_trace_option(test_log, capsys):
    assert main(["fetch", "TEST-2024-1"]) == 0
    out = capsys.readouterr().out
    assert "The Testers" in out and "Parallel Workloads Archive" in out
    assert main(["trace-info", "--trace", "TEST-2024-1", "--format", "json"]) == 0
    assert '"jobs": 40' in capsys.readouterr().out
    argv = ["simulate", "--trace", "TEST-2024-1", "-k", "2", "--format", "csv"]
    assert main(argv) == 0
    assert capsys.readouterr().out.startswith("org,")
    assert main(["fetch", "--list", "--format", "csv"]) == 0
    rows = {r.split(",")[0]: r for r in capsys.readouterr().out.splitlines()}
    assert "file" in rows["LPC-EGEE-2004-1.2-cln"].split(",")
    assert "job records" in rows["METACENTRUM-2009-2"].split(",")
    assert "none" in rows["NASA-iPSC-1993-3"].split(",")


def test_cli_unknown_trace_is_one_line(capsys):
    assert main(["trace-info", "--trace", "NOPE-1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and "known traces" in err and err.count("\n") == 1


def test_docs_name_every_log_and_its_contributors():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "python.md").read_text()
    for log in archive.LOGS.values():
        assert f"| {log.name} | {log.system} | {log.acknowledge} |" in text
