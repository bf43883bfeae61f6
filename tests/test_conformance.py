"""`quicksim conformance`: the suite in quick mode (what CI runs) for a built-in controller and
for one written in Python, its criteria against hand-computed fluid-model numbers, the report's
files, errors for a bad controller name, and the example controller's scenario.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PYTHON_DIR, REPO
from quicksim.conformance import cases

pytestmark = pytest.mark.core

TESTS = Path(__file__).resolve().parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), str(TESTS), env.get("PYTHONPATH")]))
    return env


def _cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "quicksim", *args],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=cwd,
        timeout=600,
    )


def test_fluid_model_numbers_behind_the_criteria() -> None:
    # One AIMD(1, 1/2) flow, B = 0.25 BDP: the window swings 0.625..1.25 BDP; the link idles
    # while it is below 1 BDP (60 % of the cycle at a mean of 81.25 %): utilization 88.75 %.
    lo, hi = 0.5 * 1.25, 1.25
    below = (1 - lo) / (hi - lo)
    assert below * (lo + 1) / 2 + (1 - below) == pytest.approx(0.8875)
    assert cases.SHALLOW_UTIL_MIN < 0.8875
    # Queue: 4 BDP, beta 1/2: window 2.5..5 BDP, queue 1.5..4 BDP, mean 2.75 RTT.
    assert cases.delay_expectation_rtts(4.0, 0.5) == pytest.approx(2.75)
    # Shallow: the queue exists during 40 % of the cycle, 0..0.25 BDP: mean 0.05 RTT.
    assert cases.delay_expectation_rtts(0.25, 0.5) == pytest.approx(0.4 * 0.125)
    # Mathis' constant for random loss with delayed ACKs over the periodic one: 0.87 / 1.22.
    assert math.sqrt(3 / 4) / math.sqrt(3 / 2) == pytest.approx(cases.RANDOM_LOSS_MIN, abs=0.01)
    # Jain's index of a 1.6:1 split of two flows is about the threshold.
    split = 1.6
    jain = (split + 1) ** 2 / (2 * (split**2 + 1))
    assert jain == pytest.approx(cases.JAIN_MIN, abs=0.01)
    # The window bands: Reno's 1.2/sqrt(p) and the RFC 9438 table.
    c = cases.window_criterion("band", 0.1, 1e-3)
    assert (c.threshold, c.upper) == pytest.approx((0.9 * 1.2 / math.sqrt(1e-3), 1.1 * 38))
    assert cases.window_criterion("reno", 0.1, 1e-2).passes(12.0 * 1.09)
    assert not cases.window_criterion("cubic", 0.1, 1e-4).passes(187 * 0.85)


@pytest.mark.slow
def test_quick_card_of_newreno(tmp_path: Path) -> None:
    proc = _cli("conformance", "newreno", "--quick", "--out", str(tmp_path / "card"), "-j", "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("conformance of newreno (quick): ")
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    rows = {r["key"]: r for r in card["rows"]}
    # Against theory, not against the last printout: Reno's window within 10 % of 1.2/sqrt(p), a
    # deep buffer keeps the link busy, the shallow one near the fluid model's 88.8 %, the mean
    # deep queue near the model's 2.75 RTT.
    for key in ("window rtt=0.1 p=0.01", "window rtt=0.1 p=0.001", "deep_buffer", "self_fairness_2"):
        assert rows[key]["passed"], rows[key]
    p = 1e-3
    assert rows["window rtt=0.1 p=0.001"]["measured"] == pytest.approx(1.2 / math.sqrt(p), rel=0.10)
    assert rows["shallow_buffer"]["measured"] == pytest.approx(0.8875, abs=0.04)
    assert rows["deep_buffer_delay"]["measured"] == pytest.approx(2.75, rel=0.15)
    assert rows["deep_buffer_delay"]["passed"] is None
    # Every case has a verdict line and a source.
    assert card["total"] == len(card["rows"]) - 2 and all(r["source"] for r in card["rows"])
    report = (tmp_path / "card" / "report.md").read_text()
    assert "# Conformance card: `newreno`" in report and "## Where each threshold comes from" in report
    for png in ("window_vs_loss.png", "fairness.png", "buffers.png"):
        data = (tmp_path / "card" / png).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


@pytest.mark.slow
def test_quick_card_of_the_python_example_controller(tmp_path: Path) -> None:
    """A controller written in Python, named by its path from the repository root, goes through the
    same suite on worker processes."""
    proc = _cli("conformance", "py:examples.mycc:MyCC", "--quick", "--out", str(tmp_path / "card"))
    assert proc.returncode == 0, proc.stderr
    card = json.loads((tmp_path / "card" / "card.json").read_text())
    rows = {r["key"]: r for r in card["rows"]}
    assert card["cc"] == "py:examples.mycc:MyCC" and card["total"] == 11
    # A standard loss-based window: between Reno's and CUBIC's references.
    assert rows["window rtt=0.1 p=0.001"]["criterion"].startswith(f"{0.9 * 1.2 / math.sqrt(1e-3):.4g} to ")
    assert all(math.isfinite(r["measured"]) for k, r in rows.items() if k != "convergence")
    assert rows["deep_buffer"]["measured"] > 0.9


def test_a_failing_python_controller_is_one_line_exit_2(tmp_path: Path) -> None:
    proc = _cli("conformance", "py:pycc_algos:RaisesAt", "--quick", "--out", str(tmp_path), "-j", "1")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert 'congestion controller "py:pycc_algos:RaisesAt": on_ack at t = ' in proc.stderr


@pytest.mark.parametrize(
    ("name", "expected"),
    [("renoo", '"renoo" is not a congestion controller'), ("py:nope:X", "cannot import nope")],
)
def test_a_bad_controller_name_is_one_line_exit_2(tmp_path: Path, name: str, expected: str) -> None:
    proc = _cli("conformance", name, "--quick", "--out", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith("quicksim: error: controller: ") and expected in proc.stderr


def test_the_example_scenario_runs_its_python_controller(tmp_path: Path) -> None:
    proc = _cli(
        "run", "examples/mycc.toml", "--allow-python", "--out", str(tmp_path / "mycc"), "-q", "--no-plots"
    )
    assert proc.returncode == 0, proc.stderr
    import quicksim
    from quicksim import metrics

    r = quicksim.load(tmp_path / "mycc")
    g = metrics.goodput_mbps(r, t0=10, t1=30)
    assert isinstance(g, dict)
    # Two flows share the 20 Mbit/s link: together near its payload rate (1252/1287 of 20 Mbit/s
    # less the ACK direction), neither starved.
    assert sum(g.values()) == pytest.approx(20 * 1252 / 1287 * 0.98, rel=0.05)
    assert min(g.values()) > 5
    # It started from 1 MSS, as in the study.
    conn = r.conn
    assert int(conn[conn["flow"].astype(str) == "client1"]["cwnd_bytes"].iloc[0]) == 1252
