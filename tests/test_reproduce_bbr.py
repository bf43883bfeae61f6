"""`quicksim reproduce bbr`: the theory it compares with, and its quick mode end to end."""

from __future__ import annotations

import csv
import math
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from quicksim import reproduce as rp
from quicksim.reproduce import bbr
from quicksim.reproduce.bbr import mechanism as mech

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_registered() -> None:
    assert "bbr" in rp.REPRODUCTIONS and rp.module("bbr").NAME == "bbr"


def test_mathis_rate_by_hand() -> None:
    # 1448 B · 8 / 40 ms = 289.6 kbit/s per segment of window; · sqrt(3 / 0.02) = 12.247.
    assert bbr.mathis_mbps(0.040, 0.01) == pytest.approx(0.2896 * math.sqrt(150), rel=1e-12)
    assert bbr.mathis_mbps(0.040, 0.01) == pytest.approx(3.5468, abs=1e-4)
    # The payload capacity of 10 Mbit/s with 1500-byte packets.
    assert pytest.approx(9.6533, abs=1e-4) == bbr.GOODPUT_MAX_MBPS


def test_lower_bound_model_by_hand() -> None:
    # 10 Mbit/s, 41 ms: W = 34.17 packets a round, N = min(W, 63, 2.5 / 0.041 = 61) = W.
    # p = 1 %: a cut every L = 1 + 1 / 0.3417 = 3.927 rounds, d = 1 - 0.99 · 0.99 = 0.0199;
    # D = (34.17 - 3) / 3.927 · 0.0199 = 0.158; cruise mean (1 - e^-D) / D = 0.9250;
    # (31.17 · 0.9250 + 3) / 34.17 = 0.9316.
    frac, big_d = mech.lower_bound_model(10, 0.01)
    assert big_d == pytest.approx(0.1579, abs=1e-4)
    assert frac == pytest.approx(0.9316, abs=1e-4)
    # 100 Mbit/s at 0.1 % has the same losses per round (pW = 0.34), twice the rounds per
    # cycle (61) at about half the cut (d = 0.011): the same D.
    assert mech.lower_bound_model(100, 0.001)[1] == pytest.approx(big_d, rel=0.05)
    assert mech.lower_bound_model(10, 0.0) == (1.0, 0.0)


def test_probe_rtt_dips_are_the_starts_of_low_runs() -> None:
    t = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
    low = [False, True, True, False, True, False]
    assert bbr._dips(t, low) == [1.1, 1.4]


@pytest.mark.slow
@pytest.mark.core
def test_bbr_quick_end_to_end(cli: Cli, tmp_path: Path) -> None:
    proc = cli("reproduce", "bbr", "--quick", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "bbr"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "checks passed" in report
    for png in ("loss.png", "share_vs_buffer.png", "ns3_side_by_side.png"):
        assert (out / png).stat().st_size > 10_000
    with open(out / "checks.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    failed = [r["name"] for r in rows if r["passed"] != "True"]
    assert not failed, failed


@pytest.mark.core
def test_quic_bbr1_keeps_the_link_under_one_percent_loss(tmp_path: Path) -> None:
    """The same loss test over QUIC (bbr-loss.toml's path): BBRv1 paces through QUIC too and
    keeps ≥ 90 % of what the link carries as payload: each 1500-byte packet holds at least
    1422 B of stream data (28 B UDP/IP, a short header and a STREAM frame header of at most
    25 B each), so 0.9 · 10 Mbit/s · 1422/1500 = 8.53 Mbit/s."""
    import quicksim

    scenario = tmp_path / "quic-bbr-loss.toml"
    scenario.write_text(
        """
name = "quic-bbr-loss"
[run]
duration = "20s"
record_interval = "0.5s"
[dumbbell]
pairs = 1
mtu = "1500B"
access = { rate = "1Gbps", delay = "0s", queue = { packets = 100000 } }
[dumbbell.bottleneck]
rate = "10Mbps"
delay = "20ms"
queue = { packets = 100 }
forward = { loss = { kind = "bernoulli", p = 0.01 } }
[quic]
handshake = false
cc = "bbr1"
initial_max_data = "4294967295B"
initial_max_stream_data = "4294967295B"
send_queue_limit = "2MB"
[[flows]]
name = "q"
kind = "quic"
src = "sender1"
dst = "receiver1"
""",
        encoding="utf-8",
    )
    res = quicksim.run(scenario)
    f = res.flows[(res.flows.flow == "q") & (res.flows.t_s >= 5)]
    goodput = float(f.delivered_bytes.sum()) * 8 / 15 / 1e6
    assert goodput >= 0.9 * 10 * 1422 / 1500, goodput
    cubic = quicksim.run(scenario, sets=["quic.cc=cubic"])
    c = cubic.flows[(cubic.flows.flow == "q") & (cubic.flows.t_s >= 5)]
    # CUBIC at its Mathis rate, well below: 1422 B · 8 / 41 ms · sqrt(150) = 3.4 Mbit/s (± 25 %).
    assert float(c.delivered_bytes.sum()) * 8 / 15 / 1e6 < 0.5 * goodput
