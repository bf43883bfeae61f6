"""The figures of `cubic-dumbbell`, drawn like seed 001's: JFI and utilization against capacity,
utilization against random loss, JFI against client 2's extra delay, utilization and JFI against
the ON/OFF background's mean OFF time; plus the base-RTT sensitivity. Means with 95 % intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import study as cd

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

STYLE = {
    "quic": ("tab:blue", "o", "QUIC CUBIC, IW 1 (seed's sender)"),
    "tcp": ("tab:orange", "s", "TCP CUBIC, IW 1, SACK"),
    "quic-iw10": ("tab:green", "^", "QUIC CUBIC, IW 10 (RFC 9002)"),
    "quic-rtt2": ("tab:purple", "v", "QUIC, base RTT 2 ms"),
    "quic-rtt50": ("tab:brown", "D", "QUIC, base RTT 50 ms"),
    "quic-longfile": ("tab:red", "*", f"QUIC, IW 1, {cd.LONG_FILE_FACTOR}x file (323 MB)"),
}


def _errorbar(ax: Axes, part: pd.DataFrame, x: str, y: str, case: str, scale: float = 1.0, **kw: Any) -> None:
    color, marker, label = STYLE[case]
    color = kw.pop("color", color)
    part = part.sort_values(x)
    mean = part[y] * scale
    lo = (part[y] - part[f"{y}_lo"]).fillna(0.0) * scale
    hi = (part[f"{y}_hi"] - part[y]).fillna(0.0) * scale
    ax.errorbar(
        part[x],
        mean,
        yerr=[lo, hi],
        color=color,
        marker=marker,
        capsize=3,
        label=kw.pop("label", label),
        **kw,
    )


def _finish(ax: Axes, xlabel: str, ylabel: str, title: str, legend: Any = "lower left") -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc=legend)


def fig_capacity(cap: pd.DataFrame) -> Figure:
    """Seed Fig. 1: JFI and link utilization vs bottleneck capacity."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    base = cap[cap.rtt_ms == cd.BASE_RTT_MS]
    for case in ("quic", "tcp", "quic-iw10"):
        part = base[base.case == case]
        _errorbar(left, part, "rate_mbps", "jfi", case)
        _errorbar(right, part, "rate_mbps", "util", case, scale=100)
    for case, ls in (("quic", "--"), ("quic-iw10", ":")):
        part = base[base.case == case].sort_values("rate_mbps")
        right.plot(
            part.rate_mbps,
            part.util_bound * 100,
            color=STYLE[case][0],
            linestyle=ls,
            label=f"slow-start bound, IW {cd.IW_RFC if case == 'quic-iw10' else 1}",
        )
    long = base[base.case == "quic-longfile"]
    if len(long):
        _errorbar(
            right, long, "rate_mbps", "util", "quic-longfile", scale=100, linestyle="none", markersize=12
        )
    left.set_ylim(min(0.9, float(base.jfi_lo.min()) - 0.01), 1.005)
    right.set_ylim(0, 100)
    title = f"2 x 32.3 MB, base RTT {cd.BASE_RTT_MS:g} ms, buffer 1 BDP"
    _finish(left, "bottleneck capacity (Mbit/s)", "Jain's fairness index (JFI)", title)
    _finish(right, "bottleneck capacity (Mbit/s)", "link utilization (%)", title)
    return fig


def fig_sensitivity(cap: pd.DataFrame) -> Figure:
    """Utilization vs capacity for three base RTTs (with each one's slow-start bound) and for
    three buffer sizes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    base = cap[(cap.case == "quic") & (cap.rtt_ms == cd.BASE_RTT_MS)]
    for case in ("quic-rtt2", "quic", "quic-rtt50"):
        part = base if case == "quic" else cap[cap.case == case]
        rtt = float(part.rtt_ms.iloc[0])
        _errorbar(left, part, "rate_mbps", "util", case, scale=100, label=f"base RTT {rtt:g} ms")
        part = part.sort_values("rate_mbps")
        left.plot(part.rate_mbps, part.util_bound * 100, color=STYLE[case][0], linestyle="--", linewidth=0.9)
    left.plot([], [], color="gray", linestyle="--", label="slow-start bound (each RTT)")
    buffers = [c for c in dict.fromkeys(cap.case) if str(c).startswith("quic-buf")]
    for case, color in zip(["quic", *buffers], ["tab:blue", "tab:cyan", "tab:olive"], strict=False):
        part = base if case == "quic" else cap[cap.case == case]
        bdp = float(part.buffer_bdp.iloc[0])
        _errorbar(
            right, part, "rate_mbps", "util", "quic", scale=100, label=f"buffer {bdp:g} BDP", color=color
        )
    for ax in (left, right):
        ax.set_ylim(0, 100)
    _finish(
        left, "bottleneck capacity (Mbit/s)", "link utilization (%)", "QUIC IW 1: base RTT (buffer 1 BDP)"
    )
    _finish(
        right, "bottleneck capacity (Mbit/s)", "link utilization (%)", "QUIC IW 1: buffer (base RTT 20 ms)"
    )
    return fig


def fig_loss(loss: pd.DataFrame) -> Figure:
    """Seed Fig. 2: link utilization vs random loss rate."""
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.6), layout="constrained")
    ax = fig.subplots()
    for case in ("quic", "tcp"):
        part = loss[loss.case == case].copy()
        part["loss_pct"] = part["loss"] * 100
        _errorbar(ax, part, "loss_pct", "util", case, scale=100)
    ps = np.linspace(0.0005, float(loss.loss.max()), 200)
    theory = [cd.loss_utilization(p, cd.BASE_RATE_MBPS, cd.BASE_RTT_MS, "quic") * 100 for p in ps]
    ax.plot(ps * 100, theory, color="black", linestyle="--", label="RFC 9438 mean window (Mathis region)")
    ax.set_ylim(0, 100)
    _finish(
        ax,
        "random loss rate on the bottleneck (%)",
        "link utilization (%)",
        f"{cd.BASE_RATE_MBPS:g} Mbit/s, base RTT {cd.BASE_RTT_MS:g} ms, 2 x 32.3 MB",
        legend="upper right",
    )
    return fig


def fig_rtt(rtt: pd.DataFrame) -> Figure:
    """Seed Fig. 3: JFI vs client 2's extra delay; beside it each flow's throughput."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    for case in ("quic", "tcp"):
        part = rtt[rtt.case == case]
        _errorbar(left, part, "extra_delay_ms", "jfi", case)
        color = STYLE[case][0]
        _errorbar(right, part, "extra_delay_ms", "thr1_mbps", case, label=f"{case.upper()} flow 1 (client 1)")
        _errorbar(
            right,
            part,
            "extra_delay_ms",
            "thr2_mbps",
            case,
            label=f"{case.upper()} flow 2 (client 2, longer RTT)",
            linestyle="--",
            markerfacecolor="white",
            ecolor=color,
        )
    title = f"{cd.BASE_RATE_MBPS:g} Mbit/s, client 1's RTT {cd.BASE_RTT_MS:g} ms; RTT difference = 2 x delay"
    _finish(left, "client 2's extra one-way delay (ms)", "Jain's fairness index (JFI)", title)
    _finish(right, "client 2's extra one-way delay (ms)", "throughput = file / transfer time (Mbit/s)", title)
    left.set_ylim(0.5, 1.01)
    return fig


def fig_background(bg: pd.DataFrame, cap: pd.DataFrame) -> Figure:
    """Seed Fig. 4: utilization and fairness under the ON/OFF UDP background."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    for case in ("quic", "tcp"):
        color = STYLE[case][0]
        part = bg[bg.case == case].sort_values("off_mean_s")
        _errorbar(left, part, "off_mean_s", "util", case, scale=100, label=f"{case.upper()}: the two files")
        left.plot(
            part.off_mean_s,
            (part.util + part.udp_util) * 100,
            color=color,
            linestyle=":",
            marker="x",
            label=f"{case.upper()}: files + UDP",
        )
        _errorbar(right, part, "off_mean_s", "jfi", case)
        ref = cap[(cap.case == case) & (cap.rate_mbps == cd.BASE_RATE_MBPS) & (cap.rtt_ms == cd.BASE_RTT_MS)]
        if len(ref):
            left.axhline(float(ref.util.iloc[0]) * 100, color=color, linewidth=0.8, linestyle="--")
            right.axhline(float(ref.jfi.iloc[0]), color=color, linewidth=0.8, linestyle="--")
    left.plot([], [], color="gray", linestyle="--", label="no background (exp. 1, 100 Mbit/s)")
    right.plot([], [], color="gray", linestyle="--", label="no background (exp. 1, 100 Mbit/s)")
    title = (
        f"UDP ON/OFF: ON exp. mean {cd.ON_MEAN_S:g} s at {cd.ON_RATE_MBPS:g} Mbit/s; "
        f"{cd.BASE_RATE_MBPS:g} Mbit/s link"
    )
    left.set_ylim(0, 100)
    right.set_ylim(0.9, 1.005)
    _finish(left, "mean OFF time of the UDP background (s)", "link utilization (%)", title)
    _finish(right, "mean OFF time of the UDP background (s)", "Jain's fairness index (JFI)", title)
    left.set_xticks(list(part.off_mean_s))
    right.set_xticks(list(part.off_mean_s))
    return fig


def fig_timeseries(ts: pd.DataFrame) -> Figure:
    """The mechanism at 1 Gbit/s: slow start, its overshoot and the loss burst, IW 1 vs IW 10."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True)
    colors = {"flow1": "tab:blue", "flow2": "tab:orange"}
    for (iw, series, flow), part in ts.groupby(["iw", "series", "flow"], sort=True):
        ax = top if series == "received_mbps" else bottom
        ax.plot(
            part.t_s + (0.02 if series == "received_mbps" else 0.0),
            part.value,
            color=colors.get(str(flow), "gray"),
            linestyle="-" if iw == 1 else "--",
            drawstyle="steps-post" if series == "cwnd_packets" else "default",
            label=f"{flow}, IW {iw}",
        )
    pipe = (2 * cd.bdp_bytes(cd.MECH_RATE_MBPS, cd.BASE_RTT_MS)) / cd.FRAME["quic"]
    bottom.axhline(pipe / 2, color="black", linewidth=0.8, linestyle=":", label="(BDP + buffer) / 2 flows")
    top.axhline(cd.MECH_RATE_MBPS / 2, color="gray", linewidth=0.8, linestyle=":", label="half the link")
    title = (
        f"{cd.MECH_RATE_MBPS:g} Mbit/s, RTT {cd.BASE_RTT_MS:g} ms, buffer 1 BDP, 2 x 32.3 MB: one run each"
    )
    _finish(top, "", "received (Mbit/s, 40 ms bins)", title, legend="upper right")
    _finish(bottom, "time (s)", "congestion window (packets)", "", legend="upper right")
    return fig


def figures(data: dict[str, pd.DataFrame], quick: bool) -> dict[str, tuple[Figure, str]]:
    """file name -> (figure, caption), in the report's order."""
    del quick
    out = {
        "fig1_capacity.png": (
            fig_capacity(data["capacity"]),
            "Seed Fig. 1: JFI (left) and link utilization (right) vs bottleneck capacity; dashed: the "
            "slow-start bound of a finite file; star: the same at 1 Gbit/s with a 10x longer file",
        ),
        "fig1_sensitivity_rtt.png": (
            fig_sensitivity(data["capacity"]),
            "Sensitivity to the values the seed leaves open: utilization vs capacity for base RTTs of "
            "2, 20 and 50 ms with each one's bound (left), and for buffers of 0.25, 1 and 4 BDP (right)",
        ),
        "fig2_loss.png": (
            fig_loss(data["loss"]),
            "Seed Fig. 2: link utilization vs random loss rate; dashed: RFC 9438's mean window",
        ),
        "fig3_rtt.png": (
            fig_rtt(data["rtt"]),
            "Seed Fig. 3: JFI vs client 2's extra delay (left) and each flow's throughput (right)",
        ),
        "fig5_timeseries_1g.png": (
            fig_timeseries(data["timeseries_1g"]),
            "At 1 Gbit/s: each flow's received rate and window, IW 1 (solid) and IW 10 (dashed): "
            "slow start, the overshoot to twice the pipe, the loss burst, then CUBIC",
        ),
        "fig4_background.png": (
            fig_background(data["background"], data["capacity"]),
            "Seed Fig. 4: utilization (left) and JFI (right) vs the UDP background's mean OFF time",
        ),
    }
    return {name: out[name] for name in sorted(out)}
