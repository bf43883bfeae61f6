"""Pieces shared by the subcommands: common options, and the exit statuses and error policy of
`quicksim.errors` under the names the subcommands use."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, error, handle_errors

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "add_allow_python",
    "add_set_option",
    "error",
    "handle_errors",
    "out_dir",
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


def add_allow_python(parser: argparse.ArgumentParser) -> None:
    """Add `--allow-python`: the user's consent to import and run the Python controllers the
    scenario names (`cc = "py:module:Class"`); without it a scenario runs no Python code."""
    parser.add_argument(
        "--allow-python",
        action="store_true",
        help='import and run the Python controllers the scenario names (cc = "py:module:Class"); '
        "without it such a scenario is refused, and validation imports nothing",
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


def out_dir(text: str) -> Path:
    """argparse type for `--out DIR`: any path but the empty one (`--out ''` would write into the
    current directory; `_io.out_dir` is the same rule for the Python API)."""
    from .._io import out_dir as checked

    try:
        return checked(text, "--out")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--out: ")) from None


def seed(text: str) -> int:
    """argparse type for a seed: an integer in 0..2**64-1."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"{value} is out of range 0..2**64-1")
    return value
