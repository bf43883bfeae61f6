"""The Linux kernel's TCP (iperf3 through the emulated dumbbell, `run.clock = "real"`) against
quicksim's TCP model on the same scenarios in virtual time: per-flow throughput, retransmitted
segments, queueing delay (mean, p95), cwnd over time and Jain's index over a grid of rates,
base RTTs, DropTail buffers and flow mixes (reno, cubic, bbr; issue #34). The kernel side needs
root, network namespaces, /dev/net/tun, iperf3, ss and tshark; without them the report says
which is missing and checks nothing."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from typing import Any

from ...validation import Check
from ..common import Context, Report, md_table, save_csv
from . import grid, measure, plots, runner, summary
from .grid import Point

NAME = "linux-vs-model"
TITLE = "the Linux kernel's TCP (iperf3, emulated dumbbells) vs the TCP model in virtual time"

#: iperf3's -t: 30 s in full mode (the issue's), 8 s in quick mode (each point <= 10 s of data).
FULL_DURATION_S = 30.0
QUICK_DURATION_S = 8.0
#: Kernel repetitions per point in full mode: at least REPS_MIN, more (up to REPS_MAX) while a
#: flow's throughput differs by more than SPREAD between them (the kernel side varies).
REPS_MIN, REPS_MAX, SPREAD = 2, 4, 0.05
#: Comma-separated shell patterns of point ids: run only those (`single-cubic-*,pair-*-10M-*`).
ENV_POINTS = "QUICKSIM_LINUX_VS_MODEL_POINTS"


def _say(line: str) -> None:
    print(f"linux-vs-model: {line}", file=sys.stderr, flush=True)


def _kernel_version() -> str:
    v = subprocess.run(["iperf3", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return f"Linux {platform.release()}, {v.strip() or 'iperf3 (version unknown)'}"


def _spread(kernel: list[dict[str, Any]], point: Point) -> float:
    """The largest relative spread (max - min) / mean of a flow's throughput over the trusted
    finished repetitions (0 with fewer than two)."""
    good = [k for k in kernel if "error" not in k and k["trusted"]]
    if len(good) < 2:
        return 0.0
    worst = 0.0
    for f in point.flows:
        v = [k[f]["mbps"] for k in good]
        mean = sum(v) / len(v)
        worst = max(worst, (max(v) - min(v)) / mean if mean else 0.0)
    return worst


def run_point(
    ctx: Context, point: Point, duration_s: float, build: str, resumed: list[str]
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """The point's repetitions: each a kernel run and the model's run paired with it. In full
    mode each run's capture and tables are removed once measured (`runner.trim`)."""
    base = ctx.out / "runs" / point.id
    reps: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    most = 1 if ctx.quick else REPS_MAX
    for k in range(1, most + 1):
        if not ctx.quick and k > REPS_MIN and _spread([r for r, _ in reps], point) <= SPREAD:
            break
        if (base / f"kernel-{k}" / "metrics.json").is_file():
            resumed.append(f"{point.id} rep {k}")  # measured by an earlier invocation
        kernel = runner.kernel_rep(point, duration_s, base / f"kernel-{k}")
        model = None
        if "error" not in kernel:
            try:
                model = runner.model_rep(point, duration_s, kernel, base / f"model-{k}", build)
            except (ValueError, RuntimeError) as e:  # ScenarioError, SimulationError, tshark's
                model = {"error": f"model run: {e}"}
                _say(f"{point.id} rep {k}: {model['error']}")
                reps.append((kernel, model))
                continue
            flows = ", ".join(
                f"{f} {kernel[f]['mbps']:.2f}/{model[f]['mbps']:.2f} Mbit/s" for f in point.flows
            )
            late = max(kernel["event_p99_us"], kernel["delivery_p99_us"])
            trust = "" if kernel["trusted"] else f" (p99 {late:.0f} µs: not trusted)"
            _say(f"{point.id} rep {k}: kernel/model {flows}{trust}")
        else:
            _say(f"{point.id} rep {k}: {kernel['error']}")
        reps.append((kernel, model))
        if not ctx.quick:
            runner.trim(base / f"kernel-{k}")
            runner.trim(base / f"model-{k}")
    return reps


def _skipped(ctx: Context, reason: str) -> Report:
    _say(f"skipped: {reason}")
    return Report(
        NAME,
        TITLE,
        SOURCE,
        [],
        sections=[f"## Skipped\n\nThe kernel side cannot run on this machine: {reason}."],
        explanation=EXPLANATION,
        quick=ctx.quick,
    )


SOURCE = (
    "the Linux kernel's TCP (reno, cubic, bbr) measured with iperf3 through quicksim's emulated "
    "dumbbells, against quicksim's TCP model on the same scenarios (issue #34)"
)


def run(ctx: Context) -> Report:
    """Every selected point: kernel runs, paired model runs, the tables, plots and checks."""
    import pandas as pd

    t = time.perf_counter()
    reason = runner.why_not()
    if reason is not None:
        return _skipped(ctx, reason)
    duration = QUICK_DURATION_S if ctx.quick else FULL_DURATION_S
    chosen = os.environ.get(ENV_POINTS)
    points = grid.select(grid.quick_grid() if ctx.quick else grid.full_grid(), chosen)
    if not points:
        raise ValueError(f"{ENV_POINTS}: {chosen!r} matches no point of the grid")
    have = runner.kernel_algorithms()
    notes = []
    missing = sorted({a for p in points for a in p.case.algos} - have)
    if missing:
        notes.append(
            f"Left out: the points with {', '.join(missing)} (not in this kernel's "
            "`tcp_available_congestion_control`)."
        )
        points = [p for p in points if not set(p.case.algos) - have]
    from ..common import _core_build

    build = _core_build()
    resumed: list[str] = []
    rows, runs = [], []
    for p in points:
        reps = run_point(ctx, p, duration, build, resumed)
        rows.append(summary.point_row(p, reps))
        runs += _run_rows(p, reps)
    table = pd.DataFrame(rows)
    save_csv(table, ctx.out / "points.csv")
    save_csv(pd.DataFrame(runs), ctx.out / "runs.csv")
    figures = plots.write_all(ctx.out, table, points, pd.DataFrame(runs), duration, ctx.quick)
    g = summary.goal(table)
    return Report(
        NAME,
        TITLE,
        SOURCE,
        _checks(ctx, table, pd.DataFrame(runs), g),
        figures=figures,
        csvs=[
            ("points.csv", "per point: the kernel's and the model's means, differences, grade"),
            ("runs.csv", "per repetition and side: throughput, retransmissions, queueing, timing"),
        ],
        explanation=EXPLANATION,
        sections=[
            _setup(ctx, points, duration, chosen, notes, resumed),
            _goal_section(g, ctx.quick),
            "## Per point\n\n" + summary.points_table(table),
            "## Per flow\n\n" + summary.flows_table(table, points),
        ],
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


def _run_rows(point: Point, reps: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> list[dict[str, Any]]:
    """runs.csv: one row per repetition, side and flow."""
    out = []
    for k, (kernel, model) in enumerate(reps, 1):
        for side, m in (("kernel", kernel), ("model", model)):
            if m is None or "error" in m:
                out.append({"point": point.id, "rep": k, "side": side, "error": (m or {}).get("error", "")})
                continue
            for f in point.flows:
                row = {"point": point.id, "rep": k, "side": side, "flow": f, "error": ""}
                row.update({key: m[key] for key in ("queue_mean_ms", "queue_p95_ms", "drops")})
                row.update({key: v for key, v in m[f].items()})
                if side == "kernel":
                    row.update({key: m[key] for key in ("event_p99_us", "delivery_p99_us", "trusted")})
                out.append(row)
    return out


def _checks(ctx: Context, table: Any, runs: Any, g: dict[str, Any]) -> list[Check]:
    """The harness's own checks (every mode) and the goal (full mode)."""
    kernel = runs[runs["side"] == "kernel"]
    model = runs[runs["side"] == "model"]
    kernel_ok = kernel[kernel["error"] == ""]
    n_kernel = len({(r.point, r.rep) for r in kernel.itertuples()})
    n_ok = len({(r.point, r.rep) for r in kernel_ok.itertuples()})
    checks = [
        Check(
            "kernel runs that finished",
            n_ok,
            n_kernel,
            0,
            "runs",
            kind="exact",
            note="iperf3 exited 0, its JSON and the capture read back",
        ),
    ]
    if len(kernel_ok):
        checks += [
            Check(
                "largest packet the kernel sent",
                float(kernel_ok["max_ip_len"].max()),
                grid.MTU,
                0,
                "B",
                kind="max",
                note="no segmentation offload on the TUN devices: segments are MSS-sized",
            ),
            # The capture's count is the kernel's tcpi_total_retrans where tshark sees every
            # transmission; 2 % leaves room for a SYN or control-connection retransmission,
            # which the kernel counts and the data connection's capture does not.
            Check(
                "kernel retransmissions: capture vs iperf3",
                float(kernel_ok["retransmits"].sum()),
                float(kernel_ok["iperf3_retransmits"].sum()),
                0.02,
                "segments",
                note="tshark's retransmission/out-of-order flags on the senders' links vs tcpi_total_retrans",
            ),
        ]
    if len(model) and "retransmits" in model:
        m = model[model["error"] == ""]
        checks.append(
            Check(
                "model retransmissions: capture vs the model's counter",
                float(m["retransmits"].sum()),
                float(m["model_retransmits"].sum()),
                0,
                "segments",
                kind="exact",
                note="the same tshark analysis on the model's capture",
            )
        )
    if not ctx.quick:
        checks += [
            Check(
                "trusted points within 5 % (throughput, queueing) and 25 % (retransmissions)",
                g["tight_share"],
                measure.GOAL_SHARE,
                0,
                "",
                kind="min",
                note=f"{g['tight']} of {g['graded']} trusted points",
            ),
            Check(
                "trusted points within 10 % and 50 %",
                (g["tight"] + g["loose"]) / g["graded"] if g["graded"] else float("nan"),
                1.0,
                0,
                "",
                kind="min",
                note="the rest of the goal",
            ),
        ]
    return checks


def _setup(
    ctx: Context,
    points: list[Point],
    duration: float,
    chosen: str | None,
    notes: list[str],
    resumed: list[str],
) -> str:
    tcp = grid.MODEL_TCP or "the defaults (no `profile`)"
    lines = [
        "## Setup",
        "",
        f"- Kernel: {_kernel_version()}; the model's TCP settings: {tcp}.",
        f"- {len(points)} points"
        + (f" (`{ENV_POINTS}={chosen}`)" if chosen else "")
        + f"; iperf3 `-t {duration:g}`; "
        + (
            "one kernel run per point."
            if ctx.quick
            else f"{REPS_MIN} to {REPS_MAX} kernel runs per point (more while a flow's throughput "
            f"varies by more than {SPREAD:.0%}), each with its own paired model run."
        ),
        f"- A kernel run is trusted when its p99 timing error (events and deliveries) is at most "
        f"{runner.TRUST_P99_US:.0f} µs; the points without a trusted run are shown, not graded.",
        *[f"- {n}" for n in notes],
    ]
    if resumed:
        lines.append(
            f"- Resumed: {len(resumed)} kernel runs were measured by an earlier invocation into the "
            "same folder (their metrics reused); the wall time above is this invocation's."
        )
    return "\n".join(lines)


def _goal_section(g: dict[str, Any], quick: bool) -> str:
    head = "## The goal" + (" (quick mode: 8 s runs, shown, not checked)" if quick else "")
    verdict = "met" if g["met"] else "not met"
    text = (
        f"Within 5 % on each flow's throughput and on the mean queueing delay and within 25 % on "
        f"retransmitted segments (or {measure.RETRANS_SLACK} segments) at ≥ {measure.GOAL_SHARE:.0%} "
        f"of the trusted points, within 10 % / 50 % at the rest: **{verdict}**."
    )
    rows = [[g["graded"], g["tight"], g["loose"], g["outside"], g["untrusted"], g["failed"]]]
    return f"{head}\n\n{text}\n\n" + md_table(
        ["graded points", "within 5 %/25 %", "within 10 %/50 %", "outside", "untrusted", "failed"], rows
    )


EXPLANATION = """
**Each point, twice.** The kernel side is an emulated dumbbell (`run.clock = "real"`,
docs/emulation.md): one sender/receiver pair per flow, the bottleneck at the point's rate with
half of flow 1's base RTT each way and a DropTail queue of buffer x BDP packets (BDP = rate x
flow 1's base RTT / 1500 B, rounded, at least 1), 1 Gbit/s access links (flow 2 of the
`pair-rtt` cases has twice the base RTT through its access link). Each flow is iperf3 (`iperf3
-s -1 -J` in the receiver's namespace, `iperf3 -c {dst} -t T -C ALGO -J` in the sender's)
started at 0.5 s under a sampler that runs `ss -tin` every 0.1 s beside it; in both namespaces a
route to the peer (`ip route replace PEER dev qs0 congctl ALGO`) makes ALGO the connections'
algorithm from the start, as on a host whose default it is (with `-C` alone a cubic socket
first set up by this machine's default `bbr` would stay paced). The TUN devices have
no segmentation offloads, so the kernel's segments are MSS-sized (checked: the largest packet
in every capture). The model side is the same dumbbell in virtual time with `kind = "tcp"`
flows and the kernel's algorithm (reno -> `newreno`, cubic -> `cubic`, bbr -> `bbr1`, Linux's
`tcp_bbr.c` being BBRv1), each flow connecting when the kernel's data connection sent its SYN
and sending from the kernel's first data segment for T seconds: the model runs once per kernel
run, with that run's start times (iperf3's control connection and a Python sampler's start make
them differ by up to ~0.2 s between flows and runs).

**What is compared.** Throughput: bytes delivered to the receiving application over T (the
kernel's from iperf3's receiver, the model's from `delivered_bytes`). Queueing delay: the mean
and p95 of every packet's wait in the bottleneck queue (quicksim's per-packet sojourn,
`run.record.delays`, the same code for both sides). Retransmitted segments: tshark's TCP
analysis of the senders' access links, before the bottleneck (retransmission, fast
retransmission and out-of-order flags: on a sender's own link nothing is reordered, and the sum
equals iperf3's `tcpi_total_retrans`, checked), the same analysis on both captures. cwnd: `ss`'s
`cwnd` x `mss` of iperf3's data connection against the model's `conn` table, time-weighted over
the T seconds. Jain's index over the flows' throughputs.

**Timing.** The emulator measures its own error (`totals.realtime`); a kernel run whose p99
(events or deliveries) exceeds 1 ms did not keep the links' rates and delays and is not
compared. On a loaded machine that can be most runs: the full grid is meant for a quiet one.
"""
