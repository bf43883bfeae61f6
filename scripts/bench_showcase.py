"""Wall time of the README's first command (the showcase, `quicksim run scenarios/linksharing.toml`)
with and without its plots, in alternating fresh processes (issue 35: plots within 1.5x).

    python3 scripts/bench_showcase.py [--reps 9] [--tree NAME=PYTHONDIR ...] [--json FILE]

Each round runs every tree with plots, then with `--no-plots`, so all four see the same load;
prints each one's best and median and the plots/no-plots ratios of both, and the load average
after each round (the machine may be shared: rerun when it moved). `--tree` compares Python
trees (e.g. main's `python/` against a branch's, the same compiled core copied into both);
default: this checkout's `python/`. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHOWCASE = "scenarios/linksharing.toml"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reps", type=int, default=9, help="rounds (default 9)")
    parser.add_argument(
        "--tree", action="append", default=[], metavar="NAME=DIR", help="a Python tree to time"
    )
    parser.add_argument("--json", type=Path, help="write every rep and the loads here")
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": str(REPO / "python")}
    reps: dict[str, list[float]] = {f"{t}:{k}": [] for t in trees for k in ("plots", "no-plots")}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.reps):
            for name, path in trees.items():
                for kind in ("plots", "no-plots"):
                    out = Path(tmp) / f"{name}-{kind}"
                    shutil.rmtree(out, ignore_errors=True)
                    cmd = [sys.executable, "-m", "quicksim", "run", SHOWCASE, "--out", str(out)]
                    cmd += ["--no-plots"] if kind == "no-plots" else []
                    env = dict(os.environ, PYTHONPATH=str(Path(path).resolve()))
                    t0 = time.perf_counter()
                    subprocess.run(cmd, cwd=REPO, env=env, check=True, capture_output=True)
                    reps[f"{name}:{kind}"].append(time.perf_counter() - t0)
            loads.append(os.getloadavg()[0])
    for key, times in reps.items():
        line = " ".join(f"{x:.2f}" for x in times)
        print(f"{key:24s} best {min(times):.3f} s  median {statistics.median(times):.3f} s   {line}")
    for name in trees:
        p, q = reps[f"{name}:plots"], reps[f"{name}:no-plots"]
        best, median = min(p) / min(q), statistics.median(p) / statistics.median(q)
        print(f"{name}: plots / no-plots {best:.2f}x best, {median:.2f}x median")
    print("load average (1 min) after each round:", " ".join(f"{x:.1f}" for x in loads))
    if args.json:
        args.json.write_text(
            json.dumps({"reps": reps, "load": loads, "cpus": os.cpu_count()}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
