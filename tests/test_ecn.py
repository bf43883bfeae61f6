"""ECN from the Python side (issue 16): `quic.ecn` / `tcp.ecn` (with `--set`-style overrides and a
flow's own table) reach the transports, the `conn` table has the ECN columns, and the flow's
totals say where ECN stands. No queue marks CE here (DropTail drops), so the counts are zero
and the flows validate ECN on a clean path; marking is tested in the Rust integration tests."""

from __future__ import annotations

from typing import Any

import quicksim


def _scenario(kind: str) -> dict[str, Any]:
    return {
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 2, "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
        "flows": [
            {"name": "on", "kind": kind, "src": "sender1", "dst": "receiver1"},
            {"name": "off", "kind": kind, "src": "sender2", "dst": "receiver2"},
        ],
    }


def test_quic_ecn_per_flow_and_its_outputs() -> None:
    doc = _scenario("quic")
    doc["flows"][1]["quic"] = {"ecn": False}
    result = quicksim.run(doc, sets=["quic.ecn=true"])
    assert {"ce_marks", "ecn_events"} <= set(result.conn.columns)
    assert (result.conn[["ce_marks", "ecn_events"]] == 0).all().all()
    flows = result.totals["flows"]
    assert flows["on"]["quic"]["ecn"] == {
        "state": "capable",
        "receiver_state": "capable",
        "ce_marks": 0,
        "ecn_congestion_events": 0,
        "receiver_ce_marks": 0,
    }
    assert "ecn" not in flows["off"]["quic"]
    assert result.totals["queues"]["bottleneck:router1->router2"]["ecn_marked_packets"] == 0


def test_tcp_ecn_is_negotiated() -> None:
    result = quicksim.run(_scenario("tcp"), sets=["tcp.ecn=true", "flows.off.tcp.ecn=false"])
    flows = result.totals["flows"]
    assert flows["on"]["tcp"]["ecn"]["state"] == "capable"
    assert "ecn" not in flows["off"]["tcp"]
