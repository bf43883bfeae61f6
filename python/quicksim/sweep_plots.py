"""Plots of sweeps: a metric's mean with its confidence interval against a swept parameter, and
time series averaged over repetitions with a confidence band (the paper's Fig. 6).

Like `quicksim.plotting`, every function returns a matplotlib Figure (built without pyplot) or
draws into the `ax` it is given, and never calls `plt.show()`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np
import pandas as pd

from .stats import mean_ci
from .units import split_number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .sweep import SweepResult

__all__ = ["axis_values", "interval_caption", "plot_metric", "plot_series", "series_mean"]

Theory: TypeAlias = Callable[[np.ndarray], Any] | pd.DataFrame | Mapping[str, Any]
"""A function of the x values, a DataFrame with columns x, y, or {label: either of those}."""

_SERIES_LABELS = {
    "throughput_series": "throughput [Mbit/s]",
    "cwnd_series": "congestion window [bytes]",
    "queue_series": "queue length",
}


_SUMMARY_COLUMNS = ("metric", "n", "mean", "std", "sem", "ci_low", "ci_high", "method", "identical")
"""The summary's own columns (`quicksim.stats.summarize`); the others are swept parameters."""


def axis_values(values: pd.Series) -> tuple[np.ndarray, str | None]:
    """Numbers to plot a parameter column against, and its unit.

    Strings that share one unit ("2ms", "4ms") become their numbers with that unit; other
    strings become positions 0, 1, ... (a categorical axis, unit None).
    """
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=float), ""
    parsed = [split_number(str(v)) for v in values]
    units = {p[1] for p in parsed if p}
    if all(parsed) and len(units) == 1:
        return np.array([p[0] for p in parsed if p]), units.pop()
    categories = list(dict.fromkeys(str(v) for v in values))
    return np.array([categories.index(str(v)) for v in values], dtype=float), None


def interval_caption(summary: pd.DataFrame, metrics: Sequence[str]) -> str:
    """What a metric plot's points and intervals are: "mean of 5 repetitions, 95 % interval:
    bootstrap", from the summary rows of `metrics` (their run counts and interval methods)."""
    rows = summary[summary["metric"].isin(list(metrics))]
    counts = sorted({int(n) for n in rows["n"]}) if len(rows) else [0]
    n = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    methods = [
        str(m)
        for m in dict.fromkeys(rows.get("method", pd.Series(dtype=str)))
        if str(m) not in ("identical", "none")
    ]
    what = f"mean of {n} repetitions"
    return f"{what}, 95 % interval: {', '.join(methods)}" if methods else what


def plot_metric(
    data: SweepResult | pd.DataFrame,
    metric: str | Sequence[str],
    x: str | None = None,
    *,
    hue: str | None = None,
    style: Literal["band", "bars"] = "band",
    theory: Theory | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Mean of `metric` (one or several summary metrics) against parameter `x`, with the 95 % CI.

    `data` is a SweepResult or its `summary` table. `x` defaults to the only swept parameter;
    `hue` draws one line per value of another parameter. `style` is a shaded band or error bars.
    `theory` overlays expected values (see `quicksim.theory`) as dashed lines.
    """
    summary = data if isinstance(data, pd.DataFrame) else data.summary
    metrics = [metric] if isinstance(metric, str) else list(metric)
    missing = [m for m in metrics if m not in set(summary["metric"])]
    if missing:
        raise KeyError(
            f"no metric {', '.join(missing)} in the summary; "
            f"metrics: {', '.join(dict.fromkeys(summary['metric']))}"
        )
    params = [c for c in summary.columns if c not in _SUMMARY_COLUMNS]
    if x is None:
        if len(params) != 1:
            raise ValueError(f"name the x parameter: the sweep varies {params or 'nothing'}")
        x = params[0]
    if x not in params:
        raise KeyError(f"{x!r} is not a swept parameter; parameters: {', '.join(params)}")
    if hue is not None and hue not in params:
        raise KeyError(f"{hue!r} is not a swept parameter; parameters: {', '.join(params)}")
    fig, ax = _axes(ax)
    df = summary[summary["metric"].isin(metrics)].copy()
    xs, unit = axis_values(df[x])
    df["_x"] = xs
    if "method" in df.columns:
        df["_identical"] = df["method"].astype(str) == "identical"
    else:
        df["_identical"] = False
    groups: list[tuple[str, pd.DataFrame]] = []
    for m in metrics:
        part = df[df["metric"] == m]
        if hue is None:
            groups.append((m if len(metrics) > 1 else "", part))
        else:
            for value, sub in part.groupby(hue, sort=False):
                groups.append((f"{m}, {hue}={value}" if len(metrics) > 1 else f"{hue}={value}", sub))
    marked = False
    for label, part in groups:
        # Parameters on neither x nor hue are averaged into each point; pass hue to separate one.
        part = (
            part.groupby("_x", sort=True)
            .agg(
                mean=("mean", "mean"),
                lo=("ci_low", "mean"),
                hi=("ci_high", "mean"),
                same=("_identical", "all"),
            )
            .reset_index()
        )
        xv, mean = part["_x"].to_numpy(), part["mean"].to_numpy(dtype=float)
        lo, hi = part["lo"].to_numpy(dtype=float), part["hi"].to_numpy(dtype=float)
        if style == "bars":
            # A point without an interval (identical repetitions, one run) gets no bar. Every
            # interval holds its mean, so the clip only absorbs the rounding of averaging points.
            err = np.vstack([mean - lo, hi - mean])
            err = np.clip(np.where(np.isfinite(err), err, 0.0), 0.0, None)
            (line, *_) = ax.errorbar(xv, mean, yerr=err, marker="o", capsize=3, label=label or None)
        else:
            (line,) = ax.plot(xv, mean, marker="o", label=label or None)
            ax.fill_between(xv, lo, hi, color=line.get_color(), alpha=0.25, linewidth=0)
        same = part["same"].to_numpy(dtype=bool)
        if same.any():
            # Without this a point with no band or bar reads as one whose interval is missing.
            ax.scatter(
                xv[same],
                mean[same],
                s=110,
                facecolors="none",
                edgecolors="black",
                linewidths=1.2,
                zorder=4,
                label=None if marked else "identical in every repetition: no interval",
            )
            marked = True
    if theory is not None:
        _overlay(ax, theory, np.unique(xs))
    if unit is None:
        categories = list(dict.fromkeys(str(v) for v in df[x]))
        ax.set_xticks(range(len(categories)), categories)
    ax.set_xlabel(f"{x} [{unit}]" if unit else x)
    ax.set_ylabel(ylabel or (metrics[0] if len(metrics) == 1 else "value"))
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[1]:
        ax.legend()
    return fig


_SERIES_OF = {
    "throughput_series": "goodput_mbps",
    "cwnd_series": "cwnd_bytes",
    "queue_series": "queue_delay_s",
}
"""The scalar metric whose range each built-in series shares (all three: never negative)."""


def series_mean(
    series: pd.DataFrame, name: str | None = None, by: Sequence[str] = (), level: float = 0.95
) -> pd.DataFrame:
    """Average a sweep's `series` table over repetitions: per (by..., key, t_s) n, mean, ci_low, ci_high."""
    df = series if name is None else series[series["series"] == name]
    if df.empty:
        raise ValueError(f"no series {name!r}" if name else "the series table is empty")
    if name is None and df["series"].nunique() > 1:
        raise ValueError(f"several series ({', '.join(df['series'].unique())}); pass name=")
    from .metrics import bounds

    # Series of rates, windows and queue lengths are never negative: their intervals are
    # clipped to the metric's range (throughput_series -> goodput_mbps's).
    limits = bounds(_SERIES_OF.get(str(df["series"].iloc[0]).split("[", 1)[0], ""))
    rows = []
    for key, group in df.groupby([*by, "key", "t_s"], sort=True, dropna=False):
        stats = mean_ci(group["value"], level, limits)
        rows.append({**dict(zip([*by, "key", "t_s"], key, strict=True)), **stats})
    return pd.DataFrame(rows)


def plot_series(
    data: SweepResult | pd.DataFrame,
    name: str | None = None,
    *,
    keys: Sequence[str] | None = None,
    where: Mapping[str, Any] | None = None,
    steps: bool = True,
    ylabel: str | None = None,
    title: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """A time-series metric averaged over repetitions, one line per key with its 95 % CI band.

    `where` selects one point of the sweep ({"dumbbell.bottleneck.delay": "10ms"}); without it
    the sweep must have a single point. Bins are drawn as steps, as `quicksim.plotting` does.
    """
    series = data if isinstance(data, pd.DataFrame) else data.series
    params = [
        c for c in series.columns if c not in ("run_id", "point", "rep", "series", "t_s", "key", "value")
    ]
    df = series
    for column, value in (where or {}).items():
        df = df[df[column] == value]
    unselected = [p for p in params if df[p].nunique() > 1]
    if unselected:
        raise ValueError(
            f"the series spans several points; choose one with where={{...}} on {', '.join(unselected)}"
        )
    stats = series_mean(df, name)
    fig, ax = _axes(ax)
    for key in keys if keys is not None else list(dict.fromkeys(stats["key"])):
        part = stats[stats["key"] == key].sort_values("t_s")
        t = part["t_s"].to_numpy(dtype=float)
        mean, lo, hi = (part[c].to_numpy(dtype=float) for c in ("mean", "ci_low", "ci_high"))
        if steps and len(t) > 1:  # close the last bin: a step is drawn from its start to the next
            t = np.append(t, t[-1] + (t[-1] - t[-2]))
            mean, lo, hi = (np.append(v, v[-1]) for v in (mean, lo, hi))
        draw = "steps-post" if steps else "default"
        (line,) = ax.plot(t, mean, drawstyle=draw, label=str(key))
        ax.fill_between(
            t,
            lo,
            hi,
            step="post" if steps else None,
            color=line.get_color(),
            alpha=0.25,
            linewidth=0,
        )
    n = int(stats["n"].max()) if len(stats) else 0
    ax.set_xlabel("time [s]")
    series_name = name or str(df["series"].iloc[0])
    ax.set_ylabel(ylabel or _SERIES_LABELS.get(series_name.split("[", 1)[0], series_name))
    band = f"mean of {n} repetitions, 95 % confidence band"
    ax.set_title(f"{title}\n{band}" if title else band)
    ax.grid(True, alpha=0.3)
    ax.legend()
    return fig


def _axes(ax: Axes | None) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]
    from .plotting import new_figure

    fig = new_figure(figsize=(8, 4.5), layout="constrained")
    return fig, fig.add_subplot()


def _overlay(ax: Axes, theory: Theory, xs: np.ndarray) -> None:
    items = theory.items() if isinstance(theory, Mapping) else [("theory", theory)]
    grid = np.linspace(xs.min(), xs.max(), 200) if len(xs) > 1 else xs
    for label, curve in items:
        if isinstance(curve, pd.DataFrame):
            ax.plot(curve["x"], curve["y"], linestyle="--", color="black", label=label)
        else:
            ax.plot(
                grid, np.asarray(curve(grid), dtype=float) * np.ones_like(grid), linestyle="--", label=label
            )
