"""One entry point for every kind of online input: a JSON instance, an SWF trace (a path
or a Parallel Workloads Archive name), or the built-in synthetic workload."""

from __future__ import annotations

from pathlib import Path

from .instance import Instance, InstanceError


def load_instance(
    source: str | Path | None = None,
    *,
    k: int = 5,
    start: int | None = None,
    length: int | None = None,
    machines: int | None = None,
    split: str = "uniform",
    seed: int = 0,
    warmup: int = 0,
    owners: str = "user",
    backlog: bool = False,
    jobs: str = "sequential",
) -> Instance:
    """An instance from ``source``:

    * ``None``: :func:`~coopsched.workloads.generators.synthetic_instance` with ``k``
      organizations;
    * a ``.json`` file: :func:`~coopsched.workloads.jsonio.read_instance` (``docs/formats.md``);
    * a ``.swf``/``.swf.gz`` file, or the name of an archive log (``LPC-EGEE``; downloaded
      on first use, :mod:`coopsched.workloads.archive`): the window ``[start, start +
      length)`` cut by :func:`~coopsched.workloads.prepare.trace_to_instance`, its users
      dealt to ``k`` organizations (``owners``: by user or at random) and ``machines`` split
      by ``split``, with ``warmup`` seconds simulated before the window or, with
      ``backlog``, the jobs the log itself held at the window start; ``jobs`` chooses the
      sequential split or rigid jobs.

    >>> load_instance(None, k=3).k
    3
    """
    # each reader is imported only where it is needed (pandas only for traces: start-up)
    if source is None:
        from .generators import synthetic_instance

        return synthetic_instance(k=k, seed=seed)
    path = Path(source)
    if not path.exists():
        from .archive import lookup, trace_path

        try:
            lookup(str(source))
        except KeyError:
            pass  # not a log name: the readers below report the missing file
        else:
            path = trace_path(str(source))
    name = path.name.lower()
    if name.endswith(".json"):
        from .jsonio import read_instance

        return read_instance(path)
    if name.endswith(".swf") or name.endswith(".swf.gz"):
        from .prepare import trace_to_instance
        from .swf import read_swf

        return trace_to_instance(
            read_swf(path),
            k=k,
            start=start,
            length=length,
            machines=machines,
            split=split,
            seed=seed,
            warmup=warmup,
            owners=owners,
            backlog=backlog,
            jobs=jobs,
        )
    raise InstanceError(f"{path}: expected a .json instance or a .swf/.swf.gz trace")
