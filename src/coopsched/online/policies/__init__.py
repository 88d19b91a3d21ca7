"""Online policies, all behind the one :class:`~coopsched.online.engine.Policy` interface.

>>> from coopsched.online.policies import get_policy
>>> get_policy("fairshare")
FairShare(seed=0)
"""

from __future__ import annotations

from ..engine import Policy
from .baselines import Fifo, RoundRobin
from .directcontr import DirectContr
from .fairshare import CurrFairShare, FairShare, UtFairShare
from .htcondor import HTCondor
from .maui import Maui
from .rand import Rand
from .ref import Ref
from .slurm_classic import SlurmClassic
from .slurm_fairtree import SlurmFairTree

POLICIES: dict[str, type[Policy]] = {
    "fifo": Fifo,
    "roundrobin": RoundRobin,
    "fairshare": FairShare,
    "utfairshare": UtFairShare,
    "currfairshare": CurrFairShare,
    "directcontr": DirectContr,
    "ref": Ref,
    "rand": Rand,
    **{cls.name: cls for cls in (SlurmClassic, SlurmFairTree, Maui, HTCondor)},  # production
}


def register(cls: type[Policy]) -> type[Policy]:
    """Add a policy class to the registry under ``cls.name``."""
    POLICIES[cls.name] = cls
    return cls


def get_policy(name: str, **params) -> Policy:
    """A policy by name (case-insensitive), with its parameters."""
    key = name.lower().replace("-", "").replace("_", "")
    if key not in POLICIES:
        raise KeyError(f"unknown policy {name!r}; choose from {', '.join(sorted(POLICIES))}")
    return POLICIES[key](**params)


__all__ = [
    "POLICIES",
    "Policy",
    "Fifo",
    "RoundRobin",
    "FairShare",
    "UtFairShare",
    "CurrFairShare",
    "DirectContr",
    "Ref",
    "Rand",
    "SlurmClassic",
    "SlurmFairTree",
    "Maui",
    "HTCondor",
    "get_policy",
    "register",
]
