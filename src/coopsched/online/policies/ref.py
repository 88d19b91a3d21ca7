"""The online policy ``ref``: REF, the exact Shapley-fair schedule (Skowron & Rzadca,
Fig. 1 with Fig. 3; Sec. 3-4).

The algorithm lives in the package :mod:`coopsched.online.ref` (driver, compiled kernel,
generic path); this module only adapts it to the :class:`~coopsched.online.engine.Policy`
interface. :func:`ref_schedule` is re-exported here for code that imported it from this
module.
"""

from __future__ import annotations

from ...workloads.instance import Instance
from ..engine import Policy
from ..ref import ref_schedule
from ..schedule import Schedule
from ._registry import register

__all__ = ["Ref", "ref_schedule"]


@register
class Ref(Policy):
    """REF (Fig. 1 + Fig. 3): the exact Shapley-fair schedule; exponential in k."""

    name = "ref"
    rank = 0

    def __init__(self, utility: str = "psi_sp", rule: str | None = None, seed: int = 0) -> None:
        super().__init__(seed)
        self.utility = utility
        self.rule = rule

    def build(
        self, instance: Instance, horizon: int | None, *, backfill: str | None, engine: str
    ) -> Schedule:
        """REF's schedule; ``engine="python"`` runs no numba (sequential jobs: the kernel on
        Python integers; rigid jobs: coalition by coalition in the Python engine),
        ``"compiled"`` refuses the Python-integer kernel, ``"auto"`` chooses."""
        if instance.rigid:
            if self.utility != "psi_sp" or self.rule not in (None, "fig3"):
                raise ValueError(
                    "REF for rigid jobs implements psi_sp with Fig. 3's rule (utility="
                    f"{self.utility!r}, rule={self.rule!r} are for sequential jobs)"
                )
            from ..ref.rigid import ref_rigid_schedule

            s, _ = ref_rigid_schedule(instance, horizon, backfill, engine=engine)
            return s
        python = {"python": True, "compiled": False}.get(engine)
        s, _ = ref_schedule(
            instance, horizon, utility=self.utility, rule=self.rule, exact_python=python
        )
        return s
