"""The standard plots of `quicksim run`, drawn in worker processes while the run goes on.

Plotting was three quarters of the showcase's wall time (issue 35): importing matplotlib, then
seven figures one after another, all after the results were written. `PlotWorker` forks first
thing, before pandas is imported; the child imports only numpy and matplotlib (and warms its
font cache) while the parent imports pandas and simulates. The parent then prepares the plots
(`plotting.standard_sketches`: the pandas work, a few hundred kB of drawing calls) and sends
them through a pipe; the child forks once more, and the two processes take the figures one at a
time, the largest first, until all are drawn, and answer with the files written, while the
parent saves the tables and prints the summary. Where `fork` is unavailable (Windows, macOS's
default) or there is one core, the plots are drawn in this process afterwards, as before.

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
    """One forked process that draws the figures (`_sketch.Sketch`) it is sent into their files."""

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

    def submit(self, jobs: Sequence[tuple[Path, Any]]) -> None:
        """Send the figures to draw, as (PNG file, Sketch) (`plotting.standard_sketches`).

        They are pickled here, before the caller goes on, and written by a thread: the worker
        reads them only once matplotlib is imported, and a pipe holds 64 kB, so a plain send
        could keep the caller from saving and printing until then (issue 35)."""
        import threading
        from multiprocessing.reduction import ForkingPickler

        data = ForkingPickler.dumps([(str(path), sketch) for path, sketch in jobs])
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
    """The worker: import and warm up matplotlib, wait for the figures, draw them in two processes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _warm_up()
    try:
        jobs = conn.recv()
    except (EOFError, OSError):
        return 0  # the parent stopped before the simulation ended
    try:
        written = _draw_shared([(Path(path), sketch) for path, sketch in jobs])
    except Exception as e:  # reported by the parent, which owns the error policy
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return 1
    conn.send(("ok", [str(p) for p in written]))
    return 0


def _draw_shared(jobs: Sequence[tuple[Path, Any]]) -> list[Path]:
    """Draw `jobs` in this process and a forked helper: each takes the next figure from a shared
    pipe of indices (the most panels first, the costliest), so neither waits while the other
    still has several to draw. The files written, in the order of `jobs`."""
    from multiprocessing.connection import Pipe

    if len(jobs) > 255:
        raise ValueError(f"at most 255 figures per worker, not {len(jobs)}")
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i][1].nrows)
    take, give = os.pipe()
    for i in order:  # one byte each, all written before either process reads
        os.write(give, bytes([i]))
    os.close(give)  # both read to end of file
    mine_conn, helper_conn = Pipe()
    pid = _fork()
    if pid == 0:  # the helper
        mine_conn.close()
        status = 1
        try:
            try:
                paths = _draw_taken(jobs, take)
                helper_conn.send(("ok", [str(p) for p in paths]))
                status = 0
            except Exception as e:
                helper_conn.send(("error", f"{type(e).__name__}: {e}"))
        finally:
            os._exit(status)
    helper_conn.close()
    try:
        written = _draw_taken(jobs, take)
        try:
            status, payload = mine_conn.recv()
        except EOFError:
            raise RuntimeError("the second plotting process ended without an answer") from None
    finally:
        os.close(take)
        mine_conn.close()
        os.waitpid(pid, 0)
    if status != "ok":
        raise RuntimeError(payload)
    done = {*written, *(Path(p) for p in payload)}
    return [path for path, _ in jobs if path in done]


def _draw_taken(jobs: Sequence[tuple[Path, Any]], take: int) -> list[Path]:
    """Draw the figures whose indices this process reads from `take` (one byte each; a read of
    one byte from a pipe is atomic, so no figure is drawn twice)."""
    from .._sketch import draw_sketches

    written: list[Path] = []
    while index := os.read(take, 1):
        written += draw_sketches([jobs[index[0]]])
    return written


def _warm_up() -> None:
    """Import matplotlib (not pandas: the figures come prepared), and draw one small figure with
    text, so that the fonts are loaded and the caches filled before the figures arrive (and
    before the second fork, which inherits them)."""
    import io

    from .. import _sketch

    fig = _sketch.new_figure(figsize=(1.0, 1.0))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    ax.set_title("warm")
    ax.legend()
    fig.savefig(io.BytesIO(), format="png", dpi=20)
