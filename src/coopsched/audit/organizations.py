"""Organizations as operators define them: by a log column, or by a TOML mapping file.

``--org-by user|group|account|partition|queue`` makes every distinct value of that column
an organization. A mapping file names each organization, its members and, optionally, the
machines it contributes::

    [[organization]]
    name = "physics"
    groups = ["2", "5"]        # also: users, accounts, partitions, queues
    machines = 40              # give machines for every organization or for none

A job belongs to the organization one of whose member lists contains its value; a job
matched by two organizations is an error, and so are the audited window's unmatched jobs
unless ``other`` names a bucket for them (jobs outside the window need no organization). Without machines, a contribution rule (:func:`contribution`) splits the
platform and the audit says which one it used.

Units (nested groups, for the Owen value, :mod:`.owen`): ``[[unit]]`` tables name a unit and
its members, organizations or other units::

    [[unit]]
    name = "sciences"
    members = ["physics", "chemistry"]

    [[unit]]
    name = "faculty"
    members = ["sciences", "astro"]

An organization or unit belongs to at most one unit; units do not contain themselves; an
organization in no unit stands alone at the top.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..workloads.limits import regular_file
from ..workloads.recorded import ORG_KEYS, decode_utf8

#: Mapping-file member lists and the log column each one matches.
MEMBER_LISTS: dict[str, str] = {
    "users": "user",
    "groups": "group",
    "accounts": "account",
    "partitions": "partition",
    "queues": "queue",
}

#: Contribution rules used when nobody says who contributed which machines.
CONTRIBUTION_RULES: dict[str, str] = {
    "work": "machines split in proportion to each organization's work (processor-seconds) "
    "in the window, largest remainder",
    "equal": "machines split equally, largest remainder",
}


class MappingError(ValueError):
    """A mapping file or an organization rule is wrong; the message says where."""


@dataclass
class Organizations:
    """Which organization each job of a log belongs to.

    ``index[j]`` is the organization of the log's job ``j`` (-1: unmatched, only when
    no ``other`` bucket was asked for, before :meth:`check_all_matched`); ``machines``
    are the contributions from a mapping file, or ``None`` to apply a contribution rule.
    ``shares``, when given (Slurm's shares, :mod:`.shares`), are integer weights the
    window splits the platform's machines by (largest remainder), stated as ``shares_rule``.
    """

    names: list[str]
    index: np.ndarray
    machines: list[int] | None
    described_by: str
    shares: list[int] | None = None
    shares_rule: str = ""
    #: units of a mapping file: unit name -> its members (organization or unit names)
    units: dict[str, list[str]] = field(default_factory=dict)


def _sort_key(v: str):
    try:
        return (0, int(v), v)
    except ValueError:
        return (1, 0, v)


def by_column(jobs: pd.DataFrame, key: str, source: str) -> Organizations:
    """One organization per distinct value of the column ``key`` (``--org-by``)."""
    if key not in ORG_KEYS:
        raise MappingError(f"org_by: unknown column {key!r}; choose from {', '.join(ORG_KEYS)}")
    col = jobs[key].astype(str)
    if len(col) and (col == "").all():
        raise MappingError(f"{source}: the log has no {key!r} column to form organizations from")
    empty = np.flatnonzero((col == "").to_numpy())
    if empty.size:  # an empty name is no organization: never one named ''
        j = jobs.iloc[empty[0]]
        raise MappingError(
            f"{source}: {empty.size} job(s) have no {key}, e.g. job {j['job']} (line "
            f"{j['line']}); an empty name is no organization: give every job one, or form "
            "organizations with a mapping file (--mapping; --other gathers the unmatched jobs)"
        )
    names = sorted(col.unique().tolist(), key=_sort_key)
    pos = {n: i for i, n in enumerate(names)}
    return Organizations(names, col.map(pos).to_numpy(np.int64), None, f"--org-by {key}")


def _load(path: str | Path) -> tuple[Path, dict]:
    p = regular_file(path, MappingError)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise MappingError(f"{p}: cannot read: {exc.strerror or exc}") from None
    text = decode_utf8(raw, str(p), MappingError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line L, column C)"
        raise MappingError(f"{p}: invalid TOML: {exc}") from None
    except RecursionError:
        raise MappingError(f"{p}: invalid TOML: nested too deeply") from None
    return p, data


def read_mapping(path: str | Path) -> list[dict]:
    """The organizations of a TOML mapping file, validated; errors name file and entry."""
    p, data = _load(path)
    unknown = set(data) - {"organization", "unit"}
    if unknown:
        raise MappingError(f"{p}: unknown top-level key(s) {sorted(unknown)}")
    orgs = data.get("organization")
    if not isinstance(orgs, list) or not orgs:
        raise MappingError(f"{p}: expected one or more [[organization]] tables")
    out, seen = [], set()
    for i, o in enumerate(orgs):
        where = f"{p}: organization[{i}]"
        bad = set(o) - set(MEMBER_LISTS) - {"name", "machines"}
        if bad:
            raise MappingError(
                f"{where}: unknown key(s) {sorted(bad)}; expected name, machines, "
                + ", ".join(MEMBER_LISTS)
            )
        name = o.get("name")
        if not isinstance(name, str) or not name:
            raise MappingError(f"{where}: needs a 'name'")
        if name in seen:
            raise MappingError(f"{where}: duplicate name {name!r}")
        seen.add(name)
        members = {}
        for key in MEMBER_LISTS:
            vals = o.get(key, [])
            if not isinstance(vals, list) or any(isinstance(v, bool | dict | list) for v in vals):
                raise MappingError(f"{where}.{key}: expected a list of names or ids")
            members[key] = [str(v) for v in vals]
        if not any(members.values()):
            raise MappingError(f"{where} ({name}): lists no members")
        machines = o.get("machines")
        if machines is not None and (
            isinstance(machines, bool) or not isinstance(machines, int) or machines < 0
        ):
            raise MappingError(f"{where}.machines: expected an integer >= 0")
        out.append({"name": name, "members": members, "machines": machines})
    given = [o["machines"] is not None for o in out]
    if any(given) and not all(given):
        raise MappingError(f"{p}: give 'machines' for every organization or for none")
    return out


def by_mapping(jobs: pd.DataFrame, path: str | Path) -> Organizations:
    """Organizations of a mapping file; a job matched twice is an error naming its line."""
    orgs = read_mapping(path)
    index = np.full(len(jobs), -1, dtype=np.int64)
    for u, o in enumerate(orgs):
        hit = np.zeros(len(jobs), dtype=bool)
        for key, col in MEMBER_LISTS.items():
            if o["members"][key]:
                hit |= jobs[col].astype(str).isin(o["members"][key]).to_numpy()
        twice = np.flatnonzero(hit & (index >= 0))
        if twice.size:
            j = twice[0]
            raise MappingError(
                f"{path}: job {jobs['job'].iloc[j]} (line {jobs['line'].iloc[j]}) belongs to both "
                f"{orgs[index[j]]['name']!r} and {o['name']!r}"
            )
        index[hit] = u
    machines = [o["machines"] for o in orgs] if orgs[0]["machines"] is not None else None
    names = [o["name"] for o in orgs]
    out = Organizations(names, index, machines, f"mapping {path}")
    out.units = read_units(path, names)
    return out


def read_units(path: str | Path, names: list[str]) -> dict[str, list[str]]:
    """The ``[[unit]]`` tables of a mapping file (unit name -> members), validated: members
    are organizations or units, each in at most one unit, no unit inside itself."""
    p, data = _load(path)
    raw = data.get("unit", [])
    if not isinstance(raw, list):
        raise MappingError(f"{p}: expected [[unit]] tables")
    units: dict[str, list[str]] = {}
    for i, u in enumerate(raw):
        where = f"{p}: unit[{i}]"
        if not isinstance(u, dict) or set(u) - {"name", "members"}:
            raise MappingError(f"{where}: expected the keys name and members")
        name = u.get("name")
        if not isinstance(name, str) or not name:
            raise MappingError(f"{where}: needs a 'name'")
        if name in units or name in names:
            raise MappingError(f"{where}: the name {name!r} is already taken")
        members = u.get("members")
        if not isinstance(members, list) or not members:
            raise MappingError(f"{where} ({name}): needs a non-empty list 'members'")
        if any(not isinstance(m, str) for m in members):
            raise MappingError(f"{where} ({name}).members: expected names")
        units[name] = list(members)
    owner: dict[str, str] = {}
    for name, members in units.items():
        for m in members:
            if m not in units and m not in names:
                raise MappingError(f"{p}: unit {name!r}: {m!r} is no organization or unit")
            if m in owner:
                raise MappingError(f"{p}: {m!r} is in two units, {owner[m]!r} and {name!r}")
            owner[m] = name
    for name in units:
        seen, up = {name}, owner.get(name)
        while up is not None:
            if up in seen:
                raise MappingError(f"{p}: unit {name!r} is inside itself")
            seen.add(up)
            up = owner.get(up)
    return units


def assign_unmatched(
    orgs: Organizations, jobs: pd.DataFrame, other: str | None, weight: np.ndarray | None = None
) -> None:
    """Put unmatched jobs in the ``other`` bucket. Without it they stay unmatched (-1): the
    window refuses those it holds (:func:`unmatched_error`), and the others, outside the
    audited window, need no organization. ``weight``: how many log records each row stands
    for (a log read for one window,
    :attr:`RecordedLog.weight <coopsched.workloads.recorded.RecordedLog.weight>`)."""
    miss = np.flatnonzero(orgs.index < 0)
    if not miss.size or other is None:
        return
    if other in orgs.names:
        raise MappingError(f"other: {other!r} is already the name of an organization")
    orgs.names.append(other)
    orgs.index[miss] = len(orgs.names) - 1
    if orgs.machines is not None:
        orgs.machines.append(0)  # the window gives it the platform's remaining machines
        orgs.described_by += "+other"


def unmatched_error(
    jobs: pd.DataFrame, miss: np.ndarray, weight: np.ndarray | None = None
) -> MappingError:
    """The error for the audited window's jobs ``miss`` (row indices of ``jobs``) that no
    organization claims: how many, and the first five with their line and names."""
    count = int(miss.size if weight is None else weight[miss].sum())
    sample = jobs.iloc[miss[:5]]
    desc = "; ".join(
        f"job {r.job} (line {r.line}: user {r.user}, group {r.group}"
        + (f", account {r.account!s}" if r.account else "")
        + ")"
        for r in sample.itertuples()
    )
    return MappingError(
        f"{count} job(s) of the audited window match no organization, e.g. {desc}; add them "
        "to the mapping or give other= (a name) to gather them in one organization"
    )


def contribution(
    shares: list[int], machines: int, rule: str, tie_rank: list[int] | None = None
) -> list[int]:
    """Split ``machines`` by ``rule`` (:data:`CONTRIBUTION_RULES`), largest remainder.

    ``shares`` are the organizations' work in the window (used by ``"work"``). Ties in the
    remainders go to the smaller ``tie_rank`` (the audit passes each organization's first job
    in submission order, so that names and listing order do not matter; default: the
    index). If no organization has work, the split is equal.
    """
    if rule not in CONTRIBUTION_RULES:
        raise MappingError(
            f"contribution: unknown rule {rule!r}; choose from {', '.join(CONTRIBUTION_RULES)}"
        )
    k = len(shares)
    w = [1] * k if rule == "equal" or sum(shares) == 0 else [int(x) for x in shares]
    tot = sum(w)
    base = [machines * x // tot for x in w]
    rank = list(range(k)) if tie_rank is None else tie_rank
    rem = sorted(range(k), key=lambda u: (-(machines * w[u] % tot), rank[u], u))
    for u in rem[: machines - sum(base)]:
        base[u] += 1
    return base
