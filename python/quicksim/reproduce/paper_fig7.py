"""Paper Fig. 7 (V, ack ratio and the I-Bit): throughput of a window-limited QUIC NewReno sender
under random loss for receiver ack ratios 1:1, 1:2 and 1:10, with and without the I-Bit, at
p = 0.1 % (the figure) and 0.02 % / 0.005 % (the relative differences in the text)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..validation import Check
from .common import Context, Report, failed_runs_checks, md_table, save_csv, save_figure
from .common import ackpolicy as ap

if TYPE_CHECKING:
    from ..results import Result

NAME = "paper-fig7"
TITLE = "throughput for ack ratios 1:1, 1:2, 1:10 with and without the I-Bit (Fig. 7)"
REPEAT = 100
QUICK_REPEAT = 3
QUICK_DELAYS_MS = (1, 5)

#: key -> (label, overrides of ack-ratio.toml)
VARIANTS: dict[str, tuple[str, list[str]]] = {
    "r1": ("1:1", ["quic.ack_ratio=1"]),
    "r2": ("1:2", ["quic.ack_ratio=2"]),
    "r10": ("1:10", ["quic.ack_ratio=10"]),
    "r1i": ("1:1 + I-Bit", ["quic.ack_ratio=1", "quic.ibit=true"]),
    "r2i": ("1:2 + I-Bit", ["quic.ack_ratio=2", "quic.ibit=true"]),
    "r10i": ("1:10 + I-Bit", ["quic.ack_ratio=10", "quic.ibit=true"]),
}
#: With 1:1 every packet is acked at once anyway: the I-Bit changes no packet and no timing,
#: so the run is identical to 1:1 (tests/test_reproduce_ack.py checks it) and is not repeated.
SAME_AS = {"r1i": "r1"}
#: Section V.B: relative difference of 1:2 and 1:10 to 1:1 (percent).
PAPER_REL = {0.0002: {"r2": -0.7, "r10": -6.2}, 0.00005: {"r2": -0.4, "r10": -3.2}}
#: "near" the paper: the 1:10 difference within half of the paper's value; the 1:2 difference
#: (below 1 %, comparable to the CI) within the paper's value either way.
TOL = {"r10": 0.5, "r2": 1.0}
#: "with the I-Bit the 1:10 throughput is within 1 % of 1:1"
IBIT_BOUND_PCT = 1.0


def fig7_policies(result: Result) -> dict[str, float]:
    """Sweep metric: every variant at this run's (delay, p) and seed (see common.ackpolicy)."""
    return ap.policy_metrics(result, VARIANTS, ap.MEASURE_RTTS, "r1", SAME_AS)


def fig7_policies_quick(result: Result) -> dict[str, float]:
    """As fig7_policies with the short measuring window of --quick."""
    return ap.policy_metrics(result, VARIANTS, ap.QUICK_MEASURE_RTTS, "r1", SAME_AS)


def run(ctx: Context) -> Report:
    """The (p x delay) grid, REPEAT repetitions, six ack policies per run; checks and plots."""
    import pandas as pd

    t = time.perf_counter()
    repeat = QUICK_REPEAT if ctx.quick else REPEAT
    delays = QUICK_DELAYS_MS if ctx.quick else ap.DELAYS_MS
    metric = fig7_policies_quick if ctx.quick else fig7_policies
    sw = ap.sweep_grid(ctx, metric, repeat, delays, ap.LOSS_RATES)
    name = metric.__name__
    grid = ap.tidy(sw, name, VARIANTS)
    save_csv(grid, ctx.out / "throughput_grid.csv")
    checks: list[Check] = []
    rows: list[dict[str, Any]] = []
    for p in ap.LOSS_RATES:
        for key in VARIANTS:
            m, lo, hi, n = ap.pooled(sw, name, key, "rel", p)
            tp, tlo, thi, _ = ap.pooled(sw, name, key, "tput_mbps", p)
            paper = PAPER_REL.get(p, {}).get(key)
            rows.append(
                {
                    "p": p,
                    "policy": key,
                    "label": VARIANTS[key][0],
                    "n_runs": n,
                    "tput_mbps": tp,
                    "tput_ci_low": tlo,
                    "tput_ci_high": thi,
                    "rel_pct": 100 * m,
                    "rel_ci_low_pct": 100 * lo,
                    "rel_ci_high_pct": 100 * hi,
                    "paper_rel_pct": paper,
                }
            )
            if paper is not None:
                # Judged on the 95 % CI, not only the mean: the value inside the CI that is
                # closest to the paper's must be within tolerance (with 100 repetitions the CI
                # is tight and this is the mean; in --quick mode it keeps 2-6 runs honest).
                closest = min(max(paper, 100 * lo), 100 * hi)
                checks.append(
                    Check(
                        f"p={p * 100:g}% {VARIANTS[key][0]} vs 1:1",
                        closest,
                        paper,
                        TOL[key],
                        "%",
                        note=f"paired relative difference, mean {100 * m:+.2f} % of {n} runs over RTT "
                        f"2-10 ms, 95 % CI [{100 * lo:+.2f}, {100 * hi:+.2f}] % (measured = CI value "
                        "closest to the paper); "
                        "paper section V.B",
                    )
                )
        m, lo, hi, n = ap.pooled(sw, name, "r10i", "rel", p)
        # The CI's closest approach to 0 must be within the bound (= |mean| when the CI is tight).
        nearest = 0.0 if lo <= 0.0 <= hi else min(abs(lo), abs(hi))
        checks.append(
            Check(
                f"p={p * 100:g}% 1:10 + I-Bit within 1 % of 1:1",
                100 * nearest,
                IBIT_BOUND_PCT,
                0,
                "%",
                kind="max",
                note=f"|relative difference| at the 95 % CI's closest approach to 0; mean {100 * m:+.2f} %, "
                f"CI [{100 * lo:+.2f}, {100 * hi:+.2f}] %",
            )
        )
    m2 = ap.pooled(sw, name, "r2", "rel", 0.001)[0]
    m10 = ap.pooled(sw, name, "r10", "rel", 0.001)[0]
    checks.append(
        Check(
            "p=0.1% throughput falls with the ack ratio (1:10 below 1:2 below 1:1)",
            100 * max(m10 - m2, m2),
            0.0,
            0,
            "%",
            kind="max",
            note=f"1:2 {100 * m2:+.2f} %, 1:10 {100 * m10:+.2f} % (Fig. 7)",
        )
    )
    checks += failed_runs_checks(sw)
    table = pd.DataFrame(rows)
    save_csv(table, ctx.out / "relative_difference.csv")
    save_figure(
        bar_figure(
            grid,
            VARIANTS,
            "Throughput for different ack ratios, random loss (paper Fig. 7 and the text's loss rates)",
        ),
        ctx.out / "fig7_throughput.png",
    )
    save_figure(
        relative_figure(grid, VARIANTS, PAPER_REL, ["r2", "r10", "r2i", "r10i"]),
        ctx.out / "fig7_relative.png",
    )
    ts = timeseries(ctx.quick)
    save_csv(ts, ctx.out / "timeseries.csv")
    save_figure(timeseries_figure(ts), ctx.out / "fig7_cwnd_timeseries.png")
    section = "## Paper vs reproduction (relative difference to 1:1, pooled over RTT 2-10 ms)\n\n" + md_table(
        ["p", "policy", "throughput Mbit/s (95 % CI)", "relative difference (95 % CI)", "paper"],
        [
            [
                f"{r.p * 100:g} %",
                r.label,
                f"{r.tput_mbps:.1f} [{r.tput_ci_low:.1f}, {r.tput_ci_high:.1f}]",
                f"{r.rel_pct:+.2f} % [{r.rel_ci_low_pct:+.2f}, {r.rel_ci_high_pct:+.2f}]",
                "" if pd.isna(r.paper_rel_pct) else f"{r.paper_rel_pct:+.1f} %",
            ]
            for r in table.itertuples()
        ],
    )
    per_delay = "## Per RTT\n\n" + md_table(
        ["p", "RTT", "policy", "throughput Mbit/s (95 % CI)", "relative difference (95 % CI)"],
        [
            [
                f"{r.p * 100:g} %",
                f"{2 * r.delay_ms:g} ms",
                r.label,
                f"{r.tput_mbps:.1f} [{r.tput_mbps_lo:.1f}, {r.tput_mbps_hi:.1f}]",
                f"{100 * r.rel:+.2f} % [{100 * r.rel_lo:+.2f}, {100 * r.rel_hi:+.2f}]",
            ]
            for r in grid.itertuples()
        ],
    )
    return Report(
        NAME,
        TITLE,
        'Fig. 7 and section V of the 2020 INET QUIC paper ("QUIC throughput for different ack ratios"), '
        "with the OLD `lossy_link/ack_strategy.ini` configuration",
        checks,
        figures=[
            (
                "fig7_throughput.png",
                f"Mean throughput per RTT and policy with 95 % CIs ({repeat} repetitions); "
                "top: p = 0.1 % as the paper's Fig. 7",
            ),
            (
                "fig7_relative.png",
                "Paired relative difference to ack ratio 1:1 with 95 % CIs; dashed: the "
                "paper's numbers (section V.B)",
            ),
            (
                "fig7_cwnd_timeseries.png",
                "One run (RTT 2 ms, p = 0.1 %, same seed): the congestion window "
                "of 1:1, 1:10 and 1:10 + I-Bit, and a zoom on bytes in flight with the ACK arrivals",
            ),
        ],
        csvs=[
            (
                "throughput_grid.csv",
                "per (p, delay, policy): n, mean and 95 % CI of throughput, relative "
                "difference and ACK costs",
            ),
            ("relative_difference.csv", "per (p, policy): pooled over the RTTs, with the paper's value"),
            ("timeseries.csv", "the time-series run: cwnd and bytes in flight on change, per policy"),
        ],
        explanation=EXPLANATION.format(
            repeat=repeat,
            warm=ap.WARMUP_RTTS,
            measure=ap.QUICK_MEASURE_RTTS if ctx.quick else ap.MEASURE_RTTS,
        ),
        sections=[section, per_delay],
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
Scenario `ack-ratio.toml` (OLD `lossy_link/ack_strategy.ini`): one saturated QUIC NewReno sender,
100 Gbit/s links with a 200-packet queue, MTU 1280 (1252 B QUIC packets), one-way delay 1-5 ms
(RTT 2-10 ms), Bernoulli loss on the forward direction only, the *approximate* congestion-avoidance
increase of the recovery draft's pseudo-code (`exact_increase = false`, cwnd += MSS x acked / cwnd
per packet), no handshake, no ACK bundling, max_ack_delay 25 ms. Ack ratios 1:1, 1:2 and 1:10
(`quic.ack_ratio`), each with and without the I-Bit (`quic.ibit`). Each (p, delay) runs {repeat}
times (`--quick`: 3, two delays); within a repetition every policy uses the same seed, as the
paper's `seed-set = ${{repetition}}`.

Throughput is what the paper sums up: the bytes received by QUIC (IP bytes minus 28 B of IP and
UDP header), here over {measure} RTTs after a warm-up of {warm} RTTs (slow start on a 100 Gbit/s
path overshoots into the 200-packet queue and needs a few halvings to reach the sawtooth). The
paper measured far longer single runs (8000 RTTs) - too long for 9 000 runs on two cores; the
shorter window is compensated by pooling: each relative difference is the mean over the five RTTs
and all repetitions of the per-run, paired difference (throughput of the policy / throughput of
1:1 in the same repetition - 1), with a Student t 95 % interval. The text's numbers for 0.02 % and
0.005 % are stated "using the values of RTT as in Figure 7" and "almost unchanged" with RTT, so
the pooled value is the one to compare.

**Mechanism** (paper V.C). The sender is window limited: at 100 Gbit/s the whole window leaves in
a microburst, then the sender waits for ACKs. A receiver with ack ratio 1:n acknowledges after
every n-th packet; when the burst is not a multiple of n, the last (cwnd mod n) packets wait for
the next burst - one RTT later - or the 25 ms timer, whichever comes first. Until then they count
as in flight and their ACK, which would raise the window, is missing: on average (n-1)/2 packets
of the window are idle each RTT, and the window grows more slowly. The loss in throughput is
therefore roughly (n-1)/2 packets out of the mean window, about 1.22 / sqrt(p) packets (Mathis):
the same *absolute* shortfall for every loss rate, a relative one that shrinks with
sqrt(p) - which is what the paper reports. The time-series figure shows it in one run: with 1:10
the ACK of the tail of each burst arrives one RTT late together with the next ACK, the window
grows in steps of a tenth per ACK but misses the increments of the late packets, and the sender's
cwnd falls behind the 1:1 run. The I-Bit marks the last packet before the window blocks; the
receiver acks it at once, the tail no longer waits, and 1:10 + I-Bit tracks 1:1 (with a tenth of
the ACKs).
"""


# --- plots ---------------------------------------------------------------------------------------

# One colour per policy across every figure: a hue per base policy, its light tint for the same
# policy with an immediate-ACK signal (I-Bit, IMMEDIATE_ACK). No two policies share a colour.
_COLORS = {
    "r1": "tab:blue",
    "r2": "tab:red",
    "r10": "tab:green",
    "r1i": "lightsteelblue",
    "r2i": "lightcoral",
    "r10i": "lightgreen",
    "af10": "tab:purple",
    "af10imm": "plum",
    "afcwnd": "tab:orange",
    "afcwndimm": "navajowhite",
}
_SPARE = ("tab:brown", "tab:pink", "tab:olive", "tab:cyan", "tab:gray", "black")


def _color(key: str, i: int) -> str:
    """The policy's colour; a policy without one takes a spare colour no listed policy uses."""
    return _COLORS.get(key) or _SPARE[i % len(_SPARE)]


def bar_figure(grid: Any, variants: Any, title: str) -> Any:
    """Grouped bars: x = RTT, one bar per policy with its 95 % CI, one panel per loss rate."""
    import numpy as np
    from matplotlib.figure import Figure

    losses = sorted(grid["p"].unique(), reverse=True)
    fig = Figure(figsize=(10, 3.2 * len(losses) + 0.6), layout="constrained")
    axes = fig.subplots(len(losses), 1, squeeze=False)[:, 0]
    keys = list(variants)
    width = 0.8 / len(keys)
    for ax, p in zip(axes, losses, strict=True):
        part = grid[grid["p"] == p]
        delays = sorted(part["delay_ms"].unique())
        for j, key in enumerate(keys):
            k = part[part["policy"] == key].set_index("delay_ms").reindex(delays)
            x = np.arange(len(delays)) + (j - (len(keys) - 1) / 2) * width
            err = np.vstack([k["tput_mbps"] - k["tput_mbps_lo"], k["tput_mbps_hi"] - k["tput_mbps"]])
            ax.bar(
                x,
                k["tput_mbps"],
                width,
                yerr=np.nan_to_num(err),
                capsize=2,
                color=_color(key, j),
                edgecolor="black",
                linewidth=0.3,
                label=variants[key][0],
            )
        ax.set_xticks(range(len(delays)), [f"{2 * d:g}" for d in delays])
        ax.set_ylabel("throughput (Mbit/s)")
        ax.set_title(f"p = {p * 100:g} %", fontsize="medium")
        ax.grid(True, axis="y", alpha=0.3)
        top = float(np.nanmax(part["tput_mbps_hi"]))
        ax.set_ylim(0, top * 1.15)
    axes[-1].set_xlabel("RTT (ms)")
    fig.suptitle(title)
    # Below the panels, not over the bars.
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4, fontsize="small")
    return fig


def relative_figure(grid: Any, variants: Any, paper: Any, keys: list[str]) -> Any:
    """Paired relative difference to the baseline vs RTT, one panel per loss rate."""
    import numpy as np
    from matplotlib.figure import Figure

    losses = sorted(grid["p"].unique(), reverse=True)
    fig = Figure(figsize=(4.2 * len(losses), 4.2), layout="constrained")
    axes = fig.subplots(1, len(losses), squeeze=False, sharey=True)[0]
    for ax, p in zip(axes, losses, strict=True):
        part = grid[grid["p"] == p]
        for j, key in enumerate(keys):
            k = part[part["policy"] == key].sort_values("delay_ms")
            x = 2 * k["delay_ms"] + (j - (len(keys) - 1) / 2) * 0.12
            err = 100 * np.vstack([k["rel"] - k["rel_lo"], k["rel_hi"] - k["rel"]])
            ax.errorbar(
                x,
                100 * k["rel"],
                yerr=np.nan_to_num(err),
                fmt="o-",
                ms=4,
                capsize=2,
                color=_color(key, j),
                label=variants[key][0],
            )
            if key in paper.get(p, {}):
                ax.axhline(paper[p][key], color=_color(key, j), linestyle="--", linewidth=1)
        ax.axhline(0, color="black", linewidth=0.8)
        ax.axhspan(-1, 1, color="0.92", zorder=0)
        ax.set_title(f"p = {p * 100:g} %", fontsize="medium")
        ax.set_xlabel("RTT (ms)")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("throughput vs 1:1 (%)")
    dashed = "; dashed: paper" if any(paper.get(p) for p in losses) else ""
    fig.suptitle(f"Relative difference to ack ratio 1:1 (paired, 95 % CI){dashed}; grey: ±1 %")
    fig.legend(
        *axes[0].get_legend_handles_labels(),
        loc="outside lower center",
        ncols=min(len(keys), 4),
        fontsize="small",
    )
    return fig


def timeseries(quick: bool, policies: dict[str, list[str]] | None = None, seed: int = 7) -> Any:
    """cwnd and bytes in flight on change for one run per policy at RTT 2 ms, p = 0.1 %."""
    import pandas as pd

    policies = policies or {
        "1:1": VARIANTS["r1"][1],
        "1:10": VARIANTS["r10"][1],
        "1:10 + I-Bit": VARIANTS["r10i"][1],
    }
    frames = []
    for label, sets in policies.items():
        r, _ = ap.run_policy(1, 0.001, seed, sets, 300, extra=["run.record.conn=true"])
        c = r.conn[["t_s", "cwnd_bytes", "inflight_bytes"]].copy()
        c = c[c["t_s"] <= 0.5]
        c.insert(0, "policy", label)
        frames.append(c)
    return pd.concat(frames, ignore_index=True)


def timeseries_figure(ts: Any, zoom: tuple[float, float] = (0.150, 0.158)) -> Any:
    """Top: cwnd of every policy over 0.5 s. Below, per policy: an 8 ms zoom (4 RTTs) on cwnd and
    bytes in flight; every step of cwnd is an ACK arriving (marked), so the markers show how
    many ACKs each burst gets back and when."""
    import numpy as np
    from matplotlib.figure import Figure

    pols = list(dict.fromkeys(ts["policy"]))
    colors = dict(zip(pols, ("tab:blue", "tab:green", "tab:olive", "tab:red", "tab:purple"), strict=False))
    fig = Figure(figsize=(10, 3 + 2.2 * len(pols)), layout="constrained")
    axes = fig.subplots(1 + len(pols), 1, height_ratios=[1.6] + [1] * len(pols))
    mss = 1252
    for pol in pols:
        k = ts[ts["policy"] == pol]
        axes[0].step(
            k["t_s"] * 1e3, k["cwnd_bytes"] / mss, where="post", color=colors[pol], label=pol, linewidth=1
        )
    axes[0].axvspan(zoom[0] * 1e3, zoom[1] * 1e3, color="0.8", zorder=0, label="zoom below")
    axes[0].set_ylabel("cwnd (packets)")
    axes[0].set_xlabel("time (ms)")
    axes[0].set_ylim(0, 120)
    axes[0].set_title(
        "Congestion window, one run per policy (RTT 2 ms, p = 0.1 %, same seed; slow start clipped)"
    )
    axes[0].legend(fontsize="small", ncols=5, loc="upper right")
    axes[0].grid(True, alpha=0.3)
    for ax, pol in zip(axes[1:], pols, strict=True):
        k = ts[(ts["policy"] == pol) & (ts["t_s"] >= zoom[0]) & (ts["t_s"] <= zoom[1])]
        t = k["t_s"].to_numpy() * 1e3
        cwnd = k["cwnd_bytes"].to_numpy() / mss
        ax.step(t, cwnd, where="post", color="black", linewidth=0.9, label="cwnd")
        ax.step(
            t,
            k["inflight_bytes"].to_numpy() / mss,
            where="post",
            color=colors[pol],
            linewidth=1,
            label="bytes in flight",
        )
        acks = np.flatnonzero(np.diff(cwnd) > 0) + 1
        ax.plot(t[acks], cwnd[acks], "v", ms=4, color="tab:red", label="ACK arrives (cwnd grows)")
        growth = (cwnd[-1] - cwnd[0]) / ((zoom[1] - zoom[0]) * 1e3 / 2.0) if len(cwnd) else float("nan")
        ax.set_ylabel("packets")
        ax.set_title(
            f"{pol}: {len(acks)} ACKs in {(zoom[1] - zoom[0]) * 1e3:g} ms, cwnd +{growth:.2f} "
            "packets per RTT",
            fontsize="medium",
        )
        ax.set_xlim(zoom[0] * 1e3, zoom[1] * 1e3)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="x-small", loc="lower right", ncols=3)
    axes[-1].set_xlabel("time (ms)")
    return fig
