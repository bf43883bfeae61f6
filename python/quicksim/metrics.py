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

or pass the function itself to `quicksim.sweep(metrics=[fn])`. Runs in worker processes (and on
Dask workers) call the metric there, so it must be picklable: a module-level function in an
importable module (Dask also accepts lambdas and closures, it uses cloudpickle).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from .stats import jain as _jain
from .units import seconds  # re-exported: metric parameters are times in seconds or with units

if TYPE_CHECKING:
    import pandas as pd

    from .results import Result

__all__ = ["BOUNDS", "METRICS", "MetricFn", "bounds", "compute", "get", "label", "register", "seconds"]

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
confidence intervals are clipped to it (a goodput interval never goes below 0). `register(...,
bounds=...)` adds to it."""


def bounds(column: str) -> Bound:
    """The range of the metric a result column belongs to (`goodput_mbps[flow=a].a` ->
    goodput_mbps's); (None, None) when the metric declared none."""
    return BOUNDS.get(column.split("[", 1)[0].split(".", 1)[0], (None, None))


_F = TypeVar("_F", bound=MetricFn)


@overload
def register(
    name: str, fn: None = None, *, replace: bool = False, bounds: Bound | None = None
) -> Callable[[_F], _F]: ...
@overload
def register(name: str, fn: _F, *, replace: bool = False, bounds: Bound | None = None) -> _F: ...
def register(name: str, fn: Any = None, *, replace: bool = False, bounds: Bound | None = None) -> Any:
    """Register `fn` as metric `name`; usable as `register("x", fn)` or as `@register("x")`.

    `bounds` = (lowest, highest) is the range its values can physically take (None: open), to
    which confidence intervals are clipped, e.g. (0, None) for a rate, (0, 1) for a fraction."""

    def add(f: _F) -> _F:
        if name in METRICS and not replace and METRICS[name] is not f:
            raise ValueError(f"metric {name!r} is already registered; pass replace=True to override it")
        METRICS[name] = f
        if bounds is not None:
            BOUNDS[name] = bounds
        return f

    return add if fn is None else add(fn)


def get(name: str) -> MetricFn:
    """The registered metric `name`, or a KeyError listing the known ones."""
    try:
        return METRICS[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known metrics: {', '.join(sorted(METRICS))}") from None


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


def _flows(result: Result, flow: str | Iterable[str] | None) -> list[str]:
    if flow is None:
        return result.flow_names
    names = [flow] if isinstance(flow, str) else list(flow)
    unknown = [n for n in names if n not in result.flow_names]
    if unknown:
        raise KeyError(f"unknown flow(s) {', '.join(unknown)}; flows: {', '.join(result.flow_names)}")
    return names


def _per(names: list[str], flow: Any, fn: Callable[[str], float]) -> float | dict[str, float]:
    """A scalar when one flow (or queue, link) was named, else a dict over all of them."""
    if isinstance(flow, str):
        return fn(flow)
    return {n: fn(n) for n in names}


def _goodput(result: Result, flow: str, t0: float | None, t1: float | None, layer: Any) -> float:
    if t0 is None or t1 is None:
        window = result.active_window(flow)
        if window is None:
            return math.nan
        t0 = window[0] if t0 is None else t0
        t1 = window[1] if t1 is None else t1
    if not t1 > t0:
        return math.nan
    return result.mean_throughput(flow, t0, t1, layer) / 1e6


def _time_weighted(t: Any, v: Any, t0: float, t1: float, before: float | None = None) -> dict[str, float]:
    """Statistics of a sample-and-hold signal (values set at times t) over [t0, t1).

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
    # The value holding at t0 is the last sample at or before it (the first sample if none).
    start = max(int(np.searchsorted(t, t0, side="right")) - 1, 0)
    t, v = t[start:], v[start:]
    keep = t < t1
    t, v = t[keep], v[keep]
    if len(t) == 0:
        return {"mean": math.nan, "min": math.nan, "max": math.nan}
    edges = np.clip(np.append(t, t1), t0, t1)
    widths = np.diff(edges)
    if widths.sum() <= 0:
        return {"mean": float(v[-1]), "min": float(v.min()), "max": float(v.max())}
    return {"mean": float((v * widths).sum() / widths.sum()), "min": float(v.min()), "max": float(v.max())}


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
    """A channel's rate, recovered from the core's totals (utilization = bytes*8 / (rate*end))."""
    info = (result.totals.get("links") or {}).get(name) or {}
    end = result.sim_end_s or 0.0
    util = info.get("utilization") or 0.0
    if util > 0 and end > 0:
        return float(info["bytes"]) * 8.0 / (util * end)
    links = result.links
    rows = links[(links["link"].astype(str) == name) & (links["utilization"] > 0)]
    if len(rows):
        return (
            float(rows["bytes"].iloc[0])
            * 8.0
            / (float(rows["utilization"].iloc[0]) * result.record_interval_s)
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


@register("goodput_mbps")
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


@register("phase_goodput_mbps")
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


@register("jain")
def jain(
    result: Result,
    t0: Any = None,
    t1: Any = None,
    flows: Iterable[str] | None = None,
    layer: str = "delivered",
    settle: Any = "1s",
) -> float:
    """Jain's fairness index of the flows' mean rates.

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


@register("utilization")
def utilization(
    result: Result, link: str | None = None, t0: Any = None, t1: Any = None
) -> float | dict[str, float]:
    """Fraction of a link direction's capacity used, over the run or [t0, t1); per link or one."""
    totals = result.totals.get("links") or {}
    names = list(totals)
    if link is not None and link not in totals and link not in set(result.links["link"].astype(str)):
        raise KeyError(f"unknown link {link!r}; links: {', '.join(names)}")
    if t0 is None and t1 is None:
        return _per(names, link, lambda n: float(totals[n]["utilization"]))
    a, b = _window(result, t0, t1)
    links = result.links

    def windowed(name: str) -> float:
        rows = links[links["link"].astype(str) == name]
        ri = result.record_interval_s
        start = rows["t_s"].to_numpy(dtype=float)
        overlap = (start + ri).clip(max=b) - start.clip(min=a)
        weight = overlap.clip(min=0.0)
        return (
            float((rows["utilization"].to_numpy(dtype=float) * weight).sum() / (b - a)) if b > a else math.nan
        )

    return _per(names, link, windowed)


@register("drops")
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


@register("loss_rate")
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


@register("owd_p95_ms")
def owd_p95_ms(result: Result, flow: str | None = None) -> float | dict[str, float]:
    """95th percentile of a flow's one-way packet delay in ms (`run.record.delays`; NaN if not
    recorded or nothing delivered), from the core's DDSketch: within 1 % of the exact value."""
    totals = result.totals.get("flows") or {}

    def p95(name: str) -> float:
        value = (totals.get(name) or {}).get("owd_p95_s")
        return math.nan if value is None else float(value) * 1e3

    return _per([n for n in result.flow_names if n in totals], flow, p95)


@register("completion_time_s")
def completion_time_s(result: Result, flow: str | None = None) -> float | dict[str, float]:
    """Time from a flow's start to its transfer's completion (NaN if it did not complete)."""
    totals = result.totals.get("flows") or {}

    def ct(name: str) -> float:
        value = (totals.get(name) or {}).get("completion_time_s")
        return math.nan if value is None else float(value)

    return _per([n for n in result.flow_names if n in totals], flow, ct)


@register("cwnd_bytes")
def cwnd_bytes(
    result: Result,
    flow: str | None = None,
    stat: str = "mean",
    t0: Any = None,
    t1: Any = None,
) -> float | dict[str, float]:
    """Time-weighted mean (or min, max) congestion window of a QUIC flow over [t0, t1)."""
    conn = result.conn
    present = [n for n in result.flow_names if n in set(conn["flow"].astype(str))]

    def one(name: str) -> float:
        rows = conn[conn["flow"].astype(str) == name]
        a, b = _window(result, t0, t1)
        if t0 is None:
            a = max(a, (result.active_window(name) or (a, b))[0])
        return _pick(_time_weighted(rows["t_s"], rows["cwnd_bytes"], a, b), stat)

    return _per(present, flow, one)


@register("queue_delay_s")
def queue_delay_s(
    result: Result,
    queue: str | None = None,
    stat: str = "mean",
    t0: Any = None,
    t1: Any = None,
) -> float | dict[str, float]:
    """Queueing delay: queued bytes x 8 / link rate, time-weighted over [t0, t1) (mean, min, max).

    Only queues that ever held a packet are listed when `queue` is not given.
    """
    q = result.queues
    present = sorted(set(q["queue"].astype(str)))
    if queue is not None and queue not in present:
        return 0.0 if queue in (result.totals.get("queues") or {}) else _unknown_queue(result, queue)

    def one(name: str) -> float:
        rows = q[q["queue"].astype(str) == name]
        a, b = _window(result, t0, t1)
        stats = _time_weighted(rows["t_s"], rows["bytes"], a, b, before=0.0)  # empty until a change
        return _pick(stats, stat) * 8.0 / _link_rate_bps(result, name)

    return _per(present, queue, one)


def _unknown_queue(result: Result, queue: str) -> float:
    raise KeyError(f"unknown queue {queue!r}; queues: {', '.join(result.totals.get('queues') or {})}")


@register("total")
def total(result: Result, path: str) -> float:
    """Any number in `totals` or `meta` by dotted path: `flows.cbr.delivered_bytes`, `meta.events`."""
    node: Any = {"meta": result.meta, **result.totals}
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"total: {path!r} not found (no {part!r})")
        node = node[part]
    return math.nan if node is None else float(node)


@register("throughput_series")
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


@register("cwnd_series")
def cwnd_series(result: Result, flow: str | None = None, interval: Any = None) -> pd.DataFrame:
    """Congestion window (bytes) per QUIC flow, sampled-and-held on a regular grid."""
    return _held_series(result, result.conn, "flow", "cwnd_bytes", flow, interval)


@register("queue_series")
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
