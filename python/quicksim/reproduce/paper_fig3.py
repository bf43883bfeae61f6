"""Paper Fig. 3 (IV.A, link bandwidth): a saturated QUIC sender fills a 100 Mbit/s link; the
QUIC-layer throughput at the receiver equals (MTU - 28) / (MTU + 7) x 100 Mbit/s, eq. (1)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .. import units, validation
from .common import Context, Report, check_sweep, check_values, save_csv, save_figure, sweep_checks

if TYPE_CHECKING:
    from ..results import Result

NAME = "paper-fig3"
TITLE = "link bandwidth vs MTU (Fig. 3)"
MTUS = (1280, 1452, 1500, 9000)
QUICK_MTUS = (1280, 9000)


def link_bandwidth_check(result: Result) -> dict[str, float]:
    """Sweep metric: validation.link_bandwidth at the point's MTU."""
    mtu = units.bytes_(result.scenario["dumbbell"]["mtu"])
    return check_values(validation.link_bandwidth(mtu))


def run(ctx: Context) -> Report:
    """Measure every MTU, plot measured vs eq. (1), write the report."""
    import pandas as pd

    t = time.perf_counter()
    mtus = QUICK_MTUS if ctx.quick else MTUS
    sw = check_sweep(ctx, "link-bandwidth", [{"dumbbell.mtu": f"{m}B"} for m in mtus], link_bandwidth_check)
    checks = sweep_checks(
        sw,
        "link_bandwidth_check",
        lambda p: f"link-bandwidth mtu={str(p['dumbbell.mtu']).removesuffix('B')}",
        "Mbit/s",
        "QUIC packet bytes received 3-8 s vs (MTU-28)/(MTU+7) x 100 Mbit/s",
    )
    data = pd.DataFrame(
        {
            "mtu_bytes": list(mtus),
            "measured_mbps": [c.measured for c in checks],
            "expected_mbps": [c.expected for c in checks],
            "relative_error": [c.error for c in checks],
        }
    )
    save_csv(data, ctx.out / "throughput_vs_mtu.csv")
    save_figure(_figure(data), ctx.out / "fig3_throughput_vs_mtu.png")
    return Report(
        NAME,
        TITLE,
        'Fig. 3 of the 2020 INET QUIC paper (section IV.A, "Link Bandwidth Case")',
        checks,
        figures=[
            (
                "fig3_throughput_vs_mtu.png",
                "QUIC-layer throughput at the receiver vs MTU; bars: measured, black ticks: eq. (1)",
            )
        ],
        csvs=[("throughput_vs_mtu.csv", "per MTU: measured and expected throughput (Mbit/s)")],
        explanation=EXPLANATION,
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
Scenario `link-bandwidth.toml` (OLD `use_link_bandwidth/quicTpByMTU.ini`): one saturated QUIC
NewReno sender, a 100 Mbit/s, 1 ms bottleneck with a 23-packet DropTail queue, ideal access links.
The measurement is `quicksim.validation.link_bandwidth`: QUIC packet bytes received (IP bytes
minus 20 B IP and 8 B UDP header per packet) from 3 s to 8 s, as in the paper (the first 3 s,
with slow start, are left out).

Theory, eq. (1): a saturated link carries frames of MTU + 7 B (PPP header and trailer) back to
back, and each carries MTU - 28 B of QUIC packet, so the QUIC-layer throughput is
(MTU - 28) / (MTU + 7) x 100 Mbit/s: 97.28 Mbit/s at 1280 B, 99.61 Mbit/s at 9000 B.
The tolerance (0.5 %) allows for the 5 s window catching a fraction of a sawtooth in which the
queue drains; the link never idles.
"""


def _figure(data: Any) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.2), layout="constrained")
    ax = fig.add_subplot()
    x = range(len(data))
    bars = ax.bar(x, data["measured_mbps"], width=0.6, color="tab:blue", label="measured (QUIC layer)")
    ax.hlines(
        data["expected_mbps"],
        [i - 0.35 for i in x],
        [i + 0.35 for i in x],
        colors="black",
        linewidth=2.5,
        label="theory (MTU-28)/(MTU+7) x 100 Mbit/s",
    )
    for bar, m, e in zip(bars, data["measured_mbps"], data["expected_mbps"], strict=True):
        ax.annotate(
            f"{m:.2f}\n({m / e - 1:+.2%})",
            (bar.get_x() + bar.get_width() / 2, m),
            xytext=(0, -30),
            textcoords="offset points",
            ha="center",
            color="white",
            fontsize=9,
        )
    ax.set_xticks(list(x), [f"{m} B" for m in data["mtu_bytes"]])
    ax.set_xlabel("MTU")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_ylim(90, 101)
    ax.set_title("Link bandwidth case: 100 Mbit/s bottleneck (paper Fig. 3)")
    ax.grid(True, axis="y", alpha=0.4)
    ax.legend(loc="lower right", fontsize="small")
    return fig
