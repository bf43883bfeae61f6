"""Executing runs: one run in a worker (`_execute`, errors recorded, never raised), and the three
ways to run many: in this process, on a local process pool (a crashed worker's runs go to a
new pool, up to 3 times) or on a Dask cluster. Each yields (task, record) as runs finish.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import traceback
from collections.abc import Iterator, Mapping
from typing import Any

from .. import api, metrics
from ..errors import SimulationError
from .plan import PlanError
from .store import _jsonable


def _execute(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one simulation and compute its metrics; returns a small JSON-ready record.

    Errors are caught and recorded: a failed run must not end the sweep. KeyboardInterrupt and
    other BaseExceptions pass through, so an interrupt is never recorded as a failed run.
    """
    started = time.perf_counter()
    record: dict[str, Any] = {"values": {}, "series": {}, "error": None, "events": None, "sim_wall_s": None}
    try:
        _register_controllers(task.get("controllers") or {})
        result = api.run(task["scenario"], seed=task["seed"], allow_python=task.get("allow_python", False))
        record["events"] = result.meta.get("events")
        record["sim_wall_s"] = result.meta.get("wall_s")
        errors = []
        for label, fn, params in task["metrics"]:
            try:
                if isinstance(fn, str):  # a user's module:function, imported in this worker
                    fn = metrics.resolve_path(fn)
                values, series = metrics.compute(result, fn, label, params)
            except Exception as e:
                errors.append(f"metric {label}: {type(e).__name__}: {e}")
                continue
            record["values"].update(values)
            if series is not None:
                record["series"][label] = {c: series[c].tolist() for c in ("t_s", "key", "value")}
        record["metrics"] = [label for label, _, _ in task["metrics"]]
        if errors:
            record["error"] = "; ".join(errors)
        if task.get("keep"):
            from .kept import pack

            record["kept"] = pack(result, task["keep"])
    except Exception as e:
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        record["error"] = f"{type(e).__name__}: {e}"
        record["traceback"] = "".join(tb[-6:])
    record["wall_s"] = time.perf_counter() - started
    record["worker"] = f"{os.uname().nodename}:{os.getpid()}" if hasattr(os, "uname") else str(os.getpid())
    return dict(_jsonable(record))


def _register_controllers(paths: Mapping[str, str]) -> None:
    """Registers the sweep's named Python controllers in this (worker) process by import path."""
    from .. import cc

    for name, path in paths.items():
        if name not in cc.registered():
            cc.register(name, cc.resolve(cc.PY_PREFIX + path))


def _serial(tasks: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for task in tasks:
        yield task, _execute(task)


def _init_worker() -> None:
    """Set up a pool worker: ignore Ctrl-C, and exit when the sweep's process dies.

    Ctrl-C goes to the whole process group; only the parent should react (and stop the pool).
    A parent killed outright (SIGKILL, OOM killer) cannot stop its pool, and the workers would
    live on, parentless, holding their memory: a watchdog thread checks every
    `_WATCHDOG_S` whether the parent is still there and ends the worker when it is not (the
    run in progress releases the GIL, so the thread runs during a simulation too).
    """
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The process that started this worker: the sweep's (fork) or its fork server (forkserver,
    # spawn), which itself exits with the sweep's process.
    parent = os.getppid()

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(_WATCHDOG_S)

    threading.Thread(target=watch, name="quicksim-parent-watchdog", daemon=True).start()


_WATCHDOG_S = 0.5


def _local(tasks: list[dict[str, Any]], jobs: int) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """A process pool with the platform's default start method.

    The workers start here, before the caller creates its progress bar: with fork, a process
    should not fork once it runs threads. With spawn or forkserver (macOS, Windows, Python
    3.14+), a script calling `sweep` needs the usual `if __name__ == "__main__":` guard.
    """
    pool, futures = _start_pool(tasks, jobs)
    return _drain_pool(pool, futures, jobs)


def _start_pool(tasks: list[dict[str, Any]], jobs: int) -> tuple[Any, dict[Any, dict[str, Any]]]:
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), initializer=_init_worker)
    return pool, {pool.submit(_execute, t): t for t in tasks}


def _drain_pool(
    pool: Any, futures: dict[Any, dict[str, Any]], jobs: int
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Yield results as they finish. A worker that dies (a crash, not an exception) breaks the
    whole pool: the unfinished runs go to a new pool, and a run caught in 3 breaks is recorded
    as failed."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    breaks: dict[str, int] = {}
    while True:
        pending: list[dict[str, Any]] = []
        clean = False
        try:
            not_done = set(futures)
            while not_done:
                done, not_done = wait(not_done, return_when=FIRST_COMPLETED)
                for f in done:
                    task = futures[f]
                    try:
                        record = f.result()
                    except BrokenProcessPool:
                        breaks[task["run_id"]] = breaks.get(task["run_id"], 0) + 1
                        if breaks[task["run_id"]] < 3:
                            pending.append(task)
                            continue
                        record = _failure("worker process died (crash or killed)")
                    yield task, record
            clean = True
        finally:
            if not clean:
                for f in futures:
                    f.cancel()
                # Runs in flight would otherwise hold the exit until they end; their results
                # are thrown away anyway. (`_processes` is private but stable since 3.2.)
                for proc in list((getattr(pool, "_processes", None) or {}).values()):
                    proc.terminate()
            pool.shutdown(wait=clean, cancel_futures=True)
        if not pending:
            return
        pool, futures = _start_pool(pending, jobs)


def _failure(error: str) -> dict[str, Any]:
    return {"values": {}, "series": {}, "error": error, "wall_s": None}


_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}$")


def check_address(address: str) -> None:
    """A Dask scheduler address must look like `tcp://HOST:PORT` (or `HOST:PORT`)."""
    if not _ADDRESS.match(address) or not 0 < int(address.rsplit(":", 1)[1]) < 65536:
        raise PlanError(f'--scheduler: {address!r} is not a Dask scheduler address; try "tcp://HOST:PORT"')


def _dask(
    tasks: list[dict[str, Any]], address: str, tag: str, worker_timeout: float = 60.0
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Submit every run to an existing Dask cluster; results stream back as they finish. The
    caller has checked the address answers as a scheduler (`handshake`).

    When the cluster has had no worker for `worker_timeout` seconds (none ever joined, or all were
    lost), the sweep stops with a SimulationError; the runs finished until then are kept.
    """
    check_address(address)
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ImportError(
            "running on a Dask cluster needs the optional dependency: pip install 'quicksim[dask]'"
        ) from None
    try:
        client = Client(address, set_as_default=False, timeout=f"{max(worker_timeout, 1.0)}s")  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as e:
        raise PlanError(
            f"--scheduler: cannot reach a Dask scheduler at {address!r} ({type(e).__name__})"
        ) from None
    with _quiet_distributed(), client:
        # Deterministic keys: resubmitting after an interrupt reuses runs the cluster still holds.
        futures = {
            client.submit(_execute, t, key=f"quicksim-{tag}-{t['run_id']}", pure=False): t for t in tasks
        }
        clean = False
        try:
            pending = as_completed(list(futures), loop=client.loop)  # type: ignore[no-untyped-call]
            left = len(futures)
            lost: list[str] = []
            idle_since: float | None = None
            checked = 0.0
            while left:
                batch = pending.next_batch(block=False)  # type: ignore[no-untyped-call]
                if not batch:
                    now = time.monotonic()
                    if now - checked >= 0.5:
                        checked = now
                        if client.scheduler_info().get("workers"):
                            idle_since = None
                        elif idle_since is None:
                            idle_since = now
                        elif now - idle_since >= worker_timeout:
                            raise _no_workers(address, worker_timeout, len(futures) - left, len(futures))
                    time.sleep(0.05)
                    continue
                for future in batch:
                    task = futures[future]
                    left -= 1
                    try:
                        record = future.result()
                    except Exception as e:
                        # `_execute` never raises: this is the cluster failing (a lost scheduler, a
                        # cancelled future), not the run. Never stored, so a plain rerun redoes it;
                        # only a run that kept killing its workers is (as with the local pool).
                        if type(e).__name__ != "KilledWorker":
                            lost.append(f"{type(e).__name__}: {e}".strip())
                            continue
                        record = _failure("worker process died (crash or killed)")
                    yield task, record
                    future.release()
            if lost:
                raise SimulationError(
                    f"the Dask cluster at {address} failed: {len(lost)} of {len(futures)} runs were not "
                    f"finished ({lost[0]}) and are not recorded; run the same command to resume"
                )
            clean = True
        finally:
            if not clean:
                client.cancel(list(futures))  # type: ignore[no-untyped-call]


HANDSHAKE_S = 10.0
"""Seconds a `--scheduler` address has to answer as a Dask scheduler before the sweep gives up."""


def handshake(address: str, deadline_s: float) -> None:
    """Ask the address who it is, within `deadline_s`: a PlanError with one line when nothing
    answers (or something else does). Distributed's own connect waits forever on a server that
    accepts TCP but never speaks its protocol, whatever its timeout."""
    import asyncio

    try:
        from distributed.comm.core import connect
    except ImportError:
        raise ImportError(
            "running on a Dask cluster needs the optional dependency: pip install 'quicksim[dask]'"
        ) from None

    async def identity() -> Any:
        comm = await connect(address, timeout=deadline_s)  # type: ignore[no-untyped-call]
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    where = f"--scheduler: {address!r}"
    try:
        reply = asyncio.run(asyncio.wait_for(identity(), deadline_s))
    except asyncio.TimeoutError:
        raise PlanError(
            f"{where}: no Dask scheduler answered within {deadline_s:g} s (the address accepts "
            "connections but does not speak Dask's protocol?)"
        ) from None
    except Exception as e:  # refused, reset, unreachable, a garbled reply
        raise PlanError(f"{where}: cannot reach a Dask scheduler ({type(e).__name__}: {e})".strip()) from None
    if not (isinstance(reply, dict) and reply.get("type") == "Scheduler"):
        kind = reply.get("type") if isinstance(reply, dict) else type(reply).__name__
        raise PlanError(f"{where}: answered, but as {kind!r}, not as a Dask scheduler")


@contextlib.contextmanager
def _quiet_distributed() -> Iterator[None]:
    """Distributed logs its own tracebacks when the cluster fails (a lost scheduler); the sweep
    reports that in one line of its own, so they are kept off stderr while it runs."""
    import logging

    # Distributed's configuration gives some of its loggers levels of their own: each is quieted.
    names = ["distributed", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]
    levels = {n: logging.getLogger(n).level for n in names}
    for n in names:
        logging.getLogger(n).setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)


def _no_workers(address: str, timeout: float, finished: int, total: int) -> SimulationError:
    return SimulationError(
        f"the Dask scheduler at {address} has had no worker for {timeout:g} s; {finished} of {total} "
        "runs finished and are kept (start workers and run the same command to resume, "
        "or raise --worker-timeout)"
    )
