"""The benchmark scenarios, built in code: the UDP dumbbell of `python -m quicksim.bench`, the
suite of `quicksim bench` (`SUITE`, `BASELINES`), the short flows of `--outputs` and the long
flows of buffer-sizing-sqrt-n beside ns-3 and htsim."""

from __future__ import annotations

from typing import Any

__all__ = [
    "BASELINES",
    "HTSIM_TCP",
    "LIGHT_RECORD",
    "NS3_LINKSHARING_RECORD",
    "NS3_TCP",
    "SQRTN_HTSIM_BUFFER",
    "SQRTN_NS3_BUFFER",
    "SUITE",
    "TIE_BREAK_JITTER",
    "htsim_3x10m_scenario",
    "htsim_3x10m_tcp_scenario",
    "htsim_100x1g_tcp_scenario",
    "linksharing_full_scenario",
    "linksharing_quinn_scenario",
    "linksharing_scenario",
    "linksharing_tcp_scenario",
    "many_flows_scenario",
    "many_flows_tcp_scenario",
    "quinn_1g_scenario",
    "scale_10g_scenario",
    "scale_100x1g_scenario",
    "scale_100x1g_tcp_scenario",
    "scenario",
    "short_flows_scenario",
    "sqrtn_2g5_1600_tcp_scenario",
    "sqrtn_155m_200_tcp_scenario",
]


def scenario(duration_s: float = 10.0) -> dict[str, Any]:
    """The benchmark scenario as a dict (the TOML schema, built in code)."""
    return {
        "run": {"duration": _seconds(duration_s)},
        "dumbbell": {
            "pairs": 2,
            "bottleneck": {"rate": "1Gbps", "delay": "10ms", "queue": {"packets": 100}},
            "access": {"rate": "10Gbps", "delay": "1ms"},
            "mtu": "1500B",
        },
        "flows": [
            {
                "name": f"udp{i}",
                "kind": "udp",
                "src": f"sender{i}",
                "dst": f"receiver{i}",
                "size": "1472B",
                "rate": "600Mbps",
            }
            for i in (1, 2)
        ],
    }


def _seconds(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return f"{text}s"


# --- The benchmark suite (`quicksim bench`) -------------------------------------------------

LIGHT_RECORD: dict[str, Any] = {"queues": False, "links": False, "conn": False, "drops": False}
"""What the scale benches record: per-flow byte counters per bin only (plus the totals every
run keeps). No queue, link, congestion-state or drop series."""

_SHOWCASE_QUIC: dict[str, Any] = {
    "handshake": True,
    "cc": "newreno",
    "ack_ratio": 2,  # ACK every 2nd packet, as ns-3's DelAckCount 2
    "bundle_ack": True,
    "initial_max_data": "4294967295B",
    "initial_max_stream_data": "4294967295B",
}


def _dumbbell_flows(n: int, start_step_ms: float = 1.0) -> list[dict[str, Any]]:
    """n saturated QUIC flows, flow i on pair i+1, starting at i x start_step_ms (as ns-3's scale.cc)."""
    return [
        {
            "name": f"f{i + 1}",
            "kind": "quic",
            "src": f"sender{i + 1}",
            "dst": f"receiver{i + 1}",
            "start": _seconds(i * start_step_ms / 1000.0),
        }
        for i in range(n)
    ]


NS3_LINKSHARING_RECORD: dict[str, Any] = {"queues": False, "links": False, "conn": False, "drops": True}
"""What the ns-3 linksharing program measures during its run (`anchors/ns3/linksharing.cc`:
received bytes per flow and bin, drops at the bottleneck per bin), as quicksim recording: the
per-flow counters per bin (always on) and the drops. Queue lengths at every change, congestion
samples and per-link bins, which ns-3's program does not record, are off."""


def linksharing_scenario() -> dict[str, Any]:
    """The showcase (the bundled linksharing.toml), 50 s, recording what the ns-3 linksharing
    program measures (`NS3_LINKSHARING_RECORD`): the like-for-like comparison with ns-3."""
    doc = linksharing_full_scenario()
    doc["name"] = "linksharing"
    doc["run"]["record"] = dict(NS3_LINKSHARING_RECORD)
    return doc


def linksharing_full_scenario() -> dict[str, Any]:
    """The showcase exactly as shipped: 50 s, everything recorded (the queue length at every
    change, the congestion state at every change, link bins, drops) for its plots."""
    from importlib import resources

    from .. import api

    doc = api.load_scenario(str(resources.files("quicksim") / "scenarios" / "linksharing.toml"))
    doc["name"] = "linksharing-full"
    return doc


def linksharing_tcp_scenario() -> dict[str, Any]:
    """ns-3's linksharing program itself (the bundled linksharing-tcp.toml: TCP NewReno with
    ns-3.44's settings), 50 s, recording what the program measures: quicksim's TCP against
    ns-3's TCP, the like-for-like speed comparison."""
    from importlib import resources

    from .. import api

    doc = api.load_scenario(str(resources.files("quicksim") / "scenarios" / "linksharing-tcp.toml"))
    doc["name"] = "linksharing-tcp"
    doc["run"]["record"] = dict(NS3_LINKSHARING_RECORD)
    return doc


#: ns-3.44's TcpNewReno settings as quicksim's `[tcp]` table (see linksharing-tcp.toml).
NS3_TCP: dict[str, Any] = {
    "cc": {"algo": "newreno", "per_ack_increase": True, "ssthresh_from_flight": True},
    "ack_every": 2,
    "delack_timeout": "200ms",
    "min_rto": "1s",
    "initial_rto": "3s",
    "send_buffer_low_water": 1.0,
}


def scale_100x1g_tcp_scenario(duration_s: float = 30.0, flows: int = 100) -> dict[str, Any]:
    """ns-3 scale.cc with TCP: 100 TCP NewReno flows (ns-3.44's settings, Snd/RcvBuf 1 MiB),
    1 Gbit/s, 10 ms one way, a 2.5 MB FIFO plus ns-3's one-packet device queue, 2-B PPP
    headers, MTU 1280, starts 1 ms apart, 30 s, light recording."""
    doc = scale_100x1g_scenario(duration_s, flows)
    doc["name"] = "scale-100x1g-tcp"
    del doc["quic"]
    bn, acc = doc["dumbbell"]["bottleneck"], doc["dumbbell"]["access"]
    bn["queue"] = {"bytes": f"{2_500_000 + 1280}B", "packets": 100_000}
    bn["overhead"] = acc["overhead"] = "2B"
    acc["queue"] = {"packets": 100_000}
    doc["tcp"] = dict(NS3_TCP, send_buffer=1 << 20, recv_buffer=1 << 20)
    for f in doc["flows"]:
        f["kind"] = "tcp"
    return doc


def _saturated_dumbbell(
    name: str,
    duration_s: float,
    flows: int,
    rate: str,
    mtu: str,
    queue: tuple[int, int],
    send_queue: str,
) -> dict[str, Any]:
    """`flows` saturated NewReno senders over one bottleneck of `rate` (access links as fast),
    10 ms one way, a DropTail queue of `queue` = (bytes, packets) (the BDP), light recording."""
    return {
        "name": name,
        "run": {
            "duration": _seconds(duration_s),
            "seed": 1,
            "record_interval": "0.5s",
            "record": LIGHT_RECORD,
        },
        "dumbbell": {
            "pairs": flows,
            "mtu": mtu,
            "bottleneck": {
                "rate": rate,
                "delay": "10ms",
                "queue": {"bytes": f"{queue[0]}B", "packets": queue[1]},
            },
            "access": {"rate": rate, "delay": "0s"},
        },
        "quic": dict(_SHOWCASE_QUIC, send_queue_limit=send_queue),
        "flows": _dumbbell_flows(flows),
    }


def scale_100x1g_scenario(duration_s: float = 30.0, flows: int = 100) -> dict[str, Any]:
    """ns-3 scale.cc: 100 NewReno flows, 1 Gbit/s, 10 ms one way, 2.5 MB (BDP) DropTail, MTU 1280."""
    return _saturated_dumbbell(
        "scale-100x1g", duration_s, flows, "1Gbps", "1280B", (2_500_000, 100_000), "1MB"
    )


#: htsim's TcpSrc/TcpSink as quicksim's `[tcp]` table: NewReno without SACK or timestamps, an ACK
#: per segment, an initial window of 10 (quicksim's default). What stays different: htsim's
#: NewReno has no handshake, scans retransmit timers every 10 ms and (but in the sqrt-n workload,
#: `SQRTN_HTSIM_TCP`) starts with an initial ssthresh of 100 packets where quicksim's is unbounded.
HTSIM_TCP: dict[str, Any] = {
    "cc": "newreno",
    "ack_every": 1,
    "sack": False,
    "timestamps": False,
}


TIE_BREAK_JITTER = "10ps"
"""Jitter on the TCP rows' access links: up to 10 ps per frame (the shortest frame there, a 40 B
ACK at 1 Gbit/s, takes 320 000 ps), so that no arrival at the bottleneck falls on the very
picosecond a slot frees. Without it, a flow whose window waits in its own access queue (equal
rates, no delay, the default 10 000-packet DropTail) hands the bottleneck each next packet at
exactly the instant the last one leaves, and the end of transmission is handled first at a tie:
that flow takes every freed slot, and the others' retransmissions find the queue full for good
(NewReno without SACK, with INET's byte counting, which never grows the locked-out flows' 2-segment
windows again: Jain 0.344 on 3x10m, 0.306 and 921 110 retransmissions on 100x1g; htsim 1.000 and
0.986; ns-3 3.44 with SACK off 0.9995 and 0.933). With TCP's per-ACK increase, the default since
2026-11-29: 0.9991 and 0.834 exact (11 522 retransmissions on 100x1g), 0.9998 and 0.992 with the
jitter (9 461) (docs/links.md, "Exact ties"; docs/performance/history/round-12.md)."""


def _htsim_tcp(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` (a `_saturated_dumbbell`) with htsim-like TCP flows instead of QUIC, and the
    access links' ties broken (`TIE_BREAK_JITTER`)."""
    del doc["quic"]
    doc["tcp"] = dict(HTSIM_TCP, send_buffer=1 << 20, recv_buffer=1 << 20)
    doc["dumbbell"]["access"]["jitter"] = {"max": TIE_BREAK_JITTER}
    for f in doc["flows"]:
        f["kind"] = "tcp"
    return doc


def htsim_3x10m_scenario() -> dict[str, Any]:
    """The bench's linksharing-like dumbbell with every flow on for 50 s, as `--vs-htsim` runs it:
    3 saturated QUIC NewReno flows, 10 Mbit/s, 10 ms one way, 25 kB DropTail, MTU 1500."""
    return _saturated_dumbbell("htsim-3x10m", 50.0, 3, "10Mbps", "1500B", (25_000, 100_000), "1MB")


def htsim_3x10m_tcp_scenario() -> dict[str, Any]:
    """htsim-3x10m with htsim-like TCP NewReno flows (`HTSIM_TCP`): the like-for-like row."""
    return _htsim_tcp(htsim_3x10m_scenario()) | {"name": "htsim-3x10m-tcp"}


def htsim_100x1g_tcp_scenario() -> dict[str, Any]:
    """scale-100x1g (1 Gbit/s, 10 ms, 2.5 MB DropTail, MTU 1280, 30 s) with htsim-like TCP
    NewReno flows (`HTSIM_TCP`) and no link framing, as htsim has none."""
    doc = scale_100x1g_scenario()
    doc["name"] = "htsim-100x1g-tcp"
    return _htsim_tcp(doc)


# --- The long flows of `quicksim reproduce buffer-sizing-sqrt-n`, beside ns-3 and htsim --------

SQRTN_NS3_BUFFER = 91
"""The buffer of the 155 Mbit/s, 200-flow point: RTT x C / sqrt(200) = 91.3 packets at the mean
RTT of 100 ms, in ns-3's FifoQueueDisc (its device queue holds one packet more)."""
SQRTN_HTSIM_BUFFER = 521
"""The buffer of the 2.5 Gbit/s, 1 600-flow point: RTT x C / sqrt(1600) = 520.8 packets."""


SQRTN_HTSIM_TCP: dict[str, Any] = {"send_buffer": 1 << 26, "recv_buffer": 1 << 26, "min_rto": "250ms"}
"""sqrtn-2g5-1600-tcp's TCP beside htsim's TcpSrc/TcpSink (with the harness's
`--initial-ssthresh-pkts=inf`, RFC 5681's arbitrarily high initial ssthresh, quicksim's): htsim
has no receive window and an endless source, so 64 MiB buffers (1.75 times the longest path's
RTT x C + B, 25 521 packets) that never bind, where 1 MiB (718 segments) held flows back in the
recoveries after slow start (a flow recovering a window of losses one per RTT without SACK
keeps SND.UNA still and fills the receiver's buffer); its RTO floor of 250 ms; and no link
framing (the scenario has 0 B where quicksim's default is 7 B), as htsim has none."""


def _sqrtn_doc(name: str, n: int, rate_bps: float, buffer_pkts: int, duration_s: float) -> dict[str, Any]:
    """`model.long_flows_doc` (n TCP NewReno flows, RTTs 80-120 ms in 10 classes, starts
    uniform in [0, 2] s, 1500 B packets, 100 Gbit/s access links) with light recording."""
    from ..reproduce.sqrtn import model

    doc = model.long_flows_doc(n, rate_bps, buffer_pkts, duration_s, cc="tcp newreno")
    doc["name"] = name
    doc["run"]["record"] = dict(LIGHT_RECORD)
    return doc


def sqrtn_155m_200_tcp_scenario(duration_s: float = 30.0) -> dict[str, Any]:
    """ns-3's sqrtn.cc itself: 200 TCP NewReno flows with ns-3.44's settings (Snd/RcvBuf 1 MiB),
    155 Mbit/s, RTTs 80-120 ms, a 91-packet FIFO plus ns-3's one-packet device queue, 2-B PPP
    headers, 30 s (`quicksim bench --vs-ns3`)."""
    doc = _sqrtn_doc("sqrtn-155m-200-tcp", 200, 155e6, SQRTN_NS3_BUFFER + 1, duration_s)
    doc["dumbbell"]["bottleneck"]["overhead"] = doc["dumbbell"]["access"]["overhead"] = "2B"
    doc["dumbbell"]["access"]["queue"] = {"packets": 100_000}
    doc["tcp"] = dict(NS3_TCP, send_buffer=1 << 20, recv_buffer=1 << 20)
    return doc


def sqrtn_2g5_1600_tcp_scenario(duration_s: float = 60.0, flows: int = 1600) -> dict[str, Any]:
    """The reproduction's largest run with htsim-like TCP (`HTSIM_TCP`): 1 600 NewReno flows,
    2.5 Gbit/s, RTTs 80-120 ms, a 521-packet DropTail (RTT x C / sqrt n), 60 s, the access
    links' ties broken (`TIE_BREAK_JITTER`), as `quicksim bench --vs-htsim` runs it."""
    doc = _sqrtn_doc("sqrtn-2g5-1600-tcp", flows, 2.5e9, SQRTN_HTSIM_BUFFER, duration_s)
    doc["tcp"] = dict(HTSIM_TCP, **SQRTN_HTSIM_TCP)
    doc["dumbbell"]["access"]["jitter"] = {"max": TIE_BREAK_JITTER}
    doc["dumbbell"]["bottleneck"]["overhead"] = doc["dumbbell"]["access"]["overhead"] = "0B"
    return doc


def scale_10g_scenario(duration_s: float = 10.0, flows: int = 50) -> dict[str, Any]:
    """50 NewReno flows over 10 Gbit/s, 10 ms one way, BDP (25 MB) DropTail, MTU 1500, 10 s."""
    return _saturated_dumbbell(
        "scale-10g", duration_s, flows, "10Gbps", "1500B", (25_000_000, 1_000_000), "4MB"
    )


def many_flows_scenario(
    idle: int = 10_000, active: int = 100, duration_s: float = 10.0, kind: str = "quic"
) -> dict[str, Any]:
    """`idle` connections that send a 1 kB message every 5 s, and `active` saturated ones.

    All share a 100-pair dumbbell (1 Gbit/s, 10 ms, BDP queue), flow k on pair k mod 100. The
    idle connections are established (handshake at a start time spread over the first second)
    and then mostly sit; what is measured is the memory they hold. `kind` is the transport of
    every flow: "quic" (many-flows) or "tcp" (many-flows-tcp: NewReno, SACK, timestamps,
    delayed ACKs, the same send buffer).
    """
    if kind not in ("quic", "tcp"):
        raise ValueError(f"kind: {kind!r} is not a transport; choose quic or tcp")
    pairs = 100
    flows = []
    for i in range(active):
        p = i % pairs + 1
        flows.append(
            {
                "name": f"a{i + 1}",
                "kind": kind,
                "src": f"sender{p}",
                "dst": f"receiver{p}",
                "start": _seconds(i / 1000.0),
            }
        )
    for i in range(idle):
        p = i % pairs + 1
        flows.append(
            {
                "name": f"i{i + 1}",
                "kind": kind,
                "src": f"sender{p}",
                "dst": f"receiver{p}",
                "start": _seconds(0.1 + i * (0.9 / max(idle, 1))),
                "app": "messages",
                "size": "1000B",
                "interval": "5s",
            }
        )
    transport: dict[str, Any] = (
        {"quic": dict(_SHOWCASE_QUIC, send_queue_limit="1MB")}
        if kind == "quic"
        else {"tcp": {"cc": "newreno", "send_buffer": "1MB"}}
    )
    return {
        "name": "many-flows" if kind == "quic" else "many-flows-tcp",
        "run": {"duration": _seconds(duration_s), "seed": 1, "record_interval": "1s", "record": LIGHT_RECORD},
        "dumbbell": {
            "pairs": pairs,
            "mtu": "1280B",
            "bottleneck": {
                "rate": "1Gbps",
                "delay": "10ms",
                "queue": {"bytes": "2500000B", "packets": 100000},
            },
            "access": {"rate": "1Gbps", "delay": "0s"},
        },
        **transport,
        "flows": flows,
    }


def many_flows_tcp_scenario(
    idle: int = 10_000, active: int = 100, duration_s: float = 10.0
) -> dict[str, Any]:
    """many-flows with TCP connections (NewReno) instead of QUIC ones."""
    return many_flows_scenario(idle, active, duration_s, kind="tcp")


def short_flows_scenario(flows: int = 10_000, duration_s: float = 3.0) -> dict[str, Any]:
    """`flows` short QUIC bulk transfers (20 kB each) over a 100-pair dumbbell (1 Gbit/s, 10 ms),
    starting 2 s / `flows` apart, everything recorded: a run whose outputs (tables, summary,
    Parquet, plots), not its simulation, take the time. Flow k uses pair k mod 100."""
    pairs = 100
    return {
        "name": "short-flows",
        "run": {"duration": _seconds(duration_s), "seed": 1, "record_interval": "0.1s"},
        "dumbbell": {
            "pairs": pairs,
            "mtu": "1500B",
            "bottleneck": {"rate": "1Gbps", "delay": "10ms", "queue": {"packets": 1000}},
            "access": {"rate": "1Gbps", "delay": "0s"},
        },
        "flows": [
            {
                "name": f"f{i + 1}",
                "kind": "quic",
                "src": f"sender{i % pairs + 1}",
                "dst": f"receiver{i % pairs + 1}",
                "start": _seconds(round(i * 2.0 / flows, 9)),
                "app": "bulk",
                "bytes": "20kB",
            }
            for i in range(flows)
        ],
    }


BASELINES: dict[str, Any] = {
    "many-flows": lambda: many_flows_scenario(idle=0),
    "many-flows-tcp": lambda: many_flows_tcp_scenario(idle=0),
    "sqrtn-2g5-1600-tcp": lambda: _sqrtn_baseline(),
}
"""Companion runs: many-flows(-tcp) without its idle flows, so (peak - baseline peak) / idle flows
is the memory one idle connection costs; sqrtn-2g5-1600-tcp with 10 flows (`_sqrtn_baseline`),
so (peak - baseline peak) / 1 590 is the memory per active flow."""


def _sqrtn_baseline() -> dict[str, Any]:
    """sqrtn-2g5-1600-tcp with 10 flows (one per RTT class) whose 16 MiB buffers let them fill
    the link as the 1 600 do: the same packets in flight and in the queue, the same recorded
    bins per flow, so the difference of the peaks is the flows' own state."""
    doc = sqrtn_2g5_1600_tcp_scenario(flows=10)
    doc["tcp"].update(send_buffer=16 << 20, recv_buffer=16 << 20)
    return doc


def linksharing_quinn_scenario(encryption: bool = True) -> dict[str, Any]:
    """The showcase (`linksharing`'s recording) with its QUIC flows run by quinn-proto
    (NewReno), with TLS or the null packet protection."""
    doc = linksharing_scenario()
    doc["name"] = "linksharing-quinn" + ("" if encryption else "-noenc")
    doc["quinn"] = {"cc": "newreno", "encryption": encryption}
    for f in doc["flows"]:
        if f["kind"] == "quic":
            f["kind"] = "quinn"
    return doc


def quinn_1g_scenario(encryption: bool = True, duration_s: float = 10.0) -> dict[str, Any]:
    """One quinn flow (CUBIC, quinn's default) filling 1 Gbit/s, 10 ms one way, a BDP queue
    (2.5 MB), MTU 1500, light recording."""
    doc = _saturated_dumbbell(
        "quinn-1g" + ("" if encryption else "-noenc"),
        duration_s,
        1,
        "1Gbps",
        "1500B",
        (2_500_000, 100_000),
        "1MB",
    )
    del doc["quic"]
    # Windows above the BDP (2.5 MB): quinn's defaults (1.25 MB per stream) would cap the rate.
    doc["quinn"] = {"encryption": encryption, "stream_receive_window": "8MB", "receive_window": "16MB"}
    doc["flows"][0]["kind"] = "quinn"
    return doc


SUITE: dict[str, Any] = {
    "linksharing": linksharing_scenario,
    "linksharing-full": linksharing_full_scenario,
    "linksharing-tcp": linksharing_tcp_scenario,
    "scale-100x1g": scale_100x1g_scenario,
    "scale-100x1g-tcp": scale_100x1g_tcp_scenario,
    "scale-10g": scale_10g_scenario,
    "many-flows": many_flows_scenario,
    "many-flows-tcp": many_flows_tcp_scenario,
    "htsim-3x10m": htsim_3x10m_scenario,
    "htsim-3x10m-tcp": htsim_3x10m_tcp_scenario,
    "htsim-100x1g-tcp": htsim_100x1g_tcp_scenario,
    "linksharing-quinn": linksharing_quinn_scenario,
    "linksharing-quinn-noenc": lambda: linksharing_quinn_scenario(encryption=False),
    "quinn-1g": quinn_1g_scenario,
    "quinn-1g-noenc": lambda: quinn_1g_scenario(encryption=False),
    "sqrtn-155m-200-tcp": sqrtn_155m_200_tcp_scenario,
    "sqrtn-2g5-1600-tcp": sqrtn_2g5_1600_tcp_scenario,
}
"""The fixed benchmark scenarios, by name: functions returning the scenario dict."""
