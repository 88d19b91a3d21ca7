"""The Lublin-Feitelson workload model of rigid parallel jobs, written from its
published description (U. Lublin, D. G. Feitelson, "The workload on parallel
supercomputers: modeling the characteristics of rigid jobs", JPDC 63(11), 2003).

Per job:

* **size** -- serial with probability ``serial_prob``; otherwise ``x`` is drawn from a
  two-stage uniform on the log2 scale (``U(u_low, u_med)`` with probability ``u_prob``,
  else ``U(u_med, u_hi)``, ``u_hi = log2(machines)``, ``u_med = u_hi - 2.5``); with
  probability ``pow2_prob`` the size is ``2**round(x)``, else ``round(2**x)``;
* **run time** -- its logarithm is hyper-gamma: ``gamma(a1, b1)`` with probability
  ``p = pa * size + pb`` (clipped to [0, 1]), else ``gamma(a2, b2)``; capped at ``e^12``;
* **arrivals** -- inter-arrival times at rush hour are ``exp(gamma(a_arr, b_arr))``;
  a daily cycle slows the clock outside the rush hours: the day has 48 half-hour buckets
  whose weights follow the gamma(``a_num``, ``b_num``) density over half hours counted
  from 11:00, and time passes ``w_max / w_bucket`` times faster than the rush-hour clock.
  (This is our rendering of the model's two-gamma arrival process, not a port of its code.)

Defaults are the model's "whole sample" parameters (no batch/interactive split).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .limits import MAX_JOBS, MAX_MACHINES, check_count

BUCKETS = 48
BUCKET_SECONDS = 1800
CYCLE_START_BUCKET = 22  # 11:00


@dataclass(frozen=True)
class LublinParams:
    """The parameters of the Lublin-Feitelson model (its published defaults): job sizes, run times
    and arrivals."""

    serial_prob: float = 0.244
    pow2_prob: float = 0.576
    u_low: float = 0.8
    u_prob: float = 0.86
    u_med_offset: float = 2.5
    a1: float = 4.2
    b1: float = 0.94
    a2: float = 312.0
    b2: float = 0.03
    pa: float = -0.0054
    pb: float = 0.78
    a_arr: float = 10.2303 * 1.0225
    b_arr: float = 0.4871
    a_num: float = 8.1737
    b_num: float = 3.9631
    max_log_runtime: float = 12.0


def _gamma_cdf_weights(a: float, b: float) -> np.ndarray:
    """Weight of each half-hour bucket of the day (numerically integrated gamma pdf)."""
    w = np.zeros(BUCKETS)
    for bucket in range(BUCKETS):
        x0 = (
            bucket - CYCLE_START_BUCKET
            if bucket >= CYCLE_START_BUCKET
            else bucket + BUCKETS - CYCLE_START_BUCKET
        )
        xs = np.linspace(x0 + CYCLE_START_BUCKET, x0 + CYCLE_START_BUCKET + 1, 33)
        pdf = np.exp((a - 1) * np.log(xs) - xs / b - math.lgamma(a) - a * math.log(b))
        # numpy < 2.0 has only trapz; numpy 2's stubs no longer declare it
        w[bucket] = np.trapezoid(pdf, xs) if hasattr(np, "trapezoid") else np.trapz(pdf, xs)  # type: ignore[attr-defined]
    return w / w.sum()


def sizes(
    n: int, machines: int, rng: np.random.Generator, params: LublinParams = LublinParams()
) -> np.ndarray:
    """Numbers of processors (1..machines)."""
    u_hi = math.log2(max(machines, 2))
    u_med = max(params.u_low, u_hi - params.u_med_offset)
    serial = rng.random(n) < params.serial_prob
    first = rng.random(n) < params.u_prob
    x = np.where(first, rng.uniform(params.u_low, u_med, n), rng.uniform(u_med, u_hi, n))
    pow2 = rng.random(n) < params.pow2_prob
    q = np.where(pow2, 2.0 ** np.rint(x), np.rint(2.0**x))
    q = np.where(serial, 1, q)
    return np.clip(q, 1, machines).astype(np.int64)


def runtimes(
    q: np.ndarray, rng: np.random.Generator, params: LublinParams = LublinParams()
) -> np.ndarray:
    """Run times in seconds (hyper-gamma on the log scale, at least 1)."""
    n = len(q)
    p = np.clip(params.pa * q + params.pb, 0.0, 1.0)
    first = rng.random(n) < p
    g = np.where(first, rng.gamma(params.a1, params.b1, n), rng.gamma(params.a2, params.b2, n))
    return np.maximum(1, np.rint(np.exp(np.minimum(g, params.max_log_runtime)))).astype(np.int64)


def arrivals(
    n: int, rng: np.random.Generator, params: LublinParams = LublinParams(), start: int = 0
) -> np.ndarray:
    """Submit times (seconds from midnight of day 0) with the daily cycle."""
    w = _gamma_cdf_weights(params.a_num, params.b_num)
    speed = w / w.max()  # rush-hour seconds per real second in each bucket
    gaps = np.exp(rng.gamma(params.a_arr, params.b_arr, n))
    out = np.empty(n, dtype=np.int64)
    t = float(start)
    for i in range(n):
        need = gaps[i]
        while True:
            b = int(t // BUCKET_SECONDS) % BUCKETS
            left = BUCKET_SECONDS - (t % BUCKET_SECONDS)
            cap = left * speed[b]
            if need <= cap:
                t += need / speed[b]
                break
            need -= cap
            t += left
        out[i] = int(t)
    return out


def lublin_jobs(
    n: int,
    machines: int,
    *,
    seed: int = 0,
    params: LublinParams = LublinParams(),
    max_processors: int | None = None,
    release_zero: bool = False,
) -> pd.DataFrame:
    """``n`` jobs of the model for a machine of ``machines`` processors.

    Columns are SWF fields (``job``, ``submit``, ``run_time``, ``alloc_procs``,
    ``req_procs``, ``status``, ``user``); :func:`coopsched.workloads.swf.write_swf`
    writes them as a trace. ``max_processors`` caps job sizes (MOSP: below ``m``).
    """
    if n < 0 or machines < 1:
        raise ValueError("need n >= 0 jobs and at least one machine")
    check_count(n, MAX_JOBS, "jobs")
    check_count(machines, MAX_MACHINES, "machines")
    rng = np.random.default_rng(seed)
    q = sizes(n, machines, rng, params)
    if max_processors is not None:
        q = np.minimum(q, max(1, max_processors))
    rt = runtimes(q, rng, params)
    submit = np.zeros(n, dtype=np.int64) if release_zero else arrivals(n, rng, params)
    return pd.DataFrame(
        {
            "job": np.arange(1, n + 1),
            "submit": submit,
            "wait": -1,
            "run_time": rt,
            "alloc_procs": q,
            "req_procs": q,
            "status": 1,
            "user": -1,
        }
    )
