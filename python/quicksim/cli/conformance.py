"""Run the conformance suite on a congestion controller and print its report card.

CC is a built-in controller (newreno, cubic), `py:package.module:Class` (a quicksim.cc.Controller
subclass, imported from the current directory too) or a name registered with quicksim.cc.register.
The suite's scenarios run in parallel on local cores; DIR/report.md (with plots) and
DIR/card.json are written (DIR defaults to out/conformance/CC, out/conformance-quick/CC with
--quick). The exit status is 0 whether or not every criterion passes (--strict: 1 if one fails).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import EXIT_ERROR, out_dir, positive

NAME = "conformance"
HELP = "run the conformance suite on a congestion controller; write its report card"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim conformance`."""
    parser.add_argument("cc", metavar="CC", help="controller: newreno, cubic, py:package.module:Class, ...")
    parser.add_argument("--quick", action="store_true", help="shorter runs and fewer loss-rate cells (CI)")
    parser.add_argument(
        "--out", type=out_dir, metavar="DIR", help="where report.md, card.json and the plots go"
    )
    parser.add_argument(
        "-j", "--jobs", type=positive, metavar="N", help="local processes (default: all cores)"
    )
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a criterion fails")


def main(args: argparse.Namespace) -> int:
    """Run the suite, print the card, write the report."""
    from .. import conformance

    root = Path("out") / ("conformance-quick" if args.quick else "conformance")
    out: Path = args.out if args.out is not None else root / conformance.slug(args.cc)
    card = conformance.run(args.cc, quick=args.quick, out=out, jobs=args.jobs)
    print(card.text())
    print(f"report: {out / 'report.md'}")
    return EXIT_ERROR if args.strict and card.passed < card.total else 0
