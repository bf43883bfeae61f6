"""Property test of `--set` and the whole input path: random and mutated overrides (keys, TOML
values, unit strings, huge numbers, deep nestings, control characters) applied to a real
scenario. Every one is either accepted or refused with a ScenarioError whose message is one
line; nothing else escapes (no TypeError, RecursionError, OverflowError, no Rust panic). A
sample goes through the CLI in a subprocess: exit status 0 or 2, one error line, no traceback.
The bulk of the 10^5 cases runs in Rust (`crates/quicksim-scenario/tests/it/fuzz.rs`)."""

from __future__ import annotations

import random
import subprocess
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quicksim
from conftest import REPO

SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"
BASE = quicksim.load_scenario(SCENARIO)

KEYS = [
    "run.duration", "run.seed", "run.record_interval", "run.max_events", "run.record.links",
    "run.record.max_samples", "dumbbell.pairs", "dumbbell.mtu", "dumbbell.bottleneck.rate",
    "dumbbell.bottleneck.delay", "dumbbell.bottleneck.queue.packets", "dumbbell.bottleneck.loss",
    "dumbbell.access_delays", "flows.cbr.start", "flows.cbr.size", "flows.0.rate", "flows.1.interval",
    "flows.poisson.name", "flows.9.start", "flows", "links", "nodes.x.kind", "x", 'flows."cbr".stop',
    # Issue 39: durations against simulated time's range, names that become file names.
    "quic.initial_rtt", "quic.max_ack_delay", "run.record.qlog", "flows.0.name",
    # Issue 39, the memory budget: the growing tables' settings.
    "run.record.drops", "run.record.queues", "run.record.packets", "run.record.conn",
]  # fmt: skip
VALUES = [
    "1s", "0s", "1ps", "10ns", "-1s", "1e-3s", "10 Mbs", "10Mbps", "0", "-1", "1", "3", "1.5", "nan",
    "inf", "-inf", "true", '"quoted"', "[1, 2]", '{ kind = "bernoulli", p = 0.5 }',
    '{ kind = "bernoulli", p = nan }', "18446744073709551616", "9" * 300, "9" * 5000, "[" * 3000 + "]" * 3000,
    "{}", "[]", "", "µs", "\x00", "💥", "2000-01-01", "1\nx = 2", "1500B", "20B", "sender1", "router1",
    "5000h", "1200h", "1201h", "4320000s", '"../../x"', '"/abs"', '"a/b"', '["../../x"]',
    "1000Tbps", "11776Gbps", "11777Gbps", "18446744073709551615bps", '["cbr"]', "false",
]  # fmt: skip

texts = st.one_of(
    st.sampled_from(VALUES),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    st.builds(
        lambda n, u: f"{n}{u}", st.integers(-(10**30), 10**30), st.sampled_from(["", "s", "ms", "Mbps", "B"])
    ),
)
keys = st.one_of(
    st.sampled_from(KEYS),
    st.text(alphabet="abcflows.0123[]\"' =", min_size=0, max_size=20),
)
overrides = st.lists(
    st.one_of(st.builds(lambda k, v: f"{k}={v}", keys, texts), st.text(max_size=20)), min_size=1, max_size=3
)


def _check(sets: list[str]) -> None:
    try:
        quicksim.validate(BASE, sets=sets)
    except quicksim.ScenarioError as e:
        message = str(e)
        assert message and "\n" not in message, repr(message)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(overrides)
def test_random_overrides_are_accepted_or_one_line_errors(sets: list[str]) -> None:
    _check(sets)


def test_mutated_overrides_through_the_cli(cli: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    rng = random.Random(20)
    for _ in range(12):
        key = rng.choice(KEYS)
        value = list(rng.choice(VALUES))
        for _ in range(rng.randint(0, 2)):
            value.insert(rng.randint(0, len(value)), rng.choice('[]{}"=.,0-9e µ'))
        p = cli("validate", str(SCENARIO), "--set", f"{key}={''.join(value)}")
        assert p.returncode in (0, 2), p.stderr[-2000:]
        assert "Traceback" not in p.stderr and "panicked" not in p.stderr, p.stderr[-2000:]
        if p.returncode == 2:
            lines = p.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("quicksim: error: "), p.stderr[-2000:]
