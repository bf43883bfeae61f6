"""`quicksim reproduce bbr`: the theory it compares with, and its quick mode end to end."""

from __future__ import annotations

import csv
import math
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from quicksim import reproduce as rp
from quicksim.reproduce import bbr

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_registered() -> None:
    assert "bbr" in rp.REPRODUCTIONS and rp.module("bbr").NAME == "bbr"


def test_mathis_rate_by_hand() -> None:
    # 1448 B · 8 / 40 ms = 289.6 kbit/s per segment of window; · sqrt(3 / 0.02) = 12.247.
    assert bbr.mathis_mbps(0.040, 0.01) == pytest.approx(0.2896 * math.sqrt(150), rel=1e-12)
    assert bbr.mathis_mbps(0.040, 0.01) == pytest.approx(3.5468, abs=1e-4)
    # The payload capacity of 10 Mbit/s with 1500-byte packets.
    assert bbr.GOODPUT_MAX_MBPS == pytest.approx(9.6533, abs=1e-4)


def test_probe_rtt_dips_are_the_starts_of_low_runs() -> None:
    t = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
    low = [False, True, True, False, True, False]
    assert bbr._dips(t, low) == [1.1, 1.4]


@pytest.mark.slow
@pytest.mark.core
def test_bbr_quick_end_to_end(cli: Cli, tmp_path: Path) -> None:
    proc = cli("reproduce", "bbr", "--quick", "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "bbr"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "checks passed" in report
    for png in ("loss.png", "share_vs_buffer.png", "ns3_side_by_side.png"):
        assert (out / png).stat().st_size > 10_000
    with open(out / "checks.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    failed = [r["name"] for r in rows if r["passed"] != "True"]
    assert not failed, failed
