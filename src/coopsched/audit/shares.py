"""Organizations whose contributions are Slurm's own shares (``shares=``, ``--shares FILE``).

With ``org_by="account"`` and an account tree read by
:func:`coopsched.workloads.slurm_assoc.read_account_tree` (``sacctmgr show assoc -P`` or
``sshare -a -l -P``), every account holding shares is an organization, and the platform's
machines are split in proportion to each account's own normalized share
(:meth:`AccountTree.own_shares`: Slurm's fairshare normalization) by the largest remainder
(:func:`.organizations.contribution`, ties to the account whose first job in the window came
first). The rules an operator can expect (``docs/audit.md``, "Contributions from Slurm's
shares"):

* an account of the tree that has shares but no job in the window still contributed its
  machines: it is an organization with its machines and no jobs (a condo owner who lent its
  nodes); an account with neither jobs nor machines after the split is left out and counted;
* a job charged to an account the tree lacks is an error naming the job, its line and the
  account (the tree is from another cluster or out of date), unless ``other=`` gathers such
  jobs in one organization, which holds no shares and contributes no machines.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..workloads.slurm_assoc import AccountTree, read_account_tree
from .organizations import MappingError, Organizations, assign_unmatched


def integer_weights(shares: list) -> list[int]:
    """Fractions as integers in the same proportions (times the common denominator)."""
    den = math.lcm(*(s.denominator for s in shares)) if shares else 1
    return [int(s * den) for s in shares]


def by_shares(
    jobs: pd.DataFrame,
    path: str | Path,
    other: str | None,
    log_path: str,
    weight: np.ndarray | None = None,
) -> Organizations:
    """Organizations = the tree's accounts with own shares, plus every account with jobs.
    ``weight``: how many log records each row stands for (a log read for one window)."""
    tree = read_account_tree(path)
    own = tree.own_shares()
    if not any(own.values()):
        raise MappingError(f"{path}: no user association holds shares: nothing to split by")
    col = jobs["account"].astype(str)
    if len(col) and (col == "").all():
        raise MappingError(f"{log_path}: the log has no 'account' column (needed by shares=)")
    names = [a for a in tree.accounts if own[a] > 0 or (col == a).any()]
    pos = {n: i for i, n in enumerate(names)}
    index = col.map(pos).fillna(-1).to_numpy(np.int64)
    miss = np.flatnonzero(index < 0)
    if miss.size and other is None:
        j = jobs.iloc[miss[0]]
        count = int(miss.size if weight is None else weight[miss].sum())
        raise MappingError(
            f"{log_path}:{j['line']}: field Account: job {j['job']} is charged to account "
            f"{j['account']!r}, which the account tree {path} lacks ({count} such job(s)); "
            "export the tree from the same cluster, or give other= to gather them in one "
            "organization without shares"
        )
    orgs = Organizations(
        names,
        index,
        None,
        f"shares {path}",
        shares=integer_weights([own[a] for a in names]),
        shares_rule=rule_text(tree),
    )
    assign_unmatched(orgs, jobs, other, weight)
    assert orgs.shares is not None
    orgs.shares.extend([0] * (len(orgs.names) - len(orgs.shares)))  # other: no shares
    return orgs


def rule_text(tree: AccountTree) -> str:
    """The contribution rule, as every output states it."""
    return (
        f"shares: machines split by each account's normalized Slurm share ({tree.source} "
        f"{tree.path}), largest remainder; accounts with shares and no jobs keep their machines"
    )
