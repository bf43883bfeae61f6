"""Sweeps through the compiled core: process pool vs in-process, a real Dask cluster on
loopback, and a sweep interrupted from outside and resumed.

Like test_cli_run.py these do not skip without the core (`maturin develop` first).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from conftest import PYTHON_DIR, REPO
from quicksim.sweep import make_plan, run_plan

pytestmark = pytest.mark.core

SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"
# The Poisson flow draws its sizes and gaps from the run's seed, so repetitions differ.
RANDOM_SETS = ["run.duration=1s", "flows.poisson.start=0s", "flows.poisson.stop=1s"]


def _plan_toml(tmp_path: Path, duration: str, delays: int, repeat: int) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f"scenario = {str(SCENARIO)!r}\n"
        "[sweep]\n"
        f"repeat = {repeat}\n"
        'metrics = ["goodput", "drops", { name = "loss_rate", flow = "poisson" }]\n'
        "[sweep.params]\n"
        f'"dumbbell.bottleneck.delay" = {{ start = 5, stop = {5 * delays}, step = 5, unit = "ms" }}\n'
        f'"run.duration" = ["{duration}"]\n'
        '"flows.poisson.start" = ["0s"]\n'
        f'"flows.poisson.stop" = ["{duration}"]\n'
    )
    return plan


def _same_runs(a: Path, b: Path) -> None:
    """runs.parquet and summary.parquet of two output directories hold the same numbers."""
    runs_a, runs_b = (pd.read_parquet(d / "runs.parquet").drop(columns="wall_s") for d in (a, b))
    pd.testing.assert_frame_equal(runs_a, runs_b)
    pd.testing.assert_frame_equal(
        pd.read_parquet(a / "summary.parquet"), pd.read_parquet(b / "summary.parquet")
    )


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return env


def test_process_pool_gives_the_in_process_numbers(tmp_path: Path) -> None:
    plan = make_plan(
        SCENARIO,
        {"dumbbell.bottleneck.delay": ["5ms", "20ms"]},
        repeat=3,
        metrics=["goodput", "jain", "queue_delay_s", "throughput_series"],
        sets=RANDOM_SETS,
    )
    serial = run_plan(plan, jobs=1, progress=False)
    pooled = run_plan(plan, tmp_path, jobs=2, progress=False)
    assert serial.runs["error"].isna().all()
    cols = [c for c in serial.runs.columns if c != "wall_s"]
    pd.testing.assert_frame_equal(serial.runs[cols], pooled.runs[cols])
    pd.testing.assert_frame_equal(serial.series, pooled.series)
    # Repetitions differ (their seeds do), and the CBR flow gets nearly all of the bottleneck.
    assert serial.runs["goodput_mbps.poisson"].nunique() == 6
    row = serial.summary[serial.summary["metric"] == "goodput_mbps.cbr"].iloc[0]
    assert 9.0 < row["mean"] < 10.0 and row["n"] == 3


@pytest.fixture
def dask_scheduler(tmp_path: Path) -> Iterator[str]:
    """A real Dask scheduler and one worker, as separate processes on 127.0.0.1."""
    pytest.importorskip("distributed")
    dask = shutil.which("dask")
    if dask is None:
        pytest.skip("the `dask` command is not installed")
    info = tmp_path / "scheduler.json"
    logs = [open(tmp_path / name, "w") for name in ("scheduler.log", "worker.log")]  # noqa: SIM115
    common = ["--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(info)]
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", *common], stderr=logs[0], env=_env()
        )
    ]
    try:
        _wait_for(lambda: info.is_file() and "address" in info.read_text(), "the scheduler to start")
        procs.append(
            subprocess.Popen(
                [dask, "worker", "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1", *common],
                stderr=logs[1],
                env=_env(),
            )
        )
        worker_log = tmp_path / "worker.log"
        _wait_for(lambda: "Registered to" in worker_log.read_text(), "the worker to register")
        import json

        yield str(json.loads(info.read_text())["address"])
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=5)  # a clean close usually takes < 1 s; no nanny, so a kill orphans nothing
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()


def _wait_for(condition: Callable[[], bool], what: str, timeout: float = 60.0, poll: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(poll)


@pytest.mark.slow
def test_dask_scheduler_gives_the_local_numbers(
    tmp_path: Path, dask_scheduler: str, cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    assert dask_scheduler.startswith("tcp://127.0.0.1:")
    plan = _plan_toml(tmp_path, "1s", delays=2, repeat=3)
    local = cli("sweep", str(plan), "--out", str(tmp_path / "local"), "--jobs", "2", "--no-plots")
    assert local.returncode == 0, local.stderr
    remote = cli(
        "sweep", str(plan), "--out", str(tmp_path / "dask"), "--scheduler", dask_scheduler, "--no-plots"
    )
    assert remote.returncode == 0, remote.stderr
    _same_runs(tmp_path / "local", tmp_path / "dask")
    # The runs really ran on the worker, not in the CLI's process.
    import json

    record = json.loads(next((tmp_path / "dask" / "runs").glob("*.json")).read_text())
    assert "worker" in record and len(pd.read_parquet(tmp_path / "dask" / "runs.parquet")) == 6


@pytest.mark.slow
def test_interrupted_sweep_resumes_without_rerunning_finished_runs(
    tmp_path: Path, cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    # 16 runs of 120 simulated seconds each (~0.15 s of work apiece): long enough to be caught
    # in the middle.
    plan = _plan_toml(tmp_path, "120s", delays=4, repeat=4)
    out = tmp_path / "out"
    runs_dir = out / "runs"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "quicksim",
            "sweep",
            str(plan),
            "--out",
            str(out),
            "--jobs",
            "2",
            "--no-plots",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=_env(),
    )
    try:
        _wait_for(
            lambda: runs_dir.is_dir() and len(list(runs_dir.glob("*.json"))) >= 3,
            "3 finished runs",
            poll=0.01,
        )
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    finished = {p.name: p.stat().st_mtime_ns for p in runs_dir.glob("*.json")}
    assert 3 <= len(finished) < 16, "the sweep was not interrupted midway"
    assert not (out / "runs.parquet").exists()
    assert not list(runs_dir.glob(".*.tmp-*")), "a partial run file was left behind"

    resumed = cli("sweep", str(plan), "--out", str(out), "--jobs", "2", "--no-plots", "--progress")
    assert resumed.returncode == 0, resumed.stderr
    assert (
        f"reusing {len(finished)} of 16 runs stored in {out}, {16 - len(finished)} to run" in resumed.stderr
    )
    assert all((runs_dir / name).stat().st_mtime_ns == t for name, t in finished.items())
    assert len(list(runs_dir.glob("*.json"))) == 16

    whole = cli("sweep", str(plan), "--out", str(tmp_path / "whole"), "--jobs", "2")
    assert whole.returncode == 0, whole.stderr
    _same_runs(out, tmp_path / "whole")
    # The summary is printed per varied parameter value, and each metric family gets a plot.
    assert "dumbbell.bottleneck.delay=20ms  goodput_mbps.cbr: " in whole.stdout
    assert "run.duration" not in whole.stdout  # constant parameters are not repeated on every line
    plots = sorted(p.name for p in (tmp_path / "whole" / "plots").iterdir())
    # A metric's name becomes a file name by quicksim's one rule (`_io.file_name`: `[`, `=`, `]`
    # escaped, so two metrics never share a file).
    assert plots == ["drops.png", "goodput_mbps.png", "loss_rate%5Bflow%3Dpoisson%5D.png"]
