"""Compare runs as Pantheon does: average throughput, 95th-percentile one-way delay, loss rate.

The runs need the delay statistics (`run.record.delays = true`; without them the delay is "-").
DIR is a run's output (with summary.json: one point per run, labelled by the directory's name)
or a sweep's output (with runs.parquet: one point per sweep point, averaged over its
repetitions; the plan's metrics must include `goodput_mbps` and `owd_p95_ms`, and `loss_rate`
for the loss column, each without `flow`, so that they are given per flow). Prints per flow and
in total the average throughput (Mbit/s over the flow's active time), the p95 one-way delay (ms)
and the loss rate (packets sent and not delivered), and draws throughput against p95 delay with
the delay axis reversed (better is up and to the right), as Pantheon's summary plot does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import ScenarioError

NAME = "report"
HELP = "Pantheon-style summary of runs or sweeps: throughput, p95 delay, loss; scatter PNG"

__all__ = ["Row", "main", "rows_of"]


class Row(NamedTuple):
    """One flow (or `total`) of one run or sweep point."""

    source: str
    flow: str
    throughput_mbps: float
    owd_p95_ms: float
    loss_rate: float


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim report`."""
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="run or sweep output directory")
    parser.add_argument(
        "--png",
        type=Path,
        default=Path("out/report.png"),
        metavar="FILE",
        help="the throughput vs p95-delay scatter (default: out/report.png)",
    )
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")


def main(args: argparse.Namespace) -> int:
    """Read every DIR, print the table, draw the scatter."""
    rows: list[Row] = []
    for d in args.dirs:
        rows.extend(rows_of(d))
    if args.json:
        # A value the run did not record (NaN: no delays, no loss metric) is null in strict JSON.
        plain = [
            {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in r._asdict().items()}
            for r in rows
        ]
        print(json.dumps(plain, indent=1, allow_nan=False, default=str))
    else:
        print(_format(rows))
    _plot(rows, args.png)
    if not args.json:
        print(f"plot: {args.png}")
    return 0


def rows_of(directory: Path) -> list[Row]:
    """The rows of one run or sweep directory (errors name the directory, or the damaged file:
    one line, never a traceback)."""
    if (directory / "summary.json").is_file():
        path = directory / "summary.json"
        with _damaged(path, "a run's summary"):
            return _run_rows(directory.name or str(directory), _read_json(path))
    if (directory / "runs.parquet").is_file():
        with _damaged(directory / "runs.parquet", "a sweep's runs table"):
            return _sweep_rows(directory)
    raise ScenarioError(f"report: {directory}: neither a run (summary.json) nor a sweep (runs.parquet)")


@contextlib.contextmanager
def _damaged(path: Path, what: str) -> Iterator[None]:
    """Turn what a damaged or foreign file raises while it is read (Arrow's errors are
    ValueErrors; a missing column a KeyError) into one line naming the file."""
    try:
        yield
    except ScenarioError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        detail = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise ScenarioError(
            f"report: {path}: not readable as {what} ({type(e).__name__}{': ' + detail if detail else ''})"
        ) from None


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


def _sweep_rows(directory: Path) -> list[Row]:
    import pandas as pd

    runs = pd.read_parquet(directory / "runs.parquet")
    tput_cols = [c for c in runs.columns if c.startswith("goodput_mbps.")]
    if not tput_cols or not any(c.startswith("owd_p95_ms.") for c in runs.columns):
        raise ScenarioError(
            f"report: {directory}: the sweep's metrics need goodput_mbps and owd_p95_ms per flow "
            '(metrics = [{name = "goodput_mbps"}, {name = "owd_p95_ms"}, {name = "loss_rate"}])'
        )
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
        label = _point_label(g.iloc[0], params) or directory.name
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
    )


def _plot(rows: Sequence[Row], png: Path) -> None:
    """Throughput vs p95 one-way delay, one marker per run (or sweep point) and flow; the runs'
    totals are filled, the flows hollow. The delay axis is reversed, as in Pantheon's plots."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    sources = list(dict.fromkeys(r.source for r in rows))
    cmap = plt.get_cmap("tab10")

    def finite(r: Row) -> bool:
        return not (math.isnan(r.owd_p95_ms) or math.isnan(r.throughput_mbps))

    for i, src in enumerate(sources):
        color = cmap(i % 10)
        flows = [r for r in rows if r.source == src and r.flow != "total"]
        total = [r for r in rows if r.source == src and r.flow == "total" and finite(r)]
        # One flow: its point is the run's. Several: the total filled, each flow hollow.
        main = flows if len(flows) == 1 else total
        for r in (r for r in main if finite(r)):
            ax.scatter(r.owd_p95_ms, r.throughput_mbps, color=color, s=60, zorder=3, label=src)
        if len(flows) > 1:
            for r in (r for r in flows if finite(r)):
                ax.scatter(
                    r.owd_p95_ms, r.throughput_mbps, facecolors="none", edgecolors=color, s=40, zorder=3
                )
                ax.annotate(
                    r.flow,
                    (r.owd_p95_ms, r.throughput_mbps),
                    textcoords="offset points",
                    xytext=(5, -9),
                    fontsize=7,
                )
    if ax.get_legend_handles_labels()[0]:  # runs without delay statistics draw no point
        ax.legend(fontsize=8, loc="best")
    ax.invert_xaxis()
    ax.set_xlabel("95th percentile one-way delay (ms)")
    ax.set_ylabel("average throughput (Mbit/s)")
    ax.set_title("throughput vs delay (filled: total, hollow: flows; better is up and right)", fontsize=9)
    ax.grid(True, alpha=0.3)
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
