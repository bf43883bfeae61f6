"""Benchmark suite: fixed scenarios, medians of several runs, optionally side by side with ns-3.

Scenarios (built in code, `quicksim.bench.SUITE`):

  linksharing    the showcase, 50 s, 3 QUIC flows + UDP, recording what ns-3's linksharing
                 program measures (per-flow bytes per bin, drops)
  linksharing-full  the same, everything recorded as shipped (queue length and congestion
                 state at every change, link bins): what the showcase's plots cost
  linksharing-tcp  ns-3's linksharing program itself: 3 TCP NewReno flows with ns-3.44's
                 settings + UDP (linksharing-tcp.toml), recording what the program measures
  scale-100x1g   100 QUIC flows, 1 Gbit/s, 10 ms one way, BDP queue (2.5 MB), 30 s
  scale-100x1g-tcp  ns-3's scale program itself: the same with 100 TCP NewReno flows
  scale-10g      50 flows, 10 Gbit/s, 10 ms one way, BDP queue (25 MB), 10 s
  linksharing-quinn, linksharing-quinn-noenc  (only when named) the showcase with its 3 QUIC
                 flows run by the real quinn-proto stack (kind = "quinn", NewReno), with TLS
                 (rustls + ring) or the null packet protection: what encryption costs
  quinn-1g, quinn-1g-noenc  (only when named) one quinn flow filling 1 Gbit/s, 10 ms one way,
                 BDP queue, 10 s, with and without encryption
  many-flows     10 000 mostly idle QUIC connections (1 kB every 5 s) + 100 saturated, 10 s;
                 (many-flows-tcp: the same with TCP flows)
                 also run without the idle ones, for the memory per idle flow
  htsim-3x10m(-tcp), htsim-100x1g-tcp  the dumbbells of --vs-htsim (below): 3 flows all on,
                 10 Mbit/s, 25 kB, 50 s; 100 flows as scale-100x1g; TCP configured as htsim's
  sqrtn-155m-200-tcp  (only when named) buffer-sizing-sqrt-n's long flows as ns-3's sqrtn.cc:
                 200 TCP NewReno flows (ns-3.44's settings), 155 Mbit/s, RTTs 80-120 ms in 10
                 classes, 91 + 1 packets of DropTail (RTT C / sqrt n), 30 s
  sqrtn-2g5-1600-tcp  (only when named) the reproduction's largest run: 1 600 htsim-like TCP
                 NewReno flows, 2.5 Gbit/s, RTTs 80-120 ms, 521 packets, 60 s; with
                 --vs-htsim beside htsim, and a 10-flow baseline for the memory per flow

The scale and many-flows runs record only per-flow byte counters per bin
(run.record = { queues = false, links = false, conn = false, drops = false }).

Each rep runs in a fresh Python process that calls the core directly (no progress callback),
so the peak RSS is that run's. Reported: run-loop wall time, events, events/s, packet-hops/s,
simulated s per wall s and peak RSS, as medians; all reps and the load average go to the JSON.

--vs-ns3 builds the ns-3 anchor programs (linksharing.cc, scale.cc from the directory given by
--ns3-anchors or $QUICKSIM_NS3_ANCHORS, else tools/ns3 of the checkout) into a cache directory
against the ns-3 of the `ns3` PyPI wheel (--ns3-python or $NS3_PYTHON: a Python where
`pip install ns3==3.44.post0` was done), runs them and prints the wall-time ratio. ns-3's flows
are TCP NewReno. The *-tcp rows are the like-for-like comparison (quicksim's TCP NewReno against
ns-3's); the QUIC rows compare the same scenarios with another protocol. Rows that share an ns-3
program are measured in one alternating loop (quicksim QUIC, quicksim TCP, ns-3, and again), so
all see the same load.

--vs-htsim builds htsim (github Broadcom/csg-htsim: a checkout given by --htsim-src or
$QUICKSIM_HTSIM_SRC; nothing is fetched) with quicksim's harness and runs its two dumbbells (the
linksharing-like 3 flows all on for 50 s; scale-100x1g) alternately with quicksim's TCP and QUIC
on the same dumbbells, comparing bottleneck packets per wall second (`bench/vs_htsim.py`).
Without scenario names it runs only that comparison; with names, the workloads whose scenarios
are named (sqrtn-2g5-1600-tcp: the reproduction's largest run, TCP only).

ns-3's sqrtn program, htsim's harness and quicksim's reps also report the run loop's processor
time; the ratios of it are printed beside the wall-time ones (on a shared machine wall time
counts the time other processes held the core).

--sweep times a 64-run sweep of the showcase (quicksim.sweep) with jobs=1 and jobs=2 and prints
the speed-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

NAME = "bench"
HELP = "benchmark suite (wall time, events/s, memory), optionally side by side with ns-3"

SCENARIOS = (
    "linksharing",
    "linksharing-full",
    "linksharing-tcp",
    "scale-100x1g",
    "scale-100x1g-tcp",
    "scale-10g",
    "many-flows",
    "many-flows-tcp",
)
HTSIM_SCENARIOS = ("htsim-3x10m", "htsim-3x10m-tcp", "htsim-100x1g-tcp")
"""Scenarios of the htsim comparison (also runnable by name)."""
SQRTN_SCENARIOS = ("sqrtn-155m-200-tcp", "sqrtn-2g5-1600-tcp")
"""Run only when named: buffer-sizing-sqrt-n's long flows beside ns-3 (--vs-ns3) and htsim
(--vs-htsim)."""
QUINN_SCENARIOS = ("linksharing-quinn", "linksharing-quinn-noenc", "quinn-1g", "quinn-1g-noenc")
"""Run only when named: the real quinn-proto stack's speed, with and without encryption."""
WITH_BASELINE = ("many-flows", "many-flows-tcp")
"""Scenarios also run without their idle flows (`quicksim.bench.BASELINES`): memory per idle flow."""
NS3_PROGRAMS = {
    "linksharing": "linksharing",
    "linksharing-full": "linksharing",
    "linksharing-tcp": "linksharing",
    "scale-100x1g": "scale",
    "scale-100x1g-tcp": "scale",
    "sqrtn-155m-200-tcp": "sqrtn",
}
"""Suite scenario -> ns-3 anchor program with the same scenario (TCP NewReno)."""


def protocol(name: str) -> str:
    """The protocol of quicksim's flows in suite scenario `name`."""
    if name in QUINN_SCENARIOS:
        return "quinn"
    return "TCP" if name.endswith("-tcp") else "QUIC"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim bench`."""
    parser.add_argument(
        "scenarios",
        nargs="*",
        metavar="SCENARIO",
        help=f"subset of {', '.join((*SCENARIOS, *QUINN_SCENARIOS, *SQRTN_SCENARIOS))} "
        "(default all but the quinn and sqrtn ones)",
    )
    parser.add_argument(
        "--reps", type=int, default=3, help="runs per scenario (default 3; the median is reported)"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=Path("bench.json"),
        metavar="PATH",
        help="where to write all figures (default bench.json)",
    )
    parser.add_argument(
        "--vs-ns3", action="store_true", help="also build and run the ns-3 anchors and print the ratio"
    )
    parser.add_argument(
        "--ns3-anchors",
        type=Path,
        metavar="DIR",
        help="ns-3 anchor sources (default $QUICKSIM_NS3_ANCHORS, else tools/ns3 of the checkout)",
    )
    parser.add_argument("--ns3-python", metavar="PY", help="Python with the ns3 wheel (default $NS3_PYTHON)")
    parser.add_argument("--ns3-reps", type=int, default=3, help="ns-3 linksharing runs (default 3)")
    parser.add_argument(
        "--ns3-scale-reps", type=int, default=1, help="ns-3 scale runs (~5 min each; default 1)"
    )
    parser.add_argument(
        "--vs-htsim", action="store_true", help="run htsim's dumbbells beside quicksim's (see --htsim-src)"
    )
    parser.add_argument("--htsim-src", metavar="DIR", help="csg-htsim checkout (default $QUICKSIM_HTSIM_SRC)")
    parser.add_argument(
        "--htsim-cache",
        type=Path,
        metavar="DIR",
        help="htsim build dir (default ~/.cache/quicksim/htsim)",
    )
    parser.add_argument(
        "--sweep", action="store_true", help="also time a 64-run sweep with jobs=1 and jobs=2"
    )
    parser.add_argument(
        "--cache", type=Path, metavar="DIR", help="build dir for ns-3 (default ~/.cache/quicksim/ns3-anchors)"
    )


def main(args: argparse.Namespace) -> int:
    """Run the suite, print a table, write the JSON."""
    names = args.scenarios or ([] if args.vs_htsim else list(SCENARIOS))
    known = (*SCENARIOS, *HTSIM_SCENARIOS, *QUINN_SCENARIOS, *SQRTN_SCENARIOS)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"quicksim bench: unknown scenario {unknown[0]!r}; choose from {', '.join(known)}")
    if args.reps < 1:
        raise SystemExit("quicksim bench: --reps must be at least 1")
    report: dict[str, Any] = {"machine": _machine(), "quicksim": {}, "ns3": {}, "ratios": {}}
    if names:
        print("ns-3's flows are TCP NewReno; quicksim's are QUIC NewReno, or TCP NewReno in the *-tcp rows.")
    bindir = _build_ns3(args) if args.vs_ns3 else None
    done: set[str] = set()
    if args.vs_htsim:
        # A scenario of an htsim workload runs in that comparison's alternating loop only.
        from .htsim import WORKLOADS

        done.update(w.tcp_scenario for w in WORKLOADS)
        done.update(w.quic_scenario for w in WORKLOADS if w.quic_scenario is not None)
    for name in names:
        if name in done:
            continue
        # With --vs-ns3 the quicksim and ns-3 reps alternate, so both sides see the same machine
        # load (it drifts by 1.5x and more over minutes on a shared machine); the scenarios that
        # share an ns-3 program share its reps, in one loop.
        prog = NS3_PROGRAMS.get(name) if bindir is not None else None
        group = [name] + [m for m in names if prog is not None and m != name and NS3_PROGRAMS.get(m) == prog]
        done.update(group)
        n3 = 0 if prog is None else (args.ns3_scale_reps if prog == "scale" else args.ns3_reps)
        reps: dict[str, list[dict[str, Any]]] = {m: [] for m in group}
        reps3: list[dict[str, Any]] = []
        for i in range(max(args.reps, n3)):
            for m in group:
                if i < args.reps:
                    reps[m].append(_quicksim_rep(m))
            if i < n3 and bindir is not None and prog is not None:
                reps3.append(_ns3_rep(bindir / prog))
        if reps3 and prog is not None:
            report["ns3"][prog] = {"median": _median(reps3), "reps": reps3}
            _print_row("ns-3", prog, report["ns3"][prog]["median"], len(reps3))
        for m in group:
            _report_row(report, m, reps[m], prog if reps3 else None, first=m == names[0])
            if m in WITH_BASELINE:
                _many_flows_baseline(report, args, m)
    if args.vs_htsim:
        from . import vs_htsim

        vs_htsim.run(args, report, _quicksim_rep, _median)
    if args.sweep:
        from .harness import sweep_speedup

        sw = sweep_speedup(reps=args.reps)
        report["sweep"] = sw
        print(
            f"sweep of {sw['runs']} linksharing runs: jobs=1 {sw['jobs1_median_s']:.2f} s, "
            f"jobs=2 {sw['jobs2_median_s']:.2f} s (medians of {args.reps}): speed-up {sw['speedup']:.2f}x"
        )
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.json}")
    return 0


def _report_row(
    report: dict[str, Any], name: str, reps: list[dict[str, Any]], prog: str | None, first: bool
) -> None:
    """Store and print scenario `name`'s medians, and its ratio to ns-3's program `prog`."""
    report["quicksim"][name] = {"median": _median(reps), "reps": reps, "protocol": protocol(name)}
    if first:
        pgo = reps[0].get("pgo")
        build = "profile-guided (pgo/quicksim.profdata)" if pgo else "without the PGO profile"
        print(f"quicksim core: {reps[0].get('build_profile')} build, {build}")
    _print_row("quicksim", name, report["quicksim"][name]["median"], len(reps))
    if prog is None:
        return
    q, s3 = report["quicksim"][name]["median"], report["ns3"][prog]["median"]
    ratio = {
        "ns3_program": prog,
        "compares": f"quicksim {protocol(name)} NewReno vs ns-3 TCP NewReno",
        "run_loop_wall": s3["wall_s"] / q["wall_s"],
        "process_wall": s3["process_wall_s"] / q["process_wall_s"],
        "events_per_s": q["events_per_s"] / s3["events_per_s"],
        # The fastest rep of each side (see `vs_htsim`: on a host with other tenants the
        # medians also compare how often each side ran in a slow spell).
        "run_loop_wall_best": min(r["wall_s"] for r in report["ns3"][prog]["reps"])
        / min(r["wall_s"] for r in reps),
    }
    if "cpu_s" in q and "cpu_s" in s3:
        ratio["run_loop_cpu"] = s3["cpu_s"] / q["cpu_s"]
        ratio["run_loop_cpu_best"] = min(r["cpu_s"] for r in report["ns3"][prog]["reps"]) / min(
            r["cpu_s"] for r in reps
        )
    report["ratios"][name] = ratio
    print(
        f"  {name} ({ratio['compares']}): quicksim is {ratio['run_loop_wall']:.1f}x faster than ns-3 "
        f"in run-loop wall time ({ratio['process_wall']:.1f}x in process wall time, "
        f"{ratio['events_per_s']:.1f}x in events/s; fastest rep against fastest rep "
        f"{ratio['run_loop_wall_best']:.1f}x)"
        + (
            f"; in processor time {ratio['run_loop_cpu']:.1f}x (medians), {ratio['run_loop_cpu_best']:.1f}x "
            "(best against best)"
            if "run_loop_cpu" in ratio
            else ""
        )
    )


def _many_flows_baseline(report: dict[str, Any], args: argparse.Namespace, name: str) -> None:
    """`name` (many-flows, many-flows-tcp) without its idle flows: the memory one idle connection
    costs."""
    base = [_quicksim_rep(name + "+baseline") for _ in range(args.reps)]
    bm, m = _median(base), report["quicksim"][name]["median"]
    idle = m["flows"] - bm["flows"]
    per_flow = (m["peak_rss_mib"] - bm["peak_rss_mib"]) * 1024 * 1024 / idle
    state = None
    if "peak_rss_run_mib" in m and "peak_rss_run_mib" in bm:
        state = (m["peak_rss_run_mib"] - bm["peak_rss_run_mib"]) * 1024 * 1024 / idle
    report["quicksim"][name].update(
        baseline={"median": bm, "reps": base},
        bytes_per_idle_flow=per_flow,
        state_bytes_per_idle_flow=state,
    )
    print(
        f"{'':>8} {'':<13} without the {idle} idle flows: peak {bm['peak_rss_mib']:.1f} MiB; "
        + (
            f"{state / 1024:.1f} kB per idle flow while running (peak RSS at the end of the run loop), "
            if state is not None
            else ""
        )
        + f"{per_flow / 1024:.1f} kB with the outputs (peak RSS of the process)"
    )


def _loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def _machine() -> dict[str, Any]:
    import platform

    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "loadavg_start": _loadavg(),
    }


def _quicksim_rep(name: str) -> dict[str, Any]:
    load = _loadavg()
    code = f"import json, quicksim.bench as b; print(json.dumps(b.suite_worker({name!r})))"
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    rep: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    rep["process_wall_s"] = time.perf_counter() - started
    rep["loadavg"] = load
    return rep


def _median(reps: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [
        k
        for k in reps[0]
        if all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for r in reps)
    ]
    return {k: statistics.median(r[k] for r in reps) for k in keys}


def _print_row(who: str, name: str, m: dict[str, Any], n: int) -> None:
    print(
        f"{who:>8} {name:<13} wall {m['wall_s']:8.3f} s  events {m['events']:>12,.0f}  "
        f"{m['events_per_s'] / 1e6:6.2f} M ev/s  "
        + (f"{m['packet_hops_per_s'] / 1e6:6.2f} M hops/s  " if "packet_hops_per_s" in m else "")
        + f"{m['sim_s_per_wall_s']:8.2f} sim-s/wall-s  peak {m['peak_rss_mib']:7.1f} MiB  (median of {n})"
    )


def _build_ns3(args: argparse.Namespace) -> Path:
    """Copy the anchor sources into the cache dir and build there (never in the repository)."""
    from . import ns3

    src = ns3.anchors_dir(args.ns3_anchors, "quicksim bench --vs-ns3")
    return ns3.build(src, args.ns3_python, args.cache)


def _ns3_rep(binary: Path) -> dict[str, Any]:
    load = _loadavg()
    with tempfile.TemporaryDirectory(prefix="quicksim-ns3-") as out:
        started = time.perf_counter()
        res = subprocess.run([str(binary), f"--outdir={out}"], check=True, capture_output=True, text=True)
        process_wall_s = time.perf_counter() - started
    s = json.loads(res.stdout.strip().splitlines()[-1])
    perf = s["perf"]
    return {
        "events": perf["events"],
        "wall_s": perf["run_wall_s"],
        # The run loop's processor time, where the program reports it (sqrtn.cc).
        **({"cpu_s": perf["run_cpu_s"]} if "run_cpu_s" in perf else {}),
        "events_per_s": perf["events_per_wall_s"],
        "sim_s_per_wall_s": perf["sim_s_per_wall_s"],
        "peak_rss_mib": perf["max_rss_kib"] / 1024,
        "process_wall_s": process_wall_s,
        "loadavg": load,
    }
