"""What the audit refuses, from the command line and from Python (docs/audit.md, "What the
audit refuses and why"): every case one clear error naming the parameter (or the flag), the
numbers involved and, for input files, the line. Never a traceback, never a silent answer."""

from __future__ import annotations

import html as html_lib
import json
from pathlib import Path

import pytest

import coopsched
from coopsched.cli import main
from coopsched.workloads.instance import make_instance

SACCT = Path(__file__).parent / "fixtures" / "slurm" / "sacct_X_utc.txt"
BASE = ["audit", str(SACCT), "--timezone", "UTC"]


def mapping(tmp_path: Path, machines: dict[str, int]) -> Path:
    p = tmp_path / "orgs.toml"
    p.write_text(
        "".join(
            f'[[organization]]\nname = "{a}"\naccounts = ["{a}"]\nmachines = {m}\n'
            for a, m in machines.items()
        )
    )
    return p


def cli_error(capsys, args: list[str]) -> str:
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
    return err


SHARES = {"physics": 1, "chemistry": 1, "biology": 1, "astro": 1}


def test_mapping_smaller_than_the_recorded_peak_states_the_three_numbers(tmp_path, capsys):
    m = mapping(tmp_path, {**SHARES, "astro": 0, "chemistry": 0})
    err = cli_error(capsys, [*BASE, "--mapping", str(m)])
    assert "machines sum to 2, the recorded schedule ran 4 processors at once" in err
    assert "smaller than what ran" in err


def test_mapping_of_zero_machines(tmp_path, capsys):
    m = mapping(tmp_path, dict.fromkeys(SHARES, 0))
    err = cli_error(capsys, [*BASE, "--mapping", str(m), "--machines", "4"])
    assert "sum to 0" in err and "4 (--machines)" in err


def test_mapping_and_machines_that_disagree_are_never_silently_reconciled(tmp_path, capsys):
    m = mapping(tmp_path, {**SHARES, "physics": 3})  # 6 machines
    err = cli_error(capsys, [*BASE, "--mapping", str(m), "--machines", "4"])
    assert "sum to 6" in err and "4 (--machines)" in err and "must agree" in err
    # in agreement, the audit runs on exactly that platform
    report = coopsched.audit(SACCT, timezone="UTC", mapping=m, machines=6)
    assert report.window.machines == 6


@pytest.mark.parametrize("value", ["-3", "0"])
def test_machines_not_positive(capsys, value):
    err = cli_error(capsys, [*BASE, "--org-by", "account", "--machines", value])
    assert f"--machines: {value} is not a number of processors in 1.." in err


def test_machines_below_the_recorded_peak(capsys):
    err = cli_error(capsys, [*BASE, "--org-by", "account", "--machines", "1"])
    assert "runs 4 processors at once" in err and "more than the 1 given by --machines" in err


def test_horizon_without_from_or_with_to(capsys):
    err = cli_error(capsys, [*BASE, "--org-by", "account", "--horizon", "30"])
    assert "--horizon: needs --from" in err
    err = cli_error(
        capsys, [*BASE, "--org-by", "account", "--from", "0", "--to", "9", "--horizon", "3"]
    )
    assert "give --to or --horizon, not both" in err


@pytest.mark.parametrize(
    "horizon, error",
    [(-5, ValueError), (0, ValueError), (2.5, TypeError), (True, TypeError), ("10", TypeError)],
)
def test_python_api_names_the_parameter(horizon, error):
    inst = make_instance([1], [(0, 0, 2)])
    inst.start = inst.release.copy()
    with pytest.raises(error, match=r"^horizon: "):
        coopsched.audit(inst, horizon=horizon)


@pytest.mark.parametrize(
    "option, value, pattern",
    [
        ("samples", 3, r"^samples: 3 is not a value in 4\.\."),
        ("samples", 10**9, r"^samples: .* is not a value in 4\.\.1,000,000"),
        ("machines", 10**12, r"^machines: .* is not a number of processors"),
        ("exact_max", 99, r"^exact_max: 99"),
        ("points", -1, r"^points: -1"),
        ("samples", 2.0, r"^samples: expected an integer"),
        ("method", "fast", r"^method: 'fast'"),
        ("confidence", 1.5, r"^confidence: 1.5 must be in \(0, 1\)"),
    ],
)
def test_python_api_checks_what_the_cli_checks(option, value, pattern):
    with pytest.raises((ValueError, TypeError), match=pattern):
        coopsched.audit(SACCT, timezone="UTC", org_by="account", **{option: value})


def test_horizon_beyond_2_53_is_refused():
    inst = make_instance([1], [(0, 0, 2)])
    inst.start = inst.release.copy()
    with pytest.raises(ValueError, match=r"horizon: .* is not below 2\^53"):
        coopsched.audit(inst, horizon=2**53)


def test_sampled_audit_says_how_many_coalitions_and_how_long_before_the_rest():
    said: list[str] = []
    coopsched.audit(
        SACCT,
        timezone="UTC",
        org_by="account",
        method="sampled",
        samples=30,
        with_counterfactuals=False,
        progress=said.append,
    )
    assert any("at most 30 orders, 2 x 3 coalitions each" in m for m in said)
    assert any(m.startswith("look 1: 20 of at most 30 orders") and "s to go" in m for m in said)


def test_an_ambiguous_window_start_asks_for_an_offset(tmp_path, capsys):
    err = cli_error(
        capsys,
        [
            "audit",
            str(SACCT),
            "--timezone",
            "Europe/Warsaw",
            "--org-by",
            "account",
            "--from",
            "2024-10-27T02:30",
        ],
    )
    assert "--from: 2024-10-27T02:30 happens twice in Europe/Warsaw" in err
    assert "+02:00" in err and "+01:00" in err


def test_a_log_claiming_an_absurd_platform_is_refused(tmp_path):
    swf = tmp_path / "big.swf"
    swf.write_text(
        "; MaxProcs: 100000000000\n; UnixStartTime: 0\n"
        "1 0 0 10 2 -1 -1 2 -1 -1 1 1 1 -1 1 1 -1 -1\n"
    )
    with pytest.raises(ValueError, match="100,000,000,000 processors is beyond the limit"):
        coopsched.audit(swf, org_by="user")


@pytest.mark.parametrize(
    "horizon, error",
    [(-1, ValueError), (0, ValueError), (2.5, TypeError), ("x", TypeError), (2**53, ValueError)],
)
def test_compare_and_simulate_name_the_horizon(horizon, error):
    """The command line's limits, 2^53 included (``--horizon must be ... below 2^53``)."""
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    inst = make_instance([1, 1], [(0, 0, 3), (1, 0, 2)])
    with pytest.raises(error, match=r"^horizon: "):
        coopsched.compare(inst, horizon=horizon)
    for name in ("fifo", "ref", "rand"):
        with pytest.raises(error, match=r"^horizon: "):
            simulate(inst, get_policy(name), horizon)


@pytest.mark.parametrize(
    "members, error",
    [([-1], ValueError), ([0, 5], ValueError), ([True], TypeError), ("01", TypeError)],
)
def test_simulate_names_bad_members(members, error):
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    inst = make_instance([1, 1], [(0, 0, 3), (1, 0, 2)])
    for name in ("fifo", "ref"):
        with pytest.raises(error, match=r"^members: "):
            simulate(inst, get_policy(name), 5, members)


def test_an_undecided_repeated_hour_is_noted_in_every_output(tmp_path, capsys):
    """The sacct reader reports a local time in a repeated daylight-saving hour that the
    record's own order does not decide (count and first line); the audit carries that note
    into the table, the JSON, the CSV and the HTML report."""
    header = "JobID|User|Account|Group|Partition|Submit|Start|End|AllocCPUS|State"
    rows = [
        "7|u1|acc|grp|batch|2024-10-27T01:00:00|2024-10-27T01:00:05|2024-10-27T01:30:00|1|COMPLETED",
        "8|u2|bcc|grp|batch|2024-10-27T02:10:00|2024-10-27T02:20:00|2024-10-27T02:30:00|1|COMPLETED",
    ]
    p = tmp_path / "sacct.txt"
    p.write_text("\n".join([header, *rows]) + "\n")
    base = ["audit", str(p), "--org-by", "account", "--timezone", "Europe/Warsaw"]
    base += ["--machines", "2"]
    where = f"(first: {p}:3)"

    html = tmp_path / "r.html"
    assert main([*base, "--format", "json", "--html", str(html)]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert len(notes) == 1 and notes[0].startswith("1 job(s) with a local time in a repeated")
    assert where in notes[0]
    assert html_lib.escape(notes[0]) in html.read_text()

    assert main([*base, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == f"# note: {notes[0]}"

    assert main(base) == 0
    # the console wraps long lines, inside a long path too (tmp paths under xdist are)
    table = "".join(capsys.readouterr().out.split())
    assert "".join(f"note: {notes[0]}".split()) in table


# ------------------------------------------------------------------ mapping files that cannot be read


def _bad_mapping(tmp_path: Path, kind: str, monkeypatch) -> tuple[Path, str]:
    p = tmp_path / "orgs.toml"
    if kind == "latin-1":
        p.write_bytes(b'[[organization]]\nname = "ph\xe9"\naccounts = ["physics"]\n')
        return p, f"{p}:2: byte 0xe9 at column 11 is not UTF-8"
    if kind == "directory":
        p.mkdir()
        return p, f"{p}: is a directory, not a file"
    if kind == "unreadable":  # chmod does not stop root: the read itself fails
        p.write_text('[[organization]]\nname = "a"\naccounts = ["physics"]\n')
        for method in ("read_bytes", "read_text"):

            def refuse(self, *args, _real=getattr(Path, method), **kw):
                if self == p:
                    raise PermissionError(13, "Permission denied", str(self))
                return _real(self, *args, **kw)

            monkeypatch.setattr(Path, method, refuse)
        return p, f"{p}: cannot read: Permission denied"
    if kind == "invalid TOML":
        p.write_text('[[organization]]\nname = "a"\naccounts = [physics]\n')
        return p, f"{p}: invalid TOML: Invalid value (at line 3, column 13)"
    p.write_text('[[organization]]\nname = "a"\naccounts = ["a"\n')
    return p, f"{p}: invalid TOML: Unclosed array (at end of document)"


KINDS = ["latin-1", "directory", "unreadable", "invalid TOML", "unterminated TOML"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_mapping_that_cannot_be_read_is_one_line_naming_the_file(
    tmp_path, capsys, monkeypatch, kind
):
    m, expected = _bad_mapping(tmp_path, kind, monkeypatch)
    err = cli_error(capsys, [*BASE, "--mapping", str(m)])
    assert err.startswith(f"error: {expected}")
    assert err.count("\n") == 1 and "Errno" not in err and "codec" not in err


@pytest.mark.parametrize("kind", KINDS)
def test_a_mapping_that_cannot_be_read_from_python(tmp_path, monkeypatch, kind):
    from coopsched.audit.organizations import MappingError

    m, expected = _bad_mapping(tmp_path, kind, monkeypatch)
    with pytest.raises(MappingError) as info:
        coopsched.audit(SACCT, timezone="UTC", mapping=m)
    assert str(info.value).startswith(expected) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    "policies, error, pattern",
    [
        ("fifo", TypeError, r"^policies: .* got the string 'fifo' \(write \['fifo'\]\)"),
        (3, TypeError, r"^policies: .* got int"),
        ({"fifo"}, TypeError, r"^policies: .* got set"),
        ([], ValueError, r"^policies: empty"),
        (["fifo", 3], TypeError, r"^policies\[1\]: 3 is neither"),
    ],
)
def test_compare_names_bad_policies(policies, error, pattern):
    inst = make_instance([1, 1], [(0, 0, 3), (1, 0, 2)])
    with pytest.raises(error, match=pattern):
        coopsched.compare(inst, 5, policies)


def test_compare_takes_a_list_or_tuple_of_names_and_policy_objects():
    from coopsched.online.policies import get_policy

    inst = make_instance([1, 1], [(0, 0, 3), (1, 0, 2)])
    a = coopsched.compare(inst, 5, ("fifo", "ref"))
    b = coopsched.compare(inst, 5, [get_policy("fifo"), "ref"])
    assert a.index.tolist() == b.index.tolist() == ["fifo", "ref"]
    assert a["unfairness"].tolist() == b["unfairness"].tolist()


def test_compare_cli_with_no_policy_named(capsys):
    err = cli_error(capsys, ["compare", "--policies", ","])
    assert err == "error: --policies: no policy named; give names separated by commas\n"


def test_cli_sampling_budget_flags_reach_the_report(capsys):
    argv = [*BASE, "--org-by", "account", "--method", "sampled", "--no-counterfactuals"]
    argv += ["--samples", "24", "--no-adaptive", "--interval", "bernstein", "--format", "json"]
    assert main([*argv, "--seconds", "100"]) == 0
    s = json.loads(capsys.readouterr().out)["sampling"]
    assert (s["samples"], s["max_orders"], s["seconds_budget"], s["adaptive"]) == (
        24,
        24,
        100,
        False,
    )
    assert s["interval"].startswith("per organization, empirical Bernstein")
    assert main([*argv, "--seconds", "0"]) == 1
    assert "--seconds: 0.0 is not a positive number of seconds" in capsys.readouterr().err
    assert main([*argv, "--interval", "z"]) == 1
    assert "--interval: 'z'; choose auto, hall, t, bernstein" in capsys.readouterr().err


def test_cli_estimator_flag_reaches_the_report(capsys):
    argv = [*BASE, "--org-by", "account", "--method", "sampled", "--no-counterfactuals"]
    argv += ["--samples", "24", "--format", "json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["sampling"]["estimator"].startswith("split: ")
    for name in ("ends", "plain"):
        assert main([*argv, "--estimator", name]) == 0
        s = json.loads(capsys.readouterr().out)["sampling"]
        assert s["estimator"].startswith(f"{name}: ")
    assert main([*argv, "--estimator", "z"]) == 1
    assert "--estimator: 'z'; choose split, ends or plain" in capsys.readouterr().err
