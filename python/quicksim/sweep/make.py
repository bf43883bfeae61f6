"""Plans from Python values (`make_plan`) or from a plan file (`load_plan`): the scenario loaded
and overridden, parameter values expanded, zip groups and metric names checked and resolved.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

# `metrics` imports nothing heavy at module level (pandas only inside the metric functions), so
# `import quicksim` stays light.
from .. import api, metrics
from .expand import expand_values
from .plan import MAX_RUNS, MetricSpec, Plan, PlanError, _canonical, _Metric

__all__ = ["load_plan", "make_plan"]

_ALIASES = {
    "goodput": "goodput_mbps",
    "fairness": "jain",
    "queue_delay": "queue_delay_s",
    "completion_time": "completion_time_s",
    "cwnd": "cwnd_bytes",
}
"""Short metric names accepted in plans; results are labelled with the canonical name."""


def _resolve_metric(spec: MetricSpec) -> _Metric:
    if callable(spec):
        name = getattr(spec, "__name__", type(spec).__name__)
        return _Metric(name, name, spec, {})
    if isinstance(spec, str):
        name, params = _split_stat(spec)
        fn, path = _get_metric(name)
        label = name if not params else f"{name}:{params['stat']}"
        return _Metric(label, name, fn, params, path)
    if isinstance(spec, Mapping):
        if "name" not in spec and "fn" not in spec:
            raise PlanError(
                f'metric {dict(spec)!r}: needs a `name`, e.g. {{name = "goodput_mbps", flow = "sender1"}}'
            )
        params = {k: v for k, v in spec.items() if k not in ("name", "label", "fn")}
        path = None
        if "fn" in spec:
            fn = spec["fn"]
            name = str(spec.get("name") or getattr(fn, "__name__", "metric"))
        else:
            name, stat = _split_stat(str(spec["name"]))
            if stat and "stat" in params:
                raise PlanError(f"metric {dict(spec)!r}: the stat is given twice (in the name and as `stat`)")
            params = {**stat, **params}
            fn, path = _get_metric(name)
        label = spec.get("label") or metrics.label(name, params)
        return _Metric(str(label), str(name), fn, params, path)
    raise PlanError(f"metric {spec!r}: expected a name, a table or a function")


def _split_stat(text: str) -> tuple[str, dict[str, Any]]:
    """`queue_delay_s:p95` -> (queue_delay_s, {stat: p95}); an alias becomes its metric's name; a
    user's `module:function` is left whole."""
    head, sep, tail = text.partition(":")
    head = _ALIASES.get(head, head)
    if sep and head in metrics.METRICS:
        return head, {"stat": tail}
    return (text if sep else head), {}


def module_metrics(specs: Iterable[Any]) -> list[str]:
    """The `module:function` names among metric specs: code a plan would import."""
    names = [s if isinstance(s, str) else s.get("name") if isinstance(s, Mapping) else None for s in specs]
    return [n for n in names if isinstance(n, str) and metrics.is_path(_split_stat(n)[0])]


def check_consent(specs: Iterable[Any], allow_python: bool, where: str) -> None:
    """A plan file is data, like a scenario: the Python modules its metrics name are imported only
    with the user's consent (`--allow-python`), as its `py:` controllers are. Metrics the user
    passes on the command line (`--metrics`) or from Python are the user's own choice."""
    named = module_metrics(specs)
    if named and not allow_python:
        raise PlanError(
            f"{where}: metric {named[0]!r} is Python code (module:function); importing it needs "
            "--allow-python (or allow_python=True), as a scenario's py: controller does"
        )


_TIME_PARAMS = ("t0", "t1", "settle", "interval")
"""Metric parameters that are times (seconds or a string with a unit)."""


def _check_metric_params(metric: _Metric, doc: Mapping[str, Any], swept: Mapping[str, Any]) -> None:
    """The metric accepts these parameter names, its times parse and the flow it names exists,
    so a typo fails the plan at once instead of every run after its simulation."""
    import inspect

    where = f"sweep.metrics: {metric.label}"
    try:
        signature = inspect.signature(metric.fn)
    except (TypeError, ValueError):  # a builtin or C function: nothing to check against
        return
    try:
        signature.bind(None, **metric.params)
    except TypeError as e:
        accepted = [p for p in list(signature.parameters)[1:] if p not in ("args", "kwargs")]
        raise PlanError(f"{where}: {e} (its parameters: {', '.join(accepted) or 'none'})") from None
    for key in _TIME_PARAMS:
        value = metric.params.get(key)
        if value is not None and key in signature.parameters:
            try:
                metrics.seconds(value, key)
            except ValueError as e:
                raise PlanError(f"{where}: {e}") from None
    flows = doc.get("flows")
    known = [f.get("name") for f in flows if isinstance(f, Mapping)] if isinstance(flows, list) else []
    if known and all(isinstance(n, str) for n in known) and not any(p.startswith("flows") for p in swept):
        named = metric.params.get("flow")
        wanted = [named] if isinstance(named, str) else list(metric.params.get("flows") or [])
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise PlanError(f"{where}: no flow named {unknown[0]!r} (flows: {', '.join(map(str, known))})")


def _get_metric(name: str) -> tuple[Callable[..., Any], str | None]:
    """The metric's function, and its import path when it is a user's `module:function`."""
    if metrics.is_path(name) or (name in metrics.METRICS and ":" in name):
        try:
            return metrics.resolve_path(name), name
        except ImportError as e:
            raise PlanError(f"sweep.metrics: {e}") from None
    try:
        return metrics.get(name), None
    except KeyError as e:
        raise PlanError(str(e.args[0])) from None


def _check_keep(keep: Any) -> tuple[str, ...]:
    """`keep`: a list of table names (`quicksim.results.TABLES`, or "totals" for meta and totals
    alone); a bad name fails the plan, naming the known ones."""
    from ..results import FILE_TABLES, TABLES

    if keep is None:
        return ()
    if isinstance(keep, str) or not isinstance(keep, list | tuple):
        raise PlanError(f'sweep.keep: {keep!r} must be a list of table names, e.g. ["flows", "queues"]')
    known = [t for t in TABLES if t not in FILE_TABLES]
    for name in keep:
        if name != "totals" and name not in known:
            raise PlanError(f"sweep.keep: {name!r} is not a table; tables: {', '.join(known)} (or totals)")
    return tuple(dict.fromkeys(str(n) for n in keep))


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
    keep: Sequence[str] | None = None,
) -> Plan:
    """Build a Plan from a scenario (path or dict) and Python values; see `sweep`. Metrics named
    `module:function` are imported here (the caller checked consent: `check_consent`)."""
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
    _check_size(expanded, groups, repeat)
    _check_distinct(expanded, groups)
    resolved = tuple(_resolve_metric(m) for m in metrics)
    for m in resolved:  # the whole plan is checked before the first run, not in every run
        _check_metric_params(m, doc, expanded)
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
    return Plan(doc, expanded, groups, repeat, resolved, int(seed), plan_name, _check_keep(keep))


def _check_size(expanded: Mapping[str, list[Any]], groups: tuple[tuple[str, ...], ...], repeat: int) -> None:
    """Count the runs before expanding them: more than MAX_RUNS is refused, naming the fields
    (a 1000 x 1000 grid or `--repeat 1000000000` used to be expanded until memory ran out)."""
    zipped = {p for g in groups for p in g}
    sizes = [(f"sweep.params.{p}", len(v)) for p, v in expanded.items() if p not in zipped]
    sizes += [(f"sweep.zip {list(g)}", len(expanded[g[0]])) for g in groups]
    points = math.prod(n for _, n in sizes)
    if points * repeat <= MAX_RUNS:
        return
    if repeat > MAX_RUNS:
        raise PlanError(
            f"sweep.repeat (--repeat): {repeat} repetitions; a plan holds at most {MAX_RUNS} runs"
        )
    factors = ", ".join(f"{field}: {n} values" for field, n in sizes if n > 1)
    raise PlanError(
        f"sweep.params: {points} points x {repeat} repetitions = {points * repeat} runs, more than the "
        f"{MAX_RUNS} a plan may hold ({factors}; sweep.repeat: {repeat})"
    )


def _check_distinct(expanded: Mapping[str, list[Any]], groups: tuple[tuple[str, ...], ...]) -> None:
    """Each value of a parameter (each tuple of a zip group) once. Refused, not merged: equal
    values make equal run ids, so a duplicate ran once but counted twice (a too narrow interval),
    and a repeated value is most often a typo for another one, which merging would hide."""
    zipped = {p for g in groups for p in g}
    checks = [(f"sweep.params.{p}", [(v,) for v in vs]) for p, vs in expanded.items() if p not in zipped]
    checks += [(f"sweep.zip {list(g)}", list(zip(*(expanded[p] for p in g), strict=True))) for g in groups]
    for field, rows in checks:
        seen: dict[str, int] = {}
        for i, row in enumerate(rows):
            key = _canonical(list(row))
            if key in seen:
                shown = row[0] if len(row) == 1 else row
                raise PlanError(
                    f"{field}: {shown!r} is given twice (values {seen[key]} and {i}); give each value once"
                )
            seen[key] = i


def load_plan(
    path: str | os.PathLike[str],
    sets: Iterable[str] = (),
    repeat: int | None = None,
    *,
    metrics: Sequence[MetricSpec] = (),
    allow_python: bool = False,
) -> Plan:
    """Read a plan file: a scenario with a [sweep] table, or `scenario = "x.toml"` plus [sweep].

    `sets` override the scenario (not the plan); `repeat` overrides sweep.repeat; `metrics` are
    collected besides the plan's (the user's own: their modules are imported). The plan's own
    `module:function` metrics are imported only with `allow_python`.
    """
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
    known = {"params", "repeat", "metrics", "zip", "seed", "name", "keep"}
    unknown = set(table) - known
    if unknown:
        raise PlanError(
            f"{path}: unknown key(s) in [sweep]: {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(known))}"
        )
    own = table.get("metrics") or ("goodput_mbps",)
    if isinstance(own, list | tuple):
        check_consent(own, allow_python, f"{path}: sweep.metrics")
    labels = {m if isinstance(m, str) else None for m in own}
    return make_plan(
        scenario,
        table.get("params") or {},
        repeat=repeat if repeat is not None else table.get("repeat", 1),
        metrics=[*own, *(m for m in metrics if m not in labels)],
        zip=table.get("zip") or (),
        seed=table.get("seed"),
        sets=sets,
        name=table.get("name") or doc.get("name") or path.stem,
        keep=table.get("keep"),
    )
