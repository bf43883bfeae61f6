"""Core throughput benchmark: a UDP dumbbell that keeps a 1 Gbit/s bottleneck busy.

    python -m quicksim.bench [--duration 10] [--seed 1] [--json]

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

__all__ = ["measure", "scenario"]


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
    args = parser.parse_args(argv)
    if not args.duration > 0:
        parser.error("--duration must be positive")
    from .cli._common import handle_errors

    return handle_errors(lambda: _report(args))


def _report(args: argparse.Namespace) -> int:
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


def _seconds(value: float) -> str:
    text = f"{value:.9f}".rstrip("0").rstrip(".")
    return f"{text}s"


if __name__ == "__main__":
    sys.exit(main())
