"""Plot functions on a hand-made Result: they return Figures and write the standard PNGs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")  # a declared dependency; skip only in a stripped environment

from matplotlib.figure import Figure

from quicksim import plotting
from quicksim.results import Result


def _labels(fig: Figure) -> list[list[str]]:
    return [[t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else [] for ax in fig.axes]


def test_throughput_plot_has_flows_and_total(result: Result) -> None:
    fig = plotting.plot_throughput(result)
    assert isinstance(fig, Figure)
    assert _labels(fig)[0] == ["sender1", "bg", "total"]
    total = fig.axes[0].get_lines()[-1]
    assert max(total.get_ydata()) == pytest.approx(2.1)


def test_throughput_plot_accepts_a_dataframe(result: Result) -> None:
    fig = plotting.plot_throughput(result.throughput(layer="delivered"), flows=["bg"])
    assert _labels(fig)[0] == ["bg"]  # a single flow: no total line
    with pytest.raises(ValueError, match="throughput frame"):
        plotting.plot_throughput(result.flows)


def test_sender_plots_raw_and_smoothed(result: Result) -> None:
    raw = plotting.plot_sender_throughput(result)
    smooth = plotting.plot_sender_throughput(result, smoothed=True, window=2)
    assert "IP layer" in raw.axes[0].get_title()
    assert "mean of 2 bins" in smooth.axes[0].get_title()
    sender1 = smooth.axes[0].get_lines()[0]
    assert list(sender1.get_ydata()[:3]) == pytest.approx([0.56, 2.08, 0.52])  # pairs of 0.5 s bins


def test_other_plots(result: Result) -> None:
    assert len(plotting.plot_queue(result).axes) == 1  # one panel per queue that held packets
    assert plotting.plot_drops(result).axes[0].get_ylabel() == "dropped packets per 0.5 s"
    assert plotting.plot_drops(result, unit="bits").axes[0].get_ylabel() == "dropped data (kbit/s)"
    assert _labels(plotting.plot_cwnd(result))[0] == ["sender1"]


def test_zoom_defaults_to_the_showcase_window(result: Result) -> None:
    fig = plotting.plot_zoom(result)
    assert len(fig.axes) == 3
    assert fig.axes[2].get_xlim() == pytest.approx((0.3, 2.7))  # 0.2 s before, 2.2 s after start 0.5
    assert _labels(fig)[2] == ["dropped, sender1 (2)", "dropped, other flows (1)"]
    narrow = plotting.plot_zoom(result, "sender1", 0.7, 0.8)
    assert _labels(narrow)[2] == ["dropped, sender1 (2)"]


def test_zoom_without_congestion_state(raw_result: dict[str, Any]) -> None:
    for column in raw_result["tables"]["conn"].values():
        column.clear()
    with pytest.raises(ValueError, match="conn table is empty"):
        plotting.plot_zoom(Result(raw_result))


def test_save_standard_plots_skips_empty_tables(raw_result: dict[str, Any], tmp_path: Path) -> None:
    full = Result(raw_result)
    written = plotting.save_standard_plots(full, tmp_path)
    assert sorted(p.name for p in written) == sorted(name for name, _, _ in plotting.STANDARD_PLOTS)
    for path in written:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    for column in raw_result["tables"]["drops"].values():
        column.clear()
    written = plotting.save_standard_plots(Result(raw_result), tmp_path)
    assert "packet_drop_rate.png" not in {p.name for p in written}
    assert not (tmp_path / "packet_drop_rate.png").exists()  # the stale one is gone
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_many_drop_lines_keep_what_each_pixel_column_shows() -> None:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    t = pd.Series(np.sort(rng.uniform(1.0, 3.0, 20_000)))
    size = pd.Series(rng.choice([64.0, 600.0, 1500.0], len(t)))
    x, h = plotting._lines_shown(t, size, 1.0, 3.0, columns=500)
    assert len(x) <= 3 * 500 < len(t)
    assert np.all(np.diff(x) >= 0)  # still in time order
    # Per column: the same first and last line, and the same tallest height, as all 20 000.
    col_all = np.minimum(((t.to_numpy() - 1.0) / 2.0 * 500).astype(int), 499)
    col_kept = np.minimum(((x - 1.0) / 2.0 * 500).astype(int), 499)
    for c in np.unique(col_all):
        mine, kept = t.to_numpy()[col_all == c], x[col_kept == c]
        assert (kept.min(), kept.max()) == (mine.min(), mine.max())
        assert h[col_kept == c].max() == size.to_numpy()[col_all == c].max()
    few_x, _ = plotting._lines_shown(t[:1000], size[:1000], 1.0, 3.0, columns=500)
    assert len(few_x) == 1000  # up to 3 per column: every line drawn


def test_the_zooms_own_drops_are_drawn_over_the_others(result: Result) -> None:
    ax = plotting.plot_zoom(result).axes[2]
    by_label = {c.get_label(): c.get_zorder() for c in ax.collections}
    assert by_label["dropped, sender1 (2)"] > by_label["dropped, other flows (1)"]
