import json

import pytest

from coopsched.cli import main
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
    for name in ("ref", "rand", "directcontr", "fairshare", "roundrobin"):
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


def test_compare_includes_production_policies(instance_file, capsys):
    assert main(["compare", str(instance_file), "--horizon", "10"]) == 0
    out = capsys.readouterr().out
    for name in ("slurmclassic", "slurmfairtree", "maui", "htcondor", "fairshare", "ref"):
        assert name in out
    assert main(["simulate", str(instance_file), "--policy", "slurm-classic"]) == 0
