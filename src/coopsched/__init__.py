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

__all__ = sorted([*_API, "simulate", "audit", "__version__"])


def simulate(instance, policy="fifo", horizon: int | None = None, members=None, **params):
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


if TYPE_CHECKING:  # for type checkers and IDEs only
    from .experiments.compare import compare_frame as compare  # noqa: F401
    from .online.engine import Policy  # noqa: F401
    from .online.schedule import Schedule  # noqa: F401
    from .workloads.instance import Instance, make_instance  # noqa: F401
