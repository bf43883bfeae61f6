"""Quick reproductions never replace full ones (issue 19: `reproduce --all --quick` overwrote a
full-mode report in the same default folder)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from quicksim import reproduce as rp


def test_quick_and_full_runs_default_to_different_folders() -> None:
    assert rp.default_out(quick=True) != rp.default_out(quick=False)


def test_a_quick_run_refuses_to_overwrite_a_full_report(tmp_path: Path) -> None:
    report = tmp_path / "paper-fig3" / "report.md"
    report.parent.mkdir()
    report.write_text("# x\n\n**4 of 4 checks passed.** Mode: full; wall time 1.0 s\n", encoding="utf-8")
    with pytest.raises(FileExistsError, match="full-mode report"):
        rp.reproduce("paper-fig3", tmp_path, quick=True)
    argv = [sys.executable, "-m", "quicksim", "reproduce", "paper-fig3", "--quick", "--out", str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "full-mode report" in proc.stderr
    assert "Mode: full" in report.read_text(encoding="utf-8")  # untouched
