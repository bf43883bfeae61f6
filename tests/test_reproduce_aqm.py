"""`quicksim reproduce aqm`: the link cases, the delay measure by hand, the committed ns-3 numbers
(and quicksim beside them), and the quick run end to end."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from quicksim import reproduce as rp
from quicksim.reproduce import _aqm_ns3 as ns3
from quicksim.reproduce import aqm


def test_registered() -> None:
    assert "aqm" in rp.REPRODUCTIONS
    assert rp.module("aqm").NAME == "aqm"


def test_link_cases_phases_and_quick_scaling() -> None:
    step = aqm.LINK_CASES[0]
    assert step.phases() == [(0.0, 20.0, 10e6), (20.0, 40.0, 3e6), (40.0, 60.0, 10e6)]
    q = step.scaled(aqm.QUICK_SCALE)
    assert q.phases() == [(0.0, 5.0, 10e6), (5.0, 10.0, 3e6), (10.0, 15.0, 10e6)]
    assert q.forward() == {"schedule": [{"at": "5s", "rate": "3Mbps"}, {"at": "10s", "rate": "10Mbps"}]}
    # Every discipline gets the same scenario but its queue.
    for name, queue in aqm.DISCIPLINES.items():
        sc = aqm.scenario(step, queue)
        assert sc["dumbbell"]["bottleneck"]["queue"] is queue, name


def test_mean_delay_of_a_step_function_by_hand() -> None:
    d = pd.DataFrame({"t_s": [0.0, 1.0, 3.0], "delay_s": [0.010, 0.030, 0.0]})
    # Over [0.5, 4): 0.5 s at 10 ms, 2 s at 30 ms, 1 s at 0 -> 0.065 / 3.5.
    assert aqm.mean_delay(d, 0.5, 4.0) == pytest.approx(0.065 / 3.5)
    # A window after the last change holds its value.
    assert aqm.mean_delay(d, 5.0, 6.0) == 0.0


def test_committed_ns3_numbers_are_complete_and_say_how_they_were_made() -> None:
    text = ns3.DATA.read_text()
    assert "ns3==3.44.post0" in text and "aqm --qdisc=Q --run=R" in text
    d = ns3.load_ns3()
    assert sorted(d.qdisc.unique()) == sorted(ns3.QUEUES)
    assert (d.groupby("qdisc").run.count() == 3).all()
    # ns-3's total queueing delay adds the device queue's wait (about one 1502-B frame time at
    # 10 Mbit/s when the link is busy: 1.2 ms) to the queue disc's sojourn.
    assert ((d.mean_device_wait_s > 0.0008) & (d.mean_device_wait_s < 0.0013)).all()
    assert (d.delay_s == d.mean_sojourn_s + d.mean_device_wait_s).all()


@pytest.mark.slow
def test_quick_run_end_to_end(tmp_path: Path) -> None:
    report = rp.reproduce("aqm", out=tmp_path, quick=True)
    out = tmp_path / "aqm"
    assert (out / "step.png").stat().st_size > 20_000
    phases = pd.read_csv(out / "phases.csv")
    assert set(phases.discipline) == set(aqm.DISCIPLINES)
    # RED beside ns-3, the documented disagreement, is shown but not checked in quick mode.
    assert report.ok, [c.name for c in report.checks if not c.passed]
    assert not any(c.name.startswith("beside ns-3.44, red:") for c in report.checks)
    side = pd.read_csv(out / "ns3_side_by_side.csv")
    for qd in ("codel", "fq_codel", "pie"):
        r = side[side.qdisc == qd].iloc[0]
        assert abs(r.delay_s / r.ns3_delay_s - 1) <= 0.10, qd
        assert abs(r.utilization / r.ns3_utilization - 1) <= 0.10, qd
