"""Traces by name: the Parallel Workloads Archive logs the documentation uses.

``coopsched fetch LPC-EGEE`` (or :func:`fetch_trace`) downloads a log from the Parallel
Workloads Archive (Feitelson, Tsafrir & Krakov, "Experience with using the Parallel
Workloads Archive", JPDC 2014) into a user cache, checking a pinned SHA-256 checksum, with
pooch. coopsched never ships traces. A file already present in one of the folders of
``$COOPSCHED_TRACES`` (``os.pathsep``-separated) or in the cache is used without
downloading. The archive's address can be replaced with ``$COOPSCHED_PWA_URL`` (a mirror,
or the tests' local server); the cache folder with ``$COOPSCHED_CACHE``.

The archive asks its users to acknowledge it and the contributors of each log; the
``acknowledge`` field of every :class:`ArchiveLog` holds the log's ``Acknowledge:``
header line, and ``coopsched fetch`` prints it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .limits import MAX_DECOMPRESSED

if TYPE_CHECKING:
    from .swf import SWFTrace

#: The Parallel Workloads Archive; each log lives at ``<base>/l_<dir>/<file>``.
BASE_URL = "https://www.cs.huji.ac.il/labs/parallel/workload/"

ARCHIVE_CITATION = (
    "Parallel Workloads Archive, https://www.cs.huji.ac.il/labs/parallel/workload/ "
    "(D. G. Feitelson, D. Tsafrir and D. Krakov, JPDC 74(10), 2014)"
)


class ArchiveError(OSError):
    """A trace could not be found, downloaded or verified; the message says why."""


@dataclass(frozen=True)
class ArchiveLog:
    """One log of the archive: where it is, its checksum, whom to acknowledge.

    ``sha256`` is the checksum of the archive's file; ``records_sha256``, for a log whose
    exact file we have no copy of, the checksum of its job records
    (:func:`records_sha256`), checked after the download instead.
    """

    name: str
    directory: str
    filename: str
    sha256: str | None
    acknowledge: str
    system: str
    records_sha256: str | None = None
    #: The short name the studies and the documentation use (``LPC-EGEE``, ``SDSC-SP2``).
    alias: str = ""

    def url(self, base: str | None = None) -> str:
        """The download address (``base`` defaults to :func:`base_url`)."""
        return f"{(base or base_url()).rstrip('/')}/{self.directory}/{self.filename}"


def _log(name, directory, filename, sha256, acknowledge, system, records=None) -> ArchiveLog:
    alias = "-".join(name.split("-")[:2])  # LPC-EGEE-2004-1.2-cln -> LPC-EGEE
    if alias[-4:].isdigit():  # RICC-2010-2 -> RICC
        alias = alias.split("-")[0]
    return ArchiveLog(name, directory, filename, sha256, acknowledge, system, records, alias)


#: Logs by name. Checksums are the SHA-256 of the archive's files. For METACENTRUM the
#: only copy at hand lacks the header lines, so the checksum of its 103,656 job records
#: is pinned instead (:func:`records_sha256`). The NASA iPSC log has none: the only copy
#: at hand holds 228 of the 42,264 records its header announces (a truncated excerpt), so
#: any checksum taken from it would reject the archive's file; it is downloaded and its
#: checksum is printed, with a warning.
LOGS: dict[str, ArchiveLog] = {
    log.name: log
    for log in (
        _log(
            "LPC-EGEE-2004-1.2-cln",
            "l_lpc",
            "LPC-EGEE-2004-1.2-cln.swf.gz",
            "2fc37df5cc14c355fc7a88235f72e54fdf5f0d93de09399d015383ee5c35a59d",
            "Emmanuel Medernach",
            "LPC Clermont-Ferrand EGEE grid cluster, MaxProcs 140",
        ),
        _log(
            "RICC-2010-2",
            "l_ricc",
            "RICC-2010-2.swf.gz",
            "38b7c5c9843d9a9f3d61a2d8b927f6d39b68b368fb713886b5f2ce3499f2ec82",
            "Motoyoshi Kurokawa, RIKEN ACCC",
            "RIKEN Integrated Cluster of Clusters, MaxProcs 8192",
        ),
        _log(
            "HPC2N-2002-2.2-cln",
            "l_hpc2n",
            "HPC2N-2002-2.2-cln.swf.gz",
            "3c534857d6065cfd9cc35aac8d064c9c17172be7acf336de835006f43a626e64",
            "Ake Sandgren",
            "HPC2N Linux cluster, Umea, MaxProcs 240",
        ),
        _log(
            "METACENTRUM-2009-2",
            "l_metacentrum",
            "METACENTRUM-2009-2.swf.gz",
            None,
            "MetaCentrum, the Czech National Grid Infrastructure (the log's archive page names its contributors)",
            "Czech national grid MetaCentrum (no MaxProcs header: give --machines)",
            records="2afd76a4f73481a27d80bd86781948078da7bb759c11fbd88586b50fe6b6e8f8",
        ),
        _log(
            "KTH-SP2-1996-2.1-cln",
            "l_kth_sp2",
            "KTH-SP2-1996-2.1-cln.swf.gz",
            "3e152f201fd2e96808a735bced6ea6eb0bb07fdc447689cafb0750d87b264c0b",
            "Lars Malinowsky",
            "KTH IBM SP2, Stockholm, MaxProcs 100",
        ),
        _log(
            "SDSC-SP2-1998-4.2-cln",
            "l_sdsc_sp2",
            "SDSC-SP2-1998-4.2-cln.swf.gz",
            "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac",
            "Victor Hazlewood",
            "SDSC IBM SP2, MaxProcs 128",
        ),
        _log(
            "CTC-SP2-1996-3.1-cln",
            "l_ctc_sp2",
            "CTC-SP2-1996-3.1-cln.swf.gz",
            "9fa28ac16c4386fb81b72a91d8bd8888281df2948a9d912769d387c5ee285bb4",
            "Dan Dwyer and Steve Hotovy",
            "Cornell Theory Center IBM SP2, MaxProcs 338",
        ),
        _log(
            "SDSC-Par-1996-3.1-cln",
            "l_sdsc_par",
            "SDSC-Par-1996-3.1-cln.swf.gz",
            "cb1aab02b5e3c34659d1c1d6f73c002d415229c59f40c03fab4e20331abdaff7",
            "Reagan Moore and Allen Downey",
            "SDSC Intel Paragon, MaxProcs 400",
        ),
        _log(
            "LANL-CM5-1994-4.1-cln",
            "l_lanl_cm5",
            "LANL-CM5-1994-4.1-cln.swf.gz",
            "71ff3dfa301b3ee1bd30ebc63c5363b5e8ec488e75f1f9398aa46d485ef23c3c",
            "Curt Canada",
            "LANL Thinking Machines CM-5, MaxProcs 1024",
        ),
        _log(
            "LLNL-Atlas-2006-2.1-cln",
            "l_llnl_atlas",
            "LLNL-Atlas-2006-2.1-cln.swf.gz",
            "48cc83b7a0490252aa1ae41a4b03dd598bc0683e146be94047febee36e7e0b36",
            "Moe Jette, LLNL",
            "LLNL Atlas Linux cluster, MaxProcs 9216",
        ),
        _log(
            "SDSC-DS-2004-2.1-cln",
            "l_sdsc_ds",
            "SDSC-DS-2004-2.1-cln.swf.gz",
            "0ddb885a96a7f5ee9009d8a36ef350b1d1c451044c205811938995aac80fcc36",
            "Victor Hazlewood",
            "SDSC DataStar, MaxProcs 1664",
        ),
        _log(
            "CEA-Curie-2011-2.1-cln",
            "l_cea_curie",
            "CEA-Curie-2011-2.1-cln.swf.gz",
            "2a0fdbd40837590b491bbbac7d4cfe521de1f0b14c0dc39bbf82c4e49ea75bce",
            "Joseph Emeras, CEA/CNRS",
            "CEA Curie supercomputer, MaxProcs 93312",
        ),
        _log(
            "NASA-iPSC-1993-3",
            "l_nasa_ipsc",
            "NASA-iPSC-1993-3.swf.gz",
            None,
            "Bill Nitzberg",
            "NASA Ames Intel iPSC/860, MaxProcs 128",
        ),
    )
}


def _key(name: str) -> str:
    name = name.strip()
    for suffix in (".gz", ".swf"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return "".join(c for c in name.lower() if c.isalnum())


def lookup(name: str) -> ArchiveLog:
    """The log called ``name``: its full name, with or without ``.swf``/``.swf.gz``, its
    short name (``SDSC-SP2``), any case, or an unambiguous prefix (``ricc``).

    >>> lookup("lpc-egee").filename
    'LPC-EGEE-2004-1.2-cln.swf.gz'
    """
    key = _key(name)
    exact = [log for log in LOGS.values() if key in (_key(log.name), _key(log.alias) or None)]
    if exact:
        return exact[0]
    found = [log for log in LOGS.values() if key and _key(log.name).startswith(key)]
    if len(found) == 1:
        return found[0]
    choices = ", ".join(LOGS)
    if found:
        raise KeyError(f"trace name {name!r} is ambiguous: {', '.join(f.name for f in found)}")
    raise KeyError(f"unknown trace {name!r}; known traces: {choices}")


def base_url() -> str:
    """``$COOPSCHED_PWA_URL``, or the archive's address."""
    return os.environ.get("COOPSCHED_PWA_URL") or BASE_URL


def cache_dir() -> Path:
    """``$COOPSCHED_CACHE``, or the user cache folder (``~/.cache/coopsched`` on Linux)."""
    env = os.environ.get("COOPSCHED_CACHE")
    if env:
        return Path(env)
    import pooch

    return Path(pooch.os_cache("coopsched")) / "traces"


def alias_names() -> tuple[str, ...]:
    """The short names of the registered logs (``LPC-EGEE``, ``RICC``, ...), in order."""
    return tuple(log.alias for log in LOGS.values())


def by_alias(alias: str) -> ArchiveLog:
    """The log whose short name is exactly ``alias`` (the names the studies take)."""
    for log in LOGS.values():
        if log.alias == alias:
            return log
    raise KeyError(f"unknown log {alias!r}; choose from {', '.join(alias_names())}")


def trace_folders() -> list[Path]:
    """The folders of ``$COOPSCHED_TRACES`` (``os.pathsep``-separated), in order."""
    return [Path(p) for p in os.environ.get("COOPSCHED_TRACES", "").split(os.pathsep) if p]


def local_copy(
    log: ArchiveLog, cache: Path | None = None, *, folder: str | Path | None = None
) -> Path | None:
    """A copy of ``log`` already on disk: in ``$COOPSCHED_TRACES`` (compressed or not),
    then in the cache; with ``folder``, in that folder only. ``None`` when there is none."""
    names = [log.filename, log.filename.removesuffix(".gz")]
    folders = [Path(folder)] if folder is not None else trace_folders()
    for f in folders:
        for n in names:
            if (f / n).is_file():
                return f / n
    if folder is not None:
        return None
    cached = (cache or cache_dir()) / log.filename
    return cached if cached.is_file() else None


#: Seconds allowed to connect, and between two reads of a download.
CONNECT_TIMEOUT = 30.0
#: Seconds a whole download may take (a server trickling bytes is cut off).
DOWNLOAD_DEADLINE = 1800.0
#: Bytes a download may have (the largest archive log is far below).
MAX_DOWNLOAD = 2 * 1024**3


def _downloader(connect: float, deadline: float, max_bytes: int):
    """A pooch downloader (standard library HTTP) with a connect and read timeout, a
    deadline for the whole transfer and a size limit: every read returns as soon as some
    bytes arrive (``read1``), so a server that sends one byte every few seconds meets the
    deadline instead of holding the download forever."""

    def download(url: str, output_file, pooch_obj, check_only: bool = False) -> bool | None:
        import contextlib
        import time
        import urllib.error
        import urllib.request

        start = time.monotonic()
        try:
            with urllib.request.urlopen(url, timeout=connect) as resp:  # noqa: S310 (http/https)
                if check_only:
                    return True
                got = 0
                target = (
                    open(output_file, "wb")  # noqa: SIM115 (closed by the with below)
                    if isinstance(output_file, str | Path)
                    else contextlib.nullcontext(output_file)
                )
                with target as sink:
                    while True:
                        chunk = resp.read1(1 << 16)
                        if not chunk:
                            break
                        got += len(chunk)
                        if got > max_bytes:
                            raise ArchiveError(
                                f"{url}: more than {max_bytes:,} bytes; refused (no archive log "
                                "is that large)"
                            )
                        if time.monotonic() - start > deadline:
                            raise ArchiveError(
                                f"{url}: the download took more than {deadline:,.0f} s "
                                f"({got:,} bytes so far); try again later or use a mirror "
                                "($COOPSCHED_PWA_URL)"
                            )
                        sink.write(chunk)
        except ArchiveError:
            raise
        except urllib.error.HTTPError as exc:
            raise ArchiveError(f"{url}: HTTP {exc.code} {exc.reason}") from None
        except TimeoutError:
            raise ArchiveError(
                f"{url}: no answer within {connect:g} s (connecting or between two reads)"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise ArchiveError(f"{url}: no answer within {connect:g} s") from None
            raise ArchiveError(f"{url}: {reason}") from None
        return None

    return download


def verify_cached(log: ArchiveLog, path: Path) -> bool:
    """Whether a cached copy still has its pinned checksum (file, or job records); a log
    without a pin cannot be checked and is taken as it is."""
    if log.sha256:
        return sha256_of(path) == log.sha256
    if log.records_sha256:
        try:
            return records_sha256(path)[0] == log.records_sha256
        except (OSError, EOFError, ValueError):
            return False
    return True


def fetch_trace(
    name: str,
    *,
    base: str | None = None,
    cache: str | Path | None = None,
    progress: bool = False,
) -> Path:
    """The path of log ``name``, downloaded into the cache when not on disk yet.

    The download is checked against the pinned SHA-256 of the file, or of its job records
    (:func:`records_sha256`); a mismatch is an :class:`ArchiveError` (and the bad file is
    not kept). A copy already in the cache is checked the same way before every use; an
    altered or damaged one is deleted and downloaded again, with a warning. Downloads time
    out (:data:`CONNECT_TIMEOUT`, :data:`DOWNLOAD_DEADLINE`) and are limited in size
    (:data:`MAX_DOWNLOAD`).
    """
    import warnings

    import pooch

    log = lookup(name)
    cache = Path(cache) if cache is not None else cache_dir()
    found = local_copy(log, cache)
    if found is not None and found.parent == cache:
        if verify_cached(log, found):
            return found
        warnings.warn(
            f"{found}: the cached copy of {log.name} does not have its pinned checksum "
            "(altered or damaged); downloading it again",
            stacklevel=2,
        )
        found.unlink(missing_ok=True)
    elif found is not None:
        return found  # a folder of $COOPSCHED_TRACES: the user's own copy, trusted
    url = log.url(base)
    known = f"sha256:{log.sha256}" if log.sha256 else None
    if progress:
        import importlib.util

        progress = importlib.util.find_spec("tqdm") is not None  # pooch's bar needs tqdm
    logger = pooch.get_logger()

    def no_hash_advice(record) -> bool:
        """Drop pooch's advice to pin the file's hash: the records are checked below."""
        return not (log.records_sha256 and str(record.msg).startswith("SHA256 hash of"))

    logger.addFilter(no_hash_advice)
    try:
        path = pooch.retrieve(
            url,
            known_hash=known,
            fname=log.filename,
            path=cache,
            progressbar=progress,
            downloader=_downloader(CONNECT_TIMEOUT, DOWNLOAD_DEADLINE, MAX_DOWNLOAD),
        )
    except ArchiveError as exc:
        raise ArchiveError(f"{log.name}: cannot download: {exc}") from None
    except ValueError as exc:
        if "does not match" in str(exc):  # pooch's checksum mismatch
            raise ArchiveError(
                f"{log.name}: download from {url} failed its checksum: {exc}"
            ) from None
        raise ArchiveError(f"{log.name}: cannot download {url}: {exc}") from None
    except Exception as exc:  # network and HTTP errors
        raise ArchiveError(f"{log.name}: cannot download {url}: {exc}") from None
    finally:
        logger.removeFilter(no_hash_advice)
    if log.records_sha256 is not None:
        check_records(log, path, url)
    return Path(path)


def records_sha256(path: str | Path) -> tuple[str, int]:
    """The SHA-256 of a log's job records, and their number.

    The records are the lines that are neither blank nor comments (``;``, the SWF header),
    after decompression (gzip or not), with runs of spaces and tabs made one space and
    line ends made ``\n``: what a header stripped, recompressed or re-indented copy of the
    same log still has in common with the archive's file.
    """
    import gzip
    import hashlib

    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    read = 0
    with (gzip.open if gz else open)(path, "rb") as fh:
        for line in fh:
            read += len(line)
            if read > MAX_DECOMPRESSED:
                raise ValueError(f"{path}: more than {MAX_DECOMPRESSED:,} bytes once decompressed")
            fields = line.split()
            if not fields or fields[0].startswith(b";"):
                continue
            h.update(b" ".join(fields) + b"\n")
            n += 1
    return h.hexdigest(), n


def check_records(log: ArchiveLog, path: str | Path, url: str) -> None:
    """Raise :class:`ArchiveError` (after deleting ``path``) when the job records of the
    downloaded ``path`` do not have ``log.records_sha256``."""
    try:
        got, n = records_sha256(path)
    except (OSError, EOFError) as exc:  # a damaged gzip stream
        got, n = f"unreadable ({exc})", 0
    if got == log.records_sha256:
        return
    Path(path).unlink(missing_ok=True)
    raise ArchiveError(
        f"{log.name}: download from {url} failed its checksum: the {n} job records have "
        f"sha256 {got}, expected {log.records_sha256}; the file was not kept (a copy you "
        "trust is used without a check from a folder of $COOPSCHED_TRACES)"
    )


def sha256_of(path: str | Path) -> str:
    """SHA-256 of a file, in hexadecimal."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def trace_path(
    name_or_path: str | Path, *, download: bool = True, folder: str | Path | None = None
) -> Path:
    """A trace given as a file path or as an archive name (:func:`lookup`): the one
    locator of logs. A name is looked up in ``folder`` when given (only there: never
    downloaded), else in ``$COOPSCHED_TRACES`` and the cache, and downloaded when
    ``download`` (:func:`fetch_trace`)."""
    p = Path(name_or_path)
    if p.exists():
        return p
    try:
        log = lookup(str(name_or_path))
    except KeyError as exc:
        raise ArchiveError(f"{name_or_path}: no such file, and {exc.args[0]}") from None
    if folder is not None:
        found = local_copy(log, folder=folder)
        if found is None:
            raise ArchiveError(f"{log.name}: no {log.filename} in {folder}")
        return found
    if not download:
        found = local_copy(log)
        if found is None:
            raise ArchiveError(f"{log.name} is not downloaded; run 'coopsched fetch {log.name}'")
        return found
    return fetch_trace(log.name)


_TRACES: dict[str, SWFTrace] = {}


def load_trace(
    name_or_path: str | Path, *, download: bool = True, folder: str | Path | None = None
) -> SWFTrace:
    """:func:`coopsched.workloads.swf.read_swf` of a path or archive name
    (:func:`trace_path`), read once per process: a second call for the same file returns
    the same (shared, not to be modified) trace; :func:`clear_trace_cache` forgets them."""
    from .swf import read_swf

    path = str(trace_path(name_or_path, download=download, folder=folder))
    trace = _TRACES.get(path)
    if trace is None:
        trace = _TRACES[path] = read_swf(path)
    return trace


def clear_trace_cache() -> None:
    """Forget the traces :func:`load_trace` has read."""
    _TRACES.clear()


def logs_report():
    """The registered logs: name, system, contributors, whether a copy is on disk."""
    from ..report import Column, Report

    rows = []
    for log in LOGS.values():
        local = local_copy(log)
        rows.append(
            {
                "name": log.name,
                "system": log.system,
                "acknowledge": log.acknowledge,
                "checksum": "file"
                if log.sha256
                else "job records"
                if log.records_sha256
                else "none",
                "local_copy": str(local) if local else None,
            }
        )
    return Report(
        title="Parallel Workloads Archive logs ('coopsched fetch NAME', '--trace NAME')",
        columns=[
            Column("name", left=True),
            Column("system", left=True),
            Column("acknowledge", left=True),
            Column("checksum", "pinned checksum", left=True),
            Column("local_copy", "on disk", left=True),
        ],
        rows=rows,
        notes=[f"Please acknowledge the {ARCHIVE_CITATION} and each log's contributors."],
    )
