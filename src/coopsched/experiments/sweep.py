"""Run many independent tasks in parallel, with a progress bar, resumably.

A sweep is a list of tasks (JSON-able dicts) and a module-level function mapping a task
to a result row. Each finished row is appended to a JSON-lines file at once (flushed and
synced), keyed by a hash of its task; a rerun skips every task already in the file, so
an interrupted sweep continues where it stopped and never recomputes or loses a finished
instance. Tasks run in local worker processes by default, or on a dask.distributed
cluster when a scheduler address is given.

Stopping a sweep (Ctrl-C, SIGTERM, any error) terminates the local workers at once
instead of waiting for their tasks; the workers ignore Ctrl-C themselves (the parent
handles it), die silently on SIGTERM (never with the parent's handlers, which a forked
worker would otherwise inherit: the signals are held while the pool forks and released
only once the worker has its own), and, on Linux, are killed by the kernel if the parent
dies without cleaning up (``PR_SET_PDEATHSIG``), so no worker outlives its sweep. A
worker that dies while the sweep runs (killed, out of memory) is a :class:`SweepError`;
the rows finished so far stay in the file.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class SweepError(RuntimeError):
    """A sweep cannot go on (a worker process died); the message says why, in one line."""


#: The signals the parent handles and a worker must not: held while the pool forks.
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM in this thread (they wait, pending, and are handled on
    leaving): a worker forked meanwhile starts with them held, so it never runs the
    parent's Python handlers before :func:`_worker_init` has set its own."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def task_key(task: dict) -> str:
    """Stable identifier of a task (hash of its canonical JSON)."""
    blob = json.dumps(task, sort_keys=True, separators=(",", ":"))
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def load_rows(path: Path) -> dict[str, dict]:
    """Finished rows by task key; a truncated last line (interrupted write) is dropped, and
    a complete last row without its newline gets one, so the next row is not glued to it."""
    rows: dict[str, dict] = {}
    if not path.exists():
        return rows
    good_lines = []
    text = path.read_text()
    dirty = bool(text) and not text.endswith("\n")
    for line in text.splitlines():
        try:
            row = json.loads(line)
            rows[row["task_key"]] = row
            good_lines.append(line)
        except (json.JSONDecodeError, KeyError, TypeError):
            dirty = True
    if dirty:  # rewrite without the broken line so appends stay valid
        path.write_text("".join(x + "\n" for x in good_lines))
    return rows


def _append(fh, row: dict) -> None:
    fh.write(json.dumps(row, sort_keys=True) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def _worker_init(notice: tuple[bool, Any] = (False, None)) -> None:
    """Local workers: Ctrl-C is the parent's business; SIGTERM (the parent stopping the
    pool) ends the worker silently, with the system's default action, not with the handler
    a forked worker inherits from the command line (which would raise and print a
    traceback); die with the parent (Linux); the compile notice printed once for the whole
    pool (:func:`coopsched.online.jit.for_workers`). The signals are held until the
    handlers are set (:func:`_signals_held`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    from ..online import jit

    jit.in_worker(notice)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's worker processes now (running tasks are abandoned)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if terminate is not None:
        terminate()
        return
    manager = getattr(pool, "_executor_manager_thread", None)  # shutdown() forgets it
    # the tasks queued for the workers are abandoned: the queue's feeder thread, blocked
    # writing a task into a pipe no live worker reads, must not be joined (by the manager
    # thread, then by the interpreter's exit hook, which waits for it forever: a CI run once
    # printed "error: interrupted" and never exited)
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        if proc.is_alive():
            proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    # let the pool's manager thread finish closing its wake-up pipe now: on Python < 3.12
    # the interpreter's exit hook may otherwise write to that pipe while the thread closes
    # it, and print "Exception ignored in ... threading" with a traceback
    if manager is not None and manager.is_alive():
        manager.join(timeout=10)


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        disable=quiet,
    )


def run_sweep(
    tasks: list[dict],
    fn: Callable[[dict], dict],
    out: Path,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    description: str = "sweep",
    quiet: bool = False,
) -> list[dict]:
    """Run ``fn`` on every task not yet in ``out`` (JSON lines); return all rows in task order.

    ``workers``: local processes (default: all cores; 1 runs in this process).
    ``scheduler``: a dask.distributed scheduler address (``tcp://host:8786``) or a
    ``distributed.Client``; tasks then run on that cluster.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = load_rows(out)
    keyed = [(task_key(t), t) for t in tasks]
    pending = [(k, t) for k, t in keyed if k not in done]
    workers = workers or os.cpu_count() or 1
    with out.open("a") as fh, _progress(quiet) as bar:
        bar_id = bar.add_task(description, total=len(tasks), completed=len(tasks) - len(pending))

        def record(key: str, task: dict, row: dict) -> None:
            row = {**row, "task_key": key, "task": task}
            done[key] = row
            _append(fh, row)
            bar.advance(bar_id)

        if not pending:
            pass
        elif scheduler is not None:
            _run_dask(pending, fn, scheduler, record)
        elif workers == 1:
            for key, task in pending:
                record(key, task, fn(task))
        else:
            from ..online import jit

            pool = ProcessPoolExecutor(
                max_workers=workers, initializer=_worker_init, initargs=(jit.for_workers(),)
            )
            try:
                with _signals_held():  # the workers are forked by the first submit
                    futures = {pool.submit(fn, task): (key, task) for key, task in pending}
                remaining = set(futures)
                while remaining:
                    finished, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                    for f in finished:
                        key, task = futures[f]
                        record(key, task, f.result())
            except BrokenProcessPool:
                _stop_workers(pool)
                raise SweepError(
                    f"{description}: a worker process died while running a task (killed, "
                    f"or out of memory?); the {len(done)} finished row(s) are kept in {out}: "
                    "run the same command again to resume"
                ) from None
            except BaseException:
                _stop_workers(pool)
                raise
            pool.shutdown(wait=True)
    return [done[k] for k, _ in keyed]


def _run_dask(pending, fn, scheduler, record) -> None:
    from distributed import Client, as_completed

    client = scheduler if isinstance(scheduler, Client) else Client(scheduler)
    try:
        futures = {client.submit(fn, task, pure=False): (key, task) for key, task in pending}
        for fut in as_completed(list(futures)):
            key, task = futures[fut]
            record(key, task, fut.result())
    finally:
        if not isinstance(scheduler, Client):
            client.close()
