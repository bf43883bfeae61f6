"""Any quantile of the per-packet delays (`owd_s:p90`, `sojourn_s:p99.9`), read from the core's
delay sketch as it exports it (`totals.delay_sketches`): the rank rule on a hand-made sketch, a
run whose every packet has the same hand-computed delay (each quantile within the sketch's 1 %),
p50/p95/p99 from the counts equal to the core's own, and a bad quantile refused by name."""

from __future__ import annotations

import math
from typing import Any

import pytest

import quicksim
from conftest import REPO
from quicksim import metrics
from quicksim.metrics_quantiles import sketch_quantile

SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"
BOTTLENECK = "bottleneck:router1->router2"


def _scenario(duration: str) -> dict[str, Any]:
    doc = quicksim.load_scenario(SCENARIO)
    doc["run"]["duration"] = duration
    doc["run"]["record"] = {"delays": True}
    return doc


def test_a_quantile_is_the_value_at_rank_floor_q_n_minus_1() -> None:
    # 100 samples: 50 of 1 ms, 30 of 2 ms, 15 of 3 ms, 5 of 10 ms.
    sketch = {"delay_s": [0.001, 0.002, 0.003, 0.010], "count": [50, 30, 15, 5]}
    assert sketch_quantile(sketch, 0.5) == 0.001  # rank 49: the 50th sample
    assert sketch_quantile(sketch, 0.51) == 0.002  # rank 50
    assert sketch_quantile(sketch, 0.9) == 0.003  # rank 89 (80 < 90 <= 95)
    assert sketch_quantile(sketch, 0.95) == 0.003  # rank 94
    assert sketch_quantile(sketch, 0.96) == 0.010  # rank 95
    assert sketch_quantile(sketch, 0.999) == 0.010
    assert math.isnan(sketch_quantile({"delay_s": [], "count": []}, 0.5))


@pytest.mark.core
def test_every_quantile_of_a_constant_delay_is_within_one_percent() -> None:
    # One 1 Mbit/s UDP flow through an idle dumbbell: no packet waits, so every packet's one-way
    # delay is the three links' propagation delays plus the serialization of its frame on each.
    doc = _scenario("3s")
    doc["flows"] = [dict(doc["flows"][0], rate="1Mbps")]
    r = quicksim.run(doc)
    link = r.totals["links"][BOTTLENECK]
    frame_bits = 8 * link["bytes"] / link["packets"]  # 1500 B of IP and PPP's 7 B
    owd = 0.001 + 0.010 + 0.001 + frame_bits * (1 / 1e9 + 1 / 10e6 + 1 / 1e9)
    for stat in ("p1", "p10", "median", "p90", "p99.9"):
        got = metrics.METRICS["owd_s"](r, flow="cbr", stat=stat)
        assert got == pytest.approx(owd, rel=0.01), stat
        assert metrics.METRICS["sojourn_s"](r, flow="cbr", stat=stat) == 0.0, stat
        assert metrics.METRICS["sojourn_s"](r, queue=BOTTLENECK, stat=stat) == 0.0, stat


@pytest.mark.core
def test_the_core_quantiles_are_the_sketches_and_others_lie_between() -> None:
    r = quicksim.run(_scenario("3s"))
    sketches = r.totals["delay_sketches"]
    for name, flow in r.totals["flows"].items():
        for series in ("owd", "queueing"):
            sketch = sketches["flows"][name][series]
            assert sum(sketch["count"]) == flow["packets_delivered"]
            for p in ("p50", "p95", "p99"):
                key = f"{series}_{p}_s"
                if key in flow:
                    assert sketch_quantile(sketch, int(p[1:]) / 100) == flow[key], (name, key)
    q = r.totals["queues"][BOTTLENECK]
    wait = metrics.METRICS["sojourn_s"]
    assert wait(r, queue=BOTTLENECK, stat="p99") == q["queueing_p99_s"]
    assert q["queueing_p50_s"] <= wait(r, queue=BOTTLENECK, stat="p90") <= q["queueing_p95_s"]
    owd = metrics.METRICS["owd_s"]
    tail = [owd(r, flow="cbr", stat=p) for p in ("p99", "p99.9", "p99.99")]
    assert tail == sorted(tail)


@pytest.mark.core
def test_a_bad_quantile_is_refused_naming_it() -> None:
    r = quicksim.run(_scenario("1s"))
    for bad in ("p100", "p0", "p999", "q90", "90"):
        with pytest.raises(ValueError, match=rf"owd_s: stat must be .*pNN \(0 < NN < 100\), not '{bad}'"):
            metrics.METRICS["owd_s"](r, flow="cbr", stat=bad)
