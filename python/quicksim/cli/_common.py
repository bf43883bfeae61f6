"""Pieces shared by the subcommands: common options, and the exit statuses and error policy of
`quicksim.errors` under the names the subcommands use."""

from __future__ import annotations

import argparse

from ..errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, error, handle_errors

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "add_set_option",
    "error",
    "handle_errors",
    "positive",
    "seed",
]


def add_set_option(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable `--set KEY=VALUE` scenario override."""
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario value, e.g. --set flows.sender1.start=2s or --set dumbbell.pairs=4 "
        "(repeatable; VALUE is read as TOML if it parses, else as a string)",
    )


def positive(text: str) -> int:
    """argparse type: an integer >= 1 (worker counts, repetitions)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def seed(text: str) -> int:
    """argparse type for a seed: an integer in 0..2**64-1."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"{value} is out of range 0..2**64-1")
    return value
