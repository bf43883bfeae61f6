"""linux-vs-model's figures: model against kernel per metric, the differences against the
goal's bands, the cwnd over time of a few points, and the emulator's timing error per run."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..common import save_figure
from . import measure
from .grid import Point

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

#: One colour per congestion control (the case's first flow's), so the scatter reads by algorithm.
COLOURS = {"reno": "tab:green", "cubic": "tab:blue", "bbr": "tab:red"}
MARKERS = {"single": "o", "pair": "s", "pair-rtt": "^"}


def _style(point: Point) -> tuple[str, str]:
    colour = "tab:purple" if len(set(point.case.algos)) > 1 else COLOURS[point.case.algos[0]]
    return colour, MARKERS[point.case.name]


def scatter(points: pd.DataFrame, grid_points: Sequence[Point]) -> Figure:
    """Model against kernel: each flow's throughput, the mean queueing delay, the retransmitted
    segments; the goal's band shaded; untrusted points hollow."""
    from matplotlib.figure import Figure

    by_id = {p.id: p for p in grid_points}
    fig = Figure(figsize=(13, 4.4), layout="constrained")
    panels = (
        ("throughput", "per-flow throughput (Mbit/s)", measure.TIGHT["throughput"]),
        ("queueing", "mean queueing delay (ms)", measure.TIGHT["queueing"]),
        ("retransmits", "retransmitted segments", measure.TIGHT["retransmits"]),
    )
    for i, (metric, label, tol) in enumerate(panels):
        ax = fig.add_subplot(1, 3, i + 1)
        top = 0.0
        for d in points.to_dict("records"):
            if d["grade"] == "failed":
                continue
            p = by_id[d["point"]]
            colour, marker = _style(p)
            if metric == "throughput":
                xy = [(d[f"{f}.k.mbps"], d[f"{f}.m.mbps"]) for f in p.flows]
            elif metric == "queueing":
                xy = [(d["k.queue_mean_ms"], d["m.queue_mean_ms"])]
            else:
                xy = [(d["k.retransmits"], d["m.retransmits"])]
            for x, y in xy:
                face = "none" if d["grade"] == "untrusted" else colour
                ax.scatter([x], [y], marker=marker, edgecolors=colour, facecolors=face, s=36, zorder=3)
                top = max(top, x, y)
        top = top * 1.08 if top > 0 else 1.0
        line = [0, top]
        ax.plot(line, line, color="black", lw=0.8)
        ax.fill_between(
            line,
            [v * (1 - tol) for v in line],
            [v * (1 + tol) for v in line],
            color="tab:gray",
            alpha=0.2,
            label=f"± {tol:.0%} (the goal)",
        )
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel(f"kernel: {label}")
        ax.set_ylabel(f"model: {label}")
        ax.grid(True, alpha=0.3)
        if i == 0:
            _legend(ax)
    return fig


def _legend(ax: Any) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker="o", color=c, label=a) for a, c in COLOURS.items()]
    handles.append(Line2D([], [], ls="", marker="s", color="tab:purple", label="bbr vs cubic"))
    handles += [
        Line2D([], [], ls="", marker=m, color="black", mfc="none", label=n) for n, m in MARKERS.items()
    ]
    handles.append(Line2D([], [], ls="", marker="o", color="gray", mfc="none", label="hollow: untrusted"))
    ax.legend(handles=handles, fontsize="x-small", loc="upper left")


def differences(points: pd.DataFrame) -> Figure:
    """model / kernel - 1 per point and metric, against the goal's tight and loose bands."""
    import numpy as np
    from matplotlib.figure import Figure

    graded = points[points["grade"].isin(["tight", "loose", "outside"])]
    metrics = ("throughput", "queueing", "retransmits")
    labels = ("throughput (each flow)", "mean queueing delay", "retransmitted segments")
    fig = Figure(figsize=(9, 4), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    for i, metric in enumerate(metrics):
        cols = [c for c in points.columns if c == f"diff.{metric}" or c.startswith(f"diff.{metric}.")]
        v = graded[cols].to_numpy(dtype=float).ravel() * 100
        v = v[~np.isnan(v)]
        jitter = [(k % 7 - 3) * 0.04 for k in range(len(v))]
        ax.scatter([i + j for j in jitter], v, s=18, color="tab:blue", zorder=3)
        for tol, alpha in ((measure.TIGHT[metric], 0.25), (measure.LOOSE[metric], 0.1)):
            ax.fill_between([i - 0.4, i + 0.4], -tol * 100, tol * 100, color="tab:green", alpha=alpha)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(metrics)), labels)
    ax.set_ylabel("model / kernel - 1 (%)")
    ax.set_title("differences at the trusted points; green: the goal's 5 %/25 % (dark) and 10 %/50 % bands")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def cwnd(out: Path, chosen: Sequence[Point], duration_s: float) -> Figure:
    """cwnd (in MSS) over time of each chosen point's first repetition: the kernel's from `ss`
    (solid), the model's (dashed)."""
    import pandas as pd
    from matplotlib.figure import Figure

    n = len(chosen)
    cols = 2 if n > 1 else 1
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(6.5 * cols, 2.8 * rows), layout="constrained")
    for i, p in enumerate(chosen):
        ax = fig.add_subplot(rows, cols, i + 1)
        for side, ls in (("kernel", "-"), ("model", "--")):
            path = out / "runs" / p.id / f"{side}-1" / "cwnd.csv"
            if not path.is_file():
                continue
            s = pd.read_csv(path)
            for j, f in enumerate(p.flows):
                mine = s[s["flow"].astype(str) == f]
                ax.step(
                    mine["t_s"],
                    mine["cwnd_bytes"] / 1448,
                    where="post",
                    ls=ls,
                    lw=1,
                    color=f"C{j}",
                    label=f"{f} {p.case.algos[j]} {side}",
                )
        ax.axhline(p.buffer_packets, color="gray", lw=0.6, ls=":")
        ax.set_title(f"{p.id} (dotted: buffer {p.buffer_packets} pkts)", fontsize="small")
        ax.set_xlim(0, 0.5 + duration_s + 1.5)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (MSS)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small", ncol=2)
    return fig


def timing(runs: pd.DataFrame) -> Figure:
    """Each kernel run's p99 timing error (events, deliveries) against the trust limit."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    from .runner import TRUST_P99_US

    k = runs[(runs["side"] == "kernel") & (runs["error"] == "")].drop_duplicates(["point", "rep"])
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    x = range(len(k))
    ax.scatter(x, k["event_p99_us"], s=14, label="events p99", color="tab:blue")
    ax.scatter(x, k["delivery_p99_us"], s=14, label="deliveries p99", color="tab:orange", marker="x")
    ax.axhline(TRUST_P99_US, color="tab:red", lw=1, label="trust limit (1 ms)")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("kernel run (in the order run)")
    ax.set_ylabel("timing error p99 (µs)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def write_all(
    out: Path,
    points: pd.DataFrame,
    grid_points: Sequence[Point],
    runs: pd.DataFrame,
    duration_s: float,
    quick: bool,
) -> list[tuple[str, str]]:
    """Write the PNGs that have data; their (file, caption) for the report."""
    figs: list[tuple[str, str]] = []
    if "grade" in points and (points["grade"] != "failed").any():
        save_figure(scatter(points, grid_points), out / "scatter.png")
        figs.append(("scatter.png", "model against kernel per point; grey band: the goal's tolerance"))
        if "diff.queueing" in points:
            save_figure(differences(points), out / "differences.png")
            figs.append(("differences.png", "model / kernel - 1 at each trusted point, per metric"))
        chosen = (
            list(grid_points)
            if quick
            else [p for p in grid_points if (p.rate_mbps, p.rtt_ms, p.buffer_bdp) == (10, 50, 1)]
        )
        if chosen:
            save_figure(cwnd(out, chosen, duration_s), out / "cwnd.png")
            figs.append(
                ("cwnd.png", "cwnd over time, first repetition: kernel (ss -ti, solid) and model (dashed)")
            )
    if "event_p99_us" in runs and len(runs):
        save_figure(timing(runs), out / "timing.png")
        figs.append(
            ("timing.png", "the emulator's p99 timing error per kernel run; above the red line: not trusted")
        )
    return figs
