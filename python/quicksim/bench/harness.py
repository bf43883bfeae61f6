"""Measuring the benchmarks: one run's figures (`measure`), the output steps (`outputs`), the
per-run overhead (`overhead`), a sweep's speed-up (`sweep_speedup`) and one suite rep in this
process (`suite_worker`, what `quicksim bench` runs in a fresh subprocess per rep)."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from .. import api
from .scenarios import BASELINES, SUITE, _seconds, linksharing_full_scenario, scenario, short_flows_scenario

__all__ = ["measure", "outputs", "overhead", "suite_worker", "sweep_speedup"]


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


def outputs(flows: int = 10_000, plots: bool = True) -> dict[str, Any]:
    """Wall time of each output step of a `short_flows_scenario(flows)` run, as `quicksim run`
    does them: simulate (with the conversion to Python), tables (DataFrames), summary, save
    (Parquet + JSON) and, with `plots`, the standard PNGs. Every step must stay linear in flows."""
    import tempfile

    from ..plotting import save_standard_plots

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


def suite_worker(name: str, seed: int | None = None) -> dict[str, Any]:
    """One rep of a suite scenario in this process: the core is called directly (no progress
    callback, so no Python in the hot path, no pandas). Returns the figures plus this process's
    peak RSS; meant to run in a fresh subprocess so that the peak belongs to this run alone."""
    import resource

    from .. import _native

    doc = (BASELINES[name[: -len("+baseline")]] if name.endswith("+baseline") else SUITE[name])()
    # The suite's scenarios are built in code from plain values: the JSON the core reads is what
    # `quicksim.run` would hand it (the same text, so the same scenario hash).
    text = json.dumps(doc, allow_nan=False)
    # A flow group (`count`) is that many flows.
    nflows = sum(int(f.get("count", 1)) for f in doc.get("flows", []))
    record = doc["run"].get("record", "default (everything)")
    # The scenario as Python objects (~1 kB per flow) is not part of the run: free it, so that the
    # peak RSS of many flows measures the simulation, not the benchmark's input.
    del doc
    core = _native.load_core()
    rss_before_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started, cpu_started = time.perf_counter(), time.process_time()
    raw = core.run(text, seed, None)
    wall_total_s = time.perf_counter() - started
    # Processor time of the call (the run loop plus handing over the tables, light here): on a
    # shared machine the wall time also counts the time other processes held the core.
    cpu_s = time.process_time() - cpu_started
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
        "cpu_s": cpu_s,
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
