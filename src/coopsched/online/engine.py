"""The online engine's contract and its one door.

Model (Skowron & Rzadca, Sec. 2; docs/conventions.md §1): jobs on identical machines; time
is integer; a job released at ``r`` may start at any ``s >= r`` and occupies its ``q``
machines (one for a sequential job) during ``[s, s+p)``. At every event time ``t`` (a
release or a completion) the engine frees the machines whose jobs complete at ``t``, queues
the jobs released at ``t`` (each organization's queue in input order) and then, while a
machine is free and a job waits, asks the policy for an organization; that organization's
oldest waiting job starts at ``t`` (for rigid jobs, as the backfilling rule allows:
:mod:`coopsched.online.rigid`). The cost grows with the number of events, not with the
horizon.

Pinned jobs (:attr:`Instance.pinned`, docs/conventions.md §5: jobs already running when an
audited window opens) are started by the engine itself, before the policy is asked: while a
pinned job waits and fits, the oldest waiting pinned job starts (a pinned job is always at
the head of its organization's queue). The policy still sees these starts through
:meth:`Policy.on_start`.

Policies see the world through a :class:`SimView` (:mod:`coopsched.online.view`): release
order and release time of each queue head, queue lengths, running counts, machines, and
utilities computed from elapsed time. A job's size is revealed to the policy only by
:meth:`Policy.on_complete`, once the job has completed. The contract is documented in
``docs/policies.md``.

This module holds the contract (:class:`Policy`) and the one door to the engines:
:func:`simulate` for one run, and :class:`Backend`, the same door for many runs on one
instance (the audit's coalitions, RAND's and REF's), which keeps the instance's prepared
inputs. They choose between the Python loop (:mod:`coopsched.online.core`) and the compiled
one (:mod:`coopsched.online.compiled`, identical schedules) in one place
(:func:`_choose_engine`), under one threshold (:data:`COMPILE_MIN_JOBS`).
"""

from __future__ import annotations

import inspect
import typing
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..workloads.instance import Instance
from ..workloads.limits import MAX_EXACT, check_horizon, check_members
from .backends import compiled_names, compiled_rule
from .core import run_loop
from .rigid import resolve_backfill, too_wide_info
from .schedule import Schedule, expand_coalition
from .view import PolicyError, SimView

__all__ = ["Backend", "Policy", "PolicyError", "SimView", "simulate"]


class Policy:
    """The one interface of every online policy (``docs/policies.md``).

    Parameters are the keyword arguments of ``__init__`` and are stored under the same
    names (scikit-learn's estimator convention), so :meth:`params` and
    ``type(p)(**p.params())`` need no code in a subclass. State is created in
    :meth:`reset`. The override points (SimPy style, the base class names them):

    * :meth:`select` (required): the organization whose oldest waiting job starts now;
    * :meth:`prepare`: called with the instance before the simulation (static information:
      ``meta``, machines; reading job sizes there would break non-clairvoyance, and
      :func:`coopsched.testing.check_policy` would catch it);
    * :meth:`reset`: called once before the simulation, after :meth:`prepare`;
    * :meth:`on_release`, :meth:`on_start`, :meth:`on_complete`: event hooks, called only
      when a subclass overrides them (or sets ``wants_events``);
    * :meth:`build` (or :meth:`run`): for a policy that builds its schedule itself (REF and RAND simulate
      every coalition); :func:`simulate` then calls it, so both entry points agree;
    * :meth:`compiled_inputs`, :meth:`compiled_result`: for a policy of the compiled table
      (:mod:`coopsched.online.backends`), what it hands the compiled engine and takes back.

    ``random_machines`` asks the engine to give each started job a uniformly random free
    machine (seeded) instead of the lowest-numbered; ``name`` is the registry name
    (:func:`coopsched.online.policies.register`); ``rank`` orders listings.
    """

    name: str = "policy"
    rank: int = 50
    random_machines: bool = False
    wants_events: bool = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    @classmethod
    def param_names(cls) -> list[str]:
        """Names of the keyword arguments of ``__init__``: the policy's parameters."""
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in list(sig.parameters.values())[1:]
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    @classmethod
    def param_types(cls) -> dict[str, tuple[object, object]]:
        """``{name: (annotation, default)}`` of every parameter (annotations resolved)."""
        try:
            hints = typing.get_type_hints(cls.__init__)
        except Exception:  # unresolvable annotations: fall back to the defaults' types
            hints = {}
        sig = inspect.signature(cls.__init__)
        out = {}
        for name in cls.param_names():
            p = sig.parameters[name]
            default = None if p.default is p.empty else p.default
            out[name] = (hints.get(name, type(default) if default is not None else str), default)
        return out

    def params(self) -> dict:
        """The parameters, read back from the attributes of the same names."""
        return {n: getattr(self, n) for n in self.param_names() if hasattr(self, n)}

    def prepare(self, instance: Instance, horizon: int | None = None) -> None:
        """Called by :func:`simulate` with the whole instance before :meth:`reset`."""

    def reset(self, view: SimView) -> None:
        """Called once before the simulation starts."""

    def select(self, view: SimView) -> int:
        """Return an organization with a waiting job; its oldest job starts now."""
        raise NotImplementedError

    def on_release(self, view: SimView, org: int) -> None:
        """A job of ``org`` was released at ``view.t`` (its size stays unknown)."""

    def on_start(self, view: SimView, org: int, machine: int) -> None:
        """A job of ``org`` started on ``machine`` at ``view.t``."""

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        """A job of ``org`` completed on ``machine`` at ``view.t``; its size is now known."""

    def compiled_inputs(self) -> dict[str, Any] | None:
        """What the compiled engine's pick rule reads of this policy beyond the instance
        (RAND: its kept coalitions' running counts), after :meth:`prepare`; ``None`` when the
        policy is not ready for the engine (then only the Python engine runs it)."""
        return {}

    def compiled_result(self, state: dict[str, Any]) -> None:
        """The compiled engine's final state (``phi``, ``wc``, ``rc``, ``tv``: DIRECTCONTR's
        contribution accumulators per machine owner; ``last``: ROUNDROBIN's last served
        position; ``key_time``), for the policy to keep as the Python loop would leave it."""

    def run(
        self,
        instance: Instance,
        horizon: int | None = None,
        members: Iterable[int] | None = None,
        *,
        backfill: str | None = None,
        engine: str = "auto",
    ) -> Schedule:
        """Simulate this policy on ``instance`` (optionally only a coalition's part; a rigid
        instance under the backfilling rule ``backfill``) in ``engine``. A policy that
        builds its schedule itself (:meth:`build`) builds a coalition's as that of the
        coalition alone, its jobs and machines as an instance of their own."""
        if type(self).build is Policy.build:
            return simulate(
                instance, self, horizon=horizon, members=members, backfill=backfill, engine=engine
            )
        if members is not None and sorted(set(members)) != list(range(instance.k)):
            sub = self.run(instance.restrict(members), horizon, backfill=backfill, engine=engine)
            return expand_coalition(instance, members, sub, self.name)
        return self.build(instance, horizon, backfill=backfill, engine=engine)

    def build(
        self, instance: Instance, horizon: int | None, *, backfill: str | None, engine: str
    ) -> Schedule:
        """For a policy that builds its schedule itself (REF and RAND simulate every
        coalition they need): the schedule of all of ``instance``'s organizations, a rigid
        instance under ``backfill``, its runs in ``engine`` (:meth:`run` calls it)."""
        raise NotImplementedError

    @classmethod
    def drives_simulation(cls) -> bool:
        """True when the policy builds its schedule itself (overrides :meth:`build`, or
        :meth:`run` as a plug-in may)."""
        return cls.build is not Policy.build or cls.run is not Policy.run

    @contextmanager
    def engine_pass(self) -> Iterator[None]:
        """Inside :meth:`run`: let :func:`simulate` run the event loop for this policy."""
        self._engine_pass = True
        try:
            yield
        finally:
            self._engine_pass = False

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def _wants_events(policy: Policy) -> bool:
    cls = type(policy)
    return bool(policy.wants_events) or any(
        getattr(cls, hook) is not getattr(Policy, hook)
        for hook in ("on_release", "on_start", "on_complete")
    )


ENGINES = ("auto", "python", "compiled")


def simulate(
    instance: Instance,
    policy: Policy,
    horizon: int | None = None,
    members: Iterable[int] | None = None,
    *,
    engine: str = "auto",
    compiled: bool | None = None,
    backfill: str | None = None,
) -> Schedule:
    """Run ``policy`` on ``instance`` until ``horizon`` (no job starts at ``t >= horizon``).

    A rigid instance (``processors`` given) runs under the backfilling rule ``backfill``
    (``none``, ``first-fit``, ``easy``; ``None`` or ``"auto"``: EASY when every job has a
    requested time, first-fit otherwise; :mod:`coopsched.online.rigid`).

    With ``members``, only that coalition's jobs and machines take part (the schedule
    the coalition would build alone). Without a horizon, runs until every job started.
    A policy that builds its schedule itself (REF, RAND: it overrides
    :meth:`Policy.run`) is handed the call, so ``simulate(inst, p)`` and ``p.run(inst)``
    are the same for every policy.

    >>> from coopsched import make_instance
    >>> from coopsched.online.policies import Fifo, Ref
    >>> inst = make_instance([1, 1], [(0, 0, 3), (0, 0, 2), (1, 1, 2)])
    >>> simulate(inst, Fifo()).start.tolist()
    [0, 0, 2]
    >>> simulate(inst, Ref()).start.tolist() == Ref().run(inst).start.tolist()
    True

    ``engine``: the policies of the declared table
    :data:`coopsched.online.backends.COMPILED` also run in the compiled engine
    (:mod:`coopsched.online.compiled`, identical schedules). ``"compiled"`` uses it at any
    size (a :class:`ValueError` naming why for any other policy), ``"python"`` never;
    ``"auto"`` (the default) uses it for those policies except on small instances (under
    :data:`COMPILE_MIN_JOBS` jobs) while no numba kernel has run in the process, so a short
    command never pays numba's start-up, or while the engine's kernel would have to be
    compiled first (not in numba's disk cache yet). A policy that builds its schedule
    itself receives ``engine`` when its :meth:`~Policy.run` takes it (RAND: its runs; REF:
    ``"python"`` its Python-integer kernel). ``compiled=True/False`` is the older spelling
    of ``engine="compiled"/"python"``. ``Schedule.info["engine"]`` says which ran; when
    int64 cannot be proven exact the Python path runs instead, with a
    :class:`~coopsched.online.compiled.CompiledFallback` warning and the reason in
    ``info["fallback"]``.
    """
    if compiled is not None:
        engine = "compiled" if compiled else "python"
    return Backend(instance, horizon, backfill, engine).run(policy, members)


#: Below this many jobs (one run's, or all the runs a :class:`Backend` makes) the Python
#: engine is used by default while no numba kernel has run in this process: numba's first
#: kernel load (its compiler's start-up, about half a second) costs more than simulating
#: that many jobs in Python.
COMPILE_MIN_JOBS = 50_000


class Backend:
    """The door to the engines for one instance: :func:`simulate` is one run through it; a
    caller that simulates many coalitions of one instance (the audit's coalition valuer,
    RAND's kept coalitions, REF's coalitions) keeps one, and with it the instance's
    compiled inputs (:class:`~coopsched.online.compiled.Prepared`, built on first use) and
    its backfilling rule. ``workload``: the jobs the caller will simulate in all, which
    ``engine="auto"`` weighs as one run of that many jobs (``None``: counted as the runs
    come, so the compiled engine takes over once numba's start-up pays). The instance must
    not change meanwhile."""

    def __init__(
        self,
        instance: Instance,
        horizon: int | None = None,
        backfill: str | None = None,
        engine: str = "auto",
        workload: int | None = None,
    ) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine: {engine!r}; choose from {', '.join(ENGINES)}")
        self.instance = instance
        self.horizon = check_horizon(horizon, below=MAX_EXACT)
        self.engine = engine
        self.rule = resolve_backfill(instance, backfill) if instance.rigid else None
        self.workload = workload
        self.done = 0  # jobs simulated so far (workload None)
        self._prepared: Any = None

    def prepared(self) -> Any:
        """The instance's compiled inputs, built once."""
        if self._prepared is None:
            from .compiled import Prepared

            self._prepared = Prepared(self.instance)
        return self._prepared

    def run(self, policy: Policy, members: Iterable[int] | None = None) -> Schedule:
        """``policy``'s schedule of the coalition ``members`` (all organizations by default),
        as :func:`simulate` gives it."""
        inst, horizon, rule, cls = self.instance, self.horizon, self.rule, type(policy)
        if cls.drives_simulation() and not getattr(policy, "_engine_pass", False):
            if members is not None:
                members = check_members(members, inst.k)
            params = inspect.signature(policy.run).parameters
            kw: dict[str, Any] = {"engine": self.engine} if "engine" in params else {}
            if self.engine == "compiled" and not kw:
                raise ValueError(
                    f"engine: 'compiled' cannot run {cls.__name__}: it builds its schedule "
                    "itself and its run() takes no engine (a plug-in runs in the Python "
                    "engine: 'python' or 'auto')"
                )
            if rule is not None:
                if "backfill" not in params:
                    raise TypeError(
                        f"{cls.__name__}.run() takes no 'backfill': it cannot schedule rigid "
                        "jobs (give run a keyword-only backfill parameter; docs/policies.md)"
                    )
                kw["backfill"] = rule
            return policy.run(inst, horizon, members, **kw)
        if cls.select is Policy.select:
            raise TypeError(
                f"{cls.__name__} cannot be simulated: it overrides neither select() nor run() "
                "(see docs/policies.md)"
            )
        mem = tuple(range(inst.k)) if members is None else check_members(members, inst.k)
        policy.prepare(inst, horizon)
        fallback = None
        inputs = self._compiled_inputs(policy, mem)
        if inputs is not None:
            fast = self._run_compiled(policy, members, mem, inputs)
            if isinstance(fast, Schedule):
                return fast
            fallback = fast
        sched = run_loop(
            inst,
            policy,
            horizon,
            mem,
            rule,
            _wants_events(policy),
            cls.on_release is not Policy.on_release,
        )
        if members is not None:
            sched.members = mem
        if fallback is not None:
            sched.info["fallback"] = fallback
        return sched

    def _compiled_inputs(self, policy: Policy, mem: tuple[int, ...]) -> dict[str, Any] | None:
        """The one place an engine is chosen: the policy's inputs to the compiled engine
        (:meth:`Policy.compiled_inputs`) when it runs there, ``None`` for the Python loop."""
        if self.engine == "python":
            return None
        entry = compiled_rule(policy)
        inputs = None if entry is None else policy.compiled_inputs()
        if self.engine == "compiled":
            if entry is None:
                raise ValueError(
                    f"engine: 'compiled' cannot run {type(policy).__name__}: it has no "
                    "compiled rule (the compiled engine runs exactly the classes of its table: "
                    f"{', '.join(compiled_names())}; a subclass or plug-in runs in the Python "
                    "engine: 'python' or 'auto')"
                )
            if inputs is None:
                raise ValueError(
                    f"engine: 'compiled' cannot run {policy!r}: it is not ready for the "
                    "compiled engine (its prepare() has not run)"
                )
            return inputs
        if inputs is None:
            return None
        jobs = self.instance.n if len(mem) == self.instance.k else self._jobs_of(mem)
        if self.workload is not None:
            jobs = max(jobs, self.workload)
        else:
            self.done += jobs
            jobs = max(jobs, self.done)
        return inputs if _worth_compiling(jobs) else None

    def _jobs_of(self, mem: tuple[int, ...]) -> int:
        counts = np.bincount(self.instance.org, minlength=self.instance.k)
        return int(counts[list(mem)].sum())

    def _run_compiled(
        self,
        policy: Policy,
        members: Iterable[int] | None,
        mem: tuple[int, ...],
        inputs: dict[str, Any],
    ) -> Schedule | str:
        """The compiled engine's schedule, or why it could not run (a str, after a
        :class:`CompiledFallback` warning)."""
        from .compiled import CompiledFallback, run_compiled

        entry = compiled_rule(policy)
        assert entry is not None
        out = run_compiled(
            self.prepared(),
            entry.name,
            self.rule,
            horizon=self.horizon,
            members=mem,
            seed=getattr(policy, "seed", 0),
            random_machines=policy.random_machines,
            inputs=inputs,
        )
        if isinstance(out, str):
            warnings.warn(
                f"{policy!r}: compiled engine not exact here ({out}); ran the Python engine",
                CompiledFallback,
                stacklevel=4,
            )
            return out
        start, machine, state, wide, M = out
        policy.compiled_result(state)
        info: dict[str, Any] = {"params": policy.params(), "engine": "compiled"}
        if self.rule is not None:
            info["backfill"] = self.rule
            info["too_wide"] = too_wide_info(self.instance, wide, M)
        return Schedule(
            instance=self.instance,
            start=start,
            machine=machine,
            policy=policy.name,
            horizon=None if self.horizon is None else int(self.horizon),
            members=None if members is None else mem,
            info=info,
        )


_warm = [False]


def numba_warm() -> bool:
    """Whether a numba kernel of coopsched has been compiled or loaded in this process.

    Found by looking at the loaded ``coopsched`` modules for numba dispatchers that hold a
    signature, so no list of kernels needs keeping (a kernel moved to another module is
    still found); once true it stays true. Imports nothing.
    """
    import sys

    if _warm[0]:
        return True
    if "numba" not in sys.modules:
        return False
    for name, mod in list(sys.modules.items()):
        if not name.startswith("coopsched.") or mod is None:
            continue
        for obj in vars(mod).values():
            if getattr(obj, "signatures", None) and hasattr(obj, "py_func"):
                _warm[0] = True
                return True
    return False


_decide_as: list[Instance | None] = [None]


@contextmanager
def engine_decides_as(instance: Instance) -> Iterator[None]:
    """Inside: ``engine="auto"`` picks the engine as it would for ``instance``, whatever
    instance it is given; a warm-up on a few of ``instance``'s jobs then compiles (or
    loads) exactly the kernels the real run will use
    (:func:`coopsched.experiments.compare.compare_policies`)."""
    before = _decide_as[0]
    _decide_as[0] = instance
    try:
        yield
    finally:
        _decide_as[0] = before


def _worth_compiling(jobs: int) -> bool:
    """A large workload (``jobs`` simulated), or numba already warm (one of our kernels has
    been loaded) and the engine's kernel ready to load (compiled in this process or in
    numba's disk cache): a small instance never pays the engine's first compilation
    (seconds) because another kernel, REF's say, warmed numba up
    (:func:`coopsched.online.jit.kernel_ready`)."""
    if _decide_as[0] is not None:
        jobs = _decide_as[0].n
    if jobs >= COMPILE_MIN_JOBS:
        return True
    if not numba_warm():
        return False
    from .compiled import _engine
    from .jit import kernel_ready

    return kernel_ready(_engine)
