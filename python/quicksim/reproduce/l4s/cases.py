"""The l4s reproduction's scenarios (a dumbbell whose bottleneck runs DualPI2 or a step-marking
queue, one sender/receiver pair per flow) and what is measured of each run: per-flow rates,
per-packet queueing delays, the bottleneck's utilization and queue."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from ...results import Result

BOTTLENECK = "bottleneck:router1->router2"
MTU = 1500
FRAME_B = MTU + 7  # IP packet + PPP header on the wire


@dataclass(frozen=True)
class Flow:
    """One flow: `kind` "tcp", "quic" or "udp"; `cc` a controller name (transports) with its
    settings; `udp_bps` and `ecn` for a datagram source; `access_ms` the one-way delay of its
    sender's access link (its own base RTT on top of the bottleneck's)."""

    name: str
    kind: str
    cc: str = "cubic"
    cc_settings: dict[str, Any] = field(default_factory=dict)
    udp_bps: float = 0.0
    ecn: str = "not-ect"
    access_ms: float = 0.0
    start_s: float = 0.0

    def table(self, i: int) -> dict[str, Any]:
        """The flow's entry in the scenario's `flows` (pair i + 1)."""
        f: dict[str, Any] = {"name": self.name, "kind": self.kind, "src": f"sender{i + 1}"}
        f["dst"] = f"receiver{i + 1}"
        if self.start_s:
            f["start"] = f"{self.start_s:g}s"
        if self.kind == "udp":
            f.update({"size": f"{MTU - 28}B", "rate": f"{self.udp_bps / 1e6:g}Mbps", "ecn": self.ecn})
        else:
            f[self.kind] = {"cc": {"algo": self.cc, **self.cc_settings}}
        return f


def scenario(
    name: str,
    rate_bps: float,
    rtt_s: float,
    flows: list[Flow],
    queue: dict[str, Any],
    duration_s: float,
    seed: int = 1,
) -> dict[str, Any]:
    """A dumbbell of len(flows) pairs; the base RTT of flow i is rtt_s + 2 access_ms (the
    bottleneck's one-way delay is rtt_s / 2, access links 1 Gbit/s). Every flow's packets are
    traced (`run.record.packets`) so their queueing delays can be measured."""
    return {
        "name": name,
        "run": {
            "duration": f"{duration_s:g}s",
            "seed": seed,
            "record_interval": "0.1s",
            "record": {
                "queues": ["bottleneck"],
                "conn": False,
                "packets": [f.name for f in flows],
                "max_samples": 50_000_000,
            },
        },
        "dumbbell": {
            "pairs": len(flows),
            "mtu": f"{MTU}B",
            "bottleneck": {
                "rate": f"{rate_bps / 1e6:g}Mbps",
                "delay": f"{rtt_s * 1e3 / 2:g}ms",
                "queue": queue,
            },
            "access": {"rate": "1Gbps", "delay": "0s"},
            "access_delays": [f"{f.access_ms:g}ms" for f in flows],
        },
        "flows": [f.table(i) for i, f in enumerate(flows)],
    }


def delay_series(r: Result, flow: str) -> tuple[np.ndarray, np.ndarray]:
    """(send time, queueing delay) in seconds of each delivered full-size data packet of `flow`:
    its one-way delay beyond the fastest of them (all of it at the bottleneck: the access
    links are 1 Gbit/s and carry this flow alone). Data packets go from the flow's source host
    to its destination host; its ACKs the other way are left out. Only packets of the flow's
    largest size count: a smaller one (TCP's SYN, 52 B) crosses the bottleneck a frame time
    faster (0.3 ms at 40 Mbit/s), and taken as the fastest it added that to every delay (the
    L queue's own sojourns showed it)."""
    import numpy as np

    pk = r.packets
    pk = pk[pk["flow"].astype(str) == flow]
    pk = pk[pk["bytes"] == pk["bytes"].max()]
    sc = next(f for f in r.scenario["flows"] if f["name"] == flow)
    ev, node = pk["event"].astype(str), pk["node"].astype(str)
    send = pk[(ev == "send") & (node == sc["src"])]
    recv = pk[(ev == "recv") & (node == sc["dst"])]
    m = send[["uid", "t_s"]].merge(recv[["uid", "t_s"]], on="uid", suffixes=("_tx", "_rx"))
    if m.empty:
        return np.array([]), np.array([])
    m = m.sort_values("t_s_tx", kind="stable")
    owd = (m["t_s_rx"] - m["t_s_tx"]).to_numpy(dtype=float)
    return m["t_s_tx"].to_numpy(dtype=float), owd - float(owd.min())


def queueing_delays(r: Result, flow: str, t0: float, t1: float) -> np.ndarray:
    """The queueing delays (s) of `flow`'s data packets sent in [t0, t1) (`delay_series`)."""
    import numpy as np

    t, d = delay_series(r, flow)
    return np.asarray(d[(t >= t0) & (t < t1)])


def served_sojourns(r: Result, queue: str, t0: float, t1: float) -> np.ndarray:
    """The queueing times (s) of the packets DualPI2's `queue` ("l" or "c") served in [t0, t1),
    from the bottleneck's own `queues` columns: the rows where that queue's length fell by one
    with no drop, whose `<queue>_sojourn_s` is the served packet's wait from enqueue to
    dequeue. A packet that found the link idle skipped the queue and is not among them."""
    import numpy as np

    q = r.queues
    q = q[q["queue"].astype(str) == BOTTLENECK]
    if f"{queue}_packets" not in q.columns:
        return np.array([])
    n = q[f"{queue}_packets"].to_numpy(dtype=np.int64)
    drops = q[f"{queue}_drops"].to_numpy(dtype=np.int64)
    t = q["t_s"].to_numpy(dtype=float)
    served = np.zeros(len(n), dtype=bool)
    served[1:] = (np.diff(n) == -1) & (np.diff(drops) == 0)
    served &= (t >= t0) & (t < t1)
    return np.asarray(q[f"{queue}_sojourn_s"].to_numpy(dtype=float)[served])


def utilization(r: Result, rate_bps: float, t0: float, t1: float) -> float:
    """Frame bytes the bottleneck sent in [t0, t1) over what it could send."""
    links = r.links
    bn = links[(links["link"].astype(str) == BOTTLENECK) & (links["t_s"] >= t0) & (links["t_s"] < t1)]
    return float(bn["bytes"].sum()) * 8 / (t1 - t0) / rate_bps


def rates(r: Result, flows: list[Flow], t0: float, t1: float) -> dict[str, float]:
    """Each flow's delivered rate (bit/s) over [t0, t1)."""
    return {f.name: r.mean_throughput(f.name, t0, t1) for f in flows}


def drop_fraction(r: Result, flow: str, t0: float, t1: float) -> float:
    """The share of `flow`'s packets sent in [t0, t1) that were dropped at the bottleneck."""
    pk = r.packets
    pk = pk[(pk["flow"].astype(str) == flow) & (pk["t_s"] >= t0) & (pk["t_s"] < t1)]
    sc = next(f for f in r.scenario["flows"] if f["name"] == flow)
    sent = int(((pk["event"].astype(str) == "send") & (pk["node"].astype(str) == sc["src"])).sum())
    d = r.drops
    d = d[(d["flow"].astype(str) == flow) & (d["t_s"] >= t0) & (d["t_s"] < t1)]
    return len(d) / sent if sent else float("nan")


def summarize(r: Result, flows: list[Flow], rate_bps: float, t0: float, t1: float) -> dict[str, Any]:
    """The numbers the checks read: utilization, each flow's rate, per flow the mean, p99 and
    median queueing delay (ms) of its packets, and per DualPI2 queue (`l_queue`, `c_queue`)
    the same of the packets it served (`served_sojourns`) and its CE-mark fraction."""
    import numpy as np

    out: dict[str, Any] = {"utilization": utilization(r, rate_bps, t0, t1)}
    q = r.queues
    q = q[(q["queue"].astype(str) == BOTTLENECK) & (q["t_s"] >= t0) & (q["t_s"] < t1)]
    for side in ("l", "c"):
        d = served_sojourns(r, side, t0, t1)
        if len(d):
            out[f"{side}_queue.delay_mean_ms"] = float(d.mean() * 1e3)
            out[f"{side}_queue.delay_p50_ms"] = float(np.percentile(d, 50) * 1e3)
            out[f"{side}_queue.delay_p99_ms"] = float(np.percentile(d, 99) * 1e3)
            marks = q[f"{side}_marks"].to_numpy(dtype=np.int64)
            drops = q[f"{side}_drops"].to_numpy(dtype=np.int64)
            out[f"{side}_queue.mark_fraction"] = float(marks[-1] - marks[0]) / len(d)
            out[f"{side}_queue.drop_fraction"] = float(drops[-1] - drops[0]) / len(d)
    if "l_queue.mark_fraction" in out and "c_queue.drop_fraction" in out:
        # The coupling as the flows met it: L's marks per packet over the square root of C's
        # congestion signals per packet (k = 2 while p' holds still; RFC 9332 section 2.4).
        p_c = out["c_queue.drop_fraction"] + out["c_queue.mark_fraction"]
        out["k_effective"] = out["l_queue.mark_fraction"] / p_c**0.5 if p_c > 0 else float("nan")
    for name, bps in rates(r, flows, t0, t1).items():
        out[f"{name}.mbps"] = bps / 1e6
    for f in flows:
        d = queueing_delays(r, f.name, t0, t1)
        if len(d):
            out[f"{f.name}.delay_mean_ms"] = float(d.mean() * 1e3)
            out[f"{f.name}.delay_p99_ms"] = float(np.percentile(d, 99) * 1e3)
            out[f"{f.name}.delay_p50_ms"] = float(np.percentile(d, 50) * 1e3)
    return out
