"""Budgets and progress of the sampled audit at thousands of organizations (issue 41 item 3,
issue 43 items 2 and 3).

The budget is read before every chunk of coalitions, whose size follows their measured
cost; it is counted in CPU seconds (``cpu_seconds``, the workers' too) or wall-clock
seconds (``seconds``); progress goes to standard error from the start, a line per look off
a terminal. The fast tests give the budget a clock that advances with the coalitions
valued, so that they check the rule and not this machine's speed; the slow ones read the
real clocks of a command run on 2,000 and 10,000 organizations.
"""

from __future__ import annotations

import dataclasses
import io
import json
import resource
import subprocess
import sys

import numpy as np
import pytest

import coopsched as cs
from coopsched.audit import sampling
from coopsched.audit.estimation.budget import Budget, BudgetError
from coopsched.audit.progress import Progress
from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy
from coopsched.workloads.jsonio import instance_to_dict
from coopsched.workloads.limits import MAX_ORGANIZATIONS

T = 4 * 3600


def recorded(k: int, per: int = 1, seed: int = 0):
    """``k`` organizations of one machine and ``per`` jobs each, recorded under FIFO."""
    rng = np.random.default_rng(seed)
    jobs = [
        (u, int(rng.integers(0, 3600)), int(rng.integers(60, 1800)))
        for u in range(k)
        for _ in range(per)
    ]
    inst = cs.make_instance([1] * k, jobs)
    return dataclasses.replace(inst, start=simulate(inst, get_policy("fifo"), T).start)


@pytest.fixture
def coalition_clock(monkeypatch):
    """The sampling's budget on a clock that advances ``cost`` seconds per coalition
    valued (CPU and wall alike), whatever this machine's speed; returns the clock."""
    clock = {"now": 0.0, "cost": 0.05, "valued": 0}
    real_call = sampling.CoalitionValuer.__call__

    def call(self, mask):
        clock["now"] += clock["cost"]
        clock["valued"] += 1
        return real_call(self, mask)

    def budget(cpu_seconds=None, wall_seconds=None, *, threads=False):
        return Budget(
            cpu_seconds, wall_seconds, clocks=(lambda: clock["now"], lambda: clock["now"])
        )

    monkeypatch.setattr(sampling.CoalitionValuer, "__call__", call)
    monkeypatch.setattr(sampling, "Budget", budget)
    return clock


def test_a_budget_too_small_at_10000_organizations_stops_within_it(coalition_clock):
    """10,000 organizations: one antithetic pair of orders is 19,998 coalitions. The budget
    is read before every chunk (the first look used to value at least two pairs, 40,000
    coalitions, before reading the clock); once the coalitions' measured cost shows that
    the two pairs an estimate needs do not fit, the audit stops at once and says what they
    would take, in the words of the flag."""
    inst = recorded(10_000)
    with pytest.raises(
        BudgetError, match=r"^cpu_seconds: the budget \(30 CPU seconds\) cannot"
    ) as e:
        cs.audit(inst, horizon=T, method="sampled", cpu_seconds=30, with_counterfactuals=False)
    assert coalition_clock["now"] <= 30  # stopped within the budget
    assert coalition_clock["valued"] < 100  # and as soon as the cost was measured
    assert "2 x 9,999 coalitions" in str(e.value) and "about 1,9" in str(e.value)


def test_a_budget_holds_to_the_coalition_and_is_stated(coalition_clock):
    """A budget that buys some orders but not all: the sampling stops before the chunk that
    would pass it, with the orders valued whole, and the report states the budget (its
    clock, its limit, what was spent)."""
    inst = recorded(300)
    coalition_clock["cost"] = 0.01
    r = cs.audit(inst, horizon=T, method="sampled", seconds=40, with_counterfactuals=False)
    s = r.sampling
    assert s is not None and 4 <= s.samples < 20  # the first look's 20 orders cut short
    assert s.budget["clock"] == "wall" and s.budget["wall_seconds"] == 40
    assert s.budget["wall_seconds_spent"] <= 40 and coalition_clock["now"] <= 40.0 + 1e-9
    assert s.seconds_budget == 40 and s.stop in ("seconds", "decided")


def test_the_engines_start_up_is_not_the_budgets_to_pay(coalition_clock, monkeypatch):
    """numba's first compilation (tens of seconds on a cold cache) happens on the first
    coalition: the sampling makes the engine ready first and restarts its budget, so a
    start-up longer than the budget still leaves it whole (at 10,000 organizations a cold
    cache once ate a 30-second budget before one coalition was measured). Without the
    restart, the error says that nothing could be valued, not "0 s each"."""
    real_warm = sampling.CoalitionValuer.warm

    def slow_warm(self):
        coalition_clock["now"] += 100.0  # a cold compilation
        real_warm(self)

    monkeypatch.setattr(sampling.CoalitionValuer, "warm", slow_warm)
    inst = recorded(40)
    coalition_clock["cost"] = 0.01
    r = cs.audit(inst, horizon=T, method="sampled", seconds=30, with_counterfactuals=False)
    assert r.sampling is not None and r.sampling.samples >= 4
    assert r.sampling.budget["wall_seconds_spent"] <= 30
    monkeypatch.setattr(Budget, "restart", lambda self: None)
    with pytest.raises(BudgetError, match="ran out before the first coalition was valued"):
        cs.audit(inst, horizon=T, method="sampled", seconds=30, with_counterfactuals=False)


def test_progress_comes_before_the_first_coalition_and_every_look(coalition_clock):
    """The first message (what will be sampled, and the budget) is said before any
    coalition is valued, then one per look; messages carry their kind."""
    inst = recorded(40)
    said: list[tuple[str, str, int]] = []

    def progress(message: str) -> None:
        said.append((getattr(message, "kind", "?"), str(message), coalition_clock["valued"]))

    cs.audit(inst, horizon=T, method="sampled", with_counterfactuals=False, progress=progress)
    first = next(i for i, (kind, _, _) in enumerate(said) if kind == "look")
    assert said[first][1].startswith("sampling antithetic orders of 40 organizations")
    assert said[first][2] <= 1  # at most the split estimator's grand coalition valued
    looks = [m for kind, m, _ in said if kind == "look" and m.startswith("look ")]
    assert looks and all("organizations; about" in m for m in looks)
    assert {kind for kind, _, _ in said} <= {"step", "look", "tick"}


def test_a_sampled_audit_beyond_the_stated_limit_is_refused():
    k = MAX_ORGANIZATIONS + 1
    inst = cs.make_instance([1] * k, [(0, 0, 10)])
    inst = dataclasses.replace(inst, start=np.array([0]))
    with pytest.raises(ValueError, match=r"20,001 organizations: a sampled audit takes at most"):
        cs.audit(inst, horizon=100, with_counterfactuals=False, points=0)


def test_progress_off_a_terminal_is_a_line_per_look_and_quiet_silences_it(tmp_path, capsys):
    from coopsched.cli import main

    p = tmp_path / "s.json"
    p.write_text(json.dumps(instance_to_dict(recorded(30))))
    args = ["audit", str(p), "--horizon", str(T), "--method", "sampled", "--no-counterfactuals"]
    for fmt in ("json", "csv", "table"):
        assert main([*args, "--format", fmt, "--points", "2"]) == 0
        out, err = capsys.readouterr()
        lines = [ln for ln in err.splitlines() if ln.startswith("audit: ")]
        assert lines[0].startswith("audit: sampling antithetic orders of 30 organizations")
        assert any(ln.startswith("audit: look 1: 20 of at most 200 orders") for ln in lines)
        assert not any("reading" in ln or "building" in ln for ln in lines)  # steps: live only
        assert "audit: " not in out
    assert main([*args, "--format", "json", "--quiet"]) == 0
    assert "audit: " not in capsys.readouterr().err


def test_progress_on_a_terminal_is_one_live_line():
    from coopsched.cli.audit import ProgressLine

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    line = ProgressLine(term)
    assert line.live is not None
    for kind in ("step", "look", "tick"):
        line(Progress(f"a {kind}", kind))
    line.close()
    assert line.live is None and "audit: " not in term.getvalue()
    for quiet, said in ((60.0, ["audit: look 1"]), (0.0, ["audit: look 1", "audit: within"])):
        plain = io.StringIO()
        line = ProgressLine(plain, quiet_seconds=quiet)  # within a look: once a minute
        line(Progress("reading", "step"))
        line(Progress("look 1", "look"))
        line(Progress("within", "tick"))
        line.close()
        assert plain.getvalue().splitlines() == said


def test_the_report_states_the_cpu_budget_in_every_format(tmp_path, capsys):
    from coopsched.cli import main

    p = tmp_path / "s.json"
    p.write_text(json.dumps(instance_to_dict(recorded(12))))
    html = tmp_path / "r.html"
    args = ["audit", str(p), "--horizon", str(T), "--method", "sampled", "--points", "2"]
    args += ["--no-counterfactuals", "--cpu-seconds", "600", "--quiet"]
    assert main([*args, "--format", "json"]) == 0
    budget = json.loads(capsys.readouterr().out)["sampling"]["budget"]
    assert budget["clock"] == "cpu" and budget["cpu_seconds"] == 600
    assert 0 < budget["cpu_seconds_spent"] <= 600 and budget["wall_seconds"] is None
    assert main([*args, "--html", str(html)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "budget 600 CPU seconds (spent " in out
    assert "budget 600 CPU seconds (spent " in html.read_text()


def _cpu_of(args: list[str]) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``coopsched`` in a fresh process; its result and its CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [sys.executable, "-c", "from coopsched.cli import run; run()", *args],
        capture_output=True,
        text=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.mark.slow
def test_cpu_budgets_hold_on_real_clocks_at_2000_and_10000_organizations(tmp_path):
    """The command on real clocks: at 10,000 organizations a 30 CPU-second budget ends
    with the error saying what two pairs of orders would take, within 10 % of the budget;
    at 2,000 organizations 60 CPU seconds buy an estimate, their spending reported, within
    10 %. Progress comes first (before any coalition is valued)."""
    for k, budget, estimate in ((10_000, 30, False), (2_000, 60, True)):
        p = tmp_path / f"k{k}.json"
        p.write_text(json.dumps(instance_to_dict(recorded(k, per=2))))
        args = ["audit", str(p), "--horizon", str(T), "--no-counterfactuals"]
        args += ["--cpu-seconds", str(budget), "--format", "json", "--points", "2"]
        out, cpu = _cpu_of(args)
        said = [ln for ln in out.stderr.splitlines() if ln.startswith("audit: ")]
        assert said[0].startswith(f"audit: sampling antithetic orders of {k:,}"), said
        if estimate:
            assert out.returncode == 0, out.stderr
            spent = json.loads(out.stdout)["sampling"]["budget"]["cpu_seconds_spent"]
            assert spent <= 1.1 * budget
        else:
            assert out.returncode == 1 and "error: --cpu-seconds: the budget" in out.stderr
        assert cpu <= 1.1 * budget + 15, (k, cpu)  # + reading and start-up, outside the budget
