"""`quicksim reproduce aqm`: the link cases, the delay measure by hand, the committed ns-3 numbers
(and quicksim beside them), and the quick run end to end."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from quicksim import reproduce as rp
from quicksim.reproduce import aqm
from quicksim.reproduce.aqm import ns3
from quicksim.reproduce.aqm.trace import Trace


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


def test_trace_case_reads_the_trace_as_the_link_does(tmp_path: Path) -> None:
    # Opportunities at 1, 1, 3 and 4 ms, period 4 ms (the 4-ms one is the period's last).
    f = tmp_path / "t.mm"
    f.write_text("1\n1\n3\n4\n")
    tr = Trace(f)
    assert tr.period_ms == 4 and tr.mean_rate_bps == 4 * 1500 * 8 / 0.004
    # Before 1 ms none; at exactly 1 ms the two of 1 ms still serve (not before); 5 ms is the
    # next period's first millisecond: the 4 of the first period.
    assert list(tr.count_before([0.0, 0.001, 0.0015, 0.005, 0.0051])) == [0, 0, 2, 4, 6]
    assert tr.capacity_bytes(0.0, 0.008) == 8 * 1500
    # A packet arriving at 1.5 ms behind 2 frames of 1507 B needs 3 opportunities (3 ms, 4 ms,
    # then 5 ms of the next period): it waits 3.5 ms; behind an empty queue 0.
    assert tr.wait_s([0.0015, 0.0015], [2 * 1507, 0]) == pytest.approx([0.0035, 0.0])
    # The bundled case: the trace as the bottleneck's forward model, one phase at its mean.
    case = next(c for c in aqm.LINK_CASES if c.trace)
    fwd = case.forward()
    assert fwd["model"]["kind"] == "trace" and Path(fwd["model"]["file"]).is_file()
    mean = case.link_trace().mean_rate_bps  # type: ignore[union-attr]
    assert case.phases() == [(0.0, case.duration_s, mean)]
    assert case.scaled(aqm.QUICK_SCALE).trace == case.trace


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
    assert (out / "trace.png").stat().st_size > 20_000
    phases = pd.read_csv(out / "phases.csv")
    assert set(phases.discipline) == set(aqm.DISCIPLINES)
    assert set(phases.case) == {"step", "trace"}
    assert report.ok, [c.name for c in report.checks if not c.passed]
    # Every AQM is checked beside ns-3, RED included, and CoDel with one flow.
    for qd in ns3.QUEUES:
        assert any(c.name.startswith(f"beside ns-3.44, {qd}:") for c in report.checks), qd
    assert sum(c.name.startswith("CoDel, one ") for c in report.checks) == 2
    side = pd.read_csv(out / "ns3_side_by_side.csv")
    for qd in ns3.QUEUES:
        r = side[side.qdisc == qd].iloc[0]
        assert abs(r.delay_s / r.ns3_delay_s - 1) <= 0.10, qd
        assert abs(r.utilization / r.ns3_utilization - 1) <= 0.10, qd
