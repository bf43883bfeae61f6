"""The figures of `quic-vs-tcp`, as the seed drew them: bytes received over time, and transfer
time, average bandwidth and overhead against delay, bandwidth, loss and jitter (QUIC against
TCP+TLS, means of the repetitions with their standard deviation), plus the rate spikes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..common import save_figure

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ...sweep import SweepResult

COLORS = {"quic": "tab:blue", "tcp-tls1.2": "tab:orange", "tcp-tls1.3": "tab:green"}
LABELS = {"quic": "QUIC", "tcp-tls1.2": "TCP+TLS 1.2", "tcp-tls1.3": "TCP+TLS 1.3"}
METRICS = [
    ("time_s", "total transfer time (s)"),
    ("bandwidth_mbps", "average bandwidth (Mbit/s)"),
    ("overhead", "overhead (wire bytes / file)"),
]


def series_frame(
    sw: SweepResult, points: list[dict[str, Any]], point: Callable[..., dict[str, Any]]
) -> pd.DataFrame:
    """The received-bytes series of every run, labelled with its point's settings."""
    import pandas as pd

    s = sw.series
    frames = []
    for p in points:
        # The point's runs by their parameters (few rows), then their series by run id.
        runs = sw.runs
        for k, v in point(**p).items():
            runs = runs[runs[k].astype(str) == str(v)]
        part = s[s["run_id"].isin(set(runs["run_id"]))]
        f = part[["rep", "t_s", "value"]].rename(columns={"value": "received_bytes"}).copy()
        # Up to the bin where the whole file has arrived (the run goes on, idle, after it).
        last = f.groupby("rep")["received_bytes"].transform("max")
        first_full = f[f["received_bytes"] >= last].groupby("rep")["t_s"].transform("min")
        f = f[f["t_s"] <= first_full.reindex(f.index).fillna(f["t_s"].max())]
        # At most ~MAX_POINTS points per run (a 1000 s transfer has 20 000 bins of 50 ms): every
        # k-th bin and the last, enough for a line plot and a CSV of a few hundred kB.
        f = f[_thin(f)]
        f.insert(0, "protocol", p["protocol"])
        f.insert(1, "condition", condition(p))
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


MAX_POINTS = 300


def _thin(f: pd.DataFrame) -> pd.Series:
    """Rows to keep: every k-th row of each repetition (k so that ~MAX_POINTS remain) and its last."""
    pos = f.groupby("rep").cumcount()
    n = f.groupby("rep")["t_s"].transform("size")
    k = (n + MAX_POINTS - 1) // MAX_POINTS
    return (pos % k == 0) | (pos == n - 1)


def condition(p: dict[str, Any]) -> str:
    """A point's link settings in words."""
    text = f"{p['bw_mbps']:g} Mbit/s, {p['delay_ms']:g} ms, {100 * p.get('loss', 0.0):g} % loss"
    if p.get("jitter_ms"):
        text += f", jitter {p['jitter_ms']:g} ms"
    return text


def write_all(
    out: Path, summary: pd.DataFrame, jsummary: pd.DataFrame, series: pd.DataFrame, quick: bool
) -> list[tuple[str, str]]:
    """Every figure into `out`; (file, caption) for the report."""
    figs: list[tuple[str, str]] = []
    save_figure(time_series(series), out / "time_series.png")
    figs.append(
        (
            "time_series.png",
            "IP bytes of the download received by the client over time (the seed's time series, "
            "counted on the wire as its tcpdump did): each repetition one line",
        )
    )
    nospike = summary[~summary["spikes"]]
    for loss in sorted(set(nospike["loss_pct"])):
        name = f"vs_delay_loss{loss:g}.png"
        part = nospike[nospike["loss_pct"] == loss]
        save_figure(
            grid_figure(part, "delay_ms", "one-way delay (ms)", "bw_mbps", "{:g} Mbit/s", f"{loss:g} % loss"),
            out / name,
        )
        figs.append((name, f"Against one-way delay, {loss:g} % loss, one column per bandwidth (mean ± sd)"))
    base = nospike[nospike["delay_ms"].isin([10.0, 50.0])]
    save_figure(
        grid_figure(base, "bw_mbps", "bandwidth (Mbit/s)", "delay_ms", "{:g} ms", "", style="loss_pct"),
        out / "vs_bandwidth.png",
    )
    figs.append(("vs_bandwidth.png", "Against bandwidth; solid 0 % loss, dashed 5 % loss (mean ± sd)"))
    save_figure(
        grid_figure(base, "loss_pct", "packet loss S->C (%)", "bw_mbps", "{:g} Mbit/s", "", style="delay_ms"),
        out / "vs_loss.png",
    )
    figs.append(("vs_loss.png", "Against loss; solid 10 ms, dashed 50 ms one-way delay (mean ± sd)"))
    spiked = summary[summary["spikes"]]
    if len(spiked):
        save_figure(spikes_figure(summary), out / "spikes.png")
        figs.append(
            (
                "spikes.png",
                "Transfer time without and with rate spikes (10 % of the rate for 200 ms every second)",
            )
        )
    save_figure(jitter_figure(jsummary), out / "jitter.png")
    figs.append(("jitter.png", "Against jitter (standard deviation of the one-way delay, mean 60 ms)"))
    return figs


def _time_axis(ax: Axes, values: Any) -> None:
    """Log scale when the times span more than a factor 8 (loss multiplies them by 10-100),
    with plain numbers as tick labels."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    v = [float(x) for x in values if x == x and float(x) > 0]
    if v and max(v) / min(v) > 8:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())


def _protocols(frame: pd.DataFrame) -> list[str]:
    have = set(frame["protocol"])
    return [p for p in COLORS if p in have]


def time_series(series: pd.DataFrame) -> Figure:
    from matplotlib.figure import Figure

    conds = list(dict.fromkeys(series["condition"]))
    fig = Figure(figsize=(5.0 * len(conds), 4.2), layout="constrained")
    axes = fig.subplots(1, len(conds), squeeze=False)[0]
    for ax, cond in zip(axes, conds, strict=True):
        part = series[series["condition"] == cond]
        for proto in _protocols(part):
            for i, (_, run) in enumerate(part[part["protocol"] == proto].groupby("rep")):
                ax.plot(
                    run["t_s"],
                    run["received_bytes"] / 1e6,
                    color=COLORS[proto],
                    linewidth=1.0,
                    alpha=0.8,
                    label=LABELS[proto] if i == 0 else None,
                )
        ax.set_title(cond, fontsize="medium")
        ax.set_xlabel("time since the first packet (s)")
        ax.set_ylabel("received at the client (MB, IP bytes)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="lower right")
    return fig


def _errorbars(ax: Axes, part: pd.DataFrame, x: str, metric: str, proto: str, style: str, label: str) -> None:
    part = part.sort_values(x)
    ax.errorbar(
        part[x],
        part[metric],
        yerr=part[f"{metric}_std"].fillna(0.0),
        color=COLORS[proto],
        linestyle=style,
        marker="d",
        markersize=4,
        capsize=3,
        linewidth=1.2,
        label=label,
    )


def grid_figure(
    frame: pd.DataFrame,
    x: str,
    xlabel: str,
    col: str,
    col_fmt: str,
    title: str,
    style: str | None = None,
) -> Figure:
    """Rows: time, bandwidth, overhead; one column per value of `col`; a line per protocol
    (and per value of `style`, solid then dashed)."""
    from matplotlib.figure import Figure

    cols = sorted(set(frame[col]), reverse=col == "bw_mbps")
    fig = Figure(figsize=(4.3 * len(cols), 9.0), layout="constrained")
    axes = fig.subplots(3, len(cols), squeeze=False)
    styles = sorted(set(frame[style])) if style else [None]
    for j, c in enumerate(cols):
        part = frame[frame[col] == c]
        for i, (metric, ylabel) in enumerate(METRICS):
            ax = axes[i][j]
            for proto in _protocols(part):
                for k, s in enumerate(styles):
                    sub = part[part["protocol"] == proto]
                    if style:
                        sub = sub[sub[style] == s]
                    unit = " %" if style == "loss_pct" else " ms"
                    label = LABELS[proto] + (f", {s:g}{unit}" if style else "")
                    _errorbars(ax, sub, x, metric, proto, "-" if k == 0 else "--", label)
            if metric == "time_s":
                _time_axis(ax, part["time_s"])
            ax.set_xlabel(xlabel)
            ax.set_ylabel(ylabel)
            ax.grid(True, alpha=0.3, which="both")
            if i == 0:
                ax.set_title(col_fmt.format(c) + (f", {title}" if title else ""), fontsize="medium")
        axes[0][j].legend(fontsize="x-small")
    if x == "bw_mbps":
        for ax in axes.flat:
            ax.set_xscale("log")
            ax.set_xticks([5, 40, 100], ["5", "40", "100"])
    return fig


def spikes_figure(summary: pd.DataFrame) -> Figure:
    """Transfer time with and without spikes, at the grid's delays, 0 % loss."""
    import numpy as np
    from matplotlib.figure import Figure

    part = summary[(summary["loss_pct"] == 0) & summary["delay_ms"].isin([10.0, 50.0])]
    keys = sorted(
        {(b, d) for b, d in zip(part["bw_mbps"], part["delay_ms"], strict=True)}, key=lambda t: (-t[0], t[1])
    )
    fig = Figure(figsize=(max(6.0, 1.6 * len(keys)), 4.5), layout="constrained")
    ax = fig.subplots()
    protos = _protocols(part)
    width = 0.8 / (2 * len(protos))
    xs = np.arange(len(keys))
    for i, proto in enumerate(protos):
        for k, spiked in enumerate((False, True)):
            sub = part[(part["protocol"] == proto) & (part["spikes"] == spiked)].set_index(
                ["bw_mbps", "delay_ms"]
            )
            vals = [float(sub["time_s"].get(key, np.nan)) for key in keys]
            errs = [float(sub["time_s_std"].get(key, np.nan)) for key in keys]
            ax.bar(
                xs + (2 * i + k - len(protos) + 0.5) * width,
                vals,
                width,
                yerr=np.nan_to_num(errs),
                color=COLORS[proto],
                hatch="//" if spiked else None,
                edgecolor="black",
                linewidth=0.4,
                label=f"{LABELS[proto]}{', spikes' if spiked else ''}",
            )
    ax.set_xticks(xs, [f"{b:g} Mbit/s\n{d:g} ms" for b, d in keys])
    _time_axis(ax, part["time_s"])
    ax.set_ylabel("total transfer time (s)")
    ax.set_title("Rate spikes: 10 % of the rate for 200 ms every second (0 % loss)", fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3, which="both")
    ax.legend(fontsize="x-small", ncol=3)
    return fig


def jitter_figure(jsummary: pd.DataFrame) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13.0, 4.2), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, (metric, ylabel) in zip(axes, METRICS, strict=True):
        for proto in _protocols(jsummary):
            _errorbars(
                ax, jsummary[jsummary["protocol"] == proto], "jitter_ms", metric, proto, "-", LABELS[proto]
            )
        ax.set_xlabel("jitter: standard deviation of the one-way delay (ms)")
        ax.set_ylabel(ylabel)
        if metric == "time_s":
            _time_axis(ax, jsummary["time_s"])
        ax.grid(True, alpha=0.3, which="both")
    b = jsummary["bw_mbps"].iloc[0]
    d = jsummary["delay_ms"].iloc[0]
    axes[0].set_title(f"{b:g} Mbit/s, mean delay {d:g} ms, 0 % loss", fontsize="medium")
    axes[0].legend(fontsize="small")
    return fig
