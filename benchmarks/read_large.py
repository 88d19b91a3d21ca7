"""Reading a large Slurm accounting log (issue 29, item 8): memory follows the window.

Builds a synthetic ``sacct -P`` log of ``--size`` bytes (default 2 GB) into ``--dir``
(default /tmp) by repeating the real capture ``tests/fixtures/slurm-tree/sacct_X_utc.txt``
(22 jobs, 6 users, 5 accounts, arrays, never-started and running jobs), each copy's
times stretched (``--stretch``, so that jobs run for minutes to hours and copies overlap)
and shifted so that the copies cover one year, job ids renumbered. Then, each in a fresh
process, it reads the log

* ``whole``: ``read_sacct(path)``, every job kept;
* ``month``: what ``coopsched audit --from 2026-06-01 --to 2026-07-01`` does before its
  game: ``read_sacct(path, window=...)``, organizations by account, and the window's
  instance (``window_instance``, rigid jobs);
* ``old`` (with ``--old``): the whole-file reader as it was before it streamed
  (``tests/sacct_whole.py``), about 12 bytes of memory per byte of log: use a small
  ``--size``;

and prints the wall time, the CPU time and the peak resident memory (``ru_maxrss``) of
each. The log is never committed; ``--keep`` leaves it in place for another run.

    python benchmarks/read_large.py                   # 2 GB: about 20 minutes, 7 GB of memory
    python benchmarks/read_large.py --cases month     # 2 GB, the window only: about 11 minutes
    python benchmarks/read_large.py --size 200M --old # about 3 minutes
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CAPTURE = ROOT / "tests" / "fixtures" / "slurm-tree" / "sacct_X_utc.txt"
#: The year the synthetic log covers (UTC), and the audited month.
YEAR = ("2026-01-01T00:00:00", "2027-01-01T00:00:00")
MONTH = ("2026-06-01", "2026-07-01")
_TIMES = ("Submit", "Start", "End")


def _seconds(value: str) -> int:
    return int(np.datetime64(value, "s").astype(np.int64))


def synthetic_log(
    path: Path,
    copies: int,
    *,
    stretch: int = 200,
    span: tuple[str, str] = YEAR,
    source: Path = CAPTURE,
    rename: dict[int, dict[str, dict[str, str]]] | None = None,
    batch: int = 2000,
) -> int:
    """Write ``copies`` copies of the capture ``source`` into ``path``; returns its size.

    Copy ``c`` starts at ``span[0] + c * (span length / copies)``; its times are the
    capture's, counted from the capture's first submit, times ``stretch`` (``Unknown``
    stays); job ``N`` (``N_i``) becomes ``N + 1000 c`` (``N + 1000 c_i``). ``rename``:
    ``{copy: {column: {old: new}}}`` changes names in some copies (tests use it to have
    organizations that appear only outside a window).
    """
    lines = source.read_text().splitlines()
    header = lines[0].split("|")
    rows = [ln.split("|") for ln in lines[1:] if ln.strip()]
    col = {name: i for i, name in enumerate(header)}
    known = {t: np.array([r[col[t]] not in ("Unknown", "None", "") for r in rows]) for t in _TIMES}
    origin = min(_seconds(r[col["Submit"]]) for r in rows)
    rel = {
        t: np.array(
            [_seconds(r[col[t]]) - origin if k else 0 for r, k in zip(rows, known[t], strict=True)],
            dtype=np.int64,
        )
        for t in _TIMES
    }
    first, last = _seconds(span[0]), _seconds(span[1])
    step = (last - first) / copies
    jobs = [r[col["JobID"]].split("_", 1) for r in rows]
    with path.open("w") as fh:
        fh.write(lines[0] + "\n")
        for c0 in range(0, copies, batch):
            cs = np.arange(c0, min(copies, c0 + batch))
            base = first + (cs * step).astype(np.int64)
            stamps = {
                t: np.datetime_as_string(
                    (base[:, None] + rel[t][None, :] * stretch).astype("datetime64[s]"), unit="s"
                )
                for t in _TIMES
            }
            out = []
            for b, c in enumerate(cs.tolist()):
                names = (rename or {}).get(c, {})
                for j, r in enumerate(rows):
                    f = list(r)
                    num = jobs[j]
                    f[col["JobID"]] = str(int(num[0]) + 1000 * c) + (
                        "_" + num[1] if len(num) > 1 else ""
                    )
                    for t in _TIMES:
                        if known[t][j]:
                            f[col[t]] = str(stamps[t][b, j])
                    for name, change in names.items():
                        f[col[name]] = change.get(f[col[name]], f[col[name]])
                    out.append("|".join(f))
            fh.write("\n".join(out) + "\n")
    return path.stat().st_size


def _size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {tests!r})
case, path = {case!r}, {path!r}
t = time.perf_counter()
c = time.process_time()
out = {{}}
if case == "whole":
    from coopsched.workloads.sacct import read_sacct
    log = read_sacct(path, timezone="UTC")
    out["jobs kept"] = log.n
elif case == "old":
    from sacct_whole import whole_read_sacct
    log = whole_read_sacct(path, timezone="UTC")
    out["jobs kept"] = log.n
else:
    from coopsched.audit import _sacct_window, load_log
    from coopsched.audit.organizations import assign_unmatched, by_column
    from coopsched.audit.window import window_instance
    t0, t1 = _sacct_window(path, {month0!r}, {month1!r}, None, "UTC")
    log = load_log(path, timezone="UTC", window=(t0, t1))
    orgs = by_column(log.jobs, "account", log.path)
    assign_unmatched(orgs, log.jobs, None, log.weight)
    win = window_instance(log, orgs, t0, t1, jobs="rigid")
    out["rows kept"] = log.n
    out["jobs in the window"] = int(win.instance.n)
    out["backlog"] = win.backlog
out["wall s"] = round(time.perf_counter() - t, 1)
out["CPU s"] = round(time.process_time() - c, 1)
out["peak RSS MB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def run_case(case: str, path: Path) -> dict:
    """One case in a fresh process (its own peak memory)."""
    code = _CHILD.format(
        tests=str(ROOT / "tests"), case=case, path=str(path), month0=MONTH[0], month1=MONTH[1]
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])])
    res = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="2G", help="log size, e.g. 200M, 2G (default 2G)")
    parser.add_argument("--dir", default="/tmp", help="where the log is written")
    parser.add_argument("--stretch", type=int, default=200, help="time stretch of the capture")
    parser.add_argument("--old", action="store_true", help="also the reader of before")
    parser.add_argument(
        "--cases", default="whole,month", help="cases to run, comma-separated (whole, month)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the log (and reuse it)")
    args = parser.parse_args()
    size = _size(args.size)
    path = Path(args.dir) / f"coopsched-sacct-{args.size}.txt"
    copies = max(1, size // (CAPTURE.stat().st_size - len(CAPTURE.read_text().split("\n")[0])))
    t = time.perf_counter()
    if not (args.keep and path.exists()):
        synthetic_log(path, int(copies), stretch=args.stretch)
    made = time.perf_counter() - t
    print(
        f"{path}: {path.stat().st_size / 1e6:,.0f} MB, {copies:,} copies of {CAPTURE.name} "
        f"({22 * copies:,} jobs over {YEAR[0][:10]}..{YEAR[1][:10]}), written in {made:.0f} s; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    )
    cases = [c for c in args.cases.split(",") if c] + (["old"] if args.old else [])
    for case in cases:
        print(f"{case:6s}", json.dumps(run_case(case, path)), flush=True)
    if not args.keep:
        path.unlink()


if __name__ == "__main__":
    main()
