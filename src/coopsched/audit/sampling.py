"""The sampled audit, for more organizations than the exact game can afford.

The game (Skowron & Rzadca, Definition 3.2, with a stated stand-in for REF): ``v(grand)`` is
the recorded total, as in the exact game; every other coalition is valued by the schedule it
builds alone under ``value_policy`` (default ``fairshare``), except that a coalition of at
most ``exact_upto`` members (default 0: none) gets its exact REF value. One game unless
``exact_upto`` is set; :func:`game_statement` says which coalitions were valued how, with the
gap measured between the stand-ins and REF (``benchmarks/game_gap.py``,
``benchmarks/results-game-gap.txt``, docs/audit.md).

The estimate (:func:`coopsched.audit.estimation.shapley_antithetic`): antithetic permutation
sampling (Eq. 2 over pairs of an order and its reverse), per-organization intervals from the
observed variance (central limit theorem: Student t with adaptive looks, Hall's
skewness-corrected t with one look), and an adaptive number of orders:
batches (20 orders, then doubling) until every organization's surplus sign is decided (its
interval excludes its ``psi``) or the budget (``samples`` orders at most, ``seconds``) is
spent. The seed fixes the orders.

The estimator (``estimator``): ``"split"`` (default) samples the game in which the grand
coalition too is valued under ``value_policy`` and adds the recorded total's difference to
that value in equal shares, ``(v(N) - v'(N)) / N`` to every organization: the same Shapley
values exactly (:func:`~coopsched.audit.estimation.unanimity_control`, a control variate with
the unanimity game of the grand coalition), at the cost of one more simulation, with a
variance per order far lower on a real month by user (measured by
``benchmarks/audit_estimators.py``, docs/audit.md); ``"plain"``: the orders sample ``v``
itself; ``"ends"``: every organization's marginal contributions at the first position
(``v({u})``) and at the last (``v(N) - v(N - u)``, with the recorded ``v(N)``) valued
exactly before the first order (``2 N`` coalitions), only the middle positions sampled
(``ends`` of :func:`~coopsched.audit.estimation.shapley_antithetic`; the values then sum to
the recorded total only within their intervals). With ``exact_upto >= N - 1`` (REF values
the coalitions of ``N - 1``) ``"split"`` falls back to ``"plain"`` (REF on the grand
coalition is what sampling avoids).

The refinement (``refine``, default on when adaptive): full orders serve every
organization at once, but the last undecided ones need many more contributions than the
others, and every order pays for all. Once few are left, the audit estimates only those,
stratified by position
(:func:`~coopsched.audit.estimation.shapley_stratified`: the first and last positions exact,
the middle ones in ``refine_bins`` runs, one coalition and its union with the organization
per run and round), keeping the orders' estimates of the decided ones. With ``allocate``
(off by default), after the refinement's first look each organization still open gets its
own number of coalitions per run (optimum allocation: more where its marginal contributions spread more and the
coalitions cost less, :func:`~coopsched.audit.estimation.optimum_allocation` with
:func:`coalition_cost`, ``REFINE_ALLOCATE`` first-look rounds' worth per round), its
later rounds alone making its estimate. The orders hand over
at a look (:func:`handoff_rule`) when ``REFINE_FIRST`` rounds of the open organizations cost
no more than the orders to their next look and fit in the time left; and after the orders'
last planned look. The
error probability ``1 - confidence`` is split in halves between the orders' looks and the
rounds' looks (a union bound: every interval the audit reports covers its organization's
value with probability at least ``confidence`` whatever stopped either phase). When the
sampling stops, ``SampledGame.settled_at`` says when each organization was settled, and
``SampledGame.projection`` what each one left open would need at its observed spread
(:func:`samples_to_settle`; the report's ``sampling.projection``). Measured:
``benchmarks/audit_sampled.py`` (``benchmarks/results-audit-sampled.txt``), docs/audit.md.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from ..online.engine import Backend, simulate
from ..online.policies import get_policy
from ..online.ref import ref_schedule
from ..online.shapley import members as coalition_members
from ..online.utilities import ValueCurve, psi_sp
from ..workloads.instance import Instance
from ..workloads.limits import MAX_ORGANIZATIONS
from .estimation import (
    AntitheticEstimate,
    StratifiedEstimate,
    position_bins,
    refine_schedule,
    shapley_antithetic,
    shapley_stratified,
    t_quantile,
    unanimity_control,
)
from .estimation.budget import Budget, keep_for
from .estimation.control import Surrogate
from .game import recorded_starts
from .progress import look, tick
from .surrogate import FitGame

#: Measured by ``benchmarks/game_gap.py`` (``benchmarks/results-game-gap.txt``): LPC-EGEE
#: windows of 5e4 s at k = 12 and 14, sequential jobs. Per policy: the largest relative gap
#: ``|v_p(C) - v_REF(C)| / v_REF(C)`` over all proper coalitions, and the largest relative
#: change of an organization's ``phi`` when every proper coalition is valued by the policy.
MEASURED_GAP: dict[str, tuple[float, float]] = {
    "fifo": (1.11e-2, 1.01e-2),
    "fairshare": (9.09e-3, 4.03e-4),
    "utfairshare": (9.09e-3, 1.22e-3),
    "currfairshare": (9.75e-3, 2.30e-3),
    "directcontr": (9.09e-3, 3.19e-3),
    "roundrobin": (1.60e-2, 1.41e-2),
}


def game_statement(k: int, value_policy: str, exact_upto: int, rigid: bool) -> dict:
    """Which coalitions the sampled audit valued how, and the measured difference to the
    game of Definition 3.2 (every proper coalition under REF): the report's
    ``sampling.game``."""
    ref_upto = min(exact_upto, k - 1)
    if ref_upto <= 0:
        proper = f"every other coalition: its schedule alone under {value_policy}"
    else:
        proper = (
            f"coalitions of 1 to {ref_upto} members: REF (exact); of {ref_upto + 1} to {k - 1} "
            f"members: their schedule alone under {value_policy}"
        )
    gap = MEASURED_GAP.get(value_policy)
    if gap is None:
        bound = f"the gap between {value_policy} and REF has not been measured"
    else:
        bound = (
            f"on LPC-EGEE windows at k = 12 and 14 (sequential jobs; "
            f"benchmarks/results-game-gap.txt), {value_policy}'s coalition values were within "
            f"{gap[0]:.1e} (relative) of REF's, and phi valued so within {gap[1]:.1e} of the "
            "REF game's" + ("; not measured for rigid jobs" if rigid else "")
        )
    one = ref_upto <= 0 or ref_upto >= k - 1
    return {
        "grand": "the recorded schedule's total",
        "proper": proper,
        "one_game": one,
        "bound": bound,
        "text": f"v(grand coalition): the recorded total; {proper}; {bound}",
    }


#: the share of ``phi`` under which :func:`samples_to_settle` counts a surplus as small
#: (the 5 % of the benchmarks and of the docs' targets)
SETTLE_SHARE = 0.05


def samples_to_settle(
    psi: np.ndarray,
    phi: np.ndarray,
    se: np.ndarray,
    draws: np.ndarray,
    level: float,
    share: float = SETTLE_SHARE,
) -> np.ndarray:
    """Per organization, the i.i.d. draws (antithetic pairs of orders, or rounds) after
    which its interval would decide the sign of its surplus or show the surplus below
    ``share`` of ``phi`` (:func:`small_surplus`), if its estimate and the spread of its
    draws stayed as observed: ``se`` is the standard error ``s / sqrt(n)`` over the
    ``draws`` done, so the spread is ``s = se * sqrt(n)``; the half-width needed, ``h``, is
    the larger of ``|psi - phi|`` (what deciding the sign needs) and the room ``phi`` leaves
    inside ``psi / (1 + share)`` to ``psi / (1 - share)``; the answer is the fewest ``m``
    with Student's ``t_{m-1} s / sqrt(m) <= h`` at ``level``, never fewer than ``draws``;
    ``inf`` where neither can be shown. A projection from one run's spread, not a promise:
    the estimate moves as draws come, Hall's interval on skewed contributions is wider than
    ``t``, and later looks are taken at a stricter level."""
    psi = np.asarray(psi, dtype=np.float64)
    phi = np.asarray(phi, dtype=np.float64)
    n = np.asarray(draws, dtype=np.float64)
    spread = np.asarray(se, dtype=np.float64) * np.sqrt(n)
    room = np.minimum(phi - psi / (1 + share), psi / (1 - share) - phi)
    h = np.maximum(np.abs(psi - phi), np.where(psi > 0, room, 0.0))
    p = 1 - (1 - level) / 2
    out = np.full(len(n), np.inf)
    for i in np.flatnonzero((h > 0) & np.isfinite(spread)):
        r = float(spread[i] / h[i])

        def fits(m: int, r: float = r) -> bool:
            return t_quantile(p, m - 1) * r <= math.sqrt(m)

        # the fewest draws that fit (t_{m-1} / sqrt(m) decreases in m): from the normal
        # quantile's answer, doubling, then bisection
        lo = max(2, math.floor((NormalDist().inv_cdf(p) * r) ** 2))
        hi = lo
        while not fits(hi):
            lo, hi = hi, 2 * hi
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if fits(mid) else (mid + 1, hi)
        out[i] = hi
    return np.maximum(out, n)


@dataclass
class Projection:
    """What settling one organization would take at its observed spread
    (:func:`samples_to_settle`): ``samples`` more of ``unit`` (``"rounds"`` of the
    refinement, which sample that organization alone, or ``"orders"``) beyond the ``done``
    ones, that is about ``coalitions`` more coalitions valued and ``seconds`` of this run's
    pace (its mean time per coalition valued)."""

    unit: str
    done: int
    samples: float
    coalitions: float
    seconds: float


@dataclass
class SampledGame:
    """Estimated ``phi`` with its interval at the horizon, and estimates at ``times``."""

    psi: list[int]
    phi: np.ndarray
    halfwidth: np.ndarray
    times: list[int]
    psi_at: list[list[int]]
    phi_at: list[np.ndarray]
    samples: int
    confidence: float
    value_policy: str
    exact_upto: int
    coalitions: int
    #: per organization: its interval excludes its ``psi`` (sign of the surplus decided)
    sign_decided: np.ndarray
    estimate: AntitheticEstimate
    max_orders: int
    seconds: float | None
    #: the budget in CPU seconds (``seconds`` is the wall-clock one)
    cpu_seconds: float | None = None
    #: the sampling's :class:`~coopsched.audit.estimation.budget.Budget`: its limits and
    #: what was spent
    budget: Budget | None = None
    #: ``"split"``, ``"ends"`` or ``"plain"`` (module doc), as used
    estimator: str = "plain"
    #: ``split``: the grand coalition's value under ``value_policy`` at each time of ``times``
    grand_policy_at: list[float] | None = None
    #: ``split``: that value at the horizon, exact (the reference of the report's
    #: ``efficiency``: what the platform lost against the stand-in's own total)
    grand_policy_total: int | None = None
    #: the refinement (module doc) of the organizations the orders left open, if it ran
    refinement: StratifiedEstimate | None = None
    #: the refinement was on (half of the error probability kept for it)
    refining: bool = False
    #: per organization, the seconds of sampling after which it was settled (sign decided,
    #: or with ``negligible`` its surplus shown below that share) and stayed so; ``nan``:
    #: not settled when the sampling stopped
    settled_at: np.ndarray | None = None
    #: wall seconds the sampling took (the orders and the refinement)
    seconds_spent: float = 0.0
    #: per organization left unsettled, what settling it would take at its observed
    #: spread (:class:`Projection`)
    projection: dict[int, Projection] | None = None
    #: the column of the horizon in the estimates' values (``estimate.phi[:, component]``)
    component: int = -1
    #: the groups of interchangeable organizations, whose estimates are their mean
    #: (:func:`interchangeable`)
    groups: list[list[int]] | None = None
    #: the control variate, as the report's ``sampling.control_variate`` says it
    #: (:func:`fit_control`); ``None``: not asked for
    control_variate: dict | None = None

    @property
    def stop(self) -> str:
        """Why the sampling stopped: the refinement's reason if it ran, else the orders'."""
        return self.estimate.stop if self.refinement is None else self.refinement.stop


#: the estimators of :func:`sampled_game` (module doc)
ESTIMATORS = ("split", "ends", "plain")


def describe_estimator(estimator: str, value_policy: str) -> str:
    """The estimator in words, for the report's ``sampling.estimator``."""
    if estimator == "split":
        return (
            "the game sampled with the grand coalition also valued under "
            f"{value_policy}; the recorded total's difference to that value added in equal "
            "shares to every organization (exact: a control variate with the unanimity game "
            "of the grand coalition)"
        )
    if estimator == "ends":
        return (
            "stratified by position: every organization's marginal contributions at the "
            "first position (its value alone) and at the last (the recorded total less the "
            "value of the others) valued exactly, the middle positions sampled"
        )
    return "the game sampled as it is (the grand coalition at the recorded total)"


def sign_decided(psi: np.ndarray, phi: np.ndarray, halfwidth: np.ndarray) -> np.ndarray:
    """Per organization: the interval ``phi +- halfwidth`` excludes ``psi``, so the sign of
    the surplus ``psi - phi`` is decided at the interval's confidence; a zero-width interval
    (every sampled contribution equal) counts as decided."""
    psi = np.asarray(psi, dtype=np.float64)
    return (psi < phi - halfwidth) | (psi > phi + halfwidth) | (halfwidth == 0)


def small_surplus(
    psi: np.ndarray, phi: np.ndarray, halfwidth: np.ndarray, share: float
) -> np.ndarray:
    """Per organization: every ``phi`` in its interval has ``|psi - phi| < share * phi``,
    i.e. the interval lies strictly inside ``(psi / (1 + share), psi / (1 - share))``
    (``psi > 0``, ``0 < share < 1``): its surplus is shown to be below ``share`` of its
    ``phi`` whatever its sign."""
    psi = np.asarray(psi, dtype=np.float64)
    lo, hi = psi / (1 + share), psi / (1 - share)
    return (psi > 0) & (phi - halfwidth > lo) & (phi + halfwidth < hi)


def interchangeable(inst: Instance) -> list[list[int]]:
    """Groups of two or more organizations that are interchangeable in every coalition:
    no job at all and the same machines (the only organizations that
    :meth:`~coopsched.workloads.instance.Instance.canonical_order` leaves tied)."""
    has_jobs = np.zeros(inst.k, dtype=bool)
    has_jobs[inst.org] = True
    by: dict[int, list[int]] = {}
    for u in range(inst.k):
        if not has_jobs[u]:
            by.setdefault(int(inst.machines[u]), []).append(u)
    return [g for g in by.values() if len(g) > 1]


def symmetrize(values: np.ndarray, groups: list[list[int]], worst: bool = False) -> np.ndarray:
    """Each group's estimates replaced by their mean (their maximum if ``worst``).

    The Shapley value gives interchangeable players equal shares (symmetry axiom); the
    sampled orders place them differently, so their raw estimates differ by chance and
    would depend on the order the organizations are listed in. The mean keeps the sum."""
    out = np.array(values, dtype=np.float64)
    for g in groups:
        out[g] = out[g].max() if worst else out[g].mean()
    return out


def curve_values(inst: Instance, start: np.ndarray, grid: list[int]) -> list[int]:
    """``sum(psi_sp(t))`` over the jobs started in ``start`` at each time of ``grid``, exactly:
    one :class:`~coopsched.online.utilities.ValueCurve` (one sort of the starts and ends,
    prefix sums) instead of a pass over every job at every time; the same integers as
    ``sum(Schedule.psi(t))``."""
    curve = ValueCurve(start, inst.size, inst.processors)
    return [curve.psi(t) for t in grid]


def coalition_values(
    inst: Instance,
    horizon: int,
    grid: list[int],
    mask: int,
    value_policy: str = "fairshare",
    exact_upto: int = 0,
    backfill: str | None = None,
) -> list[int]:
    """A proper coalition's value (its total ``psi_sp``, an integer) at each time of ``grid``:
    its schedule alone under ``value_policy``, or under REF if it has at most ``exact_upto``
    members (for rigid jobs under the platform's ``backfill`` rule). Many coalitions of
    one instance: :class:`CoalitionValuer`."""
    return CoalitionValuer(inst, horizon, grid, value_policy, exact_upto, backfill)(mask)


class CoalitionValuer:
    """:func:`coalition_values` of the coalitions of one instance, through one
    :class:`~coopsched.online.engine.Backend` (the engines' door, which keeps the instance's
    compiled inputs and the backfilling rule between coalitions). An audit values at least
    about ``2 k`` coalitions of ``n / 2`` jobs each on average (every player's marginal
    contributions, sampled or exact), so the engine is chosen for that workload, ``n k``
    jobs, from the first coalition on: a large audit then never pays the Python loop's
    first coalitions, nor a switch of engines in the middle of its budget's measurement.
    The instance must not change meanwhile."""

    def __init__(
        self,
        inst: Instance,
        horizon: int,
        grid: list[int],
        value_policy: str = "fairshare",
        exact_upto: int = 0,
        backfill: str | None = None,
    ) -> None:
        self.inst, self.horizon, self.grid = inst, horizon, grid
        self.exact_upto = exact_upto
        self.policy = get_policy(value_policy)
        self.backend = Backend(inst, horizon, backfill, workload=inst.n * inst.k)
        self.backfill = self.backend.rule

    def __call__(self, mask: int) -> list[int]:
        inst, horizon = self.inst, self.horizon
        members = coalition_members(mask, inst.k)
        if len(members) <= self.exact_upto:
            if inst.rigid:
                sched = simulate(inst, get_policy("ref"), horizon, members, backfill=self.backfill)
            else:
                sched, _ = ref_schedule(inst.restrict(members), horizon)
            return curve_values(sched.instance, sched.start, self.grid)
        sched = self.backend.run(self.policy, members)
        return curve_values(sched.instance, sched.start, self.grid)

    def warm(self) -> None:
        """Make the engine ready before a budget starts: value the coalition of the first
        organization through the backend (numba compiles the engine's kernels on a cold
        cache, tens of seconds; the instance's compiled inputs are built); the value is
        dropped."""
        self.backend.run(self.policy, [0])


#: a worker's valuers (:class:`CoalitionValuer`), kept between tasks: the instance a
#: cluster holds (scattered once) comes back in every task as the same object
_VALUERS: dict[tuple, tuple[weakref.ref, CoalitionValuer]] = {}


def _values_task(
    inst: Instance,
    horizon: int,
    grid: list[int],
    masks: list[int],
    value_policy: str,
    exact_upto: int,
    backfill: str | None,
) -> tuple[list[list[int]], float]:
    """:func:`coalition_values` of several coalitions (one task on a dask worker), with the
    worker's valuer of that instance, prepared by its first task; and the CPU seconds the
    task's thread spent (the sampling's budget counts the workers' CPU too)."""
    cpu = time.thread_time()
    key = (id(inst), horizon, tuple(grid), value_policy, exact_upto, backfill)
    kept = _VALUERS.get(key)
    if kept is None or kept[0]() is not inst:
        if len(_VALUERS) >= 4:
            _VALUERS.clear()
        kept = (
            weakref.ref(inst),
            CoalitionValuer(inst, horizon, grid, value_policy, exact_upto, backfill),
        )
        _VALUERS[key] = kept
    value = kept[1]
    return [value(m) for m in masks], time.thread_time() - cpu


#: the tasks of one batch per worker thread (:class:`_DaskValues`)
TASKS_PER_THREAD = 4

#: with a time budget on a cluster, the orders or rounds valued per batch are at least this
#: many coalitions (whole orders or rounds; ``batch`` of
#: :func:`~coopsched.audit.estimation.shapley_antithetic` and
#: :func:`~coopsched.audit.estimation.shapley_stratified`): one round of the refinement of
#: one organization is 16 coalitions, too few to keep the workers busy between two
#: barriers, and each task costs the scheduler a round trip
DASK_BATCH = 1024


class _DaskValues:
    """Values batches of coalitions on a dask.distributed cluster: the instance is sent to
    every worker once, and each batch is split into :data:`TASKS_PER_THREAD` tasks per
    worker thread of about equal cost (:func:`coalition_cost`), the costliest coalitions
    first (each batch ends at a barrier: the workers should finish together)."""

    def __init__(
        self, scheduler: Any, inst: Instance, args: tuple, budget: Budget | None = None
    ) -> None:
        from distributed import Client

        self.own = not isinstance(scheduler, Client)
        self.client = Client(scheduler) if self.own else scheduler
        # a key of its own (hash=False): two audits of the same instance on one cluster
        # must not share, and release, one key
        self.inst = self.client.scatter(inst, broadcast=True, hash=False)
        self.args = args
        self.cost = coalition_cost(inst)
        self.budget = budget  # told the workers' CPU seconds

    @property
    def threads(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def __call__(self, masks: list[int]) -> list[list[int]]:
        # greedy, the costliest first, each to the cheapest task so far (LPT)
        cost = {m: self.cost(m) for m in masks}
        todo = sorted(masks, key=cost.__getitem__, reverse=True)
        n_tasks = min(len(todo), TASKS_PER_THREAD * self.threads)
        chunks: list[list[int]] = [[] for _ in range(n_tasks)]
        load = [0.0] * n_tasks
        for m in todo:
            i = load.index(min(load))
            chunks[i].append(m)
            load[i] += cost[m]
        horizon, grid, *rest = self.args
        futures = [
            self.client.submit(_values_task, self.inst, horizon, grid, c, *rest, pure=False)
            for c in chunks
        ]
        got: dict[int, list[int]] = {}
        for c, (part, cpu) in zip(chunks, self.client.gather(futures), strict=True):
            got.update(zip(c, part, strict=True))
            if self.budget is not None:
                self.budget.add_cpu(cpu)
        return [got[m] for m in masks]

    def close(self) -> None:
        if self.own:
            self.client.close()


#: Progress within a look (``tick``) at most this often, in seconds.
TICK_SECONDS = 2.0

#: the refinement's first look, in rounds (:func:`handoff_rule` prices that many). Fewer
#: decide wrongly on heavy-tailed organizations: on HPC2N's user u5 (skewness of its rounds
#: about 6), Hall's interval called the wrong sign in 5.3 % of bootstrap runs with a first
#: look at 8 rounds, 2.6 % at 32 (``benchmarks/refine_tails.py``).
REFINE_FIRST = 32

#: after its first look the refinement draws, per organization left open, its own number
#: of coalitions per run of positions (optimum allocation), each of its later rounds
#: costing about this many first-look rounds (see :func:`coalition_cost`)
REFINE_ALLOCATE = 4


def coalition_cost(inst: Instance) -> Callable[[int], float]:
    """The relative cost of valuing a coalition, for the refinement's optimum allocation:
    its jobs plus one organization's mean number of jobs. A simulation's time follows the
    jobs it schedules (correlation 0.96 to 0.98 on the sampled audit's months of HPC2N,
    KTH-SP2 and RICC by user), with a fixed part measured between -3.9 and +21
    organizations' mean (``benchmarks/refine_cost.py``, docs/audit.md). Only the ratios
    between runs of positions matter, through their square roots, and a cluster's tasks
    need only be roughly even: a rough model costs little precision."""
    jobs = np.bincount(inst.org, minlength=inst.k).astype(np.float64)
    fixed = float(jobs.sum()) / max(1, inst.k)

    def cost(mask: int) -> float:
        return fixed + float(jobs[coalition_members(mask, inst.k)].sum())

    return cost


#: The control variate in words (the report's ``sampling.control_variate.method``).
CONTROL_TEXT = (
    "the game of the jobs that fit: a coalition valued by the psi_sp its members' jobs "
    "no wider than its machines would have if started at their release; its Shapley values "
    "exact (counting subsets by size and machines), its marginal contributions taken on the "
    "same coalitions and subtracted from the horizon's with a coefficient fitted per "
    "organization (the regression estimator; the interval from the residuals, n - 2 degrees "
    "of freedom); the estimates then add up to the recorded total within their intervals"
)


def fit_control(inst: Instance, horizon: int, wanted: bool) -> tuple[Surrogate | None, dict | None]:
    """The sampled audit's control variate (:mod:`.surrogate`) and the report's words on it:
    the game of the jobs that fit, for rigid jobs (with sequential ones every job fits every
    coalition with a machine: nothing to follow), with its exact Shapley values; ``None``
    and the reason when they would cost more than :data:`~.surrogate.EXACT_WORK`."""
    if not wanted:
        return None, None
    if not inst.rigid:
        return None, {"used": False, "reason": "sequential jobs: every job fits"}
    game = FitGame.of(inst, horizon)
    phi = game.shapley()
    p = int((game.machines > 0).sum())
    if phi is None:
        return None, {
            "used": False,
            "reason": f"{p:,} organizations with machines and {int(game.machines.sum()):,} "
            "machines: its exact Shapley values would cost too much",
        }
    return Surrogate(game, phi, game.prefixes), {"used": True, "method": CONTROL_TEXT}


def handoff_rule(
    k: int,
    open_: int,
    runs: int,
    pairs: int,
    next_pairs: int,
    spent: float,
    coalitions: int,
    remaining: float,
) -> bool:
    """Whether the orders hand over to the refinement at a look (module doc): ``open_``
    organizations undecided after ``pairs`` antithetic pairs, ``coalitions`` valued in
    ``spent`` seconds (the cost of one, measured), ``remaining`` seconds of budget. The
    refinement's first look costs ``open_ * 2 * runs * REFINE_FIRST`` coalitions, the
    orders' next look ``(next_pairs - pairs) * 2 * (k - 1)``. Hand over when the rounds cost
    no more than the orders and fit in the remaining time."""
    if open_ == 0 or coalitions == 0:
        return False
    each = spent / coalitions
    rounds = open_ * 2 * runs * REFINE_FIRST * each
    if rounds > remaining:
        return False
    return rounds <= (next_pairs - pairs) * 2 * (k - 1) * each


def sampled_game(
    inst: Instance,
    horizon: int,
    times: list[int],
    *,
    samples: int = 200,
    seed: int = 0,
    confidence: float = 0.95,
    value_policy: str = "fairshare",
    exact_upto: int = 0,
    adaptive: bool = True,
    seconds: float | None = None,
    cpu_seconds: float | None = None,
    first_orders: int = 20,
    interval: str = "auto",
    progress: Callable[[int], None] | None = None,
    progress_text: Callable[[str], None] | None = None,
    backfill: str | None = None,
    scheduler: Any = None,
    negligible: float = 0.0,
    estimator: str = "split",
    refine: bool = True,
    refine_bins: int = 8,
    allocate: bool = False,
    control_variate: bool = True,
) -> SampledGame:
    """Estimate ``phi`` from at most ``samples`` orders; see the module doc. ``adaptive``:
    stop once every sign is decided (else use all ``samples`` orders, one look at the nominal
    ``confidence``); ``cpu_seconds`` and ``seconds``: a budget for the sampling in CPU
    seconds (this process's and, with a ``scheduler``, its workers') and in wall-clock
    seconds (``None``: none; the first spent stops it), read before every chunk of
    coalitions (:class:`~coopsched.audit.estimation.budget.Valuation`);
    ``interval``: ``"auto"`` (``"t"`` when adaptive, ``"hall"`` otherwise), ``"t"`` (Student
    t, central limit theorem), ``"hall"`` (with Hall's skewness correction) or
    ``"bernstein"`` (empirical Bernstein), see :func:`~coopsched.audit.estimation.shapley_antithetic`. ``scheduler``: a
    dask.distributed scheduler address or ``Client``; the coalitions each round of orders
    needs are then valued on that cluster (the same orders and values, so the same estimate
    for the same seed as in one process). ``negligible`` (default 0): sampling may also stop
    when every organization whose sign is undecided is shown to have ``|psi - phi|`` below
    this share of ``phi`` (its whole interval lies in ``psi / (1 + negligible)`` to
    ``psi / (1 - negligible)``); such organizations stay reported as undecided.
    ``estimator``: ``"split"`` (default), ``"ends"`` or ``"plain"``, see the module doc.
    ``refine`` (default ``True``, only when ``adaptive``): refine the organizations the
    orders leave undecided by stratified sampling, in ``refine_bins`` runs of positions (the
    module doc). ``allocate`` (default ``False``): the refinement's optimum allocation after
    its first look (module doc; measured to help on some months and cost time on others,
    docs/audit.md). ``control_variate`` (default ``True``, rigid jobs, not with ``ends``):
    subtract the game of the jobs that fit (:mod:`.surrogate`), whose Shapley values are
    exact, with a coefficient fitted per organization (:func:`fit_control`)."""
    if not 0 <= negligible < 1:
        raise ValueError(f"negligible: {negligible}; a share in [0, 1)")
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator: {estimator!r}; choose {', '.join(ESTIMATORS)}")
    k = inst.k
    if k > MAX_ORGANIZATIONS:
        raise ValueError(
            f"{k:,} organizations: a sampled audit takes at most {MAX_ORGANIZATIONS:,} (each "
            f"antithetic pair of orders values 2 x {k - 1:,} coalitions); gather the "
            "smaller ones under one name (a mapping with other=)"
        )
    budget = Budget(cpu_seconds, seconds, threads=scheduler is not None)
    G = (1 << k) - 1
    grid = sorted(set(int(t) for t in times) | {int(horizon)})
    at = {t: i for i, t in enumerate(grid)}
    h = at[int(horizon)]
    recorded = recorded_starts(inst)
    order = inst.canonical_order().tolist()  # orders drawn over it: names do not matter
    psi_grid = [psi_sp(inst.org, recorded, inst.size, t, k, inst.processors) for t in grid]
    grand = np.array([float(sum(p)) for p in psi_grid])
    valued = [0]
    valuer = CoalitionValuer(inst, horizon, grid, value_policy, exact_upto, backfill)

    def vec(mask: int) -> np.ndarray:
        if mask == 0:
            return np.zeros(len(grid))
        if mask == G:
            return grand
        vals = valuer(mask)
        valued[0] += 1
        if progress is not None:
            progress(valued[0])
        return np.array([float(x) for x in vals])

    ref_known: dict[int, np.ndarray] = {}  # REF values of subcoalitions of REF runs

    def ref_run(mask: int) -> None:
        """One REF run of a small coalition: the values of all its subcoalitions at every
        time of the grid, from the same run (as the exact audit's one run)."""
        members = coalition_members(mask, k)
        sub = inst.restrict(members)
        if inst.rigid:
            from ..online.ref.rigid import ref_rigid_schedule

            sched, _ = ref_rigid_schedule(sub, horizon, backfill, checkpoints=grid)
        else:
            sched, _ = ref_schedule(sub, horizon, checkpoints=grid)
        rows = dict(zip(sched.info["checkpoints"], sched.info["checkpoint_values"], strict=True))
        table = [rows[t] for t in grid]
        for c in range(1, 1 << len(members)):
            g = sum(1 << u for b, u in enumerate(members) if c >> b & 1)
            ref_known[g] = np.array([float(row[c]) for row in table])

    def reuse_ref(masks: list[int]) -> list[np.ndarray]:
        """A batch valued in this process, the largest REF coalitions first: each REF run
        also values its subcoalitions, which are then not run again."""
        for m in sorted(masks, key=int.bit_count, reverse=True):
            if m not in (0, G) and m.bit_count() <= exact_upto and m not in ref_known:
                ref_run(m)
        out = []
        for m in masks:
            if m in ref_known:
                valued[0] += 1
                if progress is not None:
                    progress(valued[0])
                out.append(ref_known[m])
            else:
                out.append(vec(m))
        return out

    groups = interchangeable(inst)
    psi_h = np.array(psi_grid[h], dtype=np.float64)

    def settled(psi: np.ndarray, p: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Sign decided, or (with ``negligible``) the surplus shown below that share."""
        out = sign_decided(psi, p, w)
        if negligible > 0:
            out |= small_surplus(psi, p, w, negligible)
        return out

    clock = time.perf_counter()
    settled_at = np.full(k, np.nan)

    def mark(who: np.ndarray, out: np.ndarray) -> None:
        """Record when the organizations ``who`` were settled (``out``) and stayed so."""
        now = time.perf_counter() - clock
        was = settled_at[who]
        settled_at[who] = np.where(out, np.where(np.isnan(was), now, was), np.nan)

    def decide(phi: np.ndarray, hw: np.ndarray) -> np.ndarray:
        out = settled(psi_h, symmetrize(phi[:, h], groups), symmetrize(hw[:, h], groups, True))
        mark(np.arange(k), out)
        return out

    phase = ["orders"]
    ticked = [time.perf_counter()]

    def on_look(look_: int, orders: int, coalitions: int, undecided: int) -> None:
        if progress_text is not None:
            spent = time.perf_counter() - clock
            rate = spent / max(orders, 1)
            togo = max(0.0, min(rate * max(0, samples - orders), budget.left()))
            progress_text(
                look(
                    f"look {look_}: {orders} of at most {samples} orders, {coalitions:,} "
                    f"coalitions valued in {spent:,.0f} s ({budget.cpu():,.0f} CPU s); sign "
                    f"undecided for {undecided:,} of {k:,} organizations; about {togo:,.0f} s "
                    "to go at most"
                )
            )
        ticked[0] = time.perf_counter()

    def on_chunk(valued_: int) -> None:
        now = time.perf_counter()
        if progress_text is not None and now - ticked[0] >= TICK_SECONDS:
            ticked[0] = now
            progress_text(
                tick(
                    f"{phase[0]}: {valued_:,} coalitions valued in {now - clock:,.0f} s "
                    f"({budget.cpu():,.0f} CPU s"
                    + (f" of {budget.describe()})" if budget.limited else ")")
                )
            )

    if progress_text is not None:
        progress_text(
            look(
                f"sampling antithetic orders of {k:,} organizations: at most {samples} orders, "
                f"2 x {k - 1:,} coalitions each; budget: {budget.describe()}"
            )
        )
    if scheduler is None and budget.limited:
        # the budget buys coalitions, not the engine's start-up (a cold numba cache
        # compiles its kernels on the first coalition: tens of seconds, which at 10,000
        # organizations left a 30-second budget nothing to measure a coalition with)
        valuer.warm()
        budget.restart()
    batch = None
    if scheduler is not None:
        batch = _DaskValues(
            scheduler, inst, (horizon, grid, value_policy, exact_upto, backfill), budget
        )

    def values(masks: list[int]) -> list[np.ndarray]:
        assert batch is not None
        proper = [m for m in masks if m not in (0, G)]
        got = dict(zip(proper, batch(proper), strict=True))
        valued[0] += len(proper)
        if progress is not None and proper:
            progress(valued[0])
        return [vec(m) if m in (0, G) else np.array([float(x) for x in got[m]]) for m in masks]

    surrogate, cv_section = fit_control(inst, horizon, control_variate and estimator != "ends")
    control = control_phi = grand_policy = None
    grand_exact: list[int] | None = None
    if estimator == "split" and exact_upto >= k - 1:
        estimator = "plain"
    if estimator == "split":
        # v'(N): the grand coalition valued as every other coalition (one more simulation)
        grand_exact = coalition_values(inst, horizon, grid, G, value_policy, 0, backfill)
        grand_policy = np.array([float(x) for x in grand_exact])
        control, control_phi = unanimity_control(k, grand - grand_policy)
    refining = refine and adaptive and k > 2
    # the error probability split between the orders' looks and the refinement's
    conf_orders = 1 - (1 - confidence) / 2 if refining else confidence
    runs = max(1, len(position_bins(k, refine_bins)))
    cache: dict[int, np.ndarray] = {}

    def handoff(
        phi: np.ndarray,
        hw: np.ndarray,
        decided: np.ndarray,
        pairs: int,
        each: float,
        coalitions: int,
        next_pairs: int,
    ) -> bool:
        spent = each * coalitions  # at the measured cost per coalition
        go = handoff_rule(
            k, int((~decided).sum()), runs, pairs, next_pairs, spent, coalitions, budget.left()
        )
        if go and progress_text is not None:
            progress_text(
                look(
                    f"{int((~decided).sum())} organizations left undecided after {2 * pairs} "
                    "orders: refining them by stratified sampling"
                )
            )
        return go

    value_batch = values if batch is not None else reuse_ref if exact_upto > 0 else None
    refinement = None
    try:
        est = shapley_antithetic(
            vec,
            k,
            samples,
            seed=seed,
            confidence=conf_orders,
            order=order,
            first_orders=first_orders,
            decide=decide if adaptive else None,
            budget=budget,
            keep=keep_for(k, len(grid)),
            on_chunk=on_chunk,
            on_look=on_look,
            interval=interval,
            values=value_batch,
            control=control,
            control_phi=control_phi,
            ends=estimator == "ends",
            cache=cache,
            handoff=handoff if refining else None,
            batch=1 if batch is None else DASK_BATCH,
            surrogate=surrogate,
            component=h,
        )
        open_ = [u for u in order if not est.decided[u]]  # canonical: names do not matter
        if refining and open_ and est.stop in ("handoff", "orders") and not budget.over():
            phase[0] = "refinement"

            def decide_refined(who: np.ndarray, p: np.ndarray, w: np.ndarray) -> np.ndarray:
                out = settled(psi_h[who], p[:, h], w[:, h])
                mark(np.asarray(who), out)
                if progress_text is not None:
                    progress_text(
                        look(
                            f"refinement: sign undecided for {int((~out).sum())} of the "
                            f"{len(open_)} organizations refined; {budget.spent()}"
                        )
                    )
                return out

            refinement = shapley_stratified(
                vec,
                k,
                open_,
                max(2, samples // 2),
                seed=np.random.SeedSequence(seed % 2**64).spawn(1)[0],
                confidence=1 - (1 - confidence) / 2,
                bins=refine_bins,
                first_rounds=REFINE_FIRST,
                decide=decide_refined,
                budget=budget,
                keep=keep_for(k, len(grid)),
                on_chunk=on_chunk,
                interval="hall" if interval == "auto" else interval,
                values=value_batch,
                cache=cache,
                order=order,
                allocate=REFINE_ALLOCATE if allocate else 0,
                cost=coalition_cost(inst),
                component=h,
                batch=1 if batch is None else DASK_BATCH,
                surrogate=surrogate,
            )
    finally:
        if batch is not None:
            batch.close()
    full_phi, full_hw = est.phi.copy(), est.halfwidth.copy()
    if refinement is not None:  # its organizations with at least two rounds
        got = np.isfinite(refinement.halfwidth[:, h])
        who = np.array(refinement.players)[got]
        full_phi[who] = refinement.phi[got]
        full_hw[who] = refinement.halfwidth[got]
    spent = time.perf_counter() - clock
    phi = symmetrize(full_phi[:, h], groups)
    hw = symmetrize(full_hw[:, h], groups, worst=True)
    final = settled(psi_h, phi, hw)
    settled_at[~final] = np.nan
    settled_at[final & np.isnan(settled_at)] = spent  # settled by the last estimates only
    first_look = refine_schedule(max(2, samples // 2), REFINE_FIRST)[0]
    projection = _project(
        k, psi_h, phi, final, est, refinement, runs, first_look, spent / max(1, valued[0]), h
    )
    keep = [t for t in grid if t in set(times)]
    return SampledGame(
        psi=psi_grid[h],
        phi=phi,
        halfwidth=hw,
        times=keep,
        psi_at=[psi_grid[at[t]] for t in keep],
        phi_at=[symmetrize(full_phi[:, at[t]], groups) for t in keep],
        samples=est.orders,
        confidence=confidence,
        value_policy=value_policy,
        exact_upto=exact_upto,
        coalitions=est.evaluations
        + (0 if refinement is None else refinement.evaluations)
        + (grand_policy is not None),
        sign_decided=sign_decided(psi_h, phi, hw),
        estimate=est,
        max_orders=samples,
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        budget=budget,
        estimator=estimator,
        grand_policy_at=None
        if grand_policy is None
        else [float(grand_policy[at[t]]) for t in keep],
        grand_policy_total=None if grand_exact is None else int(grand_exact[h]),
        refinement=refinement,
        refining=refining,
        settled_at=settled_at,
        seconds_spent=spent,
        projection=projection,
        component=h,
        groups=groups,
        control_variate=cv_section,
    )


def _project(
    k: int,
    psi: np.ndarray,
    phi: np.ndarray,
    final: np.ndarray,
    est: AntitheticEstimate,
    refinement: StratifiedEstimate | None,
    runs: int,
    first_look: int,
    per_coalition: float,
    h: int,
) -> dict[int, Projection]:
    """:class:`Projection` of every organization left unsettled: in the refinement's
    rounds (``2 * runs`` coalitions each, times its draws per run after an allocation, whose
    first-look rounds its estimate does not use) if it was refined, else in orders (``k - 1``
    coalitions each, antithetic pairs the draws), at the level of the last look; ``h``: the
    horizon's component of the estimates."""

    out = {}
    for u in np.flatnonzero(~final).tolist():
        unit, done, per, draw = "orders", est.orders, k - 1, 2
        se, level = float(est.se[u, h]), est.level
        if refinement is not None and u in refinement.players:
            j = refinement.players.index(u)
            a = None if refinement.allocation is None else refinement.allocation[j]
            unit, draw, level = "rounds", 1, refinement.level
            done = int(refinement.rounds[j]) - (first_look if a is not None else 0)
            per = 2 * (runs if a is None else sum(a))
            se = float(refinement.se[j, h])
        m = max(2, done // draw)
        need = samples_to_settle(
            psi[u : u + 1], phi[u : u + 1], np.array([se]), np.array([m]), level
        )[0]
        more = float(need - m) * draw
        out[u] = Projection(unit, done, more, more * per, more * per * per_coalition)
    return out


def projection_report(sg: SampledGame, names: list[str]) -> dict:
    """The report's ``sampling.projection``: per organization left undecided, what settling
    it would take at its observed spread (:class:`Projection`, :func:`samples_to_settle`)."""
    assert sg.projection is not None
    return {
        "method": (
            "per organization left undecided: the samples after which its interval would "
            "decide the sign of its surplus or show it below "
            f"{SETTLE_SHARE:.0%} of phi, if its estimate and the spread of its draws "
            "(antithetic pairs of orders, or rounds of the refinement) stayed as observed: "
            "the fewest draws whose Student t interval at the level of the last look is that "
            "narrow (a projection from this run's spread, not a promise); seconds at this "
            "run's mean time per coalition valued"
        ),
        "share": SETTLE_SHARE,
        "organizations": {
            names[u]: {
                "unit": p.unit,
                "done": p.done,
                "more": None if not np.isfinite(p.samples) else int(p.samples),
                "coalitions": None if not np.isfinite(p.coalitions) else int(p.coalitions),
                "seconds": None if not np.isfinite(p.seconds) else round(float(p.seconds), 3),
            }
            for u, p in sorted(sg.projection.items(), key=lambda kv: kv[1].seconds)
        },
    }


def projection_note(sg: SampledGame, names: list[str], most: int = 10) -> str:
    """The report's note on :func:`projection_report`, the quickest to settle first."""
    from .report import duration

    assert sg.projection is not None
    parts = []
    for u, p in sorted(sg.projection.items(), key=lambda kv: kv[1].seconds)[:most]:
        if p.samples == 0:
            parts.append(f"{names[u]}: its surplus is already shown below {SETTLE_SHARE:.0%}")
        elif not np.isfinite(p.samples):
            parts.append(f"{names[u]}: cannot be settled")
        else:
            parts.append(
                f"{names[u]}: about {p.samples:,.0f} more {p.unit} "
                f"({duration(p.seconds / 3600)} at this run's pace)"
            )
    more = len(sg.projection) - most
    return (
        "at its observed spread, settling each undecided organization (its sign decided or "
        f"its surplus shown below {SETTLE_SHARE:.0%} of phi) would take, projected: "
        + "; ".join(parts)
        + (f"; and {more} more" if more > 0 else "")
    )
