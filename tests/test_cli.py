import json

import pytest

from coopsched.cli import main
from coopsched.online.policies import get_policy, names
from coopsched.workloads.instance import make_instance
from coopsched.workloads.jsonio import write_instance


@pytest.fixture
def instance_file(tmp_path):
    p = tmp_path / "i.json"
    write_instance(make_instance([1, 1], [(0, 0, 3), (1, 1, 2), (0, 1, 2)], names=["a", "b"]), p)
    return p


def test_simulate_json(instance_file, capsys):
    assert (
        main(
            [
                "simulate",
                str(instance_file),
                "--policy",
                "fairshare",
                "--horizon",
                "10",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["policy"] == "fairshare" and out["horizon"] == 10
    assert set(out["utilities"]) == {"a", "b"}
    assert {"org", "release", "size", "start", "machine"} <= set(out["jobs"][0])


@pytest.mark.parametrize("policy", ["ref", "rand"])
def test_simulate_ref_rand_json(instance_file, capsys, policy):
    argv = [
        "simulate",
        str(instance_file),
        "--policy",
        policy,
        "--horizon",
        "10",
        "--format",
        "json",
    ]
    if policy == "rand":
        argv += ["--samples", "75"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["policy"] == policy and len(out["jobs"]) == 3
    assert all(j["start"] is not None for j in out["jobs"])


@pytest.mark.parametrize("policy", ["ref", "rand", "directcontr"])
def test_simulate_table(instance_file, capsys, policy):
    assert main(["simulate", str(instance_file), "--policy", policy, "--horizon", "10"]) == 0
    assert "psi_sp" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, code, text",
    [
        (["simulate", "--policy", "nope"], 1, "unknown policy"),
        (["simulate", "missing.json"], 1, "no such file"),
        (["simulate", "--orgs", "0"], 2, "--orgs"),
        (["simulate", "--format", "xml"], 1, "--format"),
        (["simulate", "x.txt"], 1, "expected a .json"),
        (["nonsense"], 2, "No such command"),
        (["simulate", "--horizon", "-3"], 1, "--horizon must be positive"),
    ],
)
def test_bad_arguments_one_line_error(argv, code, text, capsys):
    assert main(argv) == code
    err = capsys.readouterr().err
    assert text in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_bad_json_instance(tmp_path, capsys):
    p = tmp_path / "b.json"
    p.write_text(
        json.dumps(
            {
                "organizations": [{"name": "a", "machines": 1}],
                "jobs": [{"org": "a", "release": 0, "size": 0}],
            }
        )
    )
    assert main(["simulate", str(p)]) == 1
    assert "jobs[0].size: must be >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("workload", ["bursty", "lublin"])
def test_demo_runs(capsys, workload):
    assert main(["demo", "--workload", workload]) == 0
    out = capsys.readouterr().out
    for name in names():
        assert name in out
    assert main(["demo", "--workload", "nope"]) == 1


def test_trace_info_and_swf_errors(tmp_path, capsys):
    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 -1 -1 1 3 1 -1 1 1 -1 -1\n")
    assert main(["trace-info", str(p), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["jobs"] == 1
    p.write_text("1 0 0 10 1\n")
    assert main(["trace-info", str(p)]) == 1
    assert "t.swf:1: expected 18 fields, found 5" in capsys.readouterr().err


def test_simulate_swf_window(tmp_path, capsys):
    p = tmp_path / "t.swf"
    rows = "\n".join(
        f"{j} {10 * j} 0 {5 + j} 1 -1 -1 1 -1 -1 1 {j % 3} 1 -1 1 1 -1 -1" for j in range(1, 30)
    )
    p.write_text("; MaxProcs: 4\n" + rows + "\n")
    argv = [
        "simulate",
        str(p),
        "-k",
        "2",
        "--window-start",
        "50",
        "--window-length",
        "200",
        "--policy",
        "directcontr",
        "--format",
        "json",
    ]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["horizon"] == 200 and len(out["jobs"]) == 20


def test_numbers_are_never_truncated_when_stdout_is_not_a_terminal(capsys, monkeypatch):
    """rich squeezes tables to the terminal; a pipe or a file gets every digit."""
    from coopsched.workloads.generators import synthetic_instance

    monkeypatch.setenv("COLUMNS", "40")
    assert main(["simulate", "--policy", "fairshare"]) == 0
    out = capsys.readouterr().out
    s = get_policy("fairshare").run(synthetic_instance(k=5, seed=0), 20_000)
    for row in s.per_org_table(20_000):
        assert f"{row['psi_sp']:,}" in out
    assert "…" not in out


@pytest.mark.parametrize(
    "argv",
    [
        ["simulate", "--policy", "roundrobin"],
        ["demo"],
        ["compare", "--policies", "ref,fifo", "--horizon", "5000"],
        ["policies"],
        ["fetch", "--list"],
    ],
)
def test_every_table_command_prints_csv_and_json(argv, capsys):
    import csv
    import io

    assert main([*argv, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and all(None not in r for r in rows)
    assert main([*argv, "--format", "json"]) == 0
    json.loads(capsys.readouterr().out)


def test_policy_parameters_from_the_command_line(capsys):
    argv = ["simulate", "--policy", "rand", "--param", "n_samples=3", "--format", "json"]
    assert main([*argv, "--param", "seed=2"]) == 0
    assert main(["simulate", "--policy", "rand", "--param", "samples=3"]) == 1
    err = capsys.readouterr().err
    assert "no parameter 'samples'" in err and "n_samples, epsilon, lam, sub_policy, seed" in err
    assert main(["simulate", "--policy", "rand", "--param", "n_samples=x"]) == 1
    assert "expected an integer" in capsys.readouterr().err


def test_policy_module_class_from_the_command_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "clipol.py").write_text(
        "from coopsched.online.engine import Policy\n"
        "class Last(Policy):\n"
        "    name = 'last'\n"
        "    def select(self, view):\n"
        "        return view.candidates()[-1]\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["simulate", "--policy", "clipol:Last", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["policy"] == "last"


def test_simulate_writes_exports(tmp_path, capsys):
    import pandas as pd

    from coopsched.workloads.swf import read_swf

    g, w, b = tmp_path / "g.png", tmp_path / "s.swf", tmp_path / "out_jobs.csv"
    argv = ["simulate", "--gantt", str(g), "--swf-out", str(w), "--batsim-out", str(b)]
    assert main(argv) == 0
    assert g.read_bytes()[:4] == b"\x89PNG"
    n = len(read_swf(w).jobs)
    assert len(pd.read_csv(b)) == n > 0
    assert "wrote" in capsys.readouterr().err


def test_compare_includes_production_policies(instance_file, capsys):
    assert main(["compare", str(instance_file), "--horizon", "10"]) == 0
    out = capsys.readouterr().out
    for name in ("slurm-classic", "slurm-fairtree", "maui", "htcondor", "fairshare", "ref"):
        assert name in out
    assert main(["simulate", str(instance_file), "--policy", "slurm-classic"]) == 0


SACCT_HEADER = "JobID|User|Account|Group|Partition|Submit|Start|End|AllocCPUS|State"
SACCT_JOB = (
    "7|u1|acc|grp|batch|2024-01-01T10:00:00|2024-01-01T10:00:05|2024-01-01T10:01:00|2|COMPLETED"
)


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_warnings_are_one_plain_line_on_stderr(tmp_path, capsys, fmt):
    """A repeated sacct record is merged with a warning: shown as ``warning: ...`` on
    stderr, without Python's ``file:line: UserWarning`` and source line, never on stdout."""
    import warnings

    p = tmp_path / "dup.txt"
    p.write_text("\n".join([SACCT_HEADER, SACCT_JOB, SACCT_JOB]) + "\n")
    before = warnings.showwarning
    args = ["audit", str(p), "--timezone", "UTC", "--org-by", "account", "--format", fmt]
    assert main(args) == 0
    out, err = capsys.readouterr()
    expected = (
        f"warning: {p}: 1 record(s) repeat an earlier one exactly (first: line 3); "
        "each job run is counted once\n"
    )
    assert expected in err
    assert [line.startswith("warning: ") for line in err.splitlines()].count(True) == 1
    assert "UserWarning" not in err and "warnings.warn" not in err and ".py:" not in err
    assert "repeat an earlier one" not in out
    assert warnings.showwarning is before  # the caller's display is given back


def test_every_command_shows_warnings_plainly(capsys, monkeypatch):
    """The display is set once, at the entry point: a warning from any command (here a
    multi-line one from the policy registry) is one line."""
    import warnings

    from coopsched.online import policies

    real = policies.policies_report

    def noisy():
        warnings.warn("policy plug-in 'x':\n  cannot import it", UserWarning, stacklevel=2)
        return real()

    monkeypatch.setattr(policies, "policies_report", noisy)
    assert main(["policies", "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert err == "warning: policy plug-in 'x': cannot import it\n"
