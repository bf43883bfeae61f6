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
from .dctcp import PERIOD_NOTE, dctcp_part, ns3_part

NAME = "l4s"
TITLE = "L4S: DualPI2 with Prague and CUBIC, overload, RTT independence; DCTCP against its analysis"

#: The DualPI2 queue: Linux's defaults (docs/queue-disciplines.md), 10000 packets.
DUALPI2: dict[str, Any] = {"kind": "dualpi2"}
RATES_BPS = (40e6, 100e6)
RTTS_S = (0.005, 0.010, 0.020, 0.050, 0.100)
QUICK = {"rates": (40e6,), "rtts": (0.020,), "duration": 15.0, "mix": ((2, 2),)}
FULL = {
    "rates": RATES_BPS,
    "rtts": RTTS_S,
    "duration": 30.0,
    "mix": ((1, 1), (1, 5), (5, 1), (5, 5), (10, 10)),
}
#: Measurements start after slow start and PI2's first convergence.
WARMUP_S = 3.0
#: At this base RTT and above, a pair run lasts three times as long and is measured over its
#: last two thirds (30-90 s in full mode). Prague leaves slow start at its first step mark, a
#: millisecond of L queue, with a window far below its share (measured at 3 s: 52 packets at
#: 40 Mbit/s, 115 at 100 Mbit/s, against shares of about 166 and 415), then adds one segment
#: per 100 ms round (Linux's Prague as well: paced chirping, the L4S team's remedy, Misund and
#: Briscoe, "Paced Chirping: Rapid flow start with very low queuing delay", IEEE Global Internet
#: Symposium 2019, is an off-by-default patch). The ramp takes (share - exit window) x RTT: 12 s
#: at 40 Mbit/s, 31 s at 100 Mbit/s, so a 3-30 s window measured that ramp (ratios 0.32-0.89,
#: utilization 94.5-96.5 %), not the coupling's balance; the 3-30 s numbers stay in pair.csv.
LONG_RTT_S = 0.1

#: Utilization at least this (the issue's 95 %).
MIN_UTILIZATION = 0.95
#: A flow is starved below this share of the per-flow fair rate.
STARVED_SHARE = 0.1
#: Classic queueing delay around PI2's 15 ms target: the mean sojourn of the C queue's served
#: packets within +-33 % (PI2 holds the *head* sojourn sampled every 16 ms at the target; the
#: per-packet mean follows CUBIC's sawtooth around it).
CLASSIC_TOL = 0.33


def pair_window(rtt_s: float, duration_s: float) -> tuple[float, float, float]:
    """(run length, measurement start, end) of a pair run at base RTT `rtt_s`."""
    if rtt_s >= LONG_RTT_S:
        return 3 * duration_s, duration_s, 3 * duration_s
    return duration_s, WARMUP_S, duration_s


def builtin(name: str) -> bool:
    """Whether controller `name` is built into this core."""
    from ..._native import load_core

    return name in load_core().builtin_controllers()


def _run(sc: dict[str, Any]) -> Any:
    from ... import api

    return api.run(sc)


#: CUBIC's multiplicative decrease (RFC 9438: beta = 0.7).
CUBIC_BETA = 0.7


def classic_delay_check(tag: str, rtt_s: float, mean_ms: float) -> Check:
    """The Classic queue's mean delay against PI2's target where one CUBIC flow lets PI2 hold it:
    a back-off sheds (1 - beta) of a window of C (RTT + q) and the queue q = target survives it
    only while (1 - beta)(RTT + target) < target, RTT < 35 ms. Beyond, each back-off empties
    the queue until the window regrows, and the mean is below the target (checked as a bound)."""
    target = theory.CLASSIC_TARGET_MS
    if (1 - CUBIC_BETA) * (rtt_s * 1e3 + target) < target:
        return Check(
            f"Classic mean queueing delay, {tag}",
            mean_ms,
            target,
            CLASSIC_TOL,
            "ms",
            note="the C queue's served packets (queues.c_sojourn_s); PI2 target 15 ms",
        )
    return Check(
        f"Classic mean queueing delay at most the target, {tag}",
        mean_ms,
        target,
        0,
        "ms",
        kind="max",
        note="RTT > 35 ms: a CUBIC back-off (30 % of C (RTT + 15 ms)) empties the 15 ms queue",
    )


def pair_part(ctx: Context, cfg: dict[str, Any], checks: list[Check], rows: list[dict[str, Any]]) -> None:
    """One Prague and one CUBIC flow (both TCP, or both QUIC) per rate and base RTT."""
    dur = cfg["duration"]
    for transport in ("tcp", "quic"):
        for rate in cfg["rates"]:
            for rtt in cfg["rtts"]:
                flows = [Flow("prague", transport, "prague"), Flow("cubic", transport, "cubic")]
                length, t0, t1 = pair_window(rtt, dur)
                r = _run(scenario(f"l4s-pair-{transport}", rate, rtt, flows, DUALPI2, length))
                s = summarize(r, flows, rate, t0, t1)
                row = {"transport": transport, "rate_mbps": rate / 1e6, "rtt_ms": rtt * 1e3, "t0_s": t0, **s}
                row["ratio"] = s["prague.mbps"] / max(s["cubic.mbps"], 1e-9)
                if t0 != WARMUP_S:
                    # The slow-start ramp the first window of the run measures (not checked).
                    early = summarize(r, flows, rate, WARMUP_S, dur)
                    row["ratio_3_30s"] = early["prague.mbps"] / max(early["cubic.mbps"], 1e-9)
                    row["utilization_3_30s"] = early["utilization"]
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
                        note=f"bottleneck frame bytes / capacity over {t0:g}-{t1:g} s",
                    ),
                    classic_delay_check(tag, rtt, s.get("c_queue.delay_mean_ms", math.nan)),
                    Check(
                        f"L4S p99 queueing delay, {tag}",
                        s.get("l_queue.delay_p99_ms", math.nan),
                        theory.L4S_P99_MAX_MS,
                        0,
                        "ms",
                        kind="max",
                        note="the L queue's served packets (queues.l_sojourn_s); DualQ paper: p99 < 2 ms",
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
        # The two queues' own served packets (every Prague flow is in L, every CUBIC one in C).
        l_p99 = s.get("l_queue.delay_p99_ms", math.nan)
        c_mean = s.get("c_queue.delay_mean_ms", math.nan)
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
            Check(
                f"L4S p99 queueing delay, {tag}",
                l_p99,
                theory.L4S_P99_MAX_MS,
                0,
                "ms",
                kind="max",
                note="the L queue's served packets (queues.l_sojourn_s)",
            ),
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
            s.get("l_queue.delay_p99_ms", math.nan),
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


#: Prague's RTT independence target R' (draft-briscoe-iccrg-prague-congestion-control, Linux
#: `prague_rtt_target`): a flow with a shorter RTT grows as if its RTT were R'; longer ones keep
#: their own.
R_PRIME_MS = 25.0
#: The RTT pairs (ms): both below R' (the rule should equalize them), and the issue's 10 : 80.
RTT_PAIRS = ((5.0, 20.0), (10.0, 80.0))


def rtt_part(ctx: Context, cfg: dict[str, Any], checks: list[Check], rows: list[dict[str, Any]]) -> None:
    """Two Prague TCP flows with different base RTTs, with and without RTT independence.

    Without the rule the measured ratio r_off = (RTT_long / RTT_short)^gamma gives gamma; with it
    the same law over the RTTs the rule makes them behave as, max(RTT, R'), predicts r_on.
    `rtt_transition_rounds = 0`: Linux's 500 rounds after slow start before the rule applies
    would be 40 s at 80 ms, longer than the run."""
    rate, dur = 40e6, max(cfg["duration"], 20.0)
    for short, long in RTT_PAIRS:
        ratio = {}
        for rule in (True, False):
            cc = {"rtt_independence": rule, "rtt_transition_rounds": 0}
            flows = [
                Flow("short", "tcp", "prague", cc),
                Flow("long", "tcp", "prague", cc, access_ms=(long - short) / 2),
            ]
            r = _run(scenario("l4s-rtt", rate, short / 1e3, flows, DUALPI2, dur))
            s = summarize(r, flows, rate, 5.0, dur)
            ratio[rule] = s["short.mbps"] / max(s["long.mbps"], 1e-9)
            rows.append(
                {
                    "rtt_short_ms": short,
                    "rtt_long_ms": long,
                    "rtt_independence": rule,
                    "short_mbps": s["short.mbps"],
                    "long_mbps": s["long.mbps"],
                    "ratio": ratio[rule],
                }
            )
        gamma = math.log(ratio[False]) / math.log(long / short)
        eff = max(long, R_PRIME_MS) / max(short, R_PRIME_MS)
        rows[-1]["gamma"] = rows[-2]["gamma"] = gamma
        tag = f"{short:g} ms : {long:g} ms"
        checks += [
            Check(
                f"RTT independence off: rate ratio {tag} at least the RTT ratio",
                ratio[False],
                long / short,
                0,
                "",
                kind="min",
                note=f"without the rule: rate ~ 1/RTT^gamma, gamma >= 1 (measured {gamma:.2f})",
            ),
            Check(
                f"RTT independence on: rate ratio {tag}",
                ratio[True],
                eff**gamma,
                0.20,
                "",
                note=f"(max(RTT_long, R') / max(RTT_short, R'))^gamma = {eff:.2f}^{gamma:.2f}, R' = 25 ms",
            ),
        ]


NS3_NOTE = (
    "The same dumbbell as tools/ns3/dctcp.cc (quicksim/scenarios/dctcp-ns3.toml: 100 Mbit/s, "
    "RTT 12 ms, K = 20) with 2 and 10 flows, through the RED step marker that file maps ns-3's "
    "onto and (2 flows) through `step` with k = 19 (the same marking rule). Goodput, the queue's "
    "mean and its standard deviation (the oscillation's amplitude, as a continuous measure) are "
    "checked within 5 % as means over runs at bottleneck delays 4.99, 5 and 5.01 ms on both sides "
    "(one row per run, then their mean); p95 - p5, counted as dctcp.cc counts it, is "
    "integer-valued (one packet is 4-9 % of it) and is reported. Both sides count the packets "
    "waiting in the marking queue: "
    "ns-3's RED sees only its own queue, with one more packet in the device queue under it, so "
    "each side's count is measured from its own marking threshold. See the DCTCP paragraph below "
    "for the mechanism of the remaining differences."
)


def side_by_side(pairs: Any) -> str:
    """The published DualQ figures beside the ranges measured over the pair runs."""

    def span(col: str, sel: Any = None) -> str:
        v = pairs[col] if sel is None else pairs.loc[sel, col]
        return f"{v.min():.3g} - {v.max():.3g}"

    short = pairs["rtt_ms"] <= 20
    rows = [
        [
            "L4S queueing delay, median",
            "0.1 - 0.3 ms",
            span("l_queue.delay_p50_ms") + " ms",
            theory.DUALQ_PAPER,
        ],
        ["L4S queueing delay, p99", "< 2 ms", span("l_queue.delay_p99_ms") + " ms", theory.DUALQ_PAPER],
        [
            "Classic queueing delay, mean (RTT <= 20 ms)",
            "15 ms (target)",
            span("c_queue.delay_mean_ms", short) + " ms",
            "RFC 9332 A.1",
        ],
        [
            "rate ratio Prague : CUBIC",
            f"{theory.coupled_rate_ratio():.2f} (Reno-friendly, equal RTTs)",
            span("ratio"),
            "RFC 9332 section 2.1",
        ],
    ]
    return "## Side by side with the published figures\n\n" + md_table(
        ["quantity", "published", "measured (all pair runs)", "source"], rows
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
                "One Prague and one CUBIC flow through DualPI2: the L and C queues' sojourn times, "
                "rate ratio and utilization against the base RTT (at 100 ms: over 30-90 s)",
            )
        )
        csvs.append(("pair.csv", "per transport, rate and RTT: utilization, rates, per-flow delays"))
        sections.append(side_by_side(pairs))
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
        n_rows: list[dict[str, Any]] = []
        ns3_part(ctx, checks, n_rows)
        ns3 = pd.DataFrame(n_rows)
        save_csv(ns3, ctx.out / "dctcp_ns3.csv")
        csvs.append(("dctcp_ns3.csv", "DCTCP beside ns-3.44 TcpDctcp: goodput, queue mean and spread"))
        sections.append(
            "## DCTCP beside ns-3.44's TcpDctcp\n\n"
            + md_table(list(ns3.columns), ns3.round(3).values.tolist())
            + "\n\n"
            + NS3_NOTE
        )
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
50 ms; `docs/queue-disciplines.md`), or `step` for DCTCP. Measurements start after 3 s
(the pair runs at 100 ms: 30-90 s, below). The L and C delays are the queues' own: the sojourn
time, enqueue to dequeue, of each packet a queue served (the `queues` table's DualPI2 columns
`l_sojourn_s` and `c_sojourn_s`, on the rows where that queue's length fell by one; a packet
that found the link idle is not among them). Per flow, each full-size data packet's one-way
delay minus the least of them (`run.record.packets`) gives the same L figures to 0.001 ms
(pair.csv has both, `l_queue.*` and `prague.*`). The least used to be taken over all of a
flow's packets, and TCP's 52-byte SYN crosses the bottleneck a frame time faster than a full
segment: every TCP delay carried that frame time (0.30 ms at 40 Mbit/s), which was the whole
of the earlier report's "TCP higher than QUIC" (p99 0.61 against 0.36 ms). Prague is the `prague`
controller (draft-briscoe-iccrg-prague-congestion-control-04 after Linux `tcp_prague.c`),
DCTCP `dctcp` (RFC 8257), both with AccECN feedback over TCP and ACK_ECN counts over QUIC.

**Coupling and the rate ratio.** A scalable flow's window is 2/p_L, a Reno-friendly Classic
flow's 1.22/sqrt(p_C) (Mathis); the coupling sets p_L = k sqrt(p_C), so with equal RTTs the
ratio is 2/(1.22 k) = 0.82 at k = 2 (RFC 9332 section 2.1). The design range checked is a
factor of 2 either way of parity. The measured ratios (0.67 - 1.93) differ from 0.82 by more
than 5 % nearly everywhere, by two mechanisms. (1) The RTTs are not equal: CUBIC's includes
the Classic queue (about 15 ms), Prague's the L queue (under 0.3 ms), and Prague's RTT
independence makes it grow as at max(RTT, 25 ms); in the 1/RTT model the ratio is 0.82 (RTT +
15 ms) / max(RTT, 25 ms): 0.66 at 5 ms, 0.82 at 10, 1.15 at 20, 1.07 at 50 ms, about the
measured shape (0.67-1.09, 1.08-1.74, 1.62-1.93, 0.86-1.65). (2) The coupling the flows meet
is weaker than k = 2: p_CL = k p' and p_C = p'^2 hold at each instant, but p' moves (PI2
follows CUBIC's sawtooth), and over time L's marks average k E[p'] while C's drops average
E[p'^2] > E[p']^2, so L's mark fraction over the square root of C's drop fraction (`k_effective`
in pair.csv, native step marks included) is 1.4-2.3 at RTTs up to 50 ms and 0.96-1.26 at
100 ms, where each CUBIC back-off empties the Classic queue and p' swings from 0 to its peak
in every epoch. With k_effective in place of k the Reno model's ratio is 2 / (1.22
k_effective) times mechanism (1)'s RTT factor: 1.23-1.88 at 100 ms against 1.42-1.86 measured
(30-90 s), each run 16-30 % off in one direction or the other: a model of the range, not of
each run. CUBIC is not Reno-friendly at 100 ms (its cubic-mode window, 1.054 (RTT/p)^0.75
by RFC 9438 section 5, exceeds 1.22/sqrt(p) above 52 packets), which pulls the other way; the
two are not separated here.

**The 100 ms row is a ramp in its first 30 s.** Over 3-30 s (the earlier report's window)
the 100 ms pair runs gave Prague : CUBIC 0.32-0.89 and utilization 94.5-96.5 % (three
failures). The sub-queue columns show why: Prague leaves slow start at its first step mark, a
millisecond of L queue, with a window of 52 packets at 40 Mbit/s and 115 at 100 Mbit/s
(measured at 3 s, TCP) against shares of about 166 and 415, then adds one segment per round
(9.6 packets/s at RTT 104 ms) with no marks at all (the L queue holds 0.1-0.3 packets) while
CUBIC sits on its plateau with the C queue empty (1 packet): the link is short of what
Prague has not yet claimed. The ramp takes (share - exit window) x RTT, 12 s and 31 s, so the
3-30 s window measured it, not the balance. Linux's Prague starts the same way; the L4S
team's remedy, paced chirping (Misund and Briscoe, "Paced Chirping: Rapid flow start with very
low queuing delay", IEEE Global Internet Symposium 2019), is an off-by-default patch and not
modelled. The 100 ms pair runs now last 90 s and are measured over 30-90 s (`pair_window`;
the 3-30 s ratio and utilization stay in pair.csv): ratio 1.42-1.86, utilization 98.9-99.2 %.
A 180 s TCP run in 15 s bins settles at 1.6-2.25 (100 Mbit/s) and 1.1-2.3 (40 Mbit/s): at
100 ms the balance sits near the top of the design range, and a window that ends in a high
epoch can leave it. The DualQ paper (arXiv:2209.01078) reports its rate balance as plots, not
numbers this report could set beside these; the published figures compared below are its
delays.

**Classic delay.** PI2 holds the Classic queue at 15 ms (14.5-14.9 ms measured at RTTs up
to 10 ms, 13.8-14.5 at 20) while one CUBIC back-off cannot empty it: a back-off sheds 30 % of a
window of C (RTT + 15 ms), more than the 15 ms queue when RTT > 35 ms. At 50 and 100 ms the
queue empties after each back-off and the mean is below the target (9.0-12.4 ms; checked as a
bound).

**L4S delay.** The published L4S figures (median 0.1-0.3 ms, p99 under 2 ms) are met: the
L queue's own p99 is 0.12-0.30 ms, its median 0.03-0.19 ms. The delay scales with a packet's
serialization time (0.30 ms at 40 Mbit/s, 0.12 ms at 100) rather than with the RTT: the p99 is
one frame time at each rate, over TCP and QUIC alike (0.293-0.299 and 0.118-0.120 ms): the
step marks at 1 ms of sojourn, and Prague holds the L queue at under a packet on average
(its packets wait at most for the one frame on the wire). So an L packet's sojourn is the rest
of the frame in service when it arrives: the paced packets arrive at times unrelated to the
frame boundaries, the rest is uniform on [0, one frame time], and its median is half a frame:
0.060 ms at 100 Mbit/s (pair.csv: 0.054-0.061 over TCP and over QUIC at 20-100 ms; QUIC 0.034
at 5 ms, 0.073 at 10) and 0.15 ms at 40 (0.149-0.194 at 10-100 ms, 0.086-0.087 at 5 ms), the
p99 0.99 of a frame. The published medians (0.1-0.3 ms) come from real senders, whose packets
leave the host in segmentation-offload bursts: each packet of a burst after the first waits
whole frame times behind the ones before it. Here each segment is paced out on its own, so the
medians at 100 Mbit/s sit below the published range by that mechanism (half a frame time
against a frame or more), not by a difference of the AQM; a model of offload bursts is not
part of this simulator.

**n + m mixes.** Utilization 1.0, the slowest flow at 62-80 % of the fair share, the
per-flow ratio 1.12-1.93 (mechanisms (1) and (2) above at 20 ms), the L queue's p99 0.12-0.36
ms with up to ten Prague flows, the C queue's mean 13.8-15.1 ms.

**RTT independence.** Without the rule, scalable flows share as rate ~ 1/RTT^gamma, and the
measured gamma is 1.79 (5 : 20 ms) and 1.74 (10 : 80 ms), not 1: the 1 ms step marks in
episodes, and a flow gets marks in every episode it has packets in, so the long-RTT flow is cut
about as often as the short one but regrows 8 times slower: Lakshman and Madhow's synchronized-
loss result (rate ~ 1/RTT^2 for AIMD, IEEE/ACM ToN 1997) is the limit, independent marks give
1. With the rule a flow below R' = 25 ms grows as if at 25 ms: 5 : 20 ms shares 0.95 (near 1,
as the draft intends), and 10 : 80 ms gives 7.17, the law (80/25)^1.74 = 7.53 predicts (-4.7 %):
the rule cannot equalize a flow above R'. Linux's 500 rounds before the rule applies
(`rtt_transition_rounds`) are set to 0: at 80 ms they would outlast the run. Over QUIC the same
pair (goodput over 5-20 s from the flows table, not checked) gives 5.6 with the rule and 37
without; TCP measured the same way gives 7.6 and 36.
Prague's pacing (draft section 2.5) is what makes the rule work: with `pacing =
false` the 10 : 80 ms ratio is 44 over TCP and 13 over QUIC, worse than without the rule,
because the 80 ms flow's unpaced bursts overrun the 1 ms step (3.3 packets at 40 Mbit/s) and
28 % of its packets are marked (TCP; 13 % over QUIC, whose ACKs are spread more evenly)
against 8 % of the 10 ms flow's.

**Overload.** An ECT(1) source that ignores marks fills the L queue; PI2 (on the larger of the
two head delays, as Linux) raises p' until p_C >= p_Cmax = 1/k^2 and, with
`drop_on_overload`, drops L packets with p_C (and marks the rest) and ECN-capable C packets
instead of marking them. The source is dropped down to what the link carries (drop fraction
within 5 % of 1 - (C - others) / 1.5 C) and its queue stays at the PI2 target, not at the
10000-packet limit. The responsive flows are starved (the figure): a source sending 1.5 times
the link rate takes it under any single-queue AQM, and RFC 9332's overload requirement is that
claiming ECT(1) gives it no advantage over that (both queues drop with the same p_C), not flow
isolation.

**DCTCP.** With N synchronized flows on a step at K packets and a path of C x RTT packets, the
DCTCP paper (section 3.3) derives the queue's sawtooth: amplitude A = (1/2) sqrt(2 N (C RTT +
K)) (eq. 9), period T_C = (1/2) sqrt(2 (C RTT + K) / N) RTTs (eq. 10), Q_max = K + N and
Q_min = Q_max - A (eq. 11). The measured amplitude is the spread between the 2nd and 98th
percentiles of the queue length sampled every 0.1 ms, the period the strongest component of its
spectrum, the RTT the base RTT plus the mean queue (12.1 ms). The receiver ACKs every packet, as
the analysis feeds each mark back at once (the paper's section 3.1 receiver in its simplest
form; delayed ACKs are its optimisation). The model cuts and grows as Linux does: the
(1 - alpha/2) window is a target that PRR reaches over the next round in TCP's CWR state, and
the window grows nothing in that round (`tcp_cong_control` calls no `cong_avoid` in a
reduction; ns-3's `EnterCwr` the same). The fluid model grows one packet per RTT all through
the cycle, so the expected period is T_C plus that round: 73.5 ms against 74.3 (-1 %; T_C alone
61.4 ms would be 20 % short). Amplitude 9 and 26 packets against 10.1 and 22.7 (-11 %, +15 %),
peaks 23 and 30 against 22 and 30. With the default delayed ACKs (two segments per ACK) the
queue swings wider: amplitude 14 and 31, period 89 ms (2 flows); ns-3.44's TcpDctcp, which also ACKs every
second segment, gives 19 and 29 on this setup (tools/ns3/dctcp.cc --delay=4ms, RTT 10 ms, the
same measure over 2-20 s), spectral periods 115 and 51 ms. Those runs are not checked against
eq. 9, whose per-packet feedback they do not have.

**A flow stuck at two segments.** DCTCP grew by NewReno's INET byte counting until this
version, whose count restarts whenever nothing is in flight, checked per segment with the
flight left after the whole ACK. With delayed ACKs a flow cut to two segments has its whole
flight acknowledged by each ACK, so the count never reached the window: in the 10-flow ns-3
dumbbell one flow sat at 1.39 Mbit/s of 9.6 for 18 s (one of 12 flows, three of 16). ns-3 never
does this (its 10 flows get 8.8-10.7 Mbit/s). The growth is now Linux's `tcp_reno_cong_avoid`
(segments against the window in whole segments), which `tcp_dctcp.c` calls and ns-3's TcpDctcp
inherits from TcpLinuxReno.

**DCTCP beside ns-3.** ns-3.44's TcpDctcp on the same dumbbell (tools/ns3/dctcp.cc;
`--trace=PREFIX` writes each flow's cwnd, ssthresh, bytes in flight, congestion state and
alpha). Both sides enter CWR and let PRR bring cwnd to ssthresh over one round (RecoverFS here
the window before the cut, Linux's `prior_cwnd`). The comparison uses ns-3's own growth rule for
the count: TcpLinuxReno keeps `m_cWndCnt` across a reduction where Linux zeroes it
(`keep_increase_count = true` in scenarios/dctcp-ns3.toml; with Linux's rule the 10-flow queue
mean is 6 % lower and its std 12 % higher than ns-3's). One run per side cannot be compared
within 5 %: two flows lock into a phase the RTT picks, and a 10 us change of the bottleneck
delay moves ns-3's own 2-flow queue std from 3.47 to 5.22 packets (mean 16.94 to 14.70, split
47.0 : 49.4 to 51.6 : 44.8 Mbit/s). Each check is the mean over bottleneck delays 4.99, 5 and
5.01 ms on both sides (ns-3 run at each). 2 flows: queue mean -1.1 %, std -4.5 %, per-flow
goodput within 3.3 %. 10 flows: queue mean -1.3 %, std +5.2 % (8.63 against 8.21 packets), the
total goodput within 0.1 %.

**The receiver's ACK at a change of CE state.** The 10-flow queue was 8 % lower and 8.5 % wider
than ns-3's until this version, with the difference at the bottom (0-4 packets 16.6 % of the
time against ns-3's 10.8 %; the same p95 of 29). Cut by cut (`dctcp.cc --trace`, each flow's
ssthresh): the model's flows cut 5 % more often on 8 % fewer marks, and 45 % of the intervals
between a flow's cuts were one round trip (10-20 ms) against 33 % in ns-3, the rest longer
(65-85 ms against ns-3's 55-60): too many second cuts right after a first. The cause was the
receiver. AccECN's change-triggered ACK (RFC 9768 §3.2.2.5.1) acknowledged the segment that
changed the CE state together with any delayed before it, so a marked segment sent before a cut
and an unmarked one sent after it could share one ACK: the ACK that ends CWR (it covers the
first segment sent after the cut) then carried the older segment's mark and started a second
cut at once. RFC 8257 §3.2 lets a DCTCP receiver send two ACKs instead, one for the segments
before the change with their state and one for the changing segment, and Linux does
(`dctcp_ece_ack_update`: the delayed ACK for `prior_rcv_nxt` first, then an immediate one), as
does ns-3 (`TcpDctcp::CeState0to1` / `CeState1to0`); no ACK then mixes the two states. DCTCP's
receiver now does so under AccECN too (`CeChangeAck::Apart`). With it (5 ms, 5-20 s) the
cut intervals have nearly ns-3's shape (one round trip 35 % against 33 %, 55-60 ms the most
common), the queue holds 0-4 packets 10.5 % of the time (ns-3 10.8 %), and the 10-flow mean is
within 1.3 %. ns-3 then lets the changing segment wait for the delayed ACK where RFC 8257 (steps 1-2)
and Linux acknowledge it at once; with ns-3's rule (`delay_ce_change_ack = true`) the 10 flows
match within 1.1 % (mean -0.2 %, std +1.1 %; over bottleneck delays 4.98-5.02 ms: 0.0 %,
+0.8 %), but the 2-flow std falls to -14 % (ns-3's two flows lock into a wider phase at 4.98
and 4.99 ms, std 4.85 and 5.22 against 3.47-3.49 at 5-5.02 ms, which the model reaches with
neither rule): the comparison keeps RFC 8257's and Linux's rule, and the 10-flow std is left
at +5.2 %, of which that rule accounts for about 4 points.
ns-3's PRR also differs at each CWR entry: `EnterCwr` hands the entering ACK to
`TcpPrrRecovery` as a duplicate ACK (its delivered data plus one segment) and `ProcessAck`
hands it again, with RecoverFS the flight after that ACK, so where the flight is still above
ssthresh ns-3 sends about (2 d + 1) ssthresh / flight segments at once for an ACK of d (its
trace: cwnd 18.7 -> 23.3 segments against an ssthresh of 16.25 on one such entry). Emulated
(a temporary switch, with ns-3's receiver rule) it moves the model far from ns-3 (2 flows:
queue mean -29 %, std +91 %; 10 flows: -6.6 %, +27 %), so the emulation misses something of
ns-3's; it is not used.
"""
