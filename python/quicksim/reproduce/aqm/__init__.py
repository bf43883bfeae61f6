"""Queue disciplines on a changing link: one QUIC and one TCP flow (both CUBIC) through
DropTail, RED, CoDel, FQ-CoDel and PIE on a bottleneck whose rate steps down and up again, and on
a trace-driven bottleneck (a bundled mahimahi trace, `trace`); throughput and queueing delay
over time, one panel per discipline. Beside it, the four AQMs against ns-3.44's on a TCP
dumbbell, and CoDel with one flow against ns-3's (`ns3`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...validation import Check
from ..common import Context, Report, md_table, save_csv, save_figure
from . import ns3
from .plots import binned, figure
from .trace import Trace

if TYPE_CHECKING:
    import pandas as pd

    from ...results import Result

NAME = "aqm"
TITLE = (
    "DropTail, RED, CoDel, FQ-CoDel and PIE with a QUIC and a TCP flow on a step-changing link and on a trace"
)
BOTTLENECK = "bottleneck:router1->router2"
ONE_WAY_S = 0.020
BUFFER_PACKETS = 1000
#: The disciplines, each with its queue table (defaults except the capacity, and RED's
#: thresholds, which ns-3's defaults put at 5 and 15 packets: a tenth of this path's BDP).
DISCIPLINES: dict[str, dict[str, Any]] = {
    "droptail": {"packets": BUFFER_PACKETS},
    "red": {"kind": "red", "packets": BUFFER_PACKETS, "min_th": 20, "max_th": 60},
    "codel": {"kind": "codel", "packets": BUFFER_PACKETS},
    "fq_codel": {"kind": "fq_codel", "packets": BUFFER_PACKETS},
    "pie": {"kind": "pie", "packets": BUFFER_PACKETS},
}
#: The upper bound of each discipline's mean queueing delay over a phase of the run: the AQMs'
#: targets with room for the step transients (CoDel and FQ-CoDel: 5 ms target, PIE: 15 ms;
#: RED: its max_th of 60 packets at the lowest rate, 3 Mbit/s, is 240 ms, its min_th 80 ms).
DELAY_BOUND_S = {"codel": 0.015, "fq_codel": 0.015, "pie": 0.040, "red": 0.250}
#: DropTail fills its buffer: at least this mean delay over the low-rate phase.
DROPTAIL_MIN_S = 0.5
#: On the trace, an AQM keeps at least this share of the trace's capacity busy: the rate moves by
#: up to +-42 % every 100 ms (cellular-walk.mm), and a queue held at a few ms cannot fill an
#: upward jump until the windows grow into it (measured 0.86-0.97 over 40 s, 0.81-0.98 over the
#: quick mode's 10 s).
TRACE_MIN_UTILIZATION = 0.80


#: The bundled traces: quicksim/scenarios/traces (this file is quicksim/reproduce/aqm/__init__.py).
TRACES = Path(__file__).parents[2] / "scenarios" / "traces"


@dataclass(frozen=True)
class LinkCase:
    """One way the bottleneck behaves: a name, a caption, and what goes into its `forward` table:
    a rate schedule (`steps`), or a bundled mahimahi trace (`trace`, a file in
    `scenarios/traces/`; then `rate_bps` serves only the reverse direction, the ACKs).
    `phases` are the (start, end, rate in bit/s) the checks average over; `quick` scales times
    (a trace keeps its own and is replayed for the shorter run)."""

    name: str
    caption: str
    rate_bps: float
    steps: tuple[tuple[float, float], ...]  # (at s, rate bit/s)
    duration_s: float
    extra: dict[str, Any] = field(default_factory=dict)
    trace: str = ""

    def scaled(self, k: float) -> LinkCase:
        """The same case with its times multiplied by k (quick mode)."""
        return LinkCase(
            self.name,
            self.caption,
            self.rate_bps,
            tuple((t * k, r) for t, r in self.steps),
            self.duration_s * k,
            self.extra,
            self.trace,
        )

    def link_trace(self) -> Trace | None:
        """The trace of a trace-driven case."""
        return Trace(TRACES / self.trace) if self.trace else None

    def title(self) -> str:
        """The caption with this case's own step times."""
        steps = ", ".join(f"{r / 1e6:g} Mbit/s from {t:g} s" for t, r in self.steps)
        return f"{self.rate_bps / 1e6:g} Mbit/s, then {steps}" if steps else self.caption

    def forward(self) -> dict[str, Any]:
        """The bottleneck's forward-direction table."""
        tr = self.link_trace()
        if tr is not None:
            return {"model": {"kind": "trace", "file": str(tr.path)}, **self.extra}
        sched = [{"at": f"{t:g}s", "rate": f"{r / 1e6:g}Mbps"} for t, r in self.steps]
        return {"schedule": sched, **self.extra}

    def top_bps(self) -> float:
        """The highest rate the link reaches (the plots' scale)."""
        import numpy as np

        tr = self.link_trace()
        if tr is not None:
            return float(tr.rate_at(np.arange(0.0, tr.period_ms / 1e3, 0.1)).max())
        return max([self.rate_bps, *(r for _, r in self.steps)])

    def capacity_bytes(self, t0: float, t1: float) -> float:
        """The bytes (frames) the link can send in [t0, t1)."""
        tr = self.link_trace()
        if tr is not None:
            return tr.capacity_bytes(t0, t1)
        return sum(r * (min(e, t1) - max(s, t0)) for s, e, r in self.phases() if e > t0 and s < t1) / 8

    def phases(self) -> list[tuple[float, float, float]]:
        """(start, end, rate) of each constant-rate stretch (a trace: one, at its mean rate)."""
        tr = self.link_trace()
        if tr is not None:
            return [(0.0, self.duration_s, tr.mean_rate_bps)]
        edges = [(0.0, self.rate_bps), *self.steps]
        out = []
        for i, (t, r) in enumerate(edges):
            end = edges[i + 1][0] if i + 1 < len(edges) else self.duration_s
            out.append((t, end, r))
        return out


LINK_CASES: list[LinkCase] = [
    LinkCase(
        "step",
        "10 Mbit/s, 3 Mbit/s from 20 s, 10 Mbit/s again from 40 s",
        10e6,
        ((20.0, 3e6), (40.0, 10e6)),
        60.0,
    ),
    LinkCase(
        "trace",
        "the bundled cellular-like trace (cellular-walk.mm: a random walk of the rate around "
        "10 Mbit/s, 1-40 Mbit/s, 20 s, repeating)",
        10e6,
        (),
        40.0,
        trace="cellular-walk.mm",
    ),
]
QUICK_SCALE = 0.25  # quick mode: 15 s runs, steps at 5 and 10 s; 10 s of the trace


def scenario(case: LinkCase, queue: dict[str, Any], seed: int = 1) -> dict[str, Any]:
    """Pair 1 carries the QUIC flow, pair 2 the TCP flow (TCP starts 0.5 s later)."""
    return {
        "name": f"{NAME}-{case.name}",
        "run": {
            "duration": f"{case.duration_s:g}s",
            "seed": seed,
            "record_interval": "0.25s",
            "record": {"queues": ["bottleneck"], "conn": False, "max_samples": 10_000_000},
        },
        "dumbbell": {
            "pairs": 2,
            "mtu": "1500B",
            "bottleneck": {
                "rate": f"{case.rate_bps / 1e6:g}Mbps",
                "delay": f"{ONE_WAY_S * 1e3:g}ms",
                "queue": queue,
                "forward": case.forward(),
            },
            "access": {"rate": "1Gbps", "delay": "0s"},
        },
        "quic": {"cc": "cubic"},
        "tcp": {"cc": "cubic"},
        "flows": [
            {"name": "quic", "kind": "quic", "src": "sender1", "dst": "receiver1"},
            {"name": "tcp", "kind": "tcp", "src": "sender2", "dst": "receiver2", "start": "0.5s"},
        ],
    }


def rate_at(case: LinkCase, t: Any) -> Any:
    """The bottleneck's rate (bit/s) at times t (array; a trace: over its 100-ms window)."""
    import numpy as np

    tr = case.link_trace()
    if tr is not None:
        return tr.rate_at(t)
    r = np.full(np.shape(t), case.rate_bps, dtype=float)
    for at, rate in case.steps:
        r[np.asarray(t) >= at] = rate
    return r


def delay_series(r: Result, case: LinkCase) -> pd.DataFrame:
    """The bottleneck's queueing delay at each change of its queue: the bytes waiting (with the
    7-B PPP overhead per packet) over the rate in force, or on a trace the time until the
    trace's opportunities from then on carry them: what a packet arriving then waits."""
    q = r.queues[r.queues.queue == BOTTLENECK]
    t = q.t_s.to_numpy()
    frames = q.bytes.to_numpy() + 7 * q.packets.to_numpy()
    import pandas as pd

    tr = case.link_trace()
    delay = tr.wait_s(t, frames) if tr is not None else frames * 8 / rate_at(case, t)
    return pd.DataFrame({"t_s": t, "delay_s": delay})


def mean_delay(d: pd.DataFrame, t0: float, t1: float) -> float:
    """Time mean of the step function `d` over [t0, t1)."""
    import numpy as np

    t, v = d.t_s.to_numpy(), d.delay_s.to_numpy()
    before = v[t < t0]
    start = float(before[-1]) if len(before) else 0.0
    inside = (t >= t0) & (t < t1)
    tt = np.concatenate([[t0], t[inside], [t1]])
    vv = np.concatenate([[start], v[inside]])
    return float(np.sum(vv * np.diff(tt)) / (t1 - t0))


def throughput(r: Result) -> pd.DataFrame:
    """Goodput of each flow per bin (Mbit/s), the `flows` table's delivered bytes."""
    f = r.flows[["t_s", "flow", "delivered_bytes"]].copy()
    step = float(r.flows.t_s.drop_duplicates().sort_values().diff().median())
    f["mbps"] = f.pop("delivered_bytes") * 8 / step / 1e6
    return f


@dataclass
class Measured:
    """What one discipline did on one link case."""

    case: str
    discipline: str
    phases: list[dict[str, float]]
    delay: pd.DataFrame
    goodput: pd.DataFrame
    totals: dict[str, Any]


def measure(case: LinkCase, name: str, queue: dict[str, Any]) -> Measured:
    """Run one discipline on one case and reduce it to per-phase numbers and series."""
    from ... import api

    r = api.run(scenario(case, queue))
    d = delay_series(r, case)
    g = throughput(r)
    links = r.links[r.links.link == BOTTLENECK]
    phases = []
    for t0, t1, rate in case.phases():
        # Skip the first second of each phase (slow start, the step's transient).
        a = t0 + min(1.0, (t1 - t0) / 4)
        sel = links[(links.t_s >= a) & (links.t_s < t1)]
        gp = g[(g.t_s >= a) & (g.t_s < t1)].groupby("flow", observed=True).mbps.mean()
        phases.append(
            {
                "t0_s": a,
                "t1_s": t1,
                "rate_mbps": rate / 1e6,
                "mean_delay_ms": mean_delay(d, a, t1) * 1e3,
                "utilization": float(sel.bytes.sum() / case.capacity_bytes(a, t1)),
                "quic_mbps": float(gp.get("quic", 0.0)),
                "tcp_mbps": float(gp.get("tcp", 0.0)),
            }
        )
    return Measured(case.name, name, phases, d, g, r.totals["queues"][BOTTLENECK])


def checks_for(m: Measured, case: LinkCase) -> list[Check]:
    """Per phase: DropTail's delay grows towards its buffer at the low rate, each AQM's stays
    under its bound; every discipline keeps the link busy (on the trace: DropTail all but fully,
    the AQMs at least `TRACE_MIN_UTILIZATION` of the trace's capacity)."""
    out = []
    for i, p in enumerate(m.phases):
        if case.trace:
            where = f"{m.case}, {m.discipline}"
        else:
            where = f"{m.case}, {m.discipline}, phase {i + 1} ({p['rate_mbps']:g} Mbit/s)"
        if m.discipline == "droptail":
            if p["rate_mbps"] < 5:
                out.append(
                    Check(
                        f"{where}: mean queueing delay",
                        p["mean_delay_ms"] / 1e3,
                        DROPTAIL_MIN_S,
                        0,
                        "s",
                        "min",
                    )
                )
        else:
            bound = DELAY_BOUND_S[m.discipline]
            out.append(Check(f"{where}: mean queueing delay", p["mean_delay_ms"] / 1e3, bound, 0, "s", "max"))
        least = 0.85
        if case.trace:
            least = 0.99 if m.discipline == "droptail" else TRACE_MIN_UTILIZATION
        out.append(Check(f"{where}: utilization", p["utilization"], least, 0, "", "min"))
    return out


def versus_droptail(ms: list[Measured]) -> list[Check]:
    """Each AQM's mean queueing delay, per phase, at most a tenth of DropTail's there."""
    base = next(m for m in ms if m.discipline == "droptail")
    out = []
    for m in ms:
        if m is base:
            continue
        for i, (p, b) in enumerate(zip(m.phases, base.phases, strict=True)):
            out.append(
                Check(
                    f"{m.case}, {m.discipline}, phase {i + 1}: mean queueing delay below a tenth "
                    "of DropTail's",
                    p["mean_delay_ms"] / 1e3,
                    b["mean_delay_ms"] / 1e3 / 10,
                    0,
                    "s",
                    "max",
                )
            )
    return out


def run(ctx: Context) -> Report:
    """Every discipline on every link case, then the side-by-side with ns-3."""
    import pandas as pd

    t = time.perf_counter()
    cases = [c.scaled(QUICK_SCALE) if ctx.quick else c for c in LINK_CASES]
    checks: list[Check] = []
    rows, figures, series = [], [], []
    for case in cases:
        ms = [measure(case, n, q) for n, q in DISCIPLINES.items()]
        checks += versus_droptail(ms)
        for m in ms:
            checks += checks_for(m, case)
            for i, p in enumerate(m.phases):
                rows.append({"case": case.name, "discipline": m.discipline, "phase": i + 1, **p})
            bt, bd = binned(m.delay, case.duration_s)
            series.append(
                pd.DataFrame({"case": case.name, "discipline": m.discipline, "t_s": bt, "delay_ms": bd * 1e3})
            )
        png = f"{case.name}.png"
        save_figure(figure(case, ms, rate_at), ctx.out / png)
        figures.append(
            (
                png,
                f"{case.title()}: goodput of each flow (top, with the link's rate"
                + (" over 100-ms windows" if case.trace else "")
                + ") and the bottleneck's queueing delay (bottom, log scale, 50 ms means), one "
                "column per discipline",
            )
        )
    table = pd.DataFrame(rows)
    save_csv(table, ctx.out / "phases.csv")
    save_csv(pd.concat(series, ignore_index=True).round(6), ctx.out / "delay_over_time.csv")
    side = ns3.compare(ctx)
    checks += side.checks
    save_csv(side.table, ctx.out / "ns3_side_by_side.csv")
    one = ns3.one_flow_codel()
    checks += one.checks
    save_csv(one.table, ctx.out / "ns3_codel_one_flow.csv")
    sections = [
        "## Per phase\n\n"
        + md_table(
            [
                "case",
                "discipline",
                "phase",
                "rate (Mbit/s)",
                "delay (ms)",
                "utilization",
                "QUIC / TCP (Mbit/s)",
            ],
            [
                [
                    r.case,
                    r.discipline,
                    r.phase,
                    f"{r.rate_mbps:g}",
                    f"{r.mean_delay_ms:.1f}",
                    f"{r.utilization:.3f}",
                    f"{r.quic_mbps:.2f} / {r.tcp_mbps:.2f}",
                ]
                for r in table.itertuples()
            ],
        ),
        side.section,
        one.section,
    ]
    return Report(
        NAME,
        TITLE,
        "what DropTail, RED, CoDel, FQ-CoDel and PIE do to queueing delay and utilization when the "
        "link's rate changes, and ns-3.44's four AQMs on a TCP dumbbell (`scripts/ns3/aqm.cc`)",
        checks,
        figures=figures,
        csvs=[
            (
                "phases.csv",
                "per link case, discipline and phase: rate, mean queueing delay, utilization, "
                "goodput per flow",
            ),
            (
                "delay_over_time.csv",
                "per link case and discipline: the bottleneck's queueing delay, mean per 50 ms (as plotted)",
            ),
            (
                "ns3_side_by_side.csv",
                "per AQM: quicksim's and ns-3.44's mean queueing delay and utilization on aqm-ns3.toml",
            ),
            (
                "ns3_codel_one_flow.csv",
                "CoDel with one NewReno or CUBIC flow: quicksim's and ns-3.44's delay, utilization, drops",
            ),
        ],
        explanation=EXPLANATION,
        sections=sections,
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
One QUIC flow and one TCP flow (both CUBIC, TCP starting 0.5 s later) share a dumbbell whose
bottleneck (20 ms one way, RTT ~40 ms, MTU 1500) runs at 10 Mbit/s, drops to 3 Mbit/s at 20 s
and returns to 10 Mbit/s at 40 s (a rate schedule on its forward direction). The bottleneck's
queue is, in turn, DropTail, RED (min_th 20, max_th 60 packets, ns-3's other defaults), CoDel,
FQ-CoDel and PIE (RFC defaults), each holding at most 1000 packets. The queueing delay plotted is
what a packet arriving at that moment waits: the frames waiting over the rate in force.

Checks per phase (its first second, or quarter, skipped): DropTail's delay grows towards its
buffer at 3 Mbit/s (>= 0.5 s; 1000 packets are 4 s there); CoDel's and FQ-CoDel's mean delay
stays within 15 ms (target 5 ms), PIE's within 40 ms (target 15 ms), RED's within 250 ms (its
thresholds, 20-60 packets, are 80-240 ms at 3 Mbit/s); every discipline keeps the link at least
85 % busy. Quick mode (CI): the same with times scaled by 1/4 (15 s runs); beside ns-3 one
seed instead of three. Beside ns-3 too: CoDel with one flow (10 Mbit/s, RTT 100 ms),
NewReno and CUBIC, utilization within 10 %.

What the full run shows (seed 1, 60 s): DropTail keeps its 1000-packet buffer nearly full
(1.1 s of delay at 10 Mbit/s, 3.5 s at 3 Mbit/s) and the QUIC flow, which started first and
filled it, holds the link while the TCP flow, starting into a second of queueing, stays near
zero: a standing queue that long is a lockout, not a share. Every AQM splits the link about
evenly and keeps it at least 98 % busy. CoDel and FQ-CoDel hold 5-6 ms at 10 Mbit/s and about
11 ms at 3 Mbit/s: there one 1500-B packet takes 4 ms to send, and CoDel never drops while at
most one MTU waits (RFC 8289's MAXPACKET), so 1-3 packets stand. PIE sits at 14-17 ms, its
15 ms target, at both rates; RED's delay follows its thresholds in packets, so it triples when
the rate drops to 3 Mbit/s (28 -> 104 ms). After each step the AQMs' delay spikes (100-200 ms
at the drop to 3 Mbit/s) and is back near target within 1-2 s. FQ-CoDel's two flows get the
most even shares (its round robin), the single-queue AQMs' shares swing around the mean.

The second link case replays the bundled `cellular-walk.mm` (mahimahi's mm-link format,
`scripts/make_traces.py`: a seeded random walk of the rate every 100 ms around 10 Mbit/s, within
1-40 Mbit/s; its mean over the 20-s trace is 9.22 Mbit/s) as the bottleneck's forward direction,
for 40 s (the trace twice; quick mode: 10 s); the reverse direction (the ACKs) stays at 10
Mbit/s. The queueing delay plotted there is what a packet arriving at that moment waits until
the trace's opportunities from then on have carried the frames ahead of it (exact for a FIFO).
Checks over [1 s, end): every AQM's mean delay within the same bounds as on the step link and
below a tenth of DropTail's; DropTail keeps the trace's capacity at least 99 % used, each AQM at
least 80 %: the rate moves by up to +-42 % every 100 ms, and a queue held at a few ms cannot fill
an upward jump until the windows have grown into it (an AQM's price on a variable link, the
bufferbloat trade: DropTail's 1.3 s of delay buys its last 3-14 %). The same "below a tenth of
DropTail's" check runs on every phase of the step link.

What the trace run shows: DropTail sits at 0.5-2 s of delay and, as on the step link, the QUIC
flow that filled the buffer first keeps most of the link (TCP gets 0.7 Mbit/s of 9.2). The AQMs
hold their delays (CoDel 10 ms, FQ-CoDel 9 ms, PIE 18 ms, RED 45 ms; CoDel's and FQ-CoDel's above
their 5-ms target: after each drop of the rate the queue built at the old rate takes longer to
send, and CoDel waits an interval before it acts)
and split the link between the two flows; RED uses the most of the trace (0.97), its queue of
tens of packets absorbing the upward jumps, CoDel and FQ-CoDel the least (0.89, 0.86).
"""
