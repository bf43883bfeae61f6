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
from collections.abc import Sequence

from .harness import measure, outputs, overhead


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
    from ..errors import handle_errors

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


if __name__ == "__main__":
    sys.exit(main())
