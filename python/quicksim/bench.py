"""Core throughput benchmark: a UDP dumbbell that keeps a 1 Gbit/s bottleneck busy.

    python -m quicksim.bench [--duration 10] [--seed 1] [--json]
    python -m quicksim.bench --outputs 10000     # the output steps of 10 000 short flows
    python -m quicksim.bench --overhead          # per-run cost beyond the run loop (showcase)

Two constant-rate UDP flows of 1472 B payloads (1500 B IP packets) at 600 Mbit/s each offer
1.2 Gbit/s to a 1 Gbit/s, 10 ms bottleneck with a 100-packet drop-tail queue, so the bottleneck
stays saturated for the whole run. Reports events/s, packet-hops/s (packets carried by all
links), simulated seconds per wall second and wall time. A measurement, not a timed test:
build the core in release mode (`maturin develop --release`) before trusting the numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from . import api

__all__ = [
    "BASELINES",
    "SUITE",
    "measure",
    "outputs",
    "overhead",
    "scenario",
    "short_flows_scenario",
    "suite_worker",
    "sweep_speedup",
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


def measure(duration_s: float = 10.0, seed: int = 1) -> dict[str, Any]:
    """Run the benchmark once and return its figures (rates use the core's own wall time)."""
    started = time.perf_counter()
    result = api.run(scenario(duration_s), seed=seed)
    wall_total_s = time.perf_counter() - started
    meta, links = result.meta, result.totals.get("links") or {}
    wall_s = max(float(meta.get("wall_s") or wall_total_s), 1e-9)
    events = int(meta.get("events") or 0)
    hops = sum(int(link.get("packets") or 0) for link in links.values())
    sim_s = float(meta.get("sim_end_s") or duration_s)
    return {
        "duration_s": duration_s,
        "seed": meta.get("seed", seed),
        "version": meta.get("version"),
        "build_profile": meta.get("build_profile", meta.get("profile")),
        "events": events,
        "packet_hops": hops,
        "wall_s": wall_s,
        "wall_total_s": wall_total_s,
        "events_per_s": events / wall_s,
        "packet_hops_per_s": hops / wall_s,
        "sim_s_per_wall_s": sim_s / wall_s,
        "max_link_utilization": max(
            (float(link.get("utilization") or 0.0) for link in links.values()), default=None
        ),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; prints a short report or JSON."""
    parser = argparse.ArgumentParser(prog="python -m quicksim.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--duration", type=float, default=10.0, metavar="S", help="simulated seconds (default 10)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--outputs",
        type=int,
        metavar="FLOWS",
        help="instead: time each output step (tables, summary, Parquet, plots) of a run of FLOWS "
        "short bulk flows, as `quicksim run` does them",
    )
    parser.add_argument(
        "--overhead",
        type=int,
        nargs="?",
        const=20,
        metavar="RUNS",
        help="instead: the per-run cost of `quicksim.run` + summary() beyond the core's run loop "
        "on the showcase, medians of RUNS runs in one process (default 20)",
    )
    args = parser.parse_args(argv)
    if not args.duration > 0:
        parser.error("--duration must be positive")
    if args.outputs is not None and args.outputs < 1:
        parser.error("--outputs must be at least 1")
    if args.overhead is not None and args.overhead < 1:
        parser.error("--overhead must be at least 1")
    from .cli._common import handle_errors

    return handle_errors(lambda: _report(args))


def _report(args: argparse.Namespace) -> int:
    if args.overhead is not None:
        return _report_overhead(args.overhead, args.json)
    if args.outputs is not None:
        o = outputs(args.outputs)
        if args.json:
            print(json.dumps(o, indent=2))
            return 0
        print(f"short-flows: {o['flows']:,} flows, {o['rows']:,} table rows")
        for key in ("simulate_s", "tables_s", "summary_s", "save_s", "plots_s", "total_s"):
            print(f"  {key[:-2]:<9} {o[key]:7.2f} s")
        return 0
    m = measure(args.duration, args.seed)
    if args.json:
        print(json.dumps(m, indent=2))
        return 0
    util = m["max_link_utilization"]
    print(f"quicksim {m['version']} ({m['build_profile'] or 'unknown build'}), seed {m['seed']}")
    wall = f"{m['wall_s']:.3f} s wall ({m['wall_total_s']:.3f} s with Python)"
    print(f"  simulated         {m['duration_s']:g} s in {wall}")
    print(f"  events            {m['events']:,}  ({m['events_per_s'] / 1e6:.2f} M/s)")
    print(f"  packet-hops       {m['packet_hops']:,}  ({m['packet_hops_per_s'] / 1e6:.2f} M/s)")
    print(f"  sim s per wall s  {m['sim_s_per_wall_s']:.3f}")
    print(f"  bottleneck util.  {'-' if util is None else f'{100 * util:.1f} %'}")
    return 0


def _report_overhead(runs: int, as_json: bool) -> int:
    o = overhead(runs)
    if as_json:
        print(json.dumps(o, indent=2))
        return 0
    ms = {k: 1e3 * v for k, v in o.items() if k.endswith("_s") and isinstance(v, float)}
    print(f"{o['scenario']}: medians of {o['runs']} runs in one process (load {o['loadavg']})")
    print(f"  run loop (core)          {ms['loop_s']:8.2f} ms")
    print(f"  rest of quicksim.run     {ms['run_rest_s']:8.2f} ms")
    print(f"  all DataFrames           {ms['tables_s']:8.2f} ms")
    print(f"  summary()                {ms['summary_s']:8.2f} ms")
    print(f"  outside the run loop     {ms['outside_s']:8.2f} ms  ({o['ratio']:.2f}x the run loop)")
    f = o["first_run"]
    print(
        f"  first run, fresh process: import {1e3 * f['import_s']:.0f} ms, quicksim.run "
        f"{1e3 * f['run_s']:.0f} ms (loop {1e3 * f['loop_s']:.0f} ms), summary {1e3 * f['summary_s']:.0f} ms"
    )
    return 0


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

    from . import api

    doc = api.load_scenario(str(resources.files("quicksim") / "scenarios" / "linksharing.toml"))
    doc["name"] = "linksharing-full"
    return doc


def linksharing_tcp_scenario() -> dict[str, Any]:
    """ns-3's linksharing program itself (the bundled linksharing-tcp.toml: TCP NewReno with
    ns-3.44's settings), 50 s, recording what the program measures: quicksim's TCP against
    ns-3's TCP, the like-for-like speed comparison."""
    from importlib import resources

    from . import api

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
#: NewReno has no handshake and scans retransmit timers every 10 ms.
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
(NewReno without SACK: Jain 0.344 on 3x10m, 0.306 and 921 110 retransmissions on 100x1g; htsim
1.000 and 0.986; ns-3 3.44 with SACK off 0.9995 and 0.933). With it: 0.9997 and 0.991, 14 879
retransmissions (docs/links.md, "Exact ties"; docs/performance/README.md, round 12)."""


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


def outputs(flows: int = 10_000, plots: bool = True) -> dict[str, Any]:
    """Wall time of each output step of a `short_flows_scenario(flows)` run, as `quicksim run`
    does them: simulate (with the conversion to Python), tables (DataFrames), summary, save
    (Parquet + JSON) and, with `plots`, the standard PNGs. Every step must stay linear in flows."""
    import tempfile

    from .plotting import save_standard_plots

    times: dict[str, float] = {}
    started = time.perf_counter()
    result = api.run(short_flows_scenario(flows))
    times["simulate_s"] = time.perf_counter() - started
    step = time.perf_counter()
    rows = sum(len(df) for df in result.tables.values())
    times["tables_s"] = time.perf_counter() - step
    step = time.perf_counter()
    result.summary()
    times["summary_s"] = time.perf_counter() - step
    with tempfile.TemporaryDirectory() as tmp:
        step = time.perf_counter()
        result.save(tmp)
        times["save_s"] = time.perf_counter() - step
        if plots:
            step = time.perf_counter()
            save_standard_plots(result, tmp)
            times["plots_s"] = time.perf_counter() - step
    times["total_s"] = time.perf_counter() - started
    return {
        "scenario": "short-flows",
        "flows": flows,
        "rows": rows,
        "core_wall_s": result.meta.get("wall_s"),
        **times,
    }


_FIRST_RUN = """
import json, sys, time
t0 = time.perf_counter()
import quicksim
t1 = time.perf_counter()
r = quicksim.run(sys.argv[1])
t2 = time.perf_counter()
r.summary()
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "run_s": t2 - t1, "loop_s": r.meta["wall_s"], "summary_s": t3 - t2}))
"""


def overhead(runs: int = 20, scenario: str = "linksharing") -> dict[str, Any]:
    """What `quicksim.run` costs beyond the core's run loop, per run, in one process (the case of
    a sweep of many short runs), on the showcase: medians over `runs` runs of the run loop's own
    wall time (`meta["wall_s"]`), of the rest of `quicksim.run` (scenario in, the core's
    building and tables, their hand-over, normalization, the `Result`), of making every
    DataFrame and of `summary()` (tables' hash, per-flow means). `outside_s` is the sum of the
    last three per run, the overhead a run that is summarized pays; `ratio` its median over the
    loop's. The first run of a fresh process (imports: numpy, pandas) is measured apart, in a
    subprocess. Wall seconds, with the load average: a measurement, not a timed test."""
    import os
    import statistics
    import subprocess

    rows: list[dict[str, float]] = []
    for _ in range(runs):
        started = time.perf_counter()
        result = api.run(scenario)
        ran = time.perf_counter()
        _ = result.tables
        tabled = time.perf_counter()
        result.summary()
        done = time.perf_counter()
        loop = float(result.meta["wall_s"])
        rows.append(
            {
                "loop_s": loop,
                "run_rest_s": ran - started - loop,
                "tables_s": tabled - ran,
                "summary_s": done - tabled,
                "outside_s": done - started - loop,
            }
        )
    medians = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_RUN, scenario], capture_output=True, text=True, check=True
    )
    return {
        "scenario": scenario,
        "runs": runs,
        **medians,
        "ratio": statistics.median(r["outside_s"] / r["loop_s"] for r in rows),
        "first_run": json.loads(out.stdout),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "all": rows,
    }


BASELINES: dict[str, Any] = {
    "many-flows": lambda: many_flows_scenario(idle=0),
    "many-flows-tcp": lambda: many_flows_tcp_scenario(idle=0),
}
"""Companion runs: many-flows(-tcp) without its idle flows, so (peak - baseline peak) / idle flows
is the memory one idle connection costs."""


def sweep_speedup(runs: int = 64, reps: int = 3, duration_s: float = 50.0) -> dict[str, Any]:
    """Wall time of a `runs`-run sweep of the linksharing showcase (`repeat = runs`, one metric)
    with jobs=1 and jobs=2, alternating, `reps` times each; the median ratio is the speed-up."""
    import importlib
    import os

    sweep_mod = importlib.import_module("quicksim.sweep")
    doc = linksharing_full_scenario()
    doc["run"]["duration"] = _seconds(duration_s)
    walls: dict[int, list[float]] = {1: [], 2: []}
    loads: list[list[float]] = []
    for _ in range(reps):
        for jobs in (1, 2):
            loads.append([round(x, 2) for x in os.getloadavg()])
            started = time.perf_counter()
            sweep_mod.sweep(doc, params={}, repeat=runs, metrics=["goodput_mbps"], jobs=jobs, progress=False)
            walls[jobs].append(time.perf_counter() - started)
    import statistics

    m1, m2 = statistics.median(walls[1]), statistics.median(walls[2])
    return {
        "runs": runs,
        "scenario": "linksharing",
        "duration_s": duration_s,
        "jobs1_wall_s": walls[1],
        "jobs2_wall_s": walls[2],
        "jobs1_median_s": m1,
        "jobs2_median_s": m2,
        "speedup": m1 / m2,
        "loadavg": loads,
        "cpus": os.cpu_count(),
    }


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
}
"""The fixed benchmark scenarios, by name: functions returning the scenario dict."""


def suite_worker(name: str, seed: int | None = None) -> dict[str, Any]:
    """One rep of a suite scenario in this process: the core is called directly (no progress
    callback, so no Python in the hot path, no pandas). Returns the figures plus this process's
    peak RSS; meant to run in a fresh subprocess so that the peak belongs to this run alone."""
    import resource

    from . import _native
    from .api import _to_json

    doc = (BASELINES[name[: -len("+baseline")]] if name.endswith("+baseline") else SUITE[name])()
    text = _to_json(doc)
    nflows, record = len(doc.get("flows", [])), doc["run"].get("record", "default (everything)")
    # The scenario as Python objects (~1 kB per flow) is not part of the run: free it, so that the
    # peak RSS of many flows measures the simulation, not the benchmark's input.
    del doc
    core = _native.load_core()
    rss_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    raw = core.run(text, seed, None)
    wall_total_s = time.perf_counter() - started
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    meta, totals = raw["meta"], raw["totals"]
    wall_s = max(float(meta["wall_s"]), 1e-9)
    hops = sum(int(link["packets"]) for link in totals["links"].values())
    # Packets the bottleneck's forward direction carried (dumbbells; None elsewhere).
    bn = totals["links"].get("bottleneck:router1->router2")
    events = int(meta["events"])
    sim_s = float(meta["sim_end_s"])
    return {
        "scenario": name,
        "flows": nflows,
        "events": events,
        "packet_hops": hops,
        "wall_s": wall_s,
        "wall_with_tables_s": wall_total_s,
        "events_per_s": events / wall_s,
        "packet_hops_per_s": hops / wall_s,
        "bottleneck_packets": None if bn is None else int(bn["packets"]),
        "bottleneck_packets_per_s": None if bn is None else int(bn["packets"]) / wall_s,
        # Each flow's share, to compare a run's dynamics with a peer's (`quicksim bench
        # --vs-htsim` prints Jain's index of it).
        "flow_delivered_bytes": [int(f["delivered_bytes"]) for f in totals["flows"].values()],
        "sim_s": sim_s,
        "sim_s_per_wall_s": sim_s / wall_s,
        "peak_rss_mib": peak_kib / 1024,
        "rss_before_run_mib": rss_before_kib / 1024,
        # Peak RSS at the end of the run loop, before the outputs are built: the simulation's
        # own state (None where the core cannot read /proc).
        "peak_rss_run_mib": (
            meta["peak_rss_run_kib"] / 1024 if meta.get("peak_rss_run_kib") is not None else None
        ),
        "trace_hash": meta["trace_hash"],
        "version": meta.get("version"),
        "build_profile": meta.get("build_profile"),
        # Built with the PGO profile (pgo/quicksim.profdata, scripts/rustc-pgo)?
        "pgo": meta.get("pgo"),
        "record": record,
    }


if __name__ == "__main__":
    sys.exit(main())
