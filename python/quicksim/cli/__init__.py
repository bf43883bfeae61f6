"""The `quicksim` command line.

Each subcommand is a module listed in `COMMANDS` (of this package, or named in full when it lives
elsewhere: `quicksim bench` is `quicksim.bench.cli`, with the benchmark harness) that defines:

    NAME: str                                       # the subcommand, e.g. "validate-model"
    HELP: str                                       # one line for `quicksim --help`
    def add_arguments(parser: ArgumentParser) -> None
    def main(args: Namespace) -> int                # the exit status

The module docstring becomes the subcommand's description. Modules import nothing heavy at the
top (pandas, matplotlib, tqdm, the core are imported inside `main`), so `--help` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ._common import handle_errors

__all__ = ["COMMANDS", "build_parser", "main"]

COMMANDS: tuple[str, ...] = (
    "run",
    "validate",
    "schema",
    "sweep",
    "reproduce",
    "report",
    "quicksim.bench.cli",
    "conformance",
)
"""Subcommand modules, in `--help` order: a module of this package by its name ("run"), any
other by its full dotted name."""


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one subparser per module in COMMANDS."""
    from .. import __version__

    parser = argparse.ArgumentParser(
        prog="quicksim",
        description="Packet-level network simulator: run scenarios, save tables and plots.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMANDS:
        module = importlib.import_module(module_name if "." in module_name else f"{__name__}.{module_name}")
        p = sub.add_parser(
            module.NAME,
            help=module.HELP,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_main=module.main)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `quicksim` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    return handle_errors(lambda: args._main(args))


if __name__ == "__main__":
    sys.exit(main())
