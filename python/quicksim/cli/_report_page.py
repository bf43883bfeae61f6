"""What `quicksim report` shows: the Pantheon scatter (throughput against p95 one-way delay), each
run's time series and table, each sweep's metrics against its parameters with their intervals
and its summary table, put on one page by `_page`."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ScenarioError
from ._page import Section, page, png_data, table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["Row", "build_page", "scatter_figure"]


class Row(NamedTuple):
    """One flow (or `total`) of one run or sweep point."""

    source: str
    flow: str
    throughput_mbps: float
    owd_p95_ms: float
    loss_rate: float


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


def _is_sweep(directory: Path) -> bool:
    return (directory / "runs.parquet").is_file() and not (directory / "summary.json").is_file()


def _finite(r: Row) -> bool:
    return not (math.isnan(r.owd_p95_ms) or math.isnan(r.throughput_mbps))


def build_page(dirs: Sequence[Path], names: Sequence[str], rows: Sequence[Row]) -> str:
    """The page of `dirs` (labelled `names`) and their comparison `rows`; a ScenarioError when
    no part of it would show anything."""
    sections: list[Section] = []
    compare = Section("Throughput against delay")
    if any(_finite(r) for r in rows):
        compare.figures.append(("throughput against p95 one-way delay", png_data(scatter_figure(rows))))
    else:
        compare.notes.append(
            "No run or sweep point has both a throughput and a p95 one-way delay: record the delays "
            "(run.record.delays = true, or the sweep metric owd_p95_ms) to compare them here."
        )
    if rows:
        compare.tables.append(
            table(
                ["run", "flow", "throughput Mbit/s", "p95 one-way delay ms", "loss %"],
                [[r.source, r.flow, r.throughput_mbps, r.owd_p95_ms, 100 * r.loss_rate] for r in rows],
            )
        )
    if rows:  # nothing to compare (sweeps of other metrics only): no section about it
        sections.append(compare)
    for d, name in zip(dirs, names, strict=True):
        if _is_sweep(d):
            with _damaged(d / "plan.json", "a sweep's output"):
                sections += _sweep_sections(d, name)
        else:
            with _damaged(d, "a run's output"):
                sections += _run_sections(d, name)
    if all(s.empty() for s in sections):
        raise ScenarioError(
            f"report: nothing to show in {', '.join(map(str, dirs))}: no flow has a throughput, no run "
            "has tables, no sweep has a metric"
        )
    intro = [
        "Sources: "
        + ", ".join(f"<b>{_esc(n)}</b> ({_esc(str(d))})" for d, n in zip(dirs, names, strict=True)),
    ]
    if rows:
        intro.append(
            "Throughput is the flow's average over its active time, delay the 95th percentile of its "
            "packets' one-way delays, loss the packets sent and not delivered."
        )
    return page("quicksim report", intro, [s for s in sections if not s.empty() or s.notes])


def scatter_figure(rows: Sequence[Row]) -> Figure:
    """Throughput vs p95 one-way delay, one marker per run (or sweep point) and flow; the runs'
    totals are filled, the flows hollow. The delay axis is reversed, as in Pantheon's plots; the
    legend sits beside the axes."""
    from ..plotting import new_figure

    fig = new_figure(figsize=(8.5, 4.5), layout="constrained")
    ax = fig.subplots()
    sources = list(dict.fromkeys(r.source for r in rows))

    def finite(r: Row) -> bool:
        return not (math.isnan(r.owd_p95_ms) or math.isnan(r.throughput_mbps))

    for i, src in enumerate(sources):
        color = f"C{i % 10}"
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
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.invert_xaxis()
    ax.set_xlabel("95th percentile one-way delay (ms)")
    ax.set_ylabel("average throughput (Mbit/s)")
    ax.set_title("throughput vs delay (filled: total, hollow: flows; better is up and right)", fontsize=9)
    ax.grid(True, alpha=0.3)
    return fig


def _esc(text: str) -> str:
    import html

    return html.escape(text)


def _run_sections(d: Path, name: str) -> list[Section]:
    """A run's flows table (from summary.json) and, when its tables are there, its time series."""
    import json

    from .. import plotting

    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    s = Section(f"Run {name}")
    s.notes.append(f"scenario {summary.get('scenario', '?')}, seed {summary.get('seed', '?')}")
    flows: dict[str, Any] = summary.get("flows") or {}
    if isinstance(flows, dict) and flows:
        s.tables.append(
            table(
                ["flow", "kind", "start s", "stop s", "goodput Mbit/s", "sent", "delivered", "dropped"],
                [
                    [
                        n,
                        f.get("kind"),
                        f.get("start_s"),
                        f.get("stop_s"),
                        _div(f.get("mean_delivered_bps"), 1e6),
                        f.get("packets_sent"),
                        f.get("packets_delivered"),
                        f.get("packets_dropped"),
                    ]
                    for n, f in flows.items()
                    if isinstance(f, dict)
                ],
            )
        )
    if not (d / "flows.parquet").is_file():
        s.notes.append("No tables beside summary.json: no time series to show.")
        return [s]
    from ..results import Result

    result = Result.load(d)
    for what, table_name, build in (
        ("throughput per flow", "flows", plotting.plot_throughput),
        ("queue length", "queues", plotting.plot_queue),
        ("congestion window", "conn", plotting.plot_cwnd),
    ):
        if not result.table(table_name).empty:
            s.figures.append((f"{name}: {what}", png_data(build(result))))
    return [s]


def _sweep_sections(d: Path, name: str) -> list[Section]:
    """A sweep's metrics against its first varying parameter (one line per value of the second),
    with the intervals of its summary, and the summary table."""
    s = Section(f"Sweep {name}")
    if not (d / "plan.json").is_file():
        s.notes.append("No plan.json beside runs.parquet: its points are compared above only.")
        return [s]
    from ..sweep import load_sweep
    from ..sweep_plots import interval_caption, plot_metric

    sweep = load_sweep(d)
    summary = sweep.summary
    varying = [p for p in sweep.params if p in summary and summary[p].astype(str).nunique() > 1]
    plan = sweep.plan
    s.notes.append(
        f"plan {plan.get('name', '?')}, seed {plan.get('seed', '?')}: "
        f"{len(sweep.runs)} runs, {summary['n'].max() if len(summary) else 0} repetitions per point; "
        "each point is the mean of its repetitions, the bars its 95 % confidence interval (the "
        'sweep\'s summary table; its method column says how each was computed, "identical": the '
        "repetitions gave one value, no interval)."
    )
    if varying:
        x, hue = varying[0], (varying[1] if len(varying) > 1 else None)
        for metric in dict.fromkeys(summary["metric"].astype(str)):
            part = summary[summary["metric"].astype(str) == metric]
            if not part["mean"].notna().any():
                continue
            title = f"{metric} ({name})\n{interval_caption(summary, [metric])}"
            fig = plot_metric(summary, metric, x=x, hue=hue, style="bars", title=title)
            s.figures.append((f"{name}: {metric} against {x}", png_data(fig)))
    shown = [*varying, "metric", "n", "mean", "ci_low", "ci_high"]
    shown += ["method"] if "method" in summary.columns else []
    s.tables.append(
        table(shown, [[_plain(v) for v in row] for row in summary[shown].itertuples(index=False)])
    )
    return [s]


def _div(value: Any, by: float) -> float | None:
    return float(value) / by if isinstance(value, int | float) and not isinstance(value, bool) else None


def _plain(value: Any) -> Any:
    """numpy scalars as Python numbers, for the table's formatting."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value
