"""`cubic-dumbbell` (seed 001): its theory against hand computations, the sender the scenario
builds (1180 B per packet, a configurable initial window on QUIC and TCP), and the quick run."""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

from quicksim import api
from quicksim.errors import ScenarioError
from quicksim.reproduce.cubic_dumbbell import study as cd


def test_slow_start_bound_by_hand() -> None:
    # 100 Mbit/s, RTT 20 ms, IW 1, two flows. Goodput 12.5 MB/s x 1180/1236 = 11 933 657 B/s,
    # 238 673 B per RTT. Rounds carry 2, 4, ..., 128 packets (2 x 2^(j-1) x 1180 B) while below
    # that; round 8 (256 packets = 302 080 B) would exceed it. Rounds 1-7 carry 254 packets =
    # 299 720 B in 7 RTTs after the first RTT, the rest at line rate.
    cap = 100e6 / 8 * 1180 / 1236
    total = 2 * cd.FILE_BYTES
    expected = 0.020 + 7 * 0.020 + (total - 254 * 1180) / cap
    assert cd.slow_start_makespan_s(total, 2, 100e6, 0.020, 1) == pytest.approx(expected, rel=1e-12)
    # A file that fits in the first round: one RTT, then its bytes at line rate.
    assert cd.slow_start_makespan_s(2 * 1180, 2, 100e6, 0.020, 1) == pytest.approx(0.020 + 2360 / cap)
    # The bound falls with capacity (the slow-start rounds weigh more) and never exceeds the
    # goodput fraction; IW 10 raises it; a 10x longer file raises it.
    bounds = [cd.utilization_bound(c, 20.0, 1, cd.FILE_BYTES, "quic") for c in cd.CAPACITIES]
    assert all(a > b for a, b in itertools.pairwise(bounds))
    assert bounds[0] < cd.goodput_fraction("quic")
    assert cd.utilization_bound(1000, 20, 10, cd.FILE_BYTES, "quic") > bounds[-1]
    assert cd.utilization_bound(1000, 20, 1, 10 * cd.FILE_BYTES, "quic") > bounds[-1]


def test_rfc9438_average_window_cells() -> None:
    # RFC 9438 §5.1 Table 1 (RTT 0.1 s): 12 at p = 1e-2 (Reno-friendly), 187 at 1e-4 (cubic).
    assert round(cd.avg_window_segments(1e-2, 0.1)) == 12
    assert round(cd.avg_window_segments(1e-4, 0.1)) == 187
    # 1 % loss at 20 ms: 12 segments of 1180 B per 20 ms = 5.664 Mbit/s per flow.
    assert cd.mathis_goodput_bps(0.01, 0.02) == pytest.approx(12 * 1180 * 8 / 0.02)
    assert cd.loss_utilization(0.0, 100, 20, "quic") == pytest.approx(1180 / 1236)


def _small(transport: str, iw: int, file_bytes: int) -> dict[str, Any]:
    doc = cd.scenario(transport)
    doc["flows"] = doc["flows"][:1]
    doc["flows"][0]["bytes"] = f"{file_bytes}B"
    doc[transport]["initial_window"] = iw
    doc["run"].update(duration="2s", record={"packets": ["flow1"]})
    return doc


@pytest.mark.core
@pytest.mark.parametrize(("transport", "iw"), [("quic", 1), ("quic", 4), ("tcp", 1), ("tcp", 4)])
def test_the_first_flight_is_the_initial_window(transport: str, iw: int) -> None:
    """Data packets of 1180 B payload, and as many in the first data flight as the configured
    initial window (QUIC: the client's Handshake packet also counts against the window of 1)."""
    r = api.run(_small(transport, iw, 100 * cd.PAYLOAD))
    sent = r.packets[(r.packets.node == "sender1") & (r.packets.event == "send")]
    # Full data packets on the wire: QUIC packet + UDP/IPv4, or TCP segment + IPv4/TCP headers.
    full = cd.QUIC_PACKET + 28 if transport == "quic" else cd.PAYLOAD + 40
    assert int(sent.bytes.max()) == full
    # 118 000 B = 100 x 1180 B: 100 full packets, or 99 when QUIC's first stream bytes ride in
    # the coalesced handshake datagram (then the last one is partial).
    assert len(sent[sent.bytes == full]) >= 99
    # The first flight after the handshake's round trip (RTT 20 ms): every packet that counts
    # against the window (ACK-only packets are under 100 B), before any of it can be acked.
    later = sent[(sent.t_s > 0.015) & (sent.bytes > 100)]
    first = later.t_s.min()
    assert len(later[later.t_s < first + 0.010]) == iw


@pytest.mark.core
@pytest.mark.parametrize("table", ["quic", "tcp"])
def test_initial_window_zero_names_the_field(table: str) -> None:
    doc = _small(table, 1, 1180)
    doc[table]["initial_window"] = 0
    with pytest.raises(ScenarioError, match="initial_window"):
        api.run(doc)


@pytest.mark.core
def test_metrics_of_one_run() -> None:
    """Utilization = both files / (C x makespan), never above payload/frame; JFI of file/time."""
    doc = cd.scenario()
    r = api.run(doc)
    m = cd.transfer_metrics(r)
    t = r.totals["flows"]
    end = max(t[f]["start_s"] + t[f]["completion_time_s"] for f in ("flow1", "flow2"))
    assert m["util"] == pytest.approx(2 * cd.FILE_BYTES * 8 / (100e6 * end))
    assert m["util"] <= cd.utilization_bound(100, 20, 1, cd.FILE_BYTES, "quic")
    thr = [cd.FILE_BYTES * 8 / t[f]["completion_time_s"] for f in ("flow1", "flow2")]
    assert m["jfi"] == pytest.approx(sum(thr) ** 2 / (2 * sum(x * x for x in thr)))
    assert not math.isnan(m["drops"])


@pytest.mark.core
@pytest.mark.slow
def test_quick_reproduction(tmp_path: Path) -> None:
    from quicksim.reproduce import reproduce

    report = reproduce("cubic-dumbbell", tmp_path, quick=True, jobs=2)
    assert report.ok, [(c.name, c.measured, c.expected) for c in report.checks if not c.passed]
    out = tmp_path / "cubic-dumbbell"
    for filename, _ in report.figures:
        assert (out / filename).stat().st_size > 10_000, filename
    for filename, _ in report.csvs:
        assert (out / filename).is_file(), filename
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "slow-start bound" in text and "Experiment 4" in text
