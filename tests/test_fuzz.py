"""Hostile input for every command (issue #11): a clean one-line error with a non-zero exit,
or a valid answer checked by brute force -- never a traceback, a hang or a wrong number.

Hypothesis draws SWF lines, JSON documents and command-line values; each run goes through
``coopsched.cli.main`` in this process. Independent reference validators (written from the
format descriptions, not from the readers) say which inputs are valid; a valid input must
give exit 0 and an answer that a brute-force check accepts, an invalid one exit 1 or 2
and one line on stderr starting with ``error:``. The signal tests run real subprocesses.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coopsched.cli import main
from coopsched.experiments.sweep import load_rows, run_sweep
from coopsched.workloads.limits import MAX_JOBS, MAX_MACHINES

EXACT = 2**53
ROOT = Path(__file__).resolve().parents[1]
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def run(capsys, args: list[str]) -> tuple[int, str, str]:
    """``coopsched ARGS`` in this process: exit code, stdout, stderr."""
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_clean_error(code: int, err: str) -> None:
    assert code in (1, 2), (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err


# ----------------------------------------------------------------------------- SWF lines

INT_FIELDS = (0, 1, 3, 4, 7, 11)  # job, submit, run time, alloc procs, req procs, user (0-based)


def swf_reference(lines: list[str]) -> dict | None:
    """Runnable jobs and drops of an SWF text, or None when the text must be refused."""
    jobs, dropped = 0, {"run_time<=0": 0, "processors<=0": 0}
    seen = False
    numbers: set[float] = set()
    for line in lines:
        s = line.strip()
        if not s or s.startswith(";"):
            continue  # a comment may be long (free text)
        if len(line) > 4096:
            return None
        seen = True
        toks = s.split()
        if len(toks) != 18:
            return None
        vals = []
        for t in toks:
            try:
                v = float(t)
            except ValueError:
                return None
            if not math.isfinite(v) or abs(v) >= EXACT:
                return None
            vals.append(v)
        if any(vals[i] != int(vals[i]) for i in INT_FIELDS) or vals[1] < 0:
            return None
        if vals[0] >= 0:  # field 1 numbers the jobs: a number used twice is refused
            if vals[0] in numbers:
                return None
            numbers.add(vals[0])
        procs = vals[7] if vals[4] == -1 else vals[4]
        if vals[3] <= 0:
            dropped["run_time<=0"] += 1
        elif procs <= 0:
            dropped["processors<=0"] += 1
        else:
            jobs += 1
    return {"jobs": jobs, "dropped": dropped} if seen else None


def swf_tokens():
    return st.one_of(
        st.integers(-3, 40).map(str),
        st.sampled_from(
            [
                "-1",
                "1.5",
                "2.0",
                "1e3",
                "nan",
                "inf",
                "-inf",
                "x",
                "0x10",
                str(2**53),
                str(2**53 + 1),
                str(2**53 - 1),
                str(2**63),
                "1e30",
                "99999999999999999999",
            ]
        ),
    )


@st.composite
def swf_lines(draw):
    good = [str(draw(st.integers(0, 9))) for _ in range(18)]
    good[1] = str(draw(st.integers(0, 50)))
    good[3] = str(draw(st.integers(-1, 20)))
    good[4] = str(draw(st.integers(-1, 4)))
    kind = draw(st.sampled_from(["good", "good", "good", "token", "count", "comment", "blank"]))
    if kind == "token":
        good[draw(st.integers(0, 17))] = draw(swf_tokens())
    elif kind == "count":
        n = draw(st.sampled_from([1, 17, 19, 20, 40]))
        good = (good * 3)[:n]
    elif kind == "comment":
        return "; " + draw(st.sampled_from(["MaxProcs: 8", "Note: x", "", "UnixStartTime: 0"]))
    elif kind == "blank":
        return ""
    return " ".join(good)


@FUZZ
@given(lines=st.lists(swf_lines(), min_size=1, max_size=6), gz=st.booleans())
def test_fuzz_swf_trace_info(lines, gz, tmp_path_factory, capsys):
    path = tmp_path_factory.mktemp("swf") / ("t.swf.gz" if gz else "t.swf")
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    code, out, err = run(capsys, ["trace-info", path, "--format", "json"])
    ref = swf_reference(lines)
    if ref is None:
        assert_clean_error(code, err)
        return
    assert code == 0, err
    got = json.loads(out)
    assert got["jobs"] == ref["jobs"] and got["dropped"] == ref["dropped"]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


ROW = " ".join(["1"] * 18)


@pytest.mark.parametrize(
    "text, needle",
    [
        (" ".join(["1"] * 19) + "\n" + ROW + "\n", ":1: expected 18 fields, found 19"),
        (ROW + "\n" + " ".join(["1"] * 19) + "\n", ":2: expected 18 fields, found 19"),
        (" ".join(["1"] * 17 + ["99999999999999999999"]) + "\n", "field 18"),
        (" ".join(["1"] * 17 + [str(2**53 + 1)]) + "\n", "not below 2^53"),
        (" ".join(["1", str(2**63)] + ["1"] * 16) + "\n", "field 2 (submit)"),
        (" ".join(["1"] * 17 + ["inf"]) + "\n", "not a finite number"),
        (" ".join(["1"] * 17 + ["nan"]) + "\n", "not a finite number"),
        (" ".join(["1"] * 2_000_000) + "\n", "line of 3,999,999 characters"),
    ],
)
def test_swf_is_strict_and_bounded(tmp_path, capsys, text, needle):
    code, _, err = run(capsys, ["trace-info", write(tmp_path, "t.swf", text)])
    assert_clean_error(code, err)
    assert needle in err


def test_corrupt_or_truncated_gzip_is_one_line(tmp_path, capsys):
    full = gzip.compress(((ROW + "\n") * 2000).encode())
    for name, data in [
        ("cut.swf.gz", full[: len(full) // 2]),
        ("bad.swf.gz", b"\x1f\x8b" + b"x" * 40),
    ]:
        code, _, err = run(capsys, ["trace-info", write(tmp_path, name, data)])
        assert_clean_error(code, err)
        assert "gzip" in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_special_files_are_refused(tmp_path, capsys):
    fifo = tmp_path / "in.swf"
    os.mkfifo(fifo)
    for args in (["trace-info", fifo], ["simulate", tmp_path / "f.json"]):
        if args[0] == "simulate":
            os.mkfifo(args[1])
        code, _, err = run(capsys, args)  # would block forever if the FIFO were opened
        assert_clean_error(code, err)
        assert "not an ordinary file" in err
    code, _, err = run(capsys, ["trace-info", tmp_path])
    assert_clean_error(code, err)


def test_generate_writes_gzip(tmp_path, capsys):
    out = tmp_path / "g.swf.gz"
    assert run(capsys, ["generate", out, "--jobs", "20"])[0] == 0
    again = tmp_path / "h.swf.gz"
    assert run(capsys, ["generate", again, "--jobs", "20"])[0] == 0
    assert out.read_bytes() == again.read_bytes()  # deterministic bytes
    code, text, _ = run(capsys, ["trace-info", out, "--format", "json"])
    assert code == 0 and json.loads(text)["jobs"] + sum(json.loads(text)["dropped"].values()) == 20


# ---------------------------------------------------------------------- JSON instances


def json_reference(doc) -> bool:
    """Whether a decoded document is a valid instance (CONVENTIONS 4 and the limits)."""

    def integer(v, lo):
        return (
            not isinstance(v, bool)
            and isinstance(v, int | float)
            and math.isfinite(v)
            and abs(v) < EXACT
            and v == int(v)
            and v >= lo
        )

    if not isinstance(doc, dict) or set(doc) - {"organizations", "jobs", "meta"}:
        return False
    orgs, jobs = doc.get("organizations"), doc.get("jobs")
    if not isinstance(orgs, list) or not isinstance(jobs, list) or not orgs:
        return False
    names = set()
    total = 0
    for o in orgs:
        if not isinstance(o, dict) or set(o) - {"name", "machines", "speeds"}:
            return False
        if not {"name", "machines"} <= set(o):
            return False
        if not isinstance(o["name"], str) or not o["name"] or o["name"] in names:
            return False
        if not integer(o["machines"], 0):
            return False
        names.add(o["name"])
        total += int(o["machines"])
    if total == 0 or total > MAX_MACHINES:
        return False
    for j in jobs:
        if not isinstance(j, dict) or set(j) - {"org", "release", "size"}:
            return False
        if not {"org", "release", "size"} <= set(j):
            return False
        if not isinstance(j["org"], str) or j["org"] not in names:
            return False
        if not integer(j["release"], 0) or not integer(j["size"], 1):
            return False
    meta = doc.get("meta", {})
    if not isinstance(meta, dict):
        return False
    return meta.get("horizon") is None or integer(meta["horizon"], 1)


BAD_VALUES = [
    -1,
    0,
    1.5,
    2**53,
    2**63,
    1e30,
    float("inf"),
    float("nan"),
    "3",
    None,
    True,
    [1],
    {"a": 1},
]


@st.composite
def json_docs(draw):
    k = draw(st.integers(1, 3))
    orgs = [{"name": f"o{u}", "machines": draw(st.integers(0, 3))} for u in range(k)]
    jobs = [
        {
            "org": f"o{draw(st.integers(0, k - 1))}",
            "release": draw(st.integers(0, 12)),
            "size": draw(st.integers(1, 8)),
        }
        for _ in range(draw(st.integers(0, 6)))
    ]
    doc = {"organizations": orgs, "jobs": jobs}
    if draw(st.booleans()):
        doc["meta"] = {"horizon": draw(st.integers(1, 30))}
    for _ in range(draw(st.integers(0, 2))):  # perturbations
        where = draw(st.sampled_from(["org", "job", "meta", "top"]))
        bad = draw(st.sampled_from(BAD_VALUES))
        if where == "org":
            o = draw(st.sampled_from(orgs))
            o[draw(st.sampled_from(["name", "machines", "extra"]))] = bad
        elif where == "job" and jobs:
            j = draw(st.sampled_from(jobs))
            j[draw(st.sampled_from(["org", "release", "size", "extra"]))] = bad
        elif where == "meta":
            doc["meta"] = draw(st.sampled_from([{"horizon": bad}, bad]))
        else:
            doc[draw(st.sampled_from(["jobs", "organizations", "other"]))] = bad
    return doc


def psi_sp(starts, sizes, T: int) -> int:
    """CONVENTIONS 1, Eq. 3: sum of q (T - s) - q (q - 1) / 2 with q = min(p, T - s)."""
    twice = 0
    for s, p in zip(starts, sizes, strict=True):
        if s < T:
            q = min(p, T - s)
            twice += 2 * q * (T - s) - q * (q - 1)
    return twice // 2


def check_online_schedule(doc: dict, out: dict, policy: str) -> None:
    """Brute force: releases respected, one job per machine at a time, utilities exact."""
    machines = sum(o["machines"] for o in doc["organizations"])
    T = out["horizon"]
    busy: dict[int, list[tuple[int, int]]] = {}
    for job in out["jobs"]:
        if job["start"] is None:
            continue
        assert job["start"] >= job["release"] and 0 <= job["machine"] < machines
        busy.setdefault(job["machine"], []).append((job["start"], job["start"] + job["size"]))
    for spans in busy.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
    for name, value in out["utilities"].items():
        mine = [j for j in out["jobs"] if j["org"] == name and j["start"] is not None]
        assert value == psi_sp([j["start"] for j in mine], [j["size"] for j in mine], T)


@FUZZ
@given(doc=json_docs(), policy=st.sampled_from(["fifo", "ref", "fairshare"]))
def test_fuzz_json_simulate(doc, policy, tmp_path_factory, capsys):
    path = tmp_path_factory.mktemp("json") / "i.json"
    path.write_text(json.dumps(doc))  # NaN and Infinity become JSON's non-standard tokens
    code, out, err = run(capsys, ["simulate", path, "--policy", policy, "--format", "json"])
    if not json_reference(doc) or not doc.get("jobs"):  # no job: nothing to simulate
        assert_clean_error(code, err)
        return
    if (doc.get("meta") or {}).get("horizon") is None and code != 0:
        assert_clean_error(code, err)  # some commands need a horizon
        return
    assert code == 0, err
    check_online_schedule(doc, json.loads(out), policy)


@pytest.mark.parametrize(
    "text, needle",
    [
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[{"org":"a","release":9223372036854775808,"size":1}]}',
            "jobs[0].release",
        ),
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[{"org":"a","release":1e30,"size":1}]}',
            "jobs[0].release",
        ),
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[{"org":"a","release":Infinity,"size":1}]}',
            "Infinity",
        ),
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[{"org":"a","release":NaN,"size":1}]}',
            "NaN",
        ),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[{"org":"a","release":'
            + "9" * 5000
            + ',"size":1}]}',
            "invalid JSON",
        ),
        ('{"organizations":[{"name":"a","machines":0}],"jobs":[]}', "no machines in total"),
        ('{"organizations":[{"name":"a","machines":1000000000}],"jobs":[]}', "limit"),
        ('{"organizations":[{"name":1,"machines":1}],"jobs":[]}', "organizations[0].name"),
        (
            '{"organizations":[{"name":"1","machines":1}],"jobs":[{"org":1,"release":0,"size":1}]}',
            "jobs[0].org",
        ),
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[],"meta":{"horizon":-3}}',
            "meta.horizon",
        ),
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[],"meta":{"horizon":0}}',
            "meta.horizon",
        ),
        (
            '{"organizations":[{"name":"a","machines":1}],"jobs":[],"meta":{"horizon":2.5}}',
            "meta.horizon",
        ),
        ('{"organizations":[{"name":"a","machines":1}],"jobs":[],"meta":[]}', "meta"),
        (b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_json_values_are_checked(tmp_path, capsys, text, needle):
    path = write(tmp_path, "i.json", text)
    for cmd in (["compare", path, "--horizon", "10"], ["migration", path], ["mosp", path]):
        code, _, err = run(capsys, cmd)
        assert_clean_error(code, err)
        assert needle in err, (cmd, err)


# ------------------------------------------------------------------ command-line values

EXAMPLE = ROOT / "docs" / "example.json"
LUBLIN = ROOT.parent / "shared" / "traces" / "lublin_256.swf"


@pytest.mark.parametrize(
    "args, needle",
    [
        (["compare", EXAMPLE, "--horizon", "99999999999999999999"], "--horizon"),
        (["simulate", EXAMPLE, "--horizon", str(2**53)], "--horizon"),
        (["simulate", EXAMPLE, "--horizon", "-1"], "--horizon"),
        (["compare", EXAMPLE, "--horizon", "5", "--split", "zipf"], "--split"),
        (["compare", EXAMPLE, "--horizon", "5", "--machines", "4"], "--machines"),
        (["compare", EXAMPLE, "--horizon", "5", "-k", "3"], "--orgs"),
        (["simulate", EXAMPLE, "--window-start", "3"], "--window-start"),
        (["simulate", "--window-length", "3"], "--window-length"),
        (["simulate", EXAMPLE, "--policy", "fifo", "--samples", "4"], "--samples"),
        (["simulate", EXAMPLE, "--policy", "rand", "--samples", "100000000"], "limit"),
        (["simulate", EXAMPLE, "--policy", "rand", "--samples", "1e8"], "--samples"),
        (["mosp", "--alpha", "nan"], "alpha"),
        (["mosp", "--alpha", "nan", "--algorithm", "molba"], "alpha"),
        (["mosp", "--generate", "uni:2:4:4611686018427387904"], "limit"),
        (["game", "--generate", "uni:2:4611686018427387904:4"], "limit"),
        (["game", "--generate", "uni:4611686018427387904:4:4"], "limit"),
        (["generate", "/nonexistent-dir/x.swf.gz", "--jobs", "5"], "x.swf.gz"),
        (["generate", "/tmp/never-written.swf", "--jobs", str(10**10)], "limit"),
        (["compare", "--machines", str(10**9), "--horizon", "9"], "limit"),
        (["game", "--action", "search", "--starts", str(10**9)], "limit"),
        (["game", "--starts", "3"], "--starts"),
        (["game", "--action", "verify", "--stabilize"], "--stabilize"),
        (["game", "--config", "0,1"], "--config"),
        (["migration", "--hunt", "ef", "--tries", str(10**10)], "limit"),
    ],
)
def test_cli_values_are_checked(capsys, args, needle):
    code, _, err = run(capsys, args)
    assert_clean_error(code, err)
    assert needle in err, err


@pytest.mark.parametrize(
    "args, needle",
    [
        (["compare", LUBLIN, "--window-start", "99999999999999999999"], "window start"),
        (["compare", LUBLIN, "--window-start", "-5"], "window start"),
        (["compare", LUBLIN, "--window-length", str(2**63 - 1)], "window length"),
        (["compare", LUBLIN, "--machines", "1000000000"], "limit"),
    ],
)
def test_trace_options_are_checked(capsys, args, needle):
    if not LUBLIN.exists():
        pytest.skip("trace not available")
    code, _, err = run(capsys, args)
    assert_clean_error(code, err)
    assert needle in err, err


def test_a_job_on_too_many_processors_is_refused_before_memory_runs_out(tmp_path, capsys):
    row = ["1", "0", "0", "10", str(MAX_JOBS + 1)] + ["1"] * 13
    path = write(tmp_path, "wide.swf", "; MaxProcs: 8\n" + " ".join(row) + "\n")
    code, _, err = run(capsys, ["compare", path, "--horizon", "10"])
    assert_clean_error(code, err)
    assert "sequential jobs" in err


@FUZZ
@given(
    cmd=st.sampled_from(["simulate", "compare", "mosp", "game", "migration", "trace-info"]),
    opt=st.sampled_from(
        [
            "--horizon",
            "--seed",
            "--samples",
            "--alpha",
            "--starts",
            "--cost",
            "--window-start",
            "--orgs",
            "--order",
            "--format",
        ]
    ),
    value=st.sampled_from(
        ["0", "-1", "1", "3", "nan", "inf", "1e8", str(2**63), str(2**64), "", "x", "lpt"]
    ),
)
def test_fuzz_cli_values(cmd, opt, value, capsys):
    inputs = {
        "simulate": [EXAMPLE],
        "compare": [EXAMPLE],
        "mosp": ["--generate", "uni:2:6:4"],
        "game": ["--generate", "uni:2:5:3"],
        "migration": [ROOT / "docs" / "example-migration.json"],
        "trace-info": [ROOT / "docs" / "example.json"],
    }[cmd]
    code, out, err = run(capsys, [cmd, *inputs, opt, value])
    if code != 0:
        assert_clean_error(code, err)
    else:
        assert out and "Traceback" not in err


# ------------------------------------------------------- migration ids, MOSP 0 processors


def test_migration_keeps_input_ids_and_breaks_ties_by_them(tmp_path, capsys):
    doc = {
        "organizations": [{"name": "a", "machines": 1}],
        "jobs": [
            {"org": "a", "release": 0, "size": 3, "id": "j9"},
            {"org": "a", "release": 0, "size": 2, "id": "j2"},
        ],
    }
    path = write(tmp_path, "ids.json", json.dumps(doc))
    for policy in ("gm", "fcfs-fastest", "priority-fastest"):
        code, out, err = run(capsys, ["migration", path, "--policy", policy, "--format", "json"])
        assert code == 0, err
        jobs = json.loads(out)["jobs"]
        assert [j["id"] for j in jobs] == ["j9", "j2"]
        # same priority and release: the smaller id (j2) runs first
        assert jobs[1]["completion"] == "2" and jobs[0]["completion"] == "5"
    doc["jobs"][0]["id"], doc["jobs"][1]["id"] = 1, 7  # now the first job has the smaller id
    path = write(tmp_path, "ids2.json", json.dumps(doc))
    code, out, _ = run(capsys, ["migration", path, "--format", "json"])
    assert [j["completion"] for j in json.loads(out)["jobs"]] == ["3", "5"]


def test_mosp_accepts_an_organization_with_no_processors_and_no_jobs(tmp_path, capsys):
    doc = {
        "organizations": [{"name": "a", "machines": 2}, {"name": "z", "machines": 0}],
        "jobs": [
            {"org": "a", "release": 0, "size": 3, "processors": 2},
            {"org": "a", "release": 0, "size": 2, "processors": 1},
        ],
    }
    path = write(tmp_path, "m0.json", json.dumps(doc))
    for algorithm in ("local", "molba", "ilba", "meta"):
        code, out, err = run(capsys, ["mosp", path, "--algorithm", algorithm, "--format", "json"])
        assert code == 0, err
        got = json.loads(out)
        assert got["valid"] and got["makespan"] == 5
    for extra in (
        [],
        ["--rebalance", "exact"],
        ["--stabilize"],
        ["--action", "dynamics"],
        ["--action", "search", "--starts", "3"],
        ["--priority", "jobs", "--action", "verify"],
    ):
        code, out, err = run(capsys, ["game", path, "--format", "json", *extra])
        assert code == 0, (extra, err)
        assert json.loads(out)["makespan"] == 5


# ----------------------------------------------------------- exactness near the limits


def test_utilities_stay_exact_near_2_53(tmp_path, capsys):
    big = 2**52
    doc = {
        "organizations": [{"name": "a", "machines": 1}],
        "jobs": [{"org": "a", "release": 0, "size": big}],
    }
    path = write(tmp_path, "big.json", json.dumps(doc))
    code, out, err = run(capsys, ["simulate", path, "--horizon", str(big), "--format", "json"])
    assert code == 0, err
    assert json.loads(out)["utilities"]["a"] == psi_sp([0], [big], big)


# ------------------------------------------------------------------- interrupts, crashes


def _children(pid: int) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = Path(f"/proc/{d}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d))
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _spawn(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "from coopsched.cli import run; run()", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: a stray signal hits nothing else
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def _sweep_with_workers(out: Path) -> tuple[subprocess.Popen, list[int]]:
    """``coopsched reproduce mosp --quick --workers 2`` started, once both its workers run:
    the process and the workers' pids (the process is killed if they never come)."""
    p = _spawn(["reproduce", "mosp", "--quick", "--workers", "2", "--out", str(out)])
    deadline = time.monotonic() + 90
    kids: list[int] = []
    while time.monotonic() < deadline and len(kids) < 2 and p.poll() is None:
        kids = _children(p.pid)
        time.sleep(0.05)
    if len(kids) != 2:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        pytest.fail("the sweep did not start its workers")
    return p, kids


@needs_proc
@pytest.mark.parametrize(
    "sig, code, message",
    [(signal.SIGINT, 130, "error: interrupted"), (signal.SIGTERM, 143, "error: terminated")],
)
def test_interrupt_exits_with_one_line_and_leaves_no_worker(tmp_path, sig, code, message):
    p, kids = _sweep_with_workers(tmp_path / "r")
    try:
        time.sleep(0.5)
        os.kill(p.pid, sig)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == code
    assert err.strip().splitlines() == [message]
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids)


@needs_proc
def test_a_worker_stopped_by_sigterm_is_silent_and_the_sweep_says_so(tmp_path):
    """The root of the interrupt test's flakes (#39): a forked worker inherited the command
    line's SIGTERM handler, so the parent's terminate() made it raise and print
    ``Process ForkProcess-N:`` and a traceback whenever it was idle at that moment. Here the
    SIGTERM goes to a worker directly, every time: it must die without a word, and the
    parent must say so in one line."""
    p, kids = _sweep_with_workers(tmp_path / "r")
    try:
        os.kill(kids[0], signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    lines = err.strip().splitlines()
    assert "Traceback" not in err and "ForkProcess" not in err, err
    assert p.returncode == 1 and len(lines) == 1, err
    assert lines[0].startswith("error: mosp: a worker process died") and "resume" in lines[0]


@needs_proc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux")
def test_workers_die_with_a_killed_parent(tmp_path):
    p, kids = _sweep_with_workers(tmp_path / "r")
    try:
        time.sleep(0.5)
        p.kill()
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(k) for k in kids)


def _row(task: dict) -> dict:
    return {"value": task["i"] * 2}


def test_row_file_without_final_newline_is_repaired(tmp_path):
    out = tmp_path / "rows.jsonl"
    tasks = [{"i": i} for i in range(4)]
    run_sweep(tasks[:2], _row, out, workers=1, quiet=True)
    out.write_text(out.read_text().rstrip("\n"))  # a crash after the row, before its newline
    rows = run_sweep(tasks, _row, out, workers=1, quiet=True)
    assert [r["value"] for r in rows] == [0, 2, 4, 6]
    assert len(load_rows(out)) == 4 and out.read_text().count("\n") == 4
    # a truncated row is dropped and recomputed, never glued to the next
    text = out.read_text()
    out.write_text(text[: len(text) - 10])
    rows = run_sweep(tasks, _row, out, workers=1, quiet=True)
    assert [r["value"] for r in rows] == [0, 2, 4, 6] and len(load_rows(out)) == 4


def test_mosp_and_game_numbers_stay_exact_near_the_limits(tmp_path, capsys):
    big = 2**52

    def doc(machines, jobs):
        return json.dumps(
            {
                "organizations": [{"name": f"o{u}", "machines": m} for u, m in enumerate(machines)],
                "jobs": [
                    {"org": f"o{u}", "release": 0, "size": p, "processors": q} for u, p, q in jobs
                ],
            }
        )

    # one cluster, four sequential jobs: the makespan is their sum, exactly
    path = write(tmp_path, "seq.json", doc([1], [(0, big + 1, 1)] + [(0, big, 1)] * 3))
    for cmd in (["mosp", path, "--format", "json"], ["game", path, "--format", "json"]):
        code, out, err = run(capsys, cmd)
        assert code == 0, err
        assert json.loads(out)["makespan"] == 4 * big + 1
    # W = sum p*q = 2^66 is beyond int64 here: the score must use the exact work (Wbar =
    # Cmax, score 1; a wrapped W would give Wbar ~ 0 and score Cmax / pmax = 4)
    path = write(tmp_path, "wide.json", doc([8192], [(0, big // 2, 8192)] * 4))
    code, out, err = run(capsys, ["mosp", path, "--algorithm", "local", "--format", "json"])
    assert code == 0, err
    got = json.loads(out)
    assert got["makespan"] == 2 * big and got["score"] == 1.0
    # sizes adding up to 2^62 or more would overflow start times: refused
    path = write(tmp_path, "huge.json", doc([1], [(0, big - 1, 1)] * 1100))
    code, _, err = run(capsys, ["mosp", path])
    assert_clean_error(code, err)
    assert "2^62" in err
