"""One unit grammar: the scenario (core), `--set`, metric parameters and sweep values read
quantities the same way (issue 19: the core rejected "1e-3s" and "1.5e7bps" while the Python
parsers accepted them). The same cases as `units::tests::exponents` in quicksim-engine."""

from __future__ import annotations

import pytest

import quicksim
from quicksim import ScenarioError, units
from quicksim.sweep import make_plan

# (text, seconds or None if rejected)
DURATIONS = [
    ("1e-3s", 0.001),
    ("2E3ms", 2.0),
    ("2.5e+1ms", 0.025),
    ("1.5s", 1.5),
    ("250us", 0.00025),
    ("1e-13s", None),  # below a picosecond
    ("1es", None),
    ("3 parsecs", None),
]
RATES = [("1.5e7bps", 15_000_000), ("1e1Gbps", 10_000_000_000), ("10Mbps", 10_000_000), ("1e-1bps", None)]


@pytest.mark.parametrize(("text", "expected"), DURATIONS)
def test_durations_read_alike_everywhere(text: str, expected: float | None) -> None:
    scenario = quicksim.load_scenario("udp-bottleneck")
    if expected is None:
        with pytest.raises(ValueError):
            units.seconds(text)
        with pytest.raises(ScenarioError):
            quicksim.validate(scenario, [f"run.duration={text}"])
        return
    assert units.seconds(text) == pytest.approx(expected, rel=1e-15)
    normalized = quicksim.validate(scenario, [f"run.duration={text}"])
    assert units.seconds(normalized["run"]["duration"]) == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("text", "expected"), RATES)
def test_rates_read_alike_everywhere(text: str, expected: int | None) -> None:
    scenario = quicksim.load_scenario("udp-bottleneck")
    override = f"dumbbell.bottleneck.rate={text}"
    if expected is None:
        with pytest.raises(ScenarioError):
            units.bits_per_s(text)
        with pytest.raises(ScenarioError):
            quicksim.validate(scenario, [override])
        return
    assert units.bits_per_s(text) == expected
    assert (
        units.bits_per_s(quicksim.validate(scenario, [override])["dumbbell"]["bottleneck"]["rate"])
        == expected
    )


def test_sweep_values_and_metric_parameters_use_the_same_grammar() -> None:
    plan = make_plan(
        "udp-bottleneck",
        {"dumbbell.bottleneck.delay": ["1e-3s", "2E3us"]},
        metrics=[{"name": "goodput_mbps", "t0": "1e-1s"}],
    )
    assert plan.params["dumbbell.bottleneck.delay"] == ["1e-3s", "2E3us"]
    with pytest.raises(Exception, match="parsecs"):
        make_plan("udp-bottleneck", {}, metrics=[{"name": "goodput_mbps", "t0": "3 parsecs"}])


def test_sweep_runs_get_numeric_columns_for_parameters_with_units() -> None:
    result = quicksim.sweep(
        "udp-bottleneck",
        {"dumbbell.bottleneck.delay": ["1ms", "3ms"], "dumbbell.bottleneck.rate": ["5Mbps", "1e7bps"]},
        metrics=["goodput_mbps"],
        sets=["run.duration=1s"],
        jobs=1,
        progress=False,
    )
    runs = result.runs
    columns = list(runs.columns)
    assert columns.index("dumbbell.bottleneck.delay_s") == columns.index("dumbbell.bottleneck.delay") + 1
    by_text = dict(zip(runs["dumbbell.bottleneck.delay"], runs["dumbbell.bottleneck.delay_s"], strict=True))
    assert by_text == {"1ms": pytest.approx(0.001), "3ms": pytest.approx(0.003)}
    rates = dict(zip(runs["dumbbell.bottleneck.rate"], runs["dumbbell.bottleneck.rate_bps"], strict=True))
    assert rates == {"5Mbps": 5e6, "1e7bps": 1e7}
