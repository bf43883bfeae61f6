"""`quicksim.units`: quantities read by the core's parser, so Python and scenario files agree."""

from __future__ import annotations

import pytest

from quicksim import ScenarioError, units

pytestmark = pytest.mark.core


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("500ms", 0.5),
        ("3s", 3.0),
        ("1.5s", 1.5),
        ("102.96us", 102.96e-6),
        ("2min", 120.0),
        ("1h", 3600.0),
        ("10 ms", 0.01),
        ("250ps", 250e-12),
    ],
)
def test_seconds_reads_units_as_the_core_does(text: str, expected: float) -> None:
    assert units.seconds(text) == pytest.approx(expected, rel=1e-15)


def test_seconds_takes_numbers_as_seconds() -> None:
    assert units.seconds(2) == 2.0
    assert units.seconds(0.25) == 0.25
    assert units.seconds("1.5") == 1.5  # a plan may write a time as a bare number string


@pytest.mark.parametrize("bad", ["3 parsecs", "-1s", "fast", "0.1ps", True])
def test_seconds_names_what_is_not_a_time(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^metrics\.t0: .* is not a time"):
        units.seconds(bad, "metrics.t0")


def test_bits_per_s() -> None:
    assert units.bits_per_s("10Mbps") == 10_000_000
    assert units.bits_per_s("2.5Gbps") == 2_500_000_000
    assert units.bits_per_s("64kbit/s") == 64_000
    with pytest.raises(ScenarioError, match=r'"10 Mbs" is not a rate; try "10Mbps"'):
        units.bits_per_s("10 Mbs")


def test_bytes_counts_bits_and_binary_prefixes() -> None:
    assert units.bytes_("1500B") == 1500
    assert units.bytes_("25kB") == 25_000
    assert units.bytes_("200kb") == 25_000  # b is bits (OMNeT++)
    assert units.bytes_("1KiB") == 1024
    with pytest.raises(ScenarioError, match="not a whole number of bytes"):
        units.bytes_("1.5B")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2ms", (2.0, "ms")),
        (" 2.5 Mbps ", (2.5, "Mbps")),
        ("40%", (40.0, "%")),
        ("7", (7.0, "")),
        ("ms", None),
    ],
)
def test_split_number(text: str, expected: tuple[float, str] | None) -> None:
    assert units.split_number(text) == expected
