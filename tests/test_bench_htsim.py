"""`quicksim bench --vs-htsim`: the quicksim side of each workload is the dumbbell the htsim
harness builds, its runs fill the bottleneck, and htsim itself is built and run when a checkout
is given (QUICKSIM_HTSIM_SRC; CI has none, so that test says it is skipped)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quicksim import bench, units
from quicksim.bench import htsim as hs

pytestmark = pytest.mark.core


@pytest.mark.parametrize("w", [w for w in hs.WORKLOADS if not w.extra], ids=lambda w: w.name)
def test_scenarios_are_the_harness_dumbbell(w: hs.Workload) -> None:
    """Every number the harness is given is the one quicksim's scenarios use (a drift between
    the two would compare different networks)."""
    for name in (w.tcp_scenario, w.quic_scenario):
        assert name is not None
        doc = bench.SUITE[name]()
        d = doc["dumbbell"]
        assert d["pairs"] == len(doc["flows"]) == w.flows
        assert units.bits_per_s(d["bottleneck"]["rate"]) == w.rate_mbps * 1e6
        assert units.bits_per_s(d["access"]["rate"]) == w.rate_mbps * 1e6
        assert units.seconds(d["bottleneck"]["delay"]) == w.delay_ms / 1e3
        assert units.seconds(d["access"]["delay"]) == 0
        # The one difference: the TCP rows break exact ties with picoseconds of access jitter.
        jitter = d["access"].get("jitter")
        assert jitter is None or units.seconds(jitter["max"]) <= 10e-12
        assert units.bytes_(d["bottleneck"]["queue"]["bytes"]) == w.queue_bytes
        assert units.bytes_(d["mtu"]) == w.packet_bytes
        assert units.seconds(doc["run"]["duration"]) == w.duration_s
        starts = [units.seconds(f["start"]) for f in doc["flows"]]
        assert starts == [i / 1e3 for i in range(w.flows)]  # --start-step-ms=1


def test_sqrtn_workload_is_the_reproductions_largest_run() -> None:
    """The 1 600-flow workload: the harness's spread RTTs, access rate and start spread are the
    numbers of `model.long_flows_doc`, which sqrtn-2g5-1600-tcp runs with htsim-like TCP."""
    from quicksim.reproduce.sqrtn import model

    w = next(w for w in hs.WORKLOADS if w.name == "1600x2g5")
    assert w.quic_scenario is None and not w.default
    extra = dict(a.removeprefix("--").split("=") for a in w.extra)
    doc = bench.SUITE[w.tcp_scenario]()
    d = doc["dumbbell"]
    assert sum(f["count"] for f in doc["flows"]) == w.flows == 1600
    assert d["pairs"] == int(extra["rtt-classes"]) == model.RTT_CLASSES
    assert units.bits_per_s(d["bottleneck"]["rate"]) == w.rate_mbps * 1e6
    assert units.bits_per_s(d["access"]["rate"]) == float(extra["access-mbps"]) * 1e6
    assert units.seconds(d["bottleneck"]["delay"]) == w.delay_ms / 1e3
    # The harness's class RTTs: midpoints of [min, max]; each sender's access link the rest.
    lo, hi = float(extra["rtt-min-ms"]) / 1e3, float(extra["rtt-max-ms"]) / 1e3
    assert (lo, hi) == (model.RTT_MIN_S, model.RTT_MAX_S)
    for c, delay in enumerate(d["access_delays"]):
        rtt = lo + (hi - lo) * (c + 0.5) / model.RTT_CLASSES
        assert units.seconds(delay) == pytest.approx(rtt / 2 - w.delay_ms / 1e3, abs=1e-12)
    assert d["bottleneck"]["queue"]["packets"] * w.packet_bytes == w.queue_bytes
    assert units.bytes_(d["mtu"]) == w.packet_bytes
    assert units.seconds(doc["run"]["duration"]) == w.duration_s
    assert {units.seconds(f["start"]["max"]) for f in doc["flows"]} == {float(extra["start-spread-s"])}
    assert doc["tcp"]["ack_every"] == 1 and doc["tcp"]["sack"] is False
    # htsim's TcpSrc/TcpSink beside it: RFC 5681's unbounded initial ssthresh on both sides (the
    # harness's own default is TcpSrc's 100 packets), no receive window that binds (the longest
    # RTT x C + B fits in the buffers: one flow could hold the whole path), htsim's 250 ms RTO
    # floor, and no link framing.
    assert extra["initial-ssthresh-pkts"] == "inf"
    packets_in_path = w.rate_mbps * 1e6 * hi / (8 * w.packet_bytes) + d["bottleneck"]["queue"]["packets"]
    for key in ("send_buffer", "recv_buffer"):
        assert doc["tcp"][key] >= packets_in_path * w.packet_bytes
    assert units.seconds(doc["tcp"]["min_rto"]) == 0.25
    assert units.bytes_(d["bottleneck"]["overhead"]) == units.bytes_(d["access"]["overhead"]) == 0
    # The memory baseline: the same link and duration with one flow per class.
    base = bench.BASELINES[w.tcp_scenario]()
    assert sum(f["count"] for f in base["flows"]) == 10 and base["dumbbell"] == d


def test_tcp_rows_are_configured_as_htsim() -> None:
    doc = bench.htsim_3x10m_tcp_scenario()
    assert {f["kind"] for f in doc["flows"]} == {"tcp"}
    assert doc["tcp"]["ack_every"] == 1 and doc["tcp"]["sack"] is False
    assert "quic" not in doc


def test_tcp_row_ties_are_broken_so_the_flows_share() -> None:
    """Why the TCP rows carry `TIE_BREAK_JITTER`, and what the lock-out it fixed was made of.
    With INET's byte counting (`per_ack_increase = false`) and exact ties, the flow whose window
    waits in its own access queue refills each freed bottleneck slot at the very picosecond it
    frees, and the other two flows are locked out (each under 2 % of the link, Jain near its floor
    of 1/3): their windows fall to 2 segments, which that count never grows again (each second
    ACK empties the flight and restarts the count). TCP's default, one increase per ACK (RFC 5681
    §3.1, htsim's and ns-3's rule), grows them back, so on 3x10m the three share even with exact
    ties; on 100x1g ties still cost (Jain 0.834 exact, 0.992 with jitter), so the rows keep it.
    With up to 10 ps of jitter the three share as in htsim (Jain 1.000) and ns-3 (0.9995): each
    within 10 % of a third, Jain above 0.99."""
    from quicksim import _native
    from quicksim.api import _to_json
    from quicksim.stats import jain

    core = _native.load_core()
    broken = bench.htsim_3x10m_tcp_scenario()
    exact = bench.htsim_3x10m_tcp_scenario()
    del exact["dumbbell"]["access"]["jitter"]
    per_byte = bench.htsim_3x10m_tcp_scenario()
    del per_byte["dumbbell"]["access"]["jitter"]
    per_byte["tcp"]["cc"] = {"algo": "newreno", "per_ack_increase": False}
    shares = {}
    for name, doc in (("per_byte", per_byte), ("exact", exact), ("broken", broken)):
        flows = core.run(_to_json(doc), None, None)["totals"]["flows"].values()
        shares[name] = [int(f["delivered_bytes"]) for f in flows]
    total = sum(shares["per_byte"])
    assert all(x < 0.02 * total for x in sorted(shares["per_byte"])[:2]) and jain(shares["per_byte"]) < 0.4
    for name in ("exact", "broken"):
        third = sum(shares[name]) / 3
        assert all(abs(b - third) < 0.1 * third for b in shares[name]) and jain(shares[name]) > 0.99, name


@pytest.mark.parametrize("name", ["htsim-3x10m", "htsim-3x10m-tcp"])
def test_three_flow_rows_fill_the_bottleneck(name: str) -> None:
    """The bottleneck packets the comparison divides by: 10 Mbit/s x 50 s / 1500 B = 41 667
    packet times; the flows start within 2 ms and leave the link idle only in the first RTTs
    of slow start, so at least 98 % of them carry a packet (htsim's harness: 41 241, 99.0 %)."""
    code = f"import json, quicksim.bench as b; print(json.dumps(b.suite_worker({name!r})))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    rep = json.loads(out.strip().splitlines()[-1])
    slots = 10e6 * 50 / (1500 * 8)
    assert 0.98 * slots <= rep["bottleneck_packets"] <= slots
    assert rep["bottleneck_packets_per_s"] == pytest.approx(rep["bottleneck_packets"] / rep["wall_s"])


def test_ratios_compare_medians_and_best_reps(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table's ratios, from stand-in reps: median against median, and best rep against best
    rep (the figure a host with other tenants' load spoils least)."""
    import argparse

    from quicksim.bench import cli as bench_cli
    from quicksim.bench import vs_htsim

    w = hs.WORKLOADS[0]
    monkeypatch.setattr(hs, "WORKLOADS", [w])
    monkeypatch.setattr(hs, "source_dir", lambda src, who: Path("/nowhere"))
    monkeypatch.setattr(hs, "build", lambda sim, cache: Path("/nowhere/harness"))

    def rep(pps: float, shares: list[int]) -> dict[str, object]:
        return {
            "bottleneck_packets_per_s": pps,
            "bottleneck_packets": 1000,
            "events": 8000,
            "wall_s": 1000 / pps,
            "events_per_s": 8 * pps,
            "peak_rss_mib": 3.0,
            "flow_delivered_bytes": shares,
        }

    fair, one_takes_all = [5, 5, 5], [9, 0, 0]  # Jain 1 and 1/3
    htsim = iter([rep(100.0, fair), rep(300.0, fair), rep(200.0, fair)])  # median 200, best 300
    ours = {
        # median 150, best 600
        w.tcp_scenario: iter([rep(p, one_takes_all) for p in (150.0, 50.0, 600.0)]),
        w.quic_scenario: iter([rep(p, fair) for p in (100.0, 90.0, 120.0)]),  # median 100, best 120
    }
    monkeypatch.setattr(hs, "run", lambda binary, workload: next(htsim))
    report: dict[str, dict[str, dict[str, object]]] = {}
    args = argparse.Namespace(htsim_src=None, htsim_cache=None, reps=3)
    vs_htsim.run(args, report, lambda name: next(ours[name]), bench_cli._median)
    e = report["htsim"][w.name]
    assert e["tcp"]["ratio"] == pytest.approx(150 / 200)
    assert e["tcp"]["ratio_best"] == pytest.approx(600 / 300)
    assert e["quic"]["ratio"] == pytest.approx(100 / 200)
    assert e["quic"]["ratio_best"] == pytest.approx(120 / 300)
    out = capsys.readouterr().out
    assert (
        "0.75x the bottleneck packets per wall second (like for like); best rep against best rep: 2.00x"
        in out
    )
    # Jain's index of the flows' shares beside each row, and a line when the TCP rows differ.
    assert e["htsim"]["median"]["jain_delivered"] == pytest.approx(1.0)
    assert e["tcp"]["median"]["jain_delivered"] == pytest.approx(1 / 3)
    assert "Jain 0.333" in out and "Jain 1.000" in out
    assert "(Jain's index of their delivered bytes: htsim 1.000, quicksim TCP 0.333)" in out


def test_rows_give_each_sides_packets_and_say_when_they_differ(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ratios are per bottleneck packet, each side's own; the rows show the packets and the
    wall time per packet, and a line says when the two TCP runs served more than 5 % apart."""
    import argparse

    from quicksim.bench import cli as bench_cli
    from quicksim.bench import vs_htsim

    w = hs.WORKLOADS[0]
    monkeypatch.setattr(hs, "WORKLOADS", [w])
    monkeypatch.setattr(hs, "source_dir", lambda src, who: Path("/nowhere"))
    monkeypatch.setattr(hs, "build", lambda sim, cache: Path("/nowhere/harness"))

    def rep(packets: int, wall_s: float) -> dict[str, object]:
        return {
            "bottleneck_packets_per_s": packets / wall_s,
            "bottleneck_packets": packets,
            "events": 8 * packets,
            "wall_s": wall_s,
            "events_per_s": 8 * packets / wall_s,
            "peak_rss_mib": 3.0,
            "flow_delivered_bytes": [5, 5, 5],
        }

    # htsim: 1 000 packets in 2 s (2 ms each); quicksim TCP 700 in 1 s (1.43 ms each): 1.40x
    # per packet where the wall times alone would say 2x.
    monkeypatch.setattr(hs, "run", lambda binary, workload: rep(1000, 2.0))
    ours = {w.tcp_scenario: rep(700, 1.0), w.quic_scenario: rep(1000, 1.0)}
    report: dict[str, dict[str, dict[str, object]]] = {}
    args = argparse.Namespace(htsim_src=None, htsim_cache=None, reps=1)
    vs_htsim.run(args, report, lambda name: ours[name], bench_cli._median)
    e = report["htsim"][w.name]
    assert e["tcp"]["ratio"] == pytest.approx(0.7 / 0.5)
    assert e["tcp"]["packets_ratio"] == pytest.approx(0.7)
    assert e["quic"]["packets_ratio"] == pytest.approx(1.0)
    out = capsys.readouterr().out
    assert "bottleneck packets       1,000 (2000.000 us each)" in out
    assert "bottleneck packets         700 (1428.571 us each)" in out
    assert "(htsim 1,000, quicksim TCP 700: 0.700x)" in out
    assert out.count("the bottlenecks served different numbers of packets") == 1


def test_worker_reports_each_flows_share() -> None:
    """The per-flow delivered bytes the Jain column is computed from are the run's totals."""
    from quicksim import _native
    from quicksim.api import _to_json

    rep = bench.suite_worker("htsim-3x10m-tcp")
    raw = _native.load_core().run(_to_json(bench.htsim_3x10m_tcp_scenario()), None, None)
    want = [int(f["delivered_bytes"]) for f in raw["totals"]["flows"].values()]
    assert rep["flow_delivered_bytes"] == want and len(want) == 3


def test_source_dir_errors_name_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUICKSIM_HTSIM_SRC", raising=False)
    with pytest.raises(SystemExit, match="--htsim-src"):
        hs.source_dir(None, "quicksim bench --vs-htsim")
    with pytest.raises(SystemExit, match="not an htsim checkout"):
        hs.source_dir(tmp_path, "quicksim bench --vs-htsim")


def test_cli_without_source_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {k: v for k, v in os.environ.items() if k != "QUICKSIM_HTSIM_SRC"}
    res = subprocess.run(
        [sys.executable, "-m", "quicksim", "bench", "--vs-htsim", "--reps", "1"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode != 0
    assert "--htsim-src" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
def test_htsim_builds_and_runs(tmp_path: Path) -> None:
    """With a csg-htsim checkout (QUICKSIM_HTSIM_SRC), the harness builds and its 3-flow run
    fills the bottleneck as quicksim's does; skipped without one (CI fetches nothing)."""
    src = os.environ.get("QUICKSIM_HTSIM_SRC")
    if not src:
        pytest.skip("QUICKSIM_HTSIM_SRC is not set: no htsim checkout to build")
    binary = hs.build(hs.source_dir(src, "test"), tmp_path)
    w = hs.WORKLOADS[0]
    r = hs.run(binary, w)
    slots = w.rate_mbps * 1e6 * w.duration_s / (w.packet_bytes * 8)
    assert 0.98 * slots <= r["bottleneck_packets"] <= slots
    # One event per Queue service and per Pipe: 4 per data packet, 4 per ACK.
    assert 7.5 <= r["events_per_bottleneck_packet"] <= 8.5
    # Per-flow shares that add up to the total delivered.
    assert len(r["flow_delivered_bytes"]) == w.flows
    assert sum(r["flow_delivered_bytes"]) == r["delivered_bytes"]
