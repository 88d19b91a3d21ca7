"""The online engine: event-driven, greedy, FIFO per organization, non-clairvoyant.

Model (Skowron & Rzadca, Sec. 2; docs/conventions.md §1): sequential jobs on identical machines;
time is integer; a job released at ``r`` may start at any ``s >= r`` and occupies one
machine during ``[s, s+p)``. At every event time ``t`` (a release or a completion) the
engine frees the machines whose jobs complete at ``t``, queues the jobs released at ``t``
(each organization's queue in input order) and then, while a machine is free and a job
waits, asks the policy for an organization; that organization's oldest waiting job
starts at ``t``. The cost grows with the number of events, not with the horizon.

Pinned jobs (:attr:`Instance.pinned`, docs/conventions.md §5: jobs already running when an audited
window opens) are started by the engine itself, before the policy is asked: while a pinned
job waits and a machine is free, the oldest waiting pinned job starts (a pinned job is
always at the head of its organization's queue). The policy still sees these starts
through :meth:`Policy.on_start`.

Policies see the world through a :class:`SimView`: release order and release time of
each queue head, queue lengths, running counts, machines, and utilities computed from
elapsed time. A job's size is revealed to the policy only by :meth:`Policy.on_complete`,
once the job has completed. The contract is documented in ``docs/policies.md``.
"""

from __future__ import annotations

import heapq
import inspect
import random
import typing
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from ..workloads.instance import Instance, InstanceError
from ..workloads.limits import MAX_EXACT, check_horizon, check_members
from .schedule import Schedule


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
    ``rigid``. Methods give ``psi_sp`` and processed
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
        "_free",
        "order",
        "rigid",
        "queued",
        "_nfree",
        "_width",
        "_req",
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
        self._free: list[int] = []
        self.order: tuple[int, ...] = tuple(members)
        self.rigid = False
        self.queued = self.waiting  # rigid jobs: the true counts (waiting may hide some)
        self._nfree = 0
        self._width: list[int] = []
        self._req: list[int] = []

    @property
    def free(self) -> int:
        """Number of free machines right now."""
        return self._nfree if self.rigid else len(self._free)

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
    * :meth:`run`: for a policy that builds its schedule itself (REF and RAND simulate
      every coalition); :func:`simulate` then calls it, so both entry points agree.

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

    def run(
        self,
        instance: Instance,
        horizon: int | None = None,
        members: Iterable[int] | None = None,
        *,
        backfill: str | None = None,
    ) -> Schedule:
        """Simulate this policy on ``instance`` (optionally only a coalition's part; a rigid
        instance under the backfilling rule ``backfill``)."""
        return simulate(instance, self, horizon=horizon, members=members, backfill=backfill)

    @classmethod
    def drives_simulation(cls) -> bool:
        """True when the policy builds its schedule itself (overrides :meth:`run`)."""
        return cls.run is not Policy.run

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


def _as_index(policy: Policy, u: object, t: int) -> int:
    """A pick that is not a plain int: a numpy integer is accepted, anything else (a bool,
    a float, ``None``) is a :class:`PolicyError` naming the policy, the value and ``t``."""
    if isinstance(u, np.integer):
        return int(u)
    raise PolicyError(f"{policy!r}.select returned {u!r} at t={t}: not an organization index")


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
    size (a :class:`ValueError` for a policy without a compiled rule), ``"python"`` never;
    ``"auto"`` (the default) uses it for those policies except on small instances (under
    :data:`COMPILE_MIN_JOBS` jobs) while no numba kernel has run in the process, so a short
    command never pays numba's start-up, or while the engine's kernel would have to be
    compiled first (not in numba's disk cache yet). ``compiled=True/False`` is the older
    spelling of ``engine="compiled"/"python"``. ``Schedule.info["engine"]`` says which ran;
    when int64 cannot be proven exact the Python path runs instead, with a
    :class:`~coopsched.online.compiled.CompiledFallback` warning and the reason in
    ``info["fallback"]``.
    """
    if compiled is not None:
        engine = "compiled" if compiled else "python"
    if engine not in ENGINES:
        raise ValueError(f"engine: {engine!r}; choose from {', '.join(ENGINES)}")
    check_horizon(horizon, below=MAX_EXACT)
    cls = type(policy)
    rule = None
    if instance.rigid:
        from .rigid import resolve_backfill

        rule = resolve_backfill(instance, backfill)
    if cls.drives_simulation() and not getattr(policy, "_engine_pass", False):
        if members is not None:
            members = check_members(members, instance.k)
        if rule is not None:
            if "backfill" not in inspect.signature(policy.run).parameters:
                raise TypeError(
                    f"{cls.__name__}.run() takes no 'backfill': it cannot schedule rigid jobs "
                    "(give run a keyword-only backfill parameter; docs/policies.md)"
                )
            return policy.run(instance, horizon, members, backfill=rule)
        return policy.run(instance, horizon, members)
    if cls.select is Policy.select:
        raise TypeError(
            f"{cls.__name__} cannot be simulated: it overrides neither select() nor run() "
            "(see docs/policies.md)"
        )
    inst = instance
    k = inst.k
    mem = tuple(range(k)) if members is None else check_members(members, k)
    policy.prepare(inst, horizon)
    fallback = None
    if rule is not None:
        from .rigid import simulate_rigid

        if engine == "compiled" or (engine == "auto" and _worth_compiling(instance, True)):
            fast = _run_compiled_rigid(inst, policy, engine, horizon, members, mem, rule)
            if not isinstance(fast, str):
                return fast
            fallback = fast
        sched = simulate_rigid(inst, policy, horizon, None if members is None else mem, mem, rule)
        if fallback is not None and fallback != "no rule":
            sched.info["fallback"] = fallback
        return sched
    if engine == "compiled" or (engine == "auto" and _worth_compiling(instance)):
        from .backends import compiled_rule

        entry = compiled_rule(policy)
        inputs = None if entry is None else entry.inputs(policy)
        if entry is None or inputs is None:
            if engine == "compiled":
                raise ValueError(f"{policy!r} has no compiled rule (engine='compiled')")
        else:
            fast = _run_compiled(inst, policy, entry, inputs, horizon, members, mem)
            if not isinstance(fast, str):
                return fast
            fallback = fast
    is_member = np.zeros(k, dtype=bool)
    is_member[list(mem)] = True
    order = inst.fifo_order()
    order = order[is_member[inst.org[order]]]
    n = len(order)
    rel = inst.release[order].tolist()
    owner = inst.org[order].tolist()
    size = inst.size[order].tolist()
    pinned = [False] * n if inst.pinned is None else inst.pinned[order].tolist()
    pin_waiting = 0
    queues: list[list[int]] = [[] for _ in range(k)]
    for pos, u in enumerate(owner):
        queues[u].append(pos)
    head = [0] * k
    machine_owner = inst.machine_owner().tolist()
    machines = inst.machines.tolist()
    view = SimView(k, mem, machines, machine_owner)
    view.order = tuple(u for u in inst.canonical_order().tolist() if is_member[u])
    M = len(machine_owner)
    free = [m for m in range(M) if is_member[machine_owner[m]]]  # sorted: a valid heap
    view._free = free
    start = [-1] * n
    where = [-1] * n
    on_machine = [-1] * max(M, 1)
    comp: list[int] = []  # heap of end * M + machine
    INF = float("inf")
    T = INF if horizon is None else int(horizon)
    waiting, running = view.waiting, view.running
    psi_acc, work_acc, tl, head_pos = view._psi, view._work, view._tl, view._head_pos
    BIG = n + 1
    for u in range(k):
        head_pos[u] = BIG
    rank_pos = view._rank_pos = head_pos[:]  # the tie order, taken once per event time
    ranked_at = -1
    view._rel = rel
    policy.reset(view)
    rng = random.Random(getattr(policy, "seed", 0)) if policy.random_machines else None
    select = policy.select
    events = _wants_events(policy)
    on_release = policy.on_release if cls.on_release is not Policy.on_release else None
    i = 0
    total_waiting = 0
    MM = max(M, 1)
    while True:
        t_rel = rel[i] if i < n else INF
        t_comp = comp[0] // MM if comp else INF
        t = t_rel if t_rel < t_comp else t_comp
        if isinstance(t, float) or t >= T:  # event times are ints: a float is INF, no event
            break
        view.t = t
        # completions at t
        while comp and comp[0] // MM == t:
            m = heapq.heappop(comp) % MM
            pos = on_machine[m]
            u = owner[pos]
            d = t - tl[u]
            if d:  # bring u's accumulators to t (inlined: this loop is the hot path)
                r = running[u]
                psi_acc[u] += work_acc[u] * d + r * (d * (d + 1) // 2)
                work_acc[u] += r * d
                tl[u] = t
            running[u] -= 1
            on_machine[m] = -1
            if rng is None:
                heapq.heappush(free, m)
            else:
                free.append(m)
            if events:
                policy.on_complete(view, u, m, size[pos])
        # releases at t
        while i < n and rel[i] == t:
            u = owner[i]
            if not waiting[u]:
                head_pos[u] = i
            waiting[u] += 1
            total_waiting += 1
            pin_waiting += pinned[i]
            i += 1
            if on_release is not None:
                on_release(view, u)
        # greedy starts at t (pinned jobs first, oldest first, without asking the policy)
        while free and total_waiting:
            if pin_waiting:
                u = min((head_pos[x], x) for x in mem if waiting[x] and pinned[head_pos[x]])[1]
                pin_waiting -= 1
            else:
                if ranked_at != t:  # the queue heads as the policy's picks at t begin
                    ranked_at = t
                    rank_pos[:] = head_pos
                u = select(view)
            if u.__class__ is not int:
                u = _as_index(policy, u, t)
            if not 0 <= u < k or not waiting[u]:
                raise PolicyError(
                    f"{policy!r}.select returned {u!r} at t={t}: "
                    + (
                        f"not an organization index (0..{k - 1})"
                        if not 0 <= u < k
                        else f"organization {u} has no waiting job"
                    )
                )
            pos = queues[u][head[u]]
            head[u] += 1
            waiting[u] -= 1
            total_waiting -= 1
            head_pos[u] = queues[u][head[u]] if waiting[u] else BIG
            if rng is None:
                m = heapq.heappop(free)
            else:
                j = rng.randrange(len(free))
                free[j], free[-1] = free[-1], free[j]
                m = free.pop()
            d = t - tl[u]
            if d:
                r = running[u]
                psi_acc[u] += work_acc[u] * d + r * (d * (d + 1) // 2)
                work_acc[u] += r * d
                tl[u] = t
            running[u] += 1
            start[pos] = t
            where[pos] = m
            on_machine[m] = pos
            heapq.heappush(comp, (t + size[pos]) * MM + m)
            if events:
                policy.on_start(view, u, m)
    if n and max(start) > 2**63 - 1:  # a refusal, never a wrapped start time
        raise InstanceError(
            f"{policy.name}: a job would start at {max(start)} s, beyond 2^63 - 1; "
            "give a horizon below that"
        )
    start_arr = np.full(inst.n, -1, dtype=np.int64)
    mach_arr = np.full(inst.n, -1, dtype=np.int64)
    start_arr[order] = np.array(start, dtype=np.int64)
    mach_arr[order] = np.array(where, dtype=np.int64)
    return Schedule(
        instance=inst,
        start=start_arr,
        machine=mach_arr,
        policy=policy.name,
        horizon=None if horizon is None else int(horizon),
        members=None if members is None else mem,
        info={"params": policy.params(), "engine": "python"}
        | ({} if fallback is None else {"fallback": fallback}),
    )


#: Below this many jobs the Python engine is used by default while no numba kernel has
#: run in this process: numba's first kernel load (its compiler's start-up, about half a
#: second) costs more than simulating that many jobs in Python.
COMPILE_MIN_JOBS = 50_000

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


def _worth_compiling(inst: Instance, rigid: bool = False) -> bool:
    """Large instances, or numba already warm (one of our kernels has been loaded) and the
    engine's kernel ready to load (compiled in this process or in numba's disk cache): a
    small instance never pays the engine's first compilation (seconds) because another
    kernel, REF's say, warmed numba up (:func:`coopsched.online.jit.kernel_ready`)."""
    if _decide_as[0] is not None:
        inst = _decide_as[0]
    if inst.n >= COMPILE_MIN_JOBS:
        return True
    if not numba_warm():
        return False
    from .jit import kernel_ready

    if rigid:
        from .compiled_rigid import _engine_rigid

        return kernel_ready(_engine_rigid)
    from .compiled import _engine

    return kernel_ready(_engine)


def _run_compiled_rigid(inst, policy, engine, horizon, members, mem, rule) -> Schedule | str:
    """The compiled path for rigid jobs: a schedule, or why it could not run ("no rule"
    for a policy without a compiled rule under ``engine="auto"``)."""
    import warnings

    from .backends import compiled_rule

    entry = compiled_rule(policy)
    inputs = None if entry is None else entry.inputs(policy)
    if entry is None or inputs is None:
        if engine == "compiled":
            raise ValueError(f"{policy!r} has no compiled rule (engine='compiled')")
        return "no rule"
    from .compiled import CompiledFallback
    from .compiled_rigid import run_compiled_rigid
    from .rigid import too_wide_info

    out = run_compiled_rigid(
        inst,
        entry.name,
        rule,
        horizon=horizon,
        members=mem,
        seed=getattr(policy, "seed", 0),
        random_machines=policy.random_machines,
        **inputs,
    )
    if isinstance(out, str):
        warnings.warn(
            f"{policy!r}: compiled engine not exact here ({out}); ran the Python engine",
            CompiledFallback,
            stacklevel=3,
        )
        return out
    start, state, wide, M = out
    if entry.done is not None:
        entry.done(policy, state)
    return Schedule(
        instance=inst,
        start=start,
        machine=np.full(inst.n, -1, dtype=np.int64),
        policy=policy.name,
        horizon=None if horizon is None else int(horizon),
        members=None if members is None else mem,
        info={
            "params": policy.params(),
            "engine": "compiled",
            "backfill": rule,
            "too_wide": too_wide_info(inst, wide, int(M)),
        },
    )


def _run_compiled(inst, policy, entry, inputs, horizon, members, mem) -> Schedule | str:
    """The compiled path of :func:`simulate`: a schedule, or why it could not run."""
    import warnings

    from .compiled import CompiledFallback, run_compiled

    out = run_compiled(
        inst,
        entry.name,
        horizon=horizon,
        members=mem,
        seed=getattr(policy, "seed", 0),
        random_machines=policy.random_machines,
        **inputs,
    )
    if isinstance(out, str):
        warnings.warn(
            f"{policy!r}: compiled engine not exact here ({out}); ran the Python engine",
            CompiledFallback,
            stacklevel=3,
        )
        return out
    start, machine, state = out
    if entry.done is not None:
        entry.done(policy, state)
    return Schedule(
        instance=inst,
        start=start,
        machine=machine,
        policy=policy.name,
        horizon=None if horizon is None else int(horizon),
        members=None if members is None else mem,
        info={"params": policy.params(), "engine": "compiled"},
    )
