"""The "Sizing Router Buffer" note (seed 002) for one QUIC NewReno flow: W_max, the sending pause
after a loss, a busy link with B >= BDP; and, beyond the note, link utilization and queueing
delay against the buffer size, with the sawtooth's closed forms overlaid."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from .. import validation
from ..metrics_quantiles import held_steps
from .common import Context, Report, save_csv, save_figure

if TYPE_CHECKING:
    from ..results import Result

NAME = "buffer-sizing"
TITLE = "router buffer sizing for one flow: pause, W_max, utilization and delay vs buffer"

RATE_BPS = 100e6
FRAME_B = 1287  # 1280 B IP packet + 7 B PPP
ACK_FRAME_B = 58  # the receiver's ACK frames right before the pause (the note)
TP_S = 1e-3
TT_S = FRAME_B * 8 / RATE_BPS  # 102.96 us
C_PPS = RATE_BPS / (FRAME_B * 8)
#: (2 Tp + Tt + Tt') x C in packets, the note's B >= ... bound: 20.47
BDP = (2 * TP_S + TT_S + ACK_FRAME_B * 8 / RATE_BPS) * C_PPS
FRACTIONS = tuple(round(0.1 + i * (2.0 - 0.1) / 11, 4) for i in range(12))
QUICK_FRACTIONS = (0.1, 0.5, 1.0, 1.5, 2.0)
BOTTLENECK = "bottleneck:router1->router2"
WINDOW_S = (5.0, 20.0)
UTIL_TOLERANCE = 0.02
DELAY_TOLERANCE = 0.10


# --- theory ------------------------------------------------------------------------------------


def sawtooth(buffer_pkts: float, bdp: float = BDP, extra: float = 1.0) -> tuple[float, float]:
    """(utilization, mean queue in packets) of one AIMD flow whose window peaks at
    W_max = BDP + B + extra and halves; time averages over one cycle (derivation in the report)."""
    p = bdp
    w_max = p + buffer_pkts + extra
    w_min = w_max / 2
    a = max(w_min, p)
    # Times in units of 1/C: phase 1 (W < P, link partly idle) lasts P (P - W_min) / C, phase 2
    # (W >= P, link busy) lasts (W_max^2 - a^2) / (2C).
    idle_phase = p * max(p - w_min, 0.0)
    busy_phase = (w_max**2 - a**2) / 2
    delivered = (w_max**2 - w_min**2) / 2  # = integral of the sending rate, in packets
    queue = (w_max**3 / 3 - p * w_max**2 / 2) - (a**3 / 3 - p * a**2 / 2)
    total = idle_phase + busy_phase
    return delivered / total, queue / total


def buffer_metrics(result: Result) -> dict[str, float]:
    """Sweep metric: bottleneck utilization and time-weighted mean queue (packets) over WINDOW_S."""
    t0, t1 = WINDOW_S
    links = result.links
    bn = links[(links["link"].astype(str) == BOTTLENECK) & (links["t_s"] >= t0) & (links["t_s"] < t1)]
    util = float(bn["bytes"].sum()) * 8 / (t1 - t0) / RATE_BPS
    q = result.queues
    q = q[q["queue"].astype(str) == BOTTLENECK].sort_values("t_s", kind="stable")
    v, dt = held_steps(q["t_s"], q["packets"], t0, t1)
    mean_q = float((v * dt).sum() / (t1 - t0))
    return {"utilization": util, "mean_queue_packets": mean_q, "mean_queue_delay_ms": mean_q / C_PPS * 1e3}


# --- the reproduction --------------------------------------------------------------------------


def run(ctx: Context) -> Report:
    """The note's checks, the pause zoom, and the buffer sweep."""
    import pandas as pd

    from .. import api
    from ..validation import Check

    t = time.perf_counter()
    checks = validation.buffer_sizing()
    result = api.run(validation.scenario_path("buffer-sizing"))
    zoom_fig, pause = _zoom(result)
    save_figure(zoom_fig, ctx.out / "pause_after_loss.png")
    save_csv(pause, ctx.out / "pause_after_loss.csv")

    fractions = QUICK_FRACTIONS if ctx.quick else FRACTIONS
    buffers = sorted({max(1, round(f * BDP)) for f in fractions})
    sw = ctx.sweep(
        validation.scenario_path("buffer-sizing"),
        params={"dumbbell.bottleneck.queue.packets": buffers},
        metrics=[buffer_metrics],
        sets=[f"run.duration={WINDOW_S[1]:g}s", "run.record.packets=[]", "run.record.conn=false"],
    )
    runs = sw.runs.sort_values("dumbbell.bottleneck.queue.packets")
    rows = []
    for _, r in runs.iterrows():
        b = int(r["dumbbell.bottleneck.queue.packets"])
        u_th, q_th = sawtooth(b)
        u_ap, q_ap = sawtooth(b, extra=0.0)
        rows.append(
            {
                "buffer_packets": b,
                "buffer_over_bdp": b / BDP,
                "utilization": r["buffer_metrics.utilization"],
                "utilization_theory": u_th,
                "utilization_theory_wmax_p_plus_b": u_ap,
                "mean_queue_packets": r["buffer_metrics.mean_queue_packets"],
                "mean_queue_delay_ms": r["buffer_metrics.mean_queue_delay_ms"],
                "mean_queue_delay_theory_ms": q_th / C_PPS * 1e3,
                "mean_queue_delay_theory_wmax_p_plus_b_ms": q_ap / C_PPS * 1e3,
                "error": r["error"],
            }
        )
    data = pd.DataFrame(rows)
    save_csv(data, ctx.out / "utilization_delay_vs_buffer.csv")
    save_figure(_sweep_figure(data), ctx.out / "utilization_delay_vs_buffer.png")
    for r in data.itertuples():
        if isinstance(r.error, str):
            checks.append(Check(f"buffer B={r.buffer_packets}", math.nan, math.nan, 0, "", note=r.error))
            continue
        checks.append(
            Check(
                f"utilization B={r.buffer_packets} pkts ({r.buffer_over_bdp:.2f} BDP)",
                r.utilization,
                r.utilization_theory,
                UTIL_TOLERANCE,
                "",
                note="bottleneck frame bytes 5-20 s / capacity vs sawtooth, W_max = BDP + B + 1",
            )
        )
        if r.buffer_over_bdp >= 0.5:
            checks.append(
                Check(
                    f"queueing delay B={r.buffer_packets} pkts ({r.buffer_over_bdp:.2f} BDP)",
                    r.mean_queue_delay_ms,
                    r.mean_queue_delay_theory_ms,
                    DELAY_TOLERANCE,
                    "ms",
                    note="time-weighted mean queue x Tt, 5-20 s, vs sawtooth",
                )
            )
    return Report(
        NAME,
        TITLE,
        'the note "Sizing Router Buffer" (OLD `use_link_bandwidth/sizingRouterBuffer.ini`), after '
        "Appenzeller et al., *Sizing Router Buffers*, SIGCOMM 2004, section 2",
        checks,
        figures=[
            (
                "pause_after_loss.png",
                f"One loss after 8 s: the sender pauses {pause.attrs['pause_ms']:.5f} ms "
                "while the queue drains; cwnd and bytes in flight, queue length, and every packet sent",
            ),
            (
                "utilization_delay_vs_buffer.png",
                "Bottleneck utilization and mean queueing delay against "
                "the buffer size (dots measured, lines the sawtooth model)",
            ),
        ],
        csvs=[
            ("pause_after_loss.csv", "send times of the packets around the pause (s)"),
            (
                "utilization_delay_vs_buffer.csv",
                "per buffer size: utilization and mean queueing delay, measured and both theory variants",
            ),
        ],
        explanation=EXPLANATION.format(bdp=BDP, tt_us=TT_S * 1e6, pause_ms=22 / C_PPS * 1e3),
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = r"""
Scenario `buffer-sizing.toml`: one saturated QUIC NewReno sender over a 100 Mbit/s, 1 ms
bottleneck, MTU 1280 (1287 B frames, Tt = {tt_us:.2f} us), the receiver acks every packet,
a 22-packet DropTail buffer. `quicksim.validation.buffer_sizing` checks the note's numbers:
W_max = 44 packets, a sending pause of (W_max / 2) / C = {pause_ms:.5f} ms after each loss, a
bottleneck that never idles (100 Mbit/s at the link layer from 5 s to 10 s), and that a buffer
of 11 packets (W_max / 4) does let it idle. The first figure zooms on the first pause after 8 s.

**Beyond the note: utilization and delay against the buffer.** The sweep varies the buffer B
from 0.1 to 2 BDP, BDP = (2 Tp + Tt + Tt') x C = {bdp:.2f} packets (the note's bound; Tt' is
the 58 B ACK frame), and measures from 5 s to 20 s (after slow start; about 100 loss cycles
with the smallest buffer, 60 with the largest) the bottleneck's utilization (frame bytes / capacity)
and its time-weighted mean queue length, converted to a delay by Tt per packet.

*Theory (derivation).* Count windows in packets, write P = BDP and C for the rate in packets/s.
With W packets in flight and W < P the pipe is not full: the queue is empty, the RTT is the base
RTT P / C and the sender delivers W per RTT, i.e. at rate W C / P; in congestion avoidance W
grows by one packet per RTT, so dW/dt = C / P. With W >= P the link is busy (rate C), the queue
holds W - P packets, the RTT is W / C and dW/dt = C / W. The window grows to W_max, the queue
overflows, and NewReno halves: W_min = W_max / 2. Over one cycle, with a = max(W_min, P):

- phase 1 (W from W_min to P, only if W_min < P): duration (P - W_min) P / C, delivering
  the integral of W C / P dt = integral of W dW = (P^2 - W_min^2) / 2 packets, queue 0;
- phase 2 (W from a to W_max): duration integral of W dW / C = (W_max^2 - a^2) / (2 C),
  delivering C times that, with queue integral integral of (W - P) W dW / C
  = [W^3 / 3 - P W^2 / 2]_a^W_max / C.

Delivered per cycle = (W_max^2 - W_min^2) / 2 in both cases, so

  U = (W_max^2 - W_min^2) / 2 / (P max(P - W_min, 0) + (W_max^2 - a^2) / 2),
  mean queue = [W^3 / 3 - P W^2 / 2]_a^W_max / (P max(P - W_min, 0) + (W_max^2 - a^2) / 2).

With W_max = P + B (Appenzeller's geometry), U = 1 exactly when B >= P, and for B < P it
simplifies to U = 3 (P + B)^2 / (4 (P^2 + P B + B^2)) = 1 - (P - B)^2 / (4 (P^2 + P B + B^2)):
75 % with no buffer, as the classic result. The window that is halved, though, is the one at
loss *detection*, about one RTT after the overflow, and congestion avoidance has added one more
packet by then (the note measures a peak cwnd of 55 138 B = 44.04 packets for P + B = 42.47), so
the checks use W_max = P + B + 1; the dashed grey curves show W_max = P + B. Tolerances:
utilization within 2 % (the model is fluid: it ignores that the window grows in whole packets and
that acks release packets in pairs); queueing delay within 10 %, checked only for B >= BDP / 2,
because with smaller buffers the mean queue is under two packets and is dominated by the
packet-level burstiness of the ack clock that the fluid model leaves out (it is plotted anyway).
"""


def _zoom(result: Result) -> tuple[Any, Any]:
    import numpy as np
    import pandas as pd
    from matplotlib.figure import Figure

    pk = result.packets
    sends = pk[(pk["event"].astype(str) == "send")]
    ts = np.sort(sends["t_ps"].to_numpy())
    after = ts[ts >= 8 * 10**12]
    gaps = np.diff(after)
    i = int(np.flatnonzero(gaps > 10**9)[0])
    p0, p1 = after[i] / 1e12, after[i + 1] / 1e12
    pause_ms = (after[i + 1] - after[i]) / 1e9
    lo, hi = p0 - 0.004, p1 + 0.004
    fig = Figure(figsize=(8.5, 7.5), layout="constrained")
    ax_w, ax_q, ax_s = fig.subplots(3, 1, sharex=True, height_ratios=[2, 2, 1])
    conn = result.conn
    c = conn[(conn["t_s"] >= lo - 0.01) & (conn["t_s"] <= hi)]

    def ms(x: Any) -> Any:  # the time axis: ms from the last packet before the pause
        return (np.asarray(x, dtype=float) - p0) * 1e3

    ax_w.step(
        ms(c["t_s"]),
        c["inflight_bytes"] / 1252,
        where="post",
        color="tab:orange",
        linewidth=3,
        alpha=0.6,
        label="bytes in flight",
    )
    ax_w.step(
        ms(c["t_s"]), c["cwnd_bytes"] / 1252, where="post", color="tab:blue", linestyle="--", label="cwnd"
    )
    ax_w.set_ylabel("packets (of 1252 B)")
    ax_w.set_title(
        f"Sending pause after a loss: {pause_ms:.5f} ms (theory (W_max/2)/C = {22 / C_PPS * 1e3:.5f} ms)"
    )
    q = result.queues
    q = q[(q["queue"].astype(str) == BOTTLENECK) & (q["t_s"] >= lo - 0.01) & (q["t_s"] <= hi)]
    ax_q.step(ms(q["t_s"]), q["packets"], where="post", color="tab:purple", label="bottleneck queue")
    ax_q.set_ylabel("queue (packets)")
    ax_q.set_ylim(0, 24)
    drops = result.drops
    d = drops[(drops["t_s"] >= lo) & (drops["t_s"] <= hi)]
    for ax in (ax_w, ax_q):
        for j, x in enumerate(ms(d["t_s"])):
            ax.axvline(x, color="tab:red", linestyle=":", label="drop" if j == 0 else None)
    window = after[(after >= lo * 1e12) & (after <= hi * 1e12)] / 1e12
    ax_s.vlines(ms(window), 0, 1, linewidth=0.6, color="tab:blue")
    ax_s.annotate("", xy=(ms(p1), 0.5), xytext=(0, 0.5), arrowprops={"arrowstyle": "<->", "color": "black"})
    ax_s.text(
        ms(p1) / 2,
        0.62,
        f"no packet sent for {pause_ms:.5f} ms",
        ha="center",
        fontsize=9,
        bbox={"facecolor": "white", "edgecolor": "none"},
    )
    ax_s.set_yticks([])
    ax_s.set_ylabel("packets sent")
    ax_s.set_xlabel(f"time (ms) relative to the last packet before the pause, t = {p0:.7f} s")
    ax_s.set_xlim(ms(lo), ms(hi))
    for ax in (ax_w, ax_q, ax_s):
        ax.grid(True, alpha=0.3)
    for ax in (ax_w, ax_q):
        ax.legend(loc="upper right", fontsize="small")
    frame = pd.DataFrame({"send_t_s": window})
    frame.attrs["pause_ms"] = pause_ms
    return fig, frame


def _sweep_figure(data: Any) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 7), layout="constrained")
    ax_u, ax_d = fig.subplots(2, 1, sharex=True)
    b = np.linspace(0.5, 2.05 * BDP, 300)
    theory = np.array([sawtooth(x) for x in b])
    appenzeller = np.array([sawtooth(x, extra=0.0) for x in b])
    x = b / BDP
    ax_u.plot(x, theory[:, 0] * 100, color="black", label="sawtooth, W_max = BDP + B + 1")
    ax_u.plot(x, appenzeller[:, 0] * 100, color="0.6", linestyle="--", label="sawtooth, W_max = BDP + B")
    ax_u.plot(data["buffer_over_bdp"], data["utilization"] * 100, "o", color="tab:blue", label="measured")
    ax_u.set_ylabel("bottleneck utilization (%)")
    ax_u.set_title(f"One NewReno flow, 100 Mbit/s, BDP = {BDP:.2f} packets")
    ax_d.plot(x, theory[:, 1] / C_PPS * 1e3, color="black", label="sawtooth, W_max = BDP + B + 1")
    ax_d.plot(
        x, appenzeller[:, 1] / C_PPS * 1e3, color="0.6", linestyle="--", label="sawtooth, W_max = BDP + B"
    )
    ax_d.plot(data["buffer_over_bdp"], data["mean_queue_delay_ms"], "o", color="tab:orange", label="measured")
    ax_d.set_ylabel("mean queueing delay (ms)")
    ax_d.set_xlabel("buffer size / BDP")
    for ax in (ax_u, ax_d):
        ax.axvline(1.0, color="tab:green", linewidth=0.8, linestyle=":")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="lower right" if ax is ax_u else "upper left")
    ax_u.text(1.02, 80, "B = BDP", color="tab:green", fontsize=9)
    return fig
