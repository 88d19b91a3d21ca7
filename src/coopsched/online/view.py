"""What a policy sees (:class:`SimView`) and the error of a wrong pick (:class:`PolicyError`).

The event loops (:mod:`coopsched.online.core`) keep a :class:`SimView` up to date and hand it
to the policy at every pick; the contract is documented in ``docs/policies.md``. This module
imports no engine, so that the contract (:mod:`coopsched.online.engine`) and the loops can both
import it.
"""

from __future__ import annotations

import numpy as np


class PolicyError(RuntimeError):
    """A policy returned an organization that has no waiting job."""


class SimView:
    """What a policy may look at, at the current time ``t``.

    Attributes are read-only by contract: ``t``, ``k``, ``members`` (organization
    indices taking part), ``machines[u]``, ``total_machines``, ``waiting[u]`` (jobs
    released and not started; for rigid jobs, those the policy may pick in this step, see
    :mod:`coopsched.online.rigid`), ``queued[u]`` (all released and not started),
    ``running[u]`` (jobs running; for rigid jobs, processors in use), ``order`` (the
    members in the instance's canonical order, :meth:`Instance.canonical_order`),
    ``rigid``, ``free`` (machines free now). Methods give ``psi_sp`` and processed
    work at ``t`` from elapsed times only (Skowron & Rzadca, Sec. 2), and the release
    order and release time of queue heads. Nothing here reveals the size of a job that
    has not completed (non-clairvoyance, Sec. 2; ``docs/policies.md``).
    """

    __slots__ = (
        "t",
        "k",
        "members",
        "machines",
        "total_machines",
        "waiting",
        "running",
        "_psi",
        "_work",
        "_tl",
        "_head_pos",
        "_rank_pos",
        "_rel",
        "_machine_owner",
        "order",
        "rigid",
        "queued",
        "_nfree",
        "_width",
        "_req",
        "_qw",
    )

    def __init__(
        self, k: int, members: tuple[int, ...], machines: list[int], machine_owner: list[int]
    ):
        self.t = 0
        self.k = k
        self.members = members
        self.machines = machines
        self.total_machines = sum(machines[u] for u in members)
        self.waiting = [0] * k
        self.running = [0] * k
        self._psi = [0] * k
        self._work = [0] * k
        self._tl = [0] * k
        self._head_pos: list[int] = [0] * k
        self._rank_pos: list[int] = self._head_pos
        self._rel: list[int] = []
        self._machine_owner = machine_owner
        self.order: tuple[int, ...] = tuple(members)
        self.rigid = False
        self.queued = self.waiting  # rigid jobs: the true counts (waiting may hide some)
        self._nfree = 0
        self._width: list[int] = []
        self._req: list[int] = []
        self._qw = 0

    @property
    def free(self) -> int:
        """Number of free machines right now."""
        return self._nfree

    def queued_processors(self) -> int:
        """Processors of all the queued jobs together (their number for sequential jobs):
        when :attr:`free` reaches it, every queued job starts now whatever the picks."""
        return self._qw

    def head_processors(self, u: int) -> int:
        """Processors of ``u``'s oldest waiting job (1 for sequential jobs); known at
        submission, so not clairvoyant."""
        return self._width[self._head_pos[u]] if self.rigid and self.queued[u] else 1

    def head_requested(self, u: int) -> int | None:
        """Requested time (walltime) of ``u``'s oldest waiting job, ``None`` if unknown."""
        if not self.rigid or not self.queued[u]:
            return None
        r = self._req[self._head_pos[u]]
        return r if r >= 1 else None

    def psi(self, u: int) -> int:
        """``psi_sp`` of organization ``u`` at the current time (exact integer)."""
        d = self.t - self._tl[u]
        return self._psi[u] + self._work[u] * d + self.running[u] * (d * (d + 1) // 2)

    def work(self, u: int) -> int:
        """Unit parts of ``u``'s jobs processed before the current time."""
        return self._work[u] + self.running[u] * (self.t - self._tl[u])

    def head_position(self, u: int) -> int:
        """Global submission rank of ``u``'s oldest waiting job (smaller = older)."""
        return self._head_pos[u]

    def rank_position(self, u: int) -> int:
        """Global submission rank of ``u``'s oldest waiting job *as the picks at the current
        time began* (smaller = older): the tie order, fixed for the whole event time, so a
        tied winner keeps receiving machines at ``t`` as in REF (docs/conventions.md, "Ties
        and anonymity")."""
        return self._rank_pos[u]

    def head_release(self, u: int) -> int | None:
        """Release time of ``u``'s oldest waiting job (``None`` when ``u`` has none)."""
        return self._rel[self._head_pos[u]] if self.waiting[u] else None

    def machine_owner(self, m: int) -> int:
        """The organization that contributes machine ``m``."""
        return self._machine_owner[m]

    def candidates(self) -> list[int]:
        """Organizations with a waiting job, in the tie order of the current time: oldest
        queue head first, the heads taken as the picks at ``t`` began
        (:meth:`rank_position`). A policy that keeps the first of equally good candidates
        thus breaks ties by that order, never by organization names or indices, and keeps
        one ranking for the whole event time (docs/conventions.md, "Ties and anonymity")."""
        w, hp = self.waiting, self._rank_pos
        c = [u for u in self.members if w[u]]
        if len(c) > 1:
            c.sort(key=hp.__getitem__)
        return c


def as_index(policy: object, u: object, t: int) -> int:
    """A pick that is not a plain int: a numpy integer is accepted, anything else (a bool,
    a float, ``None``) is a :class:`PolicyError` naming the policy, the value and ``t``."""
    if isinstance(u, np.integer):
        return int(u)
    raise PolicyError(f"{policy!r}.select returned {u!r} at t={t}: not an organization index")
