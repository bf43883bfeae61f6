"""Sweep metrics on the hand-made Result of conftest, against hand-computed values."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from quicksim import metrics
from quicksim.metrics import compute, seconds
from quicksim.results import Result

BOTTLENECK = "bottleneck:router1->router2"


def test_seconds_parses_numbers_and_units() -> None:
    assert seconds(2) == 2.0
    assert seconds("500ms") == pytest.approx(0.5)
    assert seconds("3s") == 3.0
    assert seconds("1.5") == 1.5
    with pytest.raises(ValueError, match="not a time"):
        seconds("3 parsecs")


def test_goodput_per_flow_over_the_active_window(result: Result) -> None:
    # sender1 delivers 375000 B in its 2 s window; bg 37500 B over the whole 3 s run.
    g = metrics.goodput_mbps(result)
    assert g == pytest.approx({"sender1": 1.5, "bg": 0.1})
    assert metrics.goodput_mbps(result, flow="sender1") == pytest.approx(1.5)


def test_goodput_over_a_window_with_units(result: Result) -> None:
    # sender1's bins at 1.0 and 1.5 s carry 125000 B each: 250000 B in 1 s.
    assert metrics.goodput_mbps(result, flow="sender1", t0="1s", t1="2000ms") == pytest.approx(2.0)


def test_phase_goodput_auto_phases_from_flow_starts_and_stops(result: Result) -> None:
    p = metrics.phase_goodput_mbps(result)
    assert set(p) == {"bg@0-0.5", "sender1@0.5-2.5", "bg@0.5-2.5", "bg@2.5-3"}
    assert p["sender1@0.5-2.5"] == pytest.approx(1.5)
    assert p["bg@0.5-2.5"] == pytest.approx(0.1)
    explicit = metrics.phase_goodput_mbps(result, phases=[["1s", "2s"]], flow="sender1")
    assert explicit == pytest.approx({"sender1@1-2": 2.0})


def test_jain_over_a_window(result: Result) -> None:
    # Both flows are active in [1, 2): rates 2.0 and 0.1 Mbit/s.
    expected = (2.0 + 0.1) ** 2 / (2 * (2.0**2 + 0.1**2))
    assert metrics.jain(result, t0=1, t1=2) == pytest.approx(expected)
    # Only bg is active for the whole of [0, 3): one flow is perfectly fair to itself.
    assert metrics.jain(result, t0=0, t1=3) == pytest.approx(1.0)


def test_utilization_whole_run_and_window(result: Result) -> None:
    assert metrics.utilization(result, link=BOTTLENECK) == pytest.approx(0.11)
    assert metrics.utilization(result) == pytest.approx({BOTTLENECK: 0.11, "access:router2->receiver1": 0.0})
    # Bins at 0.5 and 1.0 s: 0.11 and 0.21.
    assert metrics.utilization(result, link=BOTTLENECK, t0=0.5, t1=1.5) == pytest.approx(0.16)
    with pytest.raises(KeyError, match="unknown link"):
        metrics.utilization(result, link="nope")


def test_drops_and_loss_rate(result: Result) -> None:
    assert metrics.drops(result) == 3
    assert metrics.drops(result, flow="sender1") == 2
    assert metrics.drops(result, queue="*") == {BOTTLENECK: 3.0}
    assert metrics.loss_rate(result, flow="sender1") == pytest.approx(1 - 312 / 330)
    assert metrics.loss_rate(result) == pytest.approx({"sender1": 1 - 312 / 330, "bg": 1 - 59 / 60})


def test_completion_time_is_nan_when_not_completed(result: Result, raw_result: dict[str, Any]) -> None:
    assert math.isnan(metrics.completion_time_s(result, flow="sender1"))
    raw_result["totals"]["flows"]["sender1"]["completion_time_s"] = 1.75
    assert metrics.completion_time_s(Result(raw_result, scenario=result.scenario), flow="sender1") == 1.75


def test_cwnd_time_weighted_from_the_flow_start(result: Result) -> None:
    # 12000 for 0.1 s, 24000 for 0.15 s, 48000 for 0.05 s, 24000 for 0.7 s, 30000 for 1.5 s.
    mean = (12000 * 0.1 + 24000 * 0.15 + 48000 * 0.05 + 24000 * 0.7 + 30000 * 1.5) / 2.5
    assert metrics.cwnd_bytes(result, flow="sender1") == pytest.approx(mean)
    assert metrics.cwnd_bytes(result, flow="sender1", stat="max") == 48000
    assert metrics.cwnd_bytes(result) == pytest.approx({"sender1": mean})
    with pytest.raises(ValueError, match="stat must be"):
        metrics.cwnd_bytes(result, flow="sender1", stat="median")


def test_queue_delay_is_queued_bits_over_the_link_rate(result: Result) -> None:
    # Empty until 0.6 s, then 1250 B for 0.1 s, 6250 for 0.1, 12500 for 0.2, 3750 for 1, 0 for 1.
    mean_bytes = (1250 * 0.1 + 6250 * 0.1 + 12500 * 0.2 + 3750 * 1.0) / 3.0
    rate_bps = 414800 * 8 / (0.11 * 3.0)  # recovered from the link's totals
    assert metrics.queue_delay_s(result, queue=BOTTLENECK) == pytest.approx(mean_bytes * 8 / rate_bps)
    assert metrics.queue_delay_s(result, queue=BOTTLENECK, stat="max") == pytest.approx(12500 * 8 / rate_bps)


def test_total_reads_totals_and_meta_by_path(result: Result) -> None:
    assert metrics.total(result, path="flows.sender1.delivered_bytes") == 375000
    assert metrics.total(result, path="meta.events") == 12345
    with pytest.raises(KeyError, match="not found"):
        metrics.total(result, path="flows.nope.delivered_bytes")


def test_series_metrics_are_long_tables(result: Result) -> None:
    tp = metrics.throughput_series(result, flow="sender1")
    assert list(tp.columns) == ["t_s", "key", "value"]
    assert tp["value"].tolist() == pytest.approx([0, 1, 2, 2, 1, 0])
    q = metrics.queue_series(result, interval="0.5s")
    assert q["t_s"].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert q["value"].tolist() == [0, 0, 3, 3, 0, 0]  # empty before the first change at 0.6 s
    c = metrics.cwnd_series(result, interval=1)
    assert math.isnan(c["value"].iloc[0]) and c["value"].tolist()[1:] == [24000, 30000]


def test_compute_names_columns_and_splits_series(result: Result) -> None:
    values, series = compute(result, metrics.goodput_mbps, "goodput_mbps", {})
    assert values == pytest.approx({"goodput_mbps.sender1": 1.5, "goodput_mbps.bg": 0.1}) and series is None
    values, series = compute(result, metrics.throughput_series, "tp", {"flow": "bg"})
    assert values == {} and isinstance(series, pd.DataFrame) and len(series) == 6
    with pytest.raises(TypeError, match="not a number"):
        compute(result, lambda r: "high", "bad", {})


def test_register_and_label() -> None:
    def double_events(result: Result, factor: float = 2) -> float:
        return result.meta["events"] * factor

    metrics.register("test_double_events", double_events)
    try:
        assert metrics.get("test_double_events") is double_events
        with pytest.raises(ValueError, match="already registered"):
            metrics.register("test_double_events", lambda r: 0)
    finally:
        del metrics.METRICS["test_double_events"]
    with pytest.raises(KeyError, match=r"known metrics: .*goodput_mbps"):
        metrics.get("nope")
    assert metrics.label("goodput_mbps", {"flow": "s1", "t0": "3s"}) == "goodput_mbps[flow=s1,t0=3s]"
