"""Extended ack-ratio study: the paper's Fig. 7 grid with the sender-controlled ACK policies of
draft-ietf-quic-ack-frequency (ACK_FREQUENCY with a fixed or a cwnd-scaled threshold, and
IMMEDIATE_ACK on the last packet before the window blocks), and the cost side of the trade-off:
ACK packets per data packet and ACK bytes on the reverse path."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..validation import Check
from .common import Context, Report, failed_runs_checks, md_table, save_csv, save_figure
from .common import ackpolicy as ap
from .paper_fig7 import bar_figure, relative_figure, timeseries, timeseries_figure

if TYPE_CHECKING:
    from ..results import Result

NAME = "ack-frequency"
TITLE = "ACK_FREQUENCY / IMMEDIATE_ACK vs ack ratio and I-Bit: throughput and ACK cost"
#: Fewer repetitions than paper-fig7 (eight policies per run); the costs vary little between
#: runs and the throughput differences are paired.
REPEAT = 30
QUICK_REPEAT = 2
QUICK_DELAYS_MS = (1, 5)
_AF = ["quic.min_ack_delay=1ms"]

VARIANTS: dict[str, tuple[str, list[str]]] = {
    "r1": ("1:1", ["quic.ack_ratio=1"]),
    "r2": ("1:2 (RFC 9000)", ["quic.ack_ratio=2"]),
    "r10": ("1:10", ["quic.ack_ratio=10"]),
    "r10i": ("1:10 + I-Bit", ["quic.ack_ratio=10", "quic.ibit=true"]),
    "af10": ("AF 1:10", [*_AF, "quic.ack_policy=fixed", "quic.ack_frequency_threshold=9"]),
    "af10imm": (
        "AF 1:10 + IMMEDIATE_ACK",
        [*_AF, "quic.ack_policy=fixed", "quic.ack_frequency_threshold=9", "quic.immediate_ack_on_block=true"],
    ),
    "afcwnd": ("AF cwnd/4 (≤10)", [*_AF, "quic.ack_policy=cwnd", "quic.ack_frequency_max=10"]),
    "afcwndimm": (
        "AF cwnd/4 (≤10) + IMMEDIATE_ACK",
        [*_AF, "quic.ack_policy=cwnd", "quic.ack_frequency_max=10", "quic.immediate_ack_on_block=true"],
    ),
}
BOUND_PCT = 1.0


def af_policies(result: Result) -> dict[str, float]:
    """Sweep metric: every policy at this run's (delay, p) and seed."""
    return ap.policy_metrics(result, VARIANTS, ap.MEASURE_RTTS, "r1")


def af_policies_quick(result: Result) -> dict[str, float]:
    """As af_policies with the short measuring window of --quick."""
    return ap.policy_metrics(result, VARIANTS, ap.QUICK_MEASURE_RTTS, "r1")


def run(ctx: Context) -> Report:
    """Grid x repetitions x eight policies; throughput and cost tables, checks and plots."""
    import pandas as pd

    t = time.perf_counter()
    repeat = QUICK_REPEAT if ctx.quick else REPEAT
    delays = QUICK_DELAYS_MS if ctx.quick else ap.DELAYS_MS
    metric = af_policies_quick if ctx.quick else af_policies
    sw = ap.sweep_grid(ctx, metric, repeat, delays, ap.LOSS_RATES)
    name = metric.__name__
    grid = ap.tidy(sw, name, VARIANTS)
    save_csv(grid, ctx.out / "grid.csv")
    rows = []
    checks: list[Check] = []
    for p in ap.LOSS_RATES:
        for key, (label, _) in VARIANTS.items():
            rel = ap.pooled(sw, name, key, "rel", p)
            row: dict[str, Any] = {
                "p": p,
                "policy": key,
                "label": label,
                "n_runs": rel[3],
                "rel_pct": 100 * rel[0],
                "rel_ci_low_pct": 100 * rel[1],
                "rel_ci_high_pct": 100 * rel[2],
            }
            for value in (
                "tput_mbps",
                "ack_pkts_per_data",
                "rev_kbps",
                "rev_bytes_per_data",
                "control_frames_per_data",
            ):
                m, lo, hi, _ = ap.pooled(sw, name, key, value, p)
                row.update({value: m, f"{value}_ci_low": lo, f"{value}_ci_high": hi})
            rows.append(row)
        table_p = {r["policy"]: r for r in rows if r["p"] == p}
        for key in ("af10imm", "r10i"):
            r = table_p[key]
            lo, hi = r["rel_ci_low_pct"], r["rel_ci_high_pct"]
            # The CI's closest approach to 0 must be within the bound (= |mean| when tight).
            nearest = 0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi))
            checks.append(
                Check(
                    f"p={p * 100:g}% {r['label']} within 1 % of 1:1",
                    nearest,
                    BOUND_PCT,
                    0,
                    "%",
                    kind="max",
                    note=f"paired, at the 95 % CI's closest approach to 0; mean {r['rel_pct']:+.2f} %, "
                    f"CI [{lo:+.2f}, {hi:+.2f}] %",
                )
            )
        gap = abs(table_p["af10"]["rel_pct"] - table_p["r10"]["rel_pct"])
        checks.append(
            Check(
                f"p={p * 100:g}% ACK_FREQUENCY 1:10 behaves as receiver 1:10",
                gap,
                BOUND_PCT,
                0,
                "% points",
                kind="max",
                note=f"AF {table_p['af10']['rel_pct']:+.2f} % vs receiver {table_p['r10']['rel_pct']:+.2f} %",
            )
        )
        a = table_p["af10imm"]["ack_pkts_per_data"]
        # An ACK-clocked sender blocks after every ACK-triggered burst, so IMMEDIATE_ACK (like
        # the I-Bit) adds up to one ACK per burst: the saving against 1:2 must remain.
        checks.append(
            Check(
                f"p={p * 100:g}% AF 1:10 + IMMEDIATE_ACK sends fewer ACKs than 1:2",
                a,
                table_p["r2"]["ack_pkts_per_data"],
                0,
                "ACK/data",
                kind="max",
                note=f"ACK-only packets per data packet; 1:1 {table_p['r1']['ack_pkts_per_data']:.3f}, 1:10 "
                f"{table_p['r10']['ack_pkts_per_data']:.3f}, "
                f"1:10 + I-Bit {table_p['r10i']['ack_pkts_per_data']:.3f}",
            )
        )
    checks += failed_runs_checks(sw)
    table = pd.DataFrame(rows)
    save_csv(table, ctx.out / "tradeoff.csv")
    save_figure(
        bar_figure(grid, VARIANTS, "Throughput per ACK policy, random loss (paper Fig. 7 grid)"),
        ctx.out / "af_throughput.png",
    )
    save_figure(
        relative_figure(grid, VARIANTS, {}, [k for k in VARIANTS if k != "r1"]), ctx.out / "af_relative.png"
    )
    save_figure(tradeoff_figure(table), ctx.out / "af_tradeoff.png")
    ts = timeseries(
        ctx.quick,
        {
            "1:1": VARIANTS["r1"][1],
            "AF 1:10": VARIANTS["af10"][1],
            "AF 1:10 + IMMEDIATE_ACK": VARIANTS["af10imm"][1],
            "AF cwnd/4 (≤10)": VARIANTS["afcwnd"][1],
        },
    )
    save_csv(ts, ctx.out / "timeseries.csv")
    save_figure(timeseries_figure(ts), ctx.out / "af_cwnd_timeseries.png")
    section = "## Throughput and cost per policy (pooled over RTT 2-10 ms; 95 % CIs)\n\n" + md_table(
        [
            "p",
            "policy",
            "throughput vs 1:1",
            "ACK packets / data packet",
            "reverse path kbit/s",
            "reverse bytes / data packet",
            "ACK_FREQUENCY + IMMEDIATE_ACK frames / data packet",
        ],
        [
            [
                f"{r.p * 100:g} %",
                r.label,
                f"{r.rel_pct:+.2f} % [{r.rel_ci_low_pct:+.2f}, {r.rel_ci_high_pct:+.2f}]",
                f"{r.ack_pkts_per_data:.4f}",
                f"{r.rev_kbps:.0f} [{r.rev_kbps_ci_low:.0f}, {r.rev_kbps_ci_high:.0f}]",
                f"{r.rev_bytes_per_data:.2f}",
                f"{r.control_frames_per_data:.4f}",
            ]
            for r in table.itertuples()
        ],
    )
    return Report(
        NAME,
        TITLE,
        "the ack-ratio study of section V of the 2020 INET QUIC paper, extended with "
        "draft-ietf-quic-ack-frequency (ACK_FREQUENCY, IMMEDIATE_ACK, min_ack_delay)",
        checks,
        figures=[
            (
                "af_tradeoff.png",
                "The trade-off: throughput relative to 1:1 against ACK packets per data "
                "packet, per policy and loss rate (mean over RTTs and repetitions, 95 % CIs)",
            ),
            ("af_relative.png", "Paired relative throughput difference to 1:1 per RTT, 95 % CIs; grey ±1 %"),
            ("af_throughput.png", f"Mean throughput per RTT and policy, 95 % CIs ({repeat} repetitions)"),
            (
                "af_cwnd_timeseries.png",
                "One run (RTT 2 ms, p = 0.1 %, same seed): congestion window per policy",
            ),
        ],
        csvs=[
            ("grid.csv", "per (p, delay, policy): means and CIs of throughput, relative difference, costs"),
            ("tradeoff.csv", "per (p, policy), pooled over the RTTs: throughput and costs with CIs"),
            ("timeseries.csv", "the time-series runs: cwnd and bytes in flight on change"),
        ],
        explanation=EXPLANATION.format(
            repeat=repeat,
            measure=ap.QUICK_MEASURE_RTTS if ctx.quick else ap.MEASURE_RTTS,
            warm=ap.WARMUP_RTTS,
        ),
        sections=[section],
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
Same setup, measurement and pairing as `paper-fig7` (scenario `ack-ratio.toml`, RTT 2-10 ms,
p = 0.1 / 0.02 / 0.005 %, {measure} RTTs measured after {warm}, {repeat} repetitions; every
policy of one repetition uses the same seed). Policies:

- **1:1, 1:2, 1:10, 1:10 + I-Bit**: the receiver decides (`quic.ack_ratio`, `quic.ibit`), as in the paper.
- **AF 1:10**: the sender sends one ACK_FREQUENCY frame (draft-ietf-quic-ack-frequency §4,
  type 0xaf) with Ack-Eliciting Threshold 9 - an ACK after *more than* 9 packets, i.e. 1:10 -,
  Requested Max Ack Delay = the peer's max_ack_delay (25 ms) and Reordering Threshold 1 (ACK at
  once on a gap, as RFC 9000). The receiver advertises `min_ack_delay = 1 ms` (the transport
  parameter that enables the extension; without it frames are ignored).
- **+ IMMEDIATE_ACK**: the last packet before the congestion window blocks also carries an
  IMMEDIATE_ACK frame (1 byte, §5), which the receiver acks at once - the I-Bit's job done with
  the standard frame, at the price of one byte per window instead of a header bit.
- **AF cwnd/4 (≤10)**: the ack ratio follows the window, cwnd/4 packets per ACK (four ACKs per
  window), at most 10; a new ACK_FREQUENCY (new sequence number) goes out whenever the value
  changes, and a lost one is re-sent if it is still the latest.

Costs are counted over the whole run at the receiver: ACK-only packets per data packet sent by
the sender, and the reverse path's load (IP bytes of every packet the receiver sends - in a bulk
transfer these are all ACK-only packets - per second and per data packet). ACK_FREQUENCY and
IMMEDIATE_ACK frames ride in data packets; their count per data packet is the sender's extra.

Reading the result: a 1:10 policy cuts the ACK packets (and reverse bytes) by about 10x against
1:1 and 5x against RFC 9000's 1:2; on its own it costs throughput in this window-limited regime
(the tail of each window waits a round trip for its ACK, see `paper-fig7`). The sender knows when
it is about to block, so IMMEDIATE_ACK on that packet removes the penalty while adding only one
ACK per window. The cwnd/4 policy gives four ACKs per window, which bounds the tail to a quarter
window but still leaves it waiting; with IMMEDIATE_ACK it too recovers the throughput.
"""


def tradeoff_figure(table: Any) -> Any:
    """Relative throughput vs ACK packets per data packet, one marker per policy and loss rate."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 5.5), layout="constrained")
    ax = fig.add_subplot()
    markers = {0.001: "o", 0.0002: "s", 0.00005: "^"}
    keys = list(dict.fromkeys(table["policy"]))
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    for j, key in enumerate(keys):
        part = table[table["policy"] == key]
        for r in part.itertuples():
            ax.errorbar(
                r.ack_pkts_per_data,
                r.rel_pct,
                yerr=[[r.rel_pct - r.rel_ci_low_pct], [r.rel_ci_high_pct - r.rel_pct]],
                fmt=markers.get(r.p, "o"),
                color=cmap(j % 10),
                ms=7,
                capsize=2,
                markeredgecolor="black",
                markeredgewidth=0.4,
                label=r.label if r.p == part["p"].iloc[0] else None,
            )
    for p, m in markers.items():
        ax.plot([], [], m, color="0.5", label=f"p = {p * 100:g} %")
    ax.axhspan(-1, 1, color="0.92", zorder=0)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("ACK-only packets per data packet (log)")
    ax.set_ylabel("throughput vs 1:1 (%)")
    ax.set_title("ACK policy trade-off: fewer ACKs vs throughput (grey: ±1 %)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncols=2, loc="lower right")
    return fig
