"""Converting option values without pydantic (issue 26, item 6).

Recent typer versions convert every parameter's value (each option typed on the command
line and each default) with a pydantic ``TypeAdapter``: the first value imports pydantic
and builds adapters, about a quarter of a short command's start-up. The commands' values
are of a few plain types (``str``, ``int``, ``float``, ``bool``, ``Path``, ``list[str]``),
so :func:`plain_values` gives each parameter of a built command a converter that handles
the ordinary values of those types here, with exactly the result typer's own conversion
gives (a number written in plain digits, within the option's ``min``/``max``; a path
through typer's own path checks), and hands anything else (a malformed number, a value out
of range, another type) to typer's conversion, whose error messages are unchanged.

With a typer that does not convert this way (older versions use click's types), or whose
internals differ, :func:`plain_values` leaves the command as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # typer's private conversion layer (typer 0.2x); the fast path needs nothing else
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path
except ImportError:  # pragma: no cover  (another typer: keep its conversion)
    RuntimeParam = None  # type: ignore[assignment,misc]

_INT = re.compile(r"-?[0-9]{1,18}")
_FLOAT = re.compile(r"-?[0-9]{1,15}(\.[0-9]{0,15})?")
_SLOW = object()  # "not an ordinary value: typer converts it"


def _in_range(x: Any, info: Any) -> Any:
    if info.clamp or (info.min is not None and x < info.min):
        return _SLOW
    if info.max is not None and x > info.max:
        return _SLOW
    return x


def _plain(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    """``value`` converted to ``annotation`` as typer would, or ``_SLOW``."""
    if info.parser is not None:
        return _SLOW
    if annotation is str:
        return value if type(value) is str else _SLOW
    if annotation is bool:
        return value if type(value) is bool else _SLOW
    if annotation is int:
        if type(value) is str and _INT.fullmatch(value):
            value = int(value)
        return _in_range(value, info) if type(value) is int else _SLOW
    if annotation is float:
        if type(value) is str and _FLOAT.fullmatch(value) or type(value) is int:
            value = float(value)
        return _in_range(value, info) if type(value) is float and value == value else _SLOW
    if annotation is Path and info.path_type in (None, Path) and type(value) is str:
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    if annotation == list[str] and isinstance(value, (list, tuple)):
        return list(value) if all(type(v) is str for v in value) else _SLOW
    return _SLOW


if RuntimeParam is not None:

    @dataclass(frozen=True)
    class _PlainParam(RuntimeParam):
        """Ordinary values converted here; anything else by typer's own converter."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            out = _plain(self.annotation, self.parameter_info, value, param, ctx)
            if out is _SLOW:
                slow = build_runtime_param(param.type_descriptor)
                return slow._coerce_value(value, param=param, ctx=ctx)
            return out


def plain_values(command: Any, parent: Any = None) -> Any:
    """Give every parameter of ``command`` (a click command or group built by typer, and
    its subcommands) the converter above, the help option included (created here as
    the run would create it, from a context with the same settings); returns ``command``."""
    if RuntimeParam is None:  # pragma: no cover
        return command
    ctx = command.context_class(command, parent=parent, **command.context_settings)
    for param in [*command.params, command.get_help_option(ctx)]:
        desc = getattr(param, "type_descriptor", None)
        if desc is None or desc.file_annotation is not None:
            continue  # not typer's conversion, or a file to open: typer's own
        if getattr(param, "_runtime_param", 0) is None:
            param._runtime_param = _PlainParam(
                parameter_info=desc.parameter_info, annotation=desc.annotation
            )
    for sub in getattr(command, "commands", {}).values():
        plain_values(sub, ctx)
    return command
