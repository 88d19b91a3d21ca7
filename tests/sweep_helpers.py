"""Module-level task functions for the sweep tests (picklable by worker processes)."""

import os
from pathlib import Path


def square(task: dict) -> dict:
    marks = Path(task["dir"])
    (marks / f"{task['x']}-{os.getpid()}-{os.urandom(4).hex()}").touch()  # count executions
    if task.get("fail_at") == task["x"]:
        raise RuntimeError("boom")
    return {"y": task["x"] ** 2}
