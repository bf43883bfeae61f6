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
