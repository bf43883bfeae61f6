"""The grid of linux-vs-model (rate x base RTT x DropTail buffer x flow mix) and the two
scenarios of each point: the kernel's (real time, iperf3 as `kind = "program"` flows through
the emulated dumbbell) and the model's (virtual time, `kind = "tcp"` flows started when the
kernel's started)."""

from __future__ import annotations

import math
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...emulate.netns import DEVICE

#: The kernel's congestion control modules and the model's controllers that implement them:
#: Linux `reno` is RFC 5681 NewReno with SACK (the model's `newreno`); `cubic` is RFC 9438 CUBIC;
#: `bbr` is BBRv1 (`net/ipv4/tcp_bbr.c`: the model's `bbr1`, not its draft-BBRv3 `bbr`).
ALGOS: dict[str, str] = {"reno": "newreno", "cubic": "cubic", "bbr": "bbr1"}

#: The model's TCP settings on every flow: Linux's profile (docs/tcp.md: initial window 10,
#: Linux's RTO estimator and delayed ACKs, RACK-TLP, the HyStart and constants of tcp_cubic.c). The one
#: line to change to compare the model's own defaults instead: `MODEL_TCP = {}`.
MODEL_TCP: dict[str, Any] = {"profile": "linux"}


def model_tcp(algo: str) -> dict[str, Any]:
    """A model flow's `tcp` table for the kernel's `algo`: MODEL_TCP and the controller. Under
    `profile = "linux"` a CUBIC flow names no `cc`: the profile's own is Linux's CUBIC (its
    HyStart and constants), which a plain `cc = "cubic"` would replace with the model's."""
    if MODEL_TCP.get("profile") == "linux" and algo == "cubic":
        return dict(MODEL_TCP)
    return {**MODEL_TCP, "cc": ALGOS[algo]}


MTU = 1500
BOTTLENECK = "bottleneck:router1->router2"
#: The flows' first start: the iperf3 servers (started with the run) listen by then.
START_S = 0.5
#: How long a kernel run may take beyond its flows' T seconds (iperf3's setup and teardown, the
#: Python sampler's start on a loaded machine) before the run is stopped as hung.
KERNEL_SLACK_S = 6.0
#: `ss -tin` sampling period in the senders' namespaces.
SS_INTERVAL_S = 0.1
IPERF3_PORT = 5201

RATES_MBPS = (5.0, 10.0, 20.0)
RTTS_MS = (20.0, 50.0, 100.0)
BUFFERS_BDP = (0.5, 1.0, 2.0)


@dataclass(frozen=True)
class Case:
    """A flow mix: `algos` per flow (kernel names), `rtt_factors` each flow's base RTT as a
    multiple of the point's."""

    name: str
    algos: tuple[str, ...]
    rtt_factors: tuple[float, ...]

    @property
    def label(self) -> str:
        return f"{self.name}-{'+'.join(self.algos)}"


def cases() -> list[Case]:
    """One flow of each algorithm; two of the same algorithm with equal RTTs and with RTTs 1:2;
    BBR against CUBIC with equal RTTs."""
    out = [Case("single", (a,), (1.0,)) for a in ALGOS]
    out += [Case("pair", (a, a), (1.0, 1.0)) for a in ALGOS]
    out += [Case("pair-rtt", (a, a), (1.0, 2.0)) for a in ALGOS]
    out.append(Case("pair", ("bbr", "cubic"), (1.0, 1.0)))
    return out


@dataclass(frozen=True)
class Point:
    """One grid point: the bottleneck's rate, flow 1's base RTT (propagation, both ways), the
    DropTail buffer in bandwidth-delay products of that RTT, and the flow mix."""

    case: Case
    rate_mbps: float
    rtt_ms: float
    buffer_bdp: float

    @property
    def id(self) -> str:
        return f"{self.case.label}-{self.rate_mbps:g}M-{self.rtt_ms:g}ms-{self.buffer_bdp:g}bdp"

    @property
    def flows(self) -> list[str]:
        return [f"f{i + 1}" for i in range(len(self.case.algos))]

    @property
    def rtts_ms(self) -> list[float]:
        return [self.rtt_ms * k for k in self.case.rtt_factors]

    @property
    def buffer_packets(self) -> int:
        """The buffer in MTU-sized packets: buffer_bdp x rate x RTT / (8 x MTU), rounded, at
        least 1 (5 Mbit/s x 20 ms x 0.5 = 4.17 -> 4 packets)."""
        bdp = self.rate_mbps * 1e6 * self.rtt_ms / 1e3 / 8 / MTU
        return max(1, round(self.buffer_bdp * bdp))


def full_grid() -> list[Point]:
    """Every case at every rate, RTT and buffer: 10 x 27 = 270 points."""
    return [Point(c, r, t, b) for c in cases() for r in RATES_MBPS for t in RTTS_MS for b in BUFFERS_BDP]


def quick_grid() -> list[Point]:
    """A handful of points for CI: each algorithm alone, two CUBIC flows, BBR against CUBIC."""
    by = {c.label: c for c in cases()}
    return [
        Point(by["single-cubic"], 10, 20, 1),
        Point(by["single-reno"], 10, 50, 2),
        Point(by["single-bbr"], 20, 20, 1),
        Point(by["pair-cubic+cubic"], 10, 20, 1),
        Point(by["pair-bbr+cubic"], 10, 20, 2),
    ]


def select(points: Sequence[Point], patterns: str | None) -> list[Point]:
    """The points whose id matches one of the comma-separated shell patterns (all if None)."""
    import fnmatch

    if not patterns:
        return list(points)
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    return [p for p in points if any(fnmatch.fnmatchcase(p.id, pat) for pat in pats)]


def _dumbbell(point: Point) -> dict[str, Any]:
    """The bottleneck carries half of flow 1's base RTT each way; flow i's access link adds
    (its RTT - flow 1's) / 2, so its base RTT is its factor times the point's. Access links are
    1 Gbit/s (INET's showcase dumbbell)."""
    return {
        "pairs": len(point.case.algos),
        "mtu": f"{MTU}B",
        "bottleneck": {
            "rate": f"{point.rate_mbps:g}Mbps",
            "delay": f"{point.rtt_ms / 2:g}ms",
            "queue": {"packets": point.buffer_packets},
        },
        "access": {"rate": "1Gbps", "delay": "0s"},
        "access_delays": [f"{(r - point.rtt_ms) / 2:g}ms" for r in point.rtts_ms],
    }


def _run_table(duration_s: float, flows: list[str]) -> dict[str, Any]:
    """What both sides record: per-packet queueing delays, the bottleneck's queue, the senders'
    access links in the capture (before the bottleneck: every transmission is there)."""
    return {
        "duration": f"{duration_s:.3f}s",
        "record_interval": "0.1s",
        "record": {"delays": True, "queues": ["bottleneck"], "conn": True, "max_samples": 5_000_000},
        "capture": {"links": [f"access{i + 1}" for i in range(len(flows))], "snaplen": 96},
    }


def sampler_path() -> Path:
    """The `ss` sampler script (run by the interpreter running quicksim)."""
    return Path(__file__).with_name("sampler.py")


def with_route_cc(algo: str, peer: str, words: Sequence[str]) -> str:
    """`words` run by `sh` after a route to `peer` ({dst} or {src}: the emulator fills them
    in) through the namespace's device with `algo` as its congestion control (`ip route ...
    congctl`, RTAX_CC_ALGO): every connection to the peer starts with `algo` (tcp_ca_dst_init
    for connect(), tcp_ca_openreq_child for accept()), as on a host whose default it is.

    iperf3's `-C` alone is not that: it sets TCP_CONGESTION after connect(), so with this
    machine's default `bbr` a cubic or reno socket keeps the pacing `bbr_init` turned on
    (sk_pacing_status), which a cubic host without fq does not do. The namespace's default
    (`net.ipv4.tcp_congestion_control`, per namespace) cannot be set instead: outside the
    initial namespace only the algorithms of `tcp_allowed_congestion_control` may be the
    default (here reno and bbr, EPERM for cubic), and widening that list changes the machine.
    The route goes with the namespace when the emulator removes it."""
    inner = " ".join(shlex.quote(w) if "{" not in w else w for w in words)
    route = f"ip route replace {peer} dev {DEVICE} congctl {algo}"
    return f"sh -c {shlex.quote(f'{route} && exec {inner}')}"


def client_command(algo: str, duration_s: float, ss_file: Path) -> str:
    """The iperf3 client of one flow, under the `ss` sampler ({dst}: the emulator fills it in),
    its connections to the receiver of congestion control `algo` from the start (`with_route_cc`)."""
    sampler = [sys.executable, str(sampler_path()), "--out", str(ss_file)]
    sampler += ["--interval", f"{SS_INTERVAL_S:g}", "--dst", "{dst}", "--"]
    iperf = ["iperf3", "-c", "{dst}", "-p", str(IPERF3_PORT), "-t", f"{duration_s:g}", "-C", algo, "-J"]
    return with_route_cc(algo, "{dst}", sampler + iperf)


def server_command(algo: str) -> str:
    """The iperf3 server of one flow, its connections to the sender of congestion control
    `algo` (`with_route_cc`: the receiver sends only ACKs, but its host is then one of that
    algorithm as well)."""
    return with_route_cc(algo, "{src}", ["iperf3", "-s", "-1", "-J", "-p", str(IPERF3_PORT)])


def kernel_scenario(point: Point, duration_s: float, folder: Path) -> dict[str, Any]:
    """The kernel side: one iperf3 pair per flow, each client started at START_S under the `ss`
    sampler (its samples go to `<flow>.ss.txt` in `folder`, the run's output folder); each
    host's connections to its peer use the flow's algorithm from the start (`with_route_cc`)."""
    flows = []
    for i, (name, algo) in enumerate(zip(point.flows, point.case.algos, strict=True)):
        flows.append(
            {
                "name": name,
                "kind": "program",
                "src": f"sender{i + 1}",
                "dst": f"receiver{i + 1}",
                "start": f"{START_S:g}s",
                "server": server_command(algo),
                "client": client_command(algo, duration_s, folder.resolve() / f"{name}.ss.txt"),
            }
        )
    run = _run_table(START_S + duration_s + KERNEL_SLACK_S, point.flows)
    run["clock"] = "real"
    return {"name": f"lvm-kernel-{point.id}", "run": run, "dumbbell": _dumbbell(point), "flows": flows}


@dataclass(frozen=True)
class Timeline:
    """When a flow's data connection opened (its SYN) and sent its first data, in run time (s)."""

    syn_s: float
    data_s: float


def model_scenario(
    point: Point, duration_s: float, timelines: Sequence[Timeline], seed: int = 1
) -> dict[str, Any]:
    """The model side: TCP flows with the kernel's controllers, each connecting when the
    kernel's data connection did (`connect`), sending from its first data segment (`start`) for
    `duration_s` (iperf3's -t), then stopping (`stop_mode = "send"`: unsent data is dropped, as
    iperf3's sender stops writing)."""
    if len(timelines) != len(point.flows):
        raise ValueError(f"timelines: {len(timelines)} for {len(point.flows)} flows")
    flows = []
    for i, (name, algo, tl) in enumerate(zip(point.flows, point.case.algos, timelines, strict=True)):
        if not (math.isfinite(tl.syn_s) and math.isfinite(tl.data_s)) or tl.data_s < tl.syn_s:
            raise ValueError(f"timelines[{i}]: SYN at {tl.syn_s} s, data at {tl.data_s} s")
        flows.append(
            {
                "name": name,
                "kind": "tcp",
                "src": f"sender{i + 1}",
                "dst": f"receiver{i + 1}",
                "connect": f"{tl.syn_s:.6f}s",
                "start": f"{tl.data_s:.6f}s",
                "stop": f"{tl.data_s + duration_s:.6f}s",
                "stop_mode": "send",
                "tcp": model_tcp(algo),
            }
        )
    end = max(tl.data_s for tl in timelines) + duration_s + 1.0
    return {
        "name": f"lvm-model-{point.id}",
        "run": {**_run_table(end, point.flows), "seed": seed},
        "dumbbell": _dumbbell(point),
        "flows": flows,
    }
