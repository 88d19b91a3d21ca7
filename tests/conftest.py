from __future__ import annotations

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

# the shared traces beside the checkout; COOPSCHED_TEST_TRACES overrides (a worktree elsewhere)
TRACES = Path(
    os.environ.get("COOPSCHED_TEST_TRACES")
    or Path(__file__).resolve().parents[2] / "shared" / "traces"
)


def trace_path(name: str) -> Path:
    p = TRACES / name
    if not p.exists():
        pytest.skip(f"trace {name} not available at {TRACES}")
    return p


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


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
