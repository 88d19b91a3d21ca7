"""``coopsched tune``: the fair-share settings a Slurm operator can set, searched for the
smallest unfairness against REF on a training window and checked on the next one
(docs/slurm.md, "Tuning").

The score of a setting is its mean unfairness ``dpsi / p_tot`` against REF over the training
windows (one window, or a period cut into windows, each simulated from an empty platform).
The model is SLURM-CLASSIC (Slurm's multifactor priority with the classic fair-share
factor and the age factor, usage and priorities recomputed every ``calc_period``, Slurm's
default ``PriorityCalcPeriod`` of 5 minutes unless told, :class:`coopsched.online.policies.slurm_classic.SlurmClassic`)
under EASY backfilling (``bf_job_part_count_reserve=1``), on the window's rigid jobs. The
search, all on the training window, REF computed once:

1. a grid over ``PriorityDecayHalfLife`` (:data:`HALF_LIVES`) x the age weight relative to
   the fair-share weight (:data:`AGE_RATIOS`) x ``PriorityMaxAge`` (:data:`MAX_AGES`, only
   with an age weight), the accounts' shares at their machines;
2. from the best point, coordinate descent on the accounts' shares: each account's share
   times each of :data:`SHARE_STEPS`, a change kept when it lowers the unfairness, until a
   round changes nothing (at most ``rounds``);
3. the grid of step 1 again at the shares found.

With several training windows, the last ``holdout`` (default: a third of them, none with
fewer than three) are held out of the search: of the settings each step ends with (the current ones, after 1, after 2, after 3),
the one with the lowest mean unfairness on the held-out windows is kept (ties: the earlier,
simpler one), so that a setting fitted to the search windows alone is not advised when it
does not carry over to a window it did not see.

Ties keep the earlier candidate (Slurm's defaults come first). Every evaluation is one
simulation of the window; the result states how many ran and how long they took.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..workloads.instance import Instance
from .plan import (
    DEFAULT_FS_WEIGHT,
    Scheduling,
    operator_lines,
    operator_share_commands,
    slurm_name,
)

HALF_LIVES: tuple[float, ...] = (
    7 * 86400.0,  # Slurm's default first: ties keep it
    3600.0,
    4 * 3600.0,
    86400.0,
    3 * 86400.0,
    30 * 86400.0,
    math.inf,
)
AGE_RATIOS: tuple[float, ...] = (0.0, 0.01, 0.1, 1.0)
MAX_AGES: tuple[float, ...] = (7 * 86400.0, 3600.0, 86400.0)
SHARE_STEPS: tuple[float, ...] = (0.5, 2.0, 0.25, 4.0)
#: Slurm's default ``PriorityCalcPeriod``: 5 minutes.
CALC_PERIOD = 300.0


@dataclass
class Evaluation:
    """A setting's mean unfairness (``dpsi / p_tot`` against REF) and utilization over
    windows."""

    scheduling: Scheduling
    unfairness: float
    utilization: float


@dataclass
class TuneResult:
    """The search's outcome: the current and advised settings, their evaluations on the
    training and checking windows, the search's best before the held-out windows chose
    (``searched``), the account names, how many settings were evaluated and how long it
    took, and a trail of the steps."""

    current: Scheduling
    tuned: Scheduling
    train: tuple[Evaluation, Evaluation]  # current, tuned (means over the windows)
    check: tuple[Evaluation, Evaluation, Evaluation] | None  # current, tuned, searched
    accounts: list[str]
    evaluations: int
    seconds: float
    trail: list[str] = field(default_factory=list)
    #: the search's best on the windows it searched, before the held-out windows chose
    searched: Scheduling | None = None

    def conf_lines(self) -> list[str]:
        """The advised ``slurm.conf`` lines."""
        return operator_lines(self.tuned)

    def share_commands(self) -> list[str]:
        """The advised ``sacctmgr modify account ... set fairshare=...`` commands."""
        shares = self.tuned.shares or ()
        return operator_share_commands(self.accounts, list(shares))

    def to_dict(self) -> dict:
        """The result as JSON-ready data (``coopsched tune --format json``)."""

        def ev(e: Evaluation) -> dict:
            return {"unfairness": e.unfairness, "utilization": e.utilization}

        def sch(s: Scheduling) -> dict:
            return {
                "half_life": str(s.half_life) if math.isinf(s.half_life) else s.half_life,
                "fs_weight": s.fs_weight,
                "age_weight": s.age_weight,
                "max_age": s.max_age,
                "shares": None if s.shares is None else list(s.shares),
            }

        return {
            "accounts": self.accounts,
            "current": sch(self.current),
            "scheduling": sch(self.tuned),
            "train": {"current": ev(self.train[0]), "tuned": ev(self.train[1])},
            "searched": None if self.searched is None else sch(self.searched),
            "check": None
            if self.check is None
            else {
                "current": ev(self.check[0]),
                "tuned": ev(self.check[1]),
                "searched": ev(self.check[2]),
            },
            "slurm_conf": self.conf_lines(),
            "sacctmgr": self.share_commands(),
            "evaluations": self.evaluations,
            "trail": self.trail,
            "seconds": round(self.seconds, 2),
        }


class _Windows:
    """Windows with their horizons and REF schedules (computed once); a setting's score is
    its mean unfairness (and mean utilization) over them."""

    def __init__(
        self, windows: Sequence[tuple[Instance, int]], calc_period: float = CALC_PERIOD
    ) -> None:
        from ..online.policies import get_policy

        if not windows:
            raise ValueError("tune: no window to search on")
        self.calc_period = calc_period
        self.windows = [(inst, int(T)) for inst, T in windows]
        self.refs = [get_policy("ref").run(inst, T, backfill="easy") for inst, T in self.windows]

    def evaluate(self, sch: Scheduling) -> Evaluation:
        from ..online.fairness import fairness

        unfair, util = 0.0, 0.0
        for (inst, T), ref in zip(self.windows, self.refs, strict=True):
            s = model(sch, self.calc_period).run(inst, T, backfill="easy")
            unfair += fairness(s, ref, T).ratio
            util += s.utilization(T)
        n = len(self.windows)
        return Evaluation(sch, unfair / n, util / n)


def model(sch: Scheduling, calc_period: float = CALC_PERIOD):
    """SLURM-CLASSIC with the settings ``sch`` (FIFO without fair share), usage and
    priorities recomputed every ``calc_period`` log seconds (``PriorityCalcPeriod``)."""
    from ..online.policies import get_policy

    if not sch.fairshare:
        return get_policy("fifo")
    kw: dict = {"half_life": sch.half_life, "calc_period": calc_period}
    if sch.shares is not None:
        kw["shares"] = list(sch.shares)
    if sch.age_weight:
        kw.update(fs_weight=sch.fs_weight, age_weight=sch.age_weight, max_age=sch.max_age)
    return get_policy("slurm-classic", **kw)


def tune(
    train: Sequence[tuple[Instance, int]],
    check: Sequence[tuple[Instance, int]] = (),
    *,
    fs_weight: int = DEFAULT_FS_WEIGHT,
    rounds: int = 3,
    holdout: int | None = None,
    calc_period: float = CALC_PERIOD,
    progress: Callable[[str], None] | None = None,
) -> TuneResult:
    """Search the settings (module docstring) on the ``train`` windows (instance, horizon;
    the score is the mean over them); evaluate current and tuned on the ``check`` windows.
    Every window has the same organizations and machines."""
    say = progress or (lambda _m: None)
    t0 = time.perf_counter()
    first = train[0][0] if train else None
    for inst, _T in list(train) + list(check):
        if first is not None and (
            [o.name for o in inst.organizations] != [o.name for o in first.organizations]
            or list(inst.machines) != list(first.machines)
        ):
            raise ValueError("tune: every window must have the same organizations and machines")
    if holdout is None:
        holdout = len(train) // 3
    fit, held = (train[:-holdout], train[-holdout:]) if 0 < holdout < len(train) else (train, [])
    say(f"REF of {len(train)} training window(s), {len(held)} held out")
    win = _Windows(fit, calc_period)
    assert first is not None
    machines = tuple(float(m) for m in first.machines)
    current = Scheduling(fs_weight=fs_weight, shares=machines)
    count = 0
    seen: dict[Scheduling, Evaluation] = {}

    def ev(s: Scheduling) -> Evaluation:
        nonlocal count
        if s not in seen:
            count += 1
            seen[s] = win.evaluate(s)
        return seen[s]

    def grid(shares: tuple[float, ...], best: Evaluation) -> Evaluation:
        for hl in HALF_LIVES:
            for ratio in AGE_RATIOS:
                for age in MAX_AGES if ratio else MAX_AGES[:1]:
                    s = replace(
                        current,
                        half_life=hl,
                        age_weight=round(ratio * fs_weight),
                        max_age=age,
                        shares=shares,
                    )
                    e = ev(s)
                    if e.unfairness < best.unfairness:
                        best = e
        return best

    base = ev(current)
    trail = [f"current: {base.unfairness:,.2f}"]
    say("grid over half-life, age weight and max age")
    best = grid(machines, base)
    trail.append(f"grid: {best.unfairness:,.2f}")
    stages = [("current", base), ("grid", best)]
    say("coordinate descent on the shares")
    for r in range(rounds):
        changed = False
        for u in range(first.k):
            for step in SHARE_STEPS:
                shares = list(best.scheduling.shares or machines)
                shares[u] *= step
                e = ev(replace(best.scheduling, shares=tuple(shares)))
                if e.unfairness < best.unfairness:
                    best, changed = e, True
        trail.append(f"shares round {r + 1}: {best.unfairness:,.2f}")
        if not changed:
            break
    stages.append(("shares", best))
    best = grid(best.scheduling.shares or machines, best)
    trail.append(f"grid again: {best.unfairness:,.2f}")
    stages.append(("grid again", best))
    searched = best.scheduling
    if held:
        hw = _Windows(held, calc_period)
        scores = [(hw.evaluate(e.scheduling).unfairness, i) for i, (_n, e) in enumerate(stages)]
        _score, i = min(scores)
        trail.append(
            "held out: "
            + ", ".join(f"{n} {sc:,.2f}" for (n, _e), (sc, _i) in zip(stages, scores, strict=True))
            + f"; kept {stages[i][0]}"
        )
        best = stages[i][1]
    if held:  # the scores on every training window
        every = _Windows(train, calc_period)
        base, best = every.evaluate(current), every.evaluate(best.scheduling)
    checked = None
    if check:
        say(f"checking on {len(check)} window(s)")
        cw = _Windows(check, calc_period)
        checked = (cw.evaluate(current), cw.evaluate(best.scheduling), cw.evaluate(searched))
    return TuneResult(
        current,
        best.scheduling,
        (base, best),
        checked,
        [slurm_name(o.name) for o in first.organizations],
        count,
        time.perf_counter() - t0,
        trail,
        searched,
    )
