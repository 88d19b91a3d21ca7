"""Audit a recorded schedule: how fair was the platform, who was short-changed, by how much.

The package is callable: ``coopsched.audit(...)`` is its function :func:`audit` (also
importable as ``from coopsched.audit import audit``), while ``coopsched.audit.window``
and the other modules stay reachable as attributes.

>>> import coopsched
>>> report = coopsched.audit("log.swf.gz", org_by="group", t_from="2004-12-01", t_to="2005-01-01")  # doctest: +SKIP

Per organization ``u``: ``psi_u``, its ``psi_sp`` at the window's end in the recorded
schedule; ``phi_u``, its Shapley value in the game whose grand coalition is worth the recorded
total and whose other coalitions are worth what they would get alone under REF (Skowron &
Rzadca, Definition 3.2 applied to the recorded schedule; docs/conventions.md §5); and the signed
surplus ``psi_u - phi_u``. Exact up to ``exact_max`` organizations (one REF run over all
``2^k`` coalitions), sampled beyond (:mod:`.sampling`, its statistics in :mod:`.estimation`).
See ``docs/audit.md``.

The option records (:mod:`.options`) and the report's records (:mod:`.result`) import
nothing heavy; :func:`audit` and the rest (:mod:`.run`) are imported on first use, so that
the command line can build ``coopsched audit --help`` from the records alone.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .options import Contents, Estimation, Organizations, PlatformModel, TimeWindow
from .result import (
    AuditReport,
    AuditWindow,
    Backlog,
    Counterfactual,
    Curves,
    Efficiency,
    OrganizationRow,
    OwenOrganization,
    OwenSection,
    OwenUnit,
    Sampling,
)

if TYPE_CHECKING:
    from .organizations import MappingError
    from .run import audit, load_log
    from .window import WindowError

__all__ = [
    "audit",
    "load_log",
    "MappingError",
    "WindowError",
    "TimeWindow",
    "Organizations",
    "PlatformModel",
    "Estimation",
    "Contents",
    "AuditReport",
    "AuditWindow",
    "Backlog",
    "OrganizationRow",
    "Efficiency",
    "Sampling",
    "Counterfactual",
    "Curves",
    "OwenSection",
    "OwenOrganization",
    "OwenUnit",
]

#: Names imported on first use, and their module.
_LAZY = {"MappingError": ".organizations", "WindowError": ".window"}


def __getattr__(name: str) -> Any:
    """:func:`audit` and the other names of :mod:`.run` (``load_log``, ``efficiency``),
    the errors, and the submodules, imported on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
    else:
        run = importlib.import_module(".run", __name__)
        if hasattr(run, name):
            value = getattr(run, name)
        else:
            try:
                value = importlib.import_module(f".{name}", __name__)
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


class _CallableModule(types.ModuleType):
    """The type of the ``coopsched.audit`` package: a module whose call is :func:`audit`.

    Assigning a :class:`types.ModuleType` subclass to a module's ``__class__`` is supported
    by Python (the data model, "Customizing module attribute access"); the module keeps its
    attributes, submodules and docstring.
    """

    def __call__(self, source: str | Path | Any, **options: Any) -> AuditReport:
        """:func:`audit` (same arguments)."""
        from .run import audit

        return audit(source, **options)

    @property
    def __signature__(self):
        """:func:`audit`'s signature, so that ``inspect.signature`` and IDEs show it."""
        import inspect

        from .run import audit

        return inspect.signature(audit)


sys.modules[__name__].__class__ = _CallableModule
