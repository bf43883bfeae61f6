"""The long/short mix of `buffer-sizing-sqrt-n`: n long-lived TCP flows and Poisson-arriving
Pareto-sized short flows on one DropTail bottleneck; the short flows' completion times against
the buffer, beside a slow-start-rounds model fed with the measured queue."""

from __future__ import annotations

import math
from typing import Any

from . import model as m

#: The short flows' TCP: slow start from 2 segments, an ACK per segment (the bursts of
#: `model.slow_start_bursts`), NewReno; the long flows share the settings.
MIX_IW = 2
#: Short-flow sizes: Pareto, mean in packets of MSS_B payload, shape (as the short-flow part).
MIX_MEAN_PKTS = 12.0
MIX_SHAPE = 1.2
#: Time after the last short flow's start for the stragglers to finish (s).
MIX_TAIL_S = 5.0


def mix_doc(
    n: int, rate_bps: float, buffer_pkts: int, short_count: int, short_load: float, warm_s: float, seed: int
) -> tuple[dict[str, Any], float]:
    """(scenario, span in s): `model.long_flows_doc`'s n long flows (RTTs 80-120 ms in 10
    classes) and `short_count` short flows, count / 10 per RTT class on that class's hosts,
    starting uniformly (Poisson, given their number) over [warm_s, warm_s + span], the span
    chosen so that the size distribution's mean offers `short_load` x rate. The queue is
    recorded (the mean queueing delay of the model)."""
    classes = m.RTT_CLASSES
    if short_count % classes:
        raise ValueError(f"short_count: {short_count} is not a multiple of the {classes} RTT classes")
    span_s = short_count * MIX_MEAN_PKTS * m.PACKET_B * 8 / (rate_bps * short_load)
    doc = m.long_flows_doc(
        n, rate_bps, buffer_pkts, warm_s + span_s + MIX_TAIL_S, seed=seed, record_queue=True
    )
    doc["name"] = f"sqrtn-mix-n{n}-b{buffer_pkts}"
    doc["tcp"] = {"cc": "newreno", "initial_window": MIX_IW, "ack_every": 1}
    doc["flows"] += [
        {
            "name": f"short{c}",
            "count": short_count // classes,
            "kind": "tcp",
            "src": f"sender{c + 1}",
            "dst": f"receiver{c + 1}",
            "app": "bulk",
            "bytes": {"dist": "pareto", "mean": f"{round(MIX_MEAN_PKTS * m.MSS_B)}B", "shape": MIX_SHAPE},
            "start": {"dist": "uniform", "min": f"{warm_s:.6f}s", "max": f"{warm_s + span_s:.6f}s"},
        }
        for c in range(classes)
    ]
    return doc, span_s


def predicted_fct(packets: int, rtt_s: float, queue_delay_s: float, rate_bps: float) -> float:
    """A loss-free short flow's completion time: the SYN and each of its k slow-start rounds
    cross the forward path (RTT / 2 + the queueing delay q), the SYN-ACK and k - 1 rounds of
    ACKs come back (RTT / 2, no queue on the reverse path), and the last round's packets follow
    their first at the line rate: (k + 1/2) RTT + (k + 1) q + (last burst - 1) packet times."""
    bursts = m.slow_start_bursts(packets, MIX_IW, 10**9)
    k = len(bursts)
    return (k + 0.5) * rtt_s + (k + 1) * queue_delay_s + (bursts[-1] - 1) * m.PACKET_B * 8 / rate_bps


def mix_run(
    n: int, rate_bps: float, buffer_pkts: int, g: dict[str, Any], seed: int = 1
) -> tuple[dict[str, Any], Any]:
    """One mix run: its row (utilization, mean queue, FCT statistics, model) and the short flows'
    table (size, RTT, FCT, prediction, losses)."""
    import numpy as np
    import pandas as pd

    from ... import api
    from ...metrics_quantiles import held_steps

    warm = g["mix_warmup_s"]
    doc, span = mix_doc(n, rate_bps, buffer_pkts, g["mix_short_count"], g["mix_short_load"], warm, seed)
    r = api.run(doc)
    # The short flows' arrival span, cut to whole bins of the links table (`model.utilization`).
    t0 = warm
    t1 = t0 + max(1, math.floor(span / m.RECORD_BIN_S)) * m.RECORD_BIN_S
    q = m.bottleneck_queue(r, t1)
    v, dt = held_steps(q["t_s"], q["packets"], t0, t1)
    mean_queue = float((v * dt).sum() / dt.sum())
    qdelay = mean_queue * m.PACKET_B * 8 / rate_bps
    rtts = m.class_rtts()
    totals, drawn = r.totals["flows"], r.meta.get("drawn") or {}
    rows = []
    for name, t in totals.items():
        if not name.startswith("short"):
            continue
        c = int(name[len("short") : name.index("-")])
        pkts = max(1, math.ceil(drawn[name]["bytes"] / m.MSS_B))
        tcp = t.get("tcp") or {}
        fct = t.get("completion_time_s")
        rows.append(
            {
                "buffer_pkts": buffer_pkts,
                "flow": name,
                "packets": pkts,
                "rtt_s": rtts[c],
                "fct_s": math.nan if fct is None else float(fct),
                "predicted_s": predicted_fct(pkts, rtts[c], qdelay, rate_bps),
                "lost": int(tcp.get("retransmitted_segments", 0)) + int(tcp.get("syn_retransmits", 0)) > 0,
                "timeouts": int(tcp.get("timeouts", 0)),
            }
        )
    flows = pd.DataFrame(rows)
    done = flows[flows["fct_s"].notna()]
    clean = done[~done["lost"]]
    fct = done["fct_s"].to_numpy()
    row = {
        "n": n,
        "rate_bps": rate_bps,
        "buffer_pkts": buffer_pkts,
        "rule_packets": m.sqrt_rule(rate_bps, n),
        "bdp_packets": m.bdp_packets(rate_bps, m.mean_rtt()),
        "utilization": m.utilization(r, rate_bps, t0, t1),
        "mean_queue_pkts": mean_queue,
        "queue_delay_s": qdelay,
        "short_flows": len(flows),
        "completed": len(done) / max(len(flows), 1),
        "lost_share": float(flows["lost"].mean()),
        "fct_mean_s": float(fct.mean()),
        "fct_median_s": float(np.median(fct)),
        "fct_p99_s": float(np.quantile(fct, 0.99)),
        "predicted_mean_s": float(flows["predicted_s"].mean()),
        "predicted_median_s": float(flows["predicted_s"].median()),
        "clean_over_model_median": float((clean["fct_s"] / clean["predicted_s"]).median()),
        "span_s": span,
    }
    return row, flows


def mix_figure(rows: Any) -> Any:
    """Short flows' FCT (median, mean, 99th percentile; the model's median) against the buffer,
    and the link's utilization and mean queueing delay."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 5), layout="constrained")
    ax, bx = fig.subplots(1, 2)
    d = rows.sort_values("buffer_pkts")
    b = d["buffer_pkts"]
    ax.plot(b, d["fct_median_s"] * 1e3, marker="o", label="median FCT")
    ax.plot(b, d["fct_mean_s"] * 1e3, marker="s", label="mean FCT")
    ax.plot(b, d["fct_p99_s"] * 1e3, marker="^", label="99th percentile FCT")
    ax.plot(
        b,
        d["predicted_median_s"] * 1e3,
        linestyle="--",
        color="black",
        label="model median (rounds x (RTT + queue))",
    )
    r0 = d.iloc[0]
    for x, text, colour in (
        (r0.rule_packets, "RTT C / sqrt n", "tab:green"),
        (r0.bdp_packets, "RTT x C", "tab:red"),
    ):
        ax.axvline(x, color=colour, linestyle=":", label=text)
        bx.axvline(x, color=colour, linestyle=":")
    ax.set_xscale("log")
    ax.set_ylim(0, None)
    ax.set_xlabel("buffer (packets)")
    ax.set_ylabel("short-flow completion time (ms)")
    ax.set_title(f"Short flows among n = {r0.n:g} long flows, {r0.rate_bps / 1e6:g} Mbit/s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    bx.plot(b, d["utilization"] * 100, marker="o", color="tab:blue", label="utilization (%)")
    bx.set_xscale("log")
    bx.set_xlabel("buffer (packets)")
    bx.set_ylabel("bottleneck utilization (%)", color="tab:blue")
    bx.grid(True, which="both", alpha=0.3)
    cx = bx.twinx()
    cx.plot(b, d["queue_delay_s"] * 1e3, marker="s", color="tab:orange", label="mean queueing delay")
    cx.set_ylabel("mean queueing delay (ms)", color="tab:orange")
    bx.set_title("What the buffer buys the long flows, and costs the short ones")
    return fig
