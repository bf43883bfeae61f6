"""Pieces shared by the subcommands: common options and the error-to-exit-status policy."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

from ..errors import ControllerError, ScenarioError, SimulationError

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "add_allow_python",
    "add_set_option",
    "error",
    "handle_errors",
    "out_dir",
    "seed",
]

EXIT_ERROR = 1  # the run itself failed
EXIT_USAGE = 2  # bad input: arguments, files, scenario (argparse uses 2 as well)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


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


def error(message: object) -> None:
    """Print `quicksim: error: ...` on one line to stderr."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    print(f"quicksim: error: {'; '.join(lines) or type(message).__name__}", file=sys.stderr)


def handle_errors(body: Callable[[], int]) -> int:
    """Run a subcommand, turning expected failures into one error line and an exit status.

    Anything not listed here is a bug and keeps its traceback.
    """
    try:
        return int(body() or 0)
    except KeyboardInterrupt:
        # The process is on its way out: a further Ctrl-C must not interrupt the clean-up at
        # exit (pool threads, atexit handlers) with an "Exception ignored" traceback.
        _ignore_sigint()
        print("quicksim: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (ScenarioError, ControllerError) as e:
        # A controller written in Python that fails is the user's input failing: one line (the
        # controller, the callback, the simulated time and the exception), as a bad scenario.
        error(e)
        return EXIT_USAGE
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as e:
        error(f"{e.strerror}: {e.filename}" if e.filename else e)
        return EXIT_USAGE
    except SimulationError as e:
        error(f"simulation failed: {e}")
        return EXIT_ERROR
    except ImportError as e:
        error(e)
        return EXIT_ERROR
    except BrokenPipeError:
        # stdout closed early (e.g. piped into `head`): not an error worth a message.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except OSError as e:
        error(f"{e.strerror or e}: {e.filename}" if e.filename else e)
        return EXIT_ERROR


def _ignore_sigint() -> None:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
