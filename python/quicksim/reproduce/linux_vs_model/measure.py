"""What linux-vs-model reads from each run, the same way on both sides where it can: iperf3's
JSON, `ss -tin` samples, the capture through tshark (data connection, its start, retransmitted
segments, largest packet), quicksim's own totals (per-packet queueing delays), the model's
congestion state; and the comparison of the two sides (relative differences, Jain's index,
the goal's tolerances)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

# --- iperf3 --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Iperf3:
    """iperf3's client report (`-J`): the bytes the receiver got and over how long, the bytes
    the sender wrote, its retransmitted segments (the kernel's `tcpi_total_retrans`) and the
    congestion control the sender's socket used."""

    received_bytes: int
    received_s: float
    sent_bytes: int
    retransmits: int
    algo: str

    @property
    def receiver_mbps(self) -> float:
        return self.received_bytes * 8 / self.received_s / 1e6 if self.received_s > 0 else math.nan


def parse_iperf3(text: str, what: str = "iperf3 output") -> Iperf3:
    """The client's JSON report; ValueError naming `what` if it is not one or reports an error."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{what}: not iperf3 JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{what}: not iperf3 JSON (a {type(doc).__name__})")
    if doc.get("error"):
        raise ValueError(f"{what}: iperf3 failed: {doc['error']}")
    try:
        end = doc["end"]
        sent, received = end["sum_sent"], end["sum_received"]
        return Iperf3(
            received_bytes=int(received["bytes"]),
            received_s=float(received["seconds"]),
            sent_bytes=int(sent["bytes"]),
            retransmits=int(sent.get("retransmits", 0)),
            algo=str(end.get("sender_tcp_congestion", "")),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{what}: iperf3 JSON without end.sum_sent/sum_received ({e})") from None


# --- ss -tin ---------------------------------------------------------------------------------

_SS_HEAD = re.compile(r"^(\S+)\s+\d+\s+\d+\s+(\S+):(\d+)\s+(\S+):(\d+)")
_SS_NUM = {
    "cwnd": re.compile(r"\bcwnd:(\d+)"),
    "mss": re.compile(r"\bmss:(\d+)"),
    "ssthresh": re.compile(r"\bssthresh:(\d+)"),
    "bytes_acked": re.compile(r"\bbytes_acked:(\d+)"),
    "retrans_total": re.compile(r"\bretrans:\d+/(\d+)"),
}
_SS_RTT = re.compile(r"\brtt:([\d.]+)/([\d.]+)")


def parse_ss(text: str) -> pd.DataFrame:
    """`sampler.py`'s file: one row per sample and connection: t_s (since the command
    started), local_port, peer_port, state, cwnd_segments, mss, cwnd_bytes, ssthresh_segments,
    srtt_ms, bytes_acked, retrans_total (NaN where ss did not print the field)."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    t = math.nan
    head: dict[str, Any] | None = None
    for line in text.splitlines():
        if line.startswith("# t="):
            t = float(line[4:])
            head = None
            continue
        m = _SS_HEAD.match(line)
        if m:
            head = {"t_s": t, "state": m[1], "local_port": int(m[3]), "peer_port": int(m[5])}
            continue
        if head is None or not line[:1].isspace():
            continue
        row = dict(head)
        for key, rx in _SS_NUM.items():
            found = rx.search(line)
            row[key] = float(found[1]) if found else math.nan
        rtt = _SS_RTT.search(line)
        row["srtt_ms"] = float(rtt[1]) if rtt else math.nan
        rows.append(row)
        head = None
    cols = ["t_s", "state", "local_port", "peer_port", "cwnd", "mss", "ssthresh", "bytes_acked"]
    frame = pd.DataFrame(rows, columns=[*cols, "retrans_total", "srtt_ms"])
    frame = frame.rename(columns={"cwnd": "cwnd_segments", "ssthresh": "ssthresh_segments"})
    frame["cwnd_bytes"] = frame["cwnd_segments"] * frame["mss"]
    return frame


def data_connection(ss: pd.DataFrame) -> pd.DataFrame:
    """The samples of iperf3's data connection once it is open: of the connections to the
    server, the one that got the most bytes acknowledged (the other is iperf3's control
    connection)."""
    ss = ss[ss["state"] != "SYN-SENT"]  # before the handshake ss shows a default mss of 524 B
    if ss.empty:
        return ss
    best = ss.groupby("local_port")["bytes_acked"].max().fillna(0).idxmax()
    return ss[ss["local_port"] == best].sort_values("t_s", kind="stable").reset_index(drop=True)


# --- the capture, through tshark ---------------------------------------------------------------

#: tshark's fields, in this order (`tshark -T fields -e ...`).
TSHARK_FIELDS = (
    "frame.time_epoch",
    "ip.src",
    "ip.len",
    "tcp.stream",
    "tcp.flags.syn",
    "tcp.flags.ack",
    "tcp.len",
    "tcp.analysis.retransmission",
    "tcp.analysis.fast_retransmission",
    "tcp.analysis.out_of_order",
)


@dataclass(frozen=True)
class CaptureFlow:
    """One sender's packets on its access link (before the bottleneck, so every transmission):
    `first_syn_s` its first SYN (iperf3's control connection on the kernel side), `syn_s` and
    `data_s` its data connection's SYN and first data segment, its data segments and those
    tshark's TCP analysis flags as retransmitted, and the largest IP packet it sent."""

    first_syn_s: float
    syn_s: float
    data_s: float
    segments: int
    retransmits: int
    max_ip_len: int


def parse_tshark(text: str) -> pd.DataFrame:
    """tshark's tab-separated TSHARK_FIELDS: one row per TCP packet (others are left out)."""
    import pandas as pd

    rows = []
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) != len(TSHARK_FIELDS) or not parts[3]:
            continue
        rows.append(
            {
                "t_s": float(parts[0]),
                "src": parts[1],
                "ip_len": int(parts[2]),
                "stream": int(parts[3]),
                "syn": parts[4] in ("1", "True"),
                "ack": parts[5] in ("1", "True"),
                "tcp_len": int(parts[6] or 0),
                # On a sender's own link nothing is reordered: what tshark calls out of order
                # there is a retransmission sent soon after the highest segment (its reordering
                # heuristic); the three flags together count what the kernel counts in
                # tcpi_total_retrans (checked against iperf3's number).
                "retransmission": any(parts[i] not in ("", "0", "False") for i in (7, 8, 9)),
            }
        )
    cols = ["t_s", "src", "ip_len", "stream", "syn", "ack", "tcp_len", "retransmission"]
    return pd.DataFrame(rows, columns=cols)


def capture_flows(packets: pd.DataFrame, senders: Mapping[str, str]) -> dict[str, CaptureFlow]:
    """Per flow (name -> its sender's address), from `parse_tshark`'s rows: the data connection
    is the sender's stream with the most payload bytes. A flow whose sender sent no data is
    left out."""
    out = {}
    for flow, addr in senders.items():
        mine = packets[packets["src"] == addr]
        payload = mine.groupby("stream")["tcp_len"].sum()
        if payload.empty or payload.max() <= 0:
            continue
        data = mine[mine["stream"] == payload.idxmax()]
        syns = mine[mine["syn"] & ~mine["ack"]]
        dsyn = data[data["syn"] & ~data["ack"]]
        seg = data[data["tcp_len"] > 0]
        out[flow] = CaptureFlow(
            first_syn_s=float(syns["t_s"].min()) if len(syns) else math.nan,
            syn_s=float(dsyn["t_s"].min()) if len(dsyn) else math.nan,
            data_s=float(seg["t_s"].min()),
            segments=len(seg),
            retransmits=int(seg["retransmission"].sum()),
            max_ip_len=int(mine["ip_len"].max()),
        )
    return out


# --- comparison --------------------------------------------------------------------------------


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 for equal shares, 1/n for one taking
    all; NaN for no values or all zero."""
    xs = [float(v) for v in values]
    sq = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * sq) if xs and sq > 0 else math.nan


def rel(model: float, kernel: float) -> float:
    """The model's relative difference from the kernel (model / kernel - 1); 0 when both are 0,
    NaN when only the kernel's is 0 or either is NaN."""
    if math.isnan(model) or math.isnan(kernel):
        return math.nan
    if kernel == 0:
        return 0.0 if model == 0 else math.nan
    return model / kernel - 1.0


#: The goal (issue #34): within these at >= GOAL_SHARE of the trusted points ...
TIGHT = {"throughput": 0.05, "queueing": 0.05, "retransmits": 0.25}
#: ... and within these at the rest.
LOOSE = {"throughput": 0.10, "queueing": 0.10, "retransmits": 0.50}
GOAL_SHARE = 0.80


#: Retransmissions are counted in whole segments: where the kernel retransmitted fewer than
#: eight, 25 % is less than two of them, so a difference of up to this many counts as within.
RETRANS_SLACK = 2


def within(pairs: Mapping[str, tuple[float, float]], tol: Mapping[str, float]) -> bool:
    """Every (model, kernel) pair of the point (keys: `throughput.<flow>`, `queueing`,
    `retransmits`) within its metric's relative tolerance (retransmits: or RETRANS_SLACK
    segments); a NaN difference is not within."""
    for key, (m, k) in pairs.items():
        metric = key.split(".")[0]
        if metric == "retransmits" and abs(m - k) <= RETRANS_SLACK:
            continue
        if not abs(rel(m, k)) <= tol[metric]:
            return False
    return True


def grade(pairs: Mapping[str, tuple[float, float]]) -> str:
    """ "tight" (the goal's 5 %/25 %), "loose" (10 %/50 %) or "outside"."""
    if within(pairs, TIGHT):
        return "tight"
    if within(pairs, LOOSE):
        return "loose"
    return "outside"
