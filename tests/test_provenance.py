"""Committed results are not older than the code they measure (issue 45 item 5).

``benchmarks/provenance.toml`` names, for every results file under ``benchmarks/`` and
``docs/results/``, the sources it measures and the commit it was measured on
(``benchmarks/provenance.py`` says how a change is judged). A file whose sources changed
after that commit fails here unless the manifest marks it ``stale`` (known, to be rerun:
``python benchmarks/provenance.py --reruns`` prints the commands) or ``historical`` (a
record of an earlier commit kept on purpose). A file marked ``stale`` that is fresh fails
too, so the list only shrinks by reruns. Without git history (a source archive) the check
is skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location(
        "provenance", ROOT / "benchmarks" / "provenance.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["provenance"] = mod
    spec.loader.exec_module(mod)
    return mod


prov = _module()


def _needs_history() -> None:
    why = prov.why_no_history()
    if why:
        pytest.skip(f"staleness of committed results not checked: {why}")


def test_every_results_file_has_exactly_one_entry():
    entries = prov.load()
    covered: dict[str, list[int]] = {}
    for e in entries:
        assert e.paths, f"provenance.toml line {e.line}: {e.files} match no results file"
        assert e.sources and e.rerun and e.estimate, f"provenance.toml line {e.line}"
        for p in e.paths:
            covered.setdefault(p, []).append(e.line)
    files = prov.results_files()
    missing = [f for f in files if f not in covered]
    twice = {f: lines for f, lines in covered.items() if len(lines) > 1}
    assert not missing, f"results files without an entry in benchmarks/provenance.toml: {missing}"
    assert not twice, f"results files with more than one entry: {twice}"


def test_no_results_file_is_older_than_its_sources():
    _needs_history()
    stale, fresh_but_listed, unknown = [], [], []
    for e in prov.load():
        st = prov.status(e, first=True)
        if st.state == "unknown":
            if not prov.shallow():
                pytest.fail(f"provenance.toml line {e.line}: {st.why}")
            unknown.append(f"{e.files[0]}: {st.why}")
        elif st.state == "stale" and not e.stale:
            stale.append(
                f"{', '.join(e.files)}: {st.changed[0]} since {e.commit}; rerun: {e.rerun}"
            )
        elif st.state == "fresh" and e.stale:
            fresh_but_listed.append(f"{', '.join(e.files)} (line {e.line})")
    assert not stale, (
        "results older than their sources (rerun, or mark them stale with the reason):\n"
        + "\n".join(stale)
    )
    assert not fresh_but_listed, "marked stale but fresh: drop the mark\n" + "\n".join(
        fresh_but_listed
    )
    if unknown:
        pytest.skip("shallow clone, commits missing: " + "; ".join(unknown))


def test_historical_files_say_why():
    for e in prov.load():
        if e.historical:
            assert len(e.historical) > 20 and not e.stale, e.files


# ------------------------------------------------------------- the mechanism on a scratch repo
def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.fixture
def scratch(tmp_path):
    """A repository with a package (``src/pkg/a.py``, ``b.py``), a results file measuring
    ``src/pkg`` on the first commit, and its manifest."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "benchmarks").mkdir()
    (repo / "docs" / "results").mkdir(parents=True)
    (repo / "src" / "pkg" / "a.py").write_text('"""A."""\n\ndef f(x):\n    return x + 1\n')
    (repo / "src" / "pkg" / "b.py").write_text("def g():\n    return 2\n")
    (repo / "benchmarks" / "results-a.txt").write_text("f: 1.0 s\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first")
    head = _git(repo, "rev-parse", "--short=12", "HEAD")
    (repo / "benchmarks" / "provenance.toml").write_text(
        '[groups]\npkg = ["src/pkg"]\n\n[[result]]\n'
        'files = ["benchmarks/results-a.txt"]\nsources = ["@pkg"]\n'
        f'commit = "{head}"\nrerun = "python bench.py"\nestimate = "1 s"\n'
    )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "manifest")
    prov.reset(repo)
    yield repo
    prov.reset(ROOT)


def _state(repo: Path) -> str:
    prov.reset(repo)
    return prov.status(prov.load()[0]).state


def test_docstrings_comments_and_formatting_are_not_changes(scratch):
    a = scratch / "src" / "pkg" / "a.py"
    a.write_text(
        '"""A, documented better."""\n\n\ndef f(x):  # one more\n    return (x\n            + 1)\n'
    )
    assert _state(scratch) == "fresh"
    _git(scratch, "commit", "-qam", "docs")
    assert _state(scratch) == "fresh"


def test_a_code_change_makes_the_result_stale_committed_or_not(scratch):
    a = scratch / "src" / "pkg" / "a.py"
    a.write_text('"""A."""\n\ndef f(x):\n    return x + 2\n')
    assert _state(scratch) == "stale"  # uncommitted, in the working tree
    _git(scratch, "commit", "-qam", "code")
    st = prov.status(prov.load()[0])
    assert st.state == "stale" and st.changed == ["src/pkg/a.py (changed)"]


def test_moved_deleted_and_added_sources_are_changes(scratch):
    _git(scratch, "mv", "src/pkg/b.py", "src/pkg/c.py")
    _git(scratch, "commit", "-qm", "move")
    st = prov.status(prov.load()[0])
    assert st.changed == ["src/pkg/b.py (deleted)", "src/pkg/c.py (added)"]
    # a source named in the manifest that no longer exists anywhere
    text = (scratch / "benchmarks" / "provenance.toml").read_text()
    (scratch / "benchmarks" / "provenance.toml").write_text(text.replace("@pkg", "src/gone.py"))
    st = prov.status(prov.load()[0])
    assert st.state == "stale" and st.changed == ["src/gone.py (missing)"]


def test_stamp_records_head_and_refuses_uncommitted_sources(scratch):
    a = scratch / "src" / "pkg" / "a.py"
    a.write_text('"""A."""\n\ndef f(x):\n    return x * 2\n')
    with pytest.raises(ValueError, match="sources not committed"):
        prov.stamp(["benchmarks/results-a.txt"])
    _git(scratch, "commit", "-qam", "code")
    assert _state(scratch) == "stale"
    manifest = scratch / "benchmarks" / "provenance.toml"
    manifest.write_text(
        manifest.read_text().replace('estimate = "1 s"', 'estimate = "1 s"\nstale = "code changed"')
    )
    prov.stamp(["benchmarks/results-a.txt"])
    assert "stale =" not in manifest.read_text()
    assert f'commit = "{_git(scratch, "rev-parse", "--short=12", "HEAD")}"' in manifest.read_text()
    assert _state(scratch) == "fresh"


def test_an_unknown_commit_is_reported_not_guessed(scratch):
    manifest = scratch / "benchmarks" / "provenance.toml"
    text = manifest.read_text()
    head = _git(scratch, "rev-parse", "--short=12", "HEAD~1")
    manifest.write_text(text.replace(head, "0123456789ab"))
    st = prov.status(prov.load()[0])
    assert st.state == "unknown" and "not in this history" in st.why


def test_without_git_history_the_check_says_so(tmp_path):
    (tmp_path / "benchmarks").mkdir()
    prov.reset(tmp_path)
    try:
        assert "not a git checkout" in prov.why_no_history()
    finally:
        prov.reset(ROOT)


def test_run_all_stamps_only_entries_it_rewrote_whole(scratch):
    (scratch / "src" / "pkg" / "a.py").write_text("def f(x):\n    return x - 1\n")
    _git(scratch, "commit", "-qam", "code")
    assert prov.stamp_written(["benchmarks/results-other.txt"]) == []
    assert _state(scratch) == "stale"
    (scratch / "src" / "pkg" / "b.py").write_text("def g():\n    return 3\n")  # not committed
    assert prov.stamp_written(["benchmarks/results-a.txt"])[0].startswith("not stamped")
    _git(scratch, "commit", "-qam", "more")
    assert prov.stamp_written(["benchmarks/results-a.txt"])[0].endswith(
        _git(scratch, "rev-parse", "--short=12", "HEAD")
    )
    assert _state(scratch) == "fresh"
