"""The one registry of online policies (``docs/policies.md``).

A policy is one module under ``coopsched/online/policies/``: a :class:`Policy` subclass
with a ``name``, decorated with :func:`register`. The package's modules are discovered
and imported on first use, so nothing else needs editing: tests, ``demo``, ``compare``
and the CLI's help iterate over :func:`available`. Third-party policies plug in through
the ``coopsched.policies`` entry-point group, as ``package.module:Class`` (a module
importable from ``sys.path``) or as ``path/to/file.py:Class`` (a file, loaded by its path).

Names are looked up normalized (lower case, ``-``, ``_`` and spaces removed), so
``Round-Robin``, ``round_robin`` and ``roundrobin`` are one policy; the display name
(``cls.name``) is kept as written, e.g. ``slurm-classic``.
"""

from __future__ import annotations

import collections.abc
import importlib
import pkgutil
import sys
import types
import typing
import warnings

from ...workloads.limits import check_seed
from ..engine import Policy
from ._plugins import guard, normalize

#: normalized name -> class. Adding a class here by hand still works.
POLICIES: dict[str, type[Policy]] = {}

ENTRY_POINT_GROUP = "coopsched.policies"
_state = {"discovered": False, "plugins": False}


def register(cls: type[Policy] | None = None, *, name: str | None = None):
    """Register a policy class under ``name`` (default ``cls.name``); usable as a decorator.

    >>> from coopsched.online.policies import Policy, register, get_policy
    >>> @register
    ... class Lowest(Policy):
    ...     "Always the lowest-numbered waiting organization."
    ...     name = "lowest-first"
    ...     def select(self, view):
    ...         return view.candidates()[0]
    >>> get_policy("Lowest_First")
    Lowest(seed=0)
    >>> unregister("lowest-first")
    """

    def add(c: type[Policy]) -> type[Policy]:
        if not (isinstance(c, type) and issubclass(c, Policy)):
            raise TypeError(f"{c!r} is not a subclass of coopsched Policy")
        if name is not None:
            c.name = name
        key = normalize(c.name)
        if not key or key == "policy":
            raise ValueError(f"{c.__name__}: give the policy a 'name' class attribute")
        old = POLICIES.get(key)
        if old is not None and old is not c and _qualname(old) != _qualname(c):
            raise ValueError(
                f"policy name {c.name!r} is taken by {_qualname(old)}; choose another name"
            )
        POLICIES[key] = c
        return c

    return add if cls is None else add(cls)


def unregister(name: str) -> None:
    """Remove a policy from the registry (for tests and notebooks)."""
    POLICIES.pop(normalize(name), None)


def _qualname(c: type) -> str:
    return f"{c.__module__}.{c.__qualname__}"


def _discover() -> None:
    """Import every module of the package, so that their ``@register`` calls run.

    A :class:`Policy` subclass defined in one of these modules with its own ``name``
    is registered even without the decorator (a dropped-in file just works).
    """
    if _state["discovered"]:
        return
    _state["discovered"] = True
    # the package's folders (it is loaded: this module is part of it)
    for info in pkgutil.iter_modules(sys.modules[__package__].__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{__package__}.{info.name}")
        for obj in vars(mod).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, Policy)
                and obj.__module__ == mod.__name__
                and "name" in vars(obj)
                and normalize(obj.name) not in POLICIES
            ):
                register(obj)


def _load_plugins() -> None:
    """Register the policies of the ``coopsched.policies`` entry-point group (once)."""
    if _state["plugins"]:
        return
    _state["plugins"] = True
    import importlib.metadata  # on demand: the import costs start-up time

    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            cls = ep.load()
            if isinstance(cls, type) and issubclass(cls, Policy) and "name" not in vars(cls):
                cls.name = ep.name
            guard(cls, f"{ep.value} (entry point {ep.name!r})", POLICIES)
            register(cls)
        except (Exception, SystemExit) as exc:  # a broken plug-in must not break the others
            warnings.warn(f"policy plug-in {ep.name!r} ({ep.value}): {exc}", stacklevel=2)


def available() -> list[type[Policy]]:
    """Every registered policy class (package, entry points, :func:`register`), in the
    order listings use: ``rank``, then name."""
    _discover()
    _load_plugins()
    return sorted(set(POLICIES.values()), key=lambda c: (c.rank, normalize(c.name)))


def names() -> list[str]:
    """Display names of :func:`available`."""
    return [c.name for c in available()]


def policy_class(name: str) -> type[Policy]:
    """The class of a registered name, of ``package.module:Class`` (the module imported
    from ``sys.path``) or of ``path/to/file.py:Class`` (a file ending in ``.py``, loaded
    by its path, relative to the current folder, once per process).

    >>> policy_class("Round-Robin").__name__
    'RoundRobin'
    """
    if not isinstance(name, str):
        raise TypeError(f"policy: expected a policy name (a string), got {name!r:.60}")
    if ":" in name:
        module, _, attr = name.rpartition(":")
        try:
            obj = _load_file(name, module) if _is_file(module) else importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise KeyError(f"cannot load policy {name!r}: {exc}") from None
        except (Exception, SystemExit) as exc:  # the module itself failed on import
            raise KeyError(
                f"cannot load policy {name!r}: importing {module} raised "
                f"{type(exc).__name__}: {exc}"
            ) from None
        if not (isinstance(obj, type) and issubclass(obj, Policy)):
            raise KeyError(f"{name!r} is not a subclass of coopsched Policy")
        if obj.__module__.startswith("coopsched.") or obj.__module__ == "coopsched":
            return obj  # one of the package's own classes, named by its path
        _discover()
        return guard(obj, name, POLICIES)
    _discover()
    key = normalize(name)
    if key not in POLICIES:
        _load_plugins()
    if key not in POLICIES:
        raise KeyError(f"unknown policy {name!r}; choose from {', '.join(names())}")
    return POLICIES[key]


def _is_file(module: str) -> bool:
    """Whether the part before ``:`` names a file rather than a module."""
    return module.endswith(".py") or "/" in module or "\\" in module


#: Plug-in files already loaded: resolved path -> module.
_FILES: dict[str, types.ModuleType] = {}


def _load_file(name: str, module: str) -> types.ModuleType:
    """The module of a plug-in file, executed once per process and entered in
    ``sys.modules`` under a name made from its path (what dataclasses and pickle look up)."""
    import hashlib
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(module).expanduser()
    if not path.is_file():
        raise KeyError(f"cannot load policy {name!r}: no such file {module}")
    key = str(path.resolve())
    if key in _FILES:
        return _FILES[key]
    mod_name = f"coopsched_plugin_{path.stem}_{hashlib.sha1(key.encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise KeyError(f"cannot load policy {name!r}: {module} is not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
    except (Exception, SystemExit) as exc:
        del sys.modules[mod_name]
        raise KeyError(
            f"cannot load policy {name!r}: {module} failed: {type(exc).__name__}: {exc}"
        ) from None
    _FILES[key] = mod
    return mod


def get_policy(name: str, **params) -> Policy:
    """A policy by name (see :func:`policy_class`), with its parameters.

    Unknown parameters are refused with the list of valid ones.

    >>> get_policy("fairshare")
    FairShare(seed=0)
    >>> get_policy("rand", n_samples=75).n_samples
    75
    """
    cls = policy_class(name)
    if "seed" in params:  # numpy's generators would answer a bad seed in their words
        check_seed(params["seed"])
    valid = cls.param_names()
    unknown = [p for p in params if p not in valid]
    if unknown:
        raise KeyError(
            f"policy {cls.name!r} has no parameter {unknown[0]!r}; "
            f"its parameters: {', '.join(valid) or '(none)'}"
        )
    return cls(**params)


def _convert(text: str, hint: object, default: object) -> object:
    """``text`` as a value of type ``hint`` (ints, floats, bools, strings, optionals, and
    comma-separated sequences of those)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(hint)
        if text.lower() in ("none", "null") and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(text, a, default)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    if origin in (tuple, list, collections.abc.Sequence, collections.abc.Iterable):
        item_types = [a for a in typing.get_args(hint) if a is not Ellipsis]
        item = item_types[0] if item_types else str
        parts = [x.strip() for x in text.split(",") if x.strip()]
        values = [_convert(x, item, None) for x in parts]
        return values if origin is list else tuple(values)
    if origin is typing.Literal:
        choices = typing.get_args(hint)
        for c in choices:
            if str(c) == text:
                return c
        raise ValueError(f"expected one of {', '.join(map(str, choices))}")
    if hint is bool:
        low = text.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if hint is int:
        try:
            return int(text)
        except ValueError:
            raise ValueError("expected an integer") from None
    if hint is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError("expected a number") from None
    return text


def parse_params(cls: type[Policy], items: list[str]) -> dict:
    """``["n_samples=75", "seed=3"]`` as typed keyword arguments of ``cls``.

    Values are converted by the parameter's annotation (or its default's type); an
    unknown name or a bad value is a :class:`ValueError` naming the valid parameters.

    >>> from coopsched.online.policies import Rand
    >>> parse_params(Rand, ["n_samples=75", "epsilon=0.5", "lam=none"])
    {'n_samples': 75, 'epsilon': 0.5, 'lam': None}
    """
    types_ = cls.param_types()
    out: dict = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ValueError(f"items: expects NAME=VALUE, got {item!r}")
        if key not in types_:
            raise ValueError(
                f"policy {cls.name!r} has no parameter {key!r}; "
                f"its parameters: {', '.join(types_) or '(none)'}"
            )
        hint, default = types_[key]
        try:
            out[key] = _convert(text.strip(), hint, default)
        except ValueError as exc:
            raise ValueError(f"items: {key}={text}: {exc}") from None
    return out


def policies_report():
    """Every registered policy with its parameters and the first line of its docstring
    (what ``coopsched policies`` prints)."""
    from ...report import Column, Report

    rows = []
    for c in available():
        params = ", ".join(f"{n}={d!r}" for n, (_, d) in c.param_types().items())
        rows.append(
            {
                "name": c.name,
                "parameters": params,
                "description": (c.__doc__ or "").strip().splitlines()[0] if c.__doc__ else "",
                "class": f"{c.__module__}:{c.__qualname__}",
            }
        )
    return Report(
        title="Online policies (--policy NAME, or package.module:Class; --param NAME=VALUE)",
        columns=[
            Column("name", left=True),
            Column("parameters", left=True),
            Column("description", left=True),
        ],
        rows=rows,
    )
