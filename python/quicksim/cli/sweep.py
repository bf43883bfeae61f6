"""Run a parameter study: every point of a plan's [sweep] table, repeated, in parallel.

PLAN.toml is a scenario with a [sweep] table, or a file holding `scenario = "x.toml"` and [sweep]
(see quicksim.sweep). Runs execute on all local cores, or with --scheduler on a Dask cluster.
Each finished run is saved to DIR/runs/ at once; rerunning the same command resumes an
interrupted sweep and runs only what is missing. At the end DIR holds runs.parquet (one row per
run), summary.parquet (mean, std and 95 % confidence interval per point and metric, with its
method) and plots. With `keep` in the plan, the tables kept of every run let `--metrics NEW`
on the same DIR compute new metrics without running anything. `--list-metrics` prints every
metric with its parameters and definition (docs/metrics.md).

Exit status 0 when every run succeeded, 1 when some failed (recorded in the `error` column),
2 for a bad plan, 130 when interrupted (the finished runs are kept).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ._common import EXIT_ERROR, add_allow_python, add_set_option, out_dir, positive

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..sweep import SweepResult

NAME = "sweep"
HELP = "run a parameter study (repetitions, parallel or on Dask, resumable)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim sweep`."""
    parser.add_argument(
        "plan", type=Path, nargs="?", metavar="PLAN.toml", help="plan file (a scenario with a [sweep] table)"
    )
    parser.add_argument(
        "--list-metrics", action="store_true", help="print every metric, its parameters and definition"
    )
    parser.add_argument(
        "--metrics",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="collect these metrics too (e.g. queue_delay_s:p95, owd_s, mypkg.metrics:p99_wait); on a "
        "finished sweep's DIR they are computed from its kept tables, running nothing",
    )
    parser.add_argument(
        "--out", type=out_dir, metavar="DIR", help="output directory (default: out/<plan stem>-sweep)"
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=positive,
        metavar="N",
        help="local worker processes (default: all cores; 1 = no pool)",
    )
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run on this Dask distributed scheduler instead (needs quicksim[dask])",
    )
    parser.add_argument(
        "--worker-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="with --scheduler: stop (exit 1, finished runs kept) when the cluster has had no worker "
        "this long (default 60)",
    )
    parser.add_argument(
        "--repeat", type=positive, metavar="N", help="repetitions per point (overrides sweep.repeat)"
    )
    add_set_option(parser)
    add_allow_python(parser)
    parser.add_argument(
        "--retry-failed", action="store_true", help="run again the runs that recorded an error"
    )
    parser.add_argument("--no-plots", action="store_true", help="do not draw the metric plots")
    parser.add_argument(
        "--progress", action="store_true", help="show the progress bar even when stderr is not a terminal"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary table")


def main(args: argparse.Namespace) -> int:
    """Load the plan, run what is missing, print the summary; errors go to cli.handle_errors."""
    from ..sweep import load_plan, run_plan
    from ..sweep.plan import PlanError

    if args.list_metrics:
        from ..metrics_doc import text

        print(text())
        return 0
    if args.plan is None:
        raise PlanError("quicksim sweep: name a PLAN.toml (or ask for --list-metrics)")
    extra = [m.strip() for value in args.metrics for m in value.split(",") if m.strip()]
    plan = load_plan(
        args.plan, sets=args.sets, repeat=args.repeat, metrics=extra, allow_python=args.allow_python
    )
    from .._io import file_name

    out: Path = args.out if args.out is not None else Path("out") / file_name(f"{args.plan.stem}-sweep")
    if out.exists() and not out.is_dir():
        raise PlanError(f"--out: {out} exists and is not a directory")
    show_bar = not args.quiet and (args.progress or sys.stderr.isatty())
    if not args.worker_timeout > 0 or args.worker_timeout == float("inf"):
        raise PlanError(f"--worker-timeout: {args.worker_timeout} must be a positive number of seconds")
    from .._io import locked_folder

    with locked_folder(out, "--out"):  # the sweep and its plots: one process per folder
        result = run_plan(
            plan,
            out,
            jobs=args.jobs,
            scheduler=args.scheduler,
            progress=show_bar,
            retry_failed=args.retry_failed,
            worker_timeout=args.worker_timeout,
            allow_python=args.allow_python,
        )
        if not args.quiet:
            print(format_summary(result))
        plots = [] if args.no_plots else save_plots(result, out)
    failed = len(result.failed)
    if not args.quiet:
        print(
            f"results: {out}/ ({len(result.runs)} runs, runs.parquet, summary.parquet, {len(plots)} plots)",
            file=sys.stderr,
        )
    if failed:
        first = result.failed.iloc[0]
        print(f"quicksim: {failed} run(s) failed, e.g. {first['run_id']}: {first['error']}", file=sys.stderr)
        return EXIT_ERROR
    return 0


def _varied(result: SweepResult) -> list[str]:
    """The swept parameters that take more than one value (the others are constants)."""
    runs = result.runs
    return [p for p in result.params if runs[p].nunique(dropna=False) > 1]


def format_summary(result: SweepResult) -> str:
    """The summary as text: one line per point and metric, mean and 95 % interval with its
    method, "identical" for repetitions that gave bit-identical values (no interval), and notes
    when intervals rest on fewer than `stats.FEW` runs or repetitions did not vary."""
    from ..stats import FEW, METHODS

    s = result.summary
    if s.empty:
        return "no results"
    varied = _varied(result)
    lines = []
    for _, row in s.iterrows():
        point = " ".join(f"{p}={row[p]}" for p in varied)
        method = row.get("method", "t")
        if row["n"] < 2:
            ci = ""
        elif method == "identical":
            ci = f"  identical in all {row['n']} runs: no interval"
        else:
            ci = f"  95% CI [{row['ci_low']:.6g}, {row['ci_high']:.6g}] ({method})"
        lines.append(f"{point + '  ' if point else ''}{row['metric']}: {row['mean']:.6g}{ci}  (n={row['n']})")
    # Identical and so without an interval (a proportion keeps Wilson's, see quicksim.stats).
    bare = s["method"] == "identical" if "method" in s.columns else s["n"] < 0
    if bool(bare.any()):
        rows = s.assign(bare=bare)[s["n"] >= 2]
        if varied:
            every = int(rows.groupby(varied, dropna=False)["bare"].all().sum())
        else:
            every = int(bool(len(rows)) and bool(rows["bare"].all()))
        lines.append(
            f"note: {int(bare.sum())} metric value(s) were bit-identical in every repetition"
            + (f" ({every} point(s) identical in every metric)" if every else "")
            + ": the seeds changed nothing the metric sees (a scenario without a random element, e.g. "
            "no jitter or random start times, runs the same for every seed; so does a metric at a limit "
            "every run reaches, e.g. a link busy throughout or a delay quantile at a full buffer's); "
            "no interval is given"
        )
    used = [m for m in dict.fromkeys(s.get("method", [])) if m in ("t", "t-clipped", "bootstrap", "wilson")]
    if used:
        lines.append("intervals: " + "; ".join(f"{m}: {METHODS[m]}" for m in used))
    with_interval = s["method"] != "identical" if "method" in s.columns else True
    few = int(((s["n"] >= 2) & (s["n"] < FEW) & with_interval).sum())
    if few:
        lines.append(
            f"note: {few} interval(s) from fewer than {FEW} runs: wide, and only as good as the "
            "assumption that the runs' values are normal (--repeat more for a usable interval); "
            "intervals stay inside each metric's physical range"
        )
    return "\n".join(lines)


_MAX_PLOTS = 50  # a plan with hundreds of points or per-flow columns gets the first ones only


def save_plots(result: SweepResult, out: Path) -> list[Path]:
    """PNGs in DIR/plots: each metric against the first varied parameter (one line per value of
    the second; `goodput_mbps.a`, `.b` share a plot when there is no second), and each
    time-series metric averaged over repetitions, one plot per point."""
    from .._io import atomic_write, file_name
    from ..sweep_plots import interval_caption, plot_metric, plot_series

    varied = _varied(result)
    jobs: list[tuple[str, Callable[[], Figure]]] = []
    if varied and not result.summary.empty:
        x = varied[0]
        hue = varied[1] if len(varied) > 1 else None
        families: dict[str, list[str]] = {}
        for metric in result.metrics:
            families.setdefault(metric.split(".", 1)[0] if hue is None else metric, []).append(metric)
        # Every figure names its sweep, seed and what its points and intervals are.
        plan = result.plan
        origin = f"{plan.get('name', '')}, plan seed {plan.get('seed', '?')}".lstrip(", ")
        for family, members in families.items():
            title = f"{family}\n{origin}: {interval_caption(result.summary, members)}"
            draw = partial(plot_metric, result, members, x, hue=hue, ylabel=family, title=title)
            jobs.append((family, draw))
    if not result.series.empty:
        points = result.series.drop_duplicates("point")
        for name in dict.fromkeys(result.series["series"]):
            for _, row in points.iterrows():
                where = {p: row[p] for p in result.params}
                label = "-".join(str(row[p]) for p in varied) or "all"
                jobs.append(
                    (
                        f"{name}-{label}",
                        partial(plot_series, result, name, where=where, title=_title(name, where)),
                    )
                )
    paths = []
    for stale in sorted((out / "plots").glob("*.png")):
        stale.unlink()  # an earlier sweep's plots (other points or metrics) would read as this one's
    if jobs:
        (out / "plots").mkdir(parents=True, exist_ok=True)
    for stem, make in jobs[:_MAX_PLOTS]:
        path = out / "plots" / f"{file_name(stem)}.png"
        atomic_write(path, _png_writer(make()))
        paths.append(path)
    return paths


def _title(name: str, where: dict[str, object]) -> str:
    return f"{name}: " + ", ".join(f"{k}={v}" for k, v in where.items()) if where else name


def _png_writer(fig: Figure) -> Callable[[Path], object]:
    return lambda path: fig.savefig(path, format="png", dpi=110)
