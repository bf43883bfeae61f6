"""The standard plots of `quicksim run`, drawn in worker processes while the run goes on.

Plotting was three quarters of the showcase's wall time (issue 35): importing matplotlib, then
seven figures one after another, all after the results were written. `PlotWorker` forks before
the simulation; the child imports matplotlib and warms its font cache while the parent
simulates, then receives the Result (pickled through a pipe), forks once more so that two
processes draw half of the figures each, and answers with the files written, while the parent
saves the tables and prints the summary. Where `fork` is unavailable (Windows, macOS's default)
or there is one core, the plots are drawn in this process afterwards, as before.

The children ignore Ctrl-C (the parent decides: it saves and plots what was simulated, or
aborts and ends them), never run the parent's exit handlers (`os._exit`), and end by themselves
when the parent goes away (end of file on the pipe).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["PlotWorker", "forking_helps"]


def forking_helps() -> bool:
    """Whether drawing in forked workers can be faster here and is safe: fork exists, the process
    may use more than one core, and it runs no other Python thread (whose locks a child could
    inherit held; a program calling `cli.main` from a thread draws in-process)."""
    import threading

    if not hasattr(os, "fork") or sys.platform != "linux" or threading.active_count() > 1:
        return False
    return len(os.sched_getaffinity(0)) > 1


def _fork() -> int:
    """os.fork, without Python 3.12's warning about the native threads of numpy's BLAS and
    Arrow's pools: both libraries re-create their pools in a forked child (pthread_atfork), and
    the children use nothing else of the parent's threads."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


class PlotWorker:
    """One forked process that draws the standard plots of the Result it is sent."""

    def __init__(self) -> None:
        from multiprocessing.connection import Pipe

        sys.stdout.flush()  # nothing buffered may be written twice
        sys.stderr.flush()
        self._conn, child = Pipe()
        self._pid = _fork()
        if self._pid == 0:  # the worker
            self._conn.close()
            status = 1
            try:
                status = _serve(child)
            finally:
                os._exit(status)
        child.close()
        self._done = False
        self._sender: Any = None

    def submit(self, result: Any, out: Path) -> None:
        """Send the Result to draw into `out` (its tables are pickled as numpy arrays).

        The Result is pickled here, before the caller goes on using it, and written by a thread:
        the worker reads it only once matplotlib is imported, and the pipe holds 64 kB of its
        ~5 MB, so a plain send kept the caller from saving and printing until then (0.5 s on
        the showcase, issue 35)."""
        import threading
        from multiprocessing.reduction import ForkingPickler

        data = ForkingPickler.dumps((result, str(out)))
        self._sender = threading.Thread(target=self._send, args=(data,), name="quicksim-plot-submit")
        self._sender.start()

    def _send(self, data: Any) -> None:
        import contextlib

        # OSError: the worker ended (killed as the caller aborts); `wait` reports a lost answer.
        with contextlib.suppress(OSError):
            self._conn.send_bytes(data)

    def wait(self) -> list[Path]:
        """The files written, once both drawing processes are done; a worker's error is raised
        here as a RuntimeError with its message."""
        try:
            status, payload = self._conn.recv()
        except EOFError:
            raise RuntimeError("the plotting worker ended without an answer") from None
        finally:
            self.close()
        if status != "ok":
            raise RuntimeError(f"plotting failed: {payload}")
        return [Path(p) for p in payload]

    def close(self) -> None:
        """End the worker (if it still runs) and reap it; safe to call twice."""
        if self._done:
            return
        self._done = True
        if self._sender is None:
            self._conn.close()  # a worker waiting for its Result sees end of file and exits
        try:
            pid, _ = os.waitpid(self._pid, os.WNOHANG)
            if pid == 0:  # still drawing, or still reading the Result: the parent is aborting
                os.kill(self._pid, signal.SIGTERM)
                os.waitpid(self._pid, 0)
        except ChildProcessError:
            pass
        if self._sender is not None:  # its write ends: done, or broken by the worker's end
            self._sender.join()
            self._conn.close()

    def __enter__(self) -> PlotWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(conn: Any) -> int:
    """The worker: import and warm up matplotlib, wait for the Result, draw it in two processes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _warm_up()
    try:
        result, out = conn.recv()
    except (EOFError, OSError):
        return 0  # the parent stopped before the simulation ended
    from ..plotting import STANDARD_PLOTS

    names = [name for name, _, _ in STANDARD_PLOTS]
    try:
        written = _draw_split(result, Path(out), names)
    except Exception as e:  # reported by the parent, which owns the error policy
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return 1
    conn.send(("ok", [str(p) for p in written]))
    return 0


def _draw_split(result: Any, out: Path, names: Sequence[str]) -> list[Path]:
    """Draw `names`, the costly ones (`_COSTLY`) in a forked helper, the rest here; returned in
    the standard order."""
    from multiprocessing.connection import Pipe

    from ..plotting import save_standard_plots

    theirs = [n for n in names if n in _COSTLY]
    mine = [n for n in names if n not in _COSTLY]
    mine_conn, helper_conn = Pipe()
    pid = _fork()
    if pid == 0:  # the helper
        mine_conn.close()
        status = 1
        try:
            try:
                paths = save_standard_plots(result, out, only=theirs)
                helper_conn.send(("ok", [str(p) for p in paths]))
                status = 0
            except Exception as e:
                helper_conn.send(("error", f"{type(e).__name__}: {e}"))
        finally:
            os._exit(status)
    helper_conn.close()
    try:
        written = save_standard_plots(result, out, only=mine)
        try:
            status, payload = mine_conn.recv()
        except EOFError:
            raise RuntimeError("the second plotting process ended without an answer") from None
    finally:
        mine_conn.close()
        os.waitpid(pid, 0)
    if status != "ok":
        raise RuntimeError(payload)
    done = {p.name: p for p in [*written, *(Path(p) for p in payload)]}
    return [done[n] for n in names if n in done]


_COSTLY = frozenset({"queue_length.png", "congestion_window.png", "cwnd_queue_drops.png"})
"""The three of the seven standard plots that take about half of their drawing time (the zoom's
three panels, the queue's panels, the congestion windows' long series), measured on the
showcase."""


def _warm_up() -> None:
    """Import matplotlib and the plotting module, and draw one small figure with text, so that the
    fonts are loaded and the caches filled before the Result arrives (and before the second
    fork, which inherits them)."""
    import io

    from .. import plotting

    fig = plotting.new_figure(figsize=(1.0, 1.0))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    ax.set_title("warm")
    ax.legend()
    fig.savefig(io.BytesIO(), format="png", dpi=20)
