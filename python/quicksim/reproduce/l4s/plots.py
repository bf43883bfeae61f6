"""The l4s reproduction's figures."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..common import save_figure
from . import theory
from .cases import Flow, delay_series

if TYPE_CHECKING:
    import pandas as pd

    from ...results import Result


def pair_figure(pairs: pd.DataFrame, path: Path) -> None:
    """Delays (L p99 and mean, C mean), rate ratio and utilization against the base RTT."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 8), layout="constrained")
    (ax_l, ax_c), (ax_r, ax_u) = fig.subplots(2, 2, sharex=True)
    colours = iter(["tab:blue", "tab:orange", "tab:green", "tab:red"])
    for (transport, rate), g in pairs.groupby(["transport", "rate_mbps"]):
        g = g.sort_values("rtt_ms")
        c = next(colours)
        style = {"marker": "o" if transport == "tcp" else "s", "color": c}
        label = f"{str(transport).upper()} {rate:g} Mbit/s"
        ax_l.plot(g["rtt_ms"], g["l_queue.delay_p99_ms"], label=label + " p99", **style)
        ax_l.plot(g["rtt_ms"], g["l_queue.delay_mean_ms"], linestyle="--", label=label + " mean", **style)
        ax_c.plot(g["rtt_ms"], g["c_queue.delay_mean_ms"], label=label, **style)
        ax_r.plot(g["rtt_ms"], g["ratio"], label=label, **style)
        ax_u.plot(g["rtt_ms"], g["utilization"] * 100, label=label, **style)
    on_y = ax_l.get_yaxis_transform()
    ax_l.axhline(theory.L4S_P99_MAX_MS, color="black", linewidth=0.8, linestyle=":")
    ax_l.text(0.02, theory.L4S_P99_MAX_MS * 1.03, "published p99 < 2 ms", fontsize=8, transform=on_y)
    ax_l.set_ylim(0, theory.L4S_P99_MAX_MS * 1.3)
    ax_l.set_ylabel("L queue's sojourn time (ms)")
    ax_c.axhline(theory.CLASSIC_TARGET_MS, color="black", linewidth=0.8, linestyle=":")
    ax_c.text(
        0.02,
        theory.CLASSIC_TARGET_MS * 1.02,
        "PI2 target 15 ms",
        fontsize=8,
        transform=ax_c.get_yaxis_transform(),
    )
    ax_c.set_ylim(0, max(25.0, float(pairs["c_queue.delay_mean_ms"].max()) * 1.2))
    ax_c.set_ylabel("C queue's mean sojourn time (ms)")
    ax_r.axhspan(*theory.RATIO_RANGE, color="tab:green", alpha=0.1, label="design range")
    ax_r.axhline(theory.coupled_rate_ratio(), color="black", linewidth=0.8, linestyle=":")
    ax_r.set_ylabel("rate ratio Prague : CUBIC")
    ax_r.set_yscale("log")
    ax_r.set_ylim(0.25, 4)
    ax_r.set_yticks([0.25, 0.5, 1, 2, 4], ["1/4", "1/2", "1", "2", "4"])
    ax_r.minorticks_off()
    ax_u.axhline(95, color="black", linewidth=0.8, linestyle=":")
    ax_u.set_ylim(90, 101)
    ax_u.set_ylabel("utilization (%)")
    for ax in (ax_l, ax_c, ax_r, ax_u):
        ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
        ax.set_xlabel("base RTT (ms)")
    ax_l.legend(fontsize="x-small", ncol=2)
    ax_r.legend(fontsize="x-small")
    fig.suptitle("One Prague and one CUBIC flow through DualPI2")
    save_figure(fig, path)


def mix_figure(mix: pd.DataFrame, path: Path) -> None:
    """Per mix: mean per-flow rate of each class, and the delays."""
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4.5), layout="constrained")
    ax_r, ax_d = fig.subplots(1, 2)
    x = np.arange(len(mix))
    labels = [f"{n}P+{m}C" for n, m in zip(mix["n_prague"], mix["m_cubic"], strict=True)]
    ax_r.bar(x - 0.2, mix["prague_mean_mbps"], 0.4, label="Prague, per flow")
    ax_r.bar(x + 0.2, mix["cubic_mean_mbps"], 0.4, label="CUBIC, per flow")
    ax_r.set_ylabel("mean rate per flow (Mbit/s)")
    ax_d.bar(x - 0.2, mix["l4s_p99_ms"], 0.4, label="L queue p99 sojourn")
    ax_d.bar(x + 0.2, mix["classic_mean_ms"], 0.4, label="C queue mean sojourn")
    ax_d.axhline(theory.CLASSIC_TARGET_MS, color="black", linewidth=0.8, linestyle=":")
    ax_d.set_ylabel("queueing delay (ms)")
    for ax in (ax_r, ax_d):
        ax.set_xticks(x, labels)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle("n Prague + m CUBIC TCP flows through DualPI2")
    save_figure(fig, path)


def overload_figure(r: Result, flows: list[Flow], rate_bps: float, path: Path) -> None:
    """Rates over time, and each flow's queueing delay over time."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 6.5), layout="constrained")
    ax_r, ax_d = fig.subplots(2, 1, sharex=True)
    tp = r.throughput(interval=0.5)
    for f in flows:
        g = tp[tp["flow"].astype(str) == f.name]
        ax_r.plot(g["t_s"] + 0.25, g["mbps"], label=f"{f.name} ({f.ecn if f.kind == 'udp' else f.cc})")
    ax_r.axhline(rate_bps / 1e6, color="black", linewidth=0.8, linestyle=":")
    ax_r.set_ylabel("delivered (Mbit/s)")
    for f in flows:
        t, d = delay_series(r, f.name)
        step = max(1, len(d) // 4000)
        ax_d.plot(t[::step], d[::step] * 1e3, ".", markersize=1.5, label=f.name)
    ax_d.axhline(theory.CLASSIC_TARGET_MS, color="black", linewidth=0.8, linestyle=":")
    ax_d.set_ylabel("queueing delay (ms)")
    ax_d.set_xlabel("time (s; each packet at its send time)")
    for ax in (ax_r, ax_d):
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", markerscale=6)
    fig.suptitle(
        f"Overload: an unresponsive ECT(1) source at 1.5 x {rate_bps / 1e6:g} Mbit/s through DualPI2"
    )
    save_figure(fig, path)


def dctcp_figure(series: dict[int, Any], t0: float, dt: float, path: Path) -> None:
    """The queue over 0.5 s for each N, with the analysis's Q_max and Q_min."""
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.2 * len(series)), layout="constrained")
    axes = fig.subplots(len(series), 1, squeeze=False)[:, 0]
    for ax, (n, (x, th)) in zip(axes, series.items(), strict=True):
        m = min(len(x), int(0.5 / dt))
        t = t0 + np.arange(m) * dt
        ax.plot(t, x[:m], linewidth=0.8, label="queue (packets)")
        ax.axhline(th.q_max, color="tab:red", linestyle="--", label=f"Q_max = K + N = {th.q_max:g}")
        ax.axhline(th.q_min, color="tab:green", linestyle="--", label=f"Q_min = Q_max - A = {th.q_min:.1f}")
        ax.set_title(
            f"N = {n}: analysis period {th.period_rtts:.2f} RTTs, amplitude {th.amplitude:.1f} packets"
        )
        ax.set_ylabel("packets")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="upper right")
    axes[-1].set_xlabel("time (s)")
    save_figure(fig, path)
