"""The ack-policy reproductions (paper-fig7, ack-frequency) in --quick mode, and the scenario
options they rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from quicksim import api
from quicksim.errors import ScenarioError
from quicksim.reproduce import reproduce
from quicksim.reproduce.common import ackpolicy as ap
from quicksim.validation import scenario_path


def test_ibit_changes_nothing_at_ack_ratio_one() -> None:
    # paper_fig7.SAME_AS relies on it: with 1:1 the I-Bit neither changes a packet nor a timing.
    _, plain = ap.run_policy(1, 0.001, 5, ["quic.ack_ratio=1"], 100)
    _, ibit = ap.run_policy(1, 0.001, 5, ["quic.ack_ratio=1", "quic.ibit=true"], 100)
    assert plain == ibit


def test_ack_frequency_policy_reaches_the_receiver() -> None:
    sets = [
        "quic.min_ack_delay=1ms",
        "quic.ack_policy=fixed",
        "quic.ack_frequency_threshold=9",
        "quic.immediate_ack_on_block=true",
    ]
    r, v = ap.run_policy(1, 0.001, 5, sets, 100)
    q = r.totals["flows"]["quic"]["quic"]
    assert q["ack_frequency_frames_sent"] >= 1
    assert q["receiver_ack_frequency_frames_applied"] == q["ack_frequency_frames_sent"]
    # Every IMMEDIATE_ACK that arrives is honoured (a few are lost on the way or still in flight).
    sent, honoured = q["immediate_ack_frames_sent"], q["receiver_immediate_acks_honoured"]
    assert 0.95 * sent <= honoured <= sent
    assert 0.1 <= v["ack_pkts_per_data"] < 0.5


@pytest.mark.parametrize(
    ("sets", "field"),
    [
        (["quic.ack_policy=bogus", "quic.min_ack_delay=1ms"], "quic.ack_policy"),
        (["quic.ack_policy=fixed", "quic.ack_frequency_threshold=9"], "quic.min_ack_delay"),
        (["quic.ack_policy=fixed", "quic.min_ack_delay=1ms"], "quic.ack_frequency_threshold"),
        (["quic.immediate_ack_on_block=true"], "quic.min_ack_delay"),
        (["quic.ack_frequency_max=4", "quic.min_ack_delay=1ms"], "quic.ack_frequency_max"),
    ],
)
def test_ack_policy_errors_name_the_field(sets: list[str], field: str) -> None:
    with pytest.raises(ScenarioError, match=field):
        api.run(scenario_path("ack-ratio"), sets=["run.duration=10ms", *sets])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["paper-fig7", "ack-frequency"])
def test_reproduction_quick(name: str, tmp_path: Path) -> None:
    report = reproduce(name, tmp_path, quick=True, jobs=2)
    out = tmp_path / name
    assert (out / "report.md").exists() and report.checks
    assert len(list(out.glob("*.png"))) >= 3
    assert not any("run failed" in c.note or c.name == "runs without error" for c in report.checks)
    # The mechanism shows even in quick mode: 1:10 loses throughput at p = 0.1 %, the I-Bit fixes it.
    ibit = next(c for c in report.checks if c.name.startswith("p=0.1% 1:10 + I-Bit"))
    assert ibit.measured < 5.0
