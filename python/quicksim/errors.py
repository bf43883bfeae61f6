"""The exceptions of the public API, and how a command turns them into one line and an exit
status (`handle_errors`, shared by `quicksim` and `python -m quicksim.bench`).

They are plain Python classes, so pure-Python code (scenario loading, overrides) can raise them
without the compiled core; `api` translates the core's own exceptions into these.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

__all__ = [
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "ControllerError",
    "ScenarioError",
    "SimulationError",
    "error",
    "handle_errors",
]

EXIT_ERROR = 1  # the run itself failed
EXIT_USAGE = 2  # bad input: arguments, files, scenario (argparse uses 2 as well)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


class ScenarioError(ValueError):
    """The scenario is invalid: bad TOML, a bad override, or rejected by the core's validator."""


class SimulationError(RuntimeError):
    """The simulation failed while running, including internal errors (panics) in the core."""


class ControllerError(SimulationError):
    """A congestion controller written in Python failed (an exception, or a window that is not a
    positive integer): the message names the controller, the callback and the simulated time; the
    Python exception, if any, is the `__cause__`."""


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
