"""`quicksim run` draws its plots in forked workers (issue 35: plotting was three quarters of the
showcase's wall time): the same files as drawn in-process, errors reported, no process left
behind, the worker needs no pandas, and `--no-plots` never imports matplotlib."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from quicksim.cli._plot_worker import PlotWorker, forking_helps

REPO = Path(__file__).resolve().parent.parent

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform != "linux", reason="needs fork")


def _gone(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@needs_fork
def test_a_worker_that_gets_no_result_ends_and_is_reaped() -> None:
    worker = PlotWorker()
    worker.close()
    assert _gone(worker._pid)
    worker.close()  # twice is harmless


@needs_fork
def test_a_workers_error_reaches_the_parent(tmp_path: Path) -> None:
    from quicksim._sketch import Sketch

    broken = Sketch()
    broken.axes[0].no_such_method(1)
    with PlotWorker() as worker:
        worker.submit([(tmp_path / "fine.png", Sketch()), (tmp_path / "broken.png", broken)])
        with pytest.raises(RuntimeError, match=r"plotting failed: .*AttributeError.*no_such_method"):
            worker.wait()
    assert _gone(worker._pid)


@needs_fork
def test_two_processes_draw_each_figure_once_and_answer_in_order(tmp_path: Path) -> None:
    from quicksim._sketch import Sketch

    jobs = []
    for i in range(5):
        sketch = Sketch(nrows=1 + i % 3)  # taken the most panels first, answered in this order
        sketch.axes[0].plot([0, 1], [0, i])
        jobs.append((tmp_path / f"{i}.png", sketch))
    with PlotWorker() as worker:
        worker.submit(jobs)
        assert worker.wait() == [path for path, _ in jobs]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{i}.png" for i in range(5)]


def test_the_worker_and_the_figures_it_is_sent_need_no_pandas(tmp_path: Path) -> None:
    """The worker is forked before pandas is imported and must not import it: the drawing
    modules import no pandas, and prepared figures hold numpy arrays, not pandas objects."""
    code = (
        "import sys\n"
        "import quicksim.cli._plot_worker, quicksim._sketch\n"
        "quicksim.cli._plot_worker._import_matplotlib()\n"
        "quicksim.cli._plot_worker._warm_up()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pandas', 'pyarrow')))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


@pytest.mark.core
def test_prepared_standard_plots_pickle_without_pandas(tmp_path: Path) -> None:
    import pickle

    import quicksim
    from quicksim.plotting import standard_sketches

    result = quicksim.run(str(REPO / "scenarios" / "linksharing.toml"), sets=["run.duration=12s"])
    jobs = list(standard_sketches(result, tmp_path))
    assert len(jobs) == 7
    assert [path.name for path, _ in jobs[:2]] == ["cwnd_queue_drops.png", "queue_length.png"]
    data = pickle.dumps(jobs)
    assert b"pandas" not in data and b"pyarrow" not in data
    assert len(data) < 500_000  # thinned series (~180 kB for the whole 50 s showcase), not tables


@pytest.mark.core
def test_spare_figures_draw_the_same_files(tmp_path: Path) -> None:
    """The worker builds figures ahead (`_sketch.build_spare`) of the shapes the standard plots
    use; drawn into them, the PNGs are byte for byte those drawn into new figures."""
    from collections import Counter

    import quicksim
    from quicksim import _sketch
    from quicksim.cli._plot_worker import _SPARE_SHAPES
    from quicksim.plotting import standard_sketches

    result = quicksim.run(str(REPO / "scenarios" / "linksharing.toml"), sets=["run.duration=12s"])
    jobs = list(standard_sketches(result, tmp_path))
    shapes = Counter((sketch.nrows, sketch.height) for _, sketch in jobs)
    assert not Counter(_SPARE_SHAPES) - shapes  # each spare is used by the standard plots
    fresh = [_sketch.png_bytes(sketch.draw(), 120) for _, sketch in jobs]
    for shape in _SPARE_SHAPES:
        _sketch.build_spare(*shape)
    try:
        assert [_sketch.png_bytes(sketch.draw(), 120) for _, sketch in jobs] == fresh
        assert not any(_sketch._SPARE.values())  # all taken
    finally:
        _sketch._SPARE.clear()


def test_one_core_draws_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no sched_getaffinity here")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert not forking_helps()


def test_a_process_with_other_threads_draws_in_process() -> None:
    import threading

    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert not forking_helps()
    finally:
        release.set()
        thread.join()


@needs_fork
@pytest.mark.core
def test_the_workers_draw_the_same_files_as_one_process(tmp_path: Path) -> None:
    from quicksim.plotting import STANDARD_PLOTS, save_standard_plots
    from quicksim.results import Result

    # The run is a process of its own: this one has threads of earlier tests, and with other
    # threads `quicksim run` draws in-process (`forking_helps`), so nothing would be compared.
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core: `quicksim run` draws in-process here")
    out = tmp_path / "run"
    scenario = str(REPO / "scenarios" / "linksharing.toml")
    run = ["run", scenario, "--out", str(out), "-q", "--set", "run.duration=12s"]
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run(
        [sys.executable, "-m", "quicksim", *run], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = [name for name, _, _ in STANDARD_PLOTS]
    assert sorted(p.name for p in out.glob("*.png")) == sorted(names)
    again = tmp_path / "again"
    save_standard_plots(Result.load(out), again)
    for name in names:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


@pytest.mark.core
def test_no_plots_imports_no_matplotlib(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    run = ["run", "scenarios/buffer-sizing.toml", "--set", "run.duration=2.2s", "--out", str(tmp_path / "r")]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "quicksim", *run, "--no-plots", "-q"],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line]
    assert "quicksim.results" in imported  # the check sees the imports
    assert not [m for m in imported if m.startswith("matplotlib")]
