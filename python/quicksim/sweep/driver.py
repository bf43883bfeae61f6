"""Running a plan: `run_plan` turns runs into tasks, skips those already stored, streams them
through an executor with a progress bar, stores each record and assembles the tables; `sweep`
builds the plan from a scenario's [sweep] table and arguments first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import api, cc
from .._io import locked_folder
from .._io import out_dir as checked_out_dir
from ..errors import ScenarioError
from .execute import HANDSHAKE_S, _dask, _local, _serial, check_address, handshake
from .expand import _toml_value
from .make import check_consent, make_plan
from .plan import MetricSpec, Plan, PlanError
from .store import InputDigests, _prepare_out, _write_json, _write_tables, run_key, write_plan
from .tables import SweepResult, _tables

__all__ = ["run_plan", "sweep"]


def run_plan(
    plan: Plan,
    out: str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    validate: bool = True,
    worker_timeout: float = 60.0,
    allow_python: bool = False,
) -> SweepResult:
    """Execute a plan and return its tables; see `sweep` for the options. The output folder is
    locked while the sweep runs: a second sweep into it is refused."""
    out_dir = checked_out_dir(out, "out") if out is not None else None
    options: dict[str, Any] = dict(
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        retry_failed=retry_failed,
        validate=validate,
        worker_timeout=worker_timeout,
        allow_python=allow_python,
    )
    if out_dir is None:
        return _run_plan(plan, None, **options)
    with locked_folder(out_dir, "out"):
        return _run_plan(plan, out_dir, **options)


def _run_plan(
    plan: Plan,
    out_dir: Path | None,
    *,
    jobs: int | None,
    scheduler: str | None,
    progress: bool,
    retry_failed: bool,
    validate: bool,
    worker_timeout: float,
    allow_python: bool,
) -> SweepResult:
    allow_python = cc.consented(allow_python)  # the workers get it as a flag
    if plan.keep and out_dir is None:
        raise PlanError(f"sweep.keep: keeping {', '.join(plan.keep)} needs an output directory (--out, out=)")
    if scheduler:  # a bad or silent address fails before anything is written
        check_address(scheduler)
        handshake(scheduler, HANDSHAKE_S)
    runs = plan.runs()
    docs: dict[int, dict[str, Any]] = {}
    for r in runs:
        if r.point not in docs:
            docs[r.point] = api.apply_overrides(
                plan.scenario, [f"{p}={_toml_value(v)}" for p, v in r.params.items()]
            )
            try:
                # Without allow_python a `py:` controller is refused here, before anything is written.
                cc.controllers_of(docs[r.point], allow_python=allow_python)
            except ScenarioError as e:
                raise PlanError(f"point {_point_text(r.params)}: {e}") from None
    digests = InputDigests(allow_python)
    inputs = {point: digests.of(doc) for point, doc in docs.items()}
    keys = {r.run_id: run_key(docs[r.point], r.seed, inputs[r.point]) for r in runs}
    done: dict[str, dict[str, Any]] = {}
    stored = 0
    if out_dir is not None:
        done = _prepare_out(out_dir, plan)
        stored = sum(1 for r in runs if r.run_id in done)
        # Reuse a stored run only if it ran this very scenario with this seed.
        done = {k: v for k, v in done.items() if v.get("key") == keys.get(k)}
        if retry_failed:
            done = {k: v for k, v in done.items() if not v.get("error")}
        # A run stored without a table the plan keeps now runs again, to keep it.
        done = {k: v for k, v in done.items() if set(plan.keep) <= set(v.get("kept") or ())}
        stored_runs = {r.run_id: done[r.run_id] for r in runs if r.run_id in done}
        if stored_runs:
            from .kept import recompute

            updated = recompute(out_dir, stored_runs, plan.metrics, plan.keep)
            done.update(stored_runs)
            if updated:
                print(
                    f"quicksim sweep: computed new metrics of {updated} stored run(s) from their kept "
                    "tables (not run again)",
                    file=sys.stderr,
                )
        # After the stored runs were found to serve it: a refused metric leaves the old plan.json.
        write_plan(out_dir, plan)
    todo = [r for r in runs if r.run_id not in done]

    validated: set[int] = set()
    for r in todo:
        if r.point not in validated:
            validated.add(r.point)
            if validate:
                try:
                    api.validate(docs[r.point], allow_python=allow_python)
                except ScenarioError as e:
                    raise PlanError(f"point {_point_text(r.params)}: {e}") from None
    metric_specs = [m.task() for m in plan.metrics]
    # Controllers registered under a name (`quicksim.cc.register`) travel as their import path:
    # a worker process (local or Dask) registers them again before running.
    registered = {name: cc.class_path(cls) for name, cls in cc.registered().items()}
    tasks = [
        {
            "run_id": r.run_id,
            "seed": r.seed,
            "scenario": docs[r.point],
            "metrics": metric_specs,
            "controllers": {n: p for n, p in registered.items() if n in cc.names_in(docs[r.point])},
            "allow_python": allow_python,
            "keep": list(plan.keep),
        }
        for r in todo
    ]
    by_id = {r.run_id: r for r in runs}
    if out_dir is not None and stored:
        reused = len(runs) - len(todo)
        stale = stored - sum(1 for r in runs if r.run_id in done)
        why = (
            f" ({stale} stored with another scenario, seed, input file or error state: run again)"
            if stale
            else ""
        )
        to_run = f"{len(todo)} to run"
        print(
            f"quicksim sweep: reusing {reused} of {len(runs)} runs stored in {out_dir}{why}, {to_run}",
            file=sys.stderr,
        )

    jobs = jobs or os.cpu_count() or 1
    if scheduler:
        stream = _dask(tasks, scheduler, plan.fingerprint(), worker_timeout)
    elif jobs == 1 or len(tasks) <= 1:
        stream = _serial(tasks)
    else:
        stream = _local(tasks, jobs)

    from tqdm import tqdm

    class _Bar(tqdm):  # type: ignore[misc]
        monitor_interval = 0  # no monitor thread: a later fork() must not inherit threads

    bar = _Bar(
        total=len(tasks),
        desc=plan.name,
        unit="run",
        file=sys.stderr,
        disable=not progress or not tasks,
        dynamic_ncols=True,
    )
    failures = 0
    interrupted = False
    try:
        for task, record in stream:
            r = by_id[task["run_id"]]
            packed = record.pop("kept", None)
            if packed is not None and out_dir is not None:
                from .kept import write

                record["kept"] = write(out_dir, r.run_id, packed)
            record = {
                "run_id": r.run_id,
                "key": keys[r.run_id],
                "point": r.point,
                "rep": r.rep,
                "seed": r.seed,
                "params": r.params,
                **record,
            }
            if out_dir is not None:
                _write_json(out_dir / "runs" / f"{r.run_id}.json", record)
            done[r.run_id] = record
            if record.get("error"):
                failures += 1
                bar.set_postfix(failed=failures, refresh=False)
            bar.update(1)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            # After a Ctrl-C, a second one must not break off stopping the workers.
            with _sigint_ignored(interrupted):
                close()
        bar.close()

    result = _tables([done[r.run_id] for r in runs if r.run_id in done], plan.describe(), list(plan.params))
    result.out = out_dir
    if out_dir is not None:
        _write_tables(out_dir, result)
    if progress and failures:
        print(f"quicksim sweep: {failures} run(s) failed; see the `error` column", file=sys.stderr)
    return result


def sweep(
    scenario: Any,
    params: Mapping[str, Any] | None = None,
    repeat: int | None = None,
    metrics: Sequence[MetricSpec] | None = None,
    *,
    zip: Iterable[Sequence[str]] | None = None,
    seed: int | None = None,
    sets: Iterable[str] | str = (),
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    worker_timeout: float = 60.0,
    allow_python: bool = False,
    keep: Sequence[str] | None = None,
) -> SweepResult:
    """Run a parameter study and return its runs and summary tables.

    `scenario` is a path or dict; its `[sweep]` table, if any, supplies whatever is not passed
    here. `params` maps scenario paths (as `--set`) to a list of values or a range table;
    `zip` lists groups of params varied together. `metrics` are registered names, tables
    `{"name": ..., **params}` or functions of a Result (picklable for jobs > 1; see
    `quicksim.metrics`). `out` stores every run as it finishes and makes the call resumable.
    Runs execute on `jobs` local processes (default: every core; 1 = in this process) or,
    with `scheduler="tcp://host:port"`, on that Dask cluster; a cluster left without workers
    for `worker_timeout` seconds stops the sweep with a SimulationError (finished runs are kept).
    `allow_python` lets the scenario's `cc = "py:module:Class"` controllers be imported and run
    (as `quicksim.run`'s), and the `module:function` metrics its [sweep] table names (those
    passed in `metrics` are yours and are imported anyway). `keep` lists tables of every run to
    store in `out` (`kept/`), from which metrics added later are computed without running again.
    """
    doc = api.load_scenario(scenario)
    found = doc.get("sweep")
    table: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    name = None if isinstance(scenario, Mapping) else Path(scenario).stem
    try:
        plan_seed = api.check_seed(seed if seed is not None else table.get("seed"))
    except ScenarioError as e:
        # The same check as `quicksim.run(seed=...)`; a bad [sweep] seed is named as such.
        raise ScenarioError(str(e) if seed is not None else f"sweep.{e}") from None
    if metrics is None:
        metrics = table.get("metrics") or ("goodput_mbps",)
        check_consent(metrics, cc.consented(allow_python), "sweep.metrics")
    plan = make_plan(
        doc,
        params if params is not None else table.get("params") or {},
        repeat=repeat if repeat is not None else table.get("repeat", 1),
        metrics=metrics,
        zip=zip if zip is not None else table.get("zip") or (),
        seed=plan_seed,
        sets=api._override_list(sets),
        name=table.get("name") or doc.get("name") or name,
        keep=keep if keep is not None else table.get("keep"),
    )
    return run_plan(
        plan,
        out,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        retry_failed=retry_failed,
        worker_timeout=worker_timeout,
        allow_python=allow_python,
    )


@contextlib.contextmanager
def _sigint_ignored(active: bool) -> Iterator[None]:
    """Ignore SIGINT inside the block when `active` (and in the main thread, where signals go)."""
    if not active or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _point_text(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "(no parameters)"
