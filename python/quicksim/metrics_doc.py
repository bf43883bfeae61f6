"""The metric reference from the registry itself: `quicksim sweep --list-metrics` prints it and
`docs/metrics.md` is generated from it (`python3 -m quicksim.metrics_doc > docs/metrics.md`; a
test checks the page is current), so a metric's definition, parameters, range and interval
method are written once, in its function.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

from . import metrics
from .stats import FEW, METHODS

__all__ = ["entries", "markdown", "text"]

_HEADER = f"""# Sweep metrics

Generated from the metric registry (`quicksim.metrics`) by `python3 -m quicksim.metrics_doc`;
`quicksim sweep --list-metrics` prints the same. Do not edit by hand: a test compares the two.

A plan names a metric by name (`"jain"`), with a stat (`"queue_delay_s:p95"`, the same as
`{{ name = "queue_delay_s", stat = "p95" }}`), with parameters as a table
(`{{ name = "goodput_mbps", flow = "sender1", t0 = "5s" }}`), or as a function of your own,
`"mypkg.metrics:p99_wait"` (`module:function`; see below). Times are seconds or strings with a
unit. A metric that returns a value per flow (queue, link) gives one column each,
`goodput_mbps.sender1`.

## Intervals

Each point of a sweep gets n, mean, std, sem and a 95 % interval whose method follows from the
metric's kind and range (the summary's `method` column):

{chr(10).join(f"- `{k}`: {v}" for k, v in METHODS.items())}

Every interval contains its mean and stays inside the metric's range. Repetitions whose values
are bit-identical (a scenario without a random element gives the same run for every seed) are
reported as identical, with no interval; a proportion keeps Wilson's interval, whose width
comes from the number of runs, not their spread. With fewer than {FEW} runs the summary says
the intervals are wide and rest on the values being normal.

## Your own metrics

`"mypkg.metrics:p99_wait"` names `p99_wait(result, **params)` in module `mypkg.metrics`,
returning a number, a dict of numbers or a t_s/key/value DataFrame, like the built-ins below.
Optional attributes declare what the built-ins declare: `p99_wait.bounds = (0.0, None)`,
`p99_wait.kind = "proportion"`, `p99_wait.needs = ("queues",)`. Importing it runs its code:
a metric named in a plan file (which may come from someone else, as a scenario may) is imported
only with `--allow-python` (`allow_python=True`), as a scenario's `py:` controller is; one you
give on the command line (`quicksim sweep PLAN --metrics mypkg.metrics:p99_wait`) or pass to
`quicksim.sweep(metrics=[...])` is your own choice and is imported. Each worker imports the
module itself (local processes and Dask workers alike): it must be importable there (installed,
or on the workers' `PYTHONPATH`); a worker that cannot import it records the error in the run.

## Kept tables, and metrics added later

`keep = ["flows", "queues"]` in `[sweep]` stores those tables of every run with the sweep
(`kept/<run_id>/<table>.parquet`, plus `result.json`: meta, totals and the scenario; `"totals"`
alone keeps just those). Running the sweep again with more metrics (in the plan or
`--metrics`) computes them for the stored runs from what was kept, running nothing; a metric
that reads a table not kept is refused with a line naming the table. Each metric below lists
the tables it reads ("reads").

## Metrics
"""


def entries() -> Iterator[dict[str, Any]]:
    """Per registered metric: name, parameters (name, default), range, kind, tables, definition."""
    for name, fn in metrics.METRICS.items():
        if metrics.is_path(name) or ":" in name:
            continue  # a user's metric imported in this process
        yield {
            "name": name,
            "params": _params(fn),
            "bounds": metrics.BOUNDS.get(name, (None, None)),
            "kind": metrics.KINDS.get(name, "mean"),
            "needs": metrics.NEEDS.get(name),
            "doc": inspect.cleandoc(fn.__doc__ or "(undocumented)"),
        }


_REQUIRED = object()


def _params(fn: Callable[..., Any]) -> list[tuple[str, Any]]:
    """(name, default) of each parameter after the result; `_REQUIRED` for one without a default."""
    out = []
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        out.append((p.name, _REQUIRED if p.default is inspect.Parameter.empty else p.default))
    return out


def _param(name: str, default: Any, quote: str = "") -> str:
    if default is _REQUIRED:
        return f"{quote}{name}{quote} (required)"
    return f"{quote}{name}{quote} = {default!r}" if quote else f"{name}={default!r}"


def _range(bounds: tuple[float | None, float | None]) -> str:
    low, high = bounds
    if low is None and high is None:
        return "unbounded"
    return f"[{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}]"


def _interval(entry: dict[str, Any]) -> str:
    if entry["kind"] == "proportion":
        return "wilson"
    return "t" if entry["bounds"] == (None, None) else f"bootstrap (t-clipped below {FEW} runs)"


def _reads(entry: dict[str, Any]) -> str:
    needs = entry["needs"]
    if needs is None:
        return "undeclared"
    return ", ".join(needs) + " + totals" if needs else "totals only"


def markdown() -> str:
    """docs/metrics.md."""
    parts = [_HEADER]
    for e in entries():
        params = ", ".join(_param(n, v, "`") for n, v in e["params"]) or "none"
        parts.append(
            f"### `{e['name']}`\n\n{e['doc']}\n\n"
            f"- parameters: {params}\n- range: {_range(e['bounds'])}; interval: {_interval(e)}\n"
            f"- reads: {_reads(e)}\n"
        )
    return "\n".join(parts)


def text() -> str:
    """What `quicksim sweep --list-metrics` prints: each metric, its parameters and definition."""
    lines = []
    for e in entries():
        params = ", ".join(_param(n, v) for n, v in e["params"])
        lines.append(f"{e['name']}({params})")
        lines.append(f"    range {_range(e['bounds'])}, interval {_interval(e)}, reads {_reads(e)}")
        lines.extend(f"    {line}" if line else "" for line in e["doc"].splitlines())
        lines.append("")
    lines.append("Intervals: " + "; ".join(f"{k}: {v}" for k, v in METHODS.items()))
    lines.append("Full reference: docs/metrics.md")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
