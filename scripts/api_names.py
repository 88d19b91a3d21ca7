"""The public API of coopsched, read from the installed package: its public modules, the
names each defines, and those without a docstring.

The documentation site's API reference is generated from :func:`public_modules` (one page
per module, ``scripts/docs_site.py``), so a module that moves or appears is documented
without editing the site; ``coopsched.__all__`` is the top-level page. A public name is
one that no dotted part starts with ``_``: a module, a function or class the module defines
(not one it imports), and the methods and properties a public class defines. A method that
overrides a documented one inherits its docstring (as ``inspect.getdoc`` reads it).
Constants are shown with their values and need no docstring.

Usage::

    python scripts/api_names.py              # the undocumented public names; exit 1 if any
    python scripts/api_names.py --modules    # the public modules
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterator
from types import ModuleType

PACKAGE = "coopsched"


def _public(dotted: str) -> bool:
    return not any(part.startswith("_") for part in dotted.split("."))


def public_modules(package: str = PACKAGE) -> list[str]:
    """Every public module of ``package``, the package itself first, in dotted order."""
    root = importlib.import_module(package)
    found = [package]
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if _public(info.name):
            found.append(info.name)
    return sorted(found, key=lambda name: name.split("."))


def _auto_doc(cls: type) -> bool:
    """Whether ``cls.__doc__`` is the signature that dataclasses or NamedTuple write in
    place of a missing docstring."""
    doc = cls.__dict__.get("__doc__")
    if not doc:
        return True
    generated = dataclasses.is_dataclass(cls) or (
        issubclass(cls, tuple) and hasattr(cls, "_fields")
    )
    return generated and doc.startswith(f"{cls.__name__}(")


def _defined(module: ModuleType) -> Iterator[tuple[str, object]]:
    """The public functions and classes ``module`` itself defines."""
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", None) == module.__name__:
            yield name, obj


def _members(cls: type) -> Iterator[tuple[str, object]]:
    """The public methods and properties ``cls`` defines (not those it inherits)."""
    fields = getattr(cls, "__dataclass_fields__", {})
    for name, raw in vars(cls).items():
        if name.startswith("_") or name in fields:  # a field's default is no method
            continue
        if isinstance(raw, (staticmethod, classmethod)):
            raw = raw.__func__
        if inspect.isfunction(raw) or isinstance(raw, property):
            yield name, raw


def _doc_of_member(cls: type, name: str, raw: object) -> str | None:
    if isinstance(raw, property):
        if raw.__doc__:
            return raw.__doc__
        inherited = (vars(base).get(name) for base in cls.__mro__[1:])
        return next((p.__doc__ for p in inherited if isinstance(p, property) and p.__doc__), None)
    return inspect.getdoc(getattr(cls, name))


def undocumented(package: str = PACKAGE) -> list[str]:
    """The dotted names of the public modules, functions, classes and methods of
    ``package`` that have no docstring."""
    missing = []
    for modname in public_modules(package):
        module = importlib.import_module(modname)
        if not (module.__doc__ or "").strip():
            missing.append(modname)
        for name, obj in _defined(module):
            dotted = f"{modname}.{name}"
            if inspect.isclass(obj):
                if _auto_doc(obj):
                    missing.append(dotted)
                for mname, raw in _members(obj):
                    if not (_doc_of_member(obj, mname, raw) or "").strip():
                        missing.append(f"{dotted}.{mname}")
            elif not (inspect.getdoc(obj) or "").strip():
                missing.append(dotted)
    return missing


def summary(obj: object) -> str:
    """The first paragraph of ``obj``'s docstring, on one line."""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


def top_level(package: str = PACKAGE) -> list[tuple[str, str, str]]:
    """``(name, where, summary)`` for every name of ``package.__all__``: ``where`` is the
    dotted path of the object it stands for (a function's, a class's or a module's own;
    ``""`` for a value)."""
    root = importlib.import_module(package)
    out = []
    for name in root.__all__:
        obj = getattr(root, name)
        if inspect.ismodule(obj):  # the callable coopsched.audit package: its function
            obj = getattr(obj, name, obj)
        if inspect.ismodule(obj):
            out.append((name, obj.__name__, summary(obj)))
        elif inspect.isfunction(obj) or inspect.isclass(obj):
            where = f"{obj.__module__}.{obj.__qualname__}"
            if not _public(where):  # defined in a private module: its public path
                module, attr = root._API[name]
                where = f"{module}.{attr}"
            out.append((name, where, summary(obj)))
        else:  # a value (the version string): documented on the page itself
            out.append((name, "", ""))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", action="store_true", help="list the public modules")
    args = ap.parse_args(argv)
    if args.modules:
        print("\n".join(public_modules()))
        return 0
    missing = undocumented()
    for name in missing:
        print(f"error: {name}: public, without a docstring")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
