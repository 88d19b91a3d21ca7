"""Checks every online policy must pass, for built-in and third-party policies alike.

:func:`check_policy` is coopsched's counterpart of scikit-learn's ``check_estimator``:
it runs a policy on seeded random instances and checks the contract of
``docs/policies.md``. Each check has a name (:data:`CHECKS`), and a failure names the
check, the policy and the instance:

* ``params``: the parameters of ``__init__`` are stored under their own names
  (``params()`` reads them back) and ``type(p)(**p.params())`` is the same policy;
* ``valid_schedule``: every schedule satisfies the invariants of
  :mod:`coopsched.online.checker` (release, one job per machine, FIFO within an
  organization, greedy, nothing lost), with and without a horizon, for the grand
  coalition and for a sub-coalition;
* ``valid_picks``: ``select`` returns an organization with a waiting job (an int in
  range; the engine raises :class:`~coopsched.online.engine.PolicyError` otherwise);
* ``simulate_is_run``: ``simulate(inst, p)`` and ``p.run(inst)`` agree;
* ``reproducible``: a fresh ``type(p)(**p.params())`` gives the same schedule;
* ``idempotent``: the same policy object run twice gives the same schedule (state is
  created in ``reset``/``prepare``, never left over from an earlier run);
* ``rigid``: on random rigid instances (jobs on several processors, requested times),
  under every backfilling rule (``none``, ``first-fit``, ``easy``, ``easy-queue``), every
  schedule satisfies :func:`coopsched.online.checker.check_rigid` (capacity, FIFO, too-wide jobs,
  the rule's greedy property, EASY's reservation);
* ``non_clairvoyant`` (Skowron & Rzadca, Sec. 2): changing the size of a job that has not
  completed by ``T`` changes nothing before ``T``. For a policy that drives its own
  simulation (REF, RAND), whose coalition schedules may legitimately complete a job
  earlier than the grand coalition does, only jobs released at or after ``T`` are
  changed. The same holds on a rigid instance under a random backfilling rule: run times
  change, requested times (all EASY reads) stay.

>>> from coopsched.online.policies import Fifo
>>> check_policy(Fifo, instances=3)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .online.checker import check_schedule
from .online.engine import Policy, PolicyError, simulate
from .online.rigid import BACKFILL
from .online.schedule import Schedule
from .workloads.instance import Instance, Organization

__all__ = ["CHECKS", "PolicyCheckError", "check_policy", "random_instance", "random_rigid_instance"]


class PolicyCheckError(AssertionError):
    """A policy broke the contract; the message names the check and the instance."""


def random_instance(rng: np.random.Generator, max_k: int = 4, max_n: int = 24) -> Instance:
    """A small random instance: 1..max_k organizations (some may own no machine), jobs
    with small releases and sizes so that queues, ties and idle machines all occur."""
    k = int(rng.integers(1, max_k + 1))
    machines = rng.integers(0, 3, size=k)
    if machines.sum() == 0:
        machines[int(rng.integers(k))] = 1
    n = int(rng.integers(1, max_n + 1))
    org = rng.integers(0, k, size=n)
    release = np.sort(rng.integers(0, 12, size=n))
    size = rng.integers(1, 7, size=n)
    orgs = [Organization(f"O{u}", int(m)) for u, m in enumerate(machines)]
    return Instance(orgs, org, release, size)


def random_rigid_instance(rng: np.random.Generator, max_k: int = 4, max_n: int = 16) -> Instance:
    """A small random rigid instance: jobs on 1..4 processors (some wider than a
    coalition, or than the platform), requested times around the run times (some jobs
    outlive theirs, as in real logs)."""
    base = random_instance(rng, max_k, max_n)
    n = base.n
    q = rng.integers(1, 5, size=n)
    requested = np.maximum(1, base.size + rng.integers(-2, 4, size=n))
    return Instance(base.organizations, base.org, base.release, base.size, q, requested=requested)


def _fail(cls: type[Policy], what: str, inst: Instance, detail: str) -> PolicyCheckError:
    jobs = list(zip(inst.org.tolist(), inst.release.tolist(), inst.size.tolist(), strict=True))
    return PolicyCheckError(
        f"{cls.__name__} ({cls.name}): check {what!r} failed: {detail}\n"
        f"  instance: machines {inst.machines.tolist()}, jobs (org, release, size) {jobs}"
    )


def _same(a, b) -> bool:
    return np.array_equal(a.start, b.start) and np.array_equal(a.machine, b.machine)


def _run(cls, params, what, inst, horizon=None, members=None, policy=None):
    """``simulate`` under a check's name: an invalid pick is that check's failure too."""
    try:
        return simulate(inst, policy if policy is not None else cls(**params), horizon, members)
    except PolicyError as exc:
        raise _fail(cls, "valid_picks", inst, f"{exc} (during {what!r})") from None


def _check_params(cls, params, rng, inst) -> None:
    pol = cls(**params)
    missing = [n for n in cls.param_names() if not hasattr(pol, n)]
    if missing:
        raise PolicyCheckError(
            f"{cls.__name__}: check 'params' failed: __init__ parameter(s) "
            f"{', '.join(missing)} not stored as attributes of the same names, so params() "
            "cannot read them back"
        )
    again = cls(**pol.params())
    if repr(again) != repr(pol):
        raise PolicyCheckError(
            f"{cls.__name__}: check 'params' failed: parameters do not round-trip: "
            f"{pol!r} became {again!r}"
        )


def _horizons(rng, inst) -> tuple[None, int]:
    ends = inst.release.max() + inst.size.sum() + 1
    return None, int(rng.integers(1, ends))


def _check_valid_schedule(cls, params, rng, inst) -> None:
    for horizon in _horizons(rng, inst):
        s = _run(cls, params, "valid_schedule", inst, horizon)
        bad = check_schedule(s)
        if bad:
            raise _fail(cls, "valid_schedule", inst, f"horizon {horizon}: {bad[0]}")
    if inst.k > 1:
        members = sorted(
            rng.choice(inst.k, size=int(rng.integers(1, inst.k)), replace=False).tolist()
        )
        T = _horizons(rng, inst)[1]
        s = _run(cls, params, "valid_schedule", inst, T, members)
        bad = check_schedule(s)
        if bad:
            raise _fail(cls, "valid_schedule", inst, f"coalition {members}: {bad[0]}")


def _check_simulate_is_run(cls, params, rng, inst) -> None:
    for horizon in _horizons(rng, inst):
        s = _run(cls, params, "simulate_is_run", inst, horizon)
        if not _same(s, cls(**params).run(inst, horizon)):
            raise _fail(cls, "simulate_is_run", inst, f"horizon {horizon}")


def _check_reproducible(cls, params, rng, inst) -> None:
    pol = cls(**params)
    for horizon in _horizons(rng, inst):
        s = _run(cls, params, "reproducible", inst, horizon)
        if not _same(
            s, _run(cls, params, "reproducible", inst, horizon, None, cls(**pol.params()))
        ):
            raise _fail(cls, "reproducible", inst, f"horizon {horizon}")


def _check_idempotent(cls, params, rng, inst) -> None:
    pol = cls(**params)
    horizon = _horizons(rng, inst)[1]
    first = _run(cls, params, "idempotent", inst, horizon, None, pol)
    other = random_instance(rng)  # a run in between must not leak into the next one
    _run(cls, params, "idempotent", other, None, None, pol)
    second = _run(cls, params, "idempotent", inst, horizon, None, pol)
    if not _same(first, second):
        j = int(
            np.flatnonzero((first.start != second.start) | (first.machine != second.machine))[0]
        )
        raise _fail(
            cls,
            "idempotent",
            inst,
            f"the same policy object, run again (horizon {horizon}), starts job {j} at "
            f"{second.start[j]} instead of {first.start[j]}: state must be created in reset()",
        )


def _unseen_sizes_changed(
    cls: type[Policy], rng: np.random.Generator, inst: Instance, s: Schedule, T: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """The jobs whose sizes a non-clairvoyant policy cannot know before ``T`` in the
    schedule ``s`` (unfinished at ``T``; for a self-driven policy, released at or after
    ``T``) and new sizes, each of them longer by 1 to 4; ``None`` when there is none."""
    done = (s.start >= 0) & (s.start + inst.size <= T)
    change = inst.release >= T if cls.drives_simulation() else ~done
    if not change.any():
        return None
    size2 = inst.size.copy()
    size2[change] += rng.integers(1, 5, size=int(change.sum()))
    return change, size2


def _check_non_clairvoyant(cls, params, rng, inst) -> None:
    T = int(rng.integers(1, inst.release.max() + 2))  # some jobs may come later
    s = _run(cls, params, "non_clairvoyant", inst, T)
    resized = _unseen_sizes_changed(cls, rng, inst, s, T)
    if resized is None:
        return
    change, size2 = resized
    other = Instance(inst.organizations, inst.org, inst.release, size2)
    s2 = _run(cls, params, "non_clairvoyant", other, T)
    before = (s.start >= 0) | (s2.start >= 0)
    if not (
        np.array_equal(s.start[before], s2.start[before])
        and np.array_equal(s.machine[before], s2.machine[before])
    ):
        j = int(np.flatnonzero(before & ((s.start != s2.start) | (s.machine != s2.machine)))[0])
        raise _fail(
            cls,
            "non_clairvoyant",
            inst,
            f"clairvoyant: the size of an unfinished job changed a decision: horizon {T}; job "
            f"{j} starts at {s.start[j]} or {s2.start[j]} when sizes "
            f"{size2[change].tolist()} replace {inst.size[change].tolist()}",
        )
    _check_non_clairvoyant_rigid(cls, params, rng)


def _runs_rigid(cls) -> bool:
    """Whether the policy can schedule rigid jobs (a self-driven one takes ``backfill``)."""
    import inspect

    return not cls.drives_simulation() or "backfill" in inspect.signature(cls.run).parameters


def _check_non_clairvoyant_rigid(cls, params, rng) -> None:
    """The rigid variant of ``non_clairvoyant``: on a random rigid instance, under a random
    backfilling rule, the run times of jobs unfinished at ``T`` (released at or after ``T``
    for a self-driven policy) change nothing before ``T``; requested times stay, as EASY
    reads them and never run times."""
    if not _runs_rigid(cls):
        return  # the 'rigid' check reports it
    inst = random_rigid_instance(rng)
    rule = str(rng.choice(list(BACKFILL)))
    T = int(rng.integers(1, inst.release.max() + 2))
    try:
        s = simulate(inst, cls(**params), T, backfill=rule)
        resized = _unseen_sizes_changed(cls, rng, inst, s, T)
        if resized is None:
            return
        change, size2 = resized
        other = Instance(
            inst.organizations,
            inst.org,
            inst.release,
            size2,
            inst.width,
            requested=inst.requested,
        )
        s2 = simulate(other, cls(**params), T, backfill=rule)
    except PolicyError as exc:
        raise _fail(cls, "valid_picks", inst, f"{exc} (non_clairvoyant, rigid)") from None
    if not np.array_equal(s.start, s2.start):
        j = int(np.flatnonzero(s.start != s2.start)[0])
        raise _fail(
            cls,
            "non_clairvoyant",
            inst,
            f"clairvoyant on rigid jobs (backfill {rule}): the run time of an unfinished job "
            f"changed a decision: horizon {T}; job {j} starts at {s.start[j]} or "
            f"{s2.start[j]} when run times {size2[change].tolist()} replace "
            f"{inst.size[change].tolist()} (processors {inst.width.tolist()}, requested "
            f"{inst.requested.tolist() if inst.requested is not None else None})",
        )


def _check_rigid(cls, params, rng, inst) -> None:
    """Rigid jobs under every backfilling rule: valid schedules (:func:`check_rigid`), for
    the grand coalition and a sub-coalition, with and without a horizon. The Python
    engine runs, as it records the policy's picks where the rule stops, which the checker
    needs to verify EASY's reservation (the compiled engine gives the same starts)."""
    rigid = random_rigid_instance(rng)
    members = None
    if rigid.k > 1:
        members = sorted(
            rng.choice(rigid.k, size=int(rng.integers(1, rigid.k)), replace=False).tolist()
        )
    for rule in BACKFILL:
        for horizon, mem in ((None, None), (_horizons(rng, rigid)[1], members)):
            try:
                s = simulate(rigid, cls(**params), horizon, mem, backfill=rule, engine="python")
            except PolicyError as exc:
                raise _fail(cls, "valid_picks", rigid, f"{exc} (rigid, {rule})") from None
            except TypeError as exc:
                raise _fail(cls, "rigid", rigid, str(exc)) from None
            bad = check_schedule(s)
            if bad:
                raise _fail(
                    cls,
                    "rigid",
                    rigid,
                    f"backfill {rule}, horizon {horizon}, coalition {mem}: {bad[0]} "
                    f"(processors {rigid.width.tolist()}, requested {rigid.requested})",
                )


#: The named checks, in the order :func:`check_policy` runs them on each instance.
CHECKS: dict[str, Callable[..., None]] = {
    "valid_schedule": _check_valid_schedule,
    "simulate_is_run": _check_simulate_is_run,
    "reproducible": _check_reproducible,
    "idempotent": _check_idempotent,
    "non_clairvoyant": _check_non_clairvoyant,
    "rigid": _check_rigid,
}


def check_policy(
    cls: type[Policy],
    params: dict | None = None,
    *,
    instances: int = 25,
    seed: int = 0,
    checks: Iterable[str] | None = None,
) -> None:
    """Raise :class:`PolicyCheckError` if ``cls(**params)`` breaks the policy contract.

    ``instances`` seeded random instances are tried (see the module docstring);
    ``checks`` restricts the run to some of :data:`CHECKS` (``params`` always runs). An
    invalid pick (``valid_picks``) is caught by whichever check meets it first.
    """
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise PolicyCheckError(f"{cls!r} is not a subclass of coopsched Policy")
    params = dict(params or {})
    names = list(CHECKS) if checks is None else list(checks)
    unknown = [c for c in names if c not in CHECKS]
    if unknown:
        raise ValueError(f"checks: unknown {unknown}; choose from {', '.join(CHECKS)}")
    rng = np.random.default_rng(seed)
    _check_params(cls, params, rng, None)
    for i in range(instances):
        inst = random_instance(rng)
        for name in names:
            if name == "rigid" and i % 3 and checks is None:
                continue  # three rules, two runs each: on every third instance by default
            CHECKS[name](cls, params, rng, inst)


# ---------------------------------------------- games with known Shapley values
def additive_interaction_game(k: int, seed: int) -> list[int]:
    """A synthetic game for Shapley estimators' tests and benchmarks,
    ``v(S) = sum a_i + sum_{i<j in S} b_ij + c * max(0, |S| - k/2)^2``: exact values
    from the table (Eq. 1)."""
    rng = np.random.default_rng(seed)
    a = rng.exponential(10.0, k)
    b = rng.normal(0.0, 3.0, (k, k))
    c = rng.uniform(0, 5)
    v = []
    for S in range(1 << k):
        mem = [u for u in range(k) if S >> u & 1]
        x = sum(a[u] for u in mem) + sum(b[i, j] for i in mem for j in mem if i < j)
        v.append(round(100 * (x + c * max(0, len(mem) - k / 2) ** 2)) if S else 0)
    return v


def airport_game(k: int, seed: int) -> tuple[list[int], np.ndarray]:
    """The airport game ``v(S) = max_{i in S} c_i`` (a runway as long as the longest
    plane's; here a profit game, the same Shapley values as the cost game) and its closed
    form: ``phi_(i) = sum_{j <= i} (c_(j) - c_(j-1)) / (k - j + 1)`` over sorted costs."""
    rng = np.random.default_rng(seed)
    c = rng.integers(1, 100, k).astype(float)
    v = [int(max((c[u] for u in range(k) if S >> u & 1), default=0)) for S in range(1 << k)]
    order = np.argsort(c, kind="stable")
    phi = np.zeros(k)
    acc, prev = 0.0, 0.0
    for j, u in enumerate(order):
        acc += (c[u] - prev) / (k - j)
        prev = c[u]
        phi[u] = acc
    return v, phi
