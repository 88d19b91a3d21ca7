"""Checks every online policy must pass, for built-in and third-party policies alike.

:func:`check_policy` is coopsched's counterpart of scikit-learn's ``check_estimator``:
it runs a policy on seeded random instances and checks the contract of
``docs/policies.md``:

* every schedule satisfies the invariants of :mod:`coopsched.online.checker` (release,
  one job per machine, FIFO within an organization, greedy, nothing lost), with and
  without a horizon, for the grand coalition and for a sub-coalition;
* the parameters of ``__init__`` are stored under their own names (``params()`` reads
  them back);
* ``simulate(inst, p)`` and ``p.run(inst)`` give the same schedule, and so does a
  fresh ``type(p)(**p.params())`` (parameters round-trip, runs are reproducible);
* non-clairvoyance (Skowron & Rzadca, Sec. 2): changing the size of a job that has not
  completed by ``T`` changes nothing before ``T``. For a policy that drives its own
  simulation (REF, RAND), whose coalition schedules may legitimately complete a job
  earlier than the grand coalition does, only jobs released at or after ``T`` are
  changed.

>>> from coopsched.online.policies import Fifo
>>> check_policy(Fifo, instances=3)
"""

from __future__ import annotations

import numpy as np

from .online.checker import check_schedule
from .online.engine import Policy, simulate
from .workloads.instance import Instance, Organization

__all__ = ["PolicyCheckError", "check_policy", "random_instance"]


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


def _fail(cls: type[Policy], what: str, inst: Instance, detail: str) -> PolicyCheckError:
    jobs = list(zip(inst.org.tolist(), inst.release.tolist(), inst.size.tolist(), strict=True))
    return PolicyCheckError(
        f"{cls.__name__} ({cls.name}): {what}: {detail}\n"
        f"  instance: machines {inst.machines.tolist()}, jobs (org, release, size) {jobs}"
    )


def _same(a, b) -> bool:
    return np.array_equal(a.start, b.start) and np.array_equal(a.machine, b.machine)


def check_policy(
    cls: type[Policy], params: dict | None = None, *, instances: int = 25, seed: int = 0
) -> None:
    """Raise :class:`PolicyCheckError` if ``cls(**params)`` breaks the policy contract.

    ``instances`` seeded random instances are tried (see the module docstring).
    """
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise PolicyCheckError(f"{cls!r} is not a subclass of coopsched Policy")
    params = dict(params or {})
    pol = cls(**params)
    missing = [n for n in cls.param_names() if not hasattr(pol, n)]
    if missing:
        raise PolicyCheckError(
            f"{cls.__name__}: __init__ parameter(s) {', '.join(missing)} not stored as "
            "attributes of the same names, so params() cannot read them back"
        )
    again = cls(**pol.params())
    if repr(again) != repr(pol):
        raise PolicyCheckError(
            f"{cls.__name__}: parameters do not round-trip: {pol!r} became {again!r}"
        )
    rng = np.random.default_rng(seed)
    drives = cls.drives_simulation()
    for _ in range(instances):
        inst = random_instance(rng)
        ends = inst.release.max() + inst.size.sum() + 1
        T = int(rng.integers(1, ends))
        for horizon in (None, T):
            s = simulate(inst, cls(**params), horizon)
            bad = check_schedule(s)
            if bad:
                raise _fail(cls, f"invalid schedule (horizon {horizon})", inst, str(bad[0]))
            if not _same(s, cls(**params).run(inst, horizon)):
                raise _fail(cls, "simulate() and run() disagree", inst, f"horizon {horizon}")
            if not _same(s, simulate(inst, cls(**pol.params()), horizon)):
                raise _fail(cls, "two runs with the same parameters differ", inst, "")
        if inst.k > 1:
            members = sorted(
                rng.choice(inst.k, size=int(rng.integers(1, inst.k)), replace=False).tolist()
            )
            s = simulate(inst, cls(**params), T, members)
            bad = check_schedule(s)
            if bad:
                raise _fail(cls, f"invalid coalition schedule {members}", inst, str(bad[0]))
        # non-clairvoyance: sizes of jobs unfinished at T must not matter before T
        T = int(rng.integers(1, inst.release.max() + 2))  # some jobs may come later
        s = simulate(inst, cls(**params), T)
        done = (s.start >= 0) & (s.start + inst.size <= T)
        change = inst.release >= T if drives else ~done
        if not change.any():
            continue
        size2 = inst.size.copy()
        size2[change] += rng.integers(1, 5, size=int(change.sum()))
        other = Instance(inst.organizations, inst.org, inst.release, size2)
        s2 = simulate(other, cls(**params), T)
        before = (s.start >= 0) | (s2.start >= 0)
        if not (
            np.array_equal(s.start[before], s2.start[before])
            and np.array_equal(s.machine[before], s2.machine[before])
        ):
            j = int(np.flatnonzero(before & ((s.start != s2.start) | (s.machine != s2.machine)))[0])
            raise _fail(
                cls,
                "clairvoyant: the size of an unfinished job changed a decision",
                inst,
                f"horizon {T}; job {j} starts at {s.start[j]} or {s2.start[j]} "
                f"when sizes {size2[change].tolist()} replace {inst.size[change].tolist()}",
            )
