"""The figures of `buffer-sizing-sqrt-n`: minimum buffer against n, synchronization, short-flow
queue distribution."""

from __future__ import annotations

from typing import Any

from . import model as m


def long_figure(found: Any) -> Any:
    """Minimum buffer (packets) against n per rate, cc and target, with RTT C / sqrt(n)."""
    import numpy as np
    from matplotlib.figure import Figure

    rates = sorted(found["rate_bps"].unique())
    fig = Figure(figsize=(7.5 * len(rates), 5.5), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(rates)))
    markers = {0.98: "o", 0.995: "s", 0.999: "^"}
    for ax, rate in zip(axes, rates, strict=True):
        d = found[found["rate_bps"] == rate]
        ns = np.geomspace(d["n"].min() * 0.8, d["n"].max() * 1.25, 100)
        ax.plot(ns, [m.sqrt_rule(rate, n) for n in ns], color="black", label="RTT x C / sqrt(n)")
        for (cc, target), g in d.groupby(["cc", "target"]):
            ax.plot(
                g["n"],
                g["min_buffer"],
                marker=markers.get(float(target), "x"),
                linestyle="--" if "cubic" in cc else "-",
                label=f"{cc}, {float(target):.1%} utilization",
            )
        ax.axhline(m.bdp_packets(rate, m.mean_rtt()), color="tab:red", linestyle=":", label="RTT x C")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("long-lived flows n")
        ax.set_ylabel("minimum buffer (packets)")
        ax.set_title(f"{rate / 1e6:g} Mbit/s, RTT {m.RTT_MIN_S * 1e3:g}-{m.RTT_MAX_S * 1e3:g} ms")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    return fig


def sync_figure(sync: Any, probes: Any) -> Any:
    """Synchronization index of every ladder probe against buffer / rule, one panel per line
    rate (colour: n; marker and line: the controller), and the two cases."""
    import math

    from matplotlib import colormaps
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rates = sorted(probes["rate_bps"].unique())
    fig = Figure(figsize=(6 * (len(rates) + 1), 5), layout="constrained")
    axes = fig.subplots(1, len(rates) + 1, squeeze=False)[0]
    ns = sorted(int(n) for n in probes["n"].unique())
    ccs = sorted(probes["cc"].unique())
    viridis = colormaps["viridis"]
    lo, hi = math.log(ns[0]), math.log(ns[-1])

    def colour(n: int) -> Any:
        return viridis(0.0 if hi == lo else 0.9 * (math.log(n) - lo) / (hi - lo))

    styles = dict(zip(ccs, [("o", "-"), ("s", "--"), ("^", ":"), ("D", "-.")] * 2, strict=False))
    for ax, rate in zip(axes, rates, strict=False):
        for (n, cc), g in probes[probes["rate_bps"] == rate].groupby(["n", "cc"]):
            rule = m.sqrt_rule(rate, int(n))
            g = g.drop_duplicates("buffer_pkts").sort_values("buffer_pkts")
            marker, line = styles[cc]
            ax.plot(g["buffer_pkts"] / rule, g["sync"], marker=marker, linestyle=line, color=colour(int(n)))
        ax.axhline(0.0, color="black", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("buffer / (RTT x C / sqrt(n))")
        ax.set_ylabel("sync index (pairwise correlation of per-RTT losses)")
        ax.set_title(f"{rate / 1e6:g} Mbit/s, spread RTTs: every ladder probe")
        ax.grid(True, which="both", alpha=0.3)
        handles = [Line2D([], [], color=colour(n), linewidth=3, label=f"n = {n}") for n in ns]
        for cc in ccs:
            marker, line = styles[cc]
            handles.append(Line2D([], [], color="grey", marker=marker, linestyle=line, label=cc))
        ax.legend(handles=handles, fontsize="small", ncols=2, loc="upper left")
    bx = axes[-1]
    labels = [
        f"{r.case}\nn = {r.n}, {r.rate_bps / 1e6:g} Mbit/s, B = {r.buffer_packets} pkts"
        f"\nutilization {r.utilization:.1%}"
        for r in sync.itertuples()
    ]
    bx.bar(labels, sync["sync"], color=["tab:red", "tab:blue"][: len(sync)])
    for i, v in enumerate(sync["sync"]):
        bx.text(i, v, f"{v:.3f}", ha="center", va="bottom")
    bx.set_ylim(0, 1.05)
    bx.set_ylabel("sync index (0 = independent losses)")
    bx.set_title("Equal RTTs, few flows vs spread RTTs, many flows")
    return fig


def short_figure(curves: Any, short: Any) -> Any:
    """P(Q >= b) measured at each rate and load, against the M/G/1 bound (closed form, exact root)."""
    from matplotlib.figure import Figure

    loads = sorted(curves["load"].unique())
    cols = min(3, len(loads))
    rows = -(-len(loads) // cols)
    fig = Figure(figsize=(6.5 * cols, 5 * rows), layout="constrained")
    grid = fig.subplots(rows, cols, squeeze=False)
    axes = [a for row in grid for a in row][: len(loads)]
    for spare in [a for row in grid for a in row][len(loads) :]:
        spare.set_visible(False)
    for ax, load in zip(axes, loads, strict=True):
        for rate, c in curves[curves["load"] == load].groupby("rate_bps"):
            line = ax.plot(c["b"], c["ccdf"], label=f"measured, {rate / 1e6:g} Mbit/s")[0]
            ax.plot(
                c["b"],
                c["bound"],
                linestyle="--",
                color=line.get_color(),
                label=f"bound (closed form), {rate / 1e6:g} Mbit/s",
            )
            if "bound_exact" in c:
                ax.plot(
                    c["b"],
                    c["bound_exact"],
                    linestyle=":",
                    color=line.get_color(),
                    label=f"bound (exact root), {rate / 1e6:g} Mbit/s",
                )
        ax.set_yscale("log")
        ax.set_ylim(1e-4, 1.1)
        ax.set_xlabel("queue length b (packets)")
        ax.set_ylabel("P(Q >= b)")
        util = ", ".join(f"{u:.2f}" for u in short[short["load"] == load]["utilization"])
        ax.set_title(f"Short flows, nominal load {load:g} (measured utilization {util})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    return fig
