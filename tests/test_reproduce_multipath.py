"""`quicksim reproduce multipath --quick`: every check passes and the report's files exist; the
shared-bottleneck checks judge hand-made ratios as their bands say. The congested-and-free
path and the published (Khalili) scenarios A, B and C have their own file,
test_reproduce_multipath_published.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from quicksim import reproduce as rp


@pytest.mark.core
def test_multipath_quick_passes_and_writes_its_files(tmp_path: Path) -> None:
    report = rp.reproduce("multipath", tmp_path, quick=True)
    out = tmp_path / "multipath"
    assert report.ok, [c.name for c in report.checks if not c.passed]
    # 13 of aggregation, failover, backup (lte left again once wifi is back included) and
    # migration; 8 of the shared bottleneck (uncoupled, lia, olia); 15 of the congested and free
    # path (4 algorithms); 9 of the Khalili scenarios A and C (8 model-against-draft and Scenario
    # C's LIA users at N1 = 10; quick runs no single-path column for the type1 checks); 5 of
    # Scenario B (2 model-against-draft, 3 of the draft's claims).
    assert len(report.checks) == 50
    names = {c.name for c in report.checks}
    assert "congested + free path, olia: share below 0.6x uncoupled" in names
    assert "Khalili C, N1=10: LIA's multipath users over single-path users" in names
    assert "Khalili B: the aggregate falls less with OLIA than with LIA" in names
    for filename, _ in report.figures:
        assert (out / filename).stat().st_size > 10_000, filename
    for filename, _ in report.csvs:
        assert (out / filename).is_file(), filename


def test_shared_bottleneck_checks_follow_their_bands() -> None:
    """A coupled mean of 1.0 passes and one of 1.5 (above 1.2, and above 0.6x an uncoupled 2.0)
    fails; an uncoupled mean of 1.5 fails its low bound of 1.8."""
    import pandas as pd

    from quicksim.reproduce.multipath import shared_checks

    def verdicts(rows: list[tuple[str, float]]) -> dict[str, bool]:
        rec = [{"algo": a, "seed": i, "ratio": r, "predicted": 1.0} for i, (a, r) in enumerate(rows)]
        df = pd.DataFrame(rec)
        return {c.name: c.passed for c in shared_checks(df)}

    good = verdicts([("uncoupled", 2.0), ("uncoupled", 2.2), ("lia", 0.9), ("lia", 1.1)])
    assert all(good.values()) and len(good) == 5, good
    bad = verdicts([("uncoupled", 2.0), ("lia", 1.5)])
    assert not bad["shared bottleneck, lia: multipath / single-path goodput (high)"]
    assert not bad["shared bottleneck, lia below 0.6x uncoupled"]
    assert bad["shared bottleneck, lia: multipath / single-path goodput (low)"]
    low = verdicts([("uncoupled", 1.5)])
    assert not low["shared bottleneck, uncoupled: multipath / single-path goodput (low)"]
