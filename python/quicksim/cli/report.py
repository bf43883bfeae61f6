"""Compare runs and sweeps on one page: time series, throughput against delay, a sweep's metrics
against its parameters, and the tables.

DIR is a run's output (with summary.json) or a sweep's output (with runs.parquet: one point per
sweep point, averaged over its repetitions; for the throughput-vs-delay comparison the plan's
metrics must include `goodput_mbps` and `owd_p95_ms`, and `loss_rate` for the loss column, each
without `flow`, so that they are given per flow; without them the page shows the sweep's own
metrics only). Runs are labelled by the shortest end of their
path that tells them apart (a/out and b/out, not out twice). Prints per flow and in total the
average throughput (Mbit/s over the flow's active time), the p95 one-way delay (ms; it needs the
delay statistics, `run.record.delays = true`) and the loss rate (packets sent and not
delivered), and writes one self-contained HTML page (--html; figures inline, nothing fetched, it
opens offline) and, with --png, the Pantheon-style scatter: throughput against p95 delay with the
delay axis reversed (better is up and to the right). Nothing to show (no point with both
figures for --png, no run or sweep with data) is an error (exit 2) saying why.
"""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._io import atomic_write
from ..errors import ScenarioError
from ._report_page import Row, _damaged, _finite, _is_sweep, build_page, scatter_figure

NAME = "report"
HELP = "one HTML page of runs and sweeps: time series, throughput vs delay, metrics, tables"

__all__ = ["Row", "labels", "main", "rows_of"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim report`."""
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="run or sweep output directory")
    parser.add_argument(
        "--html",
        type=Path,
        default=Path("out/report.html"),
        metavar="FILE",
        help="the self-contained page (default: out/report.html)",
    )
    parser.add_argument(
        "--png", type=Path, metavar="FILE", help="also write the throughput vs p95-delay scatter as a PNG"
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")


def main(args: argparse.Namespace) -> int:
    """Read every DIR, check there is something to show, print the table, write the page."""
    from .._io import atomic_write_text

    dirs = list({os.path.abspath(d): Path(d) for d in args.dirs}.values())  # the same DIR twice: once
    names = labels(dirs)
    rows: list[Row] = []
    for d, name in zip(dirs, names, strict=True):
        rows.extend(rows_of(d, name if len(dirs) > 1 or not _is_sweep(d) else None))
    if args.png is not None and not any(_finite(r) for r in rows):
        raise ScenarioError(
            "report: no run or sweep point has both a throughput and a p95 one-way delay, so the "
            "throughput-vs-delay plot would be empty; record the delays (run.record.delays = true, "
            "or the sweep metric owd_p95_ms)"
        )
    html = build_page(dirs, names, rows)  # raises ScenarioError when there is nothing to show
    if args.json:
        # A value the run did not record (NaN: no delays, no loss metric) is null in strict JSON.
        plain = [
            {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in r._asdict().items()}
            for r in rows
        ]
        print(json.dumps(plain, indent=1, allow_nan=False, default=str))
    elif rows:
        print(_format(rows))
    else:
        print(
            "no throughput per flow to compare (a sweep gives it with the metric goodput_mbps, "
            "without flow); the page shows the sweeps' metrics"
        )
    args.html.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.html, html)
    if args.png is not None:
        from .._sketch import png_writer

        args.png.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(args.png, png_writer(scatter_figure(rows), 120))
    if not args.json:
        print(f"page: {args.html}" + (f"\nplot: {args.png}" if args.png is not None else ""))
    return 0


def labels(dirs: Sequence[Path]) -> list[str]:
    """For each directory the shortest end of its path that no other directory's path ends with
    (a/out and b/out: "a/out" and "b/out"; a lone DIR: its name)."""
    parts = [Path(os.path.abspath(d)).parts for d in dirs]
    out = []
    for i, mine in enumerate(parts):
        others = [p for j, p in enumerate(parts) if j != i]
        k = 1
        while k < len(mine) and any(p[-k:] == mine[-k:] for p in others):
            k += 1
        out.append("/".join(mine[-k:]).lstrip("/") or "/")
    return out


def rows_of(directory: Path, label: str | None = None) -> list[Row]:
    """The rows of one run or sweep directory, labelled `label` (a run: default its directory's
    name; a sweep's points: their parameters, after `label: ` if given). Errors name the
    directory, or the damaged file: one line, never a traceback."""
    if (directory / "summary.json").is_file():
        path = directory / "summary.json"
        with _damaged(path, "a run's summary"):
            return _run_rows(label or directory.name or str(directory), _read_json(path))
    if _is_sweep(directory):
        with _damaged(directory / "runs.parquet", "a sweep's runs table"):
            return _sweep_rows(directory, label)
    if directory.is_dir() and not any(directory.iterdir()):
        raise ScenarioError(f"report: {directory}: empty directory, nothing to show")
    raise ScenarioError(f"report: {directory}: neither a run (summary.json) nor a sweep (runs.parquet)")


def _read_json(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ScenarioError(f"report: {path}: {e}") from None
    if not isinstance(data, Mapping):
        raise ScenarioError(f"report: {path}: not a JSON object")
    return data


def _num(value: Any) -> float:
    return math.nan if value is None else float(value)


def _run_rows(source: str, summary: Mapping[str, Any]) -> list[Row]:
    flows: Mapping[str, Any] = summary.get("flows") or {}
    rows = []
    sent = delivered = 0.0
    total_tput = 0.0
    for name, f in flows.items():
        tput = _num(f.get("mean_delivered_bps")) / 1e6
        s, d = f.get("packets_sent") or 0, f.get("packets_delivered") or 0
        sent, delivered = sent + s, delivered + d
        if not math.isnan(tput):
            total_tput += tput
        loss = max(0.0, 1.0 - d / s) if s else math.nan
        rows.append(Row(source, name, tput, _num(f.get("owd_p95_s")) * 1e3, loss))
    # The total's p95 is over every recorded flow's packets together (the core merges the
    # flows' sketches), not an average of the flows' p95.
    all_flows = (summary.get("totals") or {}).get("delays") or {}
    total_loss = max(0.0, 1.0 - delivered / sent) if sent else math.nan
    rows.append(Row(source, "total", total_tput, _num(all_flows.get("owd_p95_s")) * 1e3, total_loss))
    return rows


def _sweep_rows(directory: Path, prefix: str | None = None) -> list[Row]:
    import pandas as pd

    runs = pd.read_parquet(directory / "runs.parquet")
    # No throughput per flow (a study of queueing delay, say): no rows to compare; the page
    # still shows the sweep's own metrics against its parameters.
    tput_cols = [c for c in runs.columns if c.startswith("goodput_mbps.")]
    from ..metrics import METRICS

    # The swept parameters: the columns that are neither the run's identity, nor a metric, nor
    # the numeric twin of a parameter with units (`..._s` beside `"3ms"`).
    fixed = {"run_id", "point", "rep", "seed", "error", "wall_s"}
    candidates = [
        c
        for c in runs.columns
        if c not in fixed and not any(c == m or c.startswith((f"{m}.", f"{m}[")) for m in METRICS)
    ]
    params = [c for c in candidates if not any(c != p and c.startswith(f"{p}_") for p in candidates)]
    # Only what varies labels a point.
    params = [p for p in params if runs[p].astype(str).nunique() > 1]
    rows: list[Row] = []
    for _, g in runs.groupby("point", sort=True):
        label = _point_label(g.iloc[0], params) or prefix or directory.name
        if prefix and label != prefix:
            label = f"{prefix}: {label}"
        for col in tput_cols:
            flow = col.split(".", 1)[1]
            owd = g.get(f"owd_p95_ms.{flow}")
            loss = g.get(f"loss_rate.{flow}")
            rows.append(
                Row(
                    label,
                    flow,
                    float(g[col].mean()),
                    math.nan if owd is None else float(owd.mean()),
                    math.nan if loss is None else float(loss.mean()),
                )
            )
    return rows


def _point_label(row: Any, params: Sequence[str]) -> str:
    parts = []
    for p in params:
        value = row[p]
        parts.append(f"{p.rsplit('.', 1)[-1]}={value}")
    return ", ".join(parts)


def _format(rows: Sequence[Row]) -> str:
    from ._report import _table

    def f(v: float, spec: str) -> str:
        return "-" if math.isnan(v) else format(v, spec)

    return _table(
        ["run", "flow", "throughput Mbit/s", "p95 one-way delay ms", "loss %"],
        [
            [
                r.source,
                r.flow,
                f(r.throughput_mbps, ".3f"),
                f(r.owd_p95_ms, ".2f"),
                f(100 * r.loss_rate, ".3f"),
            ]
            for r in rows
        ],
        left=2,
        drop_empty=True,  # no run recorded delays: no column of "-"
    )
