"""Reproduce a published result: run it, plot it, and compare it with the theory.

`quicksim reproduce NAME` writes DIR/NAME/ (default out/reproduce/NAME, out/reproduce-quick/NAME
with --quick, which never overwrites a full-mode report): the PNGs, CSVs of the
numbers, checks.csv and report.md with measured and expected side by side and pass/fail.
`--all` runs every reproduction and also writes DIR/index.md; `--list` names them.
Simulations run in parallel on all cores (or on a Dask cluster with --scheduler) and are kept in
DIR/NAME/sweep*/, so rerunning an interrupted reproduction continues where it stopped.

Exit status 0 when every check passed, 1 when any failed, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._common import EXIT_ERROR, EXIT_USAGE, error, out_dir, positive

NAME = "reproduce"
HELP = "reproduce the paper's figures and the showcases, with reports that check them against theory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim reproduce`."""
    parser.add_argument("name", nargs="?", metavar="NAME", help="the reproduction (see --list)")
    parser.add_argument("--all", action="store_true", help="run every reproduction and write DIR/index.md")
    parser.add_argument("--list", action="store_true", help="list the reproductions and exit")
    parser.add_argument("--quick", action="store_true", help="fewer points and repetitions (for CI)")
    parser.add_argument(
        "--out",
        type=out_dir,
        metavar="DIR",
        help="output directory (default: out/reproduce, with --quick out/reproduce-quick)",
    )
    parser.add_argument(
        "--jobs", "-j", type=positive, metavar="N", help="local worker processes (default: all cores)"
    )
    parser.add_argument(
        "--scheduler", metavar="tcp://HOST:PORT", help="run the simulations on this Dask scheduler"
    )
    parser.add_argument("--progress", action="store_true", help="progress bars even when not on a terminal")
    parser.add_argument(
        "--ns3-python",
        metavar="PY",
        help="tcp-vs-ns3: compute ns-3's half fresh with the ns-3 of this Python (a venv with "
        "`pip install ns3==3.44.post0`; default $NS3_PYTHON, else the committed numbers)",
    )
    parser.add_argument(
        "--ns3-anchors",
        type=Path,
        metavar="DIR",
        help="tcp-vs-ns3 with --ns3-python: the ns-3 anchor sources (default $QUICKSIM_NS3_ANCHORS, "
        "else tools/ns3 of the checkout)",
    )


def main(args: argparse.Namespace) -> int:
    """Run the chosen reproduction(s) and print their checks."""
    from .. import reproduce as rp

    if args.list:
        for name, title in rp.titles().items():
            print(f"{name:<22} {title}")
        return 0
    if args.all == bool(args.name):
        error("name one reproduction or pass --all (see --list)")
        return EXIT_USAGE
    if args.name and args.name not in rp.REPRODUCTIONS:
        error(f"unknown reproduction {args.name!r}; choose from {', '.join(rp.REPRODUCTIONS)}")
        return EXIT_USAGE
    from ..validation import format_checks

    out = args.out if args.out is not None else rp.default_out(args.quick)
    options = {
        "quick": args.quick,
        "jobs": args.jobs,
        "scheduler": args.scheduler,
        "progress": args.progress or sys.stderr.isatty(),
        "ns3_python": args.ns3_python,
        "ns3_anchors": args.ns3_anchors,
    }
    names = list(rp.REPRODUCTIONS) if args.all else [args.name]
    reports = []
    for name in names:
        print(f"== {name}: {rp.module(name).TITLE}", flush=True)
        report = rp.reproduce(name, out, **options)
        reports.append(report)
        print(format_checks(report.checks))
        print(
            f"{report.passed}/{len(report.checks)} passed in {report.wall_s:.1f} s; report: {report.path}\n",
            flush=True,
        )
    if args.all:
        index = rp.write_index(reports, out)
        failed = [r.name for r in reports if not r.ok]
        print(f"index: {index}" + (f"; failed: {', '.join(failed)}" if failed else "; all passed"))
    return 0 if all(r.ok for r in reports) else EXIT_ERROR
