"""The model check of every audit (issue 42, item 4): the window replayed under the platform's
own policy and rule, compared with the recorded schedule, in every output, with a warning when
the model does not reproduce the platform."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from rich.console import Console

from coopsched import audit
from coopsched.audit.html import render_html
from coopsched.audit.model_check import UTILIZATION_GAP, WITHIN, model_check
from coopsched.audit.report import render_table, to_csv, to_json
from coopsched.cli import main
from coopsched.online.policies import get_policy
from coopsched.workloads.instance import Instance, Organization


def rigid_instance(seed: int, n: int = 24) -> Instance:
    rng = np.random.default_rng(seed)
    size = rng.integers(1, 20, n)
    return Instance(
        [Organization("a", 3), Organization("b", 2), Organization("c", 3)],
        rng.integers(0, 3, n),
        np.sort(rng.integers(0, 40, n)),
        size,
        rng.integers(1, 5, n),
        requested=size + rng.integers(0, 10, n),
        meta={"horizon": 120},
    )


def by_hand(inst: Instance, model_start: np.ndarray, T: int) -> tuple[float, float]:
    """Utilization and the share within an hour, from the definitions (docs/audit.md)."""
    rec = inst.start
    busy = sum(
        inst.width[j] * (min(T, rec[j] + inst.size[j]) - rec[j])
        for j in range(inst.n)
        if 0 <= rec[j] < T
    )
    ok = [j for j in range(inst.n) if 0 <= rec[j] < T]
    near = [j for j in ok if model_start[j] >= 0 and abs(model_start[j] - rec[j]) <= WITHIN]
    return busy / (inst.total_machines * T), len(near) / len(ok)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(("backfill", "rule"), [(None, "easy-queue"), ("auto", "easy")])
def test_a_platform_that_ran_fifo_easy_is_reproduced(seed, backfill, rule):
    """By default the audit's model is the platform's rule (EASY over the whole queue, every
    job having a requested time here), and its model check replays the window under it;
    ``backfill="auto"`` (the papers' per-organization EASY) is checked under that rule."""
    inst = rigid_instance(seed)
    T = 120
    fifo = get_policy("fifo").run(inst, T, backfill=rule)
    inst = dataclasses.replace(inst, start=np.where(fifo.start < T, fifo.start, -1))
    report = audit(inst, with_counterfactuals=False, backfill=backfill).to_dict()
    assert report["window"]["backfill"] == rule
    mc = report["model_check"]
    assert (mc["policy"], mc["backfill"]) == ("fifo", rule)
    assert mc["within_hour"] == 1.0 and mc["utilization_gap"] == 0.0
    # the replay is the record; the only warning left is the recorded total above REF's,
    # which a FIFO schedule of rigid jobs may reach (seed 2 under easy-queue: 42,200 > 42,169)
    eff = report["efficiency"]
    above = eff["recorded_total"] > eff["ref_total"]
    assert mc["recorded_above_ref"] == above
    assert (mc["warning"] is None) == (not above)
    util, _ = by_hand(inst, fifo.start, T)
    assert mc["recorded"]["utilization"] == pytest.approx(util)


def test_without_a_requested_time_the_platforms_rule_is_first_fit_over_the_whole_queue():
    inst = rigid_instance(7)
    req = inst.requested.copy()
    req[3] = -1  # unknown
    inst = dataclasses.replace(inst, requested=req)
    fifo = get_policy("fifo").run(inst, 120, backfill="first-fit-queue")
    inst = dataclasses.replace(inst, start=np.where(fifo.start < 120, fifo.start, -1))
    report = audit(inst, with_counterfactuals=False).to_dict()
    rule = report["window"]["backfill"]
    assert rule == report["model_check"]["backfill"] == "first-fit-queue"
    assert report["model_check"]["within_hour"] == 1.0
    assert audit(inst, with_counterfactuals=False, backfill="auto").window.backfill == "first-fit"


def test_a_platform_the_model_does_not_reproduce_is_warned_in_every_output():
    inst = rigid_instance(4)
    T = 120
    fifo = get_policy("fifo").run(inst, T, backfill="easy-queue")
    # the recorded platform started every job 50 s later than FIFO would: it idled
    late = np.where(fifo.start + 50 < T, fifo.start + 50, -1)
    inst = dataclasses.replace(inst, start=late)
    report = audit(inst, with_counterfactuals=False)
    mc = report.to_dict()["model_check"]
    util, within = by_hand(inst, fifo.start, T)
    assert mc["recorded"]["utilization"] == pytest.approx(util)
    assert mc["within_hour"] == pytest.approx(within)  # 50 s apart: within the hour
    assert mc["utilization_gap"] > UTILIZATION_GAP and "does not reproduce" in mc["warning"]
    console = Console(record=True, width=300)
    render_table(report, console)
    text = console.export_text()
    assert "model check (fifo + easy-queue backfilling" in text
    assert "warning: the model does" in text
    assert "# warning: the model does not reproduce" in to_csv(report)
    assert '"warning": "the model does not reproduce' in to_json(report)
    assert 'id="model-warning"' in render_html(report)


def test_another_platform_policy_and_a_wrong_name():
    inst = rigid_instance(5)
    fifo = get_policy("fifo").run(inst, 120, backfill="easy")
    inst = dataclasses.replace(inst, start=np.where(fifo.start < 120, fifo.start, -1))
    mc = model_check(inst, 120, get_policy("fifo").run(inst, 120, backfill="easy"), "maui")
    assert mc["policy"] == "maui"
    with pytest.raises(ValueError, match="platform_policy: unknown policy 'nope'"):
        audit(inst, with_counterfactuals=False, platform_policy="nope")


def test_cli_platform_policy_error(tmp_path, capsys):
    from coopsched.workloads.jsonio import instance_to_dict

    inst = rigid_instance(6)
    fifo = get_policy("fifo").run(inst, 120, backfill="easy")
    inst = dataclasses.replace(inst, start=np.where(fifo.start < 120, fifo.start, -1))
    p = tmp_path / "s.json"
    import json

    p.write_text(json.dumps(instance_to_dict(inst)))
    assert main(["audit", str(p), "--horizon", "120", "--platform-policy", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "--platform-policy: unknown policy 'nope'" in err
