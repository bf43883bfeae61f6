"""The standard plots of `quicksim run`, drawn in worker processes while the run goes on.

Plotting was three quarters of the showcase's wall time (issue 35): importing matplotlib, then
seven figures one after another, all after the results were written. `PlotWorker` forks first
thing, before pandas is imported; the child imports only numpy and matplotlib, and until the
first figure arrives warms up its font cache and builds empty figures ahead
(`_sketch.build_spare`), while the parent imports pandas and simulates. The parent then
prepares the plots one at a time (`plotting.standard_sketches`: the pandas work) and sends each
as soon as it is ready, as drawing calls with their numpy data. The child forks once more; the
two processes take the figures from the pipe one at a time, in the order sent (the largest
first), and answer with the files written, while the parent saves the tables and prints the
summary. Where `fork` is unavailable (Windows, macOS's default) or there is one core, the
plots are drawn in this process afterwards, as before.

The children ignore Ctrl-C (the parent decides: it saves and plots what was simulated, or
aborts and ends them), form their own process group (which the parent ends as a whole), never
run the parent's exit handlers (`os._exit`), and end by themselves when the parent goes away
(end of file on the pipes).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterable
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
    """A forked process (and its helper) that draws the figures (`_sketch.Sketch`) it is sent
    into their files."""

    def __init__(self) -> None:
        import contextlib
        import multiprocessing
        from multiprocessing.connection import Pipe

        sys.stdout.flush()  # nothing buffered may be written twice
        sys.stderr.flush()
        self._conn, child = Pipe()  # the answer
        take, self._jobs = Pipe(duplex=False)  # the figures: this process writes, two read
        take_lock = multiprocessing.get_context("fork").Lock()  # one reader at a time
        self._pid = _fork()
        if self._pid == 0:  # the worker
            self._conn.close()
            self._jobs.close()  # its readers see end of file once this process's copy closes
            status = 1
            try:
                os.setpgid(0, 0)
                status = _serve(child, take, take_lock)
            finally:
                os._exit(status)
        child.close()
        take.close()
        # Here too, so that `close` can end the group before the child has made it; an error
        # means the child has ended already.
        with contextlib.suppress(OSError):
            os.setpgid(self._pid, self._pid)
        self._done = False
        self._sender: Any = None

    def submit(self, jobs: Iterable[tuple[Path, Any]]) -> None:
        """Send the figures to draw, as (PNG file, Sketch), each as soon as `jobs` yields it
        (`plotting.standard_sketches` prepares one per step), then the end of the list.

        A thread writes them to the pipe: the worker reads only once matplotlib is imported,
        and a pipe holds 64 kB, so writing here could keep the caller from saving and printing
        until then (issue 35)."""
        import queue
        import threading
        from multiprocessing.reduction import ForkingPickler

        outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._sender = threading.Thread(target=self._send, args=(outbox,), name="quicksim-plot-submit")
        self._sender.start()
        try:
            for seq, (path, sketch) in enumerate(jobs):
                outbox.put(bytes(ForkingPickler.dumps((seq, str(path), sketch))))
        finally:
            outbox.put(None)

    def _send(self, outbox: Any) -> None:
        import contextlib

        try:
            # OSError: the worker ended (killed as the caller aborts); `wait` reports it.
            with contextlib.suppress(OSError):
                while (data := outbox.get()) is not None:
                    self._jobs.send_bytes(data)
        finally:
            self._jobs.close()  # the end of the list: the drawing processes read to here

    def wait(self) -> list[Path]:
        """The files written, in the order sent, once both drawing processes are done; a
        worker's error is raised here as a RuntimeError with its message."""
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
        """End the worker and its helper (if they still run) and reap the worker; safe to call
        twice."""
        if self._done:
            return
        self._done = True
        if self._sender is None:
            self._jobs.close()  # nothing to draw: the worker reads the end of the list and exits
        try:
            pid, _ = os.waitpid(self._pid, os.WNOHANG)
            if pid == 0:  # still drawing, or still waiting for figures: the parent is aborting
                os.killpg(self._pid, signal.SIGTERM)
                os.waitpid(self._pid, 0)
        except (ChildProcessError, ProcessLookupError):
            pass
        if self._sender is not None:  # its writes end: done, or broken by the workers' end
            self._sender.join()
        self._conn.close()

    def __enter__(self) -> PlotWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(conn: Any, take: Any, take_lock: Any) -> int:
    """The worker: import matplotlib, use the time until the first figure arrives to warm it up
    and build spare figures, then draw in two processes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _import_matplotlib()
    from .._sketch import build_spare

    if not take.poll():
        _warm_up()
    for shape in _SPARE_SHAPES:
        if take.poll():
            break
        build_spare(*shape)
    try:
        written = _draw_with_helper(take, take_lock)
    except Exception as e:  # reported by the parent, which owns the error policy
        conn.send(("error", f"{type(e).__name__}: {e}"))
        return 1
    conn.send(("ok", written))
    return 0


def _draw_with_helper(take: Any, take_lock: Any) -> list[str]:
    """Draw the figures read from `take` in this process and a forked helper, each taking the
    next one when it is done with its last; the files written, in the order sent."""
    from multiprocessing.connection import Pipe

    mine_conn, helper_conn = Pipe()
    me = os.getpid()
    pid = _fork()
    if pid == 0:  # the helper
        mine_conn.close()
        status = 1
        try:
            try:
                helper_conn.send(("ok", _draw_taken(take, take_lock, lambda: os.getppid() != me)))
                status = 0
            except Exception as e:
                helper_conn.send(("error", f"{type(e).__name__}: {e}"))
        finally:
            os._exit(status)
    helper_conn.close()
    try:
        # The helper gone (end of file on its pipe) while this one waits for the pipe of figures:
        # it died holding the lock; its missing answer is reported below.
        written = _draw_taken(take, take_lock, mine_conn.poll)
        try:
            status, payload = mine_conn.recv()
        except EOFError:
            raise RuntimeError("the second plotting process ended without an answer") from None
    finally:
        mine_conn.close()
        os.waitpid(pid, 0)
    if status != "ok":
        raise RuntimeError(payload)
    return [path for _, path in sorted([*written, *payload])]


def _draw_taken(take: Any, take_lock: Any, gone: Callable[[], bool]) -> list[tuple[int, str]]:
    """Draw each figure this process reads from `take` until the end of the list, or until
    `gone()` says the other process is (checked while waiting for the pipe); (sequence number,
    file) of each."""
    import pickle

    from .._sketch import draw_sketches

    written: list[tuple[int, str]] = []
    while True:
        while not take_lock.acquire(timeout=0.5):  # the other process is reading, or waiting
            if gone():
                return written
        try:
            data = take.recv_bytes()
        except EOFError:
            return written
        finally:
            take_lock.release()
        seq, path, sketch = pickle.loads(data)
        draw_sketches([(Path(path), sketch)])
        written.append((seq, path))


_SPARE_SHAPES = ((3, 7.0),) + ((1, 4.5),) * 5
"""(panels, height in inches) of the figures built while the worker waits (`_sketch.build_spare`):
the zoom's (`plotting.plot_zoom`) and the five one-panel standard plots'; the queue plot's
depends on the number of queues. The second drawing process inherits them, so each process
has a spare of each."""


def _import_matplotlib() -> None:
    """Import what drawing needs: numpy and matplotlib, not pandas (the figures come prepared).

    Matplotlib writes, as it imports, the docstring of every Artist class's `set` method from
    the class's properties (`matplotlib.artist.kwdoc`): a fifth of the import's CPU (~0.08 of
    ~0.4 s, measured alternately), spent while the run also needs the CPU, for text nobody reads
    in this process. Here `kwdoc` returns "" for the classes defined after `matplotlib.artist`;
    nothing drawn depends on it (the files are those drawn in-process, tests/test_plot_worker).
    """
    import matplotlib.artist

    matplotlib.artist.kwdoc = lambda artist: ""
    import matplotlib.backends.backend_agg
    import matplotlib.figure

    from .. import _sketch  # noqa: F401


def _warm_up() -> None:
    """Draw one small figure with text, so that the fonts are loaded and the caches filled before
    the figures arrive (and before the second fork, which inherits them)."""
    from .. import _sketch

    fig = _sketch.new_figure(figsize=(1.0, 1.0))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    ax.set_title("warm")
    ax.legend()
    _sketch.png_bytes(fig, 20)
