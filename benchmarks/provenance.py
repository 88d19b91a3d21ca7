"""Which code each committed result measures, and whether that code has changed since.

    python benchmarks/provenance.py                 # every results file: fresh, stale or kept
    python benchmarks/provenance.py --reruns        # the commands that refresh the stale ones
    python benchmarks/provenance.py --stamp FILE..  # after a rerun: measured on HEAD

``benchmarks/provenance.toml`` names, for every results file under ``benchmarks/`` and
``docs/results/`` (``files``, globs allowed), the source files and folders it measures
(``sources``; ``@name`` expands the list ``[groups] name``), the commit it was measured on
(``commit``), the command that reruns it (``rerun``) and how long that took last time
(``estimate``, from the results file). A file is **stale** when one of its sources differs
between that commit and the working tree: a Python file whose code changed (its syntax tree
without docstrings: comments, docstrings and formatting do not count), any other file whose
bytes changed, or a source added, deleted or moved (a path that no longer exists counts as
changed). Two marks exempt a file from the check, each with its reason:

* ``stale = "..."``: known stale, to be rerun (the list ``tests/test_provenance.py``
  accepts; a file so marked that is fresh again is an error, so the list cannot rot);
* ``historical = "..."``: a record of an earlier commit kept on purpose (a paired
  comparison, a setting since changed), which the docs quote as such.

``--stamp`` sets the commit of the entries holding the given files (or folders) to HEAD and
drops their ``stale`` mark; it refuses while their sources have uncommitted changes (the
commit would not name the code measured). ``benchmarks/run_all.py`` stamps each job's files
after writing them.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "benchmarks" / "provenance.toml"


def reset(root: Path) -> None:
    """Work on the repository at ``root`` (its ``benchmarks/provenance.toml``) from now on,
    forgetting what was read from the previous one (for tests on a scratch repository)."""
    global ROOT, MANIFEST
    ROOT, MANIFEST = root, root / "benchmarks" / "provenance.toml"
    for f in (why_no_history, shallow, resolve, _code, _old, _diff, _tree, _code_changed):
        f.cache_clear()
    while _batch:
        proc = _batch.pop()
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()


class NoHistory(RuntimeError):
    """No git history here (a source archive, git missing): staleness cannot be judged."""


@dataclass
class Entry:
    """One ``[[result]]`` of the manifest."""

    files: list[str]
    sources: list[str]
    commit: str
    rerun: str
    estimate: str
    stale: str = ""
    historical: str = ""
    note: str = ""
    line: int = 0  # where the entry starts in the manifest (for messages and stamping)
    paths: list[str] = field(default_factory=list)  # the results files it covers


def load(path: Path | None = None) -> list[Entry]:
    """The manifest's entries, sources expanded and the files they cover listed."""
    path = path or MANIFEST
    text = path.read_text()
    data = tomllib.loads(text)
    groups: dict[str, list[str]] = data.get("groups", {})
    starts = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip() == "[[result]]"]
    out = []
    for raw, line in zip(data.get("result", []), starts, strict=True):
        sources: list[str] = []
        for s in raw["sources"]:
            if s.startswith("@"):
                if s[1:] not in groups:
                    raise ValueError(f"{path.name} line {line}: unknown group {s}")
                sources += groups[s[1:]]
            else:
                sources.append(s)
        e = Entry(
            files=raw["files"],
            sources=sorted(set(sources)),
            commit=raw["commit"],
            rerun=raw["rerun"],
            estimate=raw["estimate"],
            stale=raw.get("stale", ""),
            historical=raw.get("historical", ""),
            note=raw.get("note", ""),
            line=line,
        )
        e.paths = [p for p in results_files() if any(fnmatch.fnmatch(p, g) for g in e.files)]
        out.append(e)
    return out


def results_files() -> list[str]:
    """Every committed results file: ``benchmarks/results-*`` and everything under
    ``docs/results/`` (paths relative to the repository; the files git tracks, or every
    such file without git)."""
    if not why_no_history():
        r = _git("ls-files", "--", "benchmarks/results-*", "docs/results")
        return sorted(r.stdout.splitlines())
    found = [p for p in (ROOT / "benchmarks").glob("results-*") if p.is_file()]
    found += [p for p in (ROOT / "docs" / "results").rglob("*") if p.is_file()]
    return sorted(p.relative_to(ROOT).as_posix() for p in found)


def stamp_written(written: list[str]) -> list[str]:
    """After a run that wrote ``written`` (paths relative to the repository): stamp every
    entry all of whose files were written (one written in part keeps its commit); what was
    done, one line each, never an exception."""
    try:
        if why_no_history():
            return [f"not stamped: {why_no_history()}"]
        done = set(written)
        whole = [e for e in load() if e.paths and set(e.paths) <= done]
        return stamp([e.paths[0] for e in whole]) if whole else []
    except (ValueError, NoHistory, OSError) as exc:
        return [f"not stamped: {exc}"]


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False
        )
    except OSError as exc:
        raise NoHistory(f"git cannot run here ({exc})") from None


@cache
def why_no_history() -> str:
    """Why staleness cannot be judged here, or ``""`` when it can."""
    try:
        r = _git("rev-parse", "--is-inside-work-tree")
    except NoHistory as exc:
        return str(exc)
    if r.returncode or r.stdout.strip() != "true":
        return "not a git checkout (no history to compare the sources with)"
    return ""


@cache
def shallow() -> bool:
    return _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"


@cache
def resolve(commit: str) -> str | None:
    """The full hash of ``commit``, or ``None`` when this history does not hold it."""
    r = _git("rev-parse", "--verify", "-q", f"{commit}^{{commit}}")
    return r.stdout.strip() if r.returncode == 0 else None


@cache
def _code(text: str) -> str | None:
    """A Python file's syntax tree without docstrings (``None`` if it does not parse)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


_batch: list[subprocess.Popen[bytes]] = []


@cache
def _old(commit: str, path: str) -> str | None:
    """``path`` as it was at ``commit`` (``None`` if absent), from one ``git cat-file
    --batch`` process kept for the whole run (a process per file is slow on a busy machine)."""
    if not _batch:
        _batch.append(
            subprocess.Popen(
                ["git", "-C", str(ROOT), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        )
    proc = _batch[0]
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"{commit}:{path}\n".encode())
    proc.stdin.flush()
    header = proc.stdout.readline().decode().split()
    if len(header) != 3:  # "<object> missing"
        return None
    data = proc.stdout.read(int(header[2]))
    proc.stdout.read(1)  # the newline after the contents
    return data.decode(errors="replace")


@cache
def _diff(commit: str) -> dict[str, str]:
    """Every tracked file that differs between ``commit`` and the working tree: its status
    letter (``A``, ``D``, ``M``, ...), renames split into a deletion and an addition."""
    r = _git("diff", "--no-renames", "--name-status", commit)
    if r.returncode:
        raise RuntimeError(f"git diff {commit}: {r.stderr.strip()}")
    return {path: st[0] for st, path in (line.split("\t", 1) for line in r.stdout.splitlines())}


@cache
def _tree(commit: str) -> frozenset[str]:
    return frozenset(_git("ls-tree", "-r", "--name-only", commit).stdout.splitlines())


def _under(path: str, source: str) -> bool:
    return path == source or path.startswith(source.rstrip("/") + "/")


@cache
def _code_changed(commit: str, path: str) -> bool:
    """Whether ``path`` (modified since ``commit``) changed beyond docstrings, comments and
    formatting (Python files) or at all (other files)."""
    if not path.endswith(".py"):
        return True
    before = _old(commit, path)
    now = (ROOT / path).read_text() if (ROOT / path).is_file() else None
    if before is None or now is None:
        return True
    if before == now:
        return False
    a, b = _code(before), _code(now)
    return a is None or a != b


def changed(commit: str, sources: list[str], first: bool = False) -> list[str]:
    """The sources (files) whose code differs between ``commit`` and the working tree:
    ``"path (added)"``, ``"(deleted)"``, ``"(changed)"``; a source path that exists in
    neither is reported as ``"path (missing)"``. ``first``: stop at the first one."""
    out = []
    diff = _diff(commit)
    tree = _tree(commit)
    for s in sources:
        if not (ROOT / s).exists() and not any(_under(p, s) for p in tree):
            out.append(f"{s} (missing)")
    for path, st in sorted(diff.items()):
        if not any(_under(path, s) for s in sources):
            continue
        if st == "A":
            out.append(f"{path} (added)")
        elif st == "D":
            out.append(f"{path} (deleted)")
        elif _code_changed(commit, path):
            out.append(f"{path} (changed)")
        if first and out:
            break
    return out


@dataclass
class Status:
    entry: Entry
    state: str  # "fresh", "stale", "historical", "unknown"
    changed: list[str]
    why: str = ""


def status(e: Entry, first: bool = False) -> Status:
    """Whether ``e``'s sources changed since its commit (see the module docstring);
    ``first``: name only the first changed source (enough to call it stale)."""
    if e.historical:
        return Status(e, "historical", [], e.historical)
    full = resolve(e.commit)
    if full is None:
        why = f"commit {e.commit} is not in this history"
        return Status(e, "unknown", [], why + (" (a shallow clone)" if shallow() else ""))
    diff = changed(full, e.sources, first)
    return Status(e, "stale" if diff else "fresh", diff)


def stamp(paths: list[str], manifest: Path | None = None) -> list[str]:
    """Set the commit of the entries covering ``paths`` (files or folders, relative to the
    repository) to HEAD and drop their ``stale`` marks; the entries' lines. Refuses (a
    ``ValueError``) when an entry's sources have uncommitted changes."""
    manifest = manifest or MANIFEST
    head = _git("rev-parse", "--short=12", "HEAD").stdout.strip()
    if not head:
        raise NoHistory("no HEAD commit to stamp")
    entries = load(manifest)
    chosen = []
    for p in paths:
        p = Path(p).resolve().relative_to(ROOT).as_posix() if Path(p).exists() else p
        hit = [
            e for e in entries if any(x == p or x.startswith(p.rstrip("/") + "/") for x in e.paths)
        ]
        if not hit:
            raise ValueError(f"{p}: no entry of {manifest.name} covers it")
        chosen += [e for e in hit if e not in chosen]
    _diff.cache_clear()  # the working tree may have changed since it was last read
    _code_changed.cache_clear()
    for e in chosen:
        dirty = changed(head, e.sources)
        if dirty:
            raise ValueError(
                f"{', '.join(e.paths)}: sources not committed ({'; '.join(dirty)}): "
                "commit them, rerun, then stamp"
            )
    lines = manifest.read_text().splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.strip() == "[[result]]"]
    for e in chosen:
        i = e.line - 1
        end = min((s for s in starts if s > i), default=len(lines))
        for j in range(i, end):
            if re.match(r"\s*commit\s*=", lines[j]):
                lines[j] = f'commit = "{head}"\n'
            elif re.match(r"\s*stale\s*=", lines[j]):
                lines[j] = ""
    manifest.write_text("".join(lines))
    return [f"{', '.join(e.paths)}: measured on {head}" for e in chosen]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reruns", action="store_true", help="print the commands for stale files")
    ap.add_argument("--stamp", nargs="+", metavar="PATH", help="measured on HEAD, after a rerun")
    args = ap.parse_args(argv)
    if args.stamp:
        try:
            for line in stamp(args.stamp):
                print(line)
        except (ValueError, NoHistory) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    why = why_no_history()
    if why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    rows = [status(e) for e in load()]
    if args.reruns:
        todo = [r for r in rows if r.state == "stale" or (r.entry.stale and r.state != "fresh")]
        for r in todo:
            print(f"# {', '.join(r.entry.files)} ({r.entry.estimate})")
            print(r.entry.rerun)
        print(f"# {len(todo)} rerun(s)")
        return 0
    for r in rows:
        mark = r.state + (" (listed)" if r.entry.stale and r.state == "stale" else "")
        print(f"{mark:16} {', '.join(r.entry.files)}  [{r.entry.commit}]")
        for c in r.changed[:6]:
            print(f"{'':16}   {c}")
        if len(r.changed) > 6:
            print(f"{'':16}   ... {len(r.changed) - 6} more")
        if r.why:
            print(f"{'':16}   {r.why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
