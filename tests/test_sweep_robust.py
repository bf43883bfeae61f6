"""Sweeps against a damaged output directory, a changed plan and a bad or empty Dask cluster: a
resume reuses only runs of the same effective scenario and seed (and says how many), damaged
run files are run again, a bad scheduler address is one error line, and a cluster without
workers ends the sweep within the configured time, keeping the finished runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO

SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"
Cli = Callable[..., subprocess.CompletedProcess[str]]


def _plan(tmp_path: Path, seed: int, repeat: int = 2) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f"scenario = {str(SCENARIO)!r}\n"
        "[sweep]\n"
        f"repeat = {repeat}\n"
        f"seed = {seed}\n"
        'metrics = ["goodput", { name = "loss_rate", flow = "poisson" }]\n'
        "[sweep.params]\n"
        '"dumbbell.bottleneck.delay" = ["5ms", "10ms"]\n'
        '"run.duration" = ["1s"]\n'
        '"flows.poisson.start" = ["0s"]\n'
        '"flows.poisson.stop" = ["1s"]\n'
    )
    return plan


def _runs(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "runs.parquet").drop(columns="wall_s")


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quicksim: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_resume_reruns_runs_of_a_changed_seed(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    first = cli("sweep", str(_plan(tmp_path, seed=1)), "--out", str(out), "-j", "1", "--no-plots")
    assert first.returncode == 0, first.stderr
    old = _runs(out)
    again = cli("sweep", str(_plan(tmp_path, seed=1)), "--out", str(out), "-j", "1", "--no-plots")
    assert f"reusing 4 of 4 runs stored in {out}, 0 to run" in again.stderr
    pd.testing.assert_frame_equal(_runs(out), old)

    # A new [sweep] seed: every stored run is stale; the results are those of a fresh sweep.
    changed = cli("sweep", str(_plan(tmp_path, seed=2)), "--out", str(out), "-j", "1", "--no-plots")
    assert changed.returncode == 0, changed.stderr
    assert (
        "reusing 0 of 4 runs" in changed.stderr and "4 stored with another scenario, seed" in changed.stderr
    )
    fresh = cli(
        "sweep", str(_plan(tmp_path, seed=2)), "--out", str(tmp_path / "fresh"), "-j", "1", "--no-plots"
    )
    assert fresh.returncode == 0, fresh.stderr
    pd.testing.assert_frame_equal(_runs(out), _runs(tmp_path / "fresh"))
    assert not _runs(out)["seed"].equals(old["seed"])
    assert json.loads((out / "plan.json").read_text())["seed"] == 2


def test_damaged_run_files_are_run_again(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "out"
    plan = _plan(tmp_path, seed=5)
    assert cli("sweep", str(plan), "--out", str(out), "-j", "1", "--no-plots").returncode == 0
    whole = _runs(out)
    files = sorted((out / "runs").glob("*.json"))
    files[0].write_text("{}")  # valid JSON, but no run in it
    files[1].write_text(json.dumps({"run_id": files[1].stem, "values": {}}))  # incomplete
    files[2].write_bytes(b"\xff\xfe not text")
    stray = [out / "runs" / f".{files[3].name}.tmp-4242", out / ".runs.parquet.tmp-4242"]
    for s in stray:
        s.write_text("partial")
    again = cli("sweep", str(plan), "--out", str(out), "-j", "1", "--no-plots")
    assert again.returncode == 0, again.stderr
    assert f"reusing 1 of 4 runs stored in {out}" in again.stderr
    assert not any(s.exists() for s in stray)
    pd.testing.assert_frame_equal(_runs(out), whole)


def test_bad_scheduler_address_is_one_error_line(tmp_path: Path, cli: Cli) -> None:
    plan = _plan(tmp_path, seed=1)
    for address in ("garbage", "tcp://", "tcp://host:99999"):
        started = time.monotonic()
        p = cli("sweep", str(plan), "--out", str(tmp_path / "o"), "--scheduler", address, timeout=60)
        assert p.returncode == 2, p.stderr
        assert "is not a Dask scheduler address" in _one_error_line(p.stderr)
        assert time.monotonic() - started < 30
    p = cli("sweep", str(plan), "--out", str(tmp_path / "o"), "--worker-timeout", "nan")
    assert p.returncode == 2 and "--worker-timeout" in _one_error_line(p.stderr)


@pytest.fixture
def lonely_scheduler(tmp_path: Path) -> Iterator[str]:
    """A real Dask scheduler on 127.0.0.1 with no worker at all."""
    pytest.importorskip("distributed")
    dask = shutil.which("dask")
    if dask is None:
        pytest.skip("the `dask` command is not installed")
    info = tmp_path / "scheduler.json"
    args = ["--host", "127.0.0.1", "--port", "0", "--dashboard-address", "127.0.0.1:0"]
    with open(tmp_path / "scheduler.log", "w") as log:
        proc = subprocess.Popen(
            [dask, "scheduler", *args, "--scheduler-file", str(info)],
            stderr=log,
        )
        try:
            deadline = time.monotonic() + 60
            while not (info.is_file() and "address" in info.read_text()):
                assert time.monotonic() < deadline, "the scheduler did not start"
                time.sleep(0.1)
            yield str(json.loads(info.read_text())["address"])
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_dask_without_workers_stops_in_bounded_time_keeping_runs(
    tmp_path: Path, cli: Cli, lonely_scheduler: str
) -> None:
    out = tmp_path / "out"
    # Two runs done locally first; the grown plan then goes to a cluster without workers.
    assert cli("sweep", str(_plan(tmp_path, 3, repeat=1)), "--out", str(out), "--no-plots").returncode == 0
    before = {p.name: p.read_text() for p in (out / "runs").glob("*.json")}
    started = time.monotonic()
    p = cli(
        "sweep",
        str(_plan(tmp_path, 3, repeat=2)),
        "--out",
        str(out),
        "--scheduler",
        lonely_scheduler,
        "--worker-timeout",
        "2",
        "--no-plots",
        timeout=90,
    )
    elapsed = time.monotonic() - started
    assert p.returncode == 1, p.stderr
    assert "reusing 2 of 4 runs" in p.stderr
    assert "has had no worker for 2 s; 0 of 2 runs finished and are kept" in p.stderr.strip().splitlines()[-1]
    assert "Traceback" not in p.stderr
    assert elapsed < 45, elapsed
    assert {q.name: q.read_text() for q in (out / "runs").glob("*.json")} == before
