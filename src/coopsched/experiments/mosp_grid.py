"""Reproduction of Pascual, Rzadca, Trystram, Sec. 6: the 4800-instance grid and Figure 7.

uni and swf instances; N in {2, 5, 10, 20}; n in {10, 50, 100, 500}; m in {32, 128, 512};
50 instances each. For every instance: the scores ``Cmax / max(Wbar, pmax)`` of LOCAL,
the meta-algorithm (MOLBA(2), MOLBA(3) as fallback) and ILBA on its result; whether any
organization's makespan grew; whether the theorem bounds hold. Figure 7 (a-d): average
scores by N (averaged over n) and by n (averaged over N), with standard deviations.
"""

from __future__ import annotations

import itertools
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..mosp.algorithms import ilba, local, meta
from ..mosp.generators import mosp_instance
from ..mosp.schedule import check
from . import study as opt
from .study import Study, register_study

PAPER: dict[str, Any] = {
    "local_uni_by_N_without_n10": {2: 1.57, 5: 3.00, 10: 4.93, 20: 7.35},
    "mean_molba": {"uni": 1.96, "swf": 1.09},
    "mean_ilba": {"uni": 1.25, "swf": 1.03},
    "score1_share": {"molba": 0.29, "ilba": 0.40},
    "worst": {"local": 12.12, "molba": 2.98, "ilba": 1.92},
    "grew": 0,
    "corr_N_local_combined": 0.38,
    # Sec. 6.2.5: p-values of two-tailed type-3 (Welch) t-tests, LOCAL / MOLBA(2) / ILBA
    "p_m": {(32, 128): (0.35, 0.17, 0.53), (128, 512): (0.56, 0.62, 0.35)},
}


def welch_p(a, b) -> float:
    """Two-tailed p-value of Welch's (type-3) t-test, with the normal approximation of the
    t distribution (exact to about 0.001 for the paper's 1,600 instances per group)."""
    import math

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or len(b) < 2:
        return float("nan")
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    if se == 0:
        return 1.0 if a.mean() == b.mean() else 0.0
    t = (a.mean() - b.mean()) / se
    return math.erfc(abs(t) / math.sqrt(2))


@dataclass
class GridSpec:
    """The grid of ``reproduce mosp`` (Pascual, Rzadca, Trystram, Sec. 6): instance kinds, numbers
    of organizations ``Ns``, of jobs ``ns`` and of processors ``ms``, and the instances per
    cell."""

    kinds: tuple[str, ...] = ("uni", "swf")
    Ns: tuple[int, ...] = (2, 5, 10, 20)
    ns: tuple[int, ...] = (10, 50, 100, 500)
    ms: tuple[int, ...] = (32, 128, 512)
    instances: int = 50
    seed: int = 0


def grid_tasks(spec: GridSpec) -> list[dict]:
    """One task per cell of the grid."""
    return [
        {"kind": kind, "N": N, "n": n, "m": m, "instances": spec.instances, "seed": spec.seed}
        for kind, N, n, m in itertools.product(spec.kinds, spec.Ns, spec.ns, spec.ms)
    ]


def evaluate_cell(task: dict) -> dict:
    """All instances of one (kind, N, n, m) cell (a sweep task)."""
    out: dict[str, list] = {
        k: [] for k in ("local", "molba", "ilba", "grew", "fallback", "bound_ok", "valid", "alpha")
    }
    # a stable seed per cell (str hashes are salted per process; crc32 is not)
    base_seed = zlib.crc32(f"{task['kind']}-{task['N']}-{task['n']}-{task['m']}".encode()) % 100_000
    for i in range(task["instances"]):
        seed = task["seed"] * 1_000_003 + base_seed * 1000 + i
        inst = mosp_instance(task["kind"], task["N"], task["n"], task["m"], seed=seed)
        loc = local(inst)
        mol = meta(inst)
        il = ilba(mol)
        alpha = mol.info["alpha"]
        rep_m = check(mol, bound_for="molba3" if alpha == 3 else "molba2")
        rep_i = check(il, bound_for="molba3" if alpha == 3 else "molba2")
        out["local"].append(loc.score())
        out["molba"].append(rep_m.score)
        out["ilba"].append(rep_i.score)
        out["grew"].append(bool(rep_m.grew or rep_i.grew))
        out["fallback"].append(bool(mol.info["fallback"]))
        out["bound_ok"].append(bool(rep_m.within_bound and rep_i.within_bound))
        out["valid"].append(bool(rep_m.valid and rep_i.valid))
        out["alpha"].append(alpha)
    return out


def frame(rows: list[dict]) -> pd.DataFrame:
    """One row per instance: the scores of LOCAL, MOLBA(2) and ILBA and what the checkers found."""
    recs = []
    for r in rows:
        t = r["task"]
        for i in range(len(r["local"])):
            recs.append(
                {
                    "kind": t["kind"],
                    "N": t["N"],
                    "n": t["n"],
                    "m": t["m"],
                    "instance": i,
                    **{
                        k: r[k][i]
                        for k in ("local", "molba", "ilba", "grew", "fallback", "bound_ok", "valid")
                    },
                }
            )
    return pd.DataFrame(recs)


def figure7(df: pd.DataFrame, png: Path) -> None:
    """Write Figure 7 (mean scores against N and n, for each instance kind) to ``png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), sharey=False)
    panels = [
        ("uni", "N", "(a) uni, average over n"),
        ("uni", "n", "(b) uni, average over N"),
        ("swf", "N", "(c) swf, average over n"),
        ("swf", "n", "(d) swf, average over N"),
    ]
    for ax, (kind, var, title) in zip(axes.flat, panels, strict=True):
        sub = df[df.kind == kind]
        if sub.empty:
            ax.set_visible(False)
            continue
        g = sub.groupby(var)
        xs = np.arange(len(g))
        for off, alg, label in (
            (-0.2, "local", "Local"),
            (0.0, "molba", "MOLBA(2)"),
            (0.2, "ilba", "ILBA"),
        ):
            ax.errorbar(
                xs + off, g[alg].mean(), yerr=g[alg].std(ddof=1), fmt="o", capsize=3, label=label
            )
        ax.set_xticks(xs, [str(v) for v in g.groups])
        ax.set_xlabel("number of organizations N" if var == "N" else "number of jobs n")
        ax.set_ylabel("score Cmax / max(Wbar, pmax)")
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes.flat[0].legend()
    fig.suptitle("Pascual, Rzadca, Trystram, Figure 7 (reproduced): mean score, error bars = std")
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)


def summarize(df: pd.DataFrame, spec: GridSpec) -> str:
    """The study's ``summary.md``: our mean scores beside the paper's."""
    f = _f
    lines = [
        "# MOSP, Section 6: LOCAL, MOLBA(2) and ILBA on random instances",
        "",
        f"{len(df)} instances ({spec.instances} per cell; kinds {', '.join(spec.kinds)}; N in {spec.Ns}; "
        f"n in {spec.ns}; m in {spec.ms}). Score = Cmax / max(Wbar, pmax). Paper: Pascual, Rzadca, "
        "Trystram, 'Cooperation in multi-organization scheduling', Sec. 6.2. Figure: `fig7.png`.",
        "",
        "| measure | ours | paper |",
        "|---|---|---|",
    ]
    uni = df[(df.kind == "uni") & (df.n != 10)]
    for N, paper in PAPER["local_uni_by_N_without_n10"].items():
        if N in spec.Ns and not uni.empty:
            lines.append(
                f"| LOCAL score, uni, N={N} (n=10 left out) | {f(uni[uni.N == N]['local'].mean())} | {paper:.2f} |"
            )
    for kind in spec.kinds:
        sub = df[df.kind == kind]
        lines.append(
            f"| mean MOLBA(2) score, {kind} | {f(sub['molba'].mean())} | {PAPER['mean_molba'][kind]:.2f} |"
        )
        lines.append(
            f"| mean ILBA score, {kind} | {f(sub['ilba'].mean())} | {PAPER['mean_ilba'][kind]:.2f} |"
        )
    lines.append(
        f"| share of instances at score 1, MOLBA(2) | {(df['molba'] <= 1 + 1e-12).mean():.0%} | {PAPER['score1_share']['molba']:.0%} |"
    )
    lines.append(
        f"| share of instances at score 1, ILBA | {(df['ilba'] <= 1 + 1e-12).mean():.0%} | at least {PAPER['score1_share']['ilba']:.0%} |"
    )
    for alg in ("local", "molba", "ilba"):
        w = df.iloc[df[alg].argmax()]  # the first worst instance (as idxmax)
        lines.append(
            f"| worst {alg.upper() if alg != 'molba' else 'MOLBA(2)'} score | {f(w[alg])} ({w.kind}, N={w.N}, n={w.n}, m={w.m}) | {PAPER['worst'][alg]:.2f} |"
        )
    lines.append(
        f"| instances where an organization's makespan grew | {int(df['grew'].sum())} | {PAPER['grew']} |"
    )
    lines.append(
        f"| instances where the meta-algorithm fell back to MOLBA(3) | {int(df['fallback'].sum())} | 0 |"
    )
    lines.append(
        f"| instances breaking a theorem bound (4, or 3 with a low last job) | {int((~df['bound_ok']).sum())} | - |"
    )
    lines.append(f"| invalid schedules | {int((~df['valid']).sum())} | - |")
    if not uni.empty and uni["N"].nunique() > 1:
        r = np.corrcoef(df[df.kind == "uni"]["N"], df[df.kind == "uni"]["local"])[0, 1]
        lines.append(f"| correlation of N and the LOCAL score, uni | {r:.2f} | 0.69 |")
    if df["N"].nunique() > 1:
        r = np.corrcoef(df["N"], df["local"])[0, 1]
        lines.append(
            f"| correlation of N and the LOCAL score, both kinds | {r:.2f} | "
            f"{PAPER['corr_N_local_combined']:.2f} |"
        )
    swf10 = df[(df.kind == "swf") & (df.n == 10)]
    if not swf10.empty:
        lines.append(
            f"| swf, n = 10: instances where ILBA scores 1 | {int((swf10['ilba'] <= 1 + 1e-12).sum())}"
            f" of {len(swf10)} | all |"
        )
    for (m1, m2), paper_p in PAPER["p_m"].items():
        if m1 in spec.ms and m2 in spec.ms:
            ours = [
                welch_p(df[df.m == m1][alg], df[df.m == m2][alg])
                for alg in ("local", "molba", "ilba")
            ]
            lines.append(
                f"| p-value, m = {m1} vs {m2}, LOCAL / MOLBA(2) / ILBA (Welch) | "
                + " / ".join(f"{x:.2f}" for x in ours)
                + " | "
                + " / ".join(f"{x:.2f}" for x in paper_p)
                + " |"
            )
    lines += ["", "Mean scores by cell group (Figure 7's data):", ""]
    for kind in spec.kinds:
        for var in ("N", "n"):
            g = df[df.kind == kind].groupby(var)[["local", "molba", "ilba"]].agg(["mean", "std"])
            lines.append(f"**{kind}, by {var}**")
            lines.append("")
            lines.append(f"| {var} | LOCAL | MOLBA(2) | ILBA |")
            lines.append("|---|---|---|---|")
            for key, row in g.iterrows():
                lines.append(
                    f"| {key} | "
                    + " | ".join(
                        f"{f(row[(a, 'mean')])} ± {f(row[(a, 'std')])}"
                        for a in ("local", "molba", "ilba")
                    )
                    + " |"
                )
            lines.append("")
    return "\n".join(lines) + "\n"


def _f(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.2f}"


@register_study
class MospGrid(Study):
    """Pascual et al., Sec. 6: the grid of instances, Figure 7."""

    name = "mosp"
    title = "Pascual, Rzadca, Trystram, Sec. 6: 4800 instances, Figure 7"
    files = ("fig7.png",)
    options = (opt.INSTANCES,)
    evaluate = staticmethod(evaluate_cell)

    def configure(self, instances: int | None = None) -> None:
        self.spec = GridSpec(seed=self.seed)
        if self.quick:
            self.spec.instances = 3
        if instances:
            self.spec.instances = instances

    def tasks(self) -> list[dict]:
        return grid_tasks(self.spec)

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        return frame(rows)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        figure7(df, out / "fig7.png")
        return summarize(df, self.spec)
