"""The catalogue of built-in studies: importing this module registers every one of them
(:func:`coopsched.experiments.study.register_study`), so that :func:`get_study` and
:func:`run_study` find them by name. The studies import :mod:`.study`, never this module, so
the experiments import no circle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from . import (  # noqa: F401 (each module registers its studies)
    game_grid,
    migration_study,
    mosp_grid,
    poa,
    production,
    reproduce,
    rigid_study,
    sensitivity,
)
from .study import STUDIES, Study


def get_study(name: str) -> type[Study]:
    """A study class by name (the built-in ones and any registered since)."""
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; choose from {', '.join(sorted(STUDIES))}")
    return STUDIES[name]


def run_study(
    name: str,
    out: str | Path,
    *,
    quick: bool = False,
    seed: int = 0,
    workers: int | None = None,
    scheduler: Any = None,
    quiet: bool = False,
    **options: Any,
) -> tuple[pd.DataFrame, str]:
    """Configure and run the study ``name`` (see :data:`STUDIES`) into ``out``."""
    study = get_study(name)(quick=quick, seed=seed, **options)
    return study.run(out, workers=workers, scheduler=scheduler, quiet=quiet)
