"""One registry of logs (with the studies' short names), one locator, one cached
``load_trace``: what the studies, the commands and the tests all use."""

from __future__ import annotations

import pytest
from test_archive import SWF

from coopsched.cli import main
from coopsched.experiments.windows import check_logs, trace_files
from coopsched.workloads import archive
from coopsched.workloads.archive import ArchiveError, load_trace, lookup, trace_path


@pytest.fixture
def test_log(monkeypatch, tmp_path):
    """A registered log ``TEST-2024-1`` (short name ``TEST``), an empty cache, no
    ``$COOPSCHED_TRACES`` and no way to download."""
    log = archive.ArchiveLog(
        "TEST-2024-1", "l_test", "TEST-2024-1.swf.gz", None, "The Testers", "a test", alias="TEST"
    )
    monkeypatch.setitem(archive.LOGS, log.name, log)
    monkeypatch.setenv("COOPSCHED_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COOPSCHED_PWA_URL", "http://127.0.0.1:9/")
    monkeypatch.delenv("COOPSCHED_TRACES", raising=False)
    return log


def test_every_log_has_the_short_name_the_studies_use():
    assert archive.alias_names() == (
        "LPC-EGEE",
        "RICC",
        "HPC2N",
        "METACENTRUM",
        "KTH-SP2",
        "SDSC-SP2",
        "CTC-SP2",
        "SDSC-Par",
        "LANL-CM5",
        "LLNL-Atlas",
        "SDSC-DS",
        "CEA-Curie",
        "NASA-iPSC",
    )
    for log in archive.LOGS.values():
        assert lookup(log.alias) is log and archive.by_alias(log.alias) is log
    with pytest.raises(KeyError, match="unknown log 'sdsc-sp2'; choose from LPC-EGEE"):
        archive.by_alias("sdsc-sp2")  # the studies take the short names exactly
    assert check_logs(["RICC", "CEA-Curie"], "logs") == ("RICC", "CEA-Curie")
    with pytest.raises(ValueError, match=r"^logs: unknown log\(s\) NOPE; choose from"):
        check_logs(["RICC", "NOPE"], "logs")


def test_a_folder_is_searched_alone(test_log, tmp_path, monkeypatch):
    mine, other = tmp_path / "mine", tmp_path / "other"
    mine.mkdir()
    other.mkdir()
    (other / "TEST-2024-1.swf").write_text(SWF)
    monkeypatch.setenv("COOPSCHED_TRACES", str(other))
    assert trace_path("TEST") == other / "TEST-2024-1.swf"  # $COOPSCHED_TRACES
    with pytest.raises(ArchiveError, match=f"TEST-2024-1: no TEST-2024-1.swf.gz in {mine}"):
        trace_path("TEST", folder=mine)  # asked for: that folder, never another one
    (mine / "TEST-2024-1.swf").write_text(SWF)
    assert trace_path("TEST-2024-1.swf.gz", folder=mine) == mine / "TEST-2024-1.swf"


def test_load_trace_reads_a_file_once(test_log, tmp_path):
    p = tmp_path / "TEST-2024-1.swf"
    p.write_text(SWF)
    archive.clear_trace_cache()
    first = load_trace(p)
    assert len(first.jobs) == 40
    assert load_trace(str(p)) is first  # the same file: read once
    assert load_trace("TEST", folder=tmp_path) is first  # by name, the same file
    archive.clear_trace_cache()
    assert load_trace(p) is not first


def test_studies_find_their_logs_by_the_one_locator(test_log, tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match=r"^traces: .*nope: no such folder"):
        trace_files(tmp_path / "nope", ["TEST"])
    with pytest.raises(FileNotFoundError, match=r"^traces: .*: no TEST-2024-1.swf.gz there"):
        trace_files(tmp_path, ["TEST"])
    with pytest.raises(FileNotFoundError, match="pass traces=DIR .*'coopsched fetch NAME'"):
        trace_files(None, ["TEST"])
    with pytest.raises(ValueError, match="^traces: unknown log 'NOPE'"):
        trace_files(tmp_path, ["NOPE"])
    (tmp_path / "TEST-2024-1.swf.gz").write_text(SWF)
    assert trace_files(tmp_path, ["TEST"]) == {"TEST": str(tmp_path / "TEST-2024-1.swf.gz")}
    # without a folder: $COOPSCHED_TRACES, then the cache of coopsched fetch
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "TEST-2024-1.swf.gz").write_text(SWF)
    assert trace_files(None, ["TEST"]) == {"TEST": str(cache / "TEST-2024-1.swf.gz")}
    monkeypatch.setenv("COOPSCHED_TRACES", str(tmp_path))
    assert trace_files(None, ["TEST"]) == {"TEST": str(tmp_path / "TEST-2024-1.swf.gz")}


def test_the_cli_names_the_flag(tmp_path, capsys):
    assert main(["reproduce", "fig10", "--traces", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: --traces: {tmp_path}: no LPC-EGEE-2004-1.2-cln.swf.gz there")
    assert err.count("\n") == 1
