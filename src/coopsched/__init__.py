"""coopsched: fair scheduling on platforms shared by several organizations.

The everyday functions are available from the top-level package (imported on first
use, so ``import coopsched`` stays cheap); ``docs/python.md`` walks through them.

>>> import coopsched as cs
>>> inst = cs.make_instance([1, 1], [(0, 0, 3), (0, 0, 2), (1, 1, 2)], names=["a", "b"])
>>> sched = cs.simulate(inst, "fairshare")
>>> sched.to_frame()[["org", "release", "size", "start", "machine"]]
    org  release  size  start  machine
job
0     a        0     3      0        0
1     a        0     2      0        1
2     b        1     2      2        1

``coopsched.audit`` audits a recorded schedule (``docs/audit.md``); it is both the function
and the package of its modules (``coopsched.audit.window``, ...):

>>> import dataclasses
>>> recorded = dataclasses.replace(inst, start=sched.start)
>>> [(r.name, r.psi, r.phi) for r in cs.audit(recorded, horizon=6).organizations]
[('a', 26, 22.0), ('b', 7, 11.0)]
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

#: public name -> (module, attribute), resolved lazily by :func:`__getattr__`
_API: dict[str, tuple[str, str]] = {
    # workloads
    "Instance": ("coopsched.workloads.instance", "Instance"),
    "Organization": ("coopsched.workloads.instance", "Organization"),
    "make_instance": ("coopsched.workloads.instance", "make_instance"),
    "read_instance": ("coopsched.workloads.jsonio", "read_instance"),
    "write_instance": ("coopsched.workloads.jsonio", "write_instance"),
    "read_swf": ("coopsched.workloads.swf", "read_swf"),
    "trace_to_instance": ("coopsched.workloads.prepare", "trace_to_instance"),
    "load_instance": ("coopsched.workloads.load", "load_instance"),
    "synthetic_instance": ("coopsched.workloads.generators", "synthetic_instance"),
    "lublin_instance": ("coopsched.workloads.generators", "lublin_instance"),
    "fetch_trace": ("coopsched.workloads.archive", "fetch_trace"),
    "trace_path": ("coopsched.workloads.archive", "trace_path"),
    "load_trace": ("coopsched.workloads.archive", "load_trace"),
    # online scheduling
    "Policy": ("coopsched.online.engine", "Policy"),
    "Schedule": ("coopsched.online.schedule", "Schedule"),
    "get_policy": ("coopsched.online.policies", "get_policy"),
    "register": ("coopsched.online.policies", "register"),
    "policies": ("coopsched.online.policies", "names"),
    "compare": ("coopsched.experiments.compare", "compare_frame"),
    "fairness": ("coopsched.online.fairness", "fairness"),
    "check_schedule": ("coopsched.online.checker", "check_schedule"),
    "check_policy": ("coopsched.testing", "check_policy"),
    # exports
    "write_schedule_swf": ("coopsched.online.export", "write_schedule_swf"),
    "write_batsim_jobs": ("coopsched.online.export", "write_batsim_jobs"),
    "plot_gantt": ("coopsched.online.export", "plot_gantt"),
}

__all__ = [  # the documented API: _API's names, simulate, audit and __version__
    "Instance",
    "Organization",
    "Policy",
    "Schedule",
    "__version__",
    "audit",
    "check_policy",
    "check_schedule",
    "compare",
    "fairness",
    "fetch_trace",
    "get_policy",
    "load_instance",
    "load_trace",
    "lublin_instance",
    "make_instance",
    "plot_gantt",
    "policies",
    "read_instance",
    "read_swf",
    "register",
    "simulate",
    "synthetic_instance",
    "trace_path",
    "trace_to_instance",
    "write_batsim_jobs",
    "write_instance",
    "write_schedule_swf",
]


def simulate(
    instance: Instance,
    policy: str | Policy = "fifo",
    horizon: int | None = None,
    members: Iterable[int] | None = None,
    **params: Any,
) -> Schedule:
    """Simulate ``policy`` (a name, ``package.module:Class`` or a Policy object, with
    ``params``) on ``instance``; see :func:`coopsched.online.engine.simulate`."""
    from .online.engine import Policy
    from .online.engine import simulate as _simulate
    from .online.policies import get_policy
    from .workloads.instance import Instance
    from .workloads.limits import check_type

    check_type(instance, Instance, "instance", "an Instance (coopsched.make_instance, ...)")
    if isinstance(policy, str):
        pol = get_policy(policy, **params)
    else:
        check_type(policy, Policy, "policy", "a policy name or a Policy object (not its class)")
        if params:
            raise TypeError(f"policy: parameters {', '.join(params)} go with a policy name")
        pol = policy
    return _simulate(instance, pol, horizon, members)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("coopsched")
    except PackageNotFoundError:  # a source tree without installation
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":  # importlib.metadata is slow to import: only on demand
        value = globals()["__version__"] = _version()
        return value
    if name == "audit":  # the callable coopsched.audit package, when this installation has it
        try:
            mod = importlib.import_module("coopsched.audit")
        except ImportError as exc:
            raise AttributeError(f"coopsched.audit is not available ({exc})") from None
        globals()[name] = mod
        return mod
    target = _API.get(name)
    if target is None:
        raise AttributeError(f"module 'coopsched' has no attribute {name!r}")
    value = getattr(importlib.import_module(target[0]), target[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # what type checkers and IDEs see: every name of _API, from where it lives
    # (tests/test_typed.py checks that these lines and _API name the same objects)
    from .audit import audit as audit
    from .experiments.compare import compare_frame as compare
    from .online.checker import check_schedule as check_schedule
    from .online.engine import Policy as Policy
    from .online.export import plot_gantt as plot_gantt
    from .online.export import write_batsim_jobs as write_batsim_jobs
    from .online.export import write_schedule_swf as write_schedule_swf
    from .online.fairness import fairness as fairness
    from .online.policies import get_policy as get_policy
    from .online.policies import names as policies
    from .online.policies import register as register
    from .online.schedule import Schedule as Schedule
    from .testing import check_policy as check_policy
    from .workloads.archive import fetch_trace as fetch_trace
    from .workloads.archive import load_trace as load_trace
    from .workloads.archive import trace_path as trace_path
    from .workloads.generators import lublin_instance as lublin_instance
    from .workloads.generators import synthetic_instance as synthetic_instance
    from .workloads.instance import Instance as Instance
    from .workloads.instance import Organization as Organization
    from .workloads.instance import make_instance as make_instance
    from .workloads.jsonio import read_instance as read_instance
    from .workloads.jsonio import write_instance as write_instance
    from .workloads.load import load_instance as load_instance
    from .workloads.prepare import trace_to_instance as trace_to_instance
    from .workloads.swf import read_swf as read_swf

    __version__: str
