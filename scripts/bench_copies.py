#!/usr/bin/env python3
"""Compare builds of the scenario runner (examples/run_json.rs) on one scenario, each build run
from several fresh copies of its file, alternately.

On this project's VM two byte-identical binaries ran linksharing 6 % apart, run after run: the
speed of a binary depends on where its file's pages landed in memory, not only on its code
(docs/performance/history/round-10.md). Timing one file per build therefore measures that
placement as much as the change. Here each build is copied to K new files; every round runs every
copy of every build once (REPS repetitions in one process, their median); a copy's figure is
its median over the rounds, a build's figure the median of its copies', so one unlucky copy does
not decide. The first build is the baseline of the ratios.

    scripts/bench_copies.py SCENARIO.json BIN_A BIN_B [...] --reps 7 --rounds 3 --copies 5
    scripts/bench_copies.py s.json old=target-old/run_json new=target/release/examples/run_json

Each build also gets its best rep and the 10th percentile of all its reps, with the ratio of
the bests: on a host whose speed comes and goes with other tenants' load
(docs/performance/history/round-11.md: the same file ran 0.024 s or 0.043 s depending on the
minute), medians also measure how often a build ran in a slow spell; the best reps do not.

A build may be named `NAME=PATH`; `--scenario-for NAME=FILE` gives one build its own scenario
file (an older build that does not read a newer field). Wall time is the run loop's, from
the runner's `events` and `ev/s` (more digits than its `wall_s`).
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

LINE = re.compile(r"events (\d+) wall_s \S+ ev/s (\S+)")


def run_once(binary: str, scenario: str, reps: int) -> list[float]:
    """Run-loop wall times (s) of `reps` repetitions in one process."""
    out = subprocess.run([binary, scenario, str(reps)], capture_output=True, text=True, check=True).stdout
    walls = [int(m.group(1)) / float(m.group(2)) for m in LINE.finditer(out)]
    if not walls:
        sys.exit(f"bench_copies: no 'events N wall_s W ev/s R' line from {binary}:\n{out}")
    return walls


def quantile(values: list[float], q: float) -> float:
    """The `q` quantile of `values` as the value at rank round(q * (n - 1)) of the sorted list
    (q = 0: the minimum)."""
    v = sorted(values)
    return v[round(q * (len(v) - 1))]


def compare(
    builds: dict[str, str], scenarios: dict[str, str], reps: int, rounds: int, copies: int, tmp: Path
) -> dict[str, list[list[list[float]]]]:
    """Each build's wall times: per copy, per round, the run's reps; every copy of every build
    run once per round."""
    files: dict[str, list[str]] = {}
    for name, path in builds.items():
        files[name] = []
        for k in range(copies):
            dst = tmp / f"{name}.{k}"
            shutil.copy2(path, dst)
            files[name].append(str(dst))
    times: dict[str, list[list[list[float]]]] = {name: [[] for _ in range(copies)] for name in builds}
    for _ in range(rounds):
        for k in range(copies):
            for name in builds:
                times[name][k].append(run_once(files[name][k], scenarios[name], reps))
    return times


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument(
        "builds", nargs="+", help="PATH or NAME=PATH of a run_json binary; the first is the baseline"
    )
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--scenario-for", action="append", default=[], metavar="NAME=FILE")
    a = ap.parse_args(argv)
    builds: dict[str, str] = {}
    for b in a.builds:
        name, _, path = b.rpartition("=")
        name = name or Path(path).name
        if name in builds:  # the same file (or name) twice: keep both
            name = f"{name}#{len(builds)}"
        builds[name] = path
    scenarios = {name: a.scenario for name in builds}
    for s in a.scenario_for:
        name, _, path = s.partition("=")
        if name not in scenarios:
            sys.exit(f"bench_copies: --scenario-for names {name!r}, not one of {sorted(scenarios)}")
        scenarios[name] = path
    with tempfile.TemporaryDirectory(prefix="bench_copies.") as d:
        times = compare(builds, scenarios, a.reps, a.rounds, a.copies, Path(d))
    # A copy's figure: the median over the rounds of each run's median.
    meds = {n: [statistics.median(statistics.median(r) for r in c) for c in t] for n, t in times.items()}
    every = {n: [w for c in t for r in c for w in r] for n, t in times.items()}
    base = statistics.median(next(iter(meds.values())))
    base_best = min(next(iter(every.values())))
    for name, m in meds.items():
        mid = statistics.median(m)
        best = min(every[name])
        copies = " ".join(f"{x:.5f}" for x in m)
        print(
            f"{name:20s} {mid:.5f} s  x{mid / base:.4f}  best {best:.5f} s  x{best / base_best:.4f}  "
            f"p10 {quantile(every[name], 0.1):.5f} s  copies {copies}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
