"""Plots of a `Result`, after the INET QUIC linksharing showcase.

Each function takes a Result (or the matching DataFrame) and returns a matplotlib Figure; none
calls `plt.show()`. Figures are built with `matplotlib.figure.Figure` rather than pyplot, so they
render with Agg, never touch the user's interactive backend and need no `plt.close()`; they
display in a notebook without `%matplotlib inline` (`new_figure`). Long series are thinned for
display (`thin`), at most `MAX_SERIES` series are drawn, and a series whose recording stopped
at `run.record.max_samples` ends there (`truncated_series`).

Each plot is prepared here (pandas) as a `Sketch`, the drawing calls with their numpy data, and
then drawn (`_sketch`): `quicksim run` prepares the standard plots itself and has a worker
without pandas draw them (`standard_sketches`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ._rows import connection_rows
from ._sketch import Sketch, draw_sketches, new_figure
from .results import Result, binned_rate, winavg

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "DISPLAY_POINTS",
    "MAX_SERIES",
    "QUEUE_BINS",
    "STANDARD_PLOTS",
    "caption",
    "new_figure",
    "plot_cwnd",
    "plot_drops",
    "plot_queue",
    "plot_sender_throughput",
    "plot_throughput",
    "plot_zoom",
    "save_standard_plots",
    "step_bins",
    "thin",
    "truncated_series",
]

# Seconds before and after a flow's start shown by plot_zoom; the showcase zooms on
# 4.8..7.2 s around sender1's start at 5 s.
_ZOOM_BEFORE_S = 0.2
_ZOOM_AFTER_S = 2.2

QUEUE_BINS = 100
"""Time bins of `plot_queue` (about 9 pixel columns each at the standard size)."""


def plot_throughput(
    data: Result | pd.DataFrame,
    *,
    flows: Iterable[str] | None = None,
    total: bool = True,
    title: str | None = None,
) -> Figure:
    """Receiver-side (application) throughput per flow in Mbit/s, with their total dotted."""
    return _throughput(data, flows=flows, total=total, title=title).draw()


def _throughput(
    data: Result | pd.DataFrame, *, flows: Iterable[str] | None, total: bool, title: str | None
) -> Sketch:
    df = _rates(data, "delivered", flows)
    sk = _rate_sketch(df, total, title or "Incoming data rate at receivers (application layer)")
    sk.layout(caption(data))
    return sk


def plot_sender_throughput(
    data: Result | pd.DataFrame,
    *,
    smoothed: bool = False,
    window: int = 10,
    flows: Iterable[str] | None = None,
    total: bool = True,
    title: str | None = None,
) -> Figure:
    """Sender-side throughput (IP bytes on the wire) per flow in Mbit/s.

    `smoothed` averages batches of `window` bins, as the showcase's `winavg(10)`.
    """
    return _sender_throughput(
        data, smoothed=smoothed, window=window, flows=flows, total=total, title=title
    ).draw()


def _sender_throughput(
    data: Result | pd.DataFrame,
    *,
    smoothed: bool = False,
    window: int = 10,
    flows: Iterable[str] | None = None,
    total: bool = True,
    title: str | None = None,
) -> Sketch:
    df = _rates(data, "wire", flows)
    label = "Outgoing data rate at senders (IP layer)"
    if smoothed:
        df = winavg(df, window)
        label += f", mean of {window} bins"
    sk = _rate_sketch(df, total, title or label)
    sk.layout(caption(data))
    return sk


def plot_queue(
    data: Result | pd.DataFrame,
    *,
    queues: Iterable[str] | None = None,
    title: str | None = None,
    bins: int = QUEUE_BINS,
) -> Figure:
    """Queue length over time in packets, one panel per queue: per time bin the mean (line) and
    the range from lowest to highest (band).

    A queue's length changes with every packet, faster than a pixel column can show: drawn as
    one line it fills its panel (a solid block), and several such lines on one axes hide each
    other. Per bin the mean and range stay readable at any rate and for many queues. Queues
    that stayed empty are left out (a dumbbell has many idle interfaces), and so are all but
    the `MAX_SERIES` busiest; the title says how many are shown. Each panel names its queue and
    its peak in packets and kB. A series cut at `run.record.max_samples` ends there, marked.
    """
    return _queue(data, queues=queues, title=title, bins=bins).draw()


def _queue(
    data: Result | pd.DataFrame, *, queues: Iterable[str] | None, title: str | None, bins: int
) -> Sketch:
    df, end = (data.queues, data.sim_end_s) if isinstance(data, Result) else (data, None)
    cut = truncated_series(data, "queue") if isinstance(data, Result) else {}
    df = _pick(df, "queue", queues)
    shown, total, busy = _series(df, "queue", [], "bytes", keep=lambda v: v > 0)
    last = float(df["t_s"].max()) if len(df) else 1.0
    span = end or last or 1.0
    sk = Sketch(max(1, len(shown)), height=1.6 + 1.3 * max(1, len(shown)))
    axes = sk.axes
    width = _round_up(span / bins)  # 0.5 s, not 0.026 s: a width a reader can say
    for panel, (ax, (name, g)) in enumerate(zip(axes, shown.items(), strict=False)):
        stop = min(cut.get(name, span), span)
        edges, mean, low, high = step_bins(
            g["t_s"].to_numpy(dtype=float), g["packets"].to_numpy(dtype=float), stop, width
        )
        ax.fill_between(edges, np.r_[low, low[-1:]], np.r_[high, high[-1:]], step="post", alpha=0.3, lw=0)
        ax.step(edges, np.r_[mean, mean[-1:]], where="post", color="C0", lw=1.2, label=name)
        peak_kb = float(g["bytes"].max()) / 1e3
        ax.set_title(name, loc="left", fontsize="small")
        peak = int(g["packets"].max())
        ax.set_title(f"max {peak} packet{'s' * (peak != 1)}, {peak_kb:.3g} kB", loc="right", fontsize="small")
        ax.set_ylim(bottom=0)
        ax.set_ylabel("packets")
        ax.grid(True, alpha=0.4)
        if name in cut:
            sk.mark_cut(panel, cut[name])
    axes[-1].set_xlim(0, span)
    axes[-1].set_xlabel("time (s)")
    head = title or "Queue length"
    note = _shown_note(len(shown), total, "queues", busy)
    suptitle = f"{head}{note}\nper {width:.3g} s: mean (line), lowest to highest (band)"
    sk.fig.suptitle(suptitle, fontsize="medium")
    sk.layout(caption(data), suptitle_lines=2, panel_titles=True)
    return sk


def step_bins(
    t: np.ndarray, y: np.ndarray, end: float, width: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A sampled-on-change step series (value `y[i]` from `t[i]` on, 0 before the first sample)
    in bins of `width` seconds from 0 to `end`: (the n + 1 bin edges; the time-weighted mean,
    lowest and highest value in each of the n bins)."""
    n = max(1, int(np.ceil(end / width - 1e-9)))
    edges = np.minimum(np.arange(n + 1) * width, end)
    t, y = np.asarray(t, dtype=float), np.asarray(y, dtype=float)
    keep = t < end
    t, y = np.r_[0.0, t[keep]], np.r_[0.0, y[keep]]  # the value before the first sample is 0
    # The integral of the step function at each edge: the area up to the sample before it plus
    # that sample's value for the rest of the way.
    area = np.r_[0.0, np.cumsum(y[:-1] * np.diff(t))]
    k = np.searchsorted(t, edges, side="right") - 1
    integral = area[k] + y[k] * (edges - t[k])
    mean = np.diff(integral) / np.diff(edges)
    # Lowest and highest: the value carried into the bin and every sample inside it.
    carried = y[k[:-1]]
    first = np.searchsorted(t, edges[:-1], side="left")
    after = np.searchsorted(t, edges[1:], side="left")
    inside = after > first
    low, high = carried.copy(), carried.copy()
    if inside.any():
        at = first[inside]
        low[inside] = np.minimum(carried[inside], np.minimum.reduceat(y, at)[: len(at)])
        high[inside] = np.maximum(carried[inside], np.maximum.reduceat(y, at)[: len(at)])
    return edges, mean, low, high


def plot_drops(
    data: Result | pd.DataFrame,
    *,
    unit: Literal["packets", "bits"] = "packets",
    interval: float | None = None,
    queues: Iterable[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Drops per bin and queue: dropped packets per bin (`packets`), or dropped data in kbit/s
    (`bits`)."""
    return _drops(data, unit=unit, interval=interval, queues=queues, title=title).draw()


def _drops(
    data: Result | pd.DataFrame,
    *,
    unit: Literal["packets", "bits"] = "packets",
    interval: float | None = None,
    queues: Iterable[str] | None = None,
    title: str | None = None,
) -> Sketch:
    if isinstance(data, Result):
        df, end, step = data.drops, data.sim_end_s, interval or data.record_interval_s
    else:
        df, end, step = data, None, interval or 0.5
    df = _pick(df, "queue", queues)
    rates = binned_rate(df, "queue", step, end, weight="bytes" if unit == "bits" else None)
    if unit == "bits":
        rates["value"], ylabel = rates["rate"] * 8e-3, "dropped data (kbit/s)"
    else:  # the count in each bin (the last one may be shorter than `step`)
        t = rates["t_s"].to_numpy(dtype=float)
        widths = np.minimum(step, end - t) if end is not None else np.full(len(t), step)
        rates["value"], ylabel = np.rint(rates["rate"].to_numpy() * widths), f"dropped packets per {step:g} s"
    sk = Sketch()
    (ax,) = sk.axes
    shown, total, _ = _series(rates, "queue", [], "value", agg="sum")
    for name, g in shown.items():
        last = float(g["t_s"].max()) + step
        x, y = _hold_until(g["t_s"], g["value"], last if end is None else min(last, end))
        ax.step(*thin(x, y), where="post", label=name)
    ax.set_ylabel(ylabel)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    note = _shown_note(len(shown), total, "queues")
    sk.finish(0, "time (s)", (title or f"Packet drops ({step:g} s bins)") + note)
    sk.layout(caption(data))
    return sk


def plot_cwnd(
    data: Result | pd.DataFrame,
    *,
    flows: Iterable[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Congestion window per QUIC or TCP flow in kB, as steps.

    At most `MAX_SERIES` flows (those with the largest windows); a series cut at
    `run.record.max_samples` ends at its last sample, marked.
    """
    return _cwnd(data, flows=flows, title=title).draw()


def _cwnd(data: Result | pd.DataFrame, *, flows: Iterable[str] | None, title: str | None) -> Sketch:
    df = data.conn if isinstance(data, Result) else data
    cut = truncated_series(data, "conn") if isinstance(data, Result) else {}
    df = _pick(df, "flow", flows)
    order = data.flow_names if isinstance(data, Result) else []
    shown, total, _ = _series(df, "flow", order, "cwnd_bytes")
    sk = Sketch()
    (ax,) = sk.axes
    for name, g in shown.items():
        ax.step(
            *thin(g["t_s"].to_numpy(dtype=float), g["cwnd_bytes"].to_numpy(dtype=float) / 1e3),
            where="post",
            label=name,
        )
        if name in cut:
            sk.mark_cut(0, cut[name])
    ax.set_ylabel("congestion window (kB)")
    ax.set_xlim(left=0)
    sk.finish(0, "time (s)", (title or "Congestion window") + _shown_note(len(shown), total, "flows"))
    sk.layout(caption(data))
    return sk


def plot_zoom(
    result: Result,
    flow: str | None = None,
    t0: float | None = None,
    t1: float | None = None,
    *,
    queue: str | None = None,
    title: str | None = None,
) -> Figure:
    """Congestion window, queue length and drops of one flow in [t0, t1], on a shared time axis.

    Defaults: the first flow with congestion state, the window from 0.2 s before to 2.2 s after
    its start (the showcase's zoom), and the queue where that flow lost the most packets.
    """
    return _zoom(result, flow, t0, t1, queue=queue, title=title).draw()


def _zoom(
    result: Result,
    flow: str | None = None,
    t0: float | None = None,
    t1: float | None = None,
    *,
    queue: str | None = None,
    title: str | None = None,
) -> Sketch:
    conn = connection_rows(result.conn)
    flow = flow or next(iter(_groups(conn, "flow", result.flow_names)), None)
    if flow is None:
        raise ValueError("no flow has congestion state (the conn table is empty)")
    mine = conn[_labels(conn["flow"]) == flow]
    if t0 is None or t1 is None:
        window = result.active_window(flow)
        start = window[0] if window else (float(mine["t_s"].min()) if len(mine) else 0.0)
        t0 = max(0.0, start - _ZOOM_BEFORE_S) if t0 is None else t0
        t1 = start + _ZOOM_AFTER_S if t1 is None else t1
    queue = queue or _busiest_queue(result, flow)

    sk = Sketch(3, height=7.0)
    ax_cwnd, ax_queue, ax_drops = sk.axes
    x, y = _window_steps(mine["t_s"], mine["cwnd_bytes"] / 1e3, t0, t1)
    ax_cwnd.step(x, y, where="post", label=f"cwnd {flow}")
    ss = mine[mine["ssthresh_bytes"].notna().to_numpy()]  # null while unset
    if len(ss):
        x, y = _window_steps(ss["t_s"], ss["ssthresh_bytes"] / 1e3, t0, t1)
        ax_cwnd.step(x, y, where="post", linestyle="--", label="ssthresh")
    ax_cwnd.set_ylabel("kB")

    if queue is not None:
        q = result.queues[_labels(result.queues["queue"]) == queue]
        cut = truncated_series(result, "queue").get(queue)
        x, y = _window_steps(q["t_s"], q["bytes"] / 1e3, t0, t1 if cut is None else min(t1, cut))
        ax_queue.step(x, y, where="post", color="tab:orange", label=f"queue {queue}")
        if cut is not None and t0 <= cut <= t1:
            sk.mark_cut(1, cut)
    ax_queue.set_ylabel("kB")

    drops = result.drops
    drops = drops[(drops["t_s"] >= t0) & (drops["t_s"] <= t1)]
    if queue is not None:
        drops = drops[_labels(drops["queue"]) == queue]
    is_mine = _labels(drops["flow"]) == flow
    # The flow's own drops are drawn over the others' (zorder), which would hide them.
    for subset, color, label, zorder in (
        (drops[is_mine], "tab:red", f"dropped, {flow}", 2.5),
        (drops[~is_mine], "0.6", "dropped, other flows", 2.0),
    ):
        if len(subset):
            t, size = _lines_shown(subset["t_s"], subset["bytes"], t0, t1)
            ax_drops.vlines(t, 0, size, color=color, label=f"{label} ({len(subset)})", zorder=zorder)
    ax_drops.set_ylabel("dropped packet (B)")
    ax_drops.set_ylim(bottom=0)
    ax_drops.set_xlim(t0, t1)
    for panel, ax in enumerate((ax_cwnd, ax_queue)):
        ax.set_ylim(bottom=0)
        sk.finish(panel, None)
    sk.finish(2, "time (s)")
    ax_cwnd.set_title(title or f"Congestion window, queue length and drops: {flow}")
    sk.layout(caption(result))
    return sk


# --- all at once ------------------------------------------------------------------------------

PlotBuilder = Callable[[Result], "Figure"]
SketchBuilder = Callable[[Result], Sketch]

_STANDARD_SKETCHES: Sequence[tuple[str, str, SketchBuilder]] = (
    ("receiver_throughput.png", "flows", lambda r: _throughput(r, flows=None, total=True, title=None)),
    ("sender_throughput.png", "flows", lambda r: _sender_throughput(r)),
    ("sender_throughput_smoothed.png", "flows", lambda r: _sender_throughput(r, smoothed=True)),
    ("queue_length.png", "queues", lambda r: _queue(r, queues=None, title=None, bins=QUEUE_BINS)),
    ("packet_drop_rate.png", "drops", lambda r: _drops(r)),
    ("congestion_window.png", "conn", lambda r: _cwnd(r, flows=None, title=None)),
    ("cwnd_queue_drops.png", "conn", lambda r: _zoom(r)),
)


def _drawn(sketch: SketchBuilder) -> PlotBuilder:
    return lambda result: sketch(result).draw()


STANDARD_PLOTS: Sequence[tuple[str, str, PlotBuilder]] = tuple(
    (name, table, _drawn(sketch)) for name, table, sketch in _STANDARD_SKETCHES
)
"""(file name, table that must be non-empty, builder); names follow the showcase's images."""


def save_standard_plots(
    result: Result,
    outdir: str | os.PathLike[str],
    *,
    dpi: int = 120,
    only: Iterable[str] | None = None,
) -> list[Path]:
    """Write the standard PNGs whose data is present (of those named in `only`, if given); stale
    ones from an earlier run are removed. The files written, in the order of `STANDARD_PLOTS`."""
    written = draw_sketches(standard_sketches(result, outdir, only=only), dpi=dpi)
    order = {name: i for i, (name, _, _) in enumerate(STANDARD_PLOTS)}
    return sorted(written, key=lambda path: order[path.name])


def standard_sketches(
    result: Result, outdir: str | os.PathLike[str], *, only: Iterable[str] | None = None
) -> Iterator[tuple[Path, Sketch]]:
    """The standard plots whose data is present (of those named in `only`, if given) as
    (file, Sketch) for `draw_sketches`, each prepared when the next is asked for, those of
    several panels first (`_COSTLIEST`: they take longest to draw, so a worker drawing them as
    they come starts with them); a stale file of a plot without data is removed on the way.
    Creates `outdir`."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    wanted = None if only is None else set(only)
    first = {name: i for i, name in enumerate(_COSTLIEST)}
    for filename, table, sketch in sorted(_STANDARD_SKETCHES, key=lambda e: first.get(e[0], len(first))):
        if wanted is not None and filename not in wanted:
            continue
        path = out / filename
        if result.table(table).empty:
            path.unlink(missing_ok=True)
            continue
        yield path, sketch(result)


_COSTLIEST = ("cwnd_queue_drops.png", "queue_length.png")  # the standard plots of several panels


# --- helpers ----------------------------------------------------------------------------------

MAX_SERIES = 10  # the distinct colours of the default cycle (tab10)
"""Series drawn per plot at most (the largest ones); the title says when some are left out."""
DISPLAY_POINTS = 1000
"""Horizontal resolution of `thin`: a series with more points is reduced, per column of this
many, to its first, last, lowest and highest point (M4), which draws the same picture."""


def thin(x: np.ndarray, y: np.ndarray, columns: int = DISPLAY_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The points of a line that are visible at `columns` horizontal pixels (M4 decimation).

    Per column: the first, last, minimum and maximum point, in time order. The envelope, the
    extremes and every step's start and end value per column are kept, so a plot of the result
    looks like a plot of the whole series at that resolution; only the drawing gets cheaper.
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) <= 2 * columns:
        return x, y
    lo, hi = float(x[0]), float(x[-1])
    col = np.minimum(((x - lo) / ((hi - lo) or 1.0) * columns).astype(np.int64), columns - 1)
    starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])  # x is sorted: columns are runs
    ends = np.r_[starts[1:], len(x)] - 1
    by_value = np.lexsort((y, col))  # within each column (a run of indices), by value
    idx = np.unique(np.concatenate([starts, ends, by_value[starts], by_value[ends]]))
    return x[idx], y[idx]


def truncated_series(result: Result, table: str) -> dict[str, float]:
    """{series name: time of its last sample} of the `table` ("queue" or "conn") series whose
    recording stopped at `run.record.max_samples` (`meta["truncated_series"]`)."""
    out: dict[str, float] = {}
    key = "queue" if table == "queue" else "flow"
    for entry in result.meta.get("truncated_series") or []:
        if isinstance(entry, dict):
            kind, name, last = entry.get("table"), str(entry.get("name")), entry.get("last_t_s")
        else:  # results saved before the entries carried the time: "conn:<flow>"
            kind, _, name = str(entry).partition(":")
            last = None
        if kind != table:
            continue
        if last is None:  # the table is built only for such old results
            frame = result.queues if table == "queue" else result.conn
            rows = frame[_labels(frame[key]) == name]
            if not len(rows):
                continue
            last = float(rows["t_s"].max())
        out[name] = float(last)
    return out


def _series(
    df: pd.DataFrame,
    column: str,
    order: Sequence[str],
    size: str,
    *,
    agg: str = "max",
    keep: Callable[[float], bool] | None = None,
) -> tuple[dict[str, pd.DataFrame], int, int]:
    """The rows of each series (value of `column`) to draw, in one pass over `df`.

    Series whose `size` aggregate fails `keep` are left out; of the rest, at most MAX_SERIES, the
    largest by that aggregate, in `order`. Returns ({name: rows}, number of series, number kept
    by `keep`); the work is linear in rows, however many series there are.
    """
    if not len(df):
        return {}, 0, 0
    keys = _labels(df[column])
    sizes = df[size].groupby(keys, sort=False, observed=True).agg(agg)
    total = len(sizes)
    if keep is not None:
        sizes = sizes[[keep(float(v)) for v in sizes.to_numpy()]]
    kept = len(sizes)
    present = set(sizes.index)
    names = [n for n in order if n in present] + sorted(present - set(order))
    if len(names) > MAX_SERIES:
        top = set(sizes.sort_values(ascending=False, kind="stable").index[:MAX_SERIES])
        names = [n for n in names if n in top]
    chosen = keys.isin(names).to_numpy()
    rows = {str(k): g for k, g in df[chosen].groupby(keys[chosen], sort=False, observed=True)}
    return {n: rows[n] for n in names}, total, kept


def _shown_note(shown: int, total: int, what: str, nonidle: int | None = None) -> str:
    if shown == total:
        return ""
    if nonidle is not None and shown == nonidle:
        return f" ({total - shown} idle {what} not shown)"
    return f" ({shown} largest of {total} {what} shown)"


def caption(data: object) -> str:
    """ "scenario <name>, seed <n>" of a Result (what every standard figure names), "" for a
    DataFrame."""
    if not isinstance(data, Result):
        return ""
    return f"scenario {data.name}, seed {data.meta.get('seed', '?')}"


def _rates(
    data: Result | pd.DataFrame, layer: Literal["delivered", "wire"], flows: Iterable[str] | None
) -> pd.DataFrame:
    if isinstance(data, Result):
        return data.throughput(flow=None if flows is None else list(flows), layer=layer)
    missing = {"t_s", "flow", "mbps"} - set(data.columns)
    if missing:
        raise ValueError(f"expected a throughput frame (t_s, flow, mbps); missing {sorted(missing)}")
    return _pick(data, "flow", flows)


def _rate_sketch(df: pd.DataFrame, total: bool, title: str) -> Sketch:
    sk = Sketch()
    (ax,) = sk.axes
    step = float(np.diff(np.unique(df["t_s"])).min()) if df["t_s"].nunique() > 1 else 0.5
    names = _groups(df, "flow")
    shown, _, _ = _series(df, "flow", names, "mbps", agg="sum")
    for name, g in shown.items():
        x, y = _hold_until(g["t_s"], g["mbps"], float(g["t_s"].max()) + step if len(g) else None)
        ax.step(*thin(x, y), where="post", label=name)
    if total and len(names) > 1:
        tot = df.groupby("t_s")["mbps"].sum()
        x, y = _hold_until(tot.index.to_series(), tot, float(tot.index.max()) + step)
        ax.step(
            *thin(x, y),
            where="post",
            color="black",
            linestyle=":",
            label="total" if len(shown) == len(names) else f"total (all {len(names)} flows)",
        )
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    sk.finish(0, "time (s)", title + _shown_note(len(shown), len(names), "flows"))
    return sk


def _groups(df: pd.DataFrame, column: str, order: Sequence[str] | None = None) -> list[str]:
    present = {str(v) for v in pd.unique(df[column].dropna())} if len(df) else set()
    if isinstance(df[column].dtype, pd.CategoricalDtype) and order is None:
        order = [str(c) for c in df[column].cat.categories]
    if order is None:
        return sorted(present)
    return [n for n in order if n in present] + sorted(present - set(order))


def _pick(df: pd.DataFrame, column: str, wanted: Iterable[str] | None) -> pd.DataFrame:
    if wanted is None:
        return df
    names = set(wanted)
    return df[_labels(df[column]).isin(names)]


def _labels(column: pd.Series) -> pd.Series:
    """`column`'s values as names (str) for comparing and grouping, without a string per row: a
    categorical column (the core's name columns) keeps its codes, its categories made strings
    where they are not; `astype(str)` of a million-row name column took ~0.2 s per use, several
    uses per figure (issue 38: a 1 600-flow run's plots)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        categories = column.cat.categories
        names = [str(c) for c in categories]
        if all(isinstance(c, str) for c in categories):
            return column
        if len(set(names)) == len(names):
            return column.cat.rename_categories(names)
    return column.astype(str)


def _busiest_queue(result: Result, flow: str) -> str | None:
    drops = result.drops
    mine = drops[_labels(drops["flow"]) == flow]
    if len(mine):
        return str(mine["queue"].astype(str).value_counts().idxmax())
    queues: dict[str, Any] = result.totals.get("queues") or {}
    if queues:
        return max(queues, key=lambda q: queues[q].get("max_bytes") or 0)
    names = _groups(result.queues, "queue")
    return names[0] if names else None


def _hold_until(t: pd.Series, y: pd.Series, end: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Append a last point at `end` so a steps-post line shows its final value until then."""
    x, v = t.to_numpy(dtype=float), np.asarray(y, dtype=float)
    if end is not None and len(x) and end > x[-1]:
        x, v = np.append(x, end), np.append(v, v[-1])
    return x, v


def _round_up(x: float) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that is at least `x` (> 0)."""
    power = 10.0 ** math.floor(math.log10(x))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= x * (1 - 1e-9))


def _lines_shown(
    t: pd.Series, height: pd.Series, t0: float, t1: float, columns: int = DISPLAY_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Of vertical lines from 0 at times `t` (sorted) in [t0, t1], those a plot `columns` pixels
    wide shows: all of them up to 3 x `columns`; else, per column, the first, the last and the
    tallest (the others lie under them), as `thin` does for a line. A loss storm drops ~10^5
    packets in the zoom's window: one line each took 14 s to build and draw (issue 38)."""
    x, h = t.to_numpy(dtype=float), height.to_numpy(dtype=float)
    if len(x) <= 3 * columns:
        return x, h
    col = np.clip(((x - t0) / ((t1 - t0) or 1.0) * columns).astype(np.int64), 0, columns - 1)
    starts = np.flatnonzero(np.r_[True, col[1:] != col[:-1]])  # x is sorted: columns are runs
    ends = np.r_[starts[1:], len(x)] - 1
    by_height = np.lexsort((-h, col))  # within each column, the tallest first
    keep = np.unique(np.concatenate([starts, ends, by_height[starts]]))
    return x[keep], h[keep]


def _window_steps(t: pd.Series, y: pd.Series, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """The samples of a sampled-on-change series inside [t0, t1], starting with its value at t0."""
    x, v = t.to_numpy(dtype=float), np.asarray(y, dtype=float)
    before = np.flatnonzero(x <= t0)
    first = before[-1] if len(before) else 0
    keep = slice(first, int(np.searchsorted(x, t1, side="right")))
    x, v = x[keep].copy(), v[keep]
    if len(x):
        x[0] = max(x[0], t0)
        x, v = np.append(x, t1), np.append(v, v[-1])
    return thin(x, v)  # a queue changes with every packet: ~10^4 points in the zoom's window
