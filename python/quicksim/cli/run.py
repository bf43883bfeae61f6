"""Run one scenario and save its results.

Writes DIR/<table>.parquet, DIR/scenario.json, DIR/summary.json and the standard plots
DIR/*.png (DIR defaults to out/<scenario stem>, with -seedN / -set-<hash> for --seed / --set
variants), and prints a summary of flows, queues and links.

Ctrl-C stops the simulation at its next progress report, saves what was simulated so far and
exits with status 130; a second Ctrl-C aborts without saving.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ..errors import ScenarioError
from ..units import bits_per_s, bytes_, seconds
from ._common import EXIT_INTERRUPTED, add_allow_python, add_set_option, out_dir, seed

NAME = "run"
HELP = "run a scenario; save tables, summary and plots"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim run`."""
    parser.add_argument("scenario", type=Path, metavar="SCENARIO.toml", help="scenario file")
    parser.add_argument("--seed", type=seed, metavar="N", help="master seed (overrides run.seed)")
    parser.add_argument(
        "--out",
        type=out_dir,
        metavar="DIR",
        help="output directory (default: out/<scenario stem>, plus -seedN and -set-<hash of the "
        "overrides> when --seed or --set is given, so variants never overwrite each other)",
    )
    add_set_option(parser)
    add_allow_python(parser)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON instead of tables")
    parser.add_argument("--no-plots", action="store_true", help="do not draw the PNG plots")
    parser.add_argument(
        "--progress", action="store_true", help="show the progress bar even when stderr is not a terminal"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary table")


def main(args: argparse.Namespace) -> int:
    """Run, report, save; errors are reported by the caller (cli.handle_errors)."""
    from ._plot_worker import PlotWorker, forking_helps

    # The plots are drawn by a worker forked before anything else, so that it imports matplotlib
    # while this process imports pandas and simulates, and draws while this one saves and prints
    # (issue 35: plotting was 3/4 of the showcase's time). It needs no pandas: this process
    # prepares the figures' data.
    worker = PlotWorker() if not args.no_plots and forking_helps() else None
    try:
        return _main(args, worker)
    finally:
        if worker is not None:
            worker.close()


def _main(args: argparse.Namespace, worker: Any) -> int:
    from .. import api
    from ..cc import controllers_of

    scenario = api.apply_overrides(api.load_scenario(args.scenario), args.sets)
    # Fail before any output (a `py:` controller without --allow-python too), learn the duration.
    controllers_of(scenario, allow_python=args.allow_python)
    normalized = api.validate(scenario, allow_python=args.allow_python)
    out: Path = args.out if args.out is not None else default_out(args.scenario, args.sets, args.seed)
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"--out: {out} exists and is not a directory")
    from .._folder import clear_outputs
    from .._io import locked_folder
    from ..plotting import STANDARD_PLOTS
    from ..results import TABLES

    # One run per folder at a time (a second `quicksim run` into it is refused), and nothing of an
    # earlier run left beside this one's files (its capture, qlog files, plots under --no-plots).
    with locked_folder(out, "--out"):
        clear_outputs(out, TABLES, [name for name, _, _ in STANDARD_PLOTS])
        return _run_with(out, args, scenario, normalized, worker)


def _run_with(
    out: Path,
    args: argparse.Namespace,
    scenario: dict[str, Any],
    normalized: dict[str, Any],
    worker: Any,
) -> int:
    from .. import api
    from ._report import format_summary

    if not args.quiet:
        for line in sample_limit_notes(normalized):
            print(f"quicksim: note: {line}", file=sys.stderr)
    show_bar = not args.quiet and (args.progress or sys.stderr.isatty())
    with _StopOnInterrupt() as stop, _ProgressBar(_duration_s(normalized), show_bar) as bar:

        def progress(sim_time_s: float, events: int) -> bool:
            bar.update(sim_time_s, events)
            return not stop.requested

        result = api.run(scenario, seed=args.seed, progress=progress, out=out, allow_python=args.allow_python)
    if "name" not in scenario:
        result.name = args.scenario.stem
    if worker is not None:
        from ..plotting import standard_sketches

        worker.submit(standard_sketches(result, out))

    if stop.requested:
        print(
            f"quicksim: interrupted at t = {result.meta.get('sim_end_s')} s; saving the partial results",
            file=sys.stderr,
        )
    _warn_truncated(result)
    _warn_capture(result)
    summary = result.summary()
    result.save(out, summary)
    if args.json:
        print(json.dumps(summary, indent=2))
    elif not args.quiet:
        print(format_summary(summary))
        _print_phases(result)
    plots = []
    if worker is not None:
        plots = worker.wait()
    elif not args.no_plots:
        from ..plotting import save_standard_plots

        plots = save_standard_plots(result, out)
    if not args.quiet:
        for name, why in (result.meta.get("unfinished_flows") or {}).items():
            print(f"quicksim: flow {name} did not finish: {why}", file=sys.stderr)
        print(f"results: {out}/ (tables, summary.json, scenario.json, {len(plots)} plots)", file=sys.stderr)
    return EXIT_INTERRUPTED if stop.requested else 0


def _warn_truncated(result: Any) -> None:
    """One warning line per series whose recording stopped at run.record.max_samples, and per
    table that stopped growing at its share of the memory budget (`meta.truncated_tables`)."""
    from ..plotting import truncated_series

    record = (result.scenario.get("run") or {}).get("record") or {}
    limit = record.get("max_samples", "its limit") if isinstance(record, dict) else "its limit"
    for table, what in (("queue", "queue"), ("conn", "congestion state of flow")):
        for name, last in truncated_series(result, table).items():
            print(
                f"quicksim: warning: the {what} {name} was recorded only until t = {last:.6g} s "
                f"(run.record.max_samples = {limit} samples); its series and plot end there. "
                "Raise run.record.max_samples or record less (run.record).",
                file=sys.stderr,
            )
    for cut in result.meta.get("truncated_tables") or []:
        if isinstance(cut, dict) and cut.get("why"):
            print(f"quicksim: warning: {cut['why']}", file=sys.stderr)


def _warn_capture(result: Any) -> None:
    """One warning line when the capture had to give flows a client port another open flow
    between the same hosts held (more flows at once than the ephemeral range has ports)."""
    capture = result.totals.get("capture") if isinstance(result.totals, dict) else None
    if isinstance(capture, dict) and capture.get("warning"):
        print(f"quicksim: warning: {capture['warning']}", file=sys.stderr)


#: Bytes one recorded queue sample holds in the core (t_ps 8, queue 4, packets 8, bytes 8).
_QUEUE_SAMPLE_BYTES = 28


def sample_limit_notes(normalized: dict[str, Any]) -> list[str]:
    """Before the run: the queue series that `run.record.max_samples` may cut, one line per link
    rate. A queue changes twice per packet (in, out); at full load with MTU-sized frames a link
    of rate R passes R / (8 x MTU) packets per second, so its series reaches the limit after
    max_samples / (2 R / (8 MTU)) seconds. In a dumbbell every packet crosses the bottleneck, so
    no link carries more than the bottleneck's rate. An estimate: a link below full load lasts
    longer, one of smaller packets (ACKs) fills sooner."""
    run = normalized.get("run") or {}
    record = run.get("record") or {}
    limit = record.get("max_samples", 1_000_000)
    duration = _duration_s(normalized)
    if record.get("queues") is False or not isinstance(limit, int) or not duration:
        return []
    links: list[tuple[str, dict[str, Any]]] = []
    cap: float | None = None
    db = normalized.get("dumbbell")
    if isinstance(db, dict):
        for part in ("bottleneck", "access"):
            if isinstance(db.get(part), dict):
                links.append((f"dumbbell.{part}", {"mtu": db.get("mtu", "1500B"), **db[part]}))
        try:
            cap = float(bits_per_s(db["bottleneck"]["rate"]))
        except (KeyError, TypeError, ValueError, ScenarioError):
            cap = None
    for i, link in enumerate(normalized.get("links") or []):
        if isinstance(link, dict):
            links.append((f"links[{i}] ({link.get('name', i)})", link))
    worst: dict[float, list[str]] = {}
    for where, link in links:
        try:
            rate = float(bits_per_s(link["rate"]))
            mtu = bytes_(str(link.get("mtu", "1500B")))
        except (KeyError, TypeError, ValueError, ScenarioError):
            continue  # a trace's rate varies; no estimate
        rate = min(rate, cap) if cap else rate
        per_s = 2 * rate / (8 * mtu)
        cut = limit / per_s
        if cut < duration:
            worst.setdefault(cut, []).append(where)
    notes = []
    for cut, wheres in sorted(worst.items()):
        need = int(limit * duration / cut * 1.1) + 1  # 10 % over the estimate
        notes.append(
            f"the queue series of {', '.join(wheres)} may be cut near t = {cut:.3g} s of {duration:g} s "
            f"at full load (run.record.max_samples = {limit}); to keep them whole, "
            f"--set run.record.max_samples={need} (about {need * _QUEUE_SAMPLE_BYTES / 1e6:.0f} MB per queue)"
        )
    return notes


def default_out(scenario: Path, sets: list[str], seed: int | None) -> Path:
    """out/<stem> (escaped by `_io.file_name`), with `-seed<N>` for --seed and `-set-<8 hex
    digits>` (SHA-256 of the overrides in order) for --set: each variant gets its own folder."""
    import hashlib

    from .._io import file_name

    name = file_name(scenario.stem)  # the one rule for names that become file names
    if seed is not None:
        name += f"-seed{seed}"
    if sets:
        name += "-set-" + hashlib.sha256("\n".join(sets).encode()).hexdigest()[:8]
    return Path("out") / name


def _print_phases(result: Any) -> None:
    """The per-phase fairness table, for runs whose congestion-controlled flows share a bottleneck."""
    from ..analysis import RESPONSIVE, bottleneck, format_phases, phases

    kinds = {f.get("kind") for f in result.totals.get("flows", {}).values()}
    if bottleneck(result) is None or not kinds & set(RESPONSIVE):
        return
    table = format_phases(phases(result))
    if table:
        print()
        print(table)


def _duration_s(normalized: dict[str, Any]) -> float | None:
    """The run's length in seconds, for the progress bar's total (None: a bar without one)."""
    run = normalized.get("run")
    value = run.get("duration") if isinstance(run, dict) else None
    try:
        return seconds(value, "run.duration") if isinstance(value, str) else None
    except ValueError:
        return None


class _ProgressBar:
    """A tqdm bar on stderr in simulated seconds; a no-op when disabled (tqdm not imported)."""

    def __init__(self, total_s: float | None, enabled: bool) -> None:
        self._total = total_s
        self._enabled = enabled
        self._bar: Any = None

    def __enter__(self) -> _ProgressBar:
        if self._enabled:
            from tqdm import tqdm

            fmt = (
                "{desc}: {percentage:3.0f}%|{bar}| {n:.2f}/{total:.2f} s "
                "[{elapsed}<{remaining}, {rate_fmt}{postfix}]"
                if self._total
                else "{desc}: {n:.2f} s [{elapsed}, {rate_fmt}{postfix}]"
            )
            # rate_fmt in unit "s" reads as simulated seconds per wall-clock second.
            self._bar = tqdm(
                total=self._total,
                desc="simulating",
                unit="s",
                bar_format=fmt,
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
            )
        return self

    def update(self, sim_time_s: float, events: int) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(f"{events:,} events", refresh=False)
            self._bar.update(max(0.0, sim_time_s - self._bar.n))

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()


class _StopOnInterrupt:
    """While active, the first SIGINT only sets `requested`; the second raises KeyboardInterrupt."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def __enter__(self) -> _StopOnInterrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        sys.stderr.write("\nquicksim: stopping at the next progress report (Ctrl-C again to abort)\n")

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        elif threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.default_int_handler)
