"""Reader for Slurm's account tree and shares: ``sacctmgr show assoc -P`` and ``sshare -a -l -P``.

Two exports of the same associations are accepted (``docs/formats.md``, section "Slurm account
tree and shares"); the reader tells them apart by their first line:

* ``sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share`` (the sacctmgr man
  page, "show association"): one association per line. An account's line has an empty
  ``User`` and names its ``ParentName`` (empty for ``root``); a user's line has the account
  it belongs to and an empty ``ParentName``. With a header, columns may come in any order
  (``Fairshare`` prints as ``Share``; a repeated ``Share`` column must agree with the first);
  with ``-n`` (no header) the columns must be exactly ``Cluster|Account|ParentName|User|Share``.
* ``sshare -a -l -P`` (the sshare man page): a header, then the tree in depth-first order, the
  depth given by the leading spaces of ``Account`` (one per level); ``RawShares`` are the
  shares, ``User`` is empty on an account's line.

``Share`` is the association's raw share among its siblings (Slurm's ``Fairshare``): the
children of an account are its sub-accounts *and* the user associations directly under it.
Slurm's normalized share of an association (``priority_multifactor`` documentation, "Normalized
Shares") is its raw share divided by the sum of its siblings', times its parent's normalized
share; :meth:`AccountTree.normalized` computes it exactly (as a fraction).

Rules the audit relies on (``docs/audit.md``, "Contributions from Slurm's shares"):

* an account's *own* share (:meth:`AccountTree.own_shares`) is the sum of the normalized shares
  of the user associations directly under it: what its members' jobs draw on. Shares passed
  to sub-accounts belong to the sub-accounts; the own shares of all accounts sum to 1;
* a user associated with two accounts has two associations: each one's share counts for its
  own account. Jobs belong to the account they were charged to (sacct's ``Account``), never
  to an account found through the user;
* a share written ``parent`` (``Fairshare=parent``) is not a number of shares: an error
  naming the line, like every malformed line (file, line, field); so are an unknown parent,
  an account listed twice, a second root, and more than one cluster in one file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from .recorded import decode_utf8


class AssocError(ValueError):
    """Malformed account-tree input: the message names the file, the line and the field."""


#: The column order of ``sacctmgr -n -P show assoc format=Cluster,Account,ParentName,User,Share``.
SACCTMGR_COLUMNS: tuple[str, ...] = ("Cluster", "Account", "ParentName", "User", "Share")
#: The ``sshare`` columns the reader needs.
SSHARE_COLUMNS: tuple[str, ...] = ("Account", "User", "RawShares")


@dataclass
class AccountTree:
    """Slurm's account tree with raw shares, as read from sacctmgr or sshare.

    ``parent[a]`` is the parent account of ``a`` (``None`` for the root); ``shares[a]`` the
    account's raw share among its siblings; ``users`` the user associations as
    ``(account, user, raw share)``; ``line[a]`` the line an account was read from.
    Accounts are listed in the order the file gives them (``parent`` keeps it).
    """

    path: str
    source: str
    parent: dict[str, str | None]
    shares: dict[str, int]
    users: list[tuple[str, str, int]] = field(default_factory=list)
    line: dict[str, int] = field(default_factory=dict)
    cluster: str | None = None

    @property
    def root(self) -> str:
        """The account without a parent."""
        return next(a for a, p in self.parent.items() if p is None)

    @property
    def accounts(self) -> list[str]:
        """Every account, in the file's order."""
        return list(self.parent)

    def children(self, account: str) -> list[str]:
        """The sub-accounts of ``account`` (user associations not included)."""
        return [a for a, p in self.parent.items() if p == account]

    @property
    def leaves(self) -> list[str]:
        """Accounts without sub-accounts."""
        parents = {p for p in self.parent.values() if p is not None}
        return [a for a in self.parent if a not in parents]

    def depth(self, account: str) -> int:
        """0 for the root, 1 for its children, and so on."""
        return len(self.ancestors(account))

    def ancestors(self, account: str) -> list[str]:
        """The parents of ``account``, nearest first, up to the root."""
        out = []
        p = self.parent[account]
        while p is not None:
            out.append(p)
            p = self.parent[p]
        return out

    def _totals(self) -> dict[str | None, int]:
        """Per account, the raw shares of its children (sub-accounts and users), in one pass."""
        out: dict[str | None, int] = {}
        for a, s in self.shares.items():
            out[self.parent[a]] = out.get(self.parent[a], 0) + s
        for a, _u, s in self.users:
            out[a] = out.get(a, 0) + s
        return out

    def _siblings_total(self, account: str | None) -> int:
        """The raw shares of the children (sub-accounts and users) of ``account``."""
        return self._totals().get(account, 0)

    def normalized(self, account: str) -> Fraction:
        """Slurm's normalized share of ``account``: 1 for the root, else its raw share over
        its siblings' times its parent's normalized share."""
        return self._normalized(account, self._totals(), {})

    def _normalized(
        self, account: str, totals: dict[str | None, int], memo: dict[str, Fraction]
    ) -> Fraction:
        chain = []  # the account and its ancestors not yet known, nearest first
        a: str | None = account
        while a is not None and a not in memo:
            chain.append(a)
            a = self.parent[a]
        for a in reversed(chain):  # from the top down: iterative, for trees of any depth
            p = self.parent[a]
            if p is None:
                memo[a] = Fraction(1)
            elif not totals.get(p):
                memo[a] = Fraction(0)
            else:
                memo[a] = Fraction(self.shares[a], totals[p]) * memo[p]
        return memo[account]

    def own_shares(self) -> dict[str, Fraction]:
        """Per account, the normalized shares of the user associations directly under it
        (they sum to 1 over the tree when some user holds shares)."""
        totals: dict[str | None, int] = self._totals()
        memo: dict[str, Fraction] = {}
        out = {a: Fraction(0) for a in self.parent}
        for a, _u, s in self.users:
            if totals.get(a):
                out[a] += Fraction(s, totals[a]) * self._normalized(a, totals, memo)
        return out


def _shares(value: str, where: str) -> int:
    v = value.strip()
    if v == "parent":
        raise AssocError(
            f"{where}: 'parent' (Fairshare=parent) is not a number of shares; give the "
            "association a number (sacctmgr modify ... set fairshare=N)"
        )
    if not v.isdigit() or not v.isascii():
        raise AssocError(f"{where}: {value!r} is not a whole number of shares >= 0")
    if len(v) > 15 and int(v) >= 2**53:
        raise AssocError(f"{where}: {value!r} is beyond 2^53")
    return int(v)


def _columns(path: str, header: str, names: tuple[str, ...]) -> dict[str, int]:
    """Positions of ``names`` in a header line (first occurrence), or an error."""
    cols = [c.strip() for c in header.rstrip("|").split("|")]
    missing = [n for n in names if n not in cols]
    if missing:
        raise AssocError(f"{path}:1: header lacks column(s) {', '.join(missing)}")
    return {n: cols.index(n) for n in names}


def read_account_tree(path: str | os.PathLike) -> AccountTree:
    """The account tree of a ``sacctmgr show assoc -P`` or ``sshare -a -l -P`` export."""
    path_s = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise AssocError(f"{path_s}: cannot read: {exc.strerror or exc}") from None
    text = decode_utf8(data, path_s, AssocError)
    lines = [(i, ln) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if not lines:
        raise AssocError(f"{path_s}: empty file: expected sacctmgr show assoc -P or sshare -P")
    first = [c.strip() for c in lines[0][1].split("|")]
    read = _read_sshare if "RawShares" in first else _read_sacctmgr
    tree = read(path_s, lines)
    _check(tree)
    return tree


def _read_sacctmgr(path: str, lines: list[tuple[int, str]]) -> AccountTree:
    first = [c.strip() for c in lines[0][1].split("|")]
    if "Account" in first:
        pos = _columns(path, lines[0][1], ("Account", "ParentName", "User", "Share"))
        if "Cluster" in first:
            pos["Cluster"] = first.index("Cluster")
        same_share = [i for i, c in enumerate(first) if c == "Share"]
        width = len(first)
        body = lines[1:]
    else:
        pos = {c: i for i, c in enumerate(SACCTMGR_COLUMNS)}
        same_share = [pos["Share"]]
        width = len(SACCTMGR_COLUMNS)
        body = lines
    tree = AccountTree(path, "sacctmgr", {}, {})
    clusters: set[str] = set()
    pending: dict[str, tuple[str, int]] = {}
    for lineno, raw in body:
        fields = raw.split("|")
        if len(fields) == width + 1 and fields[-1] == "":
            fields.pop()  # sacctmgr -p ends lines with '|'
        if len(fields) != width:
            raise AssocError(
                f"{path}:{lineno}: {len(fields)} fields, expected {width} "
                f"({'|'.join(first) if 'Account' in first else '|'.join(SACCTMGR_COLUMNS)}; "
                "export with sacctmgr -n -P show assoc format=Cluster,Account,ParentName,"
                "User,Share)"
            )
        where = f"{path}:{lineno}: field Share"
        shares = _shares(fields[pos["Share"]], where)
        for i in same_share[1:]:
            if _shares(fields[i], where) != shares:
                raise AssocError(f"{where}: the two Share columns disagree")
        if "Cluster" in pos:
            clusters.add(fields[pos["Cluster"]].strip())
        account = fields[pos["Account"]].strip()
        parent = fields[pos["ParentName"]].strip()
        user = fields[pos["User"]].strip()
        if not account:
            raise AssocError(f"{path}:{lineno}: field Account: empty")
        if user:
            if parent:
                raise AssocError(
                    f"{path}:{lineno}: field ParentName: a user association ({user}) has no "
                    f"parent account, got {parent!r}"
                )
            tree.users.append((account, user, shares))
            pending.setdefault(account, ("", lineno))
            continue
        if account in tree.parent:
            raise AssocError(
                f"{path}:{lineno}: field Account: account {account!r} is also on line "
                f"{tree.line[account]}"
            )
        tree.parent[account] = parent or None
        tree.shares[account] = shares
        tree.line[account] = lineno
    if len(clusters) > 1:
        raise AssocError(
            f"{path}: associations of {len(clusters)} clusters ({', '.join(sorted(clusters))}); "
            "export one: sacctmgr -P show assoc cluster=NAME format=..."
        )
    tree.cluster = clusters.pop() if clusters else None
    for account, (_p, lineno) in pending.items():
        if account not in tree.parent:
            raise AssocError(
                f"{path}:{lineno}: field Account: user association in account {account!r}, "
                "which has no line of its own"
            )
    return tree


def _read_sshare(path: str, lines: list[tuple[int, str]]) -> AccountTree:
    header = lines[0][1]
    pos = _columns(path, header, SSHARE_COLUMNS)
    width = len(header.rstrip("|").split("|"))
    tree = AccountTree(path, "sshare", {}, {})
    stack: list[str] = []  # the accounts on the path to the current line, by depth
    for lineno, raw in lines[1:]:
        fields = raw.split("|")
        if len(fields) == width + 1 and fields[-1] == "":
            fields.pop()
        if len(fields) != width:
            raise AssocError(f"{path}:{lineno}: {len(fields)} fields, the header has {width}")
        cell = fields[pos["Account"]]
        account = cell.lstrip(" ")
        depth = len(cell) - len(account)
        account = account.strip()
        user = fields[pos["User"]].strip()
        if not account:
            raise AssocError(f"{path}:{lineno}: field Account: empty")
        where = f"{path}:{lineno}: field RawShares"
        if user:
            if depth != len(stack) or not stack or stack[-1] != account:
                raise AssocError(
                    f"{path}:{lineno}: field Account: user {user} of account {account!r} is "
                    f"not indented one level below that account's line"
                )
            tree.users.append((account, user, _shares(fields[pos["RawShares"]], where)))
            continue
        if depth > len(stack):
            raise AssocError(
                f"{path}:{lineno}: field Account: {depth} leading spaces, but the line above "
                f"is at depth {len(stack) - 1} (one space per level)"
            )
        del stack[depth:]
        if account in tree.parent:
            raise AssocError(
                f"{path}:{lineno}: field Account: account {account!r} is also on line "
                f"{tree.line[account]}"
            )
        value = fields[pos["RawShares"]]
        # sshare prints no share for the root account, which has no siblings
        tree.shares[account] = 1 if depth == 0 and not value.strip() else _shares(value, where)
        tree.parent[account] = stack[-1] if stack else None
        tree.line[account] = lineno
        stack.append(account)
    return tree


def _check(tree: AccountTree) -> None:
    """One root, every parent an account of the file, no cycle."""
    if not tree.parent:
        raise AssocError(f"{tree.path}: no account lines (User empty): not an account tree")
    roots = [a for a, p in tree.parent.items() if p is None]
    if len(roots) > 1:
        raise AssocError(
            f"{tree.path}:{tree.line[roots[1]]}: field ParentName: account {roots[1]!r} has "
            f"no parent, like {roots[0]!r} (line {tree.line[roots[0]]}); a tree has one root"
        )
    for a, p in tree.parent.items():
        if p is not None and p not in tree.parent:
            raise AssocError(
                f"{tree.path}:{tree.line[a]}: field ParentName: parent {p!r} of account {a!r} "
                "has no line of its own"
            )
    rooted: set[str] = set()  # accounts whose chain of parents reaches the root
    for a in tree.parent:
        path = [a]
        seen = {a}
        p = tree.parent[a]
        while p is not None and p not in rooted:
            if p in seen:
                raise AssocError(
                    f"{tree.path}:{tree.line[a]}: field ParentName: account {a!r} is its own "
                    "ancestor (a cycle)"
                )
            seen.add(p)
            path.append(p)
            p = tree.parent[p]
        rooted.update(path)  # linear in the accounts, whatever the depth
