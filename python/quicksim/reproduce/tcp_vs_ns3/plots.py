"""The two figures of `tcp-vs-ns3`: per-phase goodput and drops of the linksharing dumbbell,
quicksim beside ns-3; Mathis ratios per RTT and loss rate, one panel per variant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["linksharing_figure", "mathis_figure"]

_COLORS = ("tab:blue", "tab:orange", "tab:green")


def linksharing_figure(q: pd.DataFrame, n: pd.DataFrame) -> Any:
    """Top: each receiver's goodput per phase, quicksim (solid) and ns-3 (hatched), mean with
    min-max bars. Bottom: bottleneck drops per phase, the same way."""
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    phases = sorted({(a, b) for a, b in zip(q.t0_s, q.t1_s, strict=True)})
    x = np.arange(len(phases))
    width = 0.13
    for side, (frame, hatch, label) in enumerate(((q, "", "quicksim"), (n, "//", "ns-3"))):
        g = frame.groupby(["t0_s", "t1_s"])
        for i in range(3):
            col = f"recv{i + 1}_mbps"
            mean, lo, hi = g[col].mean(), g[col].min(), g[col].max()
            pos = x + (i * 2 + side - 2.5) * width
            top.bar(
                pos,
                mean.to_numpy(),
                width,
                yerr=[(mean - lo).to_numpy(), (hi - mean).to_numpy()],
                color=_COLORS[i],
                hatch=hatch,
                edgecolor="black",
                linewidth=0.4,
                error_kw={"elinewidth": 0.6, "capsize": 1.5},
                label=f"{label} receiver{i + 1}",
            )
        d = g["drops"]
        mean, lo, hi = d.mean(), d.min(), d.max()
        bottom.bar(
            x + (side - 0.5) * 2 * width,
            mean.to_numpy(),
            2 * width,
            yerr=[(mean - lo).to_numpy(), (hi - mean).to_numpy()],
            color="0.55" if side == 0 else "white",
            hatch=hatch,
            edgecolor="black",
            linewidth=0.5,
            error_kw={"elinewidth": 0.6, "capsize": 2},
            label=label,
        )
    top.set_ylabel("goodput (Mbit/s)")
    top.set_title(
        f"linksharing, TCP NewReno: quicksim ({q.run.nunique()} seeds) vs ns-3.44 ({n.run.nunique()} runs)"
    )
    top.set_ylim(0, 12.5)
    top.legend(fontsize="x-small", ncols=3, loc="upper center")
    top.grid(True, axis="y", alpha=0.3)
    bottom.set_ylabel("bottleneck drops")
    bottom.set_xticks(x, [f"{a:g}-{b:g} s" for a, b in phases])
    bottom.set_xlabel("phase")
    bottom.legend(fontsize="small")
    bottom.grid(True, axis="y", alpha=0.3)
    return fig


def mathis_figure(both: pd.DataFrame) -> Any:
    """Ratio goodput / Mathis (b = 1) against the RTT, quicksim filled and ns-3 open markers,
    a line per loss rate; one panel per variant, with ns-3 ± 5 % shaded."""
    from matplotlib.figure import Figure

    variants = list(dict.fromkeys(both.variant))
    fig = Figure(figsize=(4.2 * len(variants), 4.2), layout="constrained")
    axes = fig.subplots(1, len(variants), sharey=True, squeeze=False)[0]
    titles = {
        "random": "random loss, ACK every segment",
        "periodic": "periodic loss, ACK every segment",
        "delack2": "random loss, delayed ACKs (2)",
    }
    for ax, v in zip(axes, variants, strict=True):
        part = both[both.variant == v]
        for (p, pts), color in zip(part.groupby("p", sort=False), _COLORS, strict=False):
            pts = pts.sort_values("rtt_ms")
            ax.fill_between(
                pts.rtt_ms, pts.ratio_b1_ns3 * 0.95, pts.ratio_b1_ns3 * 1.05, color=color, alpha=0.12
            )
            ax.plot(pts.rtt_ms, pts.ratio_b1_ns3, "o--", mfc="white", color=color, label=f"ns-3, p = {p:g}")
            ax.plot(pts.rtt_ms, pts.ratio_b1_quicksim, "s-", color=color, label=f"quicksim, p = {p:g}")
        ax.axhline(1.0, color="black", linewidth=0.7)
        ax.set_title(titles.get(v, v), fontsize="medium")
        ax.set_xlabel("RTT (ms)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("goodput / Mathis (b = 1)")
    axes[0].legend(fontsize="x-small")
    return fig
