"""The `conn` table's retransmission-timeout columns from the Python side (issue 13): `rttvar_s`,
`rto_s` and `timeouts` reach the DataFrame and survive save/load, TCP's RTO is RFC 6298's
formula of the same row, and the per-flow totals' `timeouts` is the table's last count. The
backoff and QUIC's PTO are checked in the Rust integration tests (`tests/it/rto.rs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

import quicksim


def _scenario() -> dict[str, Any]:
    # 2 % random loss on a short path: both flows recover, mostly by fast retransmit, but with
    # this seed each sender's timer also expires a few times. TCP's RTO floor is lowered to
    # 10 ms so that RFC 6298's SRTT + max(G, 4 RTTVAR) is what the rows show, not 200 ms.
    return {
        "run": {"duration": "3s", "seed": 3},
        "tcp": {"min_rto": "10ms"},
        "dumbbell": {
            "pairs": 2,
            "bottleneck": {"rate": "10Mbps", "delay": "10ms", "loss": {"kind": "bernoulli", "p": 0.02}},
        },
        "flows": [
            {"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"},
            {"name": "t", "kind": "tcp", "src": "sender2", "dst": "receiver2"},
        ],
    }


def test_rto_columns_follow_the_rtts_and_survive_save_load(tmp_path: Path) -> None:
    r = quicksim.run(_scenario())
    cols = list(r.conn.columns)
    assert cols[cols.index("min_rtt_s") + 1 : cols.index("min_rtt_s") + 3] == ["rttvar_s", "rto_s"]
    assert cols[cols.index("retransmitted_bytes") + 1] == "timeouts"
    # TCP (min_rto 10 ms, clock granularity 1 ms by default): RTO = max(10 ms, SRTT + max(1 ms,
    # 4 RTTVAR)) times 2**backoff: a row without backoff has exactly the formula, one after an
    # expiry (before the next RTT sample) twice it. Columns are picoseconds as float seconds,
    # so the relative tolerance of 1e-9 only absorbs their rounding.
    t = r.conn[(r.conn["flow"] == "t") & (r.conn["srtt_s"] > 0)]
    assert len(t) > 100
    base = np.maximum(0.01, t["srtt_s"] + np.maximum(0.001, 4 * t["rttvar_s"]))
    ratio = (t["rto_s"] / base).to_numpy()
    k = np.round(np.log2(ratio))
    assert (k >= 0).all() and np.allclose(ratio, 2.0**k, rtol=1e-9, atol=0)
    assert (k == 0).mean() > 0.9, "backoff in most rows"
    assert (k == 1).sum() >= r.totals["flows"]["t"]["tcp"]["timeouts"] > 0
    for name, kind in (("q", "quic"), ("t", "tcp")):
        rows = r.conn[r.conn["flow"] == name]
        assert rows["rto_s"].notna().all() and (rows["rto_s"] > rows["srtt_s"]).all()
        assert r.totals["flows"][name][kind]["timeouts"] == rows["timeouts"].iloc[-1] > 0
    r.save(tmp_path / "run")
    back = quicksim.load(tmp_path / "run")
    for c in ("rttvar_s", "rto_s", "timeouts"):
        assert back.conn[c].equals(r.conn[c]), c
