"""The result of an online simulation: who started where and when."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..workloads.instance import Instance
from . import utilities

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Schedule:
    """A schedule of an instance (or of a coalition's sub-instance).

    ``start[j]`` and ``machine[j]`` are ``-1`` for a job not started before the horizon
    (it is reported, never lost). ``machine`` numbers the machines organization by
    organization (:meth:`Instance.machine_owner`); in a coalition's schedule only the
    members' machines are used, keeping their global numbers.
    """

    instance: Instance
    start: np.ndarray
    machine: np.ndarray
    policy: str
    horizon: int | None = None
    members: tuple[int, ...] | None = None
    info: dict = field(default_factory=dict)

    @property
    def coalition(self) -> tuple[int, ...]:
        """Organizations taking part (all of them unless the schedule is a coalition's)."""
        return self.members if self.members is not None else tuple(range(self.instance.k))

    @property
    def in_coalition(self) -> np.ndarray:
        """Mask of the jobs that belong to the coalition's members."""
        if self.members is None:
            return np.ones(self.instance.n, dtype=bool)
        return np.isin(self.instance.org, np.array(self.members, dtype=np.int64))

    @property
    def started(self) -> np.ndarray:
        """Whether each job started (a start time of at least 0)."""
        return self.start >= 0

    @property
    def unstarted(self) -> np.ndarray:
        """Indices of the coalition's jobs that did not start before the horizon."""
        return np.flatnonzero(self.in_coalition & (self.start < 0))

    def _at(self, t: int | None) -> int:
        if t is not None:
            from ..workloads.limits import check_int

            return check_int(t, "horizon")  # a time >= 0, never a string or a float
        if self.horizon is not None:
            return int(self.horizon)
        ok = self.started
        if not ok.any():
            return 0
        s, p = self.start[ok], self.instance.size[ok]
        if int(s.max()) + int(p.max()) < 2**63:  # no int64 end can wrap
            return int((s + p).max())
        return max(int(a) + int(b) for a, b in zip(s.tolist(), p.tolist(), strict=True))

    def psi(self, t: int | None = None) -> list[int]:
        """``psi_sp`` of every organization at ``t`` (default: the horizon, or the end)."""
        inst = self.instance
        return utilities.psi_sp(
            inst.org, self.start, inst.size, self._at(t), inst.k, inst.processors
        )

    def work(self, t: int | None = None) -> list[int]:
        """Unit parts processed before ``t``, per organization (resource utilization)."""
        inst = self.instance
        return utilities.work_done(
            inst.org, self.start, inst.size, self._at(t), inst.k, inst.processors
        )

    def flow_time(self, t: int | None = None) -> list[int]:
        """Each organization's total flow time of the jobs completed by ``t`` (default: the
        horizon)."""
        inst = self.instance
        return utilities.flow_time(
            inst.org, inst.release, self.start, inst.size, self._at(t), inst.k
        )

    def completed(self, t: int | None = None) -> list[int]:
        """Each organization's number of jobs completed by ``t`` (default: the horizon)."""
        inst = self.instance
        return utilities.completed_jobs(inst.org, self.start, inst.size, self._at(t), inst.k)

    def allocation(self) -> tuple[np.ndarray, np.ndarray]:
        """Machines of every job, as ``(ptr, ids)``: job ``j`` ran on ``ids[ptr[j]:ptr[j+1]]``
        (nothing for a job not started). For sequential jobs, ``machine``; for rigid jobs
        (whose schedule keeps no machine identities, :mod:`coopsched.online.rigid`) a valid
        assignment made on demand: events in time order, completions first, each start
        taking the lowest-numbered free machines of the coalition (machines are identical,
        so it exists whenever the capacity holds, which the checker verifies)."""
        import heapq

        inst = self.instance
        n = inst.n
        width = inst.width
        ok = self.in_coalition & (self.start >= 0)
        counts = np.where(ok, width, 0)
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        ids = np.full(int(ptr[-1]), -1, dtype=np.int64)
        if not inst.rigid:
            ids[:] = self.machine[ok]
            return ptr, ids
        owner = inst.machine_owner()
        free = np.flatnonzero(np.isin(owner, list(self.coalition))).tolist()  # sorted: a heap
        jobs = np.flatnonzero(ok)
        end = self.start[jobs] + inst.size[jobs]
        # (time, 0 = end / 1 = start, FIFO order, job)
        fifo_rank = np.empty(n, dtype=np.int64)
        fifo_rank[inst.fifo_order()] = np.arange(n)
        events = sorted(
            [(int(e), 0, int(fifo_rank[j]), int(j)) for e, j in zip(end, jobs, strict=True)]
            + [(int(self.start[j]), 1, int(fifo_rank[j]), int(j)) for j in jobs]
        )
        for _, kind, _, j in events:
            a, b = ptr[j], ptr[j + 1]
            if kind == 0:
                for m in ids[a:b].tolist():
                    heapq.heappush(free, m)
            else:
                if b - a > len(free):
                    raise ValueError(
                        f"job {j} needs {b - a} machines at {self.start[j]}, {len(free)} are free"
                    )
                ids[a:b] = [heapq.heappop(free) for _ in range(b - a)]
        return ptr, ids

    def waits(self) -> np.ndarray:
        """Wait (start - release) of every started job of the coalition, ``-1`` otherwise."""
        inst = self.instance
        ok = self.in_coalition & (self.start >= 0)
        return np.where(ok, self.start - inst.release, -1)

    def bounded_slowdown(self, threshold: int = 10) -> np.ndarray:
        """``max(1, (wait + run) / max(run, threshold))`` of every started job (``nan``
        otherwise): the bounded slowdown of Feitelson et al., threshold 10 s by default."""
        inst = self.instance
        w = self.waits()
        run = inst.size.astype(np.float64)
        bsld = np.maximum(1.0, (w + run) / np.maximum(run, float(threshold)))
        return np.where(w >= 0, bsld, np.nan)

    def value(self, t: int | None = None) -> int:
        """Value of the coalition: sum of its members' ``psi_sp``."""
        psi = self.psi(t)
        return sum(psi[u] for u in self.coalition)

    def utilization(self, t: int | None = None) -> float:
        """Fraction of the coalition's machine time busy before ``t``."""
        t = self._at(t)
        m = int(sum(self.instance.machines[u] for u in self.coalition))
        if t <= 0 or m == 0:
            return 0.0
        return sum(self.work(t)) / (m * t)

    def per_org_table(self, t: int | None = None, overall: bool = False) -> list[dict]:
        """One row per organization: machines, jobs, started, completed, ``psi_sp``, work
        (unit parts processed before ``t``: a job on ``q`` processors counts ``q``), mean
        flow time of the completed jobs, mean wait and mean bounded slowdown (10 s,
        :meth:`bounded_slowdown`) of the started jobs, and ``utilization``: the
        organization's work over the capacity of the whole schedule (the coalition's
        machines times ``t``), its share of the platform's processor time, so that the rows
        add up to :meth:`utilization` (an organization running on others' machines may use
        more than its own contribution). With ``overall``, a last row ``"all"`` over the
        whole coalition."""
        t = self._at(t)
        inst = self.instance
        psi, work, ft, done = self.psi(t), self.work(t), self.flow_time(t), self.completed(t)
        waits, bsld = self.waits(), self.bounded_slowdown()
        cap = int(sum(int(inst.machines[u]) for u in self.coalition)) * t
        groups: list[tuple[str, list[int]]] = [
            (inst.organizations[u].name, [u]) for u in self.coalition
        ]
        if overall:
            groups.append(("all", list(self.coalition)))
        rows = []
        for name, us in groups:
            mask = np.isin(inst.org, us)
            ran = mask & (waits >= 0)
            n_done = sum(done[u] for u in us)
            w = sum(work[u] for u in us)
            rows.append(
                {
                    "org": name,
                    "machines": int(sum(int(inst.machines[u]) for u in us)),
                    "jobs": int(mask.sum()),
                    "started": int((mask & self.started).sum()),
                    "completed": n_done,
                    "psi_sp": sum(psi[u] for u in us),
                    "work": w,
                    "mean_flow": (sum(ft[u] for u in us) / n_done) if n_done else None,
                    "mean_wait": float(waits[ran].mean()) if ran.any() else None,
                    "mean_bsld": float(bsld[ran].mean()) if ran.any() else None,
                    "utilization": w / cap if cap > 0 else 0.0,
                }
            )
        return rows

    def treatments(self) -> dict:
        """The counted treatments of a rigid schedule's input (docs/conventions.md, "Rigid
        jobs and backfilling"): ``too_wide`` (jobs wider than the schedule's machines,
        never started, ``info["too_wide"]``), ``outlived_request`` (jobs of the schedule
        whose run time exceeds their requested time: the run time stands) and
        ``requested_filled`` (jobs of a trace window without a requested time, given the
        log's longest, ``{"jobs", "with"}``; none for a JSON instance). Empty for
        sequential jobs."""
        inst = self.instance
        if not inst.rigid:
            return {}
        mine = self.in_coalition
        req = inst.requested
        outlived = 0 if req is None else int((mine & (req >= 1) & (inst.size > req)).sum())
        wide = self.info.get("too_wide")
        if wide is None:
            width = inst.width
            M = int(sum(int(inst.machines[u]) for u in self.coalition))
            wide = {"count": int((mine & (width > M)).sum()), "machines": M}
        filled = inst.meta.get("requested_filled") or {"jobs": 0, "with": None}
        return {
            "too_wide": int(wide["count"]),
            "outlived_request": outlived,
            "requested_filled": dict(filled),
        }

    def treatment_note(self) -> str | None:
        """:meth:`treatments` as one line for a table's notes (``None`` for sequential jobs)."""
        tr = self.treatments()
        return treatment_line(tr) if tr else None

    def to_frame(self) -> pd.DataFrame:
        """The coalition's jobs as a pandas DataFrame, one row per job (input order).

        Columns: ``id`` (when the instance has ids), ``org`` (name), ``org_index``,
        ``release``, ``size``, ``start``, ``end``, ``wait``, ``machine`` and
        ``machine_org`` (the organization contributing the machine); the last five are
        missing (``<NA>``) for a job not started before the horizon.

        >>> from coopsched import make_instance, simulate
        >>> s = simulate(make_instance([1], [(0, 0, 2), (0, 1, 1)]), "fifo", horizon=2)
        >>> s.to_frame()[["release", "start", "end", "wait"]]
             release  start   end  wait
        job
        0          0      0     2     0
        1          1   <NA>  <NA>  <NA>
        """
        import pandas as pd

        inst = self.instance
        idx = np.flatnonzero(self.in_coalition)
        st = self.start[idx]
        ok = st >= 0

        def nullable(values: np.ndarray) -> pd.Series:
            return pd.Series(pd.array(np.where(ok, values, 0), dtype="Int64")).mask(~ok)

        cols: dict = {}
        if inst.ids is not None:
            cols["id"] = [inst.ids[j] for j in idx]
        owner = inst.machine_owner()
        names = np.array(inst.names, dtype=object)
        cols["org"] = names[inst.org[idx]]
        cols["org_index"] = inst.org[idx]
        cols["release"] = inst.release[idx]
        cols["size"] = inst.size[idx]
        if inst.rigid:
            cols["processors"] = inst.width[idx]
            if inst.requested is not None:
                req = inst.requested[idx]
                cols["requested"] = pd.Series(pd.array(req, dtype="Int64")).mask(req < 1)
        cols["start"] = nullable(st)
        cols["end"] = nullable(st + inst.size[idx])
        cols["wait"] = nullable(st - inst.release[idx])
        if inst.rigid:  # several machines per job: Schedule.allocation() lists them
            df = pd.DataFrame(cols, index=pd.Index(idx, name="job"))
            bsld = self.bounded_slowdown()[idx]
            df["bounded_slowdown"] = pd.Series(bsld).to_numpy()
            return df
        mach = self.machine[idx]
        cols["machine"] = nullable(mach)
        cols["machine_org"] = nullable(owner[np.where(ok, mach, 0)] if len(owner) else mach)
        return pd.DataFrame(cols, index=pd.Index(idx, name="job"))

    def per_org_frame(self, t: int | None = None):
        """:meth:`per_org_table` as a pandas DataFrame indexed by organization."""
        import pandas as pd

        return pd.DataFrame.from_records(self.per_org_table(t)).set_index("org")

    def report(self, t: int | None = None):
        """Per-organization results at ``t`` as a :class:`coopsched.report.Report`
        (what ``coopsched simulate`` prints; its JSON is :meth:`to_dict`)."""
        from ..report import Column, Report, num, pct

        t = self._at(t)
        inst = self.instance
        cols = [
            Column("org", left=True),
            Column("machines"),
            Column("jobs"),
            Column("started"),
            Column("completed"),
            Column("psi_sp"),
            Column("work"),
            Column("mean_flow", "mean flow", num(0)),
            Column("mean_wait", "mean wait", num(0)),
            Column("mean_bsld", "mean bsld", num(2)),
            Column("utilization", fmt=pct),
        ]
        return Report(
            title=f"{self.policy} on {inst.n} jobs, {inst.total_machines} machines, horizon {t}",
            columns=cols,
            rows=self.per_org_table(t, overall=True),
            notes=[
                f"utilization {self.utilization(t):.1%} (an organization's: its share of the "
                f"machines' time); {len(self.unstarted)} job(s) not started before t={t}"
            ]
            + (
                [
                    f"rigid jobs, backfilling {self.info.get('backfill')}; "
                    "bsld: bounded slowdown (10 s)",
                    str(self.treatment_note()),
                ]
                if inst.rigid
                else []
            ),
            document=functools.partial(self.to_dict, t),
        )

    def to_dict(self, t: int | None = None) -> dict:
        """JSON-ready: policy, horizon, utilities, work, ``per_org`` (the rows of
        :meth:`per_org_table`), ``overall`` (its ``"all"`` row), for rigid jobs ``backfill``,
        ``too_wide`` and ``treatments`` (:meth:`treatments`), and the jobs (CLI
        ``--format json``)."""
        inst = self.instance
        t = self._at(t)
        psi = self.psi(t)
        names = inst.names
        rows = self.per_org_table(t, overall=True)
        jobs = []
        for j in np.flatnonzero(self.in_coalition):
            d = {
                "org": names[inst.org[j]],
                "release": int(inst.release[j]),
                "size": int(inst.size[j]),
                "start": int(self.start[j]) if self.start[j] >= 0 else None,
            }
            if inst.rigid:
                d["processors"] = int(inst.width[j])
                if inst.requested is not None and inst.requested[j] >= 1:
                    d["requested"] = int(inst.requested[j])
            else:
                d["machine"] = int(self.machine[j]) if self.machine[j] >= 0 else None
            if inst.ids is not None:
                d["id"] = inst.ids[j]
            jobs.append(d)
        return {
            "policy": self.policy,
            "horizon": t,
            "utilities": {names[u]: psi[u] for u in self.coalition},
            "work": dict(
                zip(
                    [names[u] for u in self.coalition],
                    [self.work(t)[u] for u in self.coalition],
                    strict=True,
                )
            ),
            "unstarted": int(len(self.unstarted)),
            **(
                {"backfill": self.info.get("backfill"), "too_wide": self.info.get("too_wide")}
                if inst.rigid
                else {}
            ),
            "per_org": rows[:-1],
            "overall": rows[-1],
            **({"treatments": self.treatments()} if inst.rigid else {}),
            "jobs": jobs,
        }


def treatment_line(tr: dict) -> str:
    """The counted treatments (:meth:`Schedule.treatments`) as one line of a table's notes."""
    filled = tr["requested_filled"]
    return (
        f"{tr['too_wide']} job(s) wider than the machines never started; "
        f"{tr['outlived_request']} job(s) outlived their requested time (run time kept); "
        f"{filled['jobs']} job(s) without a requested time given the log's longest"
        + (f" ({filled['with']} s)" if filled["jobs"] else "")
    )


def expand_coalition(instance: Instance, members, sub: Schedule, policy: str) -> Schedule:
    """A schedule of ``instance.restrict(members)`` as a coalition schedule of ``instance``
    (job and machine numbers mapped back to the full instance)."""
    mem = sorted({int(u) for u in members})
    start = np.full(instance.n, -1, dtype=np.int64)
    machine = np.full(instance.n, -1, dtype=np.int64)
    keep = np.flatnonzero(np.isin(instance.org, mem))
    start[keep] = sub.start
    glob = np.flatnonzero(np.isin(instance.machine_owner(), mem))
    ran = sub.machine >= 0
    mapped = np.full(len(keep), -1, dtype=np.int64)
    mapped[ran] = glob[sub.machine[ran]]
    machine[keep] = mapped
    info = dict(sub.info)
    if info.get("blocked"):  # rigid engine's stops (coopsched.online.rigid): job numbers
        info["blocked"] = [
            (t, int(keep[j]), shadow, extra, tuple(int(keep[v]) for v in filled))
            for t, j, shadow, extra, filled in info["blocked"]
        ]
    return Schedule(instance, start, machine, policy, sub.horizon, tuple(mem), info)
