"""End-to-end tests through the compiled core (`maturin develop` first; `pytest -m core`).

They use scenarios/udp-bottleneck.toml, shortened with `--set run.duration=...`, and check the
`_core` contract (tables vs totals, progress, early stop, determinism) as well as the CLI.
They deliberately do not skip when the core is missing: a missing core is a failure here.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import quicksim
from conftest import PYTHON_DIR, REPO
from quicksim.results import SCHEMA, Result

pytestmark = pytest.mark.core

Cli = Callable[..., subprocess.CompletedProcess[str]]
SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"
SHORT = ["run.duration=2s"]
META_KEYS = {
    "seed",
    "duration_s",
    "events",
    "wall_s",
    "sim_end_s",
    "scenario_hash",
    "version",
    "stopped_early",
    "record_interval_s",
}


@pytest.fixture(scope="module")
def short_run() -> Result:
    return quicksim.run(SCENARIO, seed=1, sets=SHORT)


# --- the core contract, through the Python API -------------------------------------------------


def test_result_follows_the_contract(short_run: Result) -> None:
    assert set(short_run.meta) >= META_KEYS
    assert short_run.meta["seed"] == 1 and short_run.meta["stopped_early"] is False
    assert short_run.sim_end_s == pytest.approx(2.0)
    for name, columns in SCHEMA.items():
        assert set(columns) <= set(short_run.table(name).columns), name
    assert not short_run.flows.empty
    assert set(short_run.totals) >= {"flows", "queues", "links"}


def test_binned_tables_add_up_to_the_totals(short_run: Result) -> None:
    per_flow = short_run.flows.groupby("flow", observed=True)[
        ["delivered_bytes", "wire_sent_bytes", "app_sent_bytes"]
    ].sum()
    for flow, totals in short_run.totals["flows"].items():
        for column in per_flow.columns:
            assert per_flow.loc[flow, column] == totals[column], (flow, column)
        assert totals["delivered_bytes"] <= totals["app_sent_bytes"]
    per_link = short_run.links.groupby("link", observed=True)["bytes"].sum()
    for link, totals in short_run.totals["links"].items():
        assert per_link.get(link, 0) == totals["bytes"], link


def test_same_seed_same_hash_and_save_load_keeps_it(short_run: Result, tmp_path: Path) -> None:
    again = quicksim.run(SCENARIO, seed=1, sets=SHORT)
    assert again.hash() == short_run.hash()
    assert again.meta["scenario_hash"] == short_run.meta["scenario_hash"]
    assert Result.load(short_run.save(tmp_path)).hash() == short_run.hash()


def test_scenario_json_reruns_the_same_run(short_run: Result, tmp_path: Path) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(short_run.scenario), encoding="utf-8")
    assert quicksim.run(path).hash() == short_run.hash()  # the seed is in the file


def test_validate_fills_defaults() -> None:
    normalized = quicksim.validate(SCENARIO)
    assert {"run", "flows"} <= set(normalized)
    assert quicksim.validate(normalized) == normalized  # normalizing is idempotent


def test_core_rejects_a_bad_value_naming_the_field() -> None:
    with pytest.raises(quicksim.ScenarioError, match=r"run\.duration"):
        quicksim.validate(SCENARIO, sets=["run.duration=banana"])


def test_progress_is_monotonic_and_false_stops_early() -> None:
    calls: list[tuple[float, int]] = []

    def progress(t: float, events: int) -> bool:
        calls.append((t, events))
        return t < 0.5

    res = quicksim.run(SCENARIO, seed=1, sets=["run.duration=10s"], progress=progress)
    assert calls, "the core never called progress"
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in itertools.pairwise(calls))
    assert res.meta["stopped_early"] is True
    assert 0.5 <= res.sim_end_s < 10.0  # type: ignore[operator]


def test_progress_exception_propagates() -> None:
    def progress(t: float, events: int) -> bool:
        raise ZeroDivisionError("from progress")

    with pytest.raises(ZeroDivisionError, match="from progress"):
        quicksim.run(SCENARIO, seed=1, sets=SHORT, progress=progress)


# --- the command line --------------------------------------------------------------------------


def test_run_writes_tables_summary_and_plots(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "res"
    proc = cli("run", str(SCENARIO), "--seed", "1", "--out", str(out), "--set", SHORT[0])
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout.splitlines()[0].startswith("udp-bottleneck: seed 1")
    for name in [
        *(f"{t}.parquet" for t in SCHEMA),
        "summary.json",
        "scenario.json",
        "receiver_throughput.png",
    ]:
        assert (out / name).is_file(), name
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["seed"] == 1 and summary["scenario"] == "udp-bottleneck"
    assert Result.load(out).hash() == summary["tables_sha256"]


def test_json_output_is_the_saved_summary(cli: Cli, tmp_path: Path) -> None:
    proc = cli(
        "run", str(SCENARIO), "--out", str(tmp_path), "--json", "--no-plots", "--quiet", "--set", SHORT[0]
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert not list(tmp_path.glob("*.png"))
    assert proc.stderr == ""


def test_default_output_directory(cli: Cli, tmp_path: Path) -> None:
    """out/<stem>; --seed and --set variants each get their own folder, so none overwrites another."""
    short = tmp_path / "udp-bottleneck.toml"
    short.write_text(SCENARIO.read_text(encoding="utf-8").replace('duration = "', 'duration = "2s" #'))
    variants = [(), ("--seed", "4"), ("--set", "flows.0.start=1s"), ("--set", "flows.0.start=0.5s")]
    dirs = set()
    for extra in variants:
        proc = cli("run", str(short), "--quiet", "--no-plots", *extra, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        dirs |= {p.parent.name for p in (tmp_path / "out").glob("*/summary.json")}
    assert "udp-bottleneck" in dirs and "udp-bottleneck-seed4" in dirs
    assert len(dirs) == len(variants), dirs


def test_validate_prints_the_normalized_scenario(cli: Cli) -> None:
    proc = cli("validate", str(SCENARIO))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == quicksim.validate(SCENARIO)


def test_core_scenario_error_is_one_line_exit_2(cli: Cli) -> None:
    proc = cli("run", str(SCENARIO), "--set", "run.duration=banana")
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("quicksim: error: ") and "run.duration" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_ctrl_c_saves_partial_results_and_exits_130(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    cmd = [
        sys.executable,
        "-m",
        "quicksim",
        "run",
        str(SCENARIO),
        "--out",
        str(tmp_path),
        "--no-plots",
        "--progress",
    ]
    proc = subprocess.Popen(
        [*cmd, "--set", "run.duration=100000s"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    try:
        assert proc.stderr is not None
        proc.stderr.read(1)  # the progress bar is up: the run and its SIGINT handler are live
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["meta"]["stopped_early"] is True
    assert 0 < summary["meta"]["sim_end_s"] < 100000


def test_bench_smoke() -> None:
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    proc = subprocess.run(
        [sys.executable, "-m", "quicksim.bench", "--duration", "0.2", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    assert figures["events"] > 0 and figures["packet_hops"] > 0
    assert figures["max_link_utilization"] > 0.9  # the 1 Gbit/s bottleneck is saturated
