"""The `cubic-dumbbell` study's definitions: the seed's constants, the dumbbell scenario, the
theory its findings are checked against (slow-start round trips of a finite file, RFC 9438's
average window under loss) and the measurement of one run; the sweep over points x repetitions.
`experiments`, `plots` and `text` build on it."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...validation import Check
from ..common import Context, failed_runs_checks

if TYPE_CHECKING:
    import pandas as pd

    from ...results import Result

NAME = "cubic-dumbbell"
TITLE = "Two CUBIC transfers on a dumbbell (seed 001): JFI and utilization vs capacity, loss, RTT, UDP"

#: The seed's file, "≈ 32.3 MB per flow", and its MSS, 1180 B of payload per packet.
FILE_BYTES = 32_300_000
PAYLOAD = 1180
#: QUIC packet of 1180 B of STREAM data with the INET header profile: 13 B short header + 8 B
#: STREAM frame header = 21 B (checked by `tests/test_reproduce_cubic_dumbbell.py`).
QUIC_PACKET = PAYLOAD + 21
#: Bytes on the bottleneck per full data packet: QUIC packet + UDP/IPv4 28 B + PPP 7 B; TCP
#: segment (MSS 1180, no timestamps) + IPv4/TCP 40 B + PPP 7 B.
FRAME = {"quic": QUIC_PACKET + 28 + 7, "tcp": PAYLOAD + 40 + 7}
#: Values the seed leaves open (see the report): the base RTT (bottleneck 10 ms each way, access
#: links without delay), a DropTail buffer of one bandwidth-delay product at the base RTT, access
#: links of 10 Gbit/s so that only the bottleneck limits.
BASE_RTT_MS = 20.0
BUFFER_BDP = 1.0
ACCESS_RATE = "10Gbps"
#: Experiments 2-4 run at the seed's lowest capacity, where its utilization was high.
BASE_RATE_MBPS = 100.0

#: 1. bottleneck capacity (Mbit/s).
CAPACITIES = (100.0, 200.0, 300.0, 500.0, 750.0, 1000.0)
QUICK_CAPACITIES = (100.0, 300.0, 1000.0)
#: Sensitivity of experiment 1 to the base RTT (ms), the open value that matters most.
SENSITIVITY_RTTS = (2.0, 50.0)
QUICK_SENSITIVITY_RATES = (100.0, 1000.0)
#: ... and to the buffer (in BDPs at the base RTT), to show it matters less.
SENSITIVITY_BUFFERS = (0.25, 4.0)
#: 2. random loss on the bottleneck's data direction (fraction).
LOSSES = (0.0, 0.001, 0.0025, 0.005, 0.01, 0.015, 0.02)
QUICK_LOSSES = (0.0, 0.005, 0.02)
#: 3. client 2's extra one-way delay (ms): RTT difference = twice this.
EXTRA_DELAYS = (0.0, 5.0, 10.0, 15.0, 20.0, 25.0)
QUICK_EXTRA_DELAYS = (0.0, 10.0, 25.0)
#: 4. ON/OFF UDP background: mean OFF time (s; exponential). ON periods are exponential with
#: mean ON_MEAN_S, sending 1180 B datagrams at ON_RATE_MBPS (half the link). The reference without
#: background is experiment 1's 100 Mbit/s point (the same dumbbell).
OFF_MEANS = (0.5, 0.8, 1.5)
QUICK_OFF_MEANS = (0.5, 1.5)
ON_MEAN_S = 0.2
ON_RATE_MBPS = 50.0
#: The mechanisms at 1 Gbit/s: the RFC 9002 / RFC 6928 initial window (10 packets) against the
#: seed's 1, and a file 10 times as long.
MECH_RATE_MBPS = 1000.0
IW_RFC = 10
LONG_FILE_FACTOR = 10
#: Repetitions: flow 2 starts later by an offset drawn from [0, OFFSET_MAX_MS) (the seed's two
#: clients were launched by a script, never at the same instant); random loss and the ON/OFF
#: background also draw from the run's seed.
REPS, QUICK_REPS = 10, 3
OFFSET_MAX_MS = 10.0
#: Loss points where the Mathis-type prediction is checked: loss-limited, i.e. both flows' RFC
#: 9438 average windows together below the buffer-free BDP, and past slow start (p >= 0.5 %).
MATHIS_MIN_LOSS = 0.005
#: Tolerance of the Mathis-type check. The RFC 9438 average assumes periodic loss, one loss per
#: epoch and no timeouts; Bernoulli loss gives windows ~10-30 % larger for AIMD (losses cluster,
#: several per window count as one reduction), and at 1-2 % timeouts pull the other way.
MATHIS_TOLERANCE = 0.35


def offsets_ms(reps: int) -> list[float]:
    """Flow 2's start offset (ms) of each repetition, from a fixed generator (same every run)."""
    return [round(random.Random(7000 + k).uniform(0.0, OFFSET_MAX_MS), 3) for k in range(reps)]


def bdp_bytes(rate_mbps: float, rtt_ms: float) -> int:
    """One bandwidth-delay product in bytes."""
    return int(rate_mbps * 1e6 * rtt_ms / 1e3 / 8)


def buffer_bytes(rate_mbps: float, rtt_ms: float = BASE_RTT_MS, bdps: float = BUFFER_BDP) -> int:
    """The bottleneck's DropTail buffer: `bdps` x BDP, at least 10 full frames."""
    return max(10 * FRAME["quic"], int(bdps * bdp_bytes(rate_mbps, rtt_ms)))


def scenario(transport: str = "quic", *, background: bool = False) -> dict[str, Any]:
    """The dumbbell at the base point: two bulk transfers of FILE_BYTES (the seed's sender:
    CUBIC, IW 1 packet of 1180 B, every packet acknowledged), plus an ON/OFF UDP flow on a third
    pair when `background`. The sweeps vary it with `--set` paths."""
    flows: list[dict[str, Any]] = [
        {
            "name": f"flow{i}",
            "kind": transport,
            "src": f"sender{i}",
            "dst": f"receiver{i}",
            "app": "bulk",
            "bytes": f"{FILE_BYTES}B",
            "start": "0s",
        }
        for i in (1, 2)
    ]
    if background:
        flows.append(
            {
                "name": "udp",
                "kind": "onoff",
                "src": "sender3",
                "dst": "receiver3",
                "size": f"{PAYLOAD}B",
                "rate": f"{ON_RATE_MBPS:g}Mbps",
                "on": {"dist": "exponential", "mean": f"{ON_MEAN_S:g}s"},
                "off": {"dist": "exponential", "mean": "1s"},
            }
        )
    rate = BASE_RATE_MBPS
    return {
        "name": NAME,
        "run": {
            "duration": f"{duration_s(rate):g}s",
            "seed": 1,
            "record_interval": "10ms",
            "record": {"queues": False, "links": False, "conn": False},
        },
        "dumbbell": {
            "pairs": 3 if background else 2,
            "mtu": "1500B",
            "bottleneck": {
                "rate": f"{rate:g}Mbps",
                "delay": f"{BASE_RTT_MS / 2:g}ms",
                "queue": {"bytes": f"{buffer_bytes(rate)}B", "packets": 1_000_000},
            },
            "access": {"rate": ACCESS_RATE, "delay": "0s"},
        },
        # The seed's sender: IW 1 MSS, 1180 B of payload, CUBIC with its TCP-friendly region,
        # 3-dup-ACK (QUIC: 3-packet) loss detection, SRTT + 4 RTTVAR timeouts with backoff, an
        # ACK for every packet; ACK ranges = the cumulative one plus two SACK-like blocks.
        "quic": {
            "cc": "cubic",
            "initial_window": 1,
            "max_packet_size": f"{QUIC_PACKET}B",
            "ack_ratio": 1,
            "max_ack_ranges": 3,
        },
        "tcp": {
            "cc": "cubic",
            "initial_window": 1,
            "mss": PAYLOAD,
            "timestamps": False,
            "ack_every": 1,
        },
        "flows": flows,
    }


def duration_s(rate_mbps: float, loss: float = 0.0, rtt_ms: float = BASE_RTT_MS) -> float:
    """A run long enough for both files: 4x the time at the Mathis rate (or the link rate), plus
    slack for slow start. Runs end with the duration; an unfinished file fails the run."""
    link_s = 2 * FILE_BYTES * 8 / (rate_mbps * 1e6)
    if loss > 0:
        per_flow = mathis_goodput_bps(loss, rtt_ms / 1e3)
        link_s = max(link_s, FILE_BYTES * 8 / per_flow)
    return round(4 * link_s + 2 + 0.5 * rtt_ms, 1)


# --- theory -------------------------------------------------------------------------------------


def goodput_fraction(transport: str) -> float:
    """Payload bytes per byte on the bottleneck for full packets: the most of the capacity two
    file transfers can turn into goodput."""
    return PAYLOAD / FRAME[transport]


def slow_start_makespan_s(
    total_bytes: float, flows: int, rate_bps: float, rtt_s: float, iw: int, transport: str = "quic"
) -> float:
    """Lower bound on the time from the first flow's start to the last byte's delivery.

    The first byte arrives at least one RTT after the start (QUIC's or TCP's handshake plus the
    one-way trip). Slow start at most doubles each flow's window per round trip (every acked
    byte adds one, RFC 9438 §4.10 / RFC 5681), so round j delivers at most flows·iw·2^(j-1)
    packets, and never more than the link's goodput per RTT; once a round can fill the link the
    rest goes at line rate at best. Losses and queueing only make the transfer slower."""
    cap = rate_bps / 8 * goodput_fraction(transport)  # payload bytes per second
    t, sent, w = rtt_s, 0.0, float(iw)
    while True:
        b = flows * w * PAYLOAD
        if b >= cap * rtt_s or sent + b >= total_bytes:
            return t + (total_bytes - sent) / cap
        sent += b
        t += rtt_s
        w *= 2


def utilization_bound(rate_mbps: float, rtt_ms: float, iw: int, file_bytes: float, transport: str) -> float:
    """The largest utilization two files of `file_bytes` can reach: 2 x file / (C x makespan bound)."""
    t = slow_start_makespan_s(2 * file_bytes, 2, rate_mbps * 1e6, rtt_ms / 1e3, iw, transport)
    return 2 * file_bytes * 8 / (rate_mbps * 1e6 * t)


def avg_window_segments(p: float, rtt_s: float) -> float:
    """RFC 9438 §5 (Figure 9 and the Reno-friendly region): the mean CUBIC window (segments) under
    loss rate p, max(1.054 (RTT/p)^0.75, 1.2/sqrt(p)); the second term is Mathis et al.'s."""
    cubic = float((0.4 * 3.7 / (4 * 0.3)) ** 0.25 * (rtt_s / p) ** 0.75)
    return max(cubic, 1.2 / math.sqrt(p))


def mathis_goodput_bps(p: float, rtt_s: float) -> float:
    """One flow's goodput under random loss p: mean window x payload per RTT."""
    return avg_window_segments(p, rtt_s) * PAYLOAD * 8 / rtt_s


def loss_utilization(p: float, rate_mbps: float, rtt_ms: float, transport: str) -> float:
    """Two loss-limited flows' utilization, capped by the goodput fraction."""
    if p <= 0:
        return goodput_fraction(transport)
    return min(goodput_fraction(transport), 2 * mathis_goodput_bps(p, rtt_ms / 1e3) / (rate_mbps * 1e6))


# --- measurement --------------------------------------------------------------------------------


def transfer_metrics(result: Result) -> dict[str, float]:
    """The seed's metrics of one run. Each transfer's throughput is its file over its own
    transfer time (what the seed's clients measured); JFI is Jain's index of the two; the
    utilization is both files over the capacity times the makespan (first start to last
    delivered byte), which the seed's (thr1 + thr2) / C equals when both finish together
    (`util_seed` keeps that formula; it exceeds 1 when one flow finishes long before the other).
    `shared_ratio`: flow 1's over flow 2's delivery rate while both transfer. `udp_util`: the
    background's delivered bytes in the makespan over the capacity."""
    from ...stats import jain
    from ...units import bits_per_s, bytes_

    doc = result.scenario
    rate = float(bits_per_s(str(doc["dumbbell"]["bottleneck"]["rate"])))
    totals = result.totals.get("flows") or {}
    files = [f for f in doc["flows"] if f["kind"] in ("quic", "tcp")]
    thr, starts, ends, sizes = [], [], [], []
    for f in files:
        t = totals[f["name"]]
        ct = t.get("completion_time_s")
        size = float(bytes_(str(f["bytes"])))
        if ct is None:
            raise RuntimeError(
                f"{f['name']} did not deliver its {size:.0f} B within the run's {doc['run']['duration']}"
            )
        thr.append(size * 8 / float(ct))
        starts.append(float(t["start_s"]))
        ends.append(float(t["start_s"]) + float(ct))
        sizes.append(size)
    t0, t1 = min(starts), max(ends)
    out = {
        "thr1_mbps": thr[0] / 1e6,
        "thr2_mbps": thr[1] / 1e6,
        "ct1_s": ends[0] - starts[0],
        "ct2_s": ends[1] - starts[1],
        "jfi": jain(thr),
        "util": sum(sizes) * 8 / (rate * (t1 - t0)),
        "util_seed": sum(thr) / rate,
        "drops": float(sum((totals[f["name"]].get("packets_dropped") or 0) for f in files)),
    }
    # While both transfer: each flow's delivered bytes over [last start, first end], from the
    # record_interval bins (a bin that straddles an edge counts pro rata).
    a, b = max(starts), min(ends)
    shared = [_delivered(result, [f["name"]], a, b) / (b - a) for f in files] if b > a else [math.nan] * 2
    out["shared_ratio"] = shared[0] / shared[1] if shared[1] > 0 else math.nan
    others = [f["name"] for f in doc["flows"] if f["kind"] not in ("quic", "tcp")]
    if others:
        out["udp_util"] = _delivered(result, others, t0, t1) * 8 / (rate * (t1 - t0))
    return out


def _delivered(result: Result, names: list[str], t0: float, t1: float) -> float:
    """Bytes the flows `names` delivered in [t0, t1], from the binned flow table."""
    fl = result.flows
    fl = fl[fl["flow"].astype(str).isin(names)]
    ri = result.record_interval_s
    start = fl["t_s"].to_numpy(dtype=float)
    overlap = ((start + ri).clip(max=t1) - start.clip(min=t0)).clip(min=0.0) / ri
    return float((fl["delivered_bytes"].to_numpy(dtype=float) * overlap).sum())


METRIC = {"name": "m", "fn": transfer_metrics}
METRICS = (
    "thr1_mbps",
    "thr2_mbps",
    "ct1_s",
    "ct2_s",
    "jfi",
    "util",
    "util_seed",
    "shared_ratio",
    "drops",
    "udp_util",
)
#: Metrics that are fractions: their confidence intervals are clipped to [0, 1].
FRACTIONS = ("jfi", "util")


def _points_sets(
    rate: float, rtt: float = BASE_RTT_MS, loss: float = 0.0, bdps: float = BUFFER_BDP
) -> dict[str, Any]:
    return {
        "dumbbell.bottleneck.rate": f"{rate:g}Mbps",
        "dumbbell.bottleneck.delay": f"{rtt / 2:g}ms",
        "dumbbell.bottleneck.queue.bytes": f"{buffer_bytes(rate, rtt, bdps)}B",
        "run.duration": f"{duration_s(rate, loss, rtt):g}s",
    }


def study(
    ctx: Context,
    suffix: str,
    points: Sequence[dict[str, Any]],
    *,
    transport: str = "quic",
    background: bool = False,
    sets: Sequence[str] = (),
) -> tuple[pd.DataFrame, list[Check]]:
    """One sweep: every point (a dict of `--set` paths, varied together) crossed with the
    repetitions' start offsets of flow 2. Returns the runs (metric columns without the `m.`
    prefix, plus `rep`) and a failing check if any run failed."""
    reps = QUICK_REPS if ctx.quick else REPS
    keys = list(points[0])
    params: dict[str, list[Any]] = {k: [p[k] for p in points] for k in keys}
    params["flows.flow2.start"] = [f"{o:g}ms" for o in offsets_ms(reps)]
    sw = ctx.sweep(
        scenario(transport, background=background),
        params=params,
        zip=[keys] if len(keys) > 1 else (),
        repeat=1,
        metrics=[METRIC],
        sets=list(sets),
        suffix=f"{transport}-{suffix}",
    )
    runs = sw.runs.rename(columns={f"m.{m}": m for m in METRICS})
    runs["rep"] = runs["flows.flow2.start"].map({f"{o:g}ms": k for k, o in enumerate(offsets_ms(reps))})
    return runs, failed_runs_checks(sw, f"{transport} {suffix}: runs without error")


def summarize(runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Mean and 95 % Student t interval per point; fractions clipped to [0, 1]."""
    from ...stats import summarize as _summarize

    present = [m for m in METRICS if m in runs.columns]
    out = _summarize(runs[runs["error"].isna()], list(by), present)
    frac = out["metric"].isin(FRACTIONS)
    out.loc[frac, "ci_low"] = out.loc[frac, "ci_low"].clip(lower=0.0, upper=1.0)
    out.loc[frac, "ci_high"] = out.loc[frac, "ci_high"].clip(lower=0.0, upper=1.0)
    return out


def wide(summary: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """One row per point: mean, ci_low and ci_high of every metric as `metric`, `metric_lo`,
    `metric_hi` columns."""
    frames = []
    for metric, part in summary.groupby("metric", sort=False):
        p = part.set_index(list(by))[["mean", "ci_low", "ci_high", "n"]]
        p.columns = [str(metric), f"{metric}_lo", f"{metric}_hi", f"{metric}_n"]
        frames.append(p)
    import pandas as pd

    return pd.concat(frames, axis=1).reset_index()
