"""One runner for every study and reproduction, and the registry the CLI iterates over.

A study is a list of independent tasks (JSON-able dicts), a module-level function that maps
a task to a row, and what to make of the rows: a table, a summary, figures. The base class
:class:`Study` names the override points (in the manner of SimPy's base classes); the
skeleton that every study shares, run the sweep resumably, tabulate, write ``results.csv``,
``summary.md`` and the figures, lives once, in :meth:`Study.run`.

Override points:

* :meth:`Study.configure`: set the study's parameters from ``quick`` and the options;
* :meth:`Study.tasks`: the tasks;
* :attr:`Study.evaluate`: a module-level function ``task -> row`` (picklable: it runs in
  worker processes or on a dask cluster);
* :meth:`Study.frame`: the rows as a DataFrame (written to ``results.csv``);
* :meth:`Study.report`: writes extra tables and figures into ``out`` and returns the
  Markdown summary (written to ``summary.md``).

Register a study with :func:`register_study`; ``coopsched reproduce NAME`` finds it there
(:mod:`coopsched.experiments.studies` imports the built-in ones: this module imports none).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import pandas as pd

from .sweep import SweepError, run_sweep


@dataclass(frozen=True)
class StudyOption:
    """One keyword option of a study, as data: the command line builds ``coopsched
    reproduce STUDY``'s flags from the study's :attr:`Study.options`, so that a study's
    ``--help`` lists its own options and no other.

    ``name`` is the keyword of :meth:`Study.configure` (whose signature holds the default);
    ``type`` is ``str`` (comma-separated lists too), ``int``, ``bool`` (an on/off flag) or
    ``Path``; ``flag`` is the command line's flag when it is not ``--`` + the name with
    dashes; ``min`` bounds an integer; ``choices`` are shown in the help (the study checks
    them, with its own message); ``convert`` maps the flag's value to the keyword's (for
    example one integer to a ``{log: machines}`` dict)."""

    name: str
    type: type = str
    help: str = ""
    flag: str = ""
    min: int | None = None
    choices: tuple[str, ...] = ()
    convert: Callable[[Any], Any] | None = None

    @property
    def cli_flag(self) -> str:
        """The command line's flag (``--window-sampling`` for ``sampling``)."""
        return self.flag or "--" + self.name.replace("_", "-")

    def but(self, **changes: Any) -> StudyOption:
        """The same option with some fields changed (a study's own help text)."""
        return replace(self, **changes)


def _metacentrum(machines: int) -> dict[str, int]:
    return {"METACENTRUM": machines}


# The options several studies share, declared once (a study may reword the help with
# :meth:`StudyOption.but`). ``--out``, ``--quick``, ``--seed``, ``--workers`` and
# ``--scheduler`` are the runner's, common to every study.
TRACES = StudyOption("traces", Path, "Folder with the SWF traces.")
WINDOWS = StudyOption("windows", int, "Windows per trace (default 100).", min=1)
INSTANCES = StudyOption("instances", int, "Instances per cell.", flag="--windows", min=1)
SPLIT = StudyOption("split", help="Machine split (default zipf).", choices=("uniform", "zipf"))
MACHINES = StudyOption(
    "machines",
    int,
    "Machines for METACENTRUM (no header).",
    flag="--metacentrum-machines",
    convert=_metacentrum,
)
SAMPLING = StudyOption(
    "sampling",
    help="Window starts uniform in 'time' (default) or at a random 'job'.",
    flag="--window-sampling",
    choices=("time", "job"),
)
WARMUP = StudyOption(
    "warmup",
    int,
    "Seconds simulated before each window (the metric counts the utilities accrued in "
    "the window; default 0).",
    min=0,
)
OWNERS = StudyOption(
    "owners",
    help="Jobs to organizations by 'user' (default) or 'random'.",
    choices=("user", "random"),
)
BACKLOG = StudyOption(
    "backlog",
    bool,
    "Start each window from the log's own state (waiting jobs kept, running jobs pinned).",
)
POLICIES = StudyOption(
    "policies",
    help="The policy columns, comma-separated registered names (plug-ins too), 'paper' (the "
    "paper's six; the default of the reproductions) or 'all' (every registered policy but "
    "REF, the reference).",
)
JOBS = StudyOption(
    "jobs",
    help="'sequential' (a job on q processors is q one-processor jobs, the paper's split; "
    "the default) or 'rigid' (q machines at once, REF and every policy with backfilling).",
    choices=("sequential", "rigid"),
)
BACKFILL = StudyOption(
    "backfill",
    help="With --jobs rigid: none, first-fit, easy (each organization's oldest job) or "
    "easy-queue (the whole queue) (default: easy when every job of a window has a "
    "requested time, else first-fit).",
    choices=("none", "first-fit", "easy", "easy-queue"),
)
#: The window options of the trace studies (Tables 1 and 2, Figure 10, production).
WINDOW_OPTIONS = (SAMPLING, WARMUP, OWNERS, BACKLOG, JOBS, BACKFILL)

#: Every study by name, in registration order (the CLI lists them in this order).
STUDIES: dict[str, type[Study]] = {}


def register_study(cls: type[Study]) -> type[Study]:
    """Add a study class to :data:`STUDIES` under ``cls.name``."""
    if not cls.name or cls.name in STUDIES and STUDIES[cls.name] is not cls:
        raise ValueError(f"study name {cls.name!r} is empty or already taken")
    STUDIES[cls.name] = cls
    return cls


class Study:
    """Base class of a study: override :meth:`configure`, :meth:`tasks`, :attr:`evaluate`,
    :meth:`frame` and :meth:`report`; :meth:`run` is shared.

    ``options`` declares the keyword options the study accepts beyond ``quick`` and
    ``seed`` (:class:`StudyOption`: ``windows``, ``traces``, ...); giving another one is an
    error, never ignored.
    """

    name: ClassVar[str] = ""
    #: One line for ``coopsched reproduce --help``: what is reproduced, from which paper.
    title: ClassVar[str] = ""
    #: Files written besides ``rows.jsonl``, ``results.csv`` and ``summary.md``.
    files: ClassVar[tuple[str, ...]] = ()
    options: ClassVar[tuple[StudyOption, ...]] = ()

    def __init__(self, *, quick: bool = False, seed: int = 0, **options: Any) -> None:
        accepted = self.option_names()
        unknown = sorted(k for k, v in options.items() if v is not None and k not in accepted)
        if unknown:
            raise OptionError(self.name, tuple(unknown), accepted)
        self.quick = quick
        self.seed = seed
        self.configure(**{k: v for k, v in options.items() if v is not None})

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The keywords of :attr:`options`, in their order."""
        return tuple(o.name for o in cls.options)

    # ------------------------------------------------------------ override points
    def configure(self) -> None:
        """Set the study's parameters from keyword options named in :attr:`options`
        (``self.quick`` and ``self.seed`` are already set)."""

    @staticmethod
    def evaluate(task: dict) -> dict:
        """One task to one row. Subclasses set ``evaluate = staticmethod(module_function)``:
        it must be a module-level function, so that worker processes can unpickle it."""
        raise NotImplementedError

    def tasks(self) -> list[dict]:
        """The independent tasks of the sweep."""
        raise NotImplementedError

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        """The finished rows as one table (``results.csv``)."""
        return pd.json_normalize(rows)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        """Write figures and extra tables into ``out``; return the Markdown summary."""
        raise NotImplementedError

    # ------------------------------------------------------------ shared skeleton
    def run(
        self,
        out: str | Path,
        *,
        workers: int | None = None,
        scheduler: Any = None,
        quiet: bool = False,
    ) -> tuple[pd.DataFrame, str]:
        """Run (or resume) the sweep; write ``rows.jsonl``, ``results.csv``, ``summary.md``
        and the study's own files into ``out``; return the table and the summary."""
        out = Path(out)
        tasks = self.tasks()
        with _writing(out), output_lock(out):
            rows = run_sweep(
                tasks,
                type(self).evaluate,
                out / "rows.jsonl",
                workers=workers,
                scheduler=scheduler,
                description=self.name,
                quiet=quiet,
            )
            df = self.frame(rows)
            df.to_csv(out / "results.csv", index=False)
            md = self.report(df, rows, out)
            (out / "summary.md").write_text(md)
        return df, md


class OptionError(ValueError):
    """Options given to a study that does not take them (``unknown``; ``accepted``: the
    study's :meth:`Study.option_names`)."""

    def __init__(self, study: str, unknown: tuple[str, ...], accepted: tuple[str, ...]) -> None:
        self.study, self.unknown, self.accepted = study, unknown, accepted
        super().__init__(
            f"reproduce {study}: option(s) {', '.join(unknown)} do not apply "
            f"(accepted: {', '.join(accepted) or 'none besides quick and seed'})"
        )


class StudyError(SweepError):
    """A study cannot run or write its results; the message says why, in one line."""


@contextlib.contextmanager
def _writing(out: Path) -> Iterator[None]:
    """A full disk, a read-only or forbidden folder: one line naming the folder, never a
    traceback from deep in a writer or a worker."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        yield
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT):
            raise StudyError(
                f"cannot write the results into {out}: {exc.strerror or exc}"
            ) from None
        raise


@contextlib.contextmanager
def output_lock(out: Path) -> Iterator[None]:
    """Only one run computes into a folder at a time: ``out/.lock`` holds the holder's pid
    and host while it runs. A second run gets a clear error; the lock of a run that died
    (its pid gone, on this host) is taken over with a note."""
    lock = out / ".lock"
    me = f"{os.getpid()} {socket.gethostname()}"
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                pid_s, _, host = lock.read_text().partition(" ")
                pid = int(pid_s)
            except (OSError, ValueError):
                pid, host = -1, ""
            if host.strip() == socket.gethostname() and pid > 0 and not _alive(pid):
                warnings.warn(
                    f"{out}: taking over the lock of run {pid}, which is no longer running",
                    stacklevel=3,
                )
                lock.unlink(missing_ok=True)
                continue
            raise StudyError(
                f"{out} is in use by another run (pid {pid} on {host.strip() or 'an unknown host'}"
                f"; {lock}): wait for it to finish or choose another output folder"
            ) from None
        with os.fdopen(fd, "w") as fh:
            fh.write(me)
        break
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            if lock.read_text() == me:
                lock.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
