"""`import coopsched`: the everyday functions, lazily; DataFrames out."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import coopsched as cs


def test_import_is_cheap():
    """The top-level import loads no numerical library (lazy attributes)."""
    code = (
        "import sys, coopsched; "
        "print(sorted(m for m in ('numpy', 'pandas', 'numba', 'matplotlib', 'typer') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_advertised_name_resolves():
    for name in cs.__all__:
        if name == "audit":
            continue
        assert getattr(cs, name) is not None, name
    assert cs.__version__ and cs.__version__[0].isdigit()
    with pytest.raises(AttributeError):
        cs.no_such_function  # noqa: B018


def test_audit_is_guarded():
    try:
        import coopsched.audit  # noqa: F401
    except ImportError:
        with pytest.raises(AttributeError, match="not available"):
            cs.audit  # noqa: B018
    else:
        assert cs.audit is sys.modules["coopsched.audit"]


def test_audit_is_a_function_and_still_the_package():
    """``coopsched.audit(...)`` is the audit function; ``coopsched.audit.window`` and
    ``from coopsched.audit import audit`` keep working."""
    import dataclasses
    import inspect

    from coopsched.audit import audit as audit_function
    from coopsched.audit.window import WindowError

    inst = cs.make_instance([1, 1], [(0, 0, 3), (0, 0, 2), (1, 1, 2)], names=["a", "b"])
    rec = dataclasses.replace(inst, start=cs.simulate(inst, "fifo", horizon=6).start)
    called = cs.audit(rec, horizon=6)
    assert called == audit_function(rec, horizon=6)
    assert [r.phi_exact for r in called.organizations] == ["22/1", "11/1"]
    assert cs.audit.window.WindowError is WindowError  # the submodules are attributes
    assert cs.audit.load_log is sys.modules["coopsched.audit"].load_log
    assert inspect.signature(cs.audit) == inspect.signature(audit_function)
    with pytest.raises(WindowError, match="needs horizon= \\(a positive number"):
        cs.audit(rec)
    with pytest.raises(TypeError):
        cs.audit(rec, horizon=6, no_such_option=1)


def test_simulate_by_name_with_parameters():
    inst = cs.make_instance([1, 1], [(0, 0, 3), (0, 0, 2), (1, 1, 2), (1, 2, 1)])
    a = cs.simulate(inst, "rand", horizon=5, n_samples=4, seed=1)
    b = cs.get_policy("rand", n_samples=4, seed=1).run(inst, 5)
    assert a.start.tolist() == b.start.tolist()
    assert a.info["samples"] == 4


def test_schedule_frame_matches_the_arrays():
    inst = cs.synthetic_instance(k=3, seed=1)
    s = cs.simulate(inst, "utfairshare", horizon=5000)
    df = s.to_frame()
    assert len(df) == inst.n
    started = s.start >= 0
    assert df["start"].isna().sum() == (~started).sum() > 0
    assert (df.loc[started, "start"].to_numpy() == s.start[started]).all()
    assert (df["wait"].dropna() >= 0).all()
    assert (
        df.loc[started, "machine_org"].to_numpy() == inst.machine_owner()[s.machine[started]]
    ).all()
    per_org = s.per_org_frame()
    assert per_org["psi_sp"].tolist() == s.psi(5000)


def test_compare_frame_has_ref_zero_and_psi_columns():
    inst = cs.synthetic_instance(k=3, seed=1)
    df = cs.compare(inst, 5000, ["ref", "fifo", "roundrobin"])
    assert isinstance(df, pd.DataFrame)
    assert list(df.index) == ["ref", "fifo", "roundrobin"]
    assert df.loc["ref", "unfairness"] == 0
    assert {f"psi_{n}" for n in inst.names} <= set(df.columns)
    ref = cs.get_policy("ref").run(inst, 5000)
    fifo = cs.simulate(inst, "fifo", horizon=5000)
    assert df.loc["fifo", "dpsi"] == cs.fairness(fifo, ref, 5000).dpsi


def test_compare_defaults_to_every_registered_policy():
    inst = cs.make_instance([1, 1], [(0, 0, 2), (1, 1, 1)])
    assert list(cs.compare(inst, 4).index) == cs.policies()
