"""A sweep checks its whole plan, metric parameters included, before the first run (issue 19: a
typo in a metric parameter was found only after every run had simulated)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from quicksim.sweep import PlanError, make_plan

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "linksharing.toml"


@pytest.mark.parametrize(
    ("metric", "fragment"),
    [
        ({"name": "goodput_mbps", "flw": "sender1"}, "'flw'"),
        ({"name": "goodput_mbps", "flow": "sender1", "t0": "3 parsecs"}, "3 parsecs"),
        ({"name": "goodput_mbps", "flow": "sendr1"}, "no flow named 'sendr1'"),
        ({"name": "jain", "flows": ["sender1", "nobody"]}, "no flow named 'nobody'"),
    ],
)
def test_bad_metric_parameters_fail_the_plan(metric: dict[str, object], fragment: str) -> None:
    with pytest.raises(PlanError, match=r"sweep\.metrics") as e:
        make_plan(SCENARIO, {"quic.ack_ratio": [1, 2]}, metrics=[metric])
    assert fragment in str(e.value)


def test_good_metric_parameters_pass() -> None:
    plan = make_plan(SCENARIO, {}, metrics=[{"name": "goodput_mbps", "flow": "sender1", "t0": "10s"}, "jain"])
    assert [m.name for m in plan.metrics] == ["goodput_mbps", "jain"]


def test_the_cli_refuses_the_plan_before_any_run(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'scenario = "{SCENARIO.as_posix()}"\n[sweep]\nrepeat = 50\n'
        'metrics = [{ name = "goodput_mbps", flw = "sender1" }]\n',
        encoding="utf-8",
    )
    started = time.perf_counter()
    argv = [sys.executable, "-m", "quicksim", "sweep", str(plan), "--out", str(tmp_path / "o"), "-j", "1"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "flw" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o" / "runs").exists() or not any((tmp_path / "o" / "runs").iterdir())
    assert time.perf_counter() - started < 60  # 50 showcase runs would take minutes
