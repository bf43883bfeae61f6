"""The network the core reports it built (`Result.network`, docs/links.md) and the analysis that
reads it instead of the scenario: the shared bottleneck of a dumbbell, of a general topology (which
the scenario-parsing version could not answer) and of a trace-driven link (the core's rounded mean
rate, not a second formula)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quicksim import analysis
from quicksim.results import Result

BN = "bottleneck:router1->router2"


def _link(rate_bps: int, overhead: int = 7) -> dict[str, Any]:
    return {"rate_bps": rate_bps, "overhead_bytes": overhead, "mtu_bytes": 1500, "delay_s": 0.01}


def _handmade(paths: dict[str, str], kinds: dict[str, str], overheads: dict[str, int]) -> Result:
    """A result whose flows (name -> kind) each cross one link (name -> its bottleneck), links
    at 10, 20, ... Mbit/s with the given overheads."""
    network = {
        "links": {link: _link(10_000_000 * (i + 1), oh) for i, (link, oh) in enumerate(overheads.items())},
        "routes": {f"{n}->x": {"forward": [b], "reverse": [], "bottleneck": b} for n, b in paths.items()},
        "flows": {n: f"{n}->x" for n in paths},
    }
    totals = {"flows": {n: {"kind": k} for n, k in kinds.items()}}
    return Result({"meta": {"network": network}, "totals": totals}, scenario={})


def test_the_bottleneck_is_the_one_the_responsive_flows_share() -> None:
    links = {BN: 7, "access1:sender1->router1": 2}
    both = _handmade(
        {"q": BN, "t": BN, "bg": "access1:sender1->router1"}, {"q": "quic", "t": "tcp", "bg": "udp"}, links
    )
    # The background's own bottleneck does not count; the rate and overhead are the link's.
    assert analysis.bottleneck(both) == (BN, 10_000_000.0, 7)
    apart = _handmade({"q": BN, "t": "access1:sender1->router1"}, {"q": "quic", "t": "tcp"}, links)
    assert analysis.bottleneck(apart) is None
    with pytest.raises(ValueError, match="share no bottleneck; pass capacity_bps"):
        analysis.phases(apart)
    # Without a shared bottleneck the capacity must be given, and the overhead is the one the
    # responsive flows' links have, if they agree.
    assert analysis._path_overhead(apart) is None
    with pytest.raises(ValueError, match="differ in overhead; pass overhead_bytes"):
        analysis.phases(apart, capacity_bps=10e6)
    same = _handmade(
        {"q": BN, "t": "access1:sender1->router1"}, {"q": "quic", "t": "tcp"}, dict.fromkeys(links, 9)
    )
    assert analysis.bottleneck(same) is None and analysis._path_overhead(same) == 9
    # Without responsive flows, every flow's.
    udp = _handmade({"u": "access1:sender1->router1"}, {"u": "udp"}, links)
    assert analysis.bottleneck(udp) == ("access1:sender1->router1", 20_000_000.0, 2)
    # A result saved before the core reported its network: no answer, no guess from the scenario.
    old = Result(
        {"meta": {}, "totals": both.totals}, scenario={"dumbbell": {"bottleneck": {"rate": "10Mbps"}}}
    )
    assert old.network == {}
    assert analysis.bottleneck(old) is None


@pytest.mark.core
def test_a_dumbbell_run_reports_its_bottleneck_as_the_scenario_sets_it(tmp_path: Path) -> None:
    import quicksim

    res = quicksim.run(
        "linksharing",
        sets=["run.duration=3s", "dumbbell.bottleneck.rate=12Mbps", "dumbbell.bottleneck.overhead=9B"],
    )
    assert analysis.bottleneck(res) == (BN, 12e6, 9)
    net = res.network
    assert net["links"][BN]["rate_bps"] == 12_000_000
    assert net["links"][BN]["delay_s"] == 0.01
    assert net["links"]["access1:sender1->router1"]["rate_bps"] == 1_000_000_000
    assert [b["link"] for b in net["bottlenecks"]] == [BN]
    assert net["flows"]["sender1"] == "sender1->receiver1"
    path = net["routes"]["sender1->receiver1"]
    assert path["forward"] == ["access1:sender1->router1", BN, "egress1:router2->receiver1"]
    assert path["reverse"] == [
        "egress1:receiver1->router2",
        "bottleneck:router2->router1",
        "access1:router1->sender1",
    ]
    # The facts are part of the summary and survive save/load.
    assert Result.load(res.save(tmp_path)).network == net


THREE_HOPS = {
    "run": {"duration": "4s", "seed": 1},
    "nodes": {
        "h1": {"kind": "host"},
        "r1": {"kind": "router"},
        "r2": {"kind": "router"},
        "h2": {"kind": "host"},
    },
    "links": [
        {"name": "a", "a": "h1", "b": "r1", "rate": "100Mbps", "delay": "1ms"},
        {"name": "b", "a": "r1", "b": "r2", "rate": "8Mbps", "delay": "10ms", "queue": {"packets": 60}},
        {"name": "c", "a": "r2", "b": "h2", "rate": "40Mbps", "delay": "2ms", "overhead": "18B"},
    ],
    "flows": [
        {"name": "one", "kind": "tcp", "src": "h1", "dst": "h2"},
        {"name": "two", "kind": "quic", "src": "h1", "dst": "h2", "start": "1s"},
    ],
}


@pytest.mark.core
def test_a_general_topology_has_a_bottleneck_and_phases_now() -> None:
    import quicksim

    res = quicksim.run(THREE_HOPS)
    assert analysis.bottleneck(res) == ("b:r1->r2", 8e6, 7)
    # 1 + 10 + 2 ms each way, plus one 1500 B packet at each forward hop: 1507 B at 100 and
    # 8 Mbit/s (120.56 + 1507 us), 1518 B at 40 Mbit/s (303.6 us).
    assert res.network["flows"] == {"one": "h1->h2", "two": "h1->h2"}
    flow = res.network["routes"]["h1->h2"]
    assert flow["propagation_rtt_s"] == pytest.approx(0.026, abs=1e-15)
    assert flow["base_rtt_s"] == pytest.approx(0.026 + (120.56 + 1507.0 + 303.6) * 1e-6, abs=1e-15)
    table = analysis.phases(res, settle_s=0.5)
    assert set(table.flow) == {"one", "two"}
    # Two flows share 8 Mbit/s with no background: each one's fair share is 4 Mbit/s.
    assert set(table.fair_share_mbps.round(9)) == {8.0, 4.0}


@pytest.mark.core
def test_a_trace_bottleneck_has_the_cores_mean_rate(tmp_path: Path) -> None:
    import quicksim

    # 4 opportunities of 1500 B per 7 ms: 6857142.857.. bit/s, which the core rounds to 6857143
    # (the rate its utilization divides by). The former Python formula gave the unrounded value,
    # 0.143 bit/s (2e-8 relative) lower; every bundled trace's mean is a whole number, the same.
    trace = tmp_path / "t.mm"
    trace.write_text("1\n1\n3\n7\n")
    sets = ["run.duration=2s", f'dumbbell.bottleneck.forward={{model={{kind="trace",file="{trace}"}}}}']
    res = quicksim.run("trace-cellular", sets=sets)
    assert analysis.bottleneck(res) == (BN, 6_857_143.0, 7)
    link = res.network["links"][BN]
    assert link["model"] == "trace"
    assert link["trace"] == {
        "mean_rate_bps": 6_857_143,
        "period_s": 0.007,
        "opportunities": 4,
        "opportunity_bytes": 1500,
    }
    # The reverse direction keeps its fixed rate.
    assert res.network["links"]["bottleneck:router2->router1"]["rate_bps"] == 10_000_000
