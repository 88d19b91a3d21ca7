"""Slurm's account tree and shares (sacctmgr, sshare) and the audit's ``shares=`` contribution,
on the real captures of tests/fixtures/slurm-tree (Slurm 22.05.8, CAPTURE.txt)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from coopsched.audit import audit
from coopsched.audit.organizations import MappingError
from coopsched.cli import main
from coopsched.workloads.slurm_assoc import AssocError, read_account_tree

TREE = Path(__file__).parent / "fixtures" / "slurm-tree"
EXPORTS = ["sacctmgr_assoc.txt", "sacctmgr_assoc_header.txt", "sshare.txt"]
LOG = TREE / "sacct_X_utc.txt"
SACCTMGR = TREE / "sacctmgr_assoc.txt"

# the tree CAPTURE.txt describes
PARENT = {
    "root": None,
    "astro": "root",
    "life": "root",
    "biology": "life",
    "genomics": "life",
    "sciences": "root",
    "chemistry": "sciences",
    "physics": "sciences",
}
SHARES = {
    "root": 1,
    "astro": 10,
    "life": 30,
    "biology": 30,
    "genomics": 10,
    "sciences": 60,
    "chemistry": 20,
    "physics": 40,
}


@pytest.mark.parametrize("name", EXPORTS)
def test_the_three_real_exports_give_the_captured_tree(name):
    t = read_account_tree(TREE / name)
    assert t.parent == PARENT and t.shares == SHARES
    assert t.source == ("sshare" if name.startswith("sshare") else "sacctmgr")
    assert t.cluster == (None if t.source == "sshare" else "coopsched")
    assert sorted(t.users) == sorted(
        [
            ("root", "root", 1),
            ("astro", "cs_erin", 1),
            ("biology", "cs_dave", 1),
            ("biology", "cs_erin", 1),  # one user in two accounts: two associations
            ("genomics", "cs_frank", 1),
            ("chemistry", "cs_carol", 1),
            ("physics", "cs_alice", 2),
            ("physics", "cs_bob", 1),
        ]
    )
    assert t.root == "root"
    assert t.leaves == ["astro", "biology", "genomics", "chemistry", "physics"]
    assert [t.depth(a) for a in t.accounts] == [0, 1, 1, 2, 2, 1, 2, 2]
    assert t.children("sciences") == ["chemistry", "physics"]
    assert t.ancestors("physics") == ["sciences", "root"]


def test_shares_normalized_as_slurms_own_sshare_prints_them():
    """sshare's NormShares (Slurm 22.05: the share among siblings) against the reader's
    fractions, for every account and user line of the real capture."""
    t = read_account_tree(TREE / "sshare.txt")
    rows = [ln.split("|") for ln in (TREE / "sshare.txt").read_text().splitlines()[1:]]
    checked = 0
    for row in rows:
        account, user, norm = row[0].strip(), row[1], row[3]
        parent = t.parent[account] if not user else account
        if parent is None:
            continue
        raw = (
            t.shares[account]
            if not user
            else dict(((a, u), s) for a, u, s in t.users)[(account, user)]
        )
        local = Fraction(raw) / t._siblings_total(parent)
        assert float(local) == pytest.approx(float(norm), abs=5e-7), row
        checked += 1
    assert checked == 15
    assert t.normalized("biology") == Fraction(30, 40) * Fraction(30, 101)
    own = t.own_shares()
    assert sum(own.values()) == 1
    assert own["life"] == own["sciences"] == 0  # all passed on to sub-accounts
    assert own["physics"] == Fraction(40, 60) * Fraction(60, 101)
    assert own["root"] == Fraction(1, 101)  # the root user's association


@pytest.mark.parametrize(
    "text, where",
    [
        ("c|root|||1\nc|a|root||x\n", "x.txt:2: field Share"),
        ("c|root|||1\nc|a|root||parent\n", "x.txt:2: field Share: 'parent'"),
        ("c|root|||1\nc|a|root|1\n", "x.txt:2: 4 fields, expected 5"),
        ("c|root|||1\nc|a|nowhere||1\n", "x.txt:2: field ParentName: parent 'nowhere'"),
        ("c|root|||1\nc|a|root||1\nc|a|root||2\n", "x.txt:3: field Account: account 'a'"),
        ("c|root|||1\nc|b|||1\n", "x.txt:2: field ParentName: account 'b' has no parent"),
        ("c|root|||1\nc|a|b||1\nc|b|a||1\n", "x.txt:2: field ParentName: account 'a' is its own"),
        ("c|root|||1\nc|a||u|1\n", "x.txt:2: field Account: user association in account 'a'"),
        ("c|root|||1\nc|root|root|u|1\n", "x.txt:2: field ParentName: a user association"),
        ("c|root|||1\nd|a|root||1\n", "x.txt: associations of 2 clusters"),
        ("Account|ParentName|User\nroot|||\n", "x.txt:1: header lacks column(s) Share"),
        (
            "Cluster|Account|ParentName|User|Share|Share\nc|root|||1|2\n",
            "x.txt:2: field Share: the two Share columns disagree",
        ),
        (
            "Account|User|RawShares\nroot||\n   a||1\n",
            "x.txt:3: field Account: 3 leading spaces",
        ),
        (
            "Account|User|RawShares\nroot||\n a||1\n b|u|1\n",
            "x.txt:4: field Account: user u of account 'b'",
        ),
        ("Account|User|RawShares\nroot||\n a||-1\n", "x.txt:3: field RawShares: '-1'"),
        ("Account|User|RawShares\nroot||\n a|1\n", "x.txt:3: 2 fields, the header has 3"),
        ("\n\n", "x.txt: empty file"),
        ("Account|User|RawShares\n", "x.txt: no account lines"),
    ],
)
def test_malformed_exports_name_the_file_line_and_field(tmp_path, text, where):
    p = tmp_path / "x.txt"
    p.write_text(text)
    with pytest.raises(AssocError) as e:
        read_account_tree(p)
    assert str(e.value).startswith(str(tmp_path / where)), str(e.value)
    assert "\n" not in str(e.value)


def test_missing_file_is_one_line(tmp_path):
    with pytest.raises(AssocError, match="cannot read"):
        read_account_tree(tmp_path / "none.txt")


def _audit(shares=SACCTMGR, **kw):
    opts = dict(
        org_by="account", shares=shares, timezone="UTC", with_counterfactuals=False, points=2
    )
    opts.update(kw)
    return audit(LOG, **opts)


@pytest.mark.parametrize("name", EXPORTS)
def test_audit_with_shares_splits_the_platform_by_normalized_shares(name):
    # 202 machines: the own shares are 2, 20, 45, 15, 40, 80 / 202 exactly
    r = _audit(TREE / name, machines=202)
    got = {o.name: (o.machines, o.jobs) for o in r.organizations}
    assert got == {
        "root": (2, 0),  # the root user's share: machines, no jobs
        "astro": (20, 1),
        "biology": (45, 3),
        "genomics": (15, 5),
        "chemistry": (40, 3),
        "physics": (80, 7),
    }
    rule = r.window.contribution_rule
    assert rule.startswith("shares: machines split by each account's normalized Slurm share")
    assert str(TREE / name) in rule and "largest remainder" in rule


def test_on_the_recorded_peak_the_split_is_by_largest_remainder():
    r = _audit()  # 4 processors, the recorded peak: 4 x (2, 20, 45, 15, 40, 80) / 202
    got = {o.name: o.machines for o in r.organizations}
    assert got == {"astro": 0, "biology": 1, "genomics": 0, "chemistry": 1, "physics": 2}
    assert r.excluded["organizations without jobs or machines in the window"] == 1  # root
    assert "recorded peak, 4 processors" in r.window.contribution_rule


def test_an_account_the_tree_lacks_is_an_error_unless_other_gathers_it(tmp_path):
    lines = SACCTMGR.read_text().splitlines()
    tree = tmp_path / "tree.txt"
    tree.write_text("\n".join(ln for ln in lines if "|astro|" not in ln) + "\n")
    with pytest.raises(MappingError) as e:
        _audit(tree)
    msg = str(e.value)
    assert msg.startswith(f"{LOG}:") and "field Account" in msg and "'astro'" in msg
    assert "other=" in msg
    r = _audit(tree, other="unknown", machines=192)
    got = {o.name: (o.machines, o.jobs) for o in r.organizations}
    # root 1/91, biology 30/40 x 30/91, ... of 192: the 'unknown' bucket holds no shares
    assert got["unknown"] == (0, 1)
    assert sum(m for m, _ in got.values()) == 192


def test_an_idle_leaf_with_shares_keeps_its_machines(tmp_path):
    tree = tmp_path / "tree.txt"
    tree.write_text(SACCTMGR.read_text() + "coopsched|idle|root||101\ncoopsched|idle||cs_zoe|1\n")
    r = _audit(tree, machines=8)
    got = {o.name: (o.machines, o.jobs) for o in r.organizations}
    assert got["idle"] == (4, 0)  # half of the root's shares: half of the platform


def test_shares_need_org_by_account_and_exclude_a_mapping(tmp_path):
    with pytest.raises(MappingError, match="give org_by=account with shares="):
        _audit(org_by="user")
    with pytest.raises(MappingError, match="not both"):
        _audit(mapping=tmp_path / "m.toml")


def test_cli_shares(capsys):
    args = ["audit", str(LOG), "--org-by", "account", "--timezone", "UTC", "--points", "2"]
    args += ["--no-counterfactuals", "--shares", str(SACCTMGR), "--machines", "202"]
    assert main([*args, "--format", "json"]) == 0
    out = capsys.readouterr()
    r = json.loads(out.out)
    assert [o["machines"] for o in r["organizations"]] == [2, 20, 45, 15, 40, 80]
    assert "contribution rule: shares:" in out.err
    assert main([*args[:-4], "--shares", str(SACCTMGR), "--org-by", "user"]) == 1
    assert "--shares: Slurm's shares are per account" in capsys.readouterr().err


def test_a_tree_a_thousand_levels_deep_is_read_and_normalized(tmp_path):
    """Issue 41: a RecursionError before; the walks are iterative now, and a cycle is still
    found (in time linear in the accounts)."""
    lines = ["c|root|||1", "c|root||root|1"]
    lines += [f"c|a{i}|{'root' if i == 0 else f'a{i - 1}'}||1" for i in range(1000)]
    lines.append("c|a999||u1|1")
    p = tmp_path / "deep.txt"
    p.write_text("\n".join(lines) + "\n")
    tree = read_account_tree(p)
    assert tree.depth("a999") == 1000 and tree.normalized("a999") == Fraction(1, 2)
    assert sum(tree.own_shares().values()) == 1
    lines[2] = "c|a0|a999||1"  # the chain closes on itself: no root above it
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(AssocError, match="is its own ancestor"):
        read_account_tree(p)
