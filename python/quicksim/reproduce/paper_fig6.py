"""Paper Fig. 6 (IV.D, shared link): three QUIC senders join and leave a 10 Mbit/s bottleneck
with random UDP background traffic; over 100 repetitions they share it fairly."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..validation import Check, scenario_path
from .common import Context, Report, md_table, save_csv, save_figure

if TYPE_CHECKING:
    import pandas as pd

    from ..results import Result

NAME = "paper-fig6"
TITLE = "three QUIC senders sharing a link, 100 repetitions (Fig. 6)"
REPEAT = 100
QUICK_REPEAT = 5
SHARE_TOLERANCE = 0.15
MIN_JAIN = 0.95
#: IP + UDP header bytes per packet: the paper counts bytes received by QUIC.
_IP_UDP = 28


def quic_rx_series(result: Result) -> pd.DataFrame:
    """Sweep metric: per QUIC flow and 1 s bin, the QUIC bytes received in Mbit/s (as the paper:
    "summing up the bytes received by QUIC on each of the three receivers for each second")."""
    import numpy as np
    import pandas as pd

    step = result.record_interval_s
    end = float(result.sim_end_s or 0.0)
    grid = np.arange(0.0, end - 1e-9, step)
    quic = [n for n, f in result.totals["flows"].items() if f.get("kind") == "quic"]
    f = result.flows[result.flows["flow"].astype(str).isin(quic)]
    frames = []
    for name in quic:
        rows = f[f["flow"].astype(str) == name]
        nbytes = (rows["wire_recv_bytes"] - _IP_UDP * rows["recv_packets"]).to_numpy(dtype=float)
        k = np.floor(rows["t_s"].to_numpy(dtype=float) / step + 1e-6).astype(int)
        per_bin = np.zeros(len(grid))
        np.add.at(per_bin, k[k < len(grid)], nbytes[k < len(grid)])
        frames.append(pd.DataFrame({"t_s": grid, "key": name, "value": per_bin * 8 / step / 1e6}))
    return pd.concat(frames, ignore_index=True)


def phase_stats(result: Result) -> dict[str, float]:
    """Sweep metric: analysis.phases of the run, flattened to `p<phase>.<flow>.<column>` and
    `p<phase>.<column>` (phase-wide columns)."""
    from ..analysis import phases

    out: dict[str, float] = {}
    for _, row in phases(result).iterrows():
        ph = f"p{row.phase}"
        for column in ("share", "goodput_mbps", "link_mbps"):
            out[f"{ph}.{row.flow}.{column}"] = float(row[column])
        for column in ("t0_s", "t1_s", "n_active", "fair_share_mbps", "background_mbps", "jain"):
            out[f"{ph}.{column}"] = float(row[column])
    return out


def run(ctx: Context) -> Report:
    """Repeat shared-link.toml, average the throughput over repetitions, check fairness per phase."""
    import pandas as pd

    from ..stats import jain
    from ..sweep_plots import series_mean

    t = time.perf_counter()
    repeat = QUICK_REPEAT if ctx.quick else REPEAT
    sw = ctx.sweep(scenario_path("shared-link"), repeat=repeat, metrics=[quic_rx_series, phase_stats])
    ok = sw.runs[sw.runs["error"].isna()]
    n_runs = len(ok)
    summary = sw.summary.set_index("metric")

    def mean(column: str) -> float:
        return float(summary.loc[f"phase_stats.{column}", "mean"])

    def ci(column: str) -> tuple[float, float]:
        row = summary.loc[f"phase_stats.{column}"]
        return float(row["ci_low"]), float(row["ci_high"])

    phase_ids = sorted({int(c.split(".")[1][1:]) for c in sw.metrics if c.startswith("phase_stats.p")})
    flows = ["sender1", "sender2", "sender3"]
    rows: list[dict[str, Any]] = []
    checks: list[Check] = []
    jain_checks: list[Check] = []
    for ph in phase_ids:
        active = [fl for fl in flows if f"phase_stats.p{ph}.{fl}.share" in summary.index]
        t0, t1 = mean(f"p{ph}.t0_s"), mean(f"p{ph}.t1_s")
        goodputs = []
        for fl in active:
            share = mean(f"p{ph}.{fl}.share")
            lo, hi = ci(f"p{ph}.{fl}.share")
            good = mean(f"p{ph}.{fl}.goodput_mbps")
            goodputs.append(good)
            rows.append(
                {
                    "phase": ph,
                    "t0_s": t0,
                    "t1_s": t1,
                    "flow": fl,
                    "n_runs": n_runs,
                    "share_mean": share,
                    "share_ci_low": lo,
                    "share_ci_high": hi,
                    "goodput_mbps_mean": good,
                    "link_mbps_mean": mean(f"p{ph}.{fl}.link_mbps"),
                    "fair_share_mbps_mean": mean(f"p{ph}.fair_share_mbps"),
                    "background_mbps_mean": mean(f"p{ph}.background_mbps"),
                    "jain_mean_of_runs": mean(f"p{ph}.jain"),
                }
            )
            checks.append(
                Check(
                    f"shared-link phase {ph} ({t0:g}-{t1:g} s) {fl} share",
                    share,
                    1.0,
                    SHARE_TOLERANCE,
                    "x fair",
                    note=f"mean of {n_runs} runs, 95 % CI [{lo:.3f}, {hi:.3f}]; link-layer rate "
                    f"/ ((10 Mbit/s - background) / {len(active)})",
                )
            )
        if len(active) > 1:
            jain_checks.append(
                Check(
                    f"shared-link phase {ph} ({t0:g}-{t1:g} s) Jain",
                    jain(goodputs),
                    MIN_JAIN,
                    0,
                    "",
                    kind="min",
                    note=f"Jain's index of the {len(active)} senders' goodputs, each the mean "
                    f"of {n_runs} runs",
                )
            )
    checks += jain_checks
    if n_runs < repeat:
        checks.append(
            Check(
                "shared-link runs without error",
                n_runs,
                repeat,
                0,
                "runs",
                kind="exact",
                note=str(sw.failed["error"].iloc[0]),
            )
        )
    table = pd.DataFrame(rows)
    save_csv(table, ctx.out / "phases.csv")
    stats = series_mean(sw.series, "quic_rx_series")
    save_csv(stats.rename(columns={"key": "flow"}), ctx.out / "throughput_mean_ci.csv")
    save_figure(_series_figure(sw, table, n_runs), ctx.out / "fig6_throughput.png")
    save_figure(_shares_figure(table, n_runs), ctx.out / "fig6_phase_shares.png")
    section = "## Per phase (means over the repetitions)\n\n" + md_table(
        [
            "phase",
            "window (s)",
            "flow",
            "share of fair (95 % CI)",
            "goodput Mbit/s",
            "link Mbit/s",
            "fair share Mbit/s",
            "background Mbit/s",
        ],
        [
            [
                r.phase,
                f"{r.t0_s:g}-{r.t1_s:g}",
                r.flow,
                f"{r.share_mean:.3f} [{r.share_ci_low:.3f}, {r.share_ci_high:.3f}]",
                f"{r.goodput_mbps_mean:.3f}",
                f"{r.link_mbps_mean:.3f}",
                f"{r.fair_share_mbps_mean:.3f}",
                f"{r.background_mbps_mean:.3f}",
            ]
            for r in table.itertuples()
        ],
    )
    return Report(
        NAME,
        TITLE,
        'Fig. 6 of the 2020 INET QUIC paper (section IV.D, "Shared Link Case"), with the OLD '
        "`examples/quic/shared_link/shared_link.ini` configuration",
        checks,
        figures=[
            (
                "fig6_throughput.png",
                f"QUIC-layer throughput per receiver, 1 s bins, mean of {n_runs} "
                "repetitions with 95 % confidence bands; dashed: the fair share",
            ),
            (
                "fig6_phase_shares.png",
                "Per phase: each sender's link-layer rate as a multiple of its fair "
                "share, mean and 95 % CI over the repetitions; grey: ±15 %",
            ),
        ],
        csvs=[
            ("phases.csv", "per phase and sender: mean share, its 95 % CI, goodput, link rate, fair share"),
            ("throughput_mean_ci.csv", "per sender and second: n, mean, std, sem, 95 % CI of the throughput"),
        ],
        explanation=EXPLANATION.format(repeat=repeat),
        sections=[section],
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
Scenario `shared-link.toml`, the 2020 configuration (OLD `examples/quic/shared_link/shared_link.ini`
and the paper's text): a dumbbell with a 10 Mbit/s, 10 ms bottleneck, 1 Gbit/s zero-delay access
links, MTU 1280, `packetCapacity = 23` on every queue (the bottleneck's included), three
saturated QUIC NewReno senders active 20-120 s, 40-160 s and 80-180 s (send queue 100 000 B, low
water 0.8, ACK ratio 1:2, bundled ACKs, accurate increase), and a fourth host sending UDP
datagrams of uniform(100, 1000) B every uniform(25, 100) ms for the whole 200 s run. It runs
{repeat} times (`--quick`: 5) with seeds derived from the base seed and the repetition
(`quicksim.sweep`), in parallel.

The time plot is the paper's: the bytes received by QUIC (IP bytes minus 28 B of IP and UDP
header per packet) per receiver and second, averaged over the repetitions with a Student t 95 %
confidence interval. The dashed line is the fair share at the QUIC layer,
(10 Mbit/s - background) / active senders x 1252/1287.

The checks use `quicksim.analysis.phases` on every run: phases are cut at each start and stop,
their first second is left out, and each sender's link-layer rate (its frames on the bottleneck)
is divided by its fair share of what the background leaves, (10 Mbit/s - background) / n. Each
check is the mean of that share over the repetitions, within 15 % of 1 (the tolerance of
`quicksim.validation.linksharing`); Jain's index is taken of the senders' repetition-mean
goodputs and must be at least 0.95.
"""


def _series_figure(sw: Any, table: Any, n_runs: int) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    from ..sweep_plots import plot_series

    fig = Figure(figsize=(9, 4.8), layout="constrained")
    ax = fig.add_subplot()
    plot_series(
        sw,
        "quic_rx_series",
        ax=ax,
        ylabel="throughput at the QUIC layer (Mbit/s)",
        title="Shared link case: 10 Mbit/s, 10 ms, 23-packet queues (paper Fig. 6)",
    )
    per_phase = table.drop_duplicates("phase")
    payload = 1252 / 1287
    for i, r in enumerate(per_phase.itertuples()):
        n = int((table.phase == r.phase).sum())
        fair = (10.0 - r.background_mbps_mean) / n * payload
        label: dict[str, Any] = {"label": "fair share"} if i == 0 else {}
        ax.hlines(fair, r.t0_s - 1.0, r.t1_s, colors="black", linestyles="--", linewidth=1, **label)
    ax.set_xlim(0, 200)
    ax.set_ylim(0, 10.5)
    ax.set_xticks(np.arange(0, 201, 20))
    ax.legend(loc="upper right", fontsize="small", ncols=4)
    return fig


def _shares_figure(table: Any, n_runs: int) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 4.2), layout="constrained")
    ax = fig.add_subplot()
    colors = {"sender1": "tab:blue", "sender2": "tab:orange", "sender3": "tab:green"}
    phases = list(dict.fromkeys(table["phase"]))
    width = 0.25
    for j, flow in enumerate(colors):
        part = table[table["flow"] == flow]
        x = np.array([phases.index(p) for p in part["phase"]]) + (j - 1) * width
        err = np.vstack(
            [part["share_mean"] - part["share_ci_low"], part["share_ci_high"] - part["share_mean"]]
        )
        err = np.where(np.isfinite(err), err, 0.0)
        ax.bar(x, part["share_mean"], width, yerr=err, capsize=3, color=colors[flow], label=flow)
    ax.axhspan(1 - SHARE_TOLERANCE, 1 + SHARE_TOLERANCE, color="0.9", zorder=0, label="fair ±15 %")
    ax.axhline(1.0, color="black", linewidth=0.8)
    windows = table.drop_duplicates("phase")
    ax.set_xticks(
        range(len(phases)), [f"phase {r.phase}\n{r.t0_s:g}-{r.t1_s:g} s" for r in windows.itertuples()]
    )
    ax.set_ylabel("link rate / fair share")
    ax.set_ylim(0, 1.4)
    ax.set_title(f"Per-phase share of the fair rate, mean of {n_runs} runs with 95 % CI")
    ax.legend(loc="upper center", fontsize="small", ncols=4)
    ax.grid(True, axis="y", alpha=0.3)
    return fig
