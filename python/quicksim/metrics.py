"""Per run: named metrics of one `Result` that a sweep collects from every run,
`name -> fn(result, **params) -> value`. (Across runs: `quicksim.stats`; per phase of one run:
`quicksim.analysis`.)

A metric returns a float, a dict of floats (one column each, e.g. per flow), or, for a time
series, a DataFrame with columns t_s, key, value (averaged over repetitions by
`quicksim.sweep_plots.plot_series`). Parameters come from the plan as written, so times may be
numbers of seconds or strings with a unit ("3s", "500ms").

Add your own with `register`::

    @quicksim.metrics.register("rtt_ratio")
    def rtt_ratio(result, flow):
        conn = result.conn[result.conn["flow"] == flow]
        return float(conn["srtt_s"].mean() / conn["min_rtt_s"].min())

or pass the function itself to `quicksim.sweep(metrics=[fn])`, or name it in a plan as
`"mypkg.metrics:p99_wait"` (module:function). Runs in worker processes (and on Dask workers)
call the metric there, so it must be picklable: a module-level function in an importable module
(Dask also accepts lambdas and closures, it uses cloudpickle); a metric named by its module is
imported by each worker, so the module must be importable there (installed, or on PYTHONPATH).

Each metric declares the range of its values (`BOUNDS`), whether it is a mean or a proportion
(`KINDS`), which decides its confidence interval in a sweep (`quicksim.stats.interval`), and the
tables it reads (`NEEDS`), so that a metric added to a finished sweep is computed from the tables
the sweep kept, or refused naming the table it lacks. `docs/metrics.md` is generated from this
registry (`quicksim.metrics_doc`), as is `quicksim sweep --list-metrics`.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from . import metrics_quantiles as _q
from ._rows import connection_rows
from .metrics_quantiles import flows_of as _flows
from .metrics_quantiles import goodput as _goodput
from .metrics_quantiles import per as _per
from .stats import jain as _jain
from .units import seconds  # re-exported: metric parameters are times in seconds or with units

if TYPE_CHECKING:
    import pandas as pd

    from .results import Result

__all__ = [
    "BOUNDS",
    "KINDS",
    "METRICS",
    "NEEDS",
    "MetricFn",
    "bounds",
    "compute",
    "get",
    "kind",
    "label",
    "register",
    "seconds",
]

MetricFn = Callable[..., Any]
"""`fn(result, **params)` returning a float, a dict of floats, or a t_s/key/value DataFrame."""

METRICS: dict[str, MetricFn] = {}
"""The registry: built-ins plus whatever `register` added."""

Bound = tuple[float | None, float | None]

BOUNDS: dict[str, Bound] = {
    "goodput_mbps": (0.0, None),
    "phase_goodput_mbps": (0.0, None),
    "jain": (0.0, 1.0),
    "utilization": (0.0, 1.0),
    "drops": (0.0, None),
    "loss_rate": (0.0, 1.0),
    "owd_p95_ms": (0.0, None),
    "completion_time_s": (0.0, None),
    "cwnd_bytes": (0.0, None),
    "queue_delay_s": (0.0, None),
}
"""The physical range of each metric's values: (lowest, highest), None = unbounded. A sweep's
confidence intervals stay inside it (a goodput interval never goes below 0, see
`quicksim.stats.interval`). `register(..., bounds=...)` adds to it."""

KINDS: dict[str, str] = {}
"""Metrics whose per-run values are 0/1 outcomes ("proportion": Wilson's interval across runs);
every other metric is a "mean"."""

NEEDS: dict[str, tuple[str, ...]] = {}
"""The tables (of `quicksim.results.TABLES`) each metric reads; `meta` and `totals` are always
at hand. A metric computed later from a sweep's kept tables is refused when one is missing."""

DELAY_TABLES = ("flows", "links")
"""Tables with per-bin delay columns; listed here so the docs can say where delays come from."""


def _metric_of(column: str) -> str:
    """The metric a result column belongs to: `goodput_mbps[flow=a].a`, `queue_delay_s:p95`,
    `mypkg.metrics:p99_wait.a` -> goodput_mbps, queue_delay_s, mypkg.metrics:p99_wait."""
    name = column.split("[", 1)[0]
    while True:
        if name in METRICS:
            return name
        head = name.split(":", 1)[0]
        if head in METRICS:
            return head
        if "." not in name:
            return column.split("[", 1)[0].split(".", 1)[0]
        name = name.rsplit(".", 1)[0]


def bounds(column: str) -> Bound:
    """The range of the metric a result column belongs to (`goodput_mbps[flow=a].a` ->
    goodput_mbps's); (None, None) when the metric declared none."""
    return BOUNDS.get(_metric_of(column), (None, None))


def kind(column: str) -> str:
    """ "proportion" or "mean" for the metric a result column belongs to (`KINDS`)."""
    return KINDS.get(_metric_of(column), "mean")


_F = TypeVar("_F", bound=MetricFn)


@overload
def register(
    name: str,
    fn: None = None,
    *,
    replace: bool = False,
    bounds: Bound | None = None,
    kind: str = "mean",
    needs: Iterable[str] | None = None,
) -> Callable[[_F], _F]: ...
@overload
def register(
    name: str,
    fn: _F,
    *,
    replace: bool = False,
    bounds: Bound | None = None,
    kind: str = "mean",
    needs: Iterable[str] | None = None,
) -> _F: ...
def register(
    name: str,
    fn: Any = None,
    *,
    replace: bool = False,
    bounds: Bound | None = None,
    kind: str = "mean",
    needs: Iterable[str] | None = None,
) -> Any:
    """Register `fn` as metric `name`; usable as `register("x", fn)` or as `@register("x")`.

    `bounds` = (lowest, highest) is the range its values can physically take (None: open), inside
    which confidence intervals stay, e.g. (0, None) for a rate, (0, 1) for a fraction. `kind` is
    "proportion" for a 0/1 outcome per run (Wilson's interval), else "mean". `needs` names the
    tables it reads (`NEEDS`)."""
    if kind not in ("mean", "proportion"):
        raise ValueError(f"kind must be 'mean' or 'proportion', not {kind!r}")

    def add(f: _F) -> _F:
        if name in METRICS and not replace and METRICS[name] is not f:
            raise ValueError(f"metric {name!r} is already registered; pass replace=True to override it")
        METRICS[name] = f
        if bounds is not None:
            BOUNDS[name] = bounds
        if kind == "proportion":
            KINDS[name] = kind
        if needs is not None:
            NEEDS[name] = tuple(needs)
        return f

    return add if fn is None else add(fn)


def get(name: str) -> MetricFn:
    """The registered metric `name`, or a KeyError listing the known ones."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(sorted(METRICS))}") from None


_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_.]*$")


def is_path(name: str) -> bool:
    """Whether a metric name is `module:function` (a user's code) rather than a registered name or
    a registered name with a stat (`queue_delay_s:p95`)."""
    return bool(_PATH.match(name)) and name.split(":", 1)[0] not in METRICS


def resolve_path(path: str) -> MetricFn:
    """Import the metric `module:function` (the current directory is searched last, as for
    `py:` controllers) and register it under that name with the `bounds`, `kind` and `needs`
    attributes the function may carry. This runs the module's code: callers decide whether the
    user asked for it (`quicksim.sweep.make`)."""
    import importlib
    import os
    import sys

    module_name, _, qualname = path.partition(":")
    try:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name != module_name.split(".")[0] or os.getcwd() in sys.path:
                raise
            sys.path.append(os.getcwd())
            module = importlib.import_module(module_name)
    except Exception as e:
        raise ImportError(
            f"metric {path!r}: cannot import {module_name} ({type(e).__name__}: {e}); a metric named by "
            "its module must be importable wherever runs execute (installed, or on PYTHONPATH)"
        ) from None
    fn: Any = module
    for part in qualname.split("."):
        if not hasattr(fn, part):
            raise ImportError(f"metric {path!r}: {module_name} has no {qualname}")
        fn = getattr(fn, part)
    if not callable(fn):
        raise ImportError(f"metric {path!r}: {qualname} is not a function")
    if METRICS.get(path) is not fn:
        register(
            path,
            fn,
            replace=True,
            bounds=getattr(fn, "bounds", None),
            kind=getattr(fn, "kind", "mean"),
            needs=getattr(fn, "needs", None),
        )
    return fn  # type: ignore[no-any-return]


def label(name: str, params: Mapping[str, Any]) -> str:
    """Column name of a metric with parameters: `goodput_mbps[flow=sender1,t0=3s]`."""
    if not params:
        return name
    return name + "[" + ",".join(f"{k}={_short(v)}" for k, v in params.items()) + "]"


def _short(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "(" + ",".join(_short(v) for v in value) + ")"
    return str(value)


def compute(
    result: Result, fn: MetricFn, column: str, params: Mapping[str, Any]
) -> tuple[dict[str, float], Any]:
    """Evaluate one metric: (scalar columns, series DataFrame or None).

    A dict becomes `column.key` columns; a DataFrame is returned as the series of `column`.
    """
    value = fn(result, **params)
    if value is None:
        return {column: math.nan}, None
    if hasattr(value, "columns"):  # a DataFrame: a time series
        missing = {"t_s", "key", "value"} - set(value.columns)
        if missing:
            raise ValueError(
                f"metric {column}: a series needs columns t_s, key, value (missing {sorted(missing)})"
            )
        return {}, value[["t_s", "key", "value"]]
    if isinstance(value, Mapping):
        return {f"{column}.{k}": _float(v, column) for k, v in value.items()}, None
    return {column: _float(value, column)}, None


def _float(value: Any, column: str) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"metric {column}: returned {value!r}, not a number") from None


# --- units ---------------------------------------------------------------------------------


def _opt_seconds(value: Any, what: str) -> float | None:
    return None if value is None else seconds(value, what)


# --- helpers -----------------------------------------------------------------------------------


def _time_weighted(
    t: Any, v: Any, t0: float, t1: float, before: float | None = None, stat: str | None = None
) -> dict[str, float]:
    """Statistics of a sample-and-hold signal (values set at times t) over [t0, t1): mean, min,
    max, and `stat` when it is a quantile ("p95": the time-weighted quantile).

    The signal is `before` until its first sample; with None that time is left out.
    """
    import numpy as np

    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    if before is not None:
        t = np.concatenate([[min(t0, t[0] if len(t) else t0)], t])
        v = np.concatenate([[before], v])
    if len(t) == 0 or not t1 > t0:
        return {"mean": math.nan, "min": math.nan, "max": math.nan}
    order = np.argsort(t, kind="stable")
    t, v = t[order], v[order]
    v, widths = _q.held_steps(t, v, t0, t1)
    if len(v) == 0:
        return {"mean": math.nan, "min": math.nan, "max": math.nan}
    if widths.sum() <= 0:
        out = {"mean": float(v[-1]), "min": float(v.min()), "max": float(v.max())}
        if stat is not None and stat not in out:
            out[stat] = float(v[-1])
        return out
    out = {"mean": float((v * widths).sum() / widths.sum()), "min": float(v.min()), "max": float(v.max())}
    if stat is not None and stat not in out:
        out[stat] = _q.weighted_stat(v, widths, stat)
    return out


def _window(result: Result, t0: Any, t1: Any) -> tuple[float, float]:
    a = _opt_seconds(t0, "t0")
    b = _opt_seconds(t1, "t1")
    end = result.sim_end_s
    return (0.0 if a is None else a), (float(end or 0.0) if b is None else b)


def _pick(stats: Mapping[str, float], stat: str) -> float:
    if stat not in stats:
        raise ValueError(f"stat must be one of {', '.join(stats)}, not {stat!r}")
    return stats[stat]


def _link_rate_bps(result: Result, name: str) -> float:
    """A channel's rate, recovered from the core's totals (utilization = bytes*8 / (rate*end)).

    Rounded to whole bit/s, as rates are given: the division's last-bit error otherwise differs
    between runs that carried different byte counts, so the same queue length gave delays one ulp
    apart and repetitions at a full buffer looked varied instead of identical."""
    info = (result.totals.get("links") or {}).get(name) or {}
    end = result.sim_end_s or 0.0
    util = info.get("utilization") or 0.0
    if util > 0 and end > 0:
        return float(round(float(info["bytes"]) * 8.0 / (util * end)))
    links = result.links
    rows = links[(links["link"].astype(str) == name) & (links["utilization"] > 0)]
    if len(rows):
        return float(
            round(
                float(rows["bytes"].iloc[0])
                * 8.0
                / (float(rows["utilization"].iloc[0]) * result.record_interval_s)
            )
        )
    return math.nan


def _grid(result: Result, interval: Any) -> Any:
    import numpy as np

    step = result.record_interval_s if interval is None else seconds(interval, "interval")
    end = result.sim_end_s or 0.0
    return np.arange(0.0, end - 1e-12, step) if end > 0 else np.zeros(0)


def _series(frames: list[pd.DataFrame]) -> pd.DataFrame:
    import pandas as pd

    if not frames:
        return pd.DataFrame(
            {"t_s": pd.Series(dtype=float), "key": pd.Series(dtype=str), "value": pd.Series(dtype=float)}
        )
    return pd.concat(frames, ignore_index=True)


# --- built-ins -------------------------------------------------------------------------------


@register("goodput_mbps", needs=("flows",))
def goodput_mbps(
    result: Result,
    flow: str | None = None,
    t0: Any = None,
    t1: Any = None,
    layer: str = "delivered",
) -> float | dict[str, float]:
    """Mean rate in Mbit/s over [t0, t1) (default: each flow's active window), per flow or one flow."""
    a, b = _opt_seconds(t0, "t0"), _opt_seconds(t1, "t1")
    return _per(_flows(result, flow), flow, lambda f: _goodput(result, f, a, b, layer))


@register("phase_goodput_mbps", needs=("flows",))
def phase_goodput_mbps(
    result: Result,
    phases: Iterable[Any] | None = None,
    flow: str | None = None,
    layer: str = "delivered",
) -> dict[str, float]:
    """Mean rate per flow in each phase, keys `flow@t0-t1`.

    `phases` is a list of [t0, t1] pairs; by default the phases are the intervals between
    consecutive flow start and stop times (the showcase's 5-10, 10-20, ... s), and only flows
    active during a phase are reported for it.
    """
    names = _flows(result, flow)
    if phases is None:
        cuts = sorted(
            {w for n in result.flow_names if (win := result.active_window(n)) is not None for w in win}
        )
        pairs = list(itertools.pairwise(cuts))
        auto = True
    else:
        pairs = [(seconds(p[0], "phases"), seconds(p[1], "phases")) for p in phases]
        auto = False
    out: dict[str, float] = {}
    for a, b in pairs:
        for n in names:
            win = result.active_window(n)
            if auto and (win is None or win[0] > a or win[1] < b):
                continue
            out[f"{n}@{a:g}-{b:g}"] = result.mean_throughput(n, a, b, layer) / 1e6  # type: ignore[arg-type]
    return out


@register("jain", needs=("flows",))
def jain(
    result: Result,
    t0: Any = None,
    t1: Any = None,
    flows: Iterable[str] | None = None,
    layer: str = "delivered",
    settle: Any = "1s",
) -> float:
    """Jain's fairness index of the flows' mean rates, in [1/n, 1] for n flows (declared [0, 1]:
    n differs between runs and scenarios).

    With a window [t0, t1): over it, for the flows active during the whole window (or `flows`).
    Without one (the default): per phase, as the phase table of `quicksim run` reports it, then
    averaged weighted by the phases' lengths. A phase runs between consecutive starts and stops
    of the congestion-controlled (QUIC, TCP) flows (all flows if there are none; `flows` if
    given), minus its first `settle` (the transient after a flow joins or leaves); its index
    covers the flows of that set active through it. So background traffic (UDP) and flows that
    are not running do not count as unfairness: the showcase gives 0.99, not the 0.5 of all
    flows over the whole run.
    """
    if t0 is not None or t1 is not None:
        a, b = _window(result, t0, t1)
        if flows is not None:
            names = _flows(result, list(flows))
        else:
            names = [
                n for n in result.flow_names if (w := result.active_window(n)) and w[0] <= a and w[1] >= b
            ]
        if not b > a:
            return math.nan
        return _jain(result.mean_throughput(n, a, b, layer) for n in names)  # type: ignore[arg-type]
    return _phase_jain(result, flows, layer, seconds(settle, "settle"))


def _phase_jain(result: Result, flows: Iterable[str] | None, layer: str, settle: float) -> float:
    from .analysis import RESPONSIVE

    totals = result.totals.get("flows") or {}
    if flows is not None:
        names = _flows(result, list(flows))
    else:
        names = [n for n in result.flow_names if (totals.get(n) or {}).get("kind") in RESPONSIVE]
        names = names or result.flow_names
    windows = {n: w for n in names if (w := result.active_window(n)) is not None}
    cuts = sorted({t for w in windows.values() for t in w})
    weighted, total_s = 0.0, 0.0
    for a, b in itertools.pairwise(cuts):
        start = a + settle if b - a > settle else a
        active = [n for n, w in windows.items() if w[0] <= a and w[1] >= b]
        if not active or not b > start:
            continue
        index = _jain(result.mean_throughput(n, start, b, layer) for n in active)  # type: ignore[arg-type]
        if math.isnan(index):
            continue
        weighted += index * (b - start)
        total_s += b - start
    return weighted / total_s if total_s > 0 else math.nan


@register("utilization", needs=("links",))
def utilization(
    result: Result, link: str | None = None, t0: Any = None, t1: Any = None
) -> float | dict[str, float]:
    """Fraction of a link direction's nominal rate used, over the run or [t0, t1); per link or one.

    Counted as the frame bytes (IP plus link overhead) whose last bit reached the far end in the
    window, x 8 / (rate x window). Over the whole run that cannot exceed 1. Over a window a frame
    is counted whole in the bin it arrives in, including the part of it sent before the window
    (and one sent at its end is left out), so the count is off by at most one frame per edge:
    1500 B at 100 Mbit/s over 60 s is 2e-6, how a busy link once showed 1.000002. The link cannot
    be busier than its rate, so values above 1 from that counting are reported as 1. (A windowed
    value reads the `links` table; the whole run's, the core's totals.)
    """
    totals = result.totals.get("links") or {}
    names = list(totals)
    if link is not None and link not in totals and link not in set(result.links["link"].astype(str)):
        raise KeyError(f"unknown link {link!r}; links: {', '.join(names)}")
    if t0 is None and t1 is None:
        return _per(names, link, lambda n: min(1.0, float(totals[n]["utilization"])))
    a, b = _window(result, t0, t1)
    links = result.links

    def windowed(name: str) -> float:
        rows = links[links["link"].astype(str) == name]
        ri = result.record_interval_s
        start = rows["t_s"].to_numpy(dtype=float)
        overlap = (start + ri).clip(max=b) - start.clip(min=a)
        weight = overlap.clip(min=0.0)
        if not b > a:
            return math.nan
        return min(1.0, float((rows["utilization"].to_numpy(dtype=float) * weight).sum() / (b - a)))

    return _per(names, link, windowed)


@register("drops", needs=())
def drops(result: Result, queue: str | None = None, flow: str | None = None) -> float | dict[str, float]:
    """Dropped packets: total (default), in one `queue`, or of one `flow`; queue="*" gives per queue."""
    queues = result.totals.get("queues") or {}
    if flow is not None:
        return float(((result.totals.get("flows") or {}).get(flow) or {}).get("packets_dropped", math.nan))
    if queue == "*":
        return {n: float(q.get("dropped_packets", 0)) for n, q in queues.items()}
    if queue is not None:
        if queue not in queues:
            raise KeyError(f"unknown queue {queue!r}; queues: {', '.join(queues)}")
        return float(queues[queue].get("dropped_packets", 0))
    return float(sum(q.get("dropped_packets", 0) for q in queues.values()))


@register("loss_rate", needs=())
def loss_rate(result: Result, flow: str | None = None) -> float | dict[str, float]:
    """Fraction of a flow's sent packets that were not delivered (drops and losses in flight)."""
    totals = result.totals.get("flows") or {}

    def rate(name: str) -> float:
        t = totals.get(name) or {}
        sent = t.get("packets_sent") or 0
        if not sent:
            return math.nan
        if t.get("packets_delivered") is not None:
            return max(0.0, 1.0 - float(t["packets_delivered"]) / sent)
        return float(t.get("packets_dropped", 0)) / sent

    return _per([n for n in result.flow_names if n in totals], flow, rate)


@register("owd_p95_ms", needs=())
def owd_p95_ms(result: Result, flow: str | None = None) -> float | dict[str, float]:
    """95th percentile of a flow's one-way packet delay in ms (`run.record.delays`; NaN if not
    recorded or nothing delivered), from the core's DDSketch: within 1 % of the exact value."""
    totals = result.totals.get("flows") or {}

    def p95(name: str) -> float:
        value = (totals.get(name) or {}).get("owd_p95_s")
        return math.nan if value is None else float(value) * 1e3

    return _per([n for n in result.flow_names if n in totals], flow, p95)


@register("completion_time_s", needs=())
def completion_time_s(result: Result, flow: str | None = None) -> float | dict[str, float]:
    """Time from a flow's start to its transfer's completion (NaN if it did not complete)."""
    totals = result.totals.get("flows") or {}

    def ct(name: str) -> float:
        value = (totals.get(name) or {}).get("completion_time_s")
        return math.nan if value is None else float(value)

    return _per([n for n in result.flow_names if n in totals], flow, ct)


@register("cwnd_bytes", needs=("conn",))
def cwnd_bytes(
    result: Result,
    flow: str | None = None,
    stat: str = "mean",
    t0: Any = None,
    t1: Any = None,
) -> float | dict[str, float]:
    """Time-weighted mean (or min, max) congestion window of a QUIC flow over [t0, t1)."""
    conn = connection_rows(result.conn)
    present = [n for n in result.flow_names if n in set(conn["flow"].astype(str))]

    def one(name: str) -> float:
        rows = conn[conn["flow"].astype(str) == name]
        a, b = _window(result, t0, t1)
        if t0 is None:
            a = max(a, (result.active_window(name) or (a, b))[0])
        return _pick(_time_weighted(rows["t_s"], rows["cwnd_bytes"], a, b), stat)

    return _per(present, flow, one)


@register("queue_delay_s", needs=("queues",))
def queue_delay_s(
    result: Result,
    queue: str | None = None,
    stat: str = "mean",
    t0: Any = None,
    t1: Any = None,
) -> float | dict[str, float]:
    """Queueing delay seen over time: the queue's bytes x 8 / link rate, the wait a packet
    arriving at that instant would have, time-weighted over [t0, t1): mean, min, max, median or
    pNN (the time-weighted quantile: the delay is at or below it for NN % of the window). Per
    queue, or one. From the `queues` table, so with no `run.record.delays`; `sojourn_s` gives
    the per-packet wait instead.

    Only queues that ever held a packet are listed when `queue` is not given.
    """
    q = result.queues
    present = sorted(set(q["queue"].astype(str)))
    if queue is not None and queue not in present:
        return 0.0 if queue in (result.totals.get("queues") or {}) else _unknown_queue(result, queue)

    def one(name: str) -> float:
        rows = q[q["queue"].astype(str) == name]
        a, b = _window(result, t0, t1)
        # Empty until its first change.
        stats = _time_weighted(rows["t_s"], rows["bytes"], a, b, before=0.0, stat=str(stat))
        return _pick(stats, str(stat)) * 8.0 / _link_rate_bps(result, name)

    _q.parse_stat(stat)  # a bad stat fails before any queue is read

    return _per(present, queue, one)


def _unknown_queue(result: Result, queue: str) -> float:
    raise KeyError(f"unknown queue {queue!r}; queues: {', '.join(result.totals.get('queues') or {})}")


@register("total", needs=())
def total(result: Result, path: str) -> float:
    """Any number in `totals` or `meta` by dotted path: `flows.cbr.delivered_bytes`, `meta.events`."""
    node: Any = {"meta": result.meta, **result.totals}
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"total: {path!r} not found (no {part!r})")
        node = node[part]
    return math.nan if node is None else float(node)


@register("throughput_series", needs=("flows",))
def throughput_series(
    result: Result,
    flow: str | None = None,
    interval: Any = None,
    layer: str = "delivered",
) -> pd.DataFrame:
    """Rate over time in Mbit/s per flow (key = flow), for averaging over repetitions."""
    step = None if interval is None else seconds(interval, "interval")
    df = result.throughput(flow, layer=layer, interval=step)  # type: ignore[arg-type]
    return df.rename(columns={"flow": "key", "mbps": "value"}).astype({"key": str})[["t_s", "key", "value"]]


@register("cwnd_series", needs=("conn",))
def cwnd_series(result: Result, flow: str | None = None, interval: Any = None) -> pd.DataFrame:
    """Congestion window (bytes) per QUIC flow, sampled-and-held on a regular grid."""
    return _held_series(result, connection_rows(result.conn), "flow", "cwnd_bytes", flow, interval)


@register("queue_series", needs=("queues",))
def queue_series(
    result: Result, queue: str | None = None, interval: Any = None, unit: str = "packets"
) -> pd.DataFrame:
    """Queue length (packets or bytes) per queue, sampled-and-held on a regular grid."""
    if unit not in ("packets", "bytes"):
        raise ValueError(f"unit must be 'packets' or 'bytes', not {unit!r}")
    # A queue is empty until its first recorded change.
    return _held_series(result, result.queues, "queue", unit, queue, interval, before=0.0)


def _held_series(
    result: Result,
    table: pd.DataFrame,
    by: str,
    column: str,
    only: str | None,
    interval: Any,
    before: float = math.nan,
) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    grid = _grid(result, interval)
    frames = []
    names = sorted(set(table[by].astype(str))) if only is None else [only]
    for name in names:
        rows = table[table[by].astype(str) == name].sort_values("t_s", kind="stable")
        t = rows["t_s"].to_numpy(dtype=float)
        v = rows[column].to_numpy(dtype=float)
        idx = np.searchsorted(t, grid, side="right") - 1
        values = np.where(idx >= 0, v[np.clip(idx, 0, None)] if len(v) else before, before)
        frames.append(pd.DataFrame({"t_s": grid, "key": name, "value": values}))
    return _series(frames)


# --- distributions (quicksim.metrics_quantiles) ---------------------------------------------

register("owd_s", _q.owd_s, bounds=(0.0, None), needs=())
register("sojourn_s", _q.sojourn_s, bounds=(0.0, None), needs=())
register("fct_s", _q.fct_s, bounds=(0.0, None), needs=())
register("completed", _q.completed, bounds=(0.0, 1.0), kind="proportion", needs=())
register("flow_goodput_mbps", _q.flow_goodput_mbps, bounds=(0.0, None), needs=("flows",))
