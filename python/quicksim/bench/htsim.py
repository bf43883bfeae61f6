"""Building and running htsim beside quicksim, for `quicksim bench --vs-htsim`.

htsim (github Broadcom/csg-htsim) is a C++ packet simulator with no release or package: its
sources come from a directory the user gives (`--htsim-src` or `$QUICKSIM_HTSIM_SRC`: a checkout's
root or its `sim/` folder). Nothing is fetched at run time. `sim/` is copied into a cache
directory, its own Makefile builds `libhtsim.a` there (`-O3`, as shipped), and quicksim's harness
(`anchors/htsim_dumbbell_tcp.cpp`: the bench's dumbbell with htsim's TcpSrc/TcpSink, DropTail
Queues and Pipes, one Queue per link direction and a Pipe where a link has a delay) is compiled
against it. The harness prints one JSON line: run-loop wall time, events, packets the
bottleneck served, drops, delivered bytes and peak RSS.

The workloads (`WORKLOADS`) are the bench's: the linksharing-like 3-flow dumbbell with all flows
on for 50 s, scale-100x1g, and (only when named) buffer-sizing-sqrt-n's 1 600 flows at
2.5 Gbit/s with spread RTTs. htsim's TCP is NewReno without SACK, an ACK per packet, an initial
window of 10 packets, an initial ssthresh of 100 packets (quicksim's is unbounded, RFC 5681 §3.1;
the sqrt-n workload gives htsim that too, `--initial-ssthresh-pkts=inf`) and a 10 ms
retransmit-timer scan; the quicksim scenarios that match it are `quicksim.bench.htsim_*_scenario`
and `sqrtn_2g5_1600_tcp_scenario`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["HARNESS", "WORKLOADS", "Workload", "build", "default_cache", "run", "source_dir"]

#: The harness source, shipped with the package.
HARNESS = "htsim_dumbbell_tcp.cpp"


@dataclass(frozen=True)
class Workload:
    """One dumbbell, as the harness's arguments and as the bench's scenario names."""

    name: str
    flows: int
    rate_mbps: float
    delay_ms: float
    queue_bytes: int
    packet_bytes: int
    duration_s: float
    #: quicksim's scenarios for it: TCP (like for like) and QUIC (None: no QUIC row).
    tcp_scenario: str
    quic_scenario: str | None
    #: More harness arguments (spread RTTs, access rate, start spread).
    extra: tuple[str, ...] = ()
    #: Run by `--vs-htsim` without scenario names (else only when its TCP scenario is named).
    default: bool = True

    def args(self) -> list[str]:
        """The harness's command-line arguments."""
        return [
            f"--flows={self.flows}",
            f"--rate-mbps={self.rate_mbps:g}",
            f"--delay-ms={self.delay_ms:g}",
            f"--queue-bytes={self.queue_bytes}",
            f"--packet-bytes={self.packet_bytes}",
            f"--duration-s={self.duration_s:g}",
            "--start-step-ms=1",
            *self.extra,
        ]


WORKLOADS = (
    Workload("3x10m", 3, 10, 10, 25_000, 1500, 50, "htsim-3x10m-tcp", "htsim-3x10m"),
    Workload("100x1g", 100, 1000, 10, 2_500_000, 1280, 30, "htsim-100x1g-tcp", "scale-100x1g"),
    # buffer-sizing-sqrt-n's largest run (`bench.sqrtn_2g5_1600_tcp_scenario`): 1 600 flows,
    # 2.5 Gbit/s, 5 ms bottleneck, RTTs 80-120 ms in 10 classes, 521-packet DropTail, 100 Gbit/s
    # access links, starts uniform over 2 s, 60 s. TCP only: QUIC there would take most of an hour.
    Workload(
        "1600x2g5",
        1600,
        2500,
        5,
        521 * 1500,
        1500,
        60,
        "sqrtn-2g5-1600-tcp",
        None,
        extra=(
            "--rtt-classes=10",
            "--rtt-min-ms=80",
            "--rtt-max-ms=120",
            "--access-mbps=100000",
            "--start-spread-s=2",
            "--initial-ssthresh-pkts=inf",
        ),
        default=False,
    ),
)


def source_dir(explicit: str | os.PathLike[str] | None, who: str) -> Path:
    """htsim's `sim/` folder from `explicit` or $QUICKSIM_HTSIM_SRC (a checkout's root or its
    `sim/`); a SystemExit naming `who` when neither is given or it holds no htsim sources."""
    d = explicit or os.environ.get("QUICKSIM_HTSIM_SRC")
    if not d:
        raise SystemExit(f"{who}: give --htsim-src DIR (a csg-htsim checkout) or set QUICKSIM_HTSIM_SRC")
    path = Path(d)
    for cand in (path / "sim", path):
        if (cand / "Makefile").exists() and (cand / "tcp.cpp").exists() and (cand / "eventlist.h").exists():
            return cand
    raise SystemExit(f"{who}: {path} is not an htsim checkout (no sim/Makefile, sim/tcp.cpp)")


def default_cache() -> Path:
    """~/.cache/quicksim/htsim (or under $XDG_CACHE_HOME)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "quicksim" / "htsim"


def _digest(sim: Path) -> str:
    """A hash of htsim's C++ sources and the harness: the build is redone when either changes."""
    h = hashlib.sha256()
    for f in [*sorted(sim.glob("*.[ch]*")), sim / "Makefile"]:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    h.update(_harness_source().encode())
    return h.hexdigest()[:16]


def _harness_source() -> str:
    return (resources.files("quicksim.bench") / "anchors" / HARNESS).read_text()


def build(sim: Path, cache: Path | None = None, cxx: str | None = None) -> Path:
    """Build libhtsim.a from a copy of `sim` in `cache` and the harness against it (skipped when
    a binary for these sources exists); returns the harness binary."""
    cache = (cache or default_cache()) / _digest(sim)
    binary = cache / "htsim_dumbbell_tcp"
    if binary.exists():
        return binary
    work = cache / "sim"
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(sim, work, ignore=shutil.ignore_patterns("*.o", "*.a", "datacenter", "tests"))
    cxx = cxx or os.environ.get("CXX", "g++")
    jobs = str(os.cpu_count() or 1)
    _call(["make", "-C", str(work), f"-j{jobs}", f"CC={cxx}", "libhtsim.a"], "make libhtsim.a")
    (cache / HARNESS).write_text(_harness_source())
    _call(
        [
            cxx,
            "-std=c++17",
            "-O3",
            "-I",
            str(work),
            str(cache / HARNESS),
            str(work / "libhtsim.a"),
            "-o",
            str(binary),
        ],
        "compile the harness",
    )
    return binary


def _call(cmd: list[str], what: str) -> None:
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        tail = "\n".join((res.stderr or res.stdout).strip().splitlines()[-15:])
        raise SystemExit(f"quicksim bench --vs-htsim: {what} failed ({' '.join(cmd[:3])} ...):\n{tail}")


def run(binary: Path, w: Workload) -> dict[str, Any]:
    """One run of the harness on workload `w`: its JSON line plus per-second figures."""
    res = subprocess.run([str(binary), *w.args()], check=True, capture_output=True, text=True)
    s: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    wall = max(float(s["run_wall_s"]), 1e-9)
    return {
        "wall_s": wall,
        "cpu_s": float(s["run_cpu_s"]),
        "events": int(s["events"]),
        "events_per_s": int(s["events"]) / wall,
        "bottleneck_packets": int(s["bottleneck_packets"]),
        "bottleneck_packets_per_s": int(s["bottleneck_packets"]) / wall,
        "events_per_bottleneck_packet": int(s["events"]) / max(int(s["bottleneck_packets"]), 1),
        "bottleneck_drops": int(s["bottleneck_drops"]),
        "delivered_bytes": int(s["delivered_bytes"]),
        "flow_delivered_bytes": [int(b) for b in s["flow_delivered_bytes"]],
        "sim_s_per_wall_s": w.duration_s / wall,
        "peak_rss_mib": float(s["peak_rss_kb"]) / 1024,
    }
