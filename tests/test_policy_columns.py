"""``--policies``: the reproductions and studies run any registered policy (plug-ins too),
the paper's number beside a column that has one and "-" beside the others."""

import importlib.metadata as md

import numpy as np
import pandas as pd
import pytest
from conftest import TRACES

from coopsched.cli import main
from coopsched.experiments.columns import PAPER, column_key, label, resolve_policies
from coopsched.experiments.reproduce import POLICIES, TableSpec, summarize_table
from coopsched.online.policies import Policy, _registry, names, normalize, unregister


class FirstWaiting(Policy):
    """Test plug-in: the lowest-numbered waiting organization."""

    name = "First-Waiting"

    def select(self, view):
        return view.candidates()[0]


@pytest.fixture
def plugin(monkeypatch):
    """``First-Waiting`` offered through the ``coopsched.policies`` entry-point group."""

    class EP:
        name = "first-waiting"
        value = "tests:FirstWaiting"

        def load(self):
            return FirstWaiting

    real = md.entry_points

    def entry_points(**kw):  # numba asks for every group: pass those calls through
        return [EP()] if kw.get("group") == "coopsched.policies" else real(**kw)

    monkeypatch.setattr(md, "entry_points", entry_points)
    monkeypatch.setitem(_registry._state, "plugins", False)
    yield "firstwaiting"
    unregister("first-waiting")


def test_default_is_the_papers_columns_and_all_is_the_registry(plugin):
    assert resolve_policies(None, POLICIES) == PAPER == POLICIES
    assert resolve_policies("paper", ()) == PAPER
    every = resolve_policies("all", ())
    assert every == tuple(normalize(n) for n in names() if normalize(n) != "ref")
    assert plugin in every and "slurmclassic" in every and "fifo" in every
    assert resolve_policies("fifo, Slurm-Classic,paper,fifo", ())[:3] == (
        "fifo",
        "slurmclassic",
        "roundrobin",
    )
    assert len(resolve_policies("fifo,FIFO,fifo", ())) == 1


def test_bad_columns_are_refused_with_the_choices():
    with pytest.raises(ValueError, match="unknown policy 'nosuch'.*fairshare.*paper, all"):
        resolve_policies("fairshare,nosuch", ())
    with pytest.raises(ValueError, match="REF is the reference"):
        resolve_policies("ref", ())
    with pytest.raises(ValueError, match="at least one ordering"):
        column_key("rand_n0")
    assert label("rand_n75") == "RAND (N=75)" and label("htcondor") == "HTCONDOR"


def test_a_class_path_is_a_column_too():
    path = "coopsched.online.policies.baselines:Fifo"
    assert resolve_policies(f"fifo,{path}", ()) == ("fifo", path)
    assert label(path) == "FIFO"
    with pytest.raises(ValueError, match="cannot load policy"):
        resolve_policies("coopsched.online.policies.baselines:Nope", ())


def _fake_rows(policies, traces=("LPC-EGEE", "RICC"), windows=3):
    rng = np.random.default_rng(0)
    rows = []
    for t in traces:
        for w in range(windows):
            rows.append({"trace": t, "window": w} | {f"ratio_{p}": rng.random() for p in policies})
    return pd.DataFrame(rows)


def test_table_shows_the_paper_beside_its_columns_and_a_dash_beside_the_others(plugin):
    cols = resolve_policies(f"paper,maui,{plugin}", ())
    spec = TableSpec(length=50_000, traces=("LPC-EGEE", "RICC"), windows=3, policies=cols)
    stats, md_text = summarize_table(_fake_rows(cols), spec)
    assert set(stats.policy) == set(cols)
    rows: dict[str, str] = {}  # the first table (ours beside the paper)
    for line in md_text.splitlines():
        if line.startswith("| "):
            rows.setdefault(line.split(" | ")[0], line)
    assert "238 (353)" in rows["| ROUNDROBIN"] and "2839 (357)" in rows["| ROUNDROBIN"]
    for head in ("| MAUI", "| FIRST-WAITING"):
        cells = rows[head].strip(" |").split(" | ")
        assert cells[2] == "-" and cells[4] == "-"  # the paper columns of both traces
        assert cells[1] != "-"  # ours


@pytest.mark.skipif(
    not (TRACES / "LPC-EGEE-2004-1.2-cln.swf.gz").exists(), reason="traces not available"
)
def test_table1_runs_a_plugin_and_a_production_policy(tmp_path, plugin):
    from coopsched.experiments.studies import run_study

    out = tmp_path / "t1"
    df, text = run_study(
        "table1",
        out,
        quick=True,
        windows=1,
        traces=TRACES,
        policies=f"fifo,slurm-classic,{plugin},rand",
        workers=1,
        quiet=True,
    )
    assert {"ratio_fifo", "ratio_slurmclassic", f"ratio_{plugin}", "ratio_rand"} <= set(df)
    assert "ratio_roundrobin" not in df
    assert (df.filter(like="ratio_") >= 0).all().all()
    assert "| FIRST-WAITING | " in text and "| SLURM-CLASSIC | " in text
    assert "| RAND | " in text and "8 (21)" in text  # RAND's paper number is kept


def test_reproduce_cli_refuses_a_bad_policy_list_on_one_line(capsys):
    assert main(["reproduce", "table1", "--policies", "nosuch", "--traces", "."]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --policies: unknown policy 'nosuch'") and err.count("\n") == 1
    assert main(["reproduce", "mosp", "--policies", "fifo"]) == 1
    assert "do not apply" in capsys.readouterr().err


def test_reproduce_help_lists_the_registry(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    main(["reproduce", "table1", "--help"])  # a study that takes --policies
    out = " ".join(capsys.readouterr().out.split())
    assert "--policies" in out
    for name in names():
        assert name in out
    main(["reproduce", "mosp", "--help"])  # one that does not: no --policies, no list
    out = " ".join(capsys.readouterr().out.split())
    assert "--policies" not in out and "Registered policies" not in out
