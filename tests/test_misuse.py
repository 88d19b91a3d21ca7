"""Accepted when it should not be, or answered from internals (issue 41, class 5): each case
is a one-line error naming the file, the line or the flag (the parameter, in Python), never a
silent answer of zeros or a message from deep inside numpy or the engine."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

import coopsched as cs
from coopsched.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "slurm-tree"
SACCT = FIXTURES / "sacct_X_utc.txt"
TREE = FIXTURES / "sacctmgr_assoc.txt"


def _error(capsys, argv: list[str], *needles: str) -> str:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code in (1, 2) and err.count("\n") == 1 and err.startswith("error: "), err
    for needle in needles:
        assert needle in err, err
    return err


@pytest.fixture
def small_swf(tmp_path) -> Path:
    line = "{} {} 5 60 2 -1 -1 2 100 -1 1 {} 1 -1 1 -1 -1 -1\n"
    path = tmp_path / "t.swf"
    path.write_text(
        "; MaxProcs: 8\n" + "".join(line.format(i + 1, 10 * i, i % 3) for i in range(50))
    )
    return path


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_a_window_past_the_end_of_a_trace_is_an_error_not_zeros(capsys, small_swf, command):
    _error(
        capsys,
        [command, small_swf, "--window-start", "10000", "--window-length", "100", "-k", "2"],
        "no job is submitted in the window (--window-start 10000",
    )
    assert main([command, str(small_swf), "--window-length", "100", "-k", "2"]) == 0


def test_an_instance_without_jobs_is_an_error(capsys, tmp_path):
    p = tmp_path / "empty.json"
    p.write_text(json.dumps({"organizations": [{"name": "a", "machines": 1}], "jobs": []}))
    _error(capsys, ["simulate", p, "--horizon", "10"], "the instance has no job")


def test_an_audit_window_without_jobs_says_so_not_ref_needs_an_organization(capsys, tmp_path):
    args = ["--timezone", "UTC", "--org-by", "account"]
    _error(
        capsys,
        ["audit", SACCT, *args, "--from", "2030-01-01", "--to", "2030-01-02"],
        "no job runs or waits in the window",
        "its jobs were submitted at",
    )
    header = SACCT.read_text().splitlines()[0]
    empty = tmp_path / "empty.txt"
    empty.write_text(header + "\n")
    _error(capsys, ["audit", empty, *args], "it has no job): nothing to audit")


def test_options_that_would_be_ignored_are_refused(capsys, tmp_path):
    _error(
        capsys,
        [
            "audit",
            SACCT,
            "--timezone",
            "UTC",
            "--org-by",
            "account",
            "--shares",
            TREE,
            "--contribution",
            "equal",
        ],
        "--contribution: not applicable with --shares",
    )
    for argv in (["simulate", "--seed", "-1"], ["reproduce", "mosp", "--seed", "-1"]):
        _error(capsys, argv, "'--seed'")
    _error(capsys, ["audit", SACCT, "--timezone", "UTC", "--seed", "-1"], "--seed: -1 is not")
    _error(capsys, ["generate", tmp_path / "x.json"], "does not end in .swf or .swf.gz")
    assert not (tmp_path / "x.json").exists()


def test_html_is_checked_first_and_written_whole(capsys, tmp_path):
    args = [
        "audit",
        str(SACCT),
        "--timezone",
        "UTC",
        "--org-by",
        "account",
        "--no-counterfactuals",
        "--points",
        "2",
        "--format",
        "csv",
    ]
    _error(capsys, [*args, "--html", tmp_path / "no" / "r.html"], "--html: cannot write")
    out = tmp_path / "r.html"
    assert main([*args, "--html", str(out)]) == 0
    assert out.read_text().rstrip().endswith("</html>")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".r.html")] == []
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_one_field_or_option_does_not_decide_the_memory(capsys, tmp_path):
    lines = SACCT.read_text().splitlines()
    cols = lines[0].split("|")
    fields = lines[1].split("|")
    fields[cols.index("AllocCPUS")] = "1000000000"
    big = tmp_path / "big.txt"
    big.write_text("\n".join([lines[0], "|".join(fields), *lines[2:]]) + "\n")
    _error(
        capsys,
        ["audit", big, "--timezone", "UTC", "--org-by", "account"],
        "runs 1,000,000,002 processors at once",
        "beyond the limit of 10,000,000",
    )
    _error(
        capsys,
        ["simulate", "--policy", "rand", "--samples", "1000000", "-k", "60", "--machines", "120"],
        "n_samples=1,000,000 at 60 organizations",
    )


INST = cs.make_instance([1, 1], [(0, 0, 3), (0, 0, 2), (1, 1, 2)], names=["a", "b"])
SCHED = cs.simulate(INST, "fifo", 6)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: cs.make_instance("ab", [(0, 0, 1)]), TypeError, "machines: expected a list"),
        (lambda: cs.make_instance([1], [5]), TypeError, r"jobs\[0\]: expected an \(org"),
        (lambda: cs.make_instance([1, 1], [(0, 0, 1)], names=["a"]), ValueError, "names: 1"),
        (lambda: cs.make_instance([1], [(0, 0, 1.5)]), TypeError, r"jobs\[0\]\[2\]: expected"),
        (lambda: cs.make_instance([0], [(0, 0, 1)]), ValueError, "at least one machine"),
        (lambda: cs.simulate(None), TypeError, "instance: expected an Instance"),
        (lambda: cs.simulate(INST, 5), TypeError, "policy: expected a policy name"),
        (lambda: cs.simulate(INST, cs.Policy), TypeError, "not its class"),
        (lambda: cs.simulate(INST, "fifo", 6, members=1), TypeError, "members: expected a list"),
        (lambda: cs.simulate(INST, "rand", 6, n_samples="5"), TypeError, "n_samples: expected"),
        (lambda: cs.simulate(INST, "rand", 6, seed=-1), ValueError, "seed: -1 is not in"),
        (lambda: cs.simulate(INST, "directcontr", 6, seed=1.5), TypeError, "seed: expected"),
        (lambda: cs.get_policy(None), TypeError, "policy: expected a policy name"),
        (lambda: cs.compare(None, 6), TypeError, "instance: expected an Instance"),
        (lambda: cs.compare(INST, 6, ["fifo"], seed="x"), TypeError, "seed: expected"),
        (lambda: cs.fairness(SCHED, None, 6), TypeError, "reference: expected a Schedule"),
        (lambda: cs.fairness(SCHED, SCHED, "6"), TypeError, "horizon: expected"),
        (lambda: cs.check_schedule("x"), TypeError, "schedule: expected a Schedule"),
        (lambda: cs.write_schedule_swf(None, "x.swf"), TypeError, "schedule: expected"),
        (lambda: cs.write_batsim_jobs(None, "x.csv"), TypeError, "schedule: expected"),
        (lambda: cs.plot_gantt(None, "x.png"), TypeError, "schedule: expected"),
        (lambda: cs.write_instance(None, "x.json"), TypeError, "inst: expected an Instance"),
        (lambda: cs.synthetic_instance(k="3"), TypeError, "k: expected a whole number"),
        (lambda: cs.synthetic_instance(seed=-1), ValueError, "seed: -1"),
        (lambda: cs.lublin_instance(k=0), ValueError, "k: 0 is below 1"),
        (lambda: SCHED.psi("6"), TypeError, "horizon: expected a whole number"),
        (lambda: SCHED.utilization(-1), ValueError, "horizon: -1 is below 0"),
        (lambda: cs.get_policy("ref").run(INST, 6, members=[9]), ValueError, "members: org"),
        (lambda: INST.restrict([7]), ValueError, "members: organization index 7"),
        (lambda: cs.audit(None), TypeError, "source: expected a log's path"),
        (lambda: cs.audit(INST, horizon=6, seed=-1), ValueError, "seed: -1"),
    ],
)
def test_python_api_misuses_name_the_parameter(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_checks_leave_good_calls_alone():
    recorded = dataclasses.replace(INST, start=SCHED.start)
    assert cs.simulate(INST, cs.get_policy("fifo"), 6).start.tolist() == SCHED.start.tolist()
    assert cs.fairness(SCHED, cs.simulate(INST, "ref", 6), 6).dpsi >= 0
    assert [r.name for r in cs.audit(recorded, horizon=6).organizations] == ["a", "b"]
