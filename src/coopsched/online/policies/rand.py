"""RAND, the randomized algorithm of Skowron & Rzadca, Fig. 6 (Sec. 5.1, used as a
heuristic for jobs of any size in Sec. 7.1).

``N`` random orderings of the organizations are drawn (seeded); for every ordering and
every organization ``u``, the coalition ``C'`` of ``u``'s predecessors and ``C' + u`` are
kept. Each kept coalition is scheduled alone by a simple greedy policy (FIFO by
default; Prop. 5.4 makes the choice irrelevant for unit jobs), and ``u``'s contribution
at ``t`` is estimated as the mean of ``v(C' + u, t) - v(C', t)`` over the ``N``
orderings (an unbiased estimate of Eq. 2). The grand coalition then starts the job of
the organization with the largest ``phi - psi`` (``phi``, ``psi`` evaluated at ``t``,
fixed during one event; ties to the older queue head as the picks at ``t`` began, so the
ranking is kept for the whole event time), as REF does.

``N`` is given directly (the paper uses 15 and 75) or from Theorem 5.6:
``N = ceil(k^2 / eps^2 * ln(k / (1 - lambda)))``.

Departures from Fig. 6: the pseudo-code's unit-job bookkeeping (``finPerOrg``,
``phi + 1`` after each pick) is replaced by the exact ``psi_sp`` of the engine, which
is what it computes for unit jobs and what the paper's experiments need for jobs of any
size; kept coalitions' values come from exact value curves of their schedules.
"""

from __future__ import annotations

import math

import numpy as np

from ...workloads.instance import Instance
from ...workloads.limits import MAX_SAMPLES, MAX_TABLE_BYTES, LimitError, check_count
from ..engine import Backend, Policy, SimView, simulate
from ..schedule import Schedule
from ..utilities import ValueCurve, step_events
from ._registry import register


def samples_for(k: int, epsilon: float, lam: float) -> int:
    """Theorem 5.6: ``N = ceil(k^2 / eps^2 * ln(k / (1 - lambda)))``."""
    if not epsilon > 0:
        raise ValueError("epsilon must be positive")
    if not 0 <= lam < 1:
        raise ValueError("lambda must be in [0, 1)")
    n = k * k / epsilon**2 * math.log(k / (1 - lam))
    if not math.isfinite(n):
        raise ValueError(f"epsilon={epsilon}, lambda={lam} ask for infinitely many samples")
    return max(1, math.ceil(n))


def _pinned_lead(pinned: np.ndarray | None) -> bool:
    """Whether the pinned jobs (in submission order) come before every other job: then
    FIFO starts them first without being told (as an audited window's backlog does)."""
    return pinned is None or not (np.diff(pinned.astype(np.int8)) > 0).any()


def _total(x: np.ndarray) -> int:
    """``sum(x)`` exactly."""
    if len(x) == 0:
        return 0
    if x.dtype != object and int(x.max()) * len(x) < 2**62:
        return int(x.sum())
    return sum(int(v) for v in x.tolist())


@register
class Rand(Policy):
    """RAND (Fig. 6) with ``n_samples`` orderings, or ``(epsilon, lam)`` of Thm 5.6."""

    name = "rand"
    rank = 10

    def __init__(
        self,
        n_samples: int = 15,
        *,
        epsilon: float | None = None,
        lam: float | None = None,
        sub_policy: str = "fifo",
        seed: int = 0,
    ) -> None:
        super().__init__(seed)
        if (epsilon is None) != (lam is None):
            raise ValueError("give both epsilon and lam, or neither")
        if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer):
            raise TypeError(f"n_samples: expected a whole number, got {n_samples!r}")
        if n_samples < 1:
            raise ValueError("n_samples must be at least 1")
        check_count(n_samples, MAX_SAMPLES, "RAND samples")
        self.n_samples = n_samples
        self.epsilon = epsilon
        self.lam = lam
        self.sub_policy = sub_policy

    def samples(self, k: int) -> int:
        """The number of orderings RAND samples for ``k`` organizations: from ``epsilon`` and
        ``lam`` when given (Theorem 5.6's bound, :func:`samples_for`), else ``n_samples``."""
        if self.epsilon is not None and self.lam is not None:  # both or neither (__init__)
            n = samples_for(k, self.epsilon, self.lam)
            check_count(
                n, MAX_SAMPLES, f"RAND samples for epsilon={self.epsilon}, lambda={self.lam}"
            )
            return n
        return self.n_samples

    def prepare(self, instance: Instance, horizon: int | None = None) -> None:
        """Draw the orderings and schedule every kept coalition alone."""
        from ..kernels import fifo_events, fifo_starts
        from ._registry import get_policy

        k = instance.k
        N = self.samples(k)
        self._check_table(k)
        masks, coeff = self._orderings(instance.canonical_order())
        self._masks = masks
        # each kept coalition's running count as merged events (step_events), all its value
        # needs (ValueCurve): one int64 time and one small delta per event, in one buffer
        # sized by the bound of two events per job, shrunk in place at the end
        jobs = np.bincount(instance.org, minlength=k)
        cap = sum(2 * int(jobs[[u for u in range(k) if m >> u & 1]].sum()) for m in masks)
        c_time = np.empty(cap, dtype=np.int64)
        c_delta: np.ndarray = np.empty(cap, dtype=self._delta_type(instance.n))
        c_ptr = np.zeros(len(masks) + 1, dtype=np.int64)
        self._work = [0] * len(masks)
        self._wide: dict[int, np.ndarray] = {}  # exact times of coalitions ending past int64
        self._curve_cache: list[ValueCurve | None] | None = None
        order = instance.fifo_order()
        org_bits = (1 << instance.org[order]) if k <= 62 else None  # one bit per organization
        machines = instance.machines
        pinned = None if instance.pinned is None else instance.pinned[order]
        if _pinned_lead(pinned):  # then in every coalition too (an audit's backlog)
            pinned = None
        rel_o, size_o = instance.release[order], instance.size[order]
        # the kept coalitions are one workload: its total size, not each coalition's, decides
        # whether compiling the engine pays (a cold kernel would leave every one in Python)
        backend = Backend(
            instance,
            horizon,
            getattr(self, "_backfill", None),
            getattr(self, "_engine", "auto"),
            workload=cap // 2,
        )
        used = 0
        for c, mask in enumerate(masks):
            if mask == 0:
                c_ptr[c + 1] = used
                continue
            members = [u for u in range(k) if mask >> u & 1]
            if org_bits is not None:
                sel = (org_bits & mask) != 0
            else:
                sel = np.isin(instance.org[order], members)
            fifo = (
                self.sub_policy == "fifo"
                and not instance.rigid
                and _pinned_lead(None if pinned is None else pinned[sel])
            )
            if fifo:
                # closed form, same starts as the engine's FIFO: pinned jobs, if any, come
                # first in submission order anyway; events written straight to the buffer
                sizes = size_o[sel]
                rel, mc = rel_o[sel], int(machines[members].sum())
                got = fifo_events(rel, sizes, mc, horizon, c_time[used:], c_delta[used:])
                if got is not None:
                    count, started = got
                    self._work[c] = _total(sizes[:started])
                    used += count
                    c_ptr[c + 1] = used
                    continue
                starts = fifo_starts(rel, sizes, mc, horizon)
            else:
                sched = backend.run(get_policy(self.sub_policy), members)
                keep = sched.in_coalition
                starts, sizes = sched.start[keep], instance.size[keep]
                weights = instance.width[keep]
            ok = starts >= 0
            if instance.rigid:  # a job on q processors: q unit parts at once
                times, delta = step_events(starts[ok], sizes[ok], weights[ok])
                self._work[c] = _total(sizes[ok] * weights[ok])
            else:
                times, delta = step_events(starts[ok], sizes[ok])
                self._work[c] = _total(sizes[ok])
            if times.dtype == object:
                self._wide[c] = times
                # the kernel never reaches 2^62 (its times stay below): clip there
                times = np.array([min(int(x), 2**62) for x in times.tolist()], dtype=np.int64)
            c_time[used : used + len(times)] = times
            c_delta[used : used + len(times)] = delta
            used += len(times)
            c_ptr[c + 1] = used
        c_time.resize(used, refcheck=False)  # in place: nothing else refers to the buffers
        c_delta.resize(used, refcheck=False)
        self._c_time, self._c_delta, self._c_ptr = c_time, c_delta, c_ptr
        self._coeff = np.zeros((k, len(masks)), dtype=np.int64)
        column = {mask: c for c, mask in enumerate(masks)}
        for u in range(k):
            for mask, n in coeff[u].items():
                self._coeff[u, column[mask]] += n
        self._N = N
        self._t = -1

    def _check_table(self, k: int) -> None:
        """Refuse, before drawing, a sample whose coalitions' tables would pass
        :data:`~coopsched.workloads.limits.MAX_TABLE_BYTES`: at most ``N k + 1`` (and
        ``2^k``) coalitions, each with one int64 per organization and about 300 bytes of
        dictionaries."""
        N = self.samples(k)
        kept = min(N * k + 1, 2**k) if k < 64 else N * k + 1
        need = kept * (8 * k + 300)
        if need > MAX_TABLE_BYTES:
            raise LimitError(
                f"RAND: n_samples={N:,} at {k} organizations keeps up to {kept:,} coalitions "
                f"(about {need / 1024**3:,.1f} GiB of tables), more than the limit of "
                f"{MAX_TABLE_BYTES / 1024**3:g} GiB; draw fewer samples"
            )

    def _orderings(self, order: np.ndarray) -> tuple[list[int], list[dict[int, int]]]:
        """The kept coalitions (bit masks, the empty one first) of the ``N`` seeded orderings,
        and for each organization ``u`` the signed count of each coalition in ``N phi_u``.

        A drawn permutation ranks positions of ``order`` (the instance's canonical order of
        organizations), not organization indices, so that the sample, like every decision,
        does not depend on names or listing order."""
        k = len(order)
        N = self.samples(k)
        rng = np.random.default_rng(self.seed)
        coalitions: dict[int, int] = {0: 0}
        coeff: list[dict[int, int]] = [dict() for _ in range(k)]
        for _ in range(N):
            perm = rng.permutation(k)
            mask = 0
            for i in perm:
                u = int(order[i])
                with_u = mask | (1 << u)
                for c in (mask, with_u):
                    coalitions.setdefault(c, len(coalitions))
                coeff[u][with_u] = coeff[u].get(with_u, 0) + 1
                coeff[u][mask] = coeff[u].get(mask, 0) - 1
                mask = with_u
        return list(coalitions), coeff

    @staticmethod
    def _delta_type(n: int) -> type:
        """A running count changes by at most ``n`` at one event: int32 holds that below 2^31."""
        return np.int32 if n < 2**31 else np.int64

    def memory_estimate(self, instance: Instance) -> int:
        """Bytes :meth:`prepare` and the run may hold at once, from the kept coalitions'
        job counts: the events buffer at its bound (two events per job and coalition, an
        int64 time and a delta; pages never written stay unallocated, and the buffer is
        shrunk in place), a coalition's scheduling temporaries (about 100 bytes per job
        of the largest), and the per-job arrays of the grand coalition's run (about 100
        bytes per job). An upper bound, used by the audit's memory guard."""
        k = instance.k
        self._check_table(k)
        masks, _ = self._orderings(instance.canonical_order())
        jobs = np.bincount(instance.org, minlength=k)
        per = [int(jobs[[u for u in range(k) if m >> u & 1]].sum()) for m in masks]
        width = 8 + np.dtype(self._delta_type(instance.n)).itemsize
        return 2 * width * sum(per) + 100 * max(per, default=0) + 100 * instance.n

    def compiled_inputs(self) -> dict | None:
        """Every kept coalition's merged running-count events (their values are advanced
        along them exactly as :class:`~coopsched.online.utilities.ValueCurve` evaluates
        them; times at or past ``2^62``, which the engine never reaches, are clipped there
        by :meth:`prepare`) and each organization's coefficients; ``None`` before
        :meth:`prepare` has run (then only the Python engine can run it)."""
        if not hasattr(self, "_c_time"):
            return None
        keep = [c for c, mask in enumerate(self._masks) if mask != 0]
        ptr = self._c_ptr
        coeff = self._coeff
        return {
            "c_ptr": np.array([ptr[c] for c in keep] + [ptr[-1]], dtype=np.int64),
            "c_time": self._c_time,
            "c_delta": self._c_delta,
            "coeff": np.ascontiguousarray(coeff[:, keep]).reshape(coeff.shape[0], -1),
            "n_samples": self._N,
        }

    def reset(self, view: SimView) -> None:
        self._t = -1
        self._key: list[int] = [0] * view.k

    @property
    def _curves(self) -> list[ValueCurve | None]:
        if self._curve_cache is None:
            ptr = self._c_ptr
            self._curve_cache = [
                None
                if mask == 0
                else ValueCurve.from_events(
                    self._wide.get(c, self._c_time[ptr[c] : ptr[c + 1]]),
                    self._c_delta[ptr[c] : ptr[c + 1]],
                    self._work[c],
                )
                for c, mask in enumerate(self._masks)
            ]
        return self._curve_cache

    @property
    def python_integers(self) -> bool:
        """Whether a kept coalition's value curve had to use Python integers (its values
        passed ``2^64``, or its times int64)."""
        return any(c is not None and c.python_ints for c in self._curve_cache or ())

    def _values(self, t: int) -> list[int]:
        return [0 if c is None else c.psi(t) for c in self._curves]

    def phi_times_n(self, t: int) -> list[int]:
        """``N * phi_u`` at ``t`` for every organization (exact integers)."""
        vals = self._values(t)
        return [
            sum(int(c) * v for c, v in zip(row, vals, strict=True) if c)
            for row in self._coeff.tolist()
        ]

    def select(self, view: SimView) -> int:
        t = view.t
        cands = view.candidates()  # oldest queue head first: ties keep the older
        if len(cands) == 1 or view.free >= view.queued_processors():
            # every queued job starts now: the pick cannot change any start time
            return cands[0]
        if t != self._t:
            self._t = t
            phiN = self.phi_times_n(t)
            self._key = [phiN[u] - self._N * view.psi(u) for u in range(view.k)]
        best = -1
        key = self._key
        for u in cands:
            if best < 0 or key[u] > key[best]:
                best = u
        return best

    def build(
        self, instance: Instance, horizon: int | None, *, backfill: str | None, engine: str
    ) -> Schedule:
        self._backfill = backfill  # rigid jobs: every kept coalition under the same rule
        self._engine = engine  # and in the same engine
        with self.engine_pass():  # the engine calls prepare() first
            sched = simulate(instance, self, horizon, backfill=backfill, engine=engine)
        sched.info["samples"] = self._N
        if self.python_integers:
            sched.info["python_integers"] = True
        sched.info["coalitions_kept"] = len(self._masks) - 1
        return sched
