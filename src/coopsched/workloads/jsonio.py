"""The JSON instance format of docs/conventions.md §4, read and written.

::

    {"organizations": [{"name": "a", "machines": 2}, {"name": "b", "machines": 1}],
     "jobs": [{"org": "a", "release": 0, "size": 3}, {"org": "b", "release": 1, "size": 2}]}

Optional keys: job ``processors`` (rigid parallel jobs: the instance is then rigid, every job
holds that many machines at once), ``requested`` (a rigid job's requested time, ``null`` where
unknown; only with ``processors``), ``priority``, ``id``; organization ``speeds``;
``meta.horizon`` (a positive integer). A recorded schedule (what ``coopsched audit`` reads)
adds per job ``start``: the time the platform actually started it, or ``null`` if it never
started; and optionally ``pinned``: ``true`` for a job that was already running when the
audited window opened (it starts ahead of every other job; docs/conventions.md, section 5).
Unknown keys are an error. Errors name the file and the place (``jobs[3].size``). Numbers
must be finite and at most 2^53 in magnitude (:mod:`~coopsched.workloads.limits`); names are
strings; the platform needs at least one machine in total (an organization may have none).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .instance import Instance, InstanceError, Organization
from .limits import MAX_MACHINES, LimitError, exact_number, regular_file

_ORG_KEYS = {"name", "machines", "speeds"}
_JOB_KEYS = {
    "org",
    "release",
    "size",
    "processors",
    "requested",
    "priority",
    "id",
    "start",
    "pinned",
}
_TOP_KEYS = {"organizations", "jobs", "meta"}


def _number(value: Any, where: str) -> float:
    """A finite JSON number of magnitude at most 2^53, else :class:`InstanceError`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(f"{where}: expected a number, got {value!r}")
    try:
        exact_number(value, where)
    except LimitError as exc:
        raise InstanceError(str(exc)) from None
    return value


def _int(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(f"{where}: expected an integer, got {value!r}")
    _number(value, where)
    if value != int(value):
        raise InstanceError(f"{where}: expected an integer, got {value!r}")
    if value < minimum:
        raise InstanceError(f"{where}: must be >= {minimum}, got {value!r}")
    return int(value)


def instance_from_dict(data: Any, source: str = "<instance>") -> Instance:
    """Validate and convert a decoded JSON document to an :class:`Instance`."""
    if not isinstance(data, dict):
        raise InstanceError(f"{source}: the top level must be an object")
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise InstanceError(f"{source}: unknown top-level key(s) {sorted(unknown)}")
    for key in ("organizations", "jobs"):
        if key not in data:
            raise InstanceError(f"{source}: missing key {key!r}")
        if not isinstance(data[key], list):
            raise InstanceError(f"{source}: {key!r} must be a list")
    orgs: list[Organization] = []
    index: dict[str, int] = {}
    if not data["organizations"]:
        raise InstanceError(f"{source}: 'organizations' is empty")
    for i, o in enumerate(data["organizations"]):
        where = f"{source}: organizations[{i}]"
        if not isinstance(o, dict):
            raise InstanceError(f"{where}: must be an object")
        unknown = set(o) - _ORG_KEYS
        if unknown:
            raise InstanceError(f"{where}: unknown key(s) {sorted(unknown)}")
        if "name" not in o or "machines" not in o:
            raise InstanceError(f"{where}: needs 'name' and 'machines'")
        name = o["name"]
        if not isinstance(name, str) or not name:
            raise InstanceError(f"{where}.name: expected a non-empty string, got {name!r}")
        if name in index:
            raise InstanceError(f"{where}: duplicate name {name!r}")
        machines = _int(o["machines"], f"{where}.machines", 0)
        speeds = None
        if "speeds" in o:
            sp = o["speeds"]
            if not isinstance(sp, list) or len(sp) != machines:
                raise InstanceError(
                    f"{where}.speeds: must be a list of {machines} positive numbers"
                )
            for s in sp:
                if _number(s, f"{where}.speeds") <= 0:
                    raise InstanceError(f"{where}.speeds: {s!r} is not a positive number")
            speeds = tuple(sp)
        index[name] = i
        orgs.append(Organization(name, machines, speeds))
    total = sum(o.machines for o in orgs)
    if total == 0:
        raise InstanceError(f"{source}: no machines in total (every organization has 0)")
    if total > MAX_MACHINES:
        raise InstanceError(
            f"{source}: {total:,} machines in total, more than the limit of {MAX_MACHINES:,}"
        )
    n = len(data["jobs"])
    owner = np.zeros(n, dtype=np.int64)
    release = np.zeros(n, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    optional: dict[str, list] = {
        "processors": [],
        "requested": [],
        "priority": [],
        "id": [],
        "start": [],
        "pinned": [],
    }
    for j, job in enumerate(data["jobs"]):
        where = f"{source}: jobs[{j}]"
        if not isinstance(job, dict):
            raise InstanceError(f"{where}: must be an object")
        unknown = set(job) - _JOB_KEYS
        if unknown:
            raise InstanceError(f"{where}: unknown key(s) {sorted(unknown)}")
        for key in ("org", "release", "size"):
            if key not in job:
                raise InstanceError(f"{where}: missing {key!r}")
        org = job["org"]
        if not isinstance(org, str):
            raise InstanceError(f"{where}.org: expected an organization name, got {org!r}")
        if org not in index:
            raise InstanceError(f"{where}.org: no organization named {org!r}")
        owner[j] = index[org]
        release[j] = _int(job["release"], f"{where}.release", 0)
        size[j] = _int(job["size"], f"{where}.size", 1)
        for key in optional:
            if key in job:
                optional[key].append((j, job[key]))
    processors = priority = ids = None
    if optional["processors"]:
        if len(optional["processors"]) != n:
            raise InstanceError(f"{source}: 'processors' must be given for every job or none")
        processors = np.array(
            [_int(v, f"{source}: jobs[{j}].processors", 1) for j, v in optional["processors"]],
            dtype=np.int64,
        )
    requested = None
    if optional["requested"]:
        if processors is None:
            j = optional["requested"][0][0]
            raise InstanceError(
                f"{source}: jobs[{j}].requested: a requested time belongs to rigid jobs; give "
                "'processors' for every job too"
            )
        if len(optional["requested"]) != n:  # absent is not unknown: write null
            given = {j for j, _ in optional["requested"]}
            j = next(i for i in range(n) if i not in given)
            raise InstanceError(
                f"{source}: jobs[{j}]: no 'requested', which other jobs have: give it for every "
                "job or none (null where a job's requested time is unknown)"
            )
        requested = np.full(n, -1, dtype=np.int64)
        for j, v in optional["requested"]:
            if v is not None:
                requested[j] = _int(v, f"{source}: jobs[{j}].requested", 1)
    if optional["priority"]:
        if len(optional["priority"]) != n:
            raise InstanceError(f"{source}: 'priority' must be given for every job or none")
        vals = []
        for j, v in optional["priority"]:
            vals.append(float(_number(v, f"{source}: jobs[{j}].priority")))
        priority = np.array(vals)
    if optional["id"]:
        if len(optional["id"]) != n:
            raise InstanceError(f"{source}: 'id' must be given for every job or none")
        ids = [v for _, v in optional["id"]]
        for j, v in optional["id"]:
            if isinstance(v, bool) or not isinstance(v, int | str):
                raise InstanceError(f"{source}: jobs[{j}].id: expected a string or an integer")
            if isinstance(v, int):
                _number(v, f"{source}: jobs[{j}].id")
        if len(set(map(str, ids))) != n:
            raise InstanceError(f"{source}: job ids must be distinct")
    start = pinned = None
    if optional["start"]:
        if len(optional["start"]) != n:
            raise InstanceError(
                f"{source}: 'start' must be given for every job or none (null: never started)"
            )
        start = np.full(n, -1, dtype=np.int64)
        for j, v in optional["start"]:
            if v is None:
                continue
            start[j] = _int(v, f"{source}: jobs[{j}].start", 0)
            if start[j] < release[j]:
                raise InstanceError(
                    f"{source}: jobs[{j}].start: {start[j]} is before the release {release[j]}"
                )
    if optional["pinned"]:
        pinned = np.zeros(n, dtype=bool)
        for j, v in optional["pinned"]:
            if not isinstance(v, bool):
                raise InstanceError(f"{source}: jobs[{j}].pinned: expected true or false")
            pinned[j] = v
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise InstanceError(f"{source}: 'meta' must be an object")
    meta = dict(meta)
    if meta.get("horizon") is not None:
        meta["horizon"] = _int(meta["horizon"], f"{source}: meta.horizon", 1)
    try:
        return Instance(
            orgs, owner, release, size, processors, priority, ids, meta, start, pinned, requested
        )
    except InstanceError as exc:
        raise InstanceError(f"{source}: {exc}") from None


def read_instance(path: str | Path) -> Instance:
    """Read a JSON instance file; errors name the file and the place."""
    p = regular_file(path, InstanceError)

    def constant(name: str) -> float:
        raise InstanceError(f"{p}: {name} is not a valid JSON number")

    try:
        data = json.loads(p.read_bytes().decode("utf-8"), parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"{p}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    except InstanceError:
        raise
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise InstanceError(f"{p}: invalid JSON: {exc}") from None
    except RecursionError:
        raise InstanceError(f"{p}: JSON nested too deeply") from None
    except OSError as exc:
        raise InstanceError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return instance_from_dict(data, str(p))


def instance_to_dict(inst: Instance) -> dict:
    """The JSON document of an instance (the inverse of :func:`instance_from_dict`)."""
    from .limits import check_type

    check_type(inst, Instance, "inst", "an Instance")
    orgs = []
    for o in inst.organizations:
        d: dict[str, Any] = {"name": o.name, "machines": o.machines}
        if o.speeds is not None:
            d["speeds"] = list(o.speeds)
        orgs.append(d)
    names = inst.names
    jobs = []
    for j in range(inst.n):
        d = {"org": names[inst.org[j]], "release": int(inst.release[j]), "size": int(inst.size[j])}
        if inst.processors is not None:
            d["processors"] = int(inst.processors[j])
        if inst.requested is not None and (inst.requested >= 1).any():
            d["requested"] = int(inst.requested[j]) if inst.requested[j] >= 1 else None
        if inst.priority is not None:
            d["priority"] = float(inst.priority[j])
        if inst.ids is not None:
            d["id"] = inst.ids[j]
        if inst.start is not None:
            d["start"] = int(inst.start[j]) if inst.start[j] >= 0 else None
        if inst.pinned is not None and inst.pinned[j]:
            d["pinned"] = True
        jobs.append(d)
    out: dict[str, Any] = {"organizations": orgs, "jobs": jobs}
    if inst.meta:
        out["meta"] = {
            k: v for k, v in inst.meta.items() if isinstance(v, int | float | str | None)
        }
    return out


def write_instance(inst: Instance, path: str | Path) -> None:
    """Write an instance as JSON (deterministic: same instance, same bytes)."""
    Path(path).write_text(json.dumps(instance_to_dict(inst), indent=1, sort_keys=False) + "\n")
