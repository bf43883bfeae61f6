"""Paper Fig. 5 (IV.C, flow-control limited): with congestion control off, the receiver's stream
credit limits the goodput to credit / RTT, eq. (3)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import units, validation
from .common import Context, Report, check_sweep, check_values, save_csv, save_figure, sweep_checks

if TYPE_CHECKING:
    from ..results import Result

NAME = "paper-fig5"
TITLE = "flow-control-limited goodput vs RTT (Fig. 5)"
#: The paper: "RTT = 2, 4, 10, 20, ..., 100 ms" and "initialMaxData = 65, 100, 140 kB".
RTTS_MS = (2, 4, *range(10, 101, 10))
QUICK_RTTS_MS = (2, 10, 50, 100)
CREDITS_KB = (65, 100, 140)


def flow_control_check(result: Result) -> dict[str, float]:
    """Sweep metric: validation.flow_control at the point's credit and RTT."""
    credit = units.bytes_(result.scenario["quic"]["initial_max_stream_data"])
    delay = units.seconds(result.scenario["dumbbell"]["bottleneck"]["delay"])
    return check_values(validation.flow_control(credit // 1000, round(2 * delay * 1e3, 9)))


def run(ctx: Context) -> Report:
    """Every (credit, RTT) point as a parallel sweep of validation.flow_control; plot and report."""
    import pandas as pd

    t = time.perf_counter()
    rtts = QUICK_RTTS_MS if ctx.quick else RTTS_MS
    points = [
        {"quic.initial_max_stream_data": f"{c}kB", "dumbbell.bottleneck.delay": f"{r / 2:g}ms"}
        for c in CREDITS_KB
        for r in rtts
    ]
    sw = check_sweep(ctx, "flow-control", points, flow_control_check)

    def name(point: Mapping[str, Any]) -> str:
        delay_ms = float(str(point["dumbbell.bottleneck.delay"]).removesuffix("ms"))
        return f"flow-control credit={point['quic.initial_max_stream_data']} rtt={2 * delay_ms:g}ms"

    checks = sweep_checks(
        sw, "flow_control_check", name, "Mbit/s", "application goodput from 1 s to the end vs credit/RTT"
    )
    data = pd.DataFrame(
        {
            "credit_kb": [c for c in CREDITS_KB for _ in rtts],
            "rtt_ms": [r for _ in CREDITS_KB for r in rtts],
            "measured_mbps": [c.measured for c in checks],
            "expected_mbps": [c.expected for c in checks],
            "ratio": [c.measured / c.expected for c in checks],
        }
    )
    save_csv(data, ctx.out / "goodput_vs_rtt.csv")
    save_figure(_figure(data), ctx.out / "fig5_flow_control.png")
    ratio = data["ratio"]
    summary = (
        f"\nAcross all points the measured goodput is {ratio.min():.3f} to {ratio.max():.3f} times "
        f"credit / RTT (median {ratio.median():.3f}).\n"
    )
    return Report(
        NAME,
        TITLE,
        'Fig. 5 of the 2020 INET QUIC paper (section IV.C, "Flow Control Limited Case")',
        checks,
        figures=[
            (
                "fig5_flow_control.png",
                "Goodput vs RTT per stream credit: dots measured, lines "
                "credit / RTT (log scale); below, measured / expected",
            )
        ],
        csvs=[("goodput_vs_rtt.csv", "per (credit, RTT): measured and expected goodput (Mbit/s)")],
        explanation=EXPLANATION + summary,
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
Scenario `flow-control.toml` (`E/flow_control_limited`): congestion control off, 100 Gbit/s
links, connection-level flow control out of the way (initial_max_data = 2^32 - 1 B), and the
receiver's initial stream credit `initial_max_stream_data` in {65, 100, 140} kB with a
MAX_STREAM_DATA threshold of half the credit. RTTs as in the paper, 2, 4, 10, 20, ..., 100 ms
(12 values; `--quick`: 4). Each point is `quicksim.validation.flow_control(credit, rtt)` run as
one point of a `quicksim.sweep`; it measures the application goodput from 1 s to the end.

Theory, eq. (3): the sender may send one credit's worth of data, then waits for the
MAX_STREAM_DATA frame that the receiver sends when the data arrives, which takes one RTT; so
goodput = credit / RTT (100 kB / 10 ms = 80 Mbit/s). Tolerance 2 %.

The expectations are the paper's, not adjusted to the model. The scenario sets
`round_consumed_data = true`, INET's roundConsumedDataValue as in its flow_control_limited
example: without it the receiver's credit update (sent when the remaining credit falls below
half the window, new limit = consumed + window) is crossed in the middle of a burst and the
next one only a burst later, so goodput settles at about credit / (2 RTT).
"""


def _figure(data: Any) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    from ..theory import window_limited_mbps

    fig = Figure(figsize=(8, 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    grid = np.linspace(1.5, 102, 400)
    for (credit, part), color in zip(
        data.groupby("credit_kb", sort=False), ("tab:blue", "tab:orange", "tab:green"), strict=False
    ):
        top.plot(
            grid,
            window_limited_mbps(credit * 1000, grid / 1e3),
            color=color,
            linewidth=1.2,
            label=f"credit / RTT, {credit} kB",
        )
        top.plot(
            part["rtt_ms"],
            part["measured_mbps"],
            "o",
            color=color,
            markersize=5,
            markeredgecolor="black",
            markeredgewidth=0.4,
            label=f"measured, {credit} kB",
        )
        bottom.plot(part["rtt_ms"], part["ratio"], "o-", color=color, markersize=3, linewidth=0.8)
    top.set_yscale("log")
    top.set_ylabel("goodput (Mbit/s)")
    top.set_title("Flow control limited case: no congestion control (paper Fig. 5)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize="small", ncols=2)
    bottom.axhspan(0.98, 1.02, color="0.85", label="tolerance ±2 %")
    bottom.axhline(1.0, color="black", linewidth=0.8)
    bottom.set_ylim(0, 1.2)
    bottom.set_ylabel("measured / expected")
    bottom.set_xlabel("RTT (ms)")
    bottom.set_xlim(0, 103)
    bottom.grid(True, alpha=0.3)
    bottom.legend(fontsize="small", loc="lower right")
    return fig
