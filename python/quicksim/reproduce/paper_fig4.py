"""Paper Fig. 4 (IV.B, lossy link): throughput of a QUIC NewReno sender with periodic loss against
the RTT, for three loss rates, on the Mathis et al. curve MSS / RTT x sqrt(3 / (2p)), eq. (2)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import units, validation
from .common import Context, Report, check_sweep, check_values, save_csv, save_figure, sweep_checks

if TYPE_CHECKING:
    from ..results import Result

NAME = "paper-fig4"
TITLE = "Mathis throughput vs RTT under periodic loss (Fig. 4)"
#: The paper: "RTT = 2, 4, 8, 12, ..., 100 ms" (26 values) and "p = 0.1, 0.02, 0.005 %".
RTTS_MS = (2, 4, *range(8, 101, 4))
QUICK_RTTS_MS = (2, 20, 52, 100)
LOSS_RATES = (0.001, 0.0002, 0.00005)
MSS = 1252


def mathis_check(result: Result) -> dict[str, float]:
    """Sweep metric: validation.mathis at the point's RTT (2 x bottleneck delay) and loss period."""
    bn = result.scenario["dumbbell"]["bottleneck"]
    rtt_ms = round(2 * units.seconds(bn["delay"]) * 1e3, 9)
    every = int(bn["forward"]["loss"]["every"])
    return check_values(validation.mathis(rtt_ms, 1.0 / every))


def run(ctx: Context) -> Report:
    """Every (p, RTT) point as a parallel sweep of validation.mathis; plot and report."""
    import pandas as pd

    t = time.perf_counter()
    rtts = QUICK_RTTS_MS if ctx.quick else RTTS_MS
    points = [
        {
            "dumbbell.bottleneck.delay": f"{r / 2:g}ms",
            "dumbbell.bottleneck.forward.loss.every": round(1 / p),
        }
        for p in LOSS_RATES
        for r in rtts
    ]
    sw = check_sweep(ctx, "mathis", points, mathis_check)

    def name(point: Mapping[str, Any]) -> str:
        every = int(point["dumbbell.bottleneck.forward.loss.every"])
        delay_ms = float(str(point["dumbbell.bottleneck.delay"]).removesuffix("ms"))
        return f"mathis rtt={2 * delay_ms:g}ms p={1 / every:g}"

    checks = sweep_checks(
        sw,
        "mathis_check",
        name,
        "Mbit/s",
        "QUIC bytes received over the second half of the loss cycles vs eq. (2)",
    )
    data = pd.DataFrame(
        {
            "p": [p for p in LOSS_RATES for _ in rtts],
            "rtt_ms": [r for _ in LOSS_RATES for r in rtts],
            "measured_mbps": [c.measured for c in checks],
            "expected_mbps": [c.expected for c in checks],
            "relative_error": [c.error for c in checks],
        }
    )
    save_csv(data, ctx.out / "throughput_vs_rtt.csv")
    save_figure(_figure(data), ctx.out / "fig4_mathis.png")
    worst = data.loc[data["relative_error"].abs().idxmax()]
    return Report(
        NAME,
        TITLE,
        'Fig. 4 of the 2020 INET QUIC paper (section IV.B, "Lossy Link Case")',
        checks,
        figures=[
            (
                "fig4_mathis.png",
                "Throughput vs RTT per loss rate: dots measured, lines eq. (2) "
                "(log scale); below, the relative error",
            )
        ],
        csvs=[("throughput_vs_rtt.csv", "per (p, RTT): measured and expected throughput (Mbit/s)")],
        explanation=EXPLANATION
        + f"\nLargest deviation: {worst.relative_error:+.2%} at RTT {worst.rtt_ms:g} ms, p = {worst.p:g}.\n",
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
Scenario `mathis.toml` (OLD `lossy_link/mathis_validation.ini`): one saturated QUIC NewReno
sender with exact (byte-counting) congestion-avoidance increase, every packet acked (ack ratio
1:1), 100 Gbit/s links so the bottleneck never queues, and periodic loss on the forward
direction only: `every = 1/p` packets delivered, then one dropped, as the paper's runs lost
packets (the 2020 model's periodic `sendLossRate`, like INET's `PeriodicLossChannel`, drops a
packet when its count exceeds 1/p), so one packet in 1/p + 1 is lost and the theory is
evaluated at that rate, 1/(1/p + 1) (for these p, 0.0025-0.05 % above the throughput at the
nominal p). RTTs as in the paper, 2, 4, 8, 12, ..., 100 ms (26 values; `--quick`: 4), for
p = 0.1 %, 0.02 % and 0.005 %. The one-way delay of the bottleneck is RTT / 2.

Each point is `quicksim.validation.mathis(rtt, p)`, run as one point of a `quicksim.sweep` (so
all cores work, and `--scheduler` spreads the points over a Dask cluster). It runs long enough
for 24 loss cycles after slow start and measures the QUIC bytes received between the loss
events of the second half of the run, i.e. over whole sawtooth cycles: a window that cut a
cycle would be biased by where in the sawtooth it started, and the overshoot after slow start
takes several halvings to decay.

Theory, eq. (2) (Mathis et al. 1997, with C = sqrt(3/2) for halving and an ack per packet):
throughput = maxQuicPacketSize / RTT x sqrt(3 / (2 p)), maxQuicPacketSize = 1252 B at MTU 1280.
The tolerance is 5 %: the formula is a fluid approximation of a sawtooth whose window takes
integer steps (at p = 0.1 % the window peaks near sqrt(8/(3p)) = 52 packets).
"""


def _figure(data: Any) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    from ..theory import mathis_mbps

    fig = Figure(figsize=(8, 6.5), layout="constrained")
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    grid = np.linspace(1.5, 102, 400)
    for (p, part), color in zip(
        data.groupby("p", sort=False), ("tab:blue", "tab:orange", "tab:green"), strict=False
    ):
        top.plot(
            grid,
            mathis_mbps(MSS, grid / 1e3, p),
            color=color,
            linewidth=1.2,
            label=f"eq. (2), p = {p * 100:g} %",
        )
        top.plot(
            part["rtt_ms"],
            part["measured_mbps"],
            "o",
            color=color,
            markersize=4,
            markeredgecolor="black",
            markeredgewidth=0.4,
            label=f"measured, p = {p * 100:g} %",
        )
        bottom.plot(
            part["rtt_ms"], part["relative_error"] * 100, "o-", color=color, markersize=3, linewidth=0.8
        )
    top.set_yscale("log")
    top.set_ylabel("throughput (Mbit/s)")
    top.set_title("Lossy link case: periodic loss, 100 Gbit/s (paper Fig. 4)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(fontsize="small", ncols=2)
    bottom.axhspan(-5, 5, color="0.9", label="tolerance ±5 %")
    bottom.axhline(0, color="black", linewidth=0.8)
    bottom.set_ylabel("error (%)")
    bottom.set_xlabel("RTT (ms)")
    bottom.set_xlim(0, 103)
    bottom.grid(True, alpha=0.3)
    bottom.legend(fontsize="small", loc="lower right")
    return fig
