"""The scenario the core normalizes (`quicksim.validate`, `Result.scenario`, `scenario.json`): it
holds the defaults, normalizing it again changes nothing, and it reruns bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import quicksim

pytestmark = pytest.mark.core

SHORT = ["run.duration=3s"]


def test_defaults_are_written_out() -> None:
    doc = {
        "run": {"duration": "1s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "0.01s"}},
        "flows": [{"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"}],
    }
    n = quicksim.validate(doc)
    assert n["run"]["seed"] == 1 and n["run"]["record_interval"] == "500ms"
    assert n["run"]["record"]["max_samples"] == 1_000_000
    assert n["dumbbell"]["mtu"] == "1500B" and n["dumbbell"]["access"]["rate"] == "1Gbps"
    bottleneck = n["dumbbell"]["bottleneck"]
    assert bottleneck["delay"] == "10ms"  # the user's value, in its canonical unit
    assert (bottleneck["overhead"], bottleneck["queue"]) == ("7B", {"kind": "droptail", "packets": 10000})
    assert n["flows"][0]["start"] == "0s" and n["flows"][0]["app"] == "saturated"
    assert n["quic"]["initial_rtt"] == "333ms"  # RFC 9002 §6.2.2 kInitialRtt
    assert quicksim.validate(n) == n


@pytest.mark.parametrize("name", ["linksharing", "udp-bottleneck"])
def test_a_saved_scenario_reruns_bit_identically(name: str, tmp_path: Path) -> None:
    first = quicksim.run(name, sets=SHORT)
    first.save(tmp_path / "run")
    saved = json.loads((tmp_path / "run" / "scenario.json").read_text(encoding="utf-8"))
    assert saved == first.scenario and saved["run"]["seed"] == first.meta["seed"]
    again = quicksim.run(tmp_path / "run" / "scenario.json")
    assert again.meta["trace_hash"] == first.meta["trace_hash"]
    assert again.meta["events"] == first.meta["events"]
    assert again.totals == first.totals
    assert again.scenario == saved
