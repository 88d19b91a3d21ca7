"""SLURM-FAIRTREE: Slurm's Fair Tree fair-share ranking (Slurm's default since 19.05).

Source: Slurm documentation, "Fair Tree Fairshare Algorithm" (fair_tree.html: Level
Fairshare Calculation, Ties) and "Multifactor Priority Plugin" (``PriorityDecayHalfLife``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...workloads.instance import Instance
from ..decay import DecayedUsagePolicyMixin, check_half_life, check_weights
from ..engine import Policy, SimView
from .slurm_classic import SLURM_DEFAULT_HALF_LIFE


def parse_accounts(accounts: Sequence[Sequence[int]] | str | None) -> tuple[tuple[int, ...], ...]:
    """``"0,1;2,3,4"`` or ``[[0, 1], [2, 3, 4]]``: organizations grouped into accounts."""
    if accounts is None:
        return ()
    if isinstance(accounts, str):
        try:
            groups = [
                tuple(int(x) for x in part.split(",") if x.strip())
                for part in accounts.split(";")
                if part.strip()
            ]
        except ValueError:
            raise ValueError(
                f"accounts takes groups of organization indices like '0,1;2,3,4', got {accounts!r}"
            ) from None
    else:
        groups = [tuple(int(x) for x in g) for g in accounts]
    return tuple(g for g in groups if g)


class SlurmFairTree(DecayedUsagePolicyMixin, Policy):
    """SLURM-FAIRTREE: organizations ranked by Fair Tree's Level Fairshare, highest first.

    Formula (Slurm's Fair Tree page, in our words): at each level of the association
    tree, every node gets ``LevelFS = S / U``, with ``S`` its shares divided by the
    shares of its siblings and itself, and ``U`` its decayed usage divided by the
    decayed usage of its siblings and itself; ``LevelFS`` is infinite without usage.
    The tree is walked depth first, visiting siblings by decreasing ``LevelFS``; users
    are ranked in the order they are reached, so every user of an account that beats
    its sibling account ranks above every user of that sibling. Usage decays with the
    half-life ``PriorityDecayHalfLife`` (``half_life``, default 7 days).

    Our model: organizations are the users. Without ``accounts`` they hang flat under
    the root; ``accounts`` (e.g. ``"0,1;2,3,4"`` or ``[[0, 1], [2, 3, 4]]``) groups them
    into a two-level tree (without it, an instance's ``meta["accounts"]``, e.g. from a
    JSON instance file, gives the tree), with an account's shares and usage the sums of its members'
    (organizations not listed form one-member accounts). Shares are the machines
    contributed (``shares`` overrides them); usage is processed work decayed exactly
    between events (:mod:`coopsched.online.decay`). The waiting organization reached
    first starts a job. Equal ``LevelFS`` (Fair Tree allows ties) is broken, at both
    levels, by the oldest waiting job (of the account, then of the organization), so that
    no decision depends on names or indices.

    On flat organizations this ranking is the classic factor's (``U/S`` ascending), so
    SLURM-FAIRTREE and SLURM-CLASSIC build the same schedules except when an
    organization without shares and without usage waits: Fair Tree gives it an
    infinite ``LevelFS`` like every organization without usage, classic gives it
    ``F = 0``. The two differ for real on a tree.

    Left out: the other multifactor terms and weights, ``PriorityCalcPeriod``,
    ``PriorityUsageResetPeriod``, trees deeper than two levels, the mapping of rank to
    the ``(0, 1]`` fairshare factor (only the order matters here).
    """

    name = "slurm-fairtree"

    def __init__(
        self,
        half_life: float = SLURM_DEFAULT_HALF_LIFE,
        shares: Sequence[float] | None = None,
        accounts: Sequence[Sequence[int]] | str | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        self.half_life = check_half_life(half_life)
        self.shares = None if shares is None else tuple(shares)
        self.accounts = parse_accounts(accounts)
        self._tree: tuple[tuple[int, ...], ...] = self.accounts

    def prepare(self, instance: Instance, horizon: int | None = None) -> None:
        """Without ``accounts``, the instance's ``meta["accounts"]`` is the tree."""
        given = instance.meta.get("accounts")
        self._tree = self.accounts or (parse_accounts(given) if given else ())

    def reset(self, view: SimView) -> None:
        self._reset_usage(view)
        shares = check_weights(self.shares, view.k, "shares")
        self._share = shares if shares is not None else [float(m) for m in view.machines]
        seen: set[int] = set()
        groups = []
        for g in self._tree:
            for u in g:
                if not 0 <= u < view.k or u in seen:
                    raise ValueError(
                        f"accounts: organization {u} is out of range 0..{view.k - 1} "
                        "or listed twice"
                    )
                seen.add(u)
            groups.append(tuple(sorted(g)))
        groups += [(u,) for u in range(view.k) if u not in seen]
        members = set(view.members)
        groups = [tuple(u for u in g if u in members) for g in groups]
        self._groups = [g for g in groups if g]

    @staticmethod
    def _less(u_use: float, u_sh: float, v_use: float, v_sh: float) -> bool:
        """Is ``LevelFS = share/usage`` of the first node strictly larger?"""
        if u_use == 0 or v_use == 0:  # LevelFS infinite without usage
            return u_use == 0 and v_use != 0
        return u_sh * v_use > v_sh * u_use

    def level_fs(self, view: SimView, u: int) -> float:
        """Fair Tree's ``LevelFS`` of organization ``u`` among its siblings (the members
        of its account, or every organization when flat) at ``view.t``."""
        self._usage.advance(view.t)
        lvl = self._usage.level
        sib = next(g for g in self._groups if u in g) if self._tree else view.members
        s_tot = sum(self._share[v] for v in sib)
        u_tot = sum(lvl[v] for v in sib)
        if lvl[u] == 0:
            return float("inf")
        if s_tot == 0:
            return 0.0
        return (self._share[u] / s_tot) / (lvl[u] / u_tot)

    def select(self, view: SimView) -> int:
        self._usage.advance(view.t)
        lvl, share, waiting = self._usage.level, self._share, view.waiting
        less = self._less
        if self._tree:  # two levels: the best account with a waiting member first
            best_g, gu, gs = None, 0.0, 0.0
            hp = view.rank_position
            # accounts with a waiting member, the one with the oldest waiting job first, so
            # that ties (at both levels) go to the oldest waiting job, never to an index
            live = [g for g in self._groups if any(waiting[u] for u in g)]
            live.sort(key=lambda g: min(hp(u) for u in g if waiting[u]))
            for g in live:
                use, sh = sum(lvl[u] for u in g), sum(share[u] for u in g)
                if best_g is None or less(use, sh, gu, gs):
                    best_g, gu, gs = g, use, sh
            # the engine selects only while a member waits, and the groups cover every member
            assert best_g is not None
            cands = sorted((u for u in best_g if waiting[u]), key=hp)
        else:
            cands = view.candidates()
        best = cands[0]
        for u in cands[1:]:
            if less(lvl[u], share[u], lvl[best], share[best]):
                best = u
        return best
