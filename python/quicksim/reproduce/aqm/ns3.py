"""The `aqm` reproduction's side by side with ns-3.44: RED, CoDel, FQ-CoDel and PIE on
`scenarios/aqm-ns3.toml` (four TCP NewReno flows, 10 Mbit/s, RTT 100 ms) against the committed
numbers of `scripts/ns3/aqm.cc` (`data/ns3_aqm.csv`, its commands in the file's header). CI never
needs ns-3: the ns-3 half is read from the CSV."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...validation import Check
from ..common import Context, md_table

if TYPE_CHECKING:
    import pandas as pd

    from ...results import Result

DATA = Path(__file__).parents[1] / "data" / "ns3_aqm.csv"
#: ns-3's CoDel with one long-lived flow (NewReno and CUBIC).
ONE_FLOW_DATA = Path(__file__).parents[1] / "data" / "ns3_codel_one_flow.csv"
#: quicksim's controller for each of ns-3's in the one-flow runs: the scenario's NewReno (the
#: ns-3 mapping), and CUBIC with HyStart as ns-3.44's TcpCubic has it by default.
ONE_FLOW_CC: dict[str, Any] = {
    "newreno": None,
    "cubic": {"algo": "cubic", "hystart": True},
}
SCENARIO = Path(__file__).parents[2] / "scenarios" / "aqm-ns3.toml"
BOTTLENECK = "bottleneck:router1->router2"
#: Each discipline's queue table, as aqm.cc configures ns-3's (the scenario file has CoDel).
QUEUES: dict[str, str] = {
    "codel": '{kind="codel", packets=1000}',
    "fq_codel": '{kind="fq_codel", ecn=false}',
    "pie": '{kind="pie", packets=1000}',
    "red": '{kind="red", packets=1000, min_th=20, max_th=60}',
}
WINDOW_S = (20.0, 60.0)
FRAME_B = 1502  # 1500 B IP + 2 B PPP
TOLERANCE = 0.10
SEEDS = (1, 2, 3)
QUICK_SEEDS = (1,)


def load_ns3(path: Path = DATA) -> pd.DataFrame:
    """ns-3's runs: one row per discipline and run; `delay_s` is the queue disc's mean sojourn
    plus the device TxQueue's mean wait (what quicksim's one queue holds)."""
    import pandas as pd

    d = pd.read_csv(path, comment="#")
    d["delay_s"] = d.mean_sojourn_s + d.mean_device_wait_s
    return d


def window_metrics(r: Result, t0: float = WINDOW_S[0], t1: float = WINDOW_S[1]) -> tuple[float, float]:
    """(mean queueing delay per packet sent, utilization) of the bottleneck over [t0, t1): the
    queue's time integral over the packets sent (Little's law, as ns-3's per-packet mean counts
    a packet that found the link idle as 0), and the frame bytes sent over rate x window."""
    import numpy as np

    q = r.queues[r.queues.queue == BOTTLENECK]
    t, n = q.t_s.to_numpy(), q.packets.to_numpy().astype(float)
    before = n[t < t0]
    inside = (t >= t0) & (t < t1)
    tt = np.concatenate([[t0], t[inside], [t1]])
    nn = np.concatenate([[before[-1] if len(before) else 0.0], n[inside]])
    area = float(np.sum(nn * np.diff(tt)))
    links = r.links[(r.links.link == BOTTLENECK) & (r.links.t_s >= t0) & (r.links.t_s < t1)]
    sent_bytes = float(links.bytes.sum())
    return area / (sent_bytes / FRAME_B), sent_bytes * 8 / (10e6 * (t1 - t0))


def quicksim_runs(
    seeds: tuple[int, ...], extra: tuple[str, ...] = (), only: str | None = None
) -> pd.DataFrame:
    """quicksim's runs of aqm-ns3.toml: one row per discipline and seed (`extra`: more --set
    overrides; `only`: one discipline)."""
    import pandas as pd

    from ... import api

    rows = []
    for qd, table in QUEUES.items():
        if only is not None and qd != only:
            continue
        for seed in seeds:
            r = api.run(SCENARIO, seed=seed, sets=[f"dumbbell.bottleneck.queue={table}", *extra])
            delay, util = window_metrics(r)
            st = r.totals["queues"][BOTTLENECK]
            rows.append(
                {
                    "qdisc": qd,
                    "seed": seed,
                    "delay_s": delay,
                    "utilization": util,
                    "drops": st["dropped_packets"],
                }
            )
    return pd.DataFrame(rows)


def one_flow_codel() -> Comparison:
    """CoDel with one long-lived flow (a case said to keep the link >= 95 % busy) beside ns-3: the
    same scenario with one pair, NewReno and CUBIC; utilization checked within 10 %."""
    import pandas as pd

    from ... import api

    ns3 = pd.read_csv(ONE_FLOW_DATA, comment="#")
    ns3["delay_s"] = ns3.mean_sojourn_s + ns3.mean_device_wait_s
    base = api.load_scenario(SCENARIO)
    base["dumbbell"]["pairs"] = 1
    base["flows"] = base["flows"][:1]
    base["dumbbell"]["bottleneck"]["queue"] = {"kind": "codel", "packets": 1000}
    base["run"]["record"] = {**base["run"]["record"], "drops": True}
    rows, checks = [], []
    for cc, spec in ONE_FLOW_CC.items():
        tcp = dict(base["tcp"]) if spec is None else {**base["tcp"], "cc": spec}
        r = api.run({**base, "tcp": tcp})
        delay, util = window_metrics(r)
        theirs = ns3[ns3.cc == cc].iloc[0]
        rows.append(
            {
                "cc": cc,
                "delay_s": delay,
                "utilization": util,
                "drops": int(((r.drops.t_s >= WINDOW_S[0]) & (r.drops.t_s < WINDOW_S[1])).sum()),
                "ns3_delay_s": float(theirs.delay_s),
                "ns3_utilization": float(theirs.utilization),
                "ns3_drops": int(theirs.drops),
            }
        )
        checks.append(
            Check(
                f"CoDel, one {cc} flow, beside ns-3.44: utilization",
                util,
                float(theirs.utilization),
                TOLERANCE,
                "",
            )
        )
    table = pd.DataFrame(rows)
    section = (
        "## CoDel with one flow, beside ns-3.44\n\n"
        "One long-lived flow through CoDel (10 Mbit/s, RTT 100 ms, 1000 packets), a case said to keep "
        "the link at least 95 % busy, as "
        "`scenarios/aqm-ns3.toml` with one pair, against `scripts/ns3/aqm.cc --qdisc=codel "
        "--flows=1 --cc=C` (`reproduce/data/ns3_codel_one_flow.csv`), over [20, 60] s; ns-3's "
        "TcpCubic runs with its defaults (HyStart on), quicksim's CUBIC with HyStart++.\n\n"
        + md_table(
            [
                "controller",
                "quicksim delay (ms)",
                "ns-3 delay (ms)",
                "quicksim util.",
                "ns-3 util.",
                "drops, quicksim / ns-3",
            ],
            [
                [
                    r.cc,
                    f"{r.delay_s * 1e3:.2f}",
                    f"{r.ns3_delay_s * 1e3:.2f}",
                    f"{r.utilization:.3f}",
                    f"{r.ns3_utilization:.3f}",
                    f"{r.drops} / {r.ns3_drops}",
                ]
                for r in table.itertuples()
            ],
        )
        + "\n\n"
        + ONE_FLOW_NOTES
    )
    return Comparison(table, checks, section)


@dataclass
class Comparison:
    table: pd.DataFrame
    checks: list[Check]
    section: str


def compare(ctx: Context) -> Comparison:
    """quicksim's means beside ns-3's (each over its runs), with a check per discipline and
    metric (within 10 %)."""
    ns3 = (
        load_ns3()
        .groupby("qdisc")
        .agg(
            ns3_delay_s=("delay_s", "mean"),
            ns3_qdisc_sojourn_s=("mean_sojourn_s", "mean"),
            ns3_device_wait_s=("mean_device_wait_s", "mean"),
            ns3_utilization=("utilization", "mean"),
            ns3_runs=("run", "count"),
        )
    )
    seeds = QUICK_SEEDS if ctx.quick else SEEDS
    runs = quicksim_runs(seeds)
    qs = runs.groupby("qdisc").agg(
        delay_s=("delay_s", "mean"), utilization=("utilization", "mean"), seeds=("seed", "count")
    )
    table = qs.join(ns3).reset_index()
    checks = []
    for r in table.itertuples():
        for what, mine, theirs in (
            ("mean queueing delay", r.delay_s, r.ns3_delay_s),
            ("utilization", r.utilization, r.ns3_utilization),
        ):
            checks.append(
                Check(
                    f"beside ns-3.44, {r.qdisc}: {what}",
                    float(mine),
                    float(theirs),
                    TOLERANCE,
                    "s" if "delay" in what else "",
                )
            )
    rows: list[list[Any]] = [
        [
            r.qdisc,
            f"{r.delay_s * 1e3:.2f}",
            f"{r.ns3_delay_s * 1e3:.2f} "
            f"({r.ns3_qdisc_sojourn_s * 1e3:.2f} + {r.ns3_device_wait_s * 1e3:.2f})",
            f"{r.utilization:.3f}",
            f"{r.ns3_utilization:.3f}",
        ]
        for r in table.itertuples()
    ]
    section = (
        "## Beside ns-3.44\n\n"
        "`scenarios/aqm-ns3.toml` (four TCP NewReno flows, 10 Mbit/s, RTT 100 ms) against "
        "`scripts/ns3/aqm.cc`'s committed numbers (`reproduce/data/ns3_aqm.csv`), over [20, 60] s. "
        "ns-3's delay is its queue disc's mean sojourn plus the mean wait in the 1-packet device "
        "queue under it (quicksim's one queue holds both).\n\n"
        + md_table(
            [
                "AQM",
                "quicksim delay (ms)",
                "ns-3 delay (ms) (qdisc + device)",
                "quicksim util.",
                "ns-3 util.",
            ],
            rows,
        )
        + "\n\n"
        + NS3_NOTES
        + "\nquicksim's RED runs, per seed (delay ms / utilization / drops): "
        + "; ".join(
            f"seed {r.seed}: {r.delay_s * 1e3:.1f} / {r.utilization:.3f} / {r.drops}"
            for r in runs[runs.qdisc == "red"].itertuples()
        )
        + ".\n"
    )
    return Comparison(table, checks, section)


NS3_NOTES = """
All four agree within 5 % on both metrics (delay: CoDel +1.5 %, FQ-CoDel -2.1 %, PIE -3.6 %,
RED -4.3 %; utilization: +4.9 %, +0.6 %, +1.2 %, +0.5 %); the delays agree once ns-3's device
queue is counted (without it ns-3's queue disc alone shows ~1 ms less: the packet waiting under
the queue disc for the one on the wire, which quicksim's single queue holds). The timeout fix
below moved CoDel's, FQ-CoDel's and PIE's numbers too (the same TCP: a timeout in their runs
now restarts from a smaller ssthresh): utilization +1.3 %, -2.1 %, +0.7 %.

RED agrees since TCP's timeout was brought in line with ns-3's. Before,
quicksim's RED runs were bistable: most seeds (4 of 1-5) cycled with the queue climbing to ~160
packets in half a second, RED's average passing 2 x max_th (every arrival dropped) and the flows
timing out, ~55 ms / 0.82 against ns-3's 21.6 ms / 0.98. RED was not the cause: it matches
ns-3's `RedQueueDisc` as aqm.cc configures it parameter by parameter (packet mode, MinTh 20,
MaxTh 60, QW 0.002, LInterm 50, Gentle, Wait off, MeanPktSize 500 with the idle decay
m = idle time x 10 Mbit/s / (8 x 500 B) (idle from when the queue emptied; ns-3 from the first
dequeue that found it empty, at most a frame time later), the count since the last drop set to 1 on the first
arrival above MinTh and to 0 at an early drop, hard drops, the `nQueued > 1` guard). The
cycles came from the window TCP restarted with after a timeout: a flow whose retransmission
was dropped kept sending new data under SACK for the 1-s minimum RTO, so at the timeout
SND.MAX - SND.UNA held ~250 segments (a 37-segment window plus everything SACKed above the
hole) and ssthresh became 125 segments; slow start then ran to 110 segments per flow, the queue
to 160. ns-3's `TcpSocketBase::ReTxTimeout` halves `BytesInFlight()`, the RFC 6675 pipe (~the
window), instead; the scenario's `ssthresh_from_flight` (the ns-3 mapping) now does the same on
a timeout (`quicksim-cc` NewReno), and every seed of 1-5 settles as ns-3's runs do (19.4-21.4
ms, utilization 0.97-0.99).
"""


ONE_FLOW_NOTES = """
Neither simulator reaches 95 % with one flow, and neither should: a loss-based flow
keeps the link busy after a back-off only if the queue it backs off from holds (1 - beta) / beta
of a BDP (NewReno, beta 0.5: one BDP, 83 packets here; CUBIC, beta 0.7: 0.43 BDP, 36 packets),
and CoDel lets ~4 packets (its 5 ms target) stand. After each CoDel drop the window falls below
the BDP and the link idles until it regrows: NewReno takes ~40 RTTs (4 s) from 44 to 83 packets,
so a fluid sawtooth of 44..88 packets fills 0.79 of the link (measured 0.78 here, 0.79 in
ns-3); CUBIC's 0.7 back-off and concave regrowth (K = cbrt(W_max (1 - 0.7) / 0.4) = 4 s)
leave less idle (0.94 here, 0.92 in ns-3). Both simulators drop the same number of packets in
the window (4 with NewReno, 10 with CUBIC: one back-off per 10 s and per 4 s). RFC 8289 sizes
INTERVAL on the order of the worst-case RTT (100 ms here, as this path's) and presents TARGET
as a trade of some utilization for delay; it promises no utilization for a single flow. The
delays differ by less than a 1.2-ms frame time (both under 3 ms).
"""
