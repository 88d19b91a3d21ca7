"""Anonymity: renaming organizations, or listing them in another order, changes no number.

Every tie between organizations goes to the one whose oldest waiting job was submitted
first, round robin cycles in the canonical order, RAND samples orderings of the canonical
order and machines are numbered in it (docs/conventions.md, "Ties and anonymity"). So a
relabelled instance (organizations permuted and renamed, jobs kept in their input order with
their owners relabelled) gets the very same starts and machines, every organization the same
``psi``, and REF every coalition the same value, up to the relabelling.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.audit import AuditReport
from coopsched.online.backends import compiled_names
from coopsched.online.engine import simulate
from coopsched.online.policies import available, get_policy
from coopsched.online.ref import ref_schedule
from coopsched.online.rigid import BACKFILL
from coopsched.online.utilities import psi_sp
from coopsched.workloads.instance import Instance, Organization


def relabel(inst: Instance, perm: list[int], names: list[str]) -> tuple[Instance, np.ndarray]:
    """Organization ``perm[i]`` of ``inst`` becomes organization ``i``, named ``names[i]``.
    Returns the new instance and ``new_index[old]``."""
    new_index = np.empty(inst.k, dtype=np.int64)
    new_index[perm] = np.arange(inst.k)
    orgs = [Organization(names[i], inst.organizations[u].machines) for i, u in enumerate(perm)]
    other = Instance(
        orgs,
        new_index[inst.org],
        inst.release,
        inst.size,
        inst.processors,
        pinned=inst.pinned,
        requested=inst.requested,
    )
    return other, new_index


@st.composite
def relabelled(draw, max_k: int = 4, max_jobs: int = 12):
    inst = draw(small_instances(max_k=max_k, max_jobs=max_jobs))
    perm = draw(st.permutations(range(inst.k)))
    names = draw(
        st.lists(
            st.text("abcxyz", min_size=1, max_size=3), min_size=inst.k, max_size=inst.k, unique=True
        )
    )
    horizon = draw(st.one_of(st.none(), st.integers(1, 40)))
    return inst, list(perm), names, horizon


# every registered policy in the Python engine, and those of the declared table compiled
CASES = [
    # REF in Python values every coalition of every example: the slow set runs it
    pytest.param(c.name, "python", marks=[pytest.mark.slow] if c.name == "ref" else [])
    for c in available()
] + [(n, "compiled") for n in compiled_names()]


def _same_up_to_relabelling(a, b, new_index, horizon):
    assert a.start.tolist() == b.start.tolist()
    assert a.machine.tolist() == b.machine.tolist()
    if a.start.size:
        T = horizon if horizon is not None else int((a.start + a.instance.size).max()) + 1
        k = a.instance.k
        pa = psi_sp(a.instance.org, a.start, a.instance.size, T, k)
        pb = psi_sp(b.instance.org, b.start, b.instance.size, T, k)
        assert pa == [pb[new_index[u]] for u in range(k)]


@pytest.mark.parametrize("name, engine", CASES)
@settings(max_examples=40, deadline=None)
@given(case=relabelled())
def test_relabelling_organizations_changes_no_schedule(name, engine, case):
    inst, perm, names, horizon = case
    other, new_index = relabel(inst, perm, names)
    a = simulate(inst, get_policy(name), horizon, engine=engine)
    b = simulate(other, get_policy(name), horizon, engine=engine)
    _same_up_to_relabelling(a, b, new_index, horizon)


@settings(max_examples=60, deadline=None)
@given(case=relabelled(max_k=4, max_jobs=14))
def test_relabelling_organizations_changes_no_coalition_value(case):
    inst, perm, names, horizon = case
    other, new_index = relabel(inst, perm, names)
    T = horizon if horizon is not None else 60
    a, va = ref_schedule(inst, T)
    b, vb = ref_schedule(other, T)
    assert a.start.tolist() == b.start.tolist()
    for C in range(1 << inst.k):
        D = sum(1 << int(new_index[u]) for u in range(inst.k) if C >> u & 1)
        assert va[C] == vb[D]


def test_renaming_one_organization_keeps_refs_ties():
    """The issue's example in miniature: two organizations tie at t = 0 (nothing has
    happened yet); the older job goes first whatever the organizations are called."""
    jobs = [(0, 0, 3), (1, 0, 3), (1, 0, 3)]
    a = Instance(
        [Organization("astro", 1), Organization("physics", 1)],
        [j[0] for j in jobs],
        [j[1] for j in jobs],
        [j[2] for j in jobs],
    )
    b, _ = relabel(a, [1, 0], ["physics", "zastro"])
    sa, _ = ref_schedule(a, 10)
    sb, _ = ref_schedule(b, 10)
    assert sa.start.tolist() == sb.start.tolist() == [0, 0, 3]


# ------------------------------------------------------------------------------ the audit


def _by_name(report: AuditReport) -> dict[str, tuple]:
    return {o.name: (o.psi, o.phi_exact or o.phi, o.machines) for o in report.organizations}


def _cf(report: AuditReport) -> list:
    return [(c.policy, c.unfairness, c.utilization) for c in report.counterfactuals]


@pytest.mark.parametrize("method", ["exact", "sampled"])
@settings(max_examples=25, deadline=None)
@given(case=relabelled(max_k=4, max_jobs=10), recorded=st.sampled_from(["fifo", "roundrobin"]))
def test_relabelling_changes_no_number_of_an_audit(method, case, recorded):
    import coopsched

    inst, perm, names, horizon = case
    T = horizon or 30
    inst.start = simulate(inst, get_policy(recorded)).start
    inst.organizations = [
        Organization(f"org{u}", o.machines) for u, o in enumerate(inst.organizations)
    ]
    other, new_index = relabel(inst, perm, names)
    other.start = inst.start
    kw = {"horizon": T, "method": method, "samples": 20, "points": 3}
    a = coopsched.audit(inst, **kw)
    b = coopsched.audit(other, **kw)
    rename = {f"org{u}": names[new_index[u]] for u in range(inst.k)}
    assert {rename[n]: v for n, v in _by_name(a).items()} == _by_name(b)
    assert _cf(a) == _cf(b)


@pytest.mark.slow
def test_renaming_an_account_in_a_real_slurm_capture_changes_nothing(tmp_path):
    """The issue's case: account astro renamed zastro (so it sorts last, not first)."""
    import coopsched

    src = Path(__file__).parent / "fixtures" / "slurm" / "sacct_X_utc.txt"
    renamed = tmp_path / "sacct.txt"
    renamed.write_text(src.read_text().replace("|astro|", "|zastro|"))
    kw = {"org_by": "account", "timezone": "UTC", "machines": 4}
    a = coopsched.audit(src, **kw)
    b = coopsched.audit(renamed, **kw)
    pa = {("zastro" if n == "astro" else n): v for n, v in _by_name(a).items()}
    assert pa == _by_name(b)
    assert _cf(a) == _cf(b)


def test_machine_split_remainder_ties_follow_the_first_job_not_the_index():
    from coopsched.audit.organizations import contribution

    # equal work: one machine is left over; it goes to the earlier first job
    assert contribution([5, 5], 3, "work", tie_rank=[7, 2]) == [1, 2]
    assert contribution([5, 5], 3, "work", tie_rank=[2, 7]) == [2, 1]


# ------------------------------------------------------------------ rigid jobs, backfilled
# The audit's default model: each job holds its processors at once, under a backfilling rule.

RULES = BACKFILL


@st.composite
def rigid_relabelled(draw, max_k: int = 4, max_jobs: int = 10):
    inst, perm, names, horizon = draw(relabelled(max_k=max_k, max_jobs=max_jobs))
    n = inst.n
    q = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    slack = draw(st.lists(st.sampled_from([-1, 0, 1, 2]), min_size=n, max_size=n))
    rigid = Instance(
        inst.organizations,
        inst.org,
        inst.release,
        inst.size,
        np.array(q, dtype=np.int64),
        requested=np.maximum(1, inst.size + np.array(slack, dtype=np.int64)),
    )
    return rigid, perm, names, horizon, draw(st.sampled_from(RULES))


@pytest.mark.parametrize("name", [c.name for c in available()])
@settings(max_examples=15, deadline=None)
@given(case=rigid_relabelled())
def test_relabelling_organizations_changes_no_rigid_schedule(name, case):
    inst, perm, names, horizon, rule = case
    other, new_index = relabel(inst, perm, names)
    a = simulate(inst, get_policy(name), horizon, backfill=rule)
    b = simulate(other, get_policy(name), horizon, backfill=rule)
    assert a.info["backfill"] == b.info["backfill"] == rule
    assert a.start.tolist() == b.start.tolist()
    assert a.info["too_wide"] == b.info["too_wide"]
    pa, pb = a.psi(), b.psi()
    assert pa == [pb[new_index[u]] for u in range(inst.k)]


@pytest.mark.parametrize("name", [n for n in compiled_names() if n != "rand"])
@settings(max_examples=10, deadline=None)
@given(case=rigid_relabelled())
def test_relabelling_organizations_changes_no_compiled_rigid_schedule(name, case):
    inst, perm, names, horizon, rule = case
    other, new_index = relabel(inst, perm, names)
    a = simulate(inst, get_policy(name), horizon, backfill=rule, engine="compiled")
    b = simulate(other, get_policy(name), horizon, backfill=rule, engine="compiled")
    assert a.start.tolist() == b.start.tolist()
    assert a.psi() == [b.psi()[new_index[u]] for u in range(inst.k)]


@pytest.mark.parametrize("engine", ["python", "auto"])
@settings(max_examples=30, deadline=None)
@given(case=rigid_relabelled(max_k=4, max_jobs=10))
def test_relabelling_changes_no_rigid_coalition_value_or_phi(engine, case):
    from coopsched.online.ref.rigid import ref_rigid_schedule
    from coopsched.online.shapley import shapley

    inst, perm, names, horizon, rule = case
    other, new_index = relabel(inst, perm, names)
    T = horizon if horizon is not None else 40
    a, va = ref_rigid_schedule(inst, T, rule, coalition_runs=True, engine=engine)
    b, vb = ref_rigid_schedule(other, T, rule, coalition_runs=True, engine=engine)
    assert a.start.tolist() == b.start.tolist()
    for C in range(1 << inst.k):
        D = sum(1 << int(new_index[u]) for u in range(inst.k) if C >> u & 1)
        assert va[C] == vb[D]
    phi_a, phi_b = shapley(va, inst.k), shapley(vb, inst.k)
    assert phi_a == [phi_b[new_index[u]] for u in range(inst.k)]


@settings(max_examples=10, deadline=None)
@given(case=rigid_relabelled(max_k=3, max_jobs=8), recorded=st.sampled_from(["fifo", "ref"]))
def test_relabelling_changes_no_number_of_a_rigid_audit(case, recorded):
    import coopsched

    inst, perm, names, horizon, rule = case
    T = horizon or 30
    inst.start = simulate(inst, get_policy(recorded), backfill=rule).start
    inst.organizations = [
        Organization(f"org{u}", o.machines) for u, o in enumerate(inst.organizations)
    ]
    other, new_index = relabel(inst, perm, names)
    other.start = inst.start
    kw = {"horizon": T, "method": "exact", "points": 3, "backfill": rule}
    a = coopsched.audit(inst, **kw)
    b = coopsched.audit(other, **kw)
    assert a.window.jobs == b.window.jobs == "rigid"
    rename = {f"org{u}": names[new_index[u]] for u in range(inst.k)}
    assert {rename[n]: v for n, v in _by_name(a).items()} == _by_name(b)
    assert _cf(a) == _cf(b)
