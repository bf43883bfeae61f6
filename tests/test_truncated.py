"""A series cut at `run.record.max_samples` is reported and never drawn past its end (issue 19:
a queue plot held the last value flat for 114 s of a 120 s run, which looked like data)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import quicksim
from quicksim import plotting

SETS = ["run.duration=8s", "run.record.max_samples=3000"]  # the showcase's queue fills at ~6.5 s


@pytest.fixture(scope="module")
def cut() -> quicksim.Result:
    return quicksim.run("linksharing", sets=SETS)


def test_the_cut_series_is_named_with_its_last_sample(cut: quicksim.Result) -> None:
    (entry,) = cut.meta["truncated_series"]
    assert entry["table"] == "queue" and entry["name"] == "bottleneck:router1->router2"
    q = cut.queues[cut.queues["queue"].astype(str) == entry["name"]]
    assert len(q) == 3000
    assert entry["last_t_s"] == pytest.approx(float(q["t_s"].max()), abs=1e-12)
    assert entry["last_t_s"] < 8.0 - 1.0


def test_plots_end_a_cut_series_at_its_last_sample(cut: quicksim.Result) -> None:
    last = cut.meta["truncated_series"][0]["last_t_s"]
    for fig in (plotting.plot_queue(cut), plotting.plot_zoom(cut, t0=4.8, t1=8.0)):
        lines = [
            line
            for ax in fig.axes
            for line in ax.get_lines()
            if "bottleneck:router1->router2" in str(line.get_label())
        ]
        assert lines
        for line in lines:
            assert float(np.max(line.get_xdata())) <= last + 1e-9  # not held to the end of the run
    uncut = [
        line
        for ax in plotting.plot_queue(cut).axes  # one panel per queue
        for line in ax.get_lines()
        if line.get_label() == "bottleneck:router2->router1"
    ]
    assert uncut and float(np.max(uncut[0].get_xdata())) == pytest.approx(8.0)  # held to the end


def test_the_cli_warns_on_the_terminal(tmp_path: Path) -> None:
    sets = [a for s in SETS for a in ("--set", s)]
    argv = [sys.executable, "-m", "quicksim", "run", "linksharing", *sets, "--out", str(tmp_path), "-q"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (warning,) = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert "bottleneck:router1->router2" in warning and "max_samples = 3000" in warning


def test_thin_keeps_what_a_column_of_pixels_shows() -> None:
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(0.0, 100.0, 200_000))
    y = rng.normal(size=len(x))
    tx, ty = plotting.thin(x, y, columns=500)
    assert len(tx) <= 4 * 500 and tx[0] == x[0] and tx[-1] == x[-1]
    assert np.all(np.diff(tx) >= 0)
    col = np.minimum(((x - x[0]) / (x[-1] - x[0]) * 500).astype(int), 499)
    tcol = np.minimum(((tx - x[0]) / (x[-1] - x[0]) * 500).astype(int), 499)
    for c in range(500):  # every column keeps its extremes
        assert ty[tcol == c].max() == y[col == c].max() and ty[tcol == c].min() == y[col == c].min()
