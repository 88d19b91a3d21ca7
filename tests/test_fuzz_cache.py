"""The download cache and downloads under hostile conditions, against real servers on
127.0.0.1: an altered cached file, a server that never answers, one that trickles a byte at
a time, a decompression bomb. Each ends in one clear line (or a verified re-download)."""

from __future__ import annotations

import gzip
import socket
import threading
import time

import pytest
from test_archive import server, test_log  # noqa: F401 (fixtures)

from coopsched.cli import main
from coopsched.workloads import archive
from coopsched.workloads.swf import SWFError, read_swf


def test_an_altered_cached_file_is_downloaded_again(test_log, tmp_path):  # noqa: F811
    first = archive.fetch_trace(test_log.name)
    good = first.read_bytes()
    first.write_bytes(b"garbage that is not the log")
    with pytest.warns(UserWarning, match="does not have its pinned checksum"):
        again = archive.fetch_trace(test_log.name)
    assert again == first and again.read_bytes() == good


def test_a_cached_file_is_verified_on_every_use_from_the_cli(test_log, capsys):  # noqa: F811
    path = archive.fetch_trace(test_log.name)
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF  # one flipped byte, same size
    path.write_bytes(bytes(data))
    assert main(["fetch", test_log.name]) == 0
    warned = [x for x in capsys.readouterr().err.splitlines() if x.startswith("warning: ")]
    assert len(warned) == 1 and "does not have its pinned checksum" in warned[0]
    assert archive.sha256_of(path) == test_log.sha256


class _Silent:
    """A TCP server on 127.0.0.1 that accepts and then says nothing, or trickles bytes."""

    def __init__(self, trickle: bool):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.trickle = trickle
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/"

    def serve(self):
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                if self.trickle:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                    while not self.stop.is_set():
                        try:
                            conn.sendall(b"x")
                        except OSError:
                            break
                        time.sleep(0.05)
                else:
                    self.stop.wait(10)

    def close(self):
        self.stop.set()
        self.sock.close()


@pytest.mark.parametrize("trickle", [False, True], ids=["silent", "trickle"])
def test_downloads_time_out(test_log, monkeypatch, trickle):  # noqa: F811
    srv = _Silent(trickle)
    try:
        monkeypatch.setenv("COOPSCHED_PWA_URL", srv.url)
        monkeypatch.setattr(archive, "CONNECT_TIMEOUT", 0.5)
        monkeypatch.setattr(archive, "DOWNLOAD_DEADLINE", 1.0)
        t = time.monotonic()
        with pytest.raises(archive.ArchiveError) as err:
            archive.fetch_trace(test_log.name)
        assert time.monotonic() - t < 8
        want = "took more than 1 s" if trickle else "no answer within 0.5 s"
        assert want in str(err.value) and "\n" not in str(err.value)
    finally:
        srv.close()


def test_a_download_larger_than_the_limit_is_refused(test_log, monkeypatch):  # noqa: F811
    monkeypatch.setattr(archive, "MAX_DOWNLOAD", 100)
    with pytest.raises(archive.ArchiveError, match="more than 100 bytes; refused"):
        archive.fetch_trace(test_log.name)


def test_a_decompression_bomb_is_refused(tmp_path, monkeypatch):
    import coopsched.workloads.swf as swf

    monkeypatch.setattr(swf, "MAX_DECOMPRESSED", 1_000_000)
    bomb = tmp_path / "bomb.swf.gz"
    bomb.write_bytes(gzip.compress(b"; " + b"0" * 5_000_000))
    assert bomb.stat().st_size < 20_000
    with pytest.raises(SWFError, match="more than 1,000,000 bytes once decompressed"):
        read_swf(bomb)


# ------------------------------------------------------------------ studies' output folders


def test_two_runs_cannot_compute_into_one_folder(tmp_path, capsys):
    import os

    out = tmp_path / "out"
    out.mkdir()
    (out / ".lock").write_text(f"{os.getppid()} {socket.gethostname()}")  # a live process
    assert main(["reproduce", "poa", "--quick", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"is in use by another run (pid {os.getppid()}" in err and "Traceback" not in err


def test_the_lock_of_a_dead_run_is_taken_over(tmp_path):
    from coopsched.experiments.study import output_lock

    out = tmp_path / "out"
    out.mkdir()
    (out / ".lock").write_text(f"999999999 {socket.gethostname()}")
    with pytest.warns(UserWarning, match="taking over the lock of run 999999999"), output_lock(out):
        assert (out / ".lock").read_text().startswith(str(__import__("os").getpid()))
    assert not (out / ".lock").exists()


def test_a_read_only_folder_is_one_line(tmp_path, capsys):
    import os

    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    out = tmp_path / "ro"
    out.mkdir()
    out.chmod(0o500)
    try:
        assert main(["reproduce", "poa", "--quick", "--out", str(out / "x")]) == 1
        assert "cannot write the results into" in capsys.readouterr().err
    finally:
        out.chmod(0o700)


@pytest.mark.slow
def test_a_full_disk_is_one_line(tmp_path, capsys, monkeypatch):
    """/dev/full answers every write with ENOSPC: the results table is made a link to it."""
    import os

    out = tmp_path / "full"
    out.mkdir()
    os.symlink("/dev/full", out / "results.csv")
    assert main(["reproduce", "poa", "--quick", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "cannot write the results into" in err and "No space left on device" in err


def test_a_traces_folder_that_does_not_exist_is_an_error(tmp_path, capsys):
    assert main(["reproduce", "table1", "--quick", "--traces", str(tmp_path / "nope")]) == 1
    assert "--traces" in capsys.readouterr().err
