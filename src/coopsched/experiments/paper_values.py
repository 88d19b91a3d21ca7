"""Published numbers of the papers, to print beside ours (never used to compute anything).

Skowron & Rzadca, "Non-monetary fair scheduling", Tables 1 and 2: mean and standard
deviation of ``dpsi / p_tot`` over 100 windows, 5 organizations.
"""

from __future__ import annotations

POLICY_ORDER = ("roundrobin", "rand", "directcontr", "fairshare", "utfairshare", "currfairshare")
PAPER_TRACES = ("LPC-EGEE", "PIK-IPLEX", "SHARCNET-Whale", "RICC")

_T1 = {
    "LPC-EGEE": [(238, 353), (8, 21), (5, 11), (16, 25), (16, 25), (87, 106)],
    "PIK-IPLEX": [(6, 33), (0.014, 0.01), (0.02, 0.15), (0.3, 1.38), (0.3, 1.38), (0.3, 1.58)],
    "SHARCNET-Whale": [(145, 38), (6, 6), (10, 7), (13, 8), (38, 67), (145, 80)],
    "RICC": [(2839, 357), (162, 187), (537, 303), (626, 309), (515, 284), (1231, 243)],
}
_T2 = {
    "LPC-EGEE": [(4511, 6257), (562, 1670), (410, 1083), (575, 1404), (888, 2101), (1082, 2091)],
    "PIK-IPLEX": [(242, 1420), (1.3, 7), (0.2, 1.4), (2.3, 12), (1.2, 5), (2.2, 11)],
    "SHARCNET-Whale": [(404, 1221), (26, 158), (60, 204), (94, 307), (120, 344), (180, 805)],
    "RICC": [(10850, 13773), (771, 1479), (1808, 3397), (2746, 4070), (4963, 6080), (5387, 9083)],
}


def _table(raw: dict) -> dict[str, dict[str, tuple[float, float]]]:
    return {trace: dict(zip(POLICY_ORDER, vals, strict=True)) for trace, vals in raw.items()}


TABLE1 = _table(_T1)  # duration 5e4
TABLE2 = _table(_T2)  # duration 5e5
