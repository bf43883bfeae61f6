"""`quicksim reproduce l4s`: the DCTCP analysis and the coupling's ratio by hand, the scenarios it
builds, the oscillation measure on a known signal, and the quick run end to end."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from quicksim import api
from quicksim import reproduce as rp
from quicksim.reproduce import l4s
from quicksim.reproduce.l4s import cases, dctcp, theory


def test_registered() -> None:
    assert "l4s" in rp.REPRODUCTIONS
    assert rp.module("l4s").NAME == "l4s"


def test_dctcp_sawtooth_by_hand() -> None:
    # N = 2, K = 20, C x RTT = 80: W* = 50, alpha = sqrt(2/50) = 0.2; A = 0.5 sqrt(2*2*100) = 10;
    # T_C = 0.5 sqrt(2*100/2) = 5 RTTs; Q_max = 22, Q_min = 12.
    th = theory.DctcpSawtooth(2, 20, 80)
    assert th.w_star == 50 and th.alpha == pytest.approx(0.2)
    assert th.amplitude == pytest.approx(10.0) and th.period_rtts == pytest.approx(5.0)
    assert (th.q_max, th.q_min) == (22, pytest.approx(12.0))
    # The paper's eq. 9 is N times the per-flow window swing (W* + 1) alpha / 2 to first order.
    assert th.amplitude == pytest.approx(th.n * th.w_star * th.alpha / 2)


def test_coupled_rate_ratio() -> None:
    # 2 / (2 * 1.22) = 0.8197; with k = 1.64 the two balance.
    assert theory.coupled_rate_ratio() == pytest.approx(0.8197, abs=1e-4)
    assert theory.coupled_rate_ratio(k=2 / 1.22) == pytest.approx(1.0)
    lo, hi = theory.RATIO_RANGE
    assert lo < theory.coupled_rate_ratio() < hi


def test_scenario_tables() -> None:
    flows = [
        cases.Flow("p", "tcp", "prague", {"rtt_independence": False}),
        cases.Flow("u", "udp", udp_bps=60e6, ecn="ect1", access_ms=35.0, start_s=1.0),
    ]
    sc = cases.scenario("x", 40e6, 0.010, flows, {"kind": "dualpi2"}, 5.0)
    db = sc["dumbbell"]
    assert db["pairs"] == 2 and db["bottleneck"]["delay"] == "5ms" and db["access_delays"] == ["0ms", "35ms"]
    assert sc["flows"][0]["tcp"] == {"cc": {"algo": "prague", "rtt_independence": False}}
    u = sc["flows"][1]
    assert (u["src"], u["dst"], u["rate"], u["ecn"], u["start"]) == (
        "sender2",
        "receiver2",
        "60Mbps",
        "ect1",
        "1s",
    )
    assert sc["run"]["record"]["packets"] == ["p", "u"]


def test_pair_window() -> None:
    # At 100 ms the run is three times as long and measured over its last two thirds (Prague's
    # ramp from its slow-start exit lasts up to 31 s there); below, from the warm-up on.
    assert l4s.pair_window(0.100, 30.0) == (90.0, 30.0, 90.0)
    assert l4s.pair_window(0.050, 30.0) == (30.0, l4s.WARMUP_S, 30.0)


def test_served_sojourns_by_hand() -> None:
    # Frames of exactly 1 ms (965 B payload: 993 B IP, 1000 B with PPP, at 8 Mbit/s); "l"
    # (ECT(1)) arrives at 0, .4, .8, 1.2, 1.6 ms, "c" (Not-ECT) at .1, .5, .9, 1.3, 1.7, and the
    # C queue's room (7 packets) refuses the last c. l1 finds the link idle (no sojourn); the
    # TS-FIFO serves L first: l2..l5 leave at 1, 2, 3, 4 ms, then c1..c4 at 5..8 ms.
    def udp(name: str, pair: int, ecn: str, start: str, stop: str) -> dict[str, object]:
        return {
            "name": name,
            "kind": "udp",
            "src": f"sender{pair}",
            "dst": f"receiver{pair}",
            "size": "965B",
            "interval": "0.4ms",
            "ecn": ecn,
            "start": start,
            "stop": stop,
        }

    queue = {"kind": "dualpi2", "alpha": 0.0, "beta": 0.0, "packets": 7}
    sc = {
        "run": {"duration": "1s", "record": {"queues": ["bottleneck"]}},
        "dumbbell": {
            "pairs": 2,
            "mtu": "1500B",
            "bottleneck": {"rate": "8Mbps", "delay": "1ms", "queue": queue},
            "access": {"rate": "1Gbps", "delay": "10us"},
        },
        "flows": [udp("l", 1, "ect1", "100ms", "101.9ms"), udp("c", 2, "not-ect", "100.1ms", "102ms")],
    }
    r = api.run(sc)
    ms = lambda side: np.round(cases.served_sojourns(r, side, 0.0, 1.0) * 1e3, 6).tolist()  # noqa: E731
    assert ms("l") == [0.6, 1.2, 1.8, 2.4]
    assert ms("c") == [4.9, 5.5, 6.1, 6.7]
    q = r.queues
    assert q["l_marks"].iloc[-1] == 2 and q["c_drops"].iloc[-1] == 1


def test_oscillation_of_a_known_sawtooth() -> None:
    # A 20 Hz sawtooth between 12 and 22 packets: amplitude ~10 (2-98 % spread), period 50 ms.
    t = np.arange(0.0, 4.0, dctcp.SAMPLE_S)
    x = 12 + 10 * ((t * 20) % 1.0)
    amp, period, lo, hi = dctcp.oscillation(x)
    assert amp == pytest.approx(9.6, abs=0.1) and period == pytest.approx(0.05, rel=0.01)
    assert lo == pytest.approx(12.2, abs=0.05) and hi == pytest.approx(21.8, abs=0.05)


def test_overload_measures_on_a_short_run() -> None:
    # An ECT(1) source at 1.5x the link through DualPI2 alone: PI2 enters overload and drops it
    # down to the link rate; its packets all wait in the L queue.
    flows = [cases.Flow("udp", "udp", udp_bps=15e6, ecn="ect1")]
    r = api.run(cases.scenario("t", 10e6, 0.020, flows, {"kind": "dualpi2"}, 6.0))
    drop = cases.drop_fraction(r, "udp", 3.0, 6.0)
    # Delivered = the link's rate: 1 - 10/15 of the datagrams (frames carry 7 B of PPP per 1500).
    assert drop == pytest.approx(1 - 10 / 15 * 1500 / 1507, abs=0.03)
    assert cases.utilization(r, 10e6, 3.0, 6.0) > 0.99
    d = cases.queueing_delays(r, "udp", 3.0, 6.0)
    assert len(d) and math.isfinite(float(d.mean()))


@pytest.mark.slow
def test_quick_run(tmp_path: Path) -> None:
    report = rp.reproduce("l4s", tmp_path, quick=True)
    assert report.path is not None and report.path.is_file()
    assert (tmp_path / "l4s" / "overload.png").is_file()
    assert report.ok, [c for c in report.checks if not c.passed]
    assert l4s.TITLE in report.path.read_text(encoding="utf-8")
