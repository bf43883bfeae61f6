"""Issue 39, silent wrong results and huge plans in sweeps: a run's key hashes the contents of
the files its scenario names (traces, Python controller modules), so an edit reruns it; a value
given twice is refused naming the field; a plan is counted before it is expanded and refused
past `MAX_RUNS`, naming the field."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quicksim.sweep import PlanError, load_sweep, make_plan
from quicksim.sweep.plan import MAX_RUNS

Cli = Callable[..., subprocess.CompletedProcess[str]]

# One QUIC flow over a bottleneck whose forward direction follows `trace.mm` (mm-link format:
# one 1500-byte delivery opportunity per line, in ms), or with a Python controller.
PLAN = """\
name = "edit"
[run]
duration = "2s"
[dumbbell]
pairs = 1
bottleneck = {{ rate = "100Mbps", delay = "5ms", queue = {{ packets = 100 }} {extra} }}
[[flows]]
name = "f"
kind = "quic"
src = "sender1"
dst = "receiver1"
{flow}
[sweep]
metrics = ["goodput_mbps"]
[sweep.params]
"dumbbell.bottleneck.delay" = ["5ms", "10ms"]
"""

CONTROLLER = """\
import quicksim.cc
class Window(quicksim.cc.Controller):
    def __init__(self, init):
        super().__init__(init)
        self.cwnd = {segments} * init.mds
"""


def _sweep(cli: Cli, work: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], list[float]]:
    proc = cli("sweep", "plan.toml", "--out", "o", "-j", "1", "--no-plots", "-q", *extra, cwd=work)
    assert proc.returncode == 0, proc.stderr
    runs = load_sweep(work / "o").runs.sort_values("run_id")
    return proc, [float(v) for v in runs["goodput_mbps.f"]]


@pytest.mark.core
def test_an_edited_trace_reruns_the_runs(cli: Cli, tmp_path: Path) -> None:
    """The audit's case: a resumed sweep reused 11.5 Mbit/s runs after the trace went to 48."""
    extra = ', forward = { model = { kind = "trace", file = "trace.mm" } }'
    (tmp_path / "plan.toml").write_text(PLAN.format(extra=extra, flow=""))
    (tmp_path / "trace.mm").write_text("1\n")  # 12 Mbit/s
    _, slow = _sweep(cli, tmp_path)
    (tmp_path / "trace.mm").write_text("1\n1\n1\n1\n")  # 48 Mbit/s
    proc, fast = _sweep(cli, tmp_path)
    assert "reusing" not in proc.stderr or "2 stored with another scenario, seed, input file" in proc.stderr
    assert all(s < 12.5 for s in slow), slow
    assert all(f > 2 * s for f, s in zip(fast, slow, strict=True)), (slow, fast)
    # Unchanged files: the runs are reused.
    proc, again = _sweep(cli, tmp_path)
    assert "reusing 2 of 2 runs" in proc.stderr and again == fast


@pytest.mark.core
def test_an_edited_controller_module_reruns_the_runs(cli: Cli, tmp_path: Path) -> None:
    flow = 'quic = { cc = "py:qs_edited_cc:Window" }'
    (tmp_path / "plan.toml").write_text(PLAN.format(extra="", flow=flow))
    (tmp_path / "qs_edited_cc.py").write_text(CONTROLLER.format(segments=4))
    _, small = _sweep(cli, tmp_path, "--allow-python")
    (tmp_path / "qs_edited_cc.py").write_text(CONTROLLER.format(segments=40))
    proc, large = _sweep(cli, tmp_path, "--allow-python")
    assert "reusing 0 of 2" in proc.stderr, proc.stderr
    assert all(b > 2 * a for a, b in zip(small, large, strict=True)), (small, large)


@pytest.mark.core
def test_a_value_given_twice_is_refused_naming_the_field(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "plan.toml").write_text(PLAN.format(extra="", flow="").replace('"10ms"]', '"5ms"]'))
    proc = cli("sweep", "plan.toml", "--out", "o", "--no-plots", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "quicksim: error: sweep.params.dumbbell.bottleneck.delay: '5ms' is given twice "
        "(values 0 and 1); give each value once"
    )
    assert not (tmp_path / "o").exists()


@pytest.mark.core
def test_a_huge_repeat_is_refused_before_it_is_expanded(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "plan.toml").write_text(PLAN.format(extra="", flow=""))
    started = time.monotonic()
    proc = cli("sweep", "plan.toml", "--repeat", "1000000000", "--out", "o", cwd=tmp_path, timeout=60)
    assert time.monotonic() - started < 30
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "sweep.repeat (--repeat): 1000000000 repetitions" in proc.stderr


def test_a_1000_by_1000_grid_is_refused_naming_the_fields() -> None:
    started = time.monotonic()
    params = {
        "run.duration": {"start": 1, "stop": 1000, "step": 1, "unit": "s"},
        "run.seed": list(range(1000)),
    }
    with pytest.raises(PlanError) as info:
        make_plan(_DOC, params)
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert message.startswith("sweep.params: 1000000 points x 1 repetitions = 1000000 runs")
    assert "sweep.params.run.duration: 1000 values" in message
    assert "sweep.params.run.seed: 1000 values" in message


# --- sweep values -> run ids, as a property ------------------------------------------------------

_DOC: dict[str, Any] = {
    "run": {"duration": "1s"},
    "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "5ms"}},
    "flows": [{"name": "f", "kind": "quic", "src": "sender1", "dst": "receiver1"}],
}
_VALUES = st.lists(
    st.one_of(st.integers(-5, 5), st.sampled_from(["5ms", "5ms ", "10ms", "0.005s"]), st.booleans()),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, _VALUES, st.integers(1, 3))
def test_each_run_id_is_one_run(a: list[Any], b: list[Any], repeat: int) -> None:
    """Distinct values give distinct run ids, exactly points x repeat of them; a repeated value is
    refused naming its parameter (never the same id twice, never `n` counted double)."""
    import json

    def distinct(values: list[Any]) -> bool:
        return len({json.dumps(v) for v in values}) == len(values)

    params = {"dumbbell.bottleneck.delay": a, "run.seed": b}
    if not distinct(a) or not distinct(b):
        with pytest.raises(PlanError, match=r"^sweep\.params\.(dumbbell\.bottleneck\.delay|run\.seed): "):
            make_plan(_DOC, params, repeat=repeat)
        return
    runs = make_plan(_DOC, params, repeat=repeat).runs()
    assert len({r.run_id for r in runs}) == len(runs) == len(a) * len(b) * repeat
    assert len({r.seed for r in runs}) == len(runs)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**12), st.integers(1, 10**6))
def test_plans_are_counted_before_they_are_expanded(repeat: int, values: int) -> None:
    params = {"run.seed": {"start": 0, "stop": values - 1, "step": 1}}
    started = time.monotonic()
    if repeat * values > MAX_RUNS:
        with pytest.raises(PlanError, match=r"^sweep\.(repeat|params)"):
            make_plan(_DOC, params, repeat=repeat)
    else:
        assert len(make_plan(_DOC, params, repeat=repeat).runs()) == repeat * values
    assert time.monotonic() - started < 5
