"""Module-level task functions for the sweep tests (picklable by worker processes)."""

import os
from pathlib import Path


def square(task: dict) -> dict:
    marks = Path(task["dir"])
    (marks / f"{task['x']}-{os.getpid()}-{os.urandom(4).hex()}").touch()  # count executions
    if task.get("fail_at") == task["x"]:
        raise RuntimeError("boom")
    return {"y": task["x"] ** 2}


def rand_on_example(task: dict) -> dict:
    """RAND on docs/example.json: compiles a small numba kernel on a fresh cache."""
    from coopsched.online.policies import Rand
    from coopsched.workloads.load import load_instance

    inst = load_instance(Path(__file__).resolve().parents[1] / "docs" / "example.json")
    sched = Rand(seed=task["seed"]).run(inst, inst.meta.get("horizon"))
    return {"start": sched.start.tolist(), "pid": os.getpid()}
