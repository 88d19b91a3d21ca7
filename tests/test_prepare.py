import json

import numpy as np
import pytest

from coopsched.workloads.instance import InstanceError, make_instance
from coopsched.workloads.jsonio import (
    instance_from_dict,
    instance_to_dict,
    read_instance,
    write_instance,
)
from coopsched.workloads.prepare import split_machines, trace_to_instance
from coopsched.workloads.swf import read_swf


def trace(tmp_path):
    rows = [
        # job submit wait run procs ... user
        (1, 100, 0, 10, 1, 11),
        (2, 150, 0, 20, 3, 12),
        (3, 200, 0, 30, 1, 13),
        (4, 900, 0, 40, 2, 11),
        (5, 1200, 0, 50, 1, -1),
    ]
    text = "; MaxProcs: 10\n" + "\n".join(
        f"{j} {s} {w} {r} {q} -1 -1 {q} -1 -1 1 {u} 1 -1 1 1 -1 -1" for j, s, w, r, q, u in rows
    )
    p = tmp_path / "t.swf"
    p.write_text(text + "\n")
    return read_swf(p)


def test_window_shift_and_parallel_expansion(tmp_path):
    inst = trace_to_instance(trace(tmp_path), k=2, start=50, length=900, seed=3)
    # window [150, 1050) in absolute time: jobs 2 (3 procs), 3, 4 (2 procs)
    assert sorted(inst.release.tolist()) == [0, 0, 0, 50, 750, 750]
    assert sorted(inst.size.tolist()) == [20, 20, 20, 30, 40, 40]
    assert inst.meta["horizon"] == 900
    assert inst.total_machines == 10
    # copies of one job share an owner; a user's jobs share an owner
    same = inst.size == 20
    assert len(set(inst.org[same].tolist())) == 1


def test_users_dealt_in_turn(tmp_path):
    # users 11 (sizes 10, 40), 12 (size 20), 13 (size 30), -1 (size 50): 4 users, 2 orgs
    user_of_size = {10: 11, 40: 11, 20: 12, 30: 13, 50: -1}
    for seed in range(5):
        inst = trace_to_instance(trace(tmp_path), k=2, seed=seed)
        assert inst.n == 8
        owner_of_user = {}
        for u, size in zip(inst.org.tolist(), inst.size.tolist(), strict=True):
            owner_of_user.setdefault(user_of_size[size], set()).add(u)
        assert all(len(v) == 1 for v in owner_of_user.values())  # a user has one organization
        per_org = np.bincount([next(iter(v)) for v in owner_of_user.values()], minlength=2)
        assert per_org.tolist() == [2, 2]  # dealt in turn


def test_same_seed_same_bytes(tmp_path):
    a = json.dumps(instance_to_dict(trace_to_instance(trace(tmp_path), k=3, seed=7, split="zipf")))
    b = json.dumps(instance_to_dict(trace_to_instance(trace(tmp_path), k=3, seed=7, split="zipf")))
    c = json.dumps(instance_to_dict(trace_to_instance(trace(tmp_path), k=3, seed=8, split="zipf")))
    assert a == b
    assert a != c


@pytest.mark.parametrize("split", ["uniform", "zipf"])
@pytest.mark.parametrize("total,k", [(70, 5), (5, 5), (8192, 5), (100, 12), (13, 3)])
def test_machine_split(split, total, k):
    shares = split_machines(total, k, split, rng=np.random.default_rng(1))
    assert sum(shares) == total and min(shares) >= 1 and len(shares) == k
    if split == "uniform":
        assert max(shares) - min(shares) <= 1
    else:
        ordered = sorted(split_machines(total, k, split), reverse=True)
        assert ordered == split_machines(total, k, split)  # unshuffled: non-increasing


def test_machine_split_errors():
    with pytest.raises(InstanceError):
        split_machines(3, 5)
    with pytest.raises(InstanceError):
        split_machines(10, 2, "pareto")


def test_no_machine_count_needs_parameter(tmp_path):
    p = tmp_path / "n.swf"
    p.write_text("1 0 0 10 1 -1 -1 1 -1 -1 1 1 1 -1 1 1 -1 -1\n")
    with pytest.raises(InstanceError, match="no MaxProcs"):
        trace_to_instance(read_swf(p), k=1)
    assert trace_to_instance(read_swf(p), k=1, machines=4).total_machines == 4


def test_json_roundtrip(tmp_path):
    doc = {
        "organizations": [
            {"name": "a", "machines": 2},
            {"name": "b", "machines": 1, "speeds": [2.0]},
        ],
        "jobs": [
            {"org": "a", "release": 0, "size": 3, "id": "x", "priority": 1, "processors": 1},
            {"org": "b", "release": 1, "size": 2, "id": "y", "priority": 0.5, "processors": 2},
        ],
    }
    inst = instance_from_dict(doc)
    p = tmp_path / "i.json"
    write_instance(inst, p)
    again = read_instance(p)
    assert instance_to_dict(again) == instance_to_dict(inst)
    assert again.organizations[1].speeds == (2.0,)


@pytest.mark.parametrize(
    "doc, msg",
    [
        (
            {
                "organizations": [{"name": "a", "machines": 1}],
                "jobs": [{"org": "a", "release": 0, "size": 1, "colour": 1}],
            },
            "jobs[0]: unknown key(s) ['colour']",
        ),
        (
            {
                "organizations": [{"name": "a", "machines": 1}],
                "jobs": [{"org": "z", "release": 0, "size": 1}],
            },
            "jobs[0].org: no organization named 'z'",
        ),
        (
            {
                "organizations": [{"name": "a", "machines": 1}],
                "jobs": [{"org": "a", "release": -1, "size": 1}],
            },
            "jobs[0].release: must be >= 0",
        ),
        (
            {
                "organizations": [{"name": "a", "machines": 1}],
                "jobs": [{"org": "a", "release": 0, "size": 1.5}],
            },
            "jobs[0].size: expected an integer",
        ),
        (
            {"organizations": [{"name": "a", "machines": 1}], "jobs": [{"org": "a", "release": 0}]},
            "jobs[0]: missing 'size'",
        ),
        (
            {"organizations": [{"name": "a", "machines": -1}], "jobs": []},
            "organizations[0].machines: must be >= 0",
        ),
        (
            {"organizations": [{"name": "a", "machines": 1, "size": 3}], "jobs": []},
            "organizations[0]: unknown key(s)",
        ),
        ({"organizations": [], "jobs": []}, "'organizations' is empty"),
        ({"jobs": []}, "missing key 'organizations'"),
    ],
)
def test_json_errors(doc, msg):
    with pytest.raises(InstanceError) as e:
        instance_from_dict(doc, "f.json")
    assert msg in str(e.value)
    assert str(e.value).startswith("f.json")


def test_json_syntax_error_has_line(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"organizations": [\n  {"name": "a",, }]}')
    with pytest.raises(InstanceError, match=r"bad.json:2:\d+: invalid JSON"):
        read_instance(p)


def test_restrict():
    inst = make_instance([1, 2, 3], [(0, 0, 1), (1, 0, 2), (2, 1, 3), (1, 2, 4)])
    sub = inst.restrict([1, 2])
    assert sub.machines.tolist() == [2, 3]
    assert sub.org.tolist() == [0, 1, 0] and sub.size.tolist() == [2, 3, 4]
