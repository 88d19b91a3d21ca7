"""REF, the exact Shapley-fair algorithm of Skowron & Rzadca (Fig. 1 with Fig. 3's
``psi_sp``, Sec. 3-4), as one package:

* :mod:`.driver`: :func:`ref_schedule`, which checks the exact-arithmetic bounds
  (:func:`plan_arithmetic`), lays out the kernel's state and reads its results; the
  algorithm, its data structures and its bounds are documented there;
* :mod:`.kernel`: the compiled kernel (numba), imported on the first call only, so that
  importing this package does not import numba; on Python integers the same kernel runs
  as plain Python;
* :mod:`.generic`: REF by Fig. 1 as written, with the generic ``Distance`` rule, for an
  arbitrary utility (exact ``Fraction`` arithmetic, plain Python; for small instances);
* :mod:`.rigid`: REF for rigid parallel jobs under a backfilling rule
  (:func:`~coopsched.online.ref.rigid.ref_rigid_schedule`; imported on use): every
  coalition in lockstep in the compiled kernel of :mod:`.rigid_kernel` (ranked from the
  float potential or Eq. (1), as the sequential kernel ranks), or coalition by coalition
  from the definition (the reference of the tests, and the fallback).

The online policy ``ref`` (:class:`coopsched.online.policies.Ref`) runs :func:`ref_schedule`.
"""

from __future__ import annotations

from .driver import (
    canonical_coalitions,
    float_potential_error,
    job_runs,
    plan_arithmetic,
    ref_schedule,
    twin_classes,
)
from .generic import (
    JOB_VALUES,
    distance,
    flow_time_value,
    generic_ref,
    psi_sp_value,
    tardiness_value,
    work_value,
)

__all__ = [
    "JOB_VALUES",
    "canonical_coalitions",
    "distance",
    "float_potential_error",
    "flow_time_value",
    "generic_ref",
    "job_runs",
    "plan_arithmetic",
    "psi_sp_value",
    "ref_schedule",
    "tardiness_value",
    "twin_classes",
    "work_value",
]
