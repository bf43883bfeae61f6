"""`quicksim reproduce quic-vs-tcp` (seed 004): the mapping of netem/tbf onto the model, the
bounds its checks use (computed here by hand), netem's hold limit, and the quick run end to end."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from quicksim import reproduce as rp
from quicksim.reproduce import quic_vs_tcp as qt

FILE = 33_554_432


def test_registered() -> None:
    assert "quic-vs-tcp" in rp.REPRODUCTIONS
    assert rp.module("quic-vs-tcp").NAME == "quic-vs-tcp"


def test_tbf_queue_is_rate_times_latency_plus_burst() -> None:
    # tc tbf rate 5mbit burst 256kbit latency 1000ms: 625 000 B + 32 000 B.
    assert qt.tbf_queue_bytes(5) == 657_000
    assert qt.tbf_queue_bytes(100) == 12_532_000


def test_jitter_keeps_netems_mean_and_standard_deviation() -> None:
    base, width = qt.jitter_base_ms(60, 20)
    # Uniform on [base, base + width]: mean base + width/2, deviation width / sqrt(12).
    assert base + width / 2 == pytest.approx(60)
    assert width / math.sqrt(12) == pytest.approx(20)
    assert qt.jitter_base_ms(60, 0) == (60, 0)
    with pytest.raises(ValueError, match="exceeds the delay"):
        qt.jitter_base_ms(60, 35)


def test_overhead_bounds_by_hand() -> None:
    # QUIC: 1500 - 28 (IP, UDP) - 26 (short header, 8 B CID, 1 B pn, 16 B tag) - 2 (STREAM)
    # = 1444 B per packet; an ACK of 28 + 26 + 5 = 59 B per two packets.
    n = math.ceil(FILE / 1444)
    assert qt.overhead_min("quic") == pytest.approx((FILE + n * 56 + (n // 2) * 59) / FILE)
    # TCP + TLS 1.2: 29 B per 16 kB record in the stream, 1448 B per segment, 52 B headers.
    stream = FILE + 29 * math.ceil(FILE / 16_384)
    m = math.ceil(stream / 1448)
    assert qt.overhead_min("tcp-tls1.2") == pytest.approx((stream + m * 52 + (m // 2) * 52) / FILE)
    # Per data byte QUIC's headers (56 B per 1444 B) weigh more than TCP's (52 B per 1448 B).
    assert qt.overhead_min("quic") > qt.overhead_min("tcp-tls1.2") > qt.overhead_min("tcp-tls1.3") > 1


def test_least_time_by_hand() -> None:
    # 100 Mbit/s, 50 ms, QUIC: 1 RTT (0.1 s) + 50 ms, then the frames at 100 Mbit/s.
    n, data = qt.data_bytes_min("quic", FILE)
    expect = 0.1 + 0.05 + (data + n * 14) * 8 / 100e6
    assert qt.time_min("quic", 100, 50) == pytest.approx(expect)
    # TCP+TLS 1.2 waits two more round trips.
    n2, data2 = qt.data_bytes_min("tcp-tls1.2", FILE)
    assert qt.time_min("tcp-tls1.2", 100, 50) == pytest.approx(0.3 + 0.05 + (data2 + n2 * 14) * 8 / 100e6)


def test_spike_schedule_integrates_the_capacity() -> None:
    r = 10e6
    # From 0.9 s: 0.1 s at full rate, then 0.2 s at 10 %: these bits end exactly at 1.2 s.
    bits = r * 0.1 + 0.1 * r * 0.2
    assert qt.serialize_until(0.9, bits, r, spikes=True) == pytest.approx(1.2)
    # And 0.5 s more at full rate after the spike.
    assert qt.serialize_until(0.9, bits + r * 0.5, r, spikes=True) == pytest.approx(1.7)
    # No spike before the first period.
    assert qt.serialize_until(0.0, r * 0.5, r, spikes=True) == pytest.approx(0.5)
    assert qt.serialize_until(0.0, r * 3, r, spikes=False) == pytest.approx(3.0)


def test_points_cover_the_seeds_grid() -> None:
    pts = qt.grid_points(quick=False)
    grid = pts["grid"]
    assert {p["bw_mbps"] for p in grid} == {100, 40, 5}
    assert {p["delay_ms"] for p in grid} == {10, 20, 40, 50, 60, 80, 100, 120}
    assert {p.get("loss", 0.0) for p in grid} == {0.0, 0.05}
    assert any(p.get("spikes") for p in grid) and any(not p.get("spikes") for p in grid)
    assert {p["protocol"] for p in grid} == set(qt.PROTOCOLS)
    assert sorted({p["jitter_ms"] for p in pts["jitter"]}) == list(qt.JITTER_MS)
    # Each point's scenario values are distinct (the runs are matched back by them).
    keys = [tuple(qt.point(**p).values()) for p in grid]
    assert len(keys) == len(set(keys))


@pytest.mark.core
def test_hold_limit_must_be_positive() -> None:
    import quicksim
    from quicksim.errors import ScenarioError

    doc = qt.scenario()
    doc["links"][0]["hold_limit"] = 0
    with pytest.raises(ScenarioError, match=r"hold_limit.*at least 1"):
        quicksim.run(doc)


@pytest.mark.core
def test_handshake_probe_times_match_the_round_trips() -> None:
    """A one-packet transfer at 10 ms: k RTTs + D + serialization; the differences between the
    protocols are whole round trips (20 ms each) up to the serialization of their flights."""
    import quicksim

    times = {}
    for proto in qt.PROTOCOLS:
        doc = qt.scenario()
        doc["run"]["duration"] = "5s"
        sets = [f"{k}={json.dumps(v)}" for k, v in qt.point(proto, 40, 10, file_bytes=1000).items()]
        r = quicksim.run(doc, sets=sets)
        times[proto] = r.totals["flows"]["download"]["completion_time_s"]
    # TLS 1.2's server flights (4.5 kB) take < 1 ms at 40 Mbit/s.
    assert times["tcp-tls1.2"] - times["quic"] == pytest.approx(0.040, abs=2e-3)
    assert times["tcp-tls1.3"] - times["quic"] == pytest.approx(0.020, abs=2e-3)
    assert times["quic"] >= 0.030


@pytest.mark.core
@pytest.mark.slow
def test_quick_reproduction(tmp_path: Path) -> None:
    report = rp.reproduce("quic-vs-tcp", tmp_path, quick=True, jobs=2)
    assert report.ok, [(c.name, c.measured, c.expected) for c in report.checks if not c.passed]
    out = tmp_path / "quic-vs-tcp"
    for filename, _ in report.figures:
        assert (out / filename).stat().st_size > 10_000, filename
    for filename, _ in report.csvs:
        assert (out / filename).is_file(), filename
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "The seed's conclusions, one by one" in text


def test_series_are_thinned_per_repetition_keeping_the_last_point() -> None:
    import pandas as pd

    from quicksim.reproduce.quic_vs_tcp import plots as pl

    f = pd.DataFrame({"rep": [0] * 1000 + [1] * 10, "t_s": [*range(1000), *range(10)]})
    kept = f[pl._thin(f)]
    sizes = kept.groupby("rep").size()
    assert sizes[0] <= pl.MAX_POINTS + 1 and sizes[1] == 10
    assert kept[kept["rep"] == 0]["t_s"].iloc[-1] == 999
