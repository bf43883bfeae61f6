"""Per run: the distribution metrics a sweep collects (quantiles of one-way and queueing delay,
flow completion times, the spread of per-flow throughput) and the helpers `quicksim.metrics`
shares with them. `quicksim.metrics` registers these functions; this module registers nothing.

Quantile names are `stat` strings: "mean", "min", "max", "median" or "pNN" with NN in (0, 100),
e.g. "p95", "p99.9". Three kinds of quantile are computed, each where it is defined:
- of a packet population (one-way delay, time in a queue): the core's DDSketch over every
  packet of the run, within 1 % of the exact sample quantile (`run.record.delays` must be on):
  p50, p95 and p99 as the core reports them in the totals, any other from the sketch's counts
  it exports (`totals.delay_sketches`, `sketch_quantile`), by the same rule;
- of a signal over time (the queue's delay from its occupancy): the time-weighted quantile, the
  value the signal stays at or below for that fraction of the window (exact);
- of a few numbers (one per flow): the linear interpolation between order statistics
  (Hyndman & Fan type 7, numpy's default).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .units import seconds

if TYPE_CHECKING:
    from .results import Result

__all__ = [
    "completed",
    "fct_s",
    "flow_goodput_mbps",
    "owd_s",
    "parse_stat",
    "sample_stat",
    "sketch_quantile",
    "sojourn_s",
    "weighted_stat",
]

_STAT = re.compile(r"^p(\d+(?:\.\d+)?)$")
_SKETCH = ("mean", "p50", "p95", "p99")
"""What the core's totals report per flow and per queue (`run.record.delays`); any other
quantile comes from the sketch's counts (`totals.delay_sketches`)."""


def parse_stat(stat: Any, allowed: Sequence[str] = ("mean", "min", "max")) -> tuple[str, float | None]:
    """("mean"|"min"|"max", None) or ("q", fraction) for "pNN" / "median"; a ValueError naming the
    value otherwise."""
    text = str(stat)
    if text in allowed:
        return text, None
    if text == "median":
        return "q", 0.5
    m = _STAT.match(text)
    if m and 0.0 < float(m.group(1)) < 100.0:
        return "q", float(m.group(1)) / 100.0
    raise ValueError(f"stat must be one of {', '.join(allowed)}, median or pNN (0 < NN < 100), not {stat!r}")


def held_steps(t: Any, v: Any, t0: float, t1: float) -> tuple[Any, Any]:
    """A sample-and-hold series (value `v[i]` set at time `t[i]`, `t` sorted) over [t0, t1): the
    values that held there and for how long each held. The value holding at t0 is the last
    sample at or before it (the first sample if none)."""
    import numpy as np

    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    start = max(int(np.searchsorted(t, t0, side="right")) - 1, 0)
    t, v = t[start:], v[start:]
    keep = t < t1
    t, v = t[keep], v[keep]
    return v, np.diff(np.clip(np.append(t, t1), t0, t1))


def weighted_stat(values: Any, weights: Any, stat: str) -> float:
    """`stat` of values held for `weights` (durations): the time-weighted mean, min, max or
    quantile (the smallest value v such that the signal is <= v for at least that fraction of the
    time)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    w = np.asarray(weights, dtype=float)
    keep = w > 0
    v, w = v[keep], w[keep]
    if len(v) == 0:
        return math.nan
    what, q = parse_stat(stat)
    if q is None:
        if what == "mean":
            return float((v * w).sum() / w.sum())
        return float(v.min() if what == "min" else v.max())
    order = np.argsort(v, kind="stable")
    cum = np.cumsum(w[order])
    # The tolerance keeps p50 of two equal halves at the lower value despite rounding in cumsum.
    at = int(np.searchsorted(cum, q * cum[-1] * (1 - 1e-12), side="left"))
    return float(v[order][min(at, len(v) - 1)])


def sketch_quantile(sketch: Any, q: float) -> float:
    """The quantile `q` (0 < q < 1) of a delay sketch as the core exports it (`{"delay_s":
    [...], "count": [...]}`, values increasing): the value at rank floor(q (n - 1)), the rule of
    the core's p50/p95/p99 (the `sketches-ddsketch` crate's), within 1 % of the exact sample
    quantile; NaN for an empty sketch."""
    values, counts = sketch["delay_s"], sketch["count"]
    n = sum(counts)
    if n == 0:
        return math.nan
    rank = math.floor(q * (n - 1))
    seen = 0
    for value, count in zip(values, counts, strict=True):
        seen += count
        if seen > rank:
            return float(value)
    raise AssertionError("unreachable: the counts add up to n")


def sample_stat(values: Iterable[float], stat: str) -> float:
    """`stat` of a few numbers (NaN left out): mean, min, max or the type-7 quantile."""
    import numpy as np

    xs = np.asarray([float(x) for x in values if not math.isnan(float(x))], dtype=float)
    if len(xs) == 0:
        return math.nan
    what, q = parse_stat(stat)
    if q is not None:
        return float(np.quantile(xs, q))
    if what == "mean":
        return float(xs.mean())
    return float(xs.min() if what == "min" else xs.max())


# --- helpers shared with quicksim.metrics ----------------------------------------------------


def flows_of(result: Result, flow: str | Iterable[str] | None) -> list[str]:
    """The flows a metric covers: all, one name or a list, each checked against the run's."""
    if flow is None:
        return result.flow_names
    names = [flow] if isinstance(flow, str) else list(flow)
    unknown = [n for n in names if n not in result.flow_names]
    if unknown:
        raise KeyError(f"unknown flow(s) {', '.join(unknown)}; flows: {', '.join(result.flow_names)}")
    return names


def per(names: list[str], flow: Any, fn: Callable[[str], float]) -> float | dict[str, float]:
    """A scalar when one flow (or queue, link) was named, else a dict over all of them."""
    if isinstance(flow, str):
        return fn(flow)
    return {n: fn(n) for n in names}


def goodput(result: Result, flow: str, t0: float | None, t1: float | None, layer: Any) -> float:
    """A flow's mean rate in Mbit/s over [t0, t1), by default over its active window."""
    if t0 is None or t1 is None:
        window = result.active_window(flow)
        if window is None:
            return math.nan
        t0 = window[0] if t0 is None else t0
        t1 = window[1] if t1 is None else t1
    if not t1 > t0:
        return math.nan
    return result.mean_throughput(flow, t0, t1, layer) / 1e6


def _sketch(stat: Any, metric: str) -> tuple[str, float | None]:
    """The totals key's stat ("mean", "p50", "p95", "p99") and None, or "sketch" and the
    quantile to read from the exported counts."""
    try:
        _, q = parse_stat(stat, ("mean",))
    except ValueError as e:
        raise ValueError(f"{metric}: {e}") from None
    key = "mean" if q is None else f"p{q * 100:g}"
    return (key, None) if key in _SKETCH else ("sketch", q)


def _from_sketch(result: Result, where: str, name: str, series: str, q: float, metric: str) -> float:
    """Quantile `q` of the exported sketch `series` ("owd", "queueing") of flow or queue `name`
    (`where`: "flows", "queues")."""
    sketches = (result.totals.get("delay_sketches") or {}).get(where) or {}
    sketch = (sketches.get(name) or {}).get(series)
    if sketch is None:
        if result.totals.get("delay_sketches") is None and any(
            f"{series}_p95_s" in (t or {}) for t in (result.totals.get(where) or {}).values()
        ):
            raise ValueError(
                f"{metric}: p{q * 100:g} needs the delay sketches (totals.delay_sketches), which runs "
                "saved before they were exported lack; only mean, p50, p95 and p99 are in their totals"
            )
        raise _delays_off(metric)
    return sketch_quantile(sketch, q)


def _delays_off(metric: str) -> ValueError:
    return ValueError(f"{metric}: no per-packet delays in this run; set run.record.delays = true")


# --- metrics ---------------------------------------------------------------------------------


def owd_s(result: Result, flow: str | None = None, stat: str = "p95") -> float | dict[str, float]:
    """One-way delay of a flow's data packets in s, from leaving the source host to reaching the
    destination, over the whole run: the mean, median or any pNN (p90, p99.9) of every
    delivered packet (the core's DDSketch, within 1 % of the exact quantile). Needs
    `run.record.delays`; NaN for a flow that delivered nothing."""
    stat_key, q = _sketch(stat, "owd_s")
    key = f"owd_{stat_key if q is None else 'p95'}_s"
    totals = result.totals.get("flows") or {}
    names = [n for n in flows_of(result, flow) if n in totals]
    if not any(key in (totals.get(n) or {}) for n in names):
        raise _delays_off("owd_s")

    def one(name: str) -> float:
        if q is not None:
            return _from_sketch(result, "flows", name, "owd", q, "owd_s")
        value = (totals.get(name) or {}).get(key)
        return math.nan if value is None else float(value)

    return per(names, flow, one)


def sojourn_s(
    result: Result, queue: str | None = None, flow: str | None = None, stat: str = "p95"
) -> float | dict[str, float]:
    """Time packets waited in a queue in s, per packet, from arriving at the link direction to
    the start of their transmission: the mean, median or any pNN over the run (the core's
    DDSketch, within 1 %). Per queue (every packet that crossed it; default: each recorded
    queue), or with `flow` the total wait of that flow's data packets over all queues on its
    path. Needs `run.record.delays`."""
    stat_key, q = _sketch(stat, "sojourn_s")
    # Whether delays were recorded shows in the totals' p95 (every recorded series has one).
    key = f"queueing_{stat_key if q is None else 'p95'}_s"
    if flow is not None:
        if queue is not None:
            raise ValueError("sojourn_s: give queue or flow, not both")
        totals = result.totals.get("flows") or {}
        name = flows_of(result, flow)[0]
        value = (totals.get(name) or {}).get(key, "off")
        if value == "off":
            raise _delays_off("sojourn_s")
        if q is not None:
            return _from_sketch(result, "flows", name, "queueing", q, "sojourn_s")
        return math.nan if value is None else float(value)
    queues = result.totals.get("queues") or {}
    recorded = [n for n, q in queues.items() if key in (q or {})]
    if queue is not None and queue not in queues:
        raise KeyError(f"unknown queue {queue!r}; queues: {', '.join(queues)}")
    if not recorded or (queue is not None and queue not in recorded):
        raise _delays_off("sojourn_s")

    def one(name: str) -> float:
        if q is not None:
            return _from_sketch(result, "queues", name, "queueing", q, "sojourn_s")
        value = queues[name].get(key)
        return math.nan if value is None else float(value)

    return per(recorded, queue, one)


def fct_s(result: Result, stat: str = "mean", flows: Iterable[str] | None = None) -> float:
    """Flow completion time in s (start to the last byte of the transfer delivered) over the
    flows of the run that completed (all, or `flows`): mean, min, max, median or pNN across
    them (type-7 quantile). NaN when none completed; `completed` counts those that did."""
    totals = result.totals.get("flows") or {}
    names = flows_of(result, None if flows is None else list(flows))
    times = [(totals.get(n) or {}).get("completion_time_s") for n in names]
    return sample_stat([math.nan if t is None else float(t) for t in times], stat)


def completed(result: Result, flow: str | None = None) -> float | dict[str, float]:
    """1 if the flow's transfer completed within the run, else 0: a proportion across runs
    (Wilson's interval), per flow or one flow."""
    totals = result.totals.get("flows") or {}
    names = [n for n in flows_of(result, flow) if n in totals]
    return per(names, flow, lambda n: float((totals.get(n) or {}).get("completion_time_s") is not None))


def flow_goodput_mbps(
    result: Result,
    stat: str = "median",
    flows: Iterable[str] | None = None,
    t0: Any = None,
    t1: Any = None,
    layer: str = "delivered",
) -> float:
    """The spread of throughput across flows: each flow's mean rate in Mbit/s over [t0, t1)
    (default: its own active window), then the mean, min, max, median or pNN across the flows
    (all, or `flows`; type-7 quantile). For a flow group, `p5` is the rate the slowest 5 % of
    flows fall below."""
    a = None if t0 is None else seconds(t0, "t0")
    b = None if t1 is None else seconds(t1, "t1")
    names = flows_of(result, None if flows is None else list(flows))
    return sample_stat([goodput(result, n, a, b, layer) for n in names], stat)
