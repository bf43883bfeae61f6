"""The plots of `quicksim reproduce bbr`: goodput under random loss, `bbr`'s utilization by loss
rate on two paths, BBR's share against CUBIC by buffer size, and bbr1 beside ns-3's TcpBbr."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..common import save_figure

if TYPE_CHECKING:
    import pandas as pd


def plot_loss(loss: pd.DataFrame, mathis: float, capacity: float, path: Path) -> Path:
    """Bar chart: goodput per controller, with the link's goodput capacity and Mathis' rate."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(loss.cc, loss.goodput_mbps, color=["tab:blue", "tab:cyan", "tab:orange"][: len(loss)])
    ax.axhline(capacity, color="k", lw=1, label=f"link capacity (payload) {capacity:.2f} Mbit/s")
    ax.axhline(0.9 * capacity, color="k", lw=1, ls=":", label="90 % of capacity")
    ax.axhline(mathis, color="tab:red", lw=1, ls="--", label=f"Mathis, b = 1: {mathis:.2f} Mbit/s")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title("10 Mbit/s, 40 ms RTT, 1 % random loss")
    ax.legend(fontsize=8, loc="upper right")
    ax.set_ylim(0, capacity * 1.5)
    path = save_figure(fig, path)
    plt.close(fig)
    return path


def plot_share(share: pd.DataFrame, path: Path) -> Path:
    """BBR's share of the goodput against one CUBIC flow, by buffer size (log scale)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for cc, g in share.groupby("bbr", sort=False):
        ax.plot(g.buffer_bdp, g.bbr_share, marker="o", label=f"{cc} vs CUBIC")
    ax.axhline(0.5, color="k", lw=1, ls=":", label="equal share")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bottleneck buffer (BDP, 1 BDP = 34 packets)")
    ax.set_ylabel("BBR's share of the goodput")
    ax.set_ylim(0, 1)
    ax.set_title("One BBR flow vs one CUBIC flow, 10 Mbit/s, 40 ms")
    ax.legend(fontsize=8)
    path = save_figure(fig, path)
    plt.close(fig)
    return path


def plot_ns3(frame: pd.DataFrame, path: Path) -> Path:
    """Two panels: cwnd and goodput over time, ns-3 TcpBbr and quicksim bbr1."""
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    a.plot(frame.t_s, frame.ns3_cwnd_bytes / 1448, label="ns-3.44 TcpBbr", lw=1)
    a.plot(frame.t_s, frame.quicksim_cwnd_bytes / 1448, label="quicksim bbr1 (TCP)", lw=1, ls="--")
    a.set_ylabel("cwnd (segments of 1448 B)")
    a.legend(fontsize=8)
    b.plot(frame.t_s, frame.ns3_goodput_mbps, label="ns-3.44 TcpBbr", lw=1)
    b.plot(frame.t_s, frame.quicksim_goodput_mbps, label="quicksim bbr1 (TCP)", lw=1, ls="--")
    b.set_ylabel("goodput (Mbit/s, 0.1 s)")
    b.set_xlabel("time (s)")
    a.set_title("ns-3 tcp-bbr-example: 10 Mbit/s, 10 ms, 100-packet FIFO")
    path = save_figure(fig, path)
    plt.close(fig)
    return path


def plot_sweep(sweep: pd.DataFrame, path: Path) -> Path:
    """`bbr`'s utilization by loss rate on both paths (log x; the loss-free run as a dotted
    line), with the lower-bound model and the runs with one or both loss responses off."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (mbps, g), color in zip(sweep.groupby("link_mbps"), ("tab:blue", "tab:red"), strict=False):
        free = g[g.loss == 0].utilization
        lossy = g[g.loss > 0]
        ax.plot(lossy.loss, lossy.utilization, marker="o", color=color, label=f"{mbps} Mbit/s: bbr (draft)")
        ax.plot(
            lossy.loss, lossy.model, ls="--", color=color, lw=1, label=f"{mbps} Mbit/s: lower-bound model"
        )
        ax.plot(
            lossy.loss,
            lossy.no_lower_bounds,
            ls="",
            marker="x",
            color=color,
            label=f"{mbps} Mbit/s: beta 0.999",
        )
        ax.plot(
            lossy.loss,
            lossy.neither,
            ls="",
            marker="^",
            mfc="none",
            color=color,
            label=f"{mbps} Mbit/s: beta 0.999, no 2 % threshold",
        )
        if len(free):
            ax.axhline(float(free.iloc[0]), color=color, lw=0.8, ls=":")
    ax.axhline(0.9, color="k", lw=1, label="90 %")
    ax.set_xscale("log")
    ax.set_xlabel("random loss rate (dotted: each path without loss)")
    ax.set_ylabel("utilization (goodput / payload capacity)")
    ax.set_ylim(0, 1.02)
    ax.set_title("bbr (draft-ietf-ccwg-bbr) under random loss, 40 ms RTT")
    ax.legend(fontsize=7, loc="lower left")
    path = save_figure(fig, path)
    plt.close(fig)
    return path
