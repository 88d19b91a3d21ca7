from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))

from coopsched.workloads.instance import make_instance  # noqa: E402

# Local runs draw fresh random examples (they keep finding new cases); CI runs the same
# derandomized examples every time, so a landing never depends on luck.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _traces_folder() -> Path:
    """The Parallel Workloads Archive logs the tests read: ``$COOPSCHED_TEST_TRACES``,
    else the first folder of ``$COOPSCHED_TRACES`` (as the package looks there first),
    else the nearest ``shared/traces`` above this checkout (``../shared/traces`` from the main checkout;
    also found from a worktree nested one level deeper)."""
    env = (
        os.environ.get("COOPSCHED_TEST_TRACES")
        or os.environ.get("COOPSCHED_TRACES", "").split(os.pathsep)[0]
    )
    if env:
        return Path(env)
    here = Path(__file__).resolve()
    for parent in here.parents[1:]:
        if (parent / "shared" / "traces").is_dir():
            return parent / "shared" / "traces"
    return here.parents[2] / "shared" / "traces"


TRACES = _traces_folder()


def trace_path(name: str) -> Path:
    """A log of :data:`TRACES` by file or archive name, found by the package's own locator
    (never downloaded); the test is skipped when the log is absent."""
    from coopsched.workloads.archive import ArchiveError
    from coopsched.workloads.archive import trace_path as locate

    try:
        return locate(name, folder=TRACES)
    except ArchiveError as exc:
        pytest.skip(f"trace {name} not available: {exc}")


@st.composite
def small_instances(
    draw,
    max_k: int = 4,
    max_jobs: int = 14,
    max_release: int = 12,
    max_size: int = 8,
    unit: bool = False,
):
    k = draw(st.integers(1, max_k))
    machines = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
    if sum(machines) == 0:
        machines[0] = 1
    n = draw(st.integers(0, max_jobs))
    jobs = [
        (
            draw(st.integers(0, k - 1)),
            draw(st.integers(0, max_release)),
            1 if unit else draw(st.integers(1, max_size)),
        )
        for _ in range(n)
    ]
    return make_instance(machines, jobs)


def fifo_recorded(k: int, n: int, seed: int):
    """A recorded log for the audit: ``n`` seeded jobs (releases below 30, sizes 1 to 8) of
    ``k`` organizations owning 1 or 2 machines each, started as FIFO starts them by 60."""
    from coopsched.online.policies import get_policy

    rng = np.random.default_rng(seed)
    jobs = [
        (int(rng.integers(0, k)), int(rng.integers(0, 30)), int(rng.integers(1, 9)))
        for _ in range(n)
    ]
    inst = make_instance([1 + u % 2 for u in range(k)], jobs)
    return dataclasses.replace(inst, start=get_policy("fifo").run(inst, 60).start)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
