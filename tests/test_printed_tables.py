"""What `quicksim run` prints: no column that is "-" in every row, a per-phase table right at any
rate, and the docs naming the summary.json keys that exist (issue 35)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from quicksim.analysis import format_phases
from quicksim.cli._report import format_summary

REPO = Path(__file__).resolve().parent.parent


def _header(text: str, first: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(first))


def test_delay_columns_are_left_out_when_no_run_recorded_them(result: Any) -> None:
    text = format_summary(result.summary())
    flows = _header(text, "flow ")
    queues = _header(text, "queue ")
    assert "OWD" not in flows and "wait p95" not in queues, text
    assert "run.record.delays = true" in text  # says how to get them
    assert "goodput Mbit/s" in flows and "drop %" in queues


def test_delay_columns_are_printed_when_recorded(result: Any) -> None:
    summary = result.summary()
    for f in summary["flows"].values():
        f.update(owd_mean_s=0.01, owd_p50_s=0.01, owd_p95_s=0.02, owd_p99_s=0.03)
    for q in summary["queues"].values():
        q["queueing_p95_s"] = 0.004
    text = format_summary(summary)
    assert "OWD mean/p50/p95/p99 ms" in _header(text, "flow ")
    assert "wait p95 ms" in _header(text, "queue ")
    assert "run.record.delays" not in text


def _phase(fair: float, link: float, share: float) -> dict[str, Any]:
    return {
        "phase": 1,
        "t0_s": 1.5,
        "t1_s": 2.5,
        "flow": "quic",
        "n_active": 1,
        "goodput_mbps": link * 0.95,
        "link_mbps": link,
        "background_mbps": 0.0,
        "fair_share_mbps": fair,
        "share": share,
        "jain": 1.0,
        "total_goodput_mbps": link * 0.95,
        "goodput_of_available": link * 0.95 / fair,
    }


def test_phase_table_is_right_at_100_gbits() -> None:
    """The issue's case: one flow on 100 Gbit/s reaching 0.4 % of it printed "share 0.00", and
    the fair share overflowed its column."""
    text = format_phases(pd.DataFrame([_phase(100_000.0, 412.0, 412.0 / 100_000.0)]))
    header, rule, row = text.splitlines()
    cells = dict(zip(re.split(r"\s{2,}", header.strip()), row.split(), strict=True))
    assert cells["fair share"] == "100,000.000"
    assert cells["share"] == "0.0041"
    assert float(cells["share"]) == pytest.approx(0.00412, rel=0.01)
    # Every column lines up: each cell lies inside its header's rule, nothing between them.
    spans = [m.span() for m in re.finditer(r"-+", rule)]
    assert [row[a:b].strip() for a, b in spans] == row.split()
    assert len(row) <= spans[-1][1]


def test_phase_table_keeps_its_layout_at_10_mbits() -> None:
    text = format_phases(pd.DataFrame([_phase(9.582, 9.547, 9.547 / 9.582)]))
    row = text.splitlines()[2]
    assert "9.547" in row and " 1.00 " in row and "9.582" in row
    assert not math.isnan(float(row.split()[6]))


def test_docs_name_the_capture_key_where_summary_json_has_it() -> None:
    """README and docs/capture.md said summary.json's `capture`; the core writes
    `totals.capture` (tests/test_capture.py reads it there)."""
    for doc in (REPO / "README.md", REPO / "docs" / "capture.md"):
        text = " ".join(doc.read_text(encoding="utf-8").split())
        said = re.findall(r"`summary\.json`\s*(?:lists them\s*)?under\s*`([a-z_.]+)`", text)
        assert said, f"{doc.name} no longer says where summary.json has the capture"
        assert set(said) == {"totals.capture"}, (doc.name, said)


@pytest.mark.core
def test_capture_lands_in_totals(tmp_path: Path) -> None:
    import quicksim

    scenario = quicksim.load_scenario(REPO / "scenarios" / "mathis-tcp.toml")
    scenario["run"]["duration"] = "0.3s"
    scenario["run"]["capture"] = {"links": ["access1"]}
    result = quicksim.run(scenario, out=tmp_path)
    result.save(tmp_path, result.summary())
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "capture" not in summary and summary["totals"]["capture"]["packets"] > 0


def test_readme_says_how_long_the_build_is_silent_and_how_to_see_it() -> None:
    """`pip install .` printed nothing for two minutes: pip hides the build backend's output
    unless asked (-v), so the README says how long it takes and how to watch it."""
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    first = text.index("pip install . && quicksim run")
    said = text[first : first + 1200]
    assert "about two minutes" in said and "`pip install -v .`" in said, said
