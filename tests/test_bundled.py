"""Every bundled scenario is valid, and is found by its bare name."""

from __future__ import annotations

from pathlib import Path

import pytest

import quicksim

pytestmark = pytest.mark.core

BUNDLED = sorted((Path(quicksim.__file__).parent / "scenarios").glob("*.toml"))


def test_the_bundle_is_not_empty() -> None:
    assert {"linksharing", "udp-bottleneck", "mathis"} <= {p.stem for p in BUNDLED}


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_scenario_validates(path: Path) -> None:
    by_path = quicksim.validate(path)
    by_name = quicksim.validate(path.stem)
    assert by_path == by_name
    assert by_path["run"]["duration"]
