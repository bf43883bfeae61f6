"""Issue 35's sweep statistics and metrics through the compiled core: a deterministic scenario's
sweep says its repetitions are identical, utilization at its bound keeps its interval inside
[0, 1], a user's metric module on local processes and on a real Dask cluster on loopback, and a
metric added to a finished sweep computed from its kept tables without running anything.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd
import pytest

from conftest import PYTHON_DIR, REPO
from quicksim import metrics
from quicksim.sweep import make_plan, run_plan

pytestmark = pytest.mark.core

SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"
BOTTLENECK = "bottleneck:router1->router2"
# The Poisson flow draws its sizes and gaps from the seed; without it (it starts at 2 s, after
# the run) nothing in the scenario is random.
RANDOM_SETS = ["run.duration=1s", "flows.poisson.start=0s", "flows.poisson.stop=1s"]

USER_MODULE = """
def cbr_mbps(result):
    return result.totals["flows"]["cbr"]["delivered_bytes"] * 8 / 1e6

cbr_mbps.bounds = (0.0, None)
"""


def test_a_deterministic_sweep_says_identical_and_a_later_metric_runs_nothing(
    tmp_path: Path, cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'scenario = {str(SCENARIO)!r}\n[sweep]\nrepeat = 3\nmetrics = ["drops", "jain"]\n'
        'keep = ["queues", "flows"]\n[sweep.params]\n"dumbbell.bottleneck.delay" = ["5ms", "10ms"]\n'
        '"run.duration" = ["1s"]\n'
    )
    out = tmp_path / "out"
    first = cli("sweep", str(plan), "--out", str(out), "--jobs", "2", "--no-plots")
    assert first.returncode == 0, first.stderr
    assert (
        "dumbbell.bottleneck.delay=5ms  drops: 140  identical in all 3 runs: no interval  (n=3)"
        in first.stdout
    )
    assert "2 point(s) identical in every metric" in first.stdout and "95% CI" not in first.stdout
    summary = pd.read_parquet(out / "summary.parquet")
    assert (summary["method"] == "identical").all() and summary["ci_low"].isna().all()
    assert summary["std"].isna().all()  # not "std 0"
    records = {p.name: json.loads(p.read_text()) for p in (out / "runs").glob("*.json")}
    kept = {p: p.stat().st_mtime_ns for p in (out / "kept").rglob("*.parquet")}
    assert len(records) == 6 and len(kept) == 12

    later = cli(
        "sweep", str(plan), "--out", str(out), "--no-plots", "--metrics", "queue_delay_s:p95,goodput_mbps"
    )
    assert later.returncode == 0, later.stderr
    assert "computed new metrics of 6 stored run(s) from their kept tables" in later.stderr
    assert "reusing 6 of 6 runs stored in" in later.stderr and "0 to run" in later.stderr
    # No run executed: each record keeps the worker and wall time of its one run; tables untouched.
    for name, old in records.items():
        new = json.loads((out / "runs" / name).read_text())
        assert (new["worker"], new["wall_s"], new["seed"]) == (old["worker"], old["wall_s"], old["seed"])
        assert set(new["values"]) > set(old["values"])
    assert {p: p.stat().st_mtime_ns for p in (out / "kept").rglob("*.parquet")} == kept
    runs = pd.read_parquet(out / "runs.parquet")
    column = f"queue_delay_s:p95.{BOTTLENECK}"
    # CBR at 1.2x the bottleneck fills its queue: the p95 wait is the full buffer's drain time.
    assert runs[column].between(0.05, 0.07).all() and runs["goodput_mbps.cbr"].between(9.0, 10.0).all()

    refused = cli("sweep", str(plan), "--out", str(out), "--no-plots", "--metrics", "cwnd_bytes")
    assert refused.returncode == 2
    assert "cwnd_bytes needs the table 'conn', which the runs stored in" in refused.stderr
    assert "keep = ['queues', 'flows']" in refused.stderr


def test_utilization_at_its_bound_keeps_its_interval_inside_it() -> None:
    label = f"utilization[link={BOTTLENECK},t0=0.5s]"
    plan = make_plan(
        SCENARIO,
        {},
        repeat=6,
        metrics=[{"name": "utilization", "link": BOTTLENECK, "t0": "0.5s"}],
        sets=RANDOM_SETS,
    )
    res = run_plan(plan, jobs=2, progress=False)
    values = res.runs[label]
    # The saturated link's last bin counts up to a frame past its capacity (1.0007 at seed 2 of
    # the core's raw bins); the metric reports those as 1.
    assert (values <= 1.0).all() and (values == 1.0).any() and values.nunique() > 1
    row = res.summary[res.summary["metric"] == label].iloc[0]
    assert row["method"] == "bootstrap" and not row["identical"]
    assert row["ci_low"] <= row["mean"] <= row["ci_high"] <= 1.0 and row["ci_low"] < row["ci_high"]


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A metric module in a folder of its own, importable here (and, by its folder, elsewhere)."""
    folder = tmp_path / "usermods"
    folder.mkdir()
    name = "qs_user_metrics"
    (folder / f"{name}.py").write_text(USER_MODULE)
    here = tmp_path / "elsewhere"
    here.mkdir()
    (here / "driveronly.py").write_text(USER_MODULE)  # importable in this process only
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.syspath_prepend(str(here))
    yield name, folder
    for mod in (name, "driveronly"):
        sys.modules.pop(mod, None)
        metrics.METRICS.pop(f"{mod}:cbr_mbps", None)
        metrics.BOUNDS.pop(f"{mod}:cbr_mbps", None)


def _plan(metric: str, keep: tuple[str, ...] = ()) -> object:
    return make_plan(
        SCENARIO,
        {"dumbbell.bottleneck.delay": ["5ms", "20ms"]},
        repeat=2,
        metrics=["goodput", metric],
        sets=RANDOM_SETS,
        keep=list(keep),
    )


@pytest.mark.slow
def test_a_users_metric_module_on_local_processes_and_on_dask(
    user_module: tuple[str, Path], tmp_path: Path
) -> None:
    name, folder = user_module
    label = f"{name}:cbr_mbps"
    serial = run_plan(_plan(label), jobs=1, progress=False)  # type: ignore[arg-type]
    pooled = run_plan(_plan(label), jobs=2, progress=False)  # type: ignore[arg-type]
    assert serial.runs["error"].isna().all() and pooled.runs["error"].isna().all()
    delivered = serial.runs[label].to_numpy()
    assert (delivered > 8.0).all()  # CBR's delivered megabits over 1 s, through a 10 Mbit/s link
    assert pooled.runs[label].tolist() == serial.runs[label].tolist()
    with _dask_cluster(tmp_path, folder) as address:
        dask_out = tmp_path / "dask"
        remote = run_plan(_plan(label, ("queues",)), dask_out, scheduler=address, progress=False)  # type: ignore[arg-type]
        assert remote.runs["error"].isna().all(), remote.runs["error"].tolist()
        assert remote.runs[label].tolist() == serial.runs[label].tolist()
        # The runs (and the metric) ran in the worker's process, which imported the module itself.
        workers = {json.loads(p.read_text())["worker"] for p in (tmp_path / "dask" / "runs").glob("*.json")}
        assert len(workers) == 1 and not workers.pop().endswith(f":{os.getpid()}")
        # Tables kept on a worker travel back with the run and are stored with the sweep.
        assert len(list(dask_out.glob("kept/*/queues.parquet"))) == 4
        later = run_plan(_plan("queue_delay_s:p99", ("queues",)), dask_out, scheduler=address, progress=False)  # type: ignore[arg-type]
        assert later.runs[f"queue_delay_s:p99.{BOTTLENECK}"].between(0.05, 0.07).all()
        # A module the workers cannot import: each run records why, naming what to do.
        missing = run_plan(_plan("driveronly:cbr_mbps"), scheduler=address, progress=False)  # type: ignore[arg-type]
        errors = missing.runs["error"].tolist()
        assert all(
            "cannot import driveronly" in e and "importable wherever runs execute" in e for e in errors
        ), errors
        assert missing.runs["goodput_mbps.cbr"].notna().all(), missing.runs.T  # the other metrics are kept


class _dask_cluster:
    """A Dask scheduler and one worker as separate processes on 127.0.0.1 (dashboards on port
    0), the worker with `folder` on its PYTHONPATH."""

    def __init__(self, tmp_path: Path, folder: Path) -> None:
        pytest.importorskip("distributed")
        self.dask = shutil.which("dask")
        if self.dask is None:
            pytest.skip("the `dask` command is not installed")
        self.tmp, self.folder, self.procs = tmp_path, folder, []  # type: ignore[var-annotated]

    def __enter__(self) -> str:
        info = self.tmp / "scheduler.json"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(PYTHON_DIR), str(self.folder)])
        common = ["--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(info)]
        self.logs = [open(self.tmp / n, "w") for n in ("scheduler.log", "worker.log")]  # noqa: SIM115
        assert self.dask is not None
        self.procs.append(
            subprocess.Popen(
                [self.dask, "scheduler", "--host", "127.0.0.1", "--port", "0", *common],
                stderr=self.logs[0],
                env=env,
                cwd=self.tmp,
            )
        )
        _wait_for(lambda: info.is_file() and "address" in info.read_text())
        self.procs.append(
            subprocess.Popen(
                [self.dask, "worker", "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1", *common],
                stderr=self.logs[1],
                env=env,
                cwd=self.tmp,  # not the repository: the worker finds the module by PYTHONPATH alone
            )
        )
        _wait_for(lambda: "Registered to" in (self.tmp / "worker.log").read_text())
        return str(json.loads(info.read_text())["address"])

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()


def _wait_for(condition: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("timed out waiting for the Dask cluster")
        time.sleep(0.1)
