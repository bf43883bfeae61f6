"""`quicksim reproduce multipath --quick`: every check passes and the report's files exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from quicksim import reproduce as rp


@pytest.mark.core
def test_multipath_quick_passes_and_writes_its_files(tmp_path: Path) -> None:
    report = rp.reproduce("multipath", tmp_path, quick=True)
    out = tmp_path / "multipath"
    assert report.ok, [c.name for c in report.checks if not c.passed]
    assert len(report.checks) == 12
    for filename, _ in report.figures:
        assert (out / filename).stat().st_size > 10_000, filename
    for filename, _ in report.csvs:
        assert (out / filename).is_file(), filename
