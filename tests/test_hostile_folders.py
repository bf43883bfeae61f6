"""Issue 39, mixed folders: an output folder is locked while a run or sweep writes it (a second
one is refused), a run reusing a folder removes what the earlier run left (capture, plots, qlog
files), and `quicksim.load` refuses a folder whose tables come from another run than its
summary."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quicksim
from conftest import PYTHON_DIR, REPO
from quicksim._io import locked_folder
from quicksim.errors import ScenarioError
from quicksim.results import TABLES

Cli = Callable[..., subprocess.CompletedProcess[str]]

UDP = REPO / "scenarios" / "udp-bottleneck.toml"


@pytest.mark.core
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_second_writer_is_refused(cli: Cli, tmp_path: Path, command: str) -> None:
    out = tmp_path / "o"
    target = str(UDP) if command == "run" else str(REPO / "examples" / "ack-ratio-sweep.toml")
    with locked_folder(out):  # this test process is the first writer
        proc = cli(command, target, "--out", str(out), "--no-plots", "-q", "--set", "run.duration=1s")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"quicksim: error: --out: {out} is in use by another quicksim run; wait for it to end "
        "or choose another folder"
    ]
    assert not list(out.iterdir())


@pytest.mark.core
def test_two_concurrent_runs_never_leave_a_mixed_folder(tmp_path: Path) -> None:
    """The audit's case: two runs with different seeds into one --out at once. One is refused
    (or, if the first ended before the second began, the second replaced it); the folder always
    loads as one run."""
    import os

    out = tmp_path / "o"
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    args = [sys.executable, "-m", "quicksim", "run", str(UDP), "--out", str(out), "--no-plots", "-q"]
    procs = [
        subprocess.Popen([*args, "--seed", str(seed)], env=env, stderr=subprocess.PIPE, text=True)
        for seed in (1, 2)
    ]
    results = []
    for p in procs:
        _, err = p.communicate(timeout=300)
        results.append((p.returncode, err))
    ok = [i for i, (code, _) in enumerate(results) if code == 0]
    assert ok, results
    for code, err in results:
        assert code == 0 or (code == 2 and "is in use by another quicksim run" in err), err
    loaded = quicksim.load(out)
    assert loaded.meta["seed"] in {1, 2}


@pytest.mark.core
def test_a_rerun_removes_the_earlier_runs_capture_and_plots(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "o"
    first = cli(
        "run",
        "scenarios/mathis-tcp.toml",
        "--set",
        "run.duration=3s",
        "--set",
        'run.capture={links=["access1"]}',
        "--out",
        str(out),
    )
    assert first.returncode == 0, first.stderr
    assert (out / "capture.pcapng").is_file() and list(out.glob("*.png"))
    (out / "notes.txt").write_text("mine")  # not quicksim's: kept
    second = cli("run", str(UDP), "--out", str(out), "--no-plots", "-q", "--set", "run.duration=1s")
    assert second.returncode == 0, second.stderr
    assert not (out / "capture.pcapng").exists()
    assert not list(out.glob("*.png"))
    assert (out / "notes.txt").read_text() == "mine"
    assert quicksim.load(out).name == "udp-bottleneck"


@pytest.mark.core
def test_a_resaved_folder_keeps_no_stale_qlog_files(tmp_path: Path) -> None:
    sets = ["run.duration=2.1s", 'run.record.qlog=["quic"]', "run.record.packets=[]"]
    scenario = REPO / "scenarios" / "buffer-sizing.toml"
    quicksim.run(scenario, sets=sets).save(tmp_path)
    assert (tmp_path / "quic.client.sqlog").is_file()
    quicksim.run(scenario, sets=["run.duration=2.1s", "run.record.packets=[]"]).save(tmp_path)
    assert not list(tmp_path.glob("*.sqlog"))


# --- load refuses a folder of two runs, as a property --------------------------------------------


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("two")
    for seed in (1, 2):
        quicksim.run(UDP, seed=seed, sets=["run.duration=1s"]).save(root / f"s{seed}")
    return root / "s1", root / "s2"


@pytest.mark.core
def test_load_refuses_tables_of_another_run(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    """The audit's mixed folder: seed 2's flows table beside seed 1's summary."""
    a, b = two_runs
    mixed = tmp_path / "mixed"
    shutil.copytree(a, mixed)
    shutil.copy(b / "flows.parquet", mixed / "flows.parquet")
    expected = r"flows\.parquet: written by another run than summary\.json \(seed 2 vs 1"
    with pytest.raises(ScenarioError, match=expected):
        quicksim.load(mixed)


@pytest.mark.core
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sets(st.sampled_from(TABLES)), st.booleans())
def test_any_mix_of_two_runs_is_refused(
    two_runs: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory, swapped: set[str], summary: bool
) -> None:
    a, b = two_runs
    mixed = tmp_path_factory.mktemp("mix") / "m"
    shutil.copytree(a, mixed)
    for table in swapped:
        shutil.copy(b / f"{table}.parquet", mixed / f"{table}.parquet")
    if summary:  # the other run's summary over the rest of the tables
        shutil.copy(b / "summary.json", mixed / "summary.json")
    if set(TABLES) - swapped if summary else swapped:
        with pytest.raises(ScenarioError, match=r"written by another run than summary\.json"):
            quicksim.load(mixed)
    else:
        assert quicksim.load(mixed).meta["seed"] == (2 if summary else 1)
