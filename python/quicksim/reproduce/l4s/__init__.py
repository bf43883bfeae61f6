"""L4S: DualPI2 (RFC 9332) with Prague and CUBIC flows over TCP and QUIC, n + m flow mixes,
an unresponsive ECT(1) source (overload), Prague's RTT independence, and DCTCP on a step-marking
queue against the DCTCP paper's analysis. Parts whose controller is not built in (`prague`,
`dctcp`) are left out of the report with a line saying so."""

from __future__ import annotations

import math
import time
from typing import Any

from ...validation import Check
from ..common import Context, Report, md_table, save_csv
from . import plots, theory
from .cases import Flow, scenario, summarize
from .dctcp import PERIOD_NOTE, dctcp_part

NAME = "l4s"
TITLE = "L4S: DualPI2 with Prague and CUBIC, overload, RTT independence; DCTCP against its analysis"

#: The DualPI2 queue: Linux's defaults (docs/queue-disciplines.md), 10000 packets.
DUALPI2: dict[str, Any] = {"kind": "dualpi2"}
RATES_BPS = (40e6, 100e6)
RTTS_S = (0.005, 0.010, 0.020, 0.050, 0.100)
QUICK = {"rates": (40e6,), "rtts": (0.020,), "duration": 8.0, "mix": ((2, 2),)}
FULL = {
    "rates": RATES_BPS,
    "rtts": RTTS_S,
    "duration": 30.0,
    "mix": ((1, 1), (1, 5), (5, 1), (5, 5), (10, 10)),
}
#: Measurements start after slow start and PI2's first convergence.
WARMUP_S = 3.0
#: Utilization at least this (the issue's 95 %).
MIN_UTILIZATION = 0.95
#: A flow is starved below this share of the per-flow fair rate.
STARVED_SHARE = 0.1
#: Classic queueing delay around PI2's 15 ms target: the mean of the Classic packets' queueing
#: delay within +-33 % (PI2 holds the *head* sojourn sampled every 16 ms at the target; the
#: per-packet mean follows CUBIC's sawtooth around it).
CLASSIC_TOL = 0.33


def builtin(name: str) -> bool:
    """Whether controller `name` is built into this core."""
    from ..._native import load_core

    return name in load_core().builtin_controllers()


def _run(sc: dict[str, Any]) -> Any:
    from ... import api

    return api.run(sc)


def pair_part(ctx: Context, cfg: dict[str, Any], checks: list[Check], rows: list[dict[str, Any]]) -> None:
    """One Prague and one CUBIC flow (both TCP, or both QUIC) per rate and base RTT."""
    dur = cfg["duration"]
    for transport in ("tcp", "quic"):
        for rate in cfg["rates"]:
            for rtt in cfg["rtts"]:
                flows = [Flow("prague", transport, "prague"), Flow("cubic", transport, "cubic")]
                r = _run(scenario(f"l4s-pair-{transport}", rate, rtt, flows, DUALPI2, dur))
                s = summarize(r, flows, rate, WARMUP_S, dur)
                row = {"transport": transport, "rate_mbps": rate / 1e6, "rtt_ms": rtt * 1e3, **s}
                row["ratio"] = s["prague.mbps"] / max(s["cubic.mbps"], 1e-9)
                rows.append(row)
                tag = f"{transport} {rate / 1e6:g} Mbit/s RTT {rtt * 1e3:g} ms"
                checks += [
                    Check(
                        f"utilization, {tag}",
                        s["utilization"],
                        MIN_UTILIZATION,
                        0,
                        "",
                        kind="min",
                        note="bottleneck frame bytes / capacity after 3 s",
                    ),
                    Check(
                        f"Classic mean queueing delay, {tag}",
                        s.get("cubic.delay_mean_ms", math.nan),
                        theory.CLASSIC_TARGET_MS,
                        CLASSIC_TOL,
                        "ms",
                        note="CUBIC packets' one-way delay minus its least; PI2 target 15 ms",
                    ),
                    Check(
                        f"L4S p99 queueing delay, {tag}",
                        s.get("prague.delay_p99_ms", math.nan),
                        theory.L4S_P99_MAX_MS,
                        0,
                        "ms",
                        kind="max",
                        note="Prague packets; the DualQ paper's p99 < 2 ms",
                    ),
                    Check(
                        f"Prague : CUBIC rate ratio >= 1/2, {tag}",
                        row["ratio"],
                        theory.RATIO_RANGE[0],
                        0,
                        "",
                        kind="min",
                        note="design range 1/2..2 (RFC 9332 2.1, k = 2: 0.82 in Reno mode)",
                    ),
                    Check(
                        f"Prague : CUBIC rate ratio <= 2, {tag}",
                        row["ratio"],
                        theory.RATIO_RANGE[1],
                        0,
                        "",
                        kind="max",
                        note="design range 1/2..2",
                    ),
                ]


def mix_part(ctx: Context, cfg: dict[str, Any], checks: list[Check], rows: list[dict[str, Any]]) -> None:
    """n Prague + m CUBIC TCP flows on 100 Mbit/s (quick: 40), RTT 20 ms."""
    rate = 100e6 if not ctx.quick else 40e6
    dur = cfg["duration"]
    for n, m in cfg["mix"]:
        flows = [Flow(f"prague{i}", "tcp", "prague") for i in range(n)]
        flows += [Flow(f"cubic{i}", "tcp", "cubic") for i in range(m)]
        r = _run(scenario(f"l4s-mix-{n}-{m}", rate, 0.020, flows, DUALPI2, dur))
        s = summarize(r, flows, rate, WARMUP_S, dur)
        per_l = [s[f"prague{i}.mbps"] for i in range(n)]
        per_c = [s[f"cubic{i}.mbps"] for i in range(m)]
        fair = rate / 1e6 / (n + m)
        ratio = (sum(per_l) / n) / max(sum(per_c) / m, 1e-9)
        l_p99 = max(s.get(f"prague{i}.delay_p99_ms", math.nan) for i in range(n))
        c_mean = sum(s.get(f"cubic{i}.delay_mean_ms", math.nan) for i in range(m)) / m
        rows.append(
            {
                "n_prague": n,
                "m_cubic": m,
                "utilization": s["utilization"],
                "prague_mean_mbps": sum(per_l) / n,
                "cubic_mean_mbps": sum(per_c) / m,
                "min_flow_mbps": min(per_l + per_c),
                "ratio": ratio,
                "l4s_p99_ms": l_p99,
                "classic_mean_ms": c_mean,
            }
        )
        tag = f"{n} Prague + {m} CUBIC"
        checks += [
            Check(f"utilization, {tag}", s["utilization"], MIN_UTILIZATION, 0, "", kind="min"),
            Check(
                f"no flow starved, {tag}",
                min(per_l + per_c) / fair,
                STARVED_SHARE,
                0,
                "of fair share",
                kind="min",
                note="the slowest flow's rate over rate / (n + m)",
            ),
            Check(
                f"per-flow rate ratio Prague : CUBIC in 1/2..2, {tag}",
                ratio,
                1.0,
                1.0,
                "",
                note="mean per-flow rates; within the design range means error in -50 %..+100 %",
            ),
            Check(f"L4S p99 queueing delay, {tag}", l_p99, theory.L4S_P99_MAX_MS, 0, "ms", kind="max"),
        ]


def overload_part(ctx: Context, cfg: dict[str, Any], checks: list[Check]) -> dict[str, Any]:
    """An unresponsive ECT(1) UDP source at 1.5 times the link rate beside a CUBIC TCP flow (and
    a Prague flow when built in), 40 Mbit/s, RTT 20 ms."""
    rate, dur = 40e6, cfg["duration"]
    flows = [Flow("udp", "udp", udp_bps=1.5 * rate, ecn="ect1", start_s=1.0), Flow("cubic", "tcp", "cubic")]
    if builtin("prague"):
        flows.append(Flow("prague", "tcp", "prague"))
    r = _run(scenario("l4s-overload", rate, 0.020, flows, DUALPI2, dur))
    s = summarize(r, flows, rate, WARMUP_S, dur)
    from .cases import drop_fraction

    udp_drop = drop_fraction(r, "udp", WARMUP_S, dur)
    # What must be dropped of the UDP source for the others' rates to fit: 1 - (C - others) / 1.5C.
    others = sum(s[f"{f.name}.mbps"] for f in flows if f.name != "udp") * 1e6
    needed = 1 - (rate * 0.985 - others) / (1.5 * rate)  # frames carry 7 of 1507 B of PPP
    cubic_drop = drop_fraction(r, "cubic", WARMUP_S, dur)
    checks += [
        Check("overload: utilization", s["utilization"], MIN_UTILIZATION, 0, "", kind="min"),
        Check(
            "overload: ECT(1) source's drop fraction",
            udp_drop,
            needed,
            0.05,
            "",
            note="drops / datagrams sent vs what the others' measured rates leave: 1 - (C - others) / 1.5 C",
        ),
        Check(
            "overload: L queue p99 delay within twice the PI2 target",
            s.get("udp.delay_p99_ms", math.nan),
            2 * theory.CLASSIC_TARGET_MS,
            0,
            "ms",
            kind="max",
            note="drop_on_overload: PI2 (on the larger head delay) drops the source down to the "
            "link rate instead of letting the L queue fill its 10000 packets (3 s at 40 Mbit/s)",
        ),
    ]
    plots.overload_figure(r, flows, rate, ctx.out / "overload.png")
    return {"udp_drop": udp_drop, "needed_drop": needed, "cubic_drop": cubic_drop, **s}


def rtt_part(ctx: Context, cfg: dict[str, Any], checks: list[Check], rows: list[dict[str, Any]]) -> None:
    """Two Prague TCP flows with base RTTs 10 and 80 ms, with and without RTT independence."""
    rate, dur = 40e6, max(cfg["duration"], 20.0)
    for rule in (True, False):
        flows = [
            Flow("short", "tcp", "prague", {"rtt_independence": rule}),
            Flow("long", "tcp", "prague", {"rtt_independence": rule}, access_ms=35.0),
        ]
        r = _run(scenario("l4s-rtt", rate, 0.010, flows, DUALPI2, dur))
        s = summarize(r, flows, rate, 5.0, dur)
        ratio = s["short.mbps"] / max(s["long.mbps"], 1e-9)
        rows.append(
            {
                "rtt_independence": rule,
                "short_mbps": s["short.mbps"],
                "long_mbps": s["long.mbps"],
                "ratio": ratio,
            }
        )
        if rule:
            checks.append(
                Check(
                    "RTT independence on: rate ratio 10 ms : 80 ms",
                    ratio,
                    1.0,
                    0.5,
                    "",
                    note="near 1 (within 0.5..1.5): both flows behave as if their RTT were 25 ms",
                )
            )
        else:
            checks.append(
                Check(
                    "RTT independence off: rate ratio 10 ms : 80 ms",
                    ratio,
                    8.0,
                    0.5,
                    "",
                    note="equal marking, W = 2/p each: rate ~ 1/RTT, ratio = 80/10 = 8 (within 4..12)",
                )
            )


def run(ctx: Context) -> Report:
    """Every part whose controllers are built in."""
    import pandas as pd

    t = time.perf_counter()
    cfg = QUICK if ctx.quick else FULL
    checks: list[Check] = []
    sections: list[str] = []
    figures: list[tuple[str, str]] = []
    csvs: list[tuple[str, str]] = []
    missing = [c for c in ("prague", "dctcp") if not builtin(c)]
    if missing:
        sections.append(
            "## Left out\n\nThis core has no "
            + " or ".join(f"`{c}`" for c in missing)
            + " controller: the parts that need it are not run."
        )
    if builtin("prague"):
        pair_rows: list[dict[str, Any]] = []
        pair_part(ctx, cfg, checks, pair_rows)
        pairs = pd.DataFrame(pair_rows)
        save_csv(pairs, ctx.out / "pair.csv")
        plots.pair_figure(pairs, ctx.out / "pair.png")
        figures.append(
            (
                "pair.png",
                "One Prague and one CUBIC flow through DualPI2: queueing delays, rate ratio and "
                "utilization against the base RTT",
            )
        )
        csvs.append(("pair.csv", "per transport, rate and RTT: utilization, rates, per-flow delays"))
        mix_rows: list[dict[str, Any]] = []
        mix_part(ctx, cfg, checks, mix_rows)
        mix = pd.DataFrame(mix_rows)
        save_csv(mix, ctx.out / "mix.csv")
        plots.mix_figure(mix, ctx.out / "mix.png")
        figures.append(("mix.png", "n Prague + m CUBIC flows: per-flow rates and queueing delays"))
        csvs.append(("mix.csv", "per mix: utilization, per-flow mean rates, delays"))
        if not ctx.quick:
            rtt_rows: list[dict[str, Any]] = []
            rtt_part(ctx, cfg, checks, rtt_rows)
            save_csv(pd.DataFrame(rtt_rows), ctx.out / "rtt_independence.csv")
            csvs.append(
                ("rtt_independence.csv", "two Prague flows at 10 and 80 ms, with and without the rule")
            )
    ov = overload_part(ctx, cfg, checks)
    figures.append(
        (
            "overload.png",
            "An unresponsive ECT(1) source at 1.5x the link rate beside CUBIC: rates and queueing delays",
        )
    )
    sections.append(
        "## Overload\n\n"
        + md_table(
            ["quantity", "value"],
            [
                ["ECT(1) source drop fraction", f"{ov['udp_drop']:.3f}"],
                ["needed to leave the others their rates", f"{ov['needed_drop']:.3f}"],
                ["CUBIC's drop fraction", f"{ov['cubic_drop']:.3f}"],
                ["CUBIC rate", f"{ov['cubic.mbps']:.2f} Mbit/s"],
                ["utilization", f"{ov['utilization']:.3f}"],
            ],
        )
    )
    if builtin("dctcp"):
        d_rows: list[dict[str, Any]] = []
        dctcp_part(ctx, checks, d_rows)
        frame = pd.DataFrame(d_rows)
        save_csv(frame, ctx.out / "dctcp.csv")
        figures.append(
            (
                "dctcp_queue.png",
                "DCTCP on a step-marking queue: the queue against the paper's Q_max and Q_min",
            )
        )
        csvs.append(("dctcp.csv", "per N: measured and analysed queue amplitude, period, extremes"))
        sections.append(
            "## DCTCP against its analysis\n\n"
            + md_table(list(frame.columns), frame.round(3).values.tolist())
            + "\n\n"
            + PERIOD_NOTE
        )
    sections.append(
        "## Published figures\n\n"
        + md_table(["quantity", "published", "source"], [list(p) for p in theory.PUBLISHED])
    )
    return Report(
        NAME,
        TITLE,
        "RFC 9332 (DualQ Coupled AQM) and its PI2 base AQM (De Schepper et al., CoNEXT 2016), the "
        f"L4S team's testbed measurements ({theory.DUALQ_PAPER}), and Alizadeh et al., "
        "*Data Center TCP*, SIGCOMM 2010, section 3.3",
        checks,
        figures=figures,
        csvs=csvs,
        sections=sections,
        explanation=EXPLANATION,
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = r"""
Every run is a dumbbell, one sender/receiver pair per flow, access links of 1 Gbit/s; the
bottleneck (router1 -> router2) runs `dualpi2` with its defaults (Linux's: target 15 ms,
tupdate 16 ms, alpha 0.16 Hz, beta 3.2 Hz, k = 2, a 1 ms step for L4S, TS-FIFO with tshift
50 ms; `docs/queue-disciplines.md`), or `step` for DCTCP. Measurements start after 3 s. A
flow's queueing delay is each data packet's one-way delay minus the flow's smallest
(`run.record.packets`); as every flow's packets go to one queue by their ECN codepoint,
Prague's packets measure the L queue and CUBIC's the C queue.

**Coupling and the rate ratio.** A scalable flow's window is 2/p_L, a Reno-friendly Classic
flow's 1.22/sqrt(p_C) (Mathis); the coupling sets p_L = k sqrt(p_C), so with equal RTTs the
ratio is 2/(1.22 k) = 0.82 at k = 2 (RFC 9332 section 2.1). CUBIC beyond its Reno-friendly
region grows faster than Reno and takes more, and Prague's RTT independence makes it behave as
at 25 ms whatever its RTT: the band the coupling is designed to hold is a factor of 2 either way
of parity, the range the checks use.

**Overload.** An ECT(1) source that ignores marks fills the L queue; TS-FIFO serves C only once
its head is 50 ms older than L's, C's head sojourn grows, PI2 raises p' until p_C >= p_Cmax =
1/k^2 and, with `drop_on_overload`, L packets are then dropped with p_C (and all the rest
marked) and ECN-capable C packets dropped instead of marked. The check compares the source's
drop fraction with what must be dropped of it for the other flows' measured rates to fit.

**DCTCP.** With N synchronized flows on a step at K packets and a path of C x RTT packets, the
DCTCP paper (section 3.3) derives the queue's sawtooth: amplitude A = (1/2) sqrt(2 N (C RTT +
K)) (eq. 9), period T_C = (1/2) sqrt(2 (C RTT + K) / N) RTTs (eq. 10), Q_max = K + N and
Q_min = Q_max - A (eq. 11). The measured amplitude is the spread between the 2nd and 98th
percentiles of the queue length sampled every 0.1 ms, the period the strongest component of its
spectrum.
"""
