"""Policy columns of the studies: which online policies a study measures (``--policies``).

Every column is a policy of the one registry (:mod:`coopsched.online.policies`), plug-ins
included, named by its lookup key (``normalize``: ``slurmclassic`` for ``slurm-classic``),
so that the paper's numbers (:mod:`.paper_values`, keyed the same way) sit beside the
columns they belong to and every other column shows "-" there. ``docs/reproduction.md``
describes the option.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..online.policies import names, normalize, policy_class
from . import paper_values

#: The columns of Skowron & Rzadca's Tables 1 and 2 and Figure 10 (Sec. 7.3).
PAPER = paper_values.POLICY_ORDER

#: A second RAND column with another number of orderings, e.g. ``rand_n75`` (N = 75).
_RAND_N = re.compile(r"rand_n([0-9]+)")


def resolve_policies(spec: str | Iterable[str] | None, default: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of ``spec``: a comma list (or sequence) of registered policy names,
    ``package.module:Class`` paths, ``rand_nN`` (RAND with N orderings), ``paper`` (the
    paper's six columns) and ``all`` (every registered policy but REF, plug-ins included);
    ``None`` or empty gives ``default``. Duplicates are dropped, order is kept.

    REF is refused: it is the reference every column is measured against (its
    ``dpsi / p_tot`` is 0 by definition).

    >>> resolve_policies("paper,Slurm-Classic", ())[-2:]
    ('currfairshare', 'slurmclassic')
    >>> resolve_policies(None, ("fifo",))
    ('fifo',)
    """
    items = spec.split(",") if isinstance(spec, str) else list(spec or ())
    items = [x.strip() for x in items if x.strip()]
    if not items:
        return tuple(default)
    out: list[str] = []
    for item in items:
        low = item.lower()
        if low == "paper":
            out += PAPER
        elif low == "all":
            out += [normalize(n) for n in names() if normalize(n) != "ref"]
        else:
            out.append(column_key(item))
    if "ref" in out:
        raise ValueError(
            "policies: REF is the reference every column is measured against "
            "(its dpsi/p_tot is 0 by definition); leave it out"
        )
    return tuple(dict.fromkeys(out))


def column_key(name: str) -> str:
    """The column key of one policy name (checked against the registry).

    >>> column_key("Round-Robin"), column_key("RAND_N75")
    ('roundrobin', 'rand_n75')
    """
    low = name.lower()
    if _RAND_N.fullmatch(low):
        if int(low[len("rand_n") :]) < 1:
            raise ValueError(f"policies: {name!r} needs at least one ordering")
        return low
    try:
        cls = policy_class(name)
    except KeyError as exc:
        raise ValueError(f"policies: {exc.args[0]} (or paper, all)") from None
    return name if ":" in name else normalize(cls.name)


def label(key: str) -> str:
    """How a column is headed: the policy's display name in capitals, e.g. ``SLURM-CLASSIC``;
    ``RAND (N=75)`` for ``rand_n75``.

    >>> label("slurmclassic"), label("rand_n75")
    ('SLURM-CLASSIC', 'RAND (N=75)')
    """
    if _RAND_N.fullmatch(key):
        return f"RAND (N={key[len('rand_n') :]})"
    return policy_class(key).name.upper()
