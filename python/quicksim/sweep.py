"""Parameter studies: expand a plan into runs, execute them in parallel, keep every result.

A plan names scenario fields (by the same paths as `--set`), their values, a number of
repetitions and the metrics to collect. As TOML, in a scenario or in a plan file that points at
one with `scenario = "path.toml"`::

    [sweep]
    repeat = 10
    metrics = ["goodput_mbps", { name = "jain", t0 = "20s", t1 = "30s" }]
    zip = [["dumbbell.bottleneck.delay", "dumbbell.bottleneck.queue.bytes"]]  # vary together

    [sweep.params]
    "dumbbell.bottleneck.rate" = ["5Mbps", "10Mbps"]
    "dumbbell.bottleneck.delay" = { start = 2, stop = 10, step = 2, unit = "ms" }  # inclusive
    "dumbbell.bottleneck.queue.bytes" = { values = ["5kB", "10kB", "15kB", "20kB", "25kB"] }

Each run's seed is derived from the base seed, the run's parameter values and its repetition
number by SHA-256, so the same plan gives the same numbers, and adding points or repetitions
leaves the seeds (and results) of the existing runs unchanged.

With an output directory every finished run is written at once to `runs/<run_id>.json`
(atomically); a rerun of the same plan skips those, so an interrupted sweep resumes where it
stopped. At the end `runs.parquet` (one row per run), `summary.parquet` (per point and metric:
n, mean, std, sem and the 95 % Student t interval) and, for series metrics, `series.parquet`
are written. A run that fails is recorded with its error and the sweep goes on.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Plan",
    "PlanError",
    "SweepResult",
    "derive_seed",
    "expand_values",
    "load_plan",
    "load_sweep",
    "make_plan",
    "run_plan",
    "sweep",
]

PLAN_FORMAT = 1
_FIXED_COLUMNS = ("run_id", "point", "rep", "seed")
_TRAILING_COLUMNS = ("error", "wall_s")
_ALIASES = {
    "goodput": "goodput_mbps",
    "fairness": "jain",
    "queue_delay": "queue_delay_s",
    "completion_time": "completion_time_s",
    "cwnd": "cwnd_bytes",
}
"""Short metric names accepted in plans; results are labelled with the canonical name."""

MetricSpec = str | Mapping[str, Any] | Callable[..., Any]
"""A registered metric's name, `{name=..., label=..., **params}`, or a function of a Result."""


class PlanError(ScenarioError):
    """The sweep plan is invalid, or the output directory holds a different plan."""


# --- plans -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Metric:
    label: str
    name: str
    fn: Callable[..., Any]
    params: dict[str, Any]

    def describe(self) -> dict[str, Any]:
        """JSON-ready form (a function is named by module and qualified name)."""
        return {"label": self.label, "name": self.name, "params": self.params}


@dataclass(frozen=True)
class Run:
    """One run of a plan: a point (parameter values), a repetition and its derived seed."""

    run_id: str
    point: int
    rep: int
    seed: int
    params: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """An expanded sweep: base scenario, parameter values, repetitions, metrics, base seed."""

    scenario: dict[str, Any]
    params: dict[str, list[Any]]
    zip: tuple[tuple[str, ...], ...] = ()
    repeat: int = 1
    metrics: tuple[_Metric, ...] = ()
    seed: int = 0
    name: str = "sweep"

    def points(self) -> list[dict[str, Any]]:
        """Every combination of parameter values, the first parameter varying slowest."""
        groups: list[tuple[str, ...]] = []
        zipped = {p for group in self.zip for p in group}
        for path in self.params:
            if path in zipped:
                group = next(g for g in self.zip if path in g)
                if group not in groups:
                    groups.append(group)
            else:
                groups.append((path,))
        choices = [
            [
                dict(zip(group, values, strict=True))
                for values in zip(*(self.params[p] for p in group), strict=True)
            ]
            for group in groups
        ]
        points = []
        for combo in itertools.product(*choices):
            merged: dict[str, Any] = {}
            for part in combo:
                merged.update(part)
            points.append({p: merged[p] for p in self.params})
        return points

    def runs(self) -> list[Run]:
        """Every run, point by point, repetitions 0..repeat-1."""
        out = []
        for index, point in enumerate(self.points()):
            pid = point_id(point)
            for rep in range(self.repeat):
                out.append(Run(f"{pid}-r{rep}", index, rep, derive_seed(self.seed, point, rep), point))
        return out

    def fingerprint(self) -> str:
        """What the results of a run depend on besides its point and seed: scenario and metrics."""
        doc = {
            "scenario": self.scenario,
            "metrics": [m.describe() | {"fn": _fn_name(m.fn)} for m in self.metrics],
        }
        return hashlib.sha256(_canonical(doc).encode()).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        """JSON-ready plan, as written to `plan.json`."""
        return {
            "format": PLAN_FORMAT,
            "name": self.name,
            "fingerprint": self.fingerprint(),
            "seed": self.seed,
            "repeat": self.repeat,
            "params": self.params,
            "zip": [list(g) for g in self.zip],
            "metrics": [m.describe() | {"fn": _fn_name(m.fn)} for m in self.metrics],
            "scenario": self.scenario,
        }


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def point_id(point: Mapping[str, Any]) -> str:
    """A short stable id of a point's parameter values (independent of the other points)."""
    return "p" + hashlib.sha256(_canonical(dict(point)).encode()).hexdigest()[:10]


def derive_seed(base: int, point: Mapping[str, Any], rep: int) -> int:
    """The seed of one run: SHA-256 of (base seed, parameter values, repetition), 63 bits.

    It depends on the point's values, not its position, so a point keeps its seeds when
    other points are added; 63 bits keep it a valid int64 in Parquet.
    """
    digest = hashlib.sha256(_canonical({"base": base, "point": dict(point), "rep": rep}).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


_NUMBER_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%/]*)\s*$")


def expand_values(path: str, spec: Any) -> list[Any]:
    """The values of one parameter: a list, `{values=[...]}`, or an inclusive range.

    A range is `{start, stop, step}` or `{start, stop, count}` (evenly spaced); `unit = "ms"`,
    or start/stop/step written with the same unit ("2ms"), makes the values strings ("2ms").
    """
    if isinstance(spec, list):
        values = spec
    elif isinstance(spec, Mapping):
        if "values" in spec:
            extra = set(spec) - {"values"}
            if extra or not isinstance(spec["values"], list):
                raise PlanError(f"sweep.params.{path}: a values table holds only `values = [...]`")
            values = spec["values"]
        else:
            values = _expand_range(path, spec)
    else:
        values = [spec]
    if not values:
        raise PlanError(f"sweep.params.{path}: no values")
    return list(values)


def _expand_range(path: str, spec: Mapping[str, Any]) -> list[Any]:
    where = f"sweep.params.{path}"
    known = {"start", "stop", "step", "count", "unit"}
    if set(spec) - known:
        raise PlanError(
            f"{where}: unknown key(s) {', '.join(sorted(set(spec) - known))}; "
            "use start, stop, step or count, unit"
        )
    if "start" not in spec or "stop" not in spec or ("step" in spec) == ("count" in spec):
        raise PlanError(
            f"{where}: a range needs start, stop and one of step or count, e.g. {{start=2, stop=100, step=2}}"
        )
    unit = spec.get("unit")
    numbers = {}
    for key in ("start", "stop", "step"):
        if key not in spec:
            continue
        value = spec[key]
        if isinstance(value, str):
            m = _NUMBER_UNIT.match(value)
            if not m:
                raise PlanError(f"{where}.{key}: {value!r} is not a number")
            if unit is not None and m.group(2) != unit:
                raise PlanError(
                    f"{where}: mixed units {unit!r} and {m.group(2)!r}; "
                    "write start, stop and step in one unit"
                )
            unit = m.group(2)
            number: float = float(m.group(1))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            number = value
        else:
            raise PlanError(f"{where}.{key}: {value!r} is not a number")
        numbers[key] = number
    start, stop = numbers["start"], numbers["stop"]
    if "count" in spec:
        count = spec["count"]
        if not isinstance(count, int) or count < 1:
            raise PlanError(f"{where}.count: {count!r} must be a positive integer")
        step = (stop - start) / (count - 1) if count > 1 else 0.0
    else:
        step = numbers["step"]
        if step == 0 or (stop - start) * step < 0:
            raise PlanError(f"{where}: step {step} never gets from {start} to {stop}")
        count = math.floor((stop - start) / step + 1e-9) + 1
    if count > 1_000_000:
        raise PlanError(f"{where}: {count} values; that is surely a mistake")
    exact_ints = all(isinstance(v, int) for v in numbers.values()) and "count" not in spec
    values: list[Any] = []
    for i in range(count):
        v = start + i * step
        # Round away float noise (0.1 * 3 = 0.30000000000000004), like OMNeT++'s printed values.
        number_value: float | int = v if exact_ints else float(f"{v:.12g}")
        if isinstance(number_value, float) and number_value.is_integer() and exact_ints:
            number_value = int(number_value)
        values.append(number_value if not unit else f"{_fmt_number(number_value)}{unit}")
    return values


def _fmt_number(v: float | int) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v)


def _resolve_metric(spec: MetricSpec) -> _Metric:
    from . import metrics

    if callable(spec):
        name = getattr(spec, "__name__", type(spec).__name__)
        return _Metric(name, name, spec, {})
    if isinstance(spec, str):
        name = _ALIASES.get(spec, spec)
        return _Metric(name, name, _get_metric(name), {})
    if isinstance(spec, Mapping):
        if "name" not in spec and "fn" not in spec:
            raise PlanError(
                f'metric {dict(spec)!r}: needs a `name`, e.g. {{name = "goodput_mbps", flow = "sender1"}}'
            )
        params = {k: v for k, v in spec.items() if k not in ("name", "label", "fn")}
        if "fn" in spec:
            fn = spec["fn"]
            name = str(spec.get("name") or getattr(fn, "__name__", "metric"))
        else:
            name = _ALIASES.get(str(spec["name"]), str(spec["name"]))
            fn = _get_metric(name)
        label = spec.get("label") or metrics.label(name, params)
        return _Metric(str(label), str(name), fn, params)
    raise PlanError(f"metric {spec!r}: expected a name, a table or a function")


def _get_metric(name: str) -> Callable[..., Any]:
    from . import metrics

    try:
        return metrics.get(name)
    except KeyError as e:
        raise PlanError(str(e.args[0])) from None


def _fn_name(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def make_plan(
    scenario: Any,
    params: Mapping[str, Any] | None = None,
    repeat: int = 1,
    metrics: Sequence[MetricSpec] = ("goodput_mbps",),
    *,
    zip: Iterable[Sequence[str]] = (),
    seed: int | None = None,
    sets: Iterable[str] = (),
    name: str | None = None,
) -> Plan:
    """Build a Plan from a scenario (path or dict) and Python values; see `sweep`."""
    from . import api

    doc = api.apply_overrides(api.load_scenario(scenario), sets)
    doc.pop("sweep", None)
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise PlanError(f"sweep.repeat: {repeat!r} must be a positive integer")
    expanded = {str(path): expand_values(str(path), spec) for path, spec in (params or {}).items()}
    groups = tuple(tuple(str(p) for p in group) for group in zip)
    seen: set[str] = set()
    for group in groups:
        for p in group:
            if p not in expanded:
                raise PlanError(
                    f"sweep.zip: {p!r} is not one of the swept parameters ({', '.join(expanded) or 'none'})"
                )
            if p in seen:
                raise PlanError(f"sweep.zip: {p!r} is in more than one group")
            seen.add(p)
        lengths = {len(expanded[p]) for p in group}
        if len(lengths) > 1:
            detail = ", ".join(f"{p} has {len(expanded[p])}" for p in group)
            raise PlanError(f"sweep.zip: parameters varied together need equally many values ({detail})")
    resolved = tuple(_resolve_metric(m) for m in metrics)
    labels = [m.label for m in resolved]
    duplicates = sorted({x for x in labels if labels.count(x) > 1})
    if duplicates:
        raise PlanError(f"sweep.metrics: {', '.join(duplicates)} collected twice; give one a `label`")
    if seed is None:
        run_seed = (doc.get("run") or {}).get("seed") if isinstance(doc.get("run"), Mapping) else None
        seed = int(run_seed) if run_seed is not None else 0
    # Every run passes its own seed; keep the base out of the scenario so it is not a second source.
    if isinstance(doc.get("run"), dict):
        doc["run"].pop("seed", None)
    plan_name = name or str(doc.get("name") or "sweep")
    return Plan(doc, expanded, groups, repeat, resolved, int(seed), plan_name)


def load_plan(path: str | os.PathLike[str], sets: Iterable[str] = (), repeat: int | None = None) -> Plan:
    """Read a plan file: a scenario with a [sweep] table, or `scenario = "x.toml"` plus [sweep].

    `sets` override the scenario (not the plan); `repeat` overrides sweep.repeat.
    """
    from . import api

    path = Path(path)
    doc = api.load_scenario(path)
    table = doc.get("sweep")
    if not isinstance(table, Mapping):
        raise PlanError(f"{path}: no [sweep] table; add one with [sweep.params] and metrics")
    if "scenario" in doc:
        extra = set(doc) - {"scenario", "sweep", "name", "description"}
        if extra:
            raise PlanError(
                f"{path}: a plan that names its scenario holds only `scenario` and [sweep], "
                f"not {sorted(extra)}"
            )
        scenario = api.load_scenario(path.parent / str(doc["scenario"]))
        if "name" in doc:
            scenario["name"] = doc["name"]
    else:
        scenario = doc
    known = {"params", "repeat", "metrics", "zip", "seed", "name"}
    unknown = set(table) - known
    if unknown:
        raise PlanError(
            f"{path}: unknown key(s) in [sweep]: {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(known))}"
        )
    return make_plan(
        scenario,
        table.get("params") or {},
        repeat=repeat if repeat is not None else table.get("repeat", 1),
        metrics=table.get("metrics") or ("goodput_mbps",),
        zip=table.get("zip") or (),
        seed=table.get("seed"),
        sets=sets,
        name=table.get("name") or doc.get("name") or path.stem,
    )


# --- one run (executed in a worker) -------------------------------------------------------------


def _execute(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one simulation and compute its metrics; returns a small JSON-ready record.

    Errors are caught and recorded: a failed run must not end the sweep. KeyboardInterrupt and
    other BaseExceptions pass through, so an interrupt is never recorded as a failed run.
    """
    from . import api, metrics

    started = time.perf_counter()
    record: dict[str, Any] = {"values": {}, "series": {}, "error": None, "events": None, "sim_wall_s": None}
    try:
        result = api.run(task["scenario"], seed=task["seed"])
        record["events"] = result.meta.get("events")
        record["sim_wall_s"] = result.meta.get("wall_s")
        errors = []
        for label, fn, params in task["metrics"]:
            try:
                values, series = metrics.compute(result, fn, label, params)
            except Exception as e:
                errors.append(f"metric {label}: {type(e).__name__}: {e}")
                continue
            record["values"].update(values)
            if series is not None:
                record["series"][label] = {c: series[c].tolist() for c in ("t_s", "key", "value")}
        if errors:
            record["error"] = "; ".join(errors)
    except Exception as e:
        tb = traceback.format_exception(type(e), e, e.__traceback__)
        record["error"] = f"{type(e).__name__}: {e}"
        record["traceback"] = "".join(tb[-6:])
    record["wall_s"] = time.perf_counter() - started
    record["worker"] = f"{os.uname().nodename}:{os.getpid()}" if hasattr(os, "uname") else str(os.getpid())
    return dict(_jsonable(record))


def _jsonable(value: Any) -> Any:
    """NaN and inf become None (strict JSON), numpy scalars Python ones."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# --- executors -----------------------------------------------------------------------------------


def _serial(tasks: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for task in tasks:
        yield task, _execute(task)


def _ignore_sigint() -> None:
    # Ctrl-C goes to the whole process group; only the parent should react (and stop the pool).
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


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

    pool = ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), initializer=_ignore_sigint)
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


def _dask(
    tasks: list[dict[str, Any]], address: str, tag: str
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Submit every run to an existing Dask cluster; results stream back as they finish."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ImportError(
            "running on a Dask cluster needs the optional dependency: pip install 'quicksim[dask]'"
        ) from None
    with Client(address, set_as_default=False) as client:  # type: ignore[no-untyped-call]
        # Deterministic keys: resubmitting after an interrupt reuses runs the cluster still holds.
        futures = {
            client.submit(_execute, t, key=f"quicksim-{tag}-{t['run_id']}", pure=False): t for t in tasks
        }
        clean = False
        try:
            for future in as_completed(list(futures), loop=client.loop):  # type: ignore[no-untyped-call]
                task = futures[future]
                try:
                    record = future.result()
                except Exception as e:
                    record = _failure(f"{type(e).__name__}: {e}")
                yield task, record
                future.release()
            clean = True
        finally:
            if not clean:
                client.cancel(list(futures))


# --- running a plan ------------------------------------------------------------------------------


@dataclass
class SweepResult:
    """The outcome of a sweep: `runs` (one row per run), `summary` (per point and metric),
    `series` (time-series metrics, long form), the `plan` and the output directory."""

    runs: pd.DataFrame
    summary: pd.DataFrame
    series: pd.DataFrame
    params: list[str]
    metrics: list[str]
    out: Path | None = None
    plan: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> pd.DataFrame:
        """The runs that recorded an error."""
        return self.runs[self.runs["error"].notna()]

    def __repr__(self) -> str:
        return (
            f"<quicksim.SweepResult {self.plan.get('name', '')!r} runs={len(self.runs)} "
            f"failed={len(self.failed)} params={self.params} metrics={len(self.metrics)}>"
        )


def run_plan(
    plan: Plan,
    out: str | os.PathLike[str] | None = None,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    retry_failed: bool = False,
    validate: bool = True,
) -> SweepResult:
    """Execute a plan and return its tables; see `sweep` for the options."""
    from . import api

    runs = plan.runs()
    out_dir = Path(out) if out is not None else None
    done: dict[str, dict[str, Any]] = {}
    if out_dir is not None:
        done = _prepare_out(out_dir, plan)
        if retry_failed:
            done = {k: v for k, v in done.items() if not v.get("error")}
    todo = [r for r in runs if r.run_id not in done]

    docs: dict[int, dict[str, Any]] = {}
    for r in todo:
        if r.point not in docs:
            docs[r.point] = api.apply_overrides(
                plan.scenario, [f"{p}={_toml_value(v)}" for p, v in r.params.items()]
            )
            if validate:
                try:
                    api.validate(docs[r.point])
                except ScenarioError as e:
                    raise PlanError(f"point {_point_text(r.params)}: {e}") from None
    metric_specs = [(m.label, m.fn, m.params) for m in plan.metrics]
    tasks = [
        {"run_id": r.run_id, "seed": r.seed, "scenario": docs[r.point], "metrics": metric_specs} for r in todo
    ]
    by_id = {r.run_id: r for r in runs}
    if progress and done:
        print(
            f"quicksim sweep: {len(runs) - len(todo)} of {len(runs)} runs already done, {len(todo)} to run",
            file=sys.stderr,
        )

    jobs = jobs or os.cpu_count() or 1
    if scheduler:
        stream = _dask(tasks, scheduler, plan.fingerprint())
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
    try:
        for task, record in stream:
            r = by_id[task["run_id"]]
            record = {
                "run_id": r.run_id,
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
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
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
    sets: Iterable[str] = (),
    out: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    retry_failed: bool = False,
) -> SweepResult:
    """Run a parameter study and return its runs and summary tables.

    `scenario` is a path or dict; its `[sweep]` table, if any, supplies whatever is not passed
    here. `params` maps scenario paths (as `--set`) to a list of values or a range table;
    `zip` lists groups of params varied together. `metrics` are registered names, tables
    `{"name": ..., **params}` or functions of a Result (picklable for jobs > 1; see
    `quicksim.metrics`). `out` stores every run as it finishes and makes the call resumable.
    Runs execute on `jobs` local processes (default: every core; 1 = in this process) or,
    with `scheduler="tcp://host:port"`, on that Dask cluster.
    """
    from . import api

    doc = api.load_scenario(scenario)
    found = doc.get("sweep")
    table: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    name = None if isinstance(scenario, Mapping) else Path(scenario).stem
    plan = make_plan(
        doc,
        params if params is not None else table.get("params") or {},
        repeat=repeat if repeat is not None else table.get("repeat", 1),
        metrics=metrics if metrics is not None else table.get("metrics") or ("goodput_mbps",),
        zip=zip if zip is not None else table.get("zip") or (),
        seed=seed if seed is not None else table.get("seed"),
        sets=sets,
        name=table.get("name") or doc.get("name") or name,
    )
    return run_plan(plan, out, jobs=jobs, scheduler=scheduler, progress=progress, retry_failed=retry_failed)


def _toml_value(value: Any) -> str:
    """A value as `apply_overrides` reads it back unchanged (TOML literal)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise PlanError(f"parameter value {value!r} ({type(value).__name__}) has no TOML form")


def _point_text(point: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "(no parameters)"


# --- storage -------------------------------------------------------------------------------------


def _prepare_out(out: Path, plan: Plan) -> dict[str, dict[str, Any]]:
    """Create or reopen an output directory; returns the runs already recorded in it."""
    (out / "runs").mkdir(parents=True, exist_ok=True)
    plan_path = out / "plan.json"
    if plan_path.is_file():
        old = json.loads(plan_path.read_text(encoding="utf-8"))
        if old.get("fingerprint") != plan.fingerprint():
            raise PlanError(
                f"{out} holds runs of a different plan (scenario or metrics changed); "
                "use another output directory, or delete this one"
            )
    # Rewritten each time: the parameters or repetitions may have grown since the last run.
    _write_json(plan_path, plan.describe())
    done = {}
    for path in sorted((out / "runs").glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue  # cannot happen with atomic writes, but a bad file means "not done"
        done[str(record.get("run_id", path.stem))] = record
    return done


def _write_json(path: Path, value: Any) -> None:
    from .results import _atomic_write_text

    _atomic_write_text(path, json.dumps(_jsonable(value), indent=1, allow_nan=False) + "\n")


def _write_tables(out: Path, result: SweepResult) -> None:
    from .results import _atomic_write, _parquet_writer

    for name, frame in (("runs", result.runs), ("summary", result.summary), ("series", result.series)):
        if name == "series" and frame.empty:
            continue
        _atomic_write(out / f"{name}.parquet", _parquet_writer(frame))


def _tables(records: list[dict[str, Any]], plan: dict[str, Any], params: list[str]) -> SweepResult:
    import pandas as pd

    from .stats import summarize

    metric_columns: list[str] = []
    for record in records:
        for column in record.get("values") or {}:
            if column not in metric_columns:
                metric_columns.append(column)
    rows = []
    series_frames = []
    for record in records:
        row = {c: record[c] for c in _FIXED_COLUMNS}
        row.update({p: (record.get("params") or {}).get(p) for p in params})
        values = record.get("values") or {}
        row.update({c: math.nan if values.get(c) is None else float(values[c]) for c in metric_columns})
        row["error"] = record.get("error")
        row["wall_s"] = math.nan if record.get("wall_s") is None else float(record["wall_s"])
        rows.append(row)
        for label, s in (record.get("series") or {}).items():
            frame = pd.DataFrame({"t_s": s["t_s"], "key": s["key"], "value": s["value"]})
            frame.insert(0, "series", label)
            for c in reversed([*_FIXED_COLUMNS[:3], *params]):
                frame.insert(0, c, row[c])
            series_frames.append(frame)
    columns = [*_FIXED_COLUMNS, *params, *metric_columns, *_TRAILING_COLUMNS]
    runs = pd.DataFrame(rows, columns=columns)
    for p in params:
        runs[p] = _uniform(runs[p])
    runs = runs.astype(
        {
            "run_id": "string",
            "point": "int64",
            "rep": "int64",
            "seed": "int64",
            "error": "string",
            "wall_s": "float64",
        }
    )
    runs = runs.sort_values(["point", "rep"], kind="stable").reset_index(drop=True)
    summary = summarize(runs, params, metric_columns)
    summary["metric"] = summary["metric"].astype("string")
    if series_frames:
        series = pd.concat(series_frames, ignore_index=True)
        series = series.astype({"run_id": "string", "series": "string", "key": "string", "value": "float64"})
        for p in params:
            series[p] = _uniform(series[p])
    else:
        series = pd.DataFrame(columns=["run_id", "point", "rep", *params, "series", "t_s", "key", "value"])
    return SweepResult(runs, summary, series, params, metric_columns, plan=plan)


def _uniform(column: pd.Series) -> pd.Series:
    """One Parquet-friendly type per parameter column: numbers stay numbers, the rest strings."""
    values = list(column)
    if all(isinstance(v, bool) for v in values):
        return column.astype(bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return column.astype("int64")
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return column.astype("float64")
    # The nullable "string" dtype survives a Parquet round trip unchanged (object does not).
    if all(isinstance(v, str) for v in values):
        return column.astype("string")
    return column.map(lambda v: v if isinstance(v, str) else _canonical(v)).astype("string")


def load_sweep(out: str | os.PathLike[str]) -> SweepResult:
    """Read a sweep's output directory (the Parquet tables, or the run files of an unfinished one)."""
    out = Path(out)
    plan_path = out / "plan.json"
    if not plan_path.is_file():
        raise FileNotFoundError(f"{out}: no plan.json; not a quicksim sweep directory")
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    params = list(plan.get("params") or {})
    records = []
    for path in sorted((out / "runs").glob("*.json")):
        records.append(json.loads(path.read_text(encoding="utf-8")))
    # Only the runs of the plan as last written (a directory may hold runs of a larger one).
    wanted = {f"{point_id(p)}-r{rep}" for p in _points_of(plan) for rep in range(int(plan.get("repeat", 1)))}
    records = [r for r in records if r.get("run_id") in wanted]
    result = _tables(records, plan, params)
    result.out = out
    return result


def _points_of(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    shell = Plan(
        {},
        {k: list(v) for k, v in (plan.get("params") or {}).items()},
        tuple(tuple(g) for g in plan.get("zip") or ()),
    )
    return shell.points()
