"""The real quinn-proto QUIC stack (`kind = "quinn"`) against quicksim's QUIC model on identical
scenarios: link-bandwidth goodput at the four MTUs of paper-fig3, the Mathis grid (NewReno on
both sides), the linksharing showcase's per-phase goodput and Jain's index over seeds, and a
bulk transfer's completion time with the handshake. One table with both and the difference;
every difference beyond 5 % is named with the mechanism behind it (EXPLANATION)."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from .. import api
from ..analysis import phases
from ..validation import Check, mathis_duration_s, scenario_path
from .common import Context, Report, md_table, save_csv, save_figure

if TYPE_CHECKING:
    import pandas as pd

    from ..results import Result

NAME = "quinn-vs-model"
TITLE = "the real quinn-proto stack vs the QUIC model on identical scenarios"
MTUS = (1280, 1452, 1500, 9000)
QUICK_MTUS = (1280, 9000)
#: (RTT ms, loss rate) of the Mathis grid
MATHIS = ((20, 0.001), (50, 0.001), (20, 0.01), (100, 0.01))
QUICK_MATHIS = ((20, 0.01),)
SEEDS = tuple(range(1, 11))
QUICK_SEEDS = (1,)
#: (label, sets) of the bulk transfers: the link-bandwidth dumbbell with a handshake
BULK: tuple[tuple[str, list[str], float], ...] = (
    (
        "1 MB, 10 Mbit/s, RTT 20 ms",
        ["dumbbell.bottleneck.rate=10Mbps", "dumbbell.bottleneck.delay=10ms"],
        1e6,
    ),
    ("10 MB, 100 Mbit/s, RTT 2 ms", [], 10e6),
)
#: A difference beyond this is explained by mechanism in the report.
EXPLAIN_BEYOND = 0.05

#: Every model run: RFC 9000 packet sizes (1-RTT header with an 8 B connection ID, 16 B AEAD
#: tag), as quinn's packets have.
MODEL = ["quic.header=rfc9000"]
#: The model with quinn's sending and ACK habits: paced, the receiver ACKs every second packet
#: (or after 25 ms), as quinn-proto's defaults do.
QUINN_ACKS = ["quic.ack_ratio=2", "quic.max_ack_delay=25ms"]
QUINN_LIKE = ["quic.pacing=true", *QUINN_ACKS]
#: ... and quinn-proto's NewReno window increase (one datagram once a whole window of bytes is
#: acknowledged, the count kept across losses, acknowledgements of pre-recovery packets not
#: counted) instead of INET's (one datagram after cwnd - 1 datagram, pre-recovery ones counted).
QUINN_CC = ['quic.cc={ algo = "newreno", quinn_increase = true }']
#: Every quinn run: NewReno, as the model's scenarios use.
QUINN = ["quinn.cc=newreno"]


def _quinn(flows: list[str]) -> list[str]:
    return [f"flows.{f}.kind=quinn" for f in flows] + QUINN


def _mbps(r: Result, flow: str, t0: float, t1: float) -> float:
    return float(r.mean_throughput(flow, t0, t1)) / 1e6


def _row(part: str, case: str, model: float, quinn: float, unit: str) -> dict[str, Any]:
    return {
        "part": part,
        "case": case,
        "model": model,
        "quinn": quinn,
        "unit": unit,
        "difference": quinn / model - 1.0 if model else math.nan,
    }


def link_bandwidth(mtus: tuple[int, ...]) -> list[dict[str, Any]]:
    """Goodput 3-8 s of one saturated sender over 100 Mbit/s (paper-fig3's scenario)."""
    rows = []
    for mtu in mtus:
        sets = [f"dumbbell.mtu={mtu}B"]
        m = api.run(scenario_path("link-bandwidth"), sets=sets + MODEL)
        q = api.run(scenario_path("link-bandwidth"), sets=sets + _quinn(["quic"]))
        rows.append(
            _row("link bandwidth", f"MTU {mtu} B", _mbps(m, "quic", 3, 8), _mbps(q, "quic", 3, 8), "Mbit/s")
        )
    return rows


def mathis(grid: tuple[tuple[int, float], ...]) -> list[dict[str, Any]]:
    """Goodput of NewReno under periodic loss, over the second half of the run (after slow
    start's overshoot has decayed)."""
    rows = []
    for rtt_ms, p in grid:
        every = round(1.0 / p)
        dur = mathis_duration_s(rtt_ms / 1000.0, 1.0 / (every + 1))
        sets = [
            f"dumbbell.bottleneck.delay={rtt_ms / 2:g}ms",
            f"dumbbell.bottleneck.forward.loss.every={every}",
            f"run.duration={dur:.3f}s",
        ]
        m = api.run(scenario_path("mathis"), sets=sets + MODEL)
        like = api.run(scenario_path("mathis"), sets=sets + MODEL + QUINN_LIKE)
        acks_cc = api.run(scenario_path("mathis"), sets=sets + MODEL + QUINN_ACKS + QUINN_CC)
        like_cc = api.run(scenario_path("mathis"), sets=sets + MODEL + QUINN_LIKE + QUINN_CC)
        q = api.run(scenario_path("mathis"), sets=sets + _quinn(["quic"]))
        case = f"RTT {rtt_ms} ms, p {p:g}"
        gq = _mbps(q, "quic", dur / 2, dur)
        rows.append(_row("Mathis", case, _mbps(m, "quic", dur / 2, dur), gq, "Mbit/s"))
        rows.append(
            _row("Mathis, model paced + ACK every 2nd", case, _mbps(like, "quic", dur / 2, dur), gq, "Mbit/s")
        )
        rows.append(
            _row(
                "Mathis, model ACK every 2nd + quinn's increase",
                case,
                _mbps(acks_cc, "quic", dur / 2, dur),
                gq,
                "Mbit/s",
            )
        )
        rows.append(
            _row(
                "Mathis, model paced + ACK every 2nd + quinn's increase",
                case,
                _mbps(like_cc, "quic", dur / 2, dur),
                gq,
                "Mbit/s",
            )
        )
    return rows


def linksharing(seeds: tuple[int, ...]) -> tuple[list[dict[str, Any]], pd.DataFrame]:
    """Per phase: the total goodput and Jain's index, means over the seeds."""
    import pandas as pd

    frames = []
    for seed in seeds:
        for stack, sets in (("model", MODEL), ("quinn", _quinn(["sender1", "sender2", "sender3"]))):
            ph = phases(api.run(scenario_path("linksharing"), seed=seed, sets=sets))
            frames.append(ph.assign(seed=seed, stack=stack))
    data = pd.concat(frames, ignore_index=True)
    # Per phase: the flows' goodputs added up, and Jain's index, each averaged over the seeds
    # (which flow of a phase is ahead depends on the seed; the per-flow numbers are in the CSV).
    per = data.groupby(["stack", "seed", "phase"], as_index=False).agg(
        goodput_mbps=("goodput_mbps", "sum"), jain=("jain", "first")
    )
    mean = per.groupby(["stack", "phase"]).mean(numeric_only=True)
    rows = []
    for phase in sorted(per.phase.unique()):
        for col, what, unit in (("goodput_mbps", "total goodput", "Mbit/s"), ("jain", "Jain's index", "")):
            rows.append(
                _row(
                    "linksharing",
                    f"phase {phase} {what}",
                    float(mean.loc[("model", phase), col]),
                    float(mean.loc[("quinn", phase), col]),
                    unit,
                )
            )
    return rows, data


def bulk() -> list[dict[str, Any]]:
    """Completion time (from the flow's start, handshake included) of a bulk transfer."""
    rows = []
    for label, sets, nbytes in BULK:
        common = [*sets, "dumbbell.mtu=1500B", "flows.quic.app=bulk", f"flows.quic.bytes={nbytes:.0f}B"]
        m = api.run(scenario_path("link-bandwidth"), sets=common + MODEL + ["quic.handshake=true"])
        q = api.run(scenario_path("link-bandwidth"), sets=common + _quinn(["quic"]))
        t = [float(r.totals["flows"]["quic"].get("completion_time_s") or math.nan) for r in (m, q)]
        rows.append(_row("bulk", label, t[0], t[1], "s"))
    return rows


def run(ctx: Context) -> Report:
    """Every part, the table, the checks, the figure."""
    import pandas as pd

    t = time.perf_counter()
    rows = link_bandwidth(QUICK_MTUS if ctx.quick else MTUS)
    rows += mathis(QUICK_MATHIS if ctx.quick else MATHIS)
    share_rows, share = linksharing(QUICK_SEEDS if ctx.quick else SEEDS)
    rows += share_rows
    rows += bulk()
    table = pd.DataFrame(rows)
    save_csv(table, ctx.out / "comparison.csv")
    save_csv(share, ctx.out / "linksharing_phases.csv")
    save_figure(_figure(table), ctx.out / "quinn_vs_model.png")
    return Report(
        NAME,
        TITLE,
        "the QUIC model's results with the real quinn-proto 0.11.19 stack (rustls + ring) in "
        "simulated time, on the same scenarios",
        _checks(table),
        figures=[
            ("quinn_vs_model.png", "model (grey) and quinn (blue) per case; labels: quinn's difference")
        ],
        csvs=[
            ("comparison.csv", "every case: model, quinn, difference"),
            ("linksharing_phases.csv", "per seed, stack, phase and flow: goodput, Jain's index"),
        ],
        explanation=EXPLANATION,
        sections=[_table_section(table)],
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


def _checks(table: pd.DataFrame) -> list[Check]:
    """What holds by construction of both stacks (the differences beyond 5 % are explained, not
    checked): equal link-bandwidth goodput (same packet sizes, both fill the link), quinn's
    fair sharing (Jain's index) and its goodput in each linksharing phase, equal bulk times;
    and the Mathis goodput once the model takes quinn's ACK frequency and window increase."""
    out = []
    for r in table.itertuples():
        if r.part == "link bandwidth":
            out.append(Check(f"link bandwidth {r.case}: quinn vs model", r.quinn, r.model, 0.01, "Mbit/s"))
        elif r.part == "linksharing" and "Jain" in str(r.case):
            out.append(Check(f"linksharing {r.case}: quinn", r.quinn, 0.95, 0, "", kind="min"))
        elif r.part == "Mathis, model ACK every 2nd + quinn's increase":
            # The mechanism of the Mathis gap (EXPLANATION): with quinn's ACK frequency and window
            # increase the model lands within 1.7 % of quinn (measured); 3 % leaves room for the
            # periodic-loss cycle's phase at the window's end.
            out.append(
                Check(
                    f"Mathis {r.case}: quinn vs model with quinn's ACKs and increase",
                    r.quinn,
                    r.model,
                    0.03,
                    "Mbit/s",
                )
            )
        elif r.part == "bulk":
            out.append(Check(f"bulk {r.case}: quinn vs model", r.quinn, r.model, EXPLAIN_BEYOND, "s"))
    return out


def _table_section(table: pd.DataFrame) -> str:
    rows = [
        [
            r.part,
            r.case,
            f"{r.model:.4g} {r.unit}".strip(),
            f"{r.quinn:.4g} {r.unit}".strip(),
            f"{r.difference:+.1%}" + (" (explained below)" if abs(r.difference) > EXPLAIN_BEYOND else ""),
        ]
        for r in table.itertuples()
    ]
    return "## Model vs quinn\n\n" + md_table(["part", "case", "model", "quinn", "difference"], rows)


EXPLANATION = """
Both stacks run on the same scenario files (`link-bandwidth`, `mathis`, `linksharing`), the
flows switched with `--set flows.NAME.kind=quinn`. The model uses the `rfc9000` header profile
(1-RTT header with an 8-byte connection ID and a 16-byte AEAD tag), so both put the same
number of stream bytes into a packet to within a few bytes; quinn runs NewReno (`quinn.cc =
"newreno"`), as the scenarios' model flows do, with its other settings at quinn-proto 0.11.19's
defaults, except the initial window: RFC 9002's formula with the path's datagram size (quinn
builds its controller for 1200-byte datagrams, which stalls a 9000-byte path; see
`crates/quicksim-quinn/src/config.rs`). Goodput is what the receiving application gets.

Mechanisms behind the differences beyond 5 % (quinn-proto 0.11.19's `connection/mod.rs`,
`congestion/new_reno.rs`, `connection/pacing.rs` read beside the model's
`crates/quicksim-transport/src/quic/`, and each mechanism switched on in the model to measure
its share):

- **Mathis grid: quinn below the model as the scenario configures it (-4% at p 0.1%, -15 to -17%
  at p 1%): ACK frequency and the window increase rule, nothing else.** Both halve NewReno's
  window once per loss episode and put the same stream bytes in a packet (1218 B of 1252 B at
  MTU 1280, measured); they differ in three habits, each switched on in the model to measure its
  share (rows "Mathis, model ..."). (1) **ACK frequency**: the `mathis` scenario's model
  receiver ACKs every packet (`ack_ratio = 1`), quinn's every second ack-eliciting packet or
  after its 25 ms `max_ack_delay` (`quic.ack_ratio = 2`, `max_ack_delay = 25ms` in the model).
  (2) **The congestion-avoidance increase**: the model follows INET's byte counting
  (`accurateIncreaseInNewRenoCongestionAvoidance`): one datagram once the bytes acknowledged
  exceed cwnd - 1 datagram, the count reset at each congestion event and fed, during the
  recovery, by the acknowledgements of packets sent before it, so the first new acknowledgement
  after a recovery grows the window at once. quinn-proto's `congestion/new_reno.rs` grows by one
  datagram once `bytes_acked >= window` (a whole window: one packet later than INET at every
  step, 1/W slower: ~8% at the ~12-packet windows of p 1%, ~2.5% at p 0.1%), ignores
  acknowledgements of packets sent before the recovery started, and keeps `bytes_acked` across
  congestion events. The model's `cc = { algo = "newreno", quinn_increase = true }` implements
  quinn's rule (`crates/quicksim-cc/src/algos/newreno.rs`, unit test
  `quinn_ca_adds_one_mds_per_cwnd_and_keeps_its_count_across_recovery`). (3) **Pacing**: quinn
  paces at 1.25 x cwnd / sRTT, but its token bucket holds max(10 datagrams, cwnd x 2 ms / sRTT)
  (`connection/pacing.rs`: `MIN_BURST_SIZE` = 10), which at windows of 12-16 datagrams (p 1%)
  lets nearly every window leave as one burst; the model's `pacing = true` spaces every
  datagram. With (1) and (2) the model comes within 1.7% of quinn at all four points ("Mathis,
  model ACK every 2nd + quinn's increase": +0.6%, +0.3% at p 0.1%; -0.7%, -1.7% at p 1%); at RTT
  20 ms, p 1%: model 5.913 Mbit/s, with ACK every 2nd alone 5.674 (-4% of the model's), with
  quinn's increase alone 5.394 (-9%), with both 4.959; quinn 4.923 Mbit/s (sent packets 3284 vs
  quinn's 3195, 32 vs 31 congestion events; the mean window 14664 vs 14718 B). Adding the
  model's per-datagram pacing on top overshoots (+4.1 to +4.8% at p 1%, +1.1 to +1.4% at p
  0.1%): quinn's pacing, with its 10-datagram bursts, is not the model's. The earlier rows
  "Mathis, model paced + ACK every 2nd" (-8.1% and -6.3% at p 1%) matched at p 0.1% only because
  the model's pacing cost and its faster increase happen to cancel there. Neither stack has a
  bug here: the model reproduces INET's rule on purpose (the paper's Mathis numbers come from
  it), quinn implements RFC 5681's `pba >= cwnd`. Ruled out by measurement: the window check
  (quinn sends while in-flight + a datagram < cwnd, the model while <=; at RTT 20 ms, p 1% none
  of quinn's sampled windows is a whole multiple of the datagram, where the two would differ)
  and the initial window (quinn's shifted by half a datagram: -0.5%).
- **Link bandwidth, linksharing and bulk: within 1 %.** Both fill the link with packets of the
  same size, share it fairly (Jain's index >= 0.99 in every phase), and finish a bulk transfer
  in the time the link allows plus the handshake's round trip and slow start (RFC 9002's initial
  window on both sides).
"""


def _figure(table: pd.DataFrame) -> Any:
    from matplotlib.figure import Figure

    parts = list(dict.fromkeys(table.part))
    fig = Figure(figsize=(11, 3.2 * math.ceil(len(parts) / 2)), layout="constrained")
    for i, part in enumerate(parts):
        ax = fig.add_subplot(math.ceil(len(parts) / 2), 2, i + 1)
        d = table[table.part == part].reset_index(drop=True)
        x = range(len(d))
        ax.bar([v - 0.2 for v in x], d.model, width=0.4, color="tab:gray", label="model")
        bars = ax.bar([v + 0.2 for v in x], d.quinn, width=0.4, color="tab:blue", label="quinn")
        for b, diff in zip(bars, d.difference, strict=True):
            ax.annotate(
                f"{diff:+.1%}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", fontsize=7
            )
        ax.set_xticks(list(x), [str(c) for c in d.case], rotation=30, ha="right", fontsize=7)
        unit = str(d.unit.iloc[0])
        ax.set_ylabel(unit or "value")
        ax.set_title(part)
        ax.grid(True, axis="y", alpha=0.4)
        ax.legend(fontsize="small")
    return fig
