"""Issue 39, durations -> simulated time: `quic.initial_rtt = "5000h"` panicked mid-run with
"simulated time overflow" (a 125-line backtrace). Every duration is now checked against
simulated time's range where it is parsed (at most 50 days, `units::MAX_DURATION`), and the
engine's time arithmetic saturates at "never" instead of panicking, so no duration a scenario
writes can abort a run."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quicksim
from conftest import REPO
from quicksim.errors import ScenarioError

Cli = Callable[..., subprocess.CompletedProcess[str]]

pytestmark = pytest.mark.core


def test_a_huge_initial_rtt_is_a_validation_error(cli: Cli) -> None:
    """The audit's exact input, at validation and at run: one line naming the field."""
    scenario = str(REPO / "scenarios" / "buffer-sizing.toml")
    for command in ("validate", "run"):
        extra = ("--out", "/nonexistent/never-written") if command == "run" else ()
        proc = cli(command, scenario, "--set", "quic.initial_rtt=5000h", *extra)
        assert proc.returncode == 2, proc.stderr
        assert "panicked" not in proc.stderr and "Traceback" not in proc.stderr
        assert proc.stderr.strip().splitlines() == [
            'quicksim: error: quic.initial_rtt: "5000h" is too long: simulated time spans about 213 days, '
            'and a duration is at most 50 days ("4320000s")'
        ]


def test_the_longest_duration_still_runs() -> None:
    """At the limit a run is still fine: an initial RTT of 50 days means a PTO that never fires
    within the run (3 x 50 days + now is in range; its backoffs saturate)."""
    res = quicksim.run(
        REPO / "scenarios" / "buffer-sizing.toml",
        sets=["quic.initial_rtt=1200h", "run.duration=2.5s", "quic.handshake=true"],
    )
    assert res.meta["sim_end_s"] == pytest.approx(2.5)


_DOC: dict[str, Any] = {
    "run": {"duration": "1s"},
    "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "5ms"}},
    "quic": {"handshake": True},
    "flows": [{"name": "f", "kind": "quic", "src": "sender1", "dst": "receiver1"}],
}
_FIELDS = [
    ("quic", "initial_rtt"),
    ("quic", "max_ack_delay"),
    ("quic", "min_ack_delay"),
    ("quic", "ack_frequency_max_ack_delay"),
    ("bottleneck", "delay"),
    ("flow", "start"),
    ("flow", "stop"),
    ("run", "record_interval"),
    ("run", "duration"),
]
# Log-uniform over 0..2^66 picoseconds (the range's edge, 2^64 ps, is where overflows were), in
# picoseconds, or a whole number of hours near the 50-day limit (1200 h).
_PICOSECONDS = st.integers(0, 66).flatmap(lambda b: st.integers(2**b // 2, 2**b))
_DURATIONS = st.one_of(
    _PICOSECONDS.map(lambda n: f"{n}ps"),
    st.sampled_from([1199, 1200, 1201, 2000, 5000, 5124]).map(lambda h: f"{h}h"),
)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(_FIELDS), _DURATIONS)
def test_no_duration_aborts_a_run(field: tuple[str, str], value: str) -> None:
    """Any value in any of these fields: a clean ScenarioError or a run that ends; never a panic
    (SimulationError "internal error"). `run.duration` itself is only validated (a valid one
    may be 50 days long)."""
    import copy

    doc = copy.deepcopy(_DOC)
    table, key = field
    target = {
        "quic": doc["quic"],
        "bottleneck": doc["dumbbell"]["bottleneck"],
        "flow": doc["flows"][0],
        "run": doc["run"],
    }[table]
    target[key] = value
    try:
        quicksim.validate(doc)
    except ScenarioError as e:
        assert "\n" not in str(e)
        return
    if field == ("run", "duration"):
        return
    try:
        res = quicksim.run(doc)
    except ScenarioError as e:
        assert "\n" not in str(e)
        return
    assert res.meta["sim_end_s"] <= 1.0 + 1e-9
