"""Plots a reader can use (issue 35): queue lengths readable with many queues, legends beside
the data, drops counted in packets, and the scenario and seed on every standard figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")  # a declared dependency; skip only in a stripped environment

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from quicksim import plotting
from quicksim.results import Result


def test_step_bins_by_hand() -> None:
    # 0 until 1 s, 4 from 1 s, 2 from 2.5 s, 0 from 3 s; bins of 2 s up to 4 s.
    t, y = np.array([1.0, 2.5, 3.0]), np.array([4.0, 2.0, 0.0])
    edges, mean, low, high = plotting.step_bins(t, y, 4.0, 2.0)
    assert list(edges) == [0.0, 2.0, 4.0]
    assert list(mean) == pytest.approx([(0 * 1 + 4 * 1) / 2, (4 * 0.5 + 2 * 0.5 + 0 * 1) / 2])
    assert list(low) == [0.0, 0.0] and list(high) == [4.0, 4.0]
    # A bin without a sample holds the value carried into it.
    edges, mean, low, high = plotting.step_bins(np.array([0.5]), np.array([3.0]), 3.0, 1.0)
    assert list(mean) == pytest.approx([1.5, 3.0, 3.0]) and list(low) == [0.0, 3.0, 3.0]
    assert list(high) == [3.0, 3.0, 3.0]


def _many_queues(n: int) -> pd.DataFrame:
    """n queues, each a fast sawtooth (the showcase's solid block), queue i peaking at i + 1."""
    t = np.arange(0, 20.0, 0.01)
    rows = [
        pd.DataFrame({"t_s": t, "queue": f"q{i:02d}", "packets": (np.arange(len(t)) % 7) * (i + 1) // 6})
        for i in range(n)
    ]
    df = pd.concat(rows, ignore_index=True)
    df["bytes"] = df["packets"] * 1250
    return df


def test_many_queues_get_a_panel_each_without_a_legend() -> None:
    fig = plotting.plot_queue(_many_queues(12))
    assert len(fig.axes) == plotting.MAX_SERIES  # the 10 busiest of 12
    assert "10 largest of 12 queues shown" in fig.get_suptitle()
    assert [ax.get_title(loc="left") for ax in fig.axes] == [f"q{i:02d}" for i in range(2, 12)]  # by name
    assert all(ax.get_legend() is None for ax in fig.axes)
    # The mean of a 0..k sawtooth lies strictly inside its band: a line a reader can follow,
    # not a filled block.
    top = fig.axes[0]
    mean = top.get_lines()[0].get_ydata()
    assert 0 < float(np.median(mean)) < float(top.get_ylim()[1]) * 0.75


def _standard_figures(result: Result) -> list[tuple[str, Figure]]:
    return [(name, build(result)) for name, _, build in plotting.STANDARD_PLOTS]


def test_legends_are_beside_the_data(result: Result) -> None:
    for name, fig in _standard_figures(result):
        renderer = FigureCanvasAgg(fig).get_renderer()
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
            assert box.x0 >= area.x1, f"{name}: the legend covers the axes"
            assert box.x1 <= fig.bbox.x1 + 1, f"{name}: the legend is cut at the figure's edge"


def test_every_standard_figure_names_its_scenario_and_seed(result: Result, tmp_path: Path) -> None:
    for name, fig in _standard_figures(result):
        texts = [t.get_text() for t in fig.texts]
        assert "scenario handmade, seed 7" in texts, (name, texts)


def test_drops_are_counted_in_packets(result: Result) -> None:
    fig = plotting.plot_drops(result)
    assert fig.axes[0].get_ylabel() == "dropped packets per 0.5 s"
    line = fig.axes[0].get_lines()[0]
    counts = dict(zip(line.get_xdata(), line.get_ydata(), strict=True))
    # Drops at 0.75 s, 0.76 s (the 0.5 s bin) and 1.9 s (the 1.5 s bin).
    assert counts[0.5] == 2 and counts[1.5] == 1 and counts[0.0] == 0


def test_the_showcase_queue_plot_is_readable(raw_result: dict[str, Any]) -> None:
    """Two queues of the hand-made run: two panels sharing the time axis, each naming its peak."""
    queues = raw_result["tables"]["queues"]
    for column, values in (("t_s", [0.65, 1.2]), ("queue", ["access:x"] * 2), ("packets", [2, 0])):
        queues[column] = [*queues[column], *values]
    queues["bytes"] = [*queues["bytes"], 2500, 0]
    fig = plotting.plot_queue(Result(raw_result, name="two"))
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["access:x", "bottleneck:router1->router2"]
    assert fig.axes[0].get_title(loc="right") == "max 2 packets, 2.5 kB"
    assert fig.axes[1].get_title(loc="right") == "max 10 packets, 12.5 kB"
