"""The policy registry and contract (docs/policies.md): every registered policy passes
coopsched.testing.check_policy; names, parameters, plug-ins, self-driven policies."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Sequence

import pytest

from coopsched.online.engine import Policy, PolicyError, simulate
from coopsched.online.policies import (
    POLICIES,
    Rand,
    Ref,
    available,
    get_policy,
    names,
    parse_params,
    policy_class,
    register,
    unregister,
)
from coopsched.testing import PolicyCheckError, check_policy
from coopsched.workloads.instance import make_instance


@pytest.mark.parametrize("cls", available(), ids=lambda c: c.name)
def test_every_registered_policy_passes_check_policy(cls):
    check_policy(cls, instances=12)


def test_registry_lists_the_builtin_policies_in_rank_order():
    assert names()[:2] == ["ref", "rand"]
    assert {"fifo", "roundrobin", "fairshare", "directcontr"} <= set(names())


@pytest.mark.parametrize("spelling", ["Round-Robin", "round_robin", "ROUNDROBIN", "round robin"])
def test_names_are_normalized(spelling):
    assert get_policy(spelling).name == "roundrobin"


def test_register_keeps_display_name_and_normalizes_lookup():
    @register
    class SlurmLike(Policy):
        """Test policy."""

        name = "slurm-like_x"

        def select(self, view):
            return view.candidates()[0]

    try:
        assert get_policy("slurmlikex").name == "slurm-like_x"
        assert "slurm-like_x" in names()
        with pytest.raises(ValueError, match="taken"):

            @register
            class Other(Policy):
                name = "SLURM_likex"

                def select(self, view):
                    return view.candidates()[0]

    finally:
        unregister("slurm-like_x")
    assert "slurm-like_x" not in names()


def test_a_class_put_in_POLICIES_by_hand_still_works():
    class ByHand(Policy):
        name = "byhand"

        def select(self, view):
            return view.candidates()[-1]

    POLICIES["byhand"] = ByHand
    try:
        assert isinstance(get_policy("by-hand"), ByHand)
    finally:
        unregister("byhand")


def test_module_colon_class(tmp_path, monkeypatch):
    (tmp_path / "mypolicies.py").write_text(
        textwrap.dedent(
            """
            from coopsched.online.engine import Policy

            class Last(Policy):
                name = "last"

                def __init__(self, bias: int = 0, seed: int = 0):
                    self.bias = bias
                    self.seed = seed

                def select(self, view):
                    return view.candidates()[-1]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    cls = policy_class("mypolicies:Last")
    assert get_policy("mypolicies:Last", bias=2).bias == 2
    check_policy(cls, instances=5)
    with pytest.raises(KeyError, match="cannot load"):
        policy_class("mypolicies:Nope")
    sys.modules.pop("mypolicies", None)


_PLUGIN = """
from dataclasses import dataclass

from coopsched.online.engine import Policy


@dataclass
class Options:  # needs the module in sys.modules while it runs
    bias: int = 0


class Last(Policy):
    name = "last-from-file"

    def __init__(self, bias: int = 0, seed: int = 0):
        self.bias = Options(bias).bias
        self.seed = seed

    def select(self, view):
        return view.candidates()[-1]


class NotAPolicy:
    pass
"""


def test_file_colon_class(tmp_path, monkeypatch, capsys):
    from coopsched.cli import main
    from coopsched.experiments.columns import resolve_policies

    folder = tmp_path / "not on sys.path"
    folder.mkdir()
    plugin = folder / "lastpol.py"
    plugin.write_text(_PLUGIN)
    cls = policy_class(f"{plugin}:Last")
    assert cls.__name__ == "Last" and cls.__module__ not in ("lastpol", "__main__")
    assert policy_class(f"{plugin}:Last") is cls  # the file is executed once
    monkeypatch.chdir(tmp_path)  # a relative path: from the current folder
    assert policy_class("not on sys.path/lastpol.py:Last") is cls
    assert get_policy(f"{plugin}:Last", bias=2).bias == 2
    check_policy(cls, instances=5)
    assert resolve_policies(f"fifo,{plugin}:Last", ()) == ("fifo", f"{plugin}:Last")
    argv = ["simulate", "--policy", f"{plugin}:Last", "--format", "csv"]
    assert main(argv) == 0 and capsys.readouterr().out.startswith("org,")

    (folder / "broken.py").write_text("raise RuntimeError('no luck')\n")
    for spec, why in [
        ("nofile.py:Last", "no such file nofile.py"),
        (f"{plugin}:Nope", "has no attribute 'Nope'"),
        (f"{folder}/broken.py:X", "broken.py failed: RuntimeError: no luck"),
    ]:
        with pytest.raises(KeyError, match=f"cannot load policy .*{why}"):
            policy_class(spec)
        assert main(["simulate", "--policy", spec]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: cannot load policy") and why in err
        assert err.count("\n") == 1
    with pytest.raises(KeyError, match="is not a subclass of coopsched Policy"):
        policy_class(f"{plugin}:NotAPolicy")
    with pytest.raises(ValueError, match="^policies: cannot load policy"):
        resolve_policies("fifo,nofile.py:Last", ())


def test_parameter_errors_name_the_parameter_and_the_cli_the_flag(capsys):
    from coopsched.cli import main

    with pytest.raises(ValueError, match="^items: expects NAME=VALUE, got 'bias'"):
        parse_params(Rand, ["bias"])
    with pytest.raises(ValueError, match="^items: n_samples=many: expected an integer"):
        parse_params(Rand, ["n_samples=many"])
    assert main(["simulate", "--policy", "rand", "--param", "n_samples=many"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --param: n_samples=many: expected an integer")


def test_entry_point_plugins_are_registered(monkeypatch):
    import importlib.metadata as md

    from coopsched.online.policies import _registry

    class Plugged(Policy):
        name = "plugged-in"

        def select(self, view):
            return view.candidates()[0]

    class EP:
        name = "plugged-in"
        value = "x:Plugged"

        def load(self):
            return Plugged

    monkeypatch.setattr(
        md, "entry_points", lambda group: [EP()] if group == "coopsched.policies" else []
    )
    monkeypatch.setitem(_registry._state, "plugins", False)
    try:
        assert get_policy("pluggedin").name == "plugged-in"
    finally:
        unregister("plugged-in")


def test_parameters_typed_and_unknown_names_rejected():
    assert parse_params(Rand, ["n_samples=75", "seed=3"]) == {"n_samples": 75, "seed": 3}
    assert parse_params(Ref, ["rule=none", "utility=work"]) == {"rule": None, "utility": "work"}
    with pytest.raises(
        ValueError, match="its parameters: n_samples, epsilon, lam, sub_policy, seed"
    ):
        parse_params(Rand, ["samples=3"])
    with pytest.raises(ValueError, match="expected an integer"):
        parse_params(Rand, ["n_samples=many"])
    with pytest.raises(KeyError, match="no parameter 'bogus'"):
        get_policy("fifo", bogus=1)


def test_params_round_trip():
    p = get_policy("rand", n_samples=7, seed=2)
    assert p.params() == {
        "n_samples": 7,
        "epsilon": None,
        "lam": None,
        "sub_policy": "fifo",
        "seed": 2,
    }
    assert repr(type(p)(**p.params())) == repr(p)


def test_simulate_hands_self_driven_policies_their_run():
    inst = make_instance([1, 1], [(0, 0, 3), (0, 0, 2), (1, 1, 2), (1, 1, 1)])
    for pol in (Ref(), Rand(seed=1)):
        a = simulate(inst, pol, 4)
        b = type(pol)(**pol.params()).run(inst, 4)
        assert a.start.tolist() == b.start.tolist()
        assert a.policy == pol.name


def test_a_policy_without_select_or_run_is_refused_clearly():
    class Empty(Policy):
        name = "empty"

    with pytest.raises(TypeError, match="overrides neither select"):
        simulate(make_instance([1], [(0, 0, 1)]), Empty())


class _Lookahead(Policy):
    """Self-driven cheat: the organization served first depends on every job's size."""

    name = "lookahead"

    def run(self, instance, horizon=None, members=None):
        self._first = int(instance.size.sum()) % instance.k
        with self.engine_pass():
            return simulate(instance, self, horizon, members)

    def select(self, view):
        cands = view.candidates()
        return self._first if self._first in cands else cands[0]


def test_check_policy_catches_a_clairvoyant_policy():
    with pytest.raises(PolicyCheckError, match="check .non_clairvoyant. failed: clairvoyant"):
        check_policy(_Lookahead, instances=30, checks=["non_clairvoyant"])


class _RigidLookahead(Policy):
    """Fair on sequential jobs; on rigid ones the organization served first depends on
    the run times (the sizes of a rigid instance)."""

    name = "rigid-lookahead"

    def run(self, instance, horizon=None, members=None, *, backfill=None):
        self._first = int(instance.size.sum()) % instance.k if instance.rigid else 0
        with self.engine_pass():
            return simulate(instance, self, horizon, members, backfill=backfill)

    def select(self, view):
        cands = view.candidates()
        return self._first if self._first in cands else cands[0]


def test_check_policy_catches_a_policy_clairvoyant_on_rigid_jobs_only():
    check_policy(_RigidLookahead, instances=30, checks=["valid_schedule"])
    with pytest.raises(PolicyCheckError, match="non_clairvoyant. failed: clairvoyant on rigid"):
        check_policy(_RigidLookahead, instances=30, checks=["non_clairvoyant"])


class _EarlyBird(Policy):
    """Self-driven and wrong: starts every job at time 0 on machine 0."""

    name = "earlybird"

    def run(self, instance, horizon=None, members=None):
        import numpy as np

        from coopsched.online.schedule import Schedule

        n = instance.n
        return Schedule(instance, np.zeros(n, np.int64), np.zeros(n, np.int64), self.name, horizon)


def test_check_policy_catches_an_invalid_schedule():
    with pytest.raises(PolicyCheckError, match="check .valid_schedule. failed"):
        check_policy(_EarlyBird, instances=5, checks=["valid_schedule"])


def test_head_release_and_on_release_hook():
    seen = []

    class Watch(Policy):
        name = "watch"

        def on_release(self, view, org):
            seen.append((view.t, org, view.head_release(org)))

        def select(self, view):
            return min(view.candidates(), key=lambda u: (view.head_release(u), u))

    inst = make_instance([1, 1], [(0, 0, 3), (1, 1, 1), (0, 2, 1)])
    s = simulate(inst, Watch())
    assert seen == [(0, 0, 0), (1, 1, 1), (2, 0, 2)]
    assert s.start.tolist() == [0, 1, 2]


def test_the_example_of_docs_policies_runs(capsys):
    """The complete example of docs/policies.md runs and prints what the page says."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "policies.md").read_text()
    block = text.split("## A complete example", 1)[1]
    code = re.search(r"```python\n(.*?)```", block, re.S).group(1)
    claimed = re.search(r"It prints `([^`]*)`", block).group(1)
    try:
        exec(compile(code, "docs/policies.md", "exec"), {})
        assert capsys.readouterr().out.strip() == claimed
    finally:
        unregister("longest-queue")


def test_sequence_parameters_from_text():
    class Weighted(Policy):
        name = "weighted-test"

        def __init__(self, shares: Sequence[float] | None = None, seed: int = 0):
            self.shares = shares
            self.seed = seed

        def select(self, view):
            return view.candidates()[0]

    assert parse_params(Weighted, ["shares=1,2.5,3"]) == {"shares": (1.0, 2.5, 3.0)}
    assert parse_params(Weighted, ["shares=none"]) == {"shares": None}
    with pytest.raises(ValueError, match="expected a number"):
        parse_params(Weighted, ["shares=1,x"])


def test_a_new_policy_is_one_file(tmp_path, monkeypatch):
    """A module dropped into the policies package is discovered: no other file changes."""
    import coopsched.online.policies as pkg
    from coopsched.online.policies import _registry

    (tmp_path / "dropin_policy.py").write_text(
        textwrap.dedent(
            '''
            """A drop-in policy module (test)."""
            from ..engine import Policy


            class DropIn(Policy):
                """Highest-numbered waiting organization first."""

                name = "drop-in"

                def select(self, view):
                    return view.candidates()[-1]
            '''
        )
    )
    monkeypatch.setattr(pkg, "__path__", [*pkg.__path__, str(tmp_path)])
    monkeypatch.setitem(_registry._state, "discovered", False)
    try:
        assert "drop-in" in names()
        assert get_policy("DROP_IN").select.__qualname__ == "DropIn.select"
        check_policy(policy_class("drop-in"), instances=5)
    finally:
        unregister("drop-in")
        sys.modules.pop("coopsched.online.policies.dropin_policy", None)


def test_check_policy_requires_parameters_stored_under_their_names():
    class Hidden(Policy):
        name = "hidden"

        def __init__(self, weight: int = 1, seed: int = 0):
            self._w = weight
            self.seed = seed

        def select(self, view):
            return view.candidates()[0]

    with pytest.raises(PolicyCheckError, match="weight not stored"):
        check_policy(Hidden, instances=1)


def test_cli_help_lists_the_registered_policies(capsys, monkeypatch):
    """``simulate --help`` and ``compare --help`` read the registry when help is shown."""
    from coopsched.cli import main
    from coopsched.online.policies import names

    monkeypatch.setenv("COLUMNS", "400")
    for command in ("simulate", "compare"):
        main([command, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert "Registered policies:" in out
        for name in names():
            assert name in out, (command, name)


class _Sticky(Policy):
    """State kept across runs (created in __init__, not in reset): not idempotent."""

    name = "sticky"

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._served = 0

    def select(self, view):
        self._served += 1
        cands = view.candidates()
        return cands[self._served % len(cands)]


def test_check_policy_catches_state_left_over_from_an_earlier_run():
    with pytest.raises(PolicyCheckError, match="check 'idempotent' failed"):
        check_policy(_Sticky, instances=30, checks=["idempotent"])


@pytest.mark.parametrize(
    "pick, why",
    [
        (lambda view: -1, "not an organization index"),
        (lambda view: view.k, "not an organization index"),
        (lambda view: True, "not an organization index"),
        (lambda view: 0.0, "not an organization index"),
        (lambda view: max(range(view.k), key=lambda u: -view.waiting[u]), "no waiting job"),
    ],
)
def test_check_policy_catches_invalid_picks(pick, why):
    class Bad(Policy):
        name = "bad-pick"

        def select(self, view):
            return pick(view)

    with pytest.raises(PolicyCheckError, match=f"check 'valid_picks' failed: .*{why}"):
        check_policy(Bad, instances=20)


def test_a_negative_pick_never_wraps_around_to_the_last_organization():
    class Last(Policy):
        name = "minus-one"

        def select(self, view):
            return -1

    inst = make_instance([1, 1], [(1, 0, 2)])
    with pytest.raises(PolicyError, match="returned -1 at t=0: not an organization index"):
        simulate(inst, Last())


def test_check_policy_refuses_unknown_check_names():
    with pytest.raises(ValueError, match="unknown"):
        check_policy(policy_class("fifo"), instances=1, checks=["nope"])


def test_fairtree_reads_its_tree_in_prepare_and_gets_the_full_clairvoyance_check():
    from coopsched.online.policies.slurm_fairtree import SlurmFairTree

    assert not SlurmFairTree.drives_simulation()
    inst = make_instance([1, 1, 1], [(0, 0, 2), (1, 0, 2), (2, 0, 2), (2, 0, 2)])
    inst.meta["accounts"] = [[0, 2], [1]]
    pol = SlurmFairTree()
    simulate(inst, pol)
    assert pol._tree == ((0, 2), (1,))


def test_check_policy_reports_a_self_driven_policy_that_cannot_take_rigid_jobs():
    with pytest.raises(PolicyCheckError, match="check 'rigid' failed: .*takes no 'backfill'"):
        check_policy(_Lookahead, instances=3, checks=["rigid"])
