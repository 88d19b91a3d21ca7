import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.cli import main
from coopsched.mosp.algorithms import ilba, local, meta, molba, run
from coopsched.mosp.generators import mosp_instance
from coopsched.mosp.listsched import list_schedule
from coopsched.mosp.profile import ClusterProfile, ProfileError
from coopsched.mosp.schedule import MospSchedule, check
from coopsched.workloads.instance import Instance, InstanceError, Organization
from coopsched.workloads.lublin import lublin_jobs


def brute_earliest(placed, m, p, q, after=0):
    t = after
    while True:
        if all(
            m - sum(qq for s, pp, qq in placed if s <= x < s + pp) >= q for x in range(t, t + p)
        ):
            return t
        t += 1


@settings(max_examples=150, deadline=None)
@given(m=st.integers(1, 6), data=st.data())
def test_profile_earliest_start_matches_brute_force(m, data):
    prof = ClusterProfile(m)
    placed = []
    for j in range(data.draw(st.integers(0, 8))):
        p, q = data.draw(st.integers(1, 6)), data.draw(st.integers(1, m))
        after = data.draw(st.integers(0, 10))
        s = prof.insert(j, p, q, after)
        assert s == brute_earliest(placed, m, p, q, after)
        placed.append((s, p, q))
    if placed and data.draw(st.booleans()):
        j = data.draw(st.integers(0, len(placed) - 1))
        prof.remove(j)
        placed[j] = (0, 0, 0)
    p, q, after = (
        data.draw(st.integers(1, 6)),
        data.draw(st.integers(1, m)),
        data.draw(st.integers(0, 10)),
    )
    assert prof.earliest_start(p, q, after) == brute_earliest(placed, m, p, q, after)
    assert prof.makespan == max((s + pp for s, pp, _ in placed), default=0)


def test_profile_errors():
    prof = ClusterProfile(4)
    with pytest.raises(ProfileError, match="cannot run"):
        prof.earliest_start(1, 5)
    prof.place(0, 0, 5, 3)
    with pytest.raises(ProfileError, match="does not fit"):
        prof.place(1, 2, 2, 2)
    prof.remove(0)
    prof.place(1, 2, 2, 4)
    assert prof.segments() == [(0, 2, 4), (2, 4, 0), (4, None, 4)]


def brute_list(p, q, m, order):
    n = len(p)
    start = [-1] * n
    t = 0
    while -1 in start:
        busy = sum(q[j] for j in range(n) if start[j] >= 0 and start[j] <= t < start[j] + p[j])
        for j in order:
            if start[j] < 0 and q[j] <= m - busy:
                start[j] = t
                busy += q[j]
        t += 1
    return start


@settings(max_examples=100, deadline=None)
@given(m=st.integers(1, 8), data=st.data(), order=st.sampled_from(["hf", "lpt", "list"]))
def test_list_scheduling_matches_definition(m, data, order):
    n = data.draw(st.integers(0, 10))
    p = data.draw(st.lists(st.integers(1, 7), min_size=n, max_size=n))
    q = data.draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    from coopsched.mosp.listsched import list_order

    got = list_schedule(p, q, m, order)
    assert got.tolist() == brute_list(p, q, m, list_order(p, q, order))


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 16), data=st.data())
def test_prop_1_hf_high_then_low_utilization(m, data):
    n = data.draw(st.integers(1, 15))
    p = data.draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    q = data.draw(st.lists(st.integers(1, m), min_size=n, max_size=n))
    s = list_schedule(p, q, m, "hf")
    cmax = max(s[j] + p[j] for j in range(n))
    util = [sum(q[j] for j in range(n) if s[j] <= t < s[j] + p[j]) for t in range(cmax)]
    low = [2 * u <= m for u in util]
    if True in low:
        first = low.index(True)
        assert all(low[first:]), "a high-utilization period after a low one"


def random_instances(count, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(count):
        kind = ["uni", "swf"][i % 2]
        N = int(rng.choice([2, 3, 5, 8]))
        n = int(rng.integers(1, 60))
        m = int(rng.choice([4, 8, 16, 32]))
        yield mosp_instance(kind, N, n, m, seed=int(rng.integers(1 << 30)))


@pytest.mark.parametrize("seed", range(4))
def test_algorithms_respect_constraint_and_bounds(seed):
    for inst in random_instances(40, seed):
        base = local(inst)
        for alpha in (2.0, 3.0):
            s = molba(inst, alpha, base=base)
            rep = check(s, bound_for="molba3" if alpha == 3 else "molba2")
            assert rep.valid, rep.violations
            assert rep.within_bound, (alpha, rep.score, inst.meta)
            il = ilba(s)
            rep_i = check(il, bound_for="molba3" if alpha == 3 else "molba2")
            assert rep_i.valid and rep_i.within_bound
            assert (il.end <= s.end).all()  # Prop. 4: ILBA delays no job
        m = meta(inst)
        assert check(m).valid


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_meta_and_ilba_on_tiny_instances(data):
    N = data.draw(st.integers(1, 4))
    m = data.draw(st.integers(1, 6))
    n = data.draw(st.integers(1, 12))
    jobs = [
        (
            data.draw(st.integers(0, N - 1)),
            data.draw(st.integers(1, 9)),
            data.draw(st.integers(1, m)),
        )
        for _ in range(n)
    ]
    inst = Instance(
        [Organization(f"O{k}", m) for k in range(N)],
        [j[0] for j in jobs],
        [0] * n,
        [j[1] for j in jobs],
        processors=[j[2] for j in jobs],
    )
    for alg in ("local", "molba", "meta", "ilba"):
        s = run(inst, alg)
        rep = check(s)
        assert rep.valid, rep.violations
        assert rep.score >= 1 - 1e-12


def test_checker_catches_overload_and_growth():
    inst = Instance(
        [Organization("a", 2), Organization("b", 2)],
        [0, 0, 1],
        [0, 0, 0],
        [3, 3, 1],
        processors=[2, 1, 1],
    )
    s = MospSchedule(
        inst, np.array([0, 0, 1]), np.array([0, 1, 0]), "hand", local_makespans=np.array([3, 1])
    )
    rep = check(s)
    assert any("processors busy" in v for v in rep.violations)
    assert rep.grew == [0]
    with pytest.raises(InstanceError, match="needs 3 processors but its cluster has 2"):
        check(
            MospSchedule(
                Instance([Organization("a", 2)], [0], [0], [1], processors=[3]),
                np.array([0]),
                np.array([0]),
                "x",
            )
        )


def test_generators():
    inst = mosp_instance("uni", 5, 2000, 32, seed=1)
    assert inst.size.min() >= 1 and inst.size.max() <= 50
    assert inst.processors.min() >= 1 and inst.processors.max() <= 32
    counts = np.bincount(inst.org, minlength=5)
    assert (np.diff(counts) < 0).all()  # Zipf: organization 0 owns most
    assert abs(counts[0] / 2000 - 1 / sum(1 / np.arange(1, 6) ** 1.4267)) < 0.05
    swf = mosp_instance("swf", 3, 500, 64, seed=2)
    assert swf.processors.max() <= 63 and (swf.release == 0).all()
    a = mosp_instance("swf", 3, 50, 64, seed=9)
    b = mosp_instance("swf", 3, 50, 64, seed=9)
    assert a.size.tolist() == b.size.tolist() and a.org.tolist() == b.org.tolist()


def test_lublin_model_shape():
    jobs = lublin_jobs(20000, 128, seed=3)
    q = jobs["alloc_procs"].to_numpy()
    assert q.min() >= 1 and q.max() <= 128
    assert abs((q == 1).mean() - 0.244) < 0.05  # serial share (power-of-two rounding adds a little)
    par = q[q > 1]
    assert ((par & (par - 1)) == 0).mean() > 0.5  # mostly powers of two
    rt = jobs["run_time"].to_numpy()
    assert rt.min() >= 1 and rt.max() <= np.exp(12) + 1
    sub = jobs["submit"].to_numpy()
    assert (np.diff(sub) >= 0).all()
    hours = (sub % 86400) // 3600
    day = np.isin(hours, range(9, 18)).mean()
    assert day > 9 / 24  # the daily cycle puts more than a uniform share of jobs in working hours


def test_cli_mosp(tmp_path, capsys):
    assert (
        main(["mosp", "--generate", "uni:3:30:16", "--algorithm", "ilba", "--format", "json"]) == 0
    )
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["valid"] and len(out["jobs"]) == 30
    assert all(o["makespan"] <= o["local_makespan"] for o in out["organizations"])
    p = tmp_path / "w.json"
    p.write_text(
        '{"organizations":[{"name":"a","machines":4},{"name":"b","machines":2}],'
        '"jobs":[{"org":"b","release":0,"size":2,"processors":4}]}'
    )
    assert main(["mosp", str(p)]) == 1
    assert "needs 4 processors but its cluster has 2" in capsys.readouterr().err
    assert main(["mosp", "--generate", "tri:3:4"]) == 1
    assert main(["mosp", "--algorithm", "best"]) == 1


def test_quick_mosp_grid(tmp_path):
    from coopsched.experiments.studies import run_study

    df, md = run_study("mosp", tmp_path / "g", quick=True, workers=2, quiet=True)
    assert len(df) == 2 * 4 * 4 * 3 * 3
    assert df["valid"].all() and df["bound_ok"].all()
    assert "| instances where an organization's makespan grew | 0 | 0 |" in md
    assert (tmp_path / "g" / "fig7.png").stat().st_size > 1000


def test_library_errors_name_parameters_and_the_cli_names_flags(capsys):
    """The library's messages name its parameters (``algorithm``, ``spec``, ``action``,
    ``rebalance``, ``config``); the command line gives the same messages in flags."""
    from coopsched.mosp.game import Mechanism
    from coopsched.mosp.reports import game_instance, game_report, instance_from_spec, mosp_report

    inst = instance_from_spec("uni:2:5:4")
    with pytest.raises(ValueError, match="^algorithm: must be one of local"):
        mosp_report(inst, "best")
    with pytest.raises(ValueError, match="^spec: expects KIND:N:n:m"):
        instance_from_spec("tri:3:4")
    with pytest.raises(ValueError, match=r"^spec=theorem4:9: 137 organizations"):
        game_instance(None, "theorem4:9")
    with pytest.raises(ValueError, match="^spec: theorem1, theorem4:X"):
        game_instance(None, "theorem4:0")
    small, _, _ = game_instance(None, "uni:2:4:2")
    mech = Mechanism("organizations", "lpt")
    with pytest.raises(ValueError, match="^action: must be construct"):
        game_report(small, mech, "fly")
    with pytest.raises(ValueError, match="^rebalance: must be 'list' or 'exact'"):
        game_report(small, mech, rebalance="best")
    with pytest.raises(ValueError, match="^config: needs 4 clusters"):
        game_report(small, mech, "verify", config=[0, 1])
    for args, flag in [
        (["mosp", "--algorithm", "best"], "--algorithm: must be one of local"),
        (["mosp", "--generate", "tri:3:4"], "--generate: expects KIND:N:n:m"),
        (["game", "--action", "fly"], "--action: must be construct"),
        (["game", "--rebalance", "best"], "--rebalance: must be 'list' or 'exact'"),
        (["game", "--generate", "theorem4:9"], "--generate theorem4:9: 137 organizations"),
        (
            ["game", "--generate", "uni:2:4:2", "--action", "verify", "--config", "0,1"],
            "--config: needs 4",
        ),
    ]:
        assert main(args) == 1
        err = capsys.readouterr().err
        assert flag in err and "Traceback" not in err, (args, err)
