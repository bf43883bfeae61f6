"""Table assembly: run records -> `runs` (one row per run), `summary` (per point and metric: n,
mean, std, sem, the 95 % interval, its method and whether the repetitions were identical; see
`quicksim.stats.interval`) and `series` (time-series metrics, long form).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .plan import _canonical

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SweepResult"]

_FIXED_COLUMNS = ("run_id", "point", "rep", "seed")
_TRAILING_COLUMNS = ("error", "wall_s")


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


def _tables(records: list[dict[str, Any]], plan: dict[str, Any], params: list[str]) -> SweepResult:
    import pandas as pd

    from ..metrics import bounds, kind
    from ..stats import summarize

    # The plan's metrics only: a directory's runs may hold values of metrics since dropped.
    named = {
        str(m["label"]): str(m.get("name") or m["label"])
        for m in plan.get("metrics") or []
        if isinstance(m, dict) and "label" in m
    }
    labels = sorted(named, key=len, reverse=True)  # the longest label a column starts with is its own

    def label_of(column: str) -> str | None:
        return next((lab for lab in labels if column == lab or column.startswith(lab + ".")), None)

    def wanted(column: str) -> bool:
        return not labels or label_of(column) is not None

    def metric_of(column: str) -> str:
        """The registered metric behind a column: a `label` of the plan's own names no metric."""
        label = label_of(column)
        return column if label is None or named[label] == label else named[label]

    metric_columns: list[str] = []
    for record in records:
        for column in record.get("values") or {}:
            if column not in metric_columns and wanted(column):
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
            if not wanted(label):
                continue
            frame = pd.DataFrame({"t_s": s["t_s"], "key": s["key"], "value": s["value"]})
            frame.insert(0, "series", label)
            for c in reversed([*_FIXED_COLUMNS[:3], *params]):
                frame.insert(0, c, row[c])
            series_frames.append(frame)
    columns = [*_FIXED_COLUMNS, *params, *metric_columns, *_TRAILING_COLUMNS]
    runs = pd.DataFrame(rows, columns=columns)
    for p in params:
        runs[p] = _uniform(runs[p])
    runs = _with_numbers(runs, params)
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
    summary = summarize(
        runs,
        params,
        metric_columns,
        bounds=lambda c: bounds(metric_of(c)),
        kinds=lambda c: kind(metric_of(c)),
    )
    summary["metric"] = summary["metric"].astype("string")
    summary["method"] = summary["method"].astype("string")
    if series_frames:
        series = pd.concat(series_frames, ignore_index=True)
        series = series.astype({"run_id": "string", "series": "string", "key": "string", "value": "float64"})
        for p in params:
            series[p] = _uniform(series[p])
    else:
        series = pd.DataFrame(columns=["run_id", "point", "rep", *params, "series", "t_s", "key", "value"])
    return SweepResult(runs, summary, series, params, metric_columns, plan=plan)


_UNIT_COLUMNS = (("_s", "seconds"), ("_bps", "bits_per_s"), ("_bytes", "bytes_"))
"""Suffix of the numeric column beside a parameter with units, and the parser that reads it."""


def _with_numbers(runs: pd.DataFrame, params: list[str]) -> pd.DataFrame:
    """Beside each parameter whose values are quantities with a unit ("3ms", "10Mbps", "25kB"),
    a numeric column in the base unit (`<param>_s`, `_bps`, `_bytes`), right after it, so that
    the values can be plotted and compared as numbers."""
    from .. import units

    for p in params:
        values = runs[p]
        if values.dtype.kind in "biuf" or not len(values):
            continue
        for suffix, parser in _UNIT_COLUMNS:
            parse = getattr(units, parser)
            try:
                numbers = [float(parse(str(v))) if isinstance(v, str) else math.nan for v in values]
            except (ValueError, TypeError):  # ScenarioError is a ValueError
                continue
            if parser == "seconds" and not all(
                isinstance(v, str) and (units.split_number(v) or (0, ""))[1] for v in values
            ):
                continue  # bare numbers are not durations with a unit
            column = f"{p}{suffix}"
            if column not in runs.columns:
                runs.insert(runs.columns.get_loc(p) + 1, column, numbers)
            break
    return runs


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
