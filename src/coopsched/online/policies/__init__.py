"""Online policies, all behind the one :class:`~coopsched.online.engine.Policy` interface.

The registry lives in :mod:`._registry`; every module of this package is discovered, so a
new policy is one new file (``docs/policies.md``).

>>> from coopsched.online.policies import get_policy
>>> get_policy("fairshare")
FairShare(seed=0)
"""

from __future__ import annotations

from ..engine import Policy
from ._registry import (
    ENTRY_POINT_GROUP,
    POLICIES,
    available,
    get_policy,
    names,
    normalize,
    parse_params,
    policies_report,
    policy_class,
    register,
    unregister,
)
from .baselines import Fifo, RoundRobin
from .directcontr import DirectContr
from .fairshare import CurrFairShare, FairShare, UtFairShare
from .rand import Rand
from .ref import Ref

__all__ = [
    "ENTRY_POINT_GROUP",
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
    "available",
    "get_policy",
    "names",
    "normalize",
    "parse_params",
    "policies_report",
    "policy_class",
    "register",
    "unregister",
]
