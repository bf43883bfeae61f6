"""`quicksim reproduce buffer-sizing-sqrt-n`: its theory by hand (sqrt(n) rule, slow-start bursts,
the M/G/1 tail, the synchronization index, the buffer ladder) and its quick mode end to end."""

from __future__ import annotations

import csv
import math
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from quicksim import reproduce as rp
from quicksim.reproduce.sqrtn import desync, mix
from quicksim.reproduce.sqrtn import model as m

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_registered() -> None:
    mod = rp.module("buffer-sizing-sqrt-n")
    assert mod.NAME == "buffer-sizing-sqrt-n"


def test_sqrt_rule_by_hand() -> None:
    # RTTs 82, 86, ..., 118 ms: mean 100 ms. 155 Mbit/s x 0.1 s / 12 000 bit = 1291.67 packets.
    assert m.mean_rtt() == pytest.approx(0.100, abs=1e-12)
    assert m.bdp_packets(155e6, 0.1) == pytest.approx(1291.6667, abs=1e-4)
    assert m.sqrt_rule(155e6, 400) == pytest.approx(1291.6667 / 20, abs=1e-4)


def test_access_delays_give_the_class_rtts() -> None:
    doc = m.long_flows_doc(20, 100e6, 50, 10.0)
    delays = [float(d.removesuffix("ms")) for d in doc["dumbbell"]["access_delays"]]
    # RTT = 2 (access + 5 ms): 82 ms -> 36 ms of access delay; 118 ms -> 54 ms.
    assert delays[0] == pytest.approx(36.0) and delays[-1] == pytest.approx(54.0)
    assert sum(f["count"] for f in doc["flows"]) == 20
    assert doc["tcp"] == {"cc": "newreno"} and doc["flows"][0]["kind"] == "tcp"
    quic = m.long_flows_doc(20, 100e6, 50, 10.0, cc="quic cubic")
    assert quic["quic"] == {"cc": "cubic"} and {f["kind"] for f in quic["flows"]} == {"quic"}
    with pytest.raises(ValueError, match="n: 25"):
        m.long_flows_doc(25, 100e6, 50, 10.0)
    # An ACK per segment (the paper's ns-2 sink) is TCP's setting; QUIC's table is left alone.
    assert m.long_flows_doc(20, 100e6, 50, 10.0, ack_every=1)["tcp"] == {"cc": "newreno", "ack_every": 1}
    assert m.long_flows_doc(20, 100e6, 50, 10.0, cc="quic newreno", ack_every=1)["quic"] == {"cc": "newreno"}


def test_model_buffer_solves_the_papers_bound() -> None:
    # Util >= erf(3 sqrt 3 / (2 sqrt 2) x B sqrt n / (RTT C + B)): the model's buffer gives the
    # target back, and for large n the rule itself gives erf(3 sqrt 3 / (2 sqrt 2)) = 98.9 %.
    a = 3 * math.sqrt(3) / (2 * math.sqrt(2))
    bdp = m.bdp_packets(155e6, m.mean_rtt())
    for target in (0.98, 0.995, 0.999):
        for n in (50, 1600):
            b = m.model_over_rule(target, n) * m.sqrt_rule(155e6, n)
            assert math.erf(a * b * math.sqrt(n) / (bdp + b)) == pytest.approx(target, abs=1e-9)
    assert m.model_over_rule(math.erf(a), 10**12) == pytest.approx(1.0, abs=1e-5)
    assert m.model_over_rule(0.999, 50) == pytest.approx(1.543, abs=1e-3)
    # CUBIC's window swings from 0.7 W_max: (0.3 / 1.7) / (0.5 / 1.5) of NewReno's spread.
    assert m.spread_factor("tcp newreno") == pytest.approx(1.0)
    assert m.spread_factor("quic cubic") == pytest.approx(0.3 / 1.7 * 3)
    # Mean windows: (1291.7 + 64.6) / 400 = 3.4 packets at 155 Mbit/s, below the model's 6.
    assert m.mean_window(155e6, 400) == pytest.approx(3.39, abs=0.01)
    assert m.mean_window(155e6, 400) < m.MODEL_MIN_WINDOW < m.mean_window(155e6, 200)


def test_slow_start_bursts_and_moments() -> None:
    assert m.slow_start_bursts(1, 2, 45) == [1]
    assert m.slow_start_bursts(14, 2, 45) == [2, 4, 8]
    assert m.slow_start_bursts(100, 2, 45) == [2, 4, 8, 16, 32, 38]
    assert m.slow_start_bursts(130, 2, 45) == [2, 4, 8, 16, 32, 45, 23]
    # Flows of 2 and 6 packets: bursts 2 | 2, 4 -> E[X] = 8/3, E[X^2] = 24/3, 1.5 per flow.
    ex, ex2, per = m.burst_moments([2, 6], 2, 45)
    assert (ex, ex2, per) == pytest.approx((8 / 3, 8.0, 1.5))


def test_slow_start_sizes_stay_in_slow_start() -> None:
    # Bursts 2, 4, 8, 16, 32 stay under a window of 45: 62 packets; with 1 and 10: 1 + 2 + 4 + 8.
    assert m.slow_start_limit(2, 45) == 62 and m.slow_start_limit(1, 10) == 15
    sizes = m.slow_start_sizes(20000, 12.0, 1.2, 62, seed=4)
    assert sizes == m.slow_start_sizes(20000, 12.0, 1.2, 62, seed=4)
    # Pareto scale 2 packets (mean 12, shape 1.2), truncated at 62: continuous mean
    # 12 (1 - (2/62)^0.2) / (1 - (2/62)^1.2) = 6.06, and about half a packet more rounded up.
    assert min(sizes) >= 2 and max(sizes) == 62
    assert sum(sizes) / len(sizes) == pytest.approx(6.06 + 0.5, abs=0.2)
    doc, span = m.short_flows_doc(40e6, 0.8, 4, 12.0, 1.2, 2, 0.1, 45, sizes=[3, 3, 10, 62])
    # 78 packets of 12 000 bit at 0.8 x 40 Mbit/s: 29.25 ms of arrivals; one group per size.
    assert span == pytest.approx(78 * 12000 / 32e6)
    groups = {f["name"]: (f["count"], f["bytes"]) for f in doc["flows"]}
    assert groups == {
        "short3": (2, f"{3 * m.MSS_B}B"),
        "short10": (1, f"{10 * m.MSS_B}B"),
        "short62": (1, f"{62 * m.MSS_B}B"),
    }
    assert doc["run"]["record_interval"] == "0.01s"


def test_short_flows_queue_series_is_whole_or_refused() -> None:
    # A 100 000-flow run at 40 Mbit/s made 1.38 M queue samples: cut at the default 1 M, the
    # series' last value was held to the window's end, a standing queue that was not there.
    from quicksim import api

    sizes = m.slow_start_sizes(300, 12.0, 1.2, 62)
    doc, span = m.short_flows_doc(40e6, 0.8, 300, 12.0, 1.2, 2, 0.1, 45, sizes=sizes)
    assert doc["run"]["record"]["max_samples"] == 1_000_000
    r = api.run(doc)
    rows = int((r.queues["queue"].astype(str) == m.BOTTLENECK).sum())
    # The doc's bound on the samples holds (here far below the 1 M it never goes under).
    assert sum(sizes) < rows <= 2 * (sum(sizes) + 3 * 300)
    assert not r.meta.get("truncated_series")
    doc["run"]["record"]["max_samples"] = rows // 2
    cut = api.run(doc)
    with pytest.raises(ValueError, match=r"^run.record.max_samples: \d+ samples of bottleneck"):
        m.queue_ccdf(cut, 0.0, span, [0, 5, 10])
    # Before the cut the series is the whole one's.
    last = cut.meta["truncated_series"][0]["last_t_s"]
    assert list(m.queue_ccdf(cut, 0.0, last, [0, 5, 10])) == list(m.queue_ccdf(r, 0.0, last, [0, 5, 10]))


def test_lundberg_root_by_hand() -> None:
    # Bursts of 4 packets at rho = 0.8: lambda = 0.2 per packet time; theta solves
    # 0.2 (e^(4 theta) - 1) = theta. The closed form (second order) is larger: 2 x 0.2 / 0.8 / 4.
    th = m.lundberg_theta([4, 4, 4], 0.8)
    assert 0.2 * (math.exp(4 * th) - 1) == pytest.approx(th, rel=1e-9)
    assert 0 < th < 2 * 0.2 / 0.8 * 4 / 16


def test_queue_tail_by_hand() -> None:
    # rho = 0.8, E[X] = 4, E[X^2] = 32: theta = 2 x 0.2 / 0.8 x 4 / 32 = 1/16.
    assert m.queue_tail(16, 0.8, 4.0, 32.0) == pytest.approx(math.exp(-1))
    assert m.queue_tail(0, 0.5, 1.0, 1.0) == pytest.approx(1.0)


def _drops(rows: list[tuple[float, str]]) -> pd.DataFrame:
    return pd.DataFrame({"t_s": [t for t, _ in rows], "queue": m.BOTTLENECK, "flow": [f for _, f in rows]})


def test_sync_index_extremes() -> None:
    # Two flows that always lose in the same bins: 1. Losses in alternate bins: -1 (as
    # anti-correlated as two flows can be). Without drops: NaN.
    same = _drops([(t + 0.01, f) for t in (0.0, 0.2, 0.4) for f in ("a", "b")])
    assert m.sync_index(same, 2, 0.1, 0.0, 0.6)[0] == pytest.approx(1.0)
    alternate = _drops([(0.01 + 0.1 * i, "ab"[i % 2]) for i in range(6)])
    assert m.sync_index(alternate, 2, 0.1, 0.0, 0.6)[0] == pytest.approx(-1.0)
    assert math.isnan(m.sync_index(_drops([]), 2, 0.1, 0.0, 0.6)[0])


def _probe(b: int, util: float) -> m.Probe:
    return m.Probe(b, util, 0.0, 0.0, 0, 0.0, 0.0, 0.0)


def _step(at: int) -> Callable[[int], m.Probe]:
    # Utilization 0.9 below `at` packets, 0.99 from it on (deficits 0.1 and 0.01).
    return lambda b: _probe(b, 0.99 if b >= at else 0.9)


def test_ladder_brackets_every_target() -> None:
    # From 20 with factor 2: 20 misses 0.98, so up: 40 reaches it (and 0.985).
    probes = m.ladder(_step(37), (0.98, 0.985), 20, 2.0, 1000)
    assert [p.buffer_pkts for p in probes] == [20, 40]
    # From 100: reaches, so down until a buffer misses: 50, 25.
    probes = m.ladder(_step(37), (0.98,), 100, 2.0, 1000)
    assert [p.buffer_pkts for p in probes] == [100, 50, 25]
    # Always reached: down to one packet and no further. Factor 1.1 at 3: a packet less each step.
    assert [p.buffer_pkts for p in m.ladder(lambda b: _probe(b, 1.0), (0.98,), 3, 1.1, 1000)] == [3, 2, 1]
    with pytest.raises(ValueError, match="factor"):
        m.ladder(_step(37), (0.98,), 20, 1.0, 1000)
    # Never reached: an error once the next step would pass the limit (20, 40, 80; 160 > 100).
    with pytest.raises(ValueError, match="not reached with 80 packets"):
        m.ladder(_step(10**6), (0.98,), 20, 2.0, 100)


def test_threshold_interpolates_the_log_deficit() -> None:
    # lo = 25 (deficit 0.1), hi = 50 (deficit 0.01): log deficit linear in the buffer; the
    # target 0.99 (deficit 0.01) is reached at hi, 0.9684 (deficit 10^-1.5) half way: 37.5 -> 38.
    probes = [_probe(25, 0.9), _probe(50, 0.99)]
    assert m.threshold(probes, 0.99) == 50
    assert m.threshold(probes, 1 - 10**-1.5) == 38
    # Just above lo's utilization: at least one packet above lo.
    assert m.threshold(probes, 0.9000001) == 26
    # Reached by the lowest probe: that probe. By none: an error.
    assert m.threshold(probes, 0.5) == 25
    with pytest.raises(ValueError, match=r"0\.995"):
        m.threshold(probes, 0.995)
    # A probe that steps back (noise): hi is where every larger probe holds the target.
    noisy = [_probe(10, 0.99), _probe(20, 0.9), _probe(40, 0.99)]
    assert m.threshold(noisy, 0.98) > 20
    # A link busy all the window (deficit 0, floored) still interpolates.
    assert 20 < m.threshold([_probe(20, 0.9), _probe(40, 1.0)], 0.99) <= 40


def test_windows_take_seconds_or_cycles() -> None:
    # 2.5 Gbit/s, n = 200: W = (20833.3 + 1473.1) / 200 = 111.5 packets; a cycle 2/3 W RTTs.
    c = m.cycle_s(2.5e9, 200)
    assert c == pytest.approx(2 / 3 * (2.5e9 * 0.1 / 12000 * (1 + 1 / math.sqrt(200))) / 200 * 0.1)
    assert c == pytest.approx(7.4355, abs=1e-4)
    # Rounded up to whole 0.5 s bins: 7.43 -> 7.5, 4 x 7.43 = 29.74 -> 30.
    assert m.windows(2.5e9, 200, (5.0, 1.0), (10.0, 4.0)) == (7.5, 30.0)
    assert m.windows(155e6, 1600, (5.0, 1.0), (10.0, 4.0)) == (5.0, 10.0)


def test_episodes_group_drops_by_gap() -> None:
    # Gap 40 ms (half the smallest RTT): drops at 0.01, 0.02, 0.05 (flows a, b, a) are one
    # episode, 0.2 and 0.21 (c, c) another; 0.5 is outside [0, 0.4).
    rows = [(0.01, "a"), (0.02, "b"), (0.05, "a"), (0.2, "c"), (0.21, "c"), (0.5, "d")]
    assert pytest.approx(0.04) == desync.EPISODE_GAP_S
    assert desync.episodes(_drops(rows), 0.0, 0.4) == [(3, 2), (2, 1)]
    assert desync.episodes(_drops([]), 0.0, 0.4) == []


def test_desync_variants_change_one_thing() -> None:
    base = m.long_flows_doc(20, 100e6, 50, 10.0)
    for name, change, _ in desync.VARIANTS:
        if change is None:
            continue
        doc = m.long_flows_doc(20, 100e6, 50, 10.0)
        change(doc)
        diff = {k for k in doc if doc[k] != base[k]}
        assert diff <= {"dumbbell", "tcp", "flows"}, name
    own = m.long_flows_doc(20, 100e6, 50, 10.0)
    own_rtts = desync.VARIANTS[1][1]
    assert own_rtts is not None
    own_rtts(own)
    # Class 0 (82 ms): 36 ms of access delay less 1 ms, plus 0-2 ms per flow: RTT 80-84 ms.
    assert own["dumbbell"]["access_delays"][0] == "35.000000ms"
    assert own["flows"][0]["extra_delay"] == {"dist": "uniform", "min": "0s", "max": "2ms"}


def test_predicted_fct_by_hand() -> None:
    # 7 packets from a window of 2: bursts 2, 4, 1 (k = 3). RTT 100 ms, q = 10 ms, 100 Mbit/s
    # (0.12 ms a packet): 3.5 x 0.1 + 4 x 0.01 + 0 packet times = 0.39 s.
    assert mix.predicted_fct(7, 0.1, 0.01, 100e6) == pytest.approx(0.39)
    # 6 packets: bursts 2, 4 (k = 2): 2.5 x 0.1 + 3 x 0.01 + 3 x 0.12 ms.
    assert mix.predicted_fct(6, 0.1, 0.01, 100e6) == pytest.approx(0.28 + 3 * 12000 / 100e6)
    # One packet, no queue: the handshake's RTT and the packet's one-way trip.
    assert mix.predicted_fct(1, 0.08, 0.0, 155e6) == pytest.approx(0.12)


def test_mix_doc_offers_the_short_load() -> None:
    doc, span = mix.mix_doc(50, 100e6, 118, 300, 0.1, 5.0, seed=3)
    # 300 flows x 12 packets x 12 000 bit / (0.1 x 100 Mbit/s) = 4.32 s of arrivals.
    assert span == pytest.approx(4.32)
    short = [f for f in doc["flows"] if f["name"].startswith("short")]
    assert sum(f["count"] for f in short) == 300 and len(short) == m.RTT_CLASSES
    assert short[3]["src"] == "sender4" and short[3]["start"]["min"] == "5.000000s"
    assert sum(f["count"] for f in doc["flows"] if f["name"].startswith("long")) == 50
    assert doc["tcp"] == {"cc": "newreno", "initial_window": 2, "ack_every": 1}
    assert doc["run"]["seed"] == 3 and doc["run"]["duration"] == "14.32s"
    assert doc["run"]["record"]["queues"] == ["bottleneck"]
    with pytest.raises(ValueError, match="short_count: 305"):
        mix.mix_doc(50, 100e6, 118, 305, 0.1, 5.0, seed=1)


@pytest.mark.slow
@pytest.mark.core
def test_sqrtn_quick_end_to_end(cli: Cli, tmp_path: Path) -> None:
    proc = cli("reproduce", "buffer-sizing-sqrt-n", "--quick", "--jobs", "1", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "buffer-sizing-sqrt-n"
    assert "checks passed" in (out / "report.md").read_text(encoding="utf-8")
    for png in ("min_buffer_vs_n.png", "synchronization.png", "short_flow_queue.png", "mix_fct.png"):
        assert (out / png).stat().st_size > 10_000
    with (out / "checks.csv").open(encoding="utf-8") as f:
        checks = list(csv.DictReader(f))
    # 14: the lower band is left out at n = 200, whose mean window (4.5 packets) is below the
    # model's sawtooth (`model.MODEL_MIN_WINDOW`).
    assert len(checks) == 14 and all(c["passed"] == "True" for c in checks)
    # The mix: the short flows finish sooner with the sqrt(n) buffer than with RTT x C.
    mixed = pd.read_csv(out / "mix.csv").sort_values("buffer_pkts")
    assert mixed["fct_median_s"].iloc[-1] > mixed["fct_median_s"].iloc[1]
    found = pd.read_csv(out / "min_buffer_vs_n.csv")
    # The search's answer is below RTT x C / 4 and within the band around the sqrt(n) rule.
    assert (found["min_buffer"] < found["bdp_packets"] / 4).all()
