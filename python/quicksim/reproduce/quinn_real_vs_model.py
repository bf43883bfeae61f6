"""The quinn-proto stack as a real program (`quinn-peer`, UDP sockets, wall clock) through the
emulated dumbbell (`run.clock = "real"`, `kind = "program"` flows) against the same stack as a
`kind = "quinn"` flow in virtual time on the same scenario (issue #34). The QUIC code, its
settings and the application are the same on both sides, so the difference measures the
emulator (timing, the hosts' kernels and sockets, the program's scheduling) and nothing of a
protocol model. Needs root, network namespaces, /dev/net/tun and the `quinn-peer` binary (built
with cargo if missing); without them the report says which is missing and checks nothing."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..validation import Check
from .common import Context, Report, md_table, save_csv

NAME = "quinn-real-vs-model"
TITLE = "quinn-proto as a real program through the emulator vs the same stack in virtual time"
SOURCE = (
    'the quinn-proto 0.11.19 stack of `kind = "quinn"` flows, run as a real client and server '
    "(`quinn-peer`) over UDP through quicksim's emulated dumbbells and in virtual time (issue #34)"
)

#: The goal: the two throughputs within 3 % at the trusted points (same code on both sides).
GOAL = 0.03
#: A real run whose p99 timing error (events or deliveries, `totals.realtime`) is above this is
#: shown but not graded: the emulated network did not keep its rates and delays (as
#: linux-vs-model's TRUST_P99_US).
TRUST_P99_US = 1000.0
#: The client's -t: 20 s in full mode, 8 s in quick mode.
FULL_DURATION_S = 20.0
QUICK_DURATION_S = 8.0
#: Real runs per point in full mode (quick: one).
FULL_REPS = 2
#: The client starts here (the server listens from the start of the run).
START_S = 0.5
#: How long a real run may take beyond the client's T (its start, draining, the server's end).
SLACK_S = 5.0
MTU = 1500
PORT = 4433
SEED = 1
BOTTLENECK = "bottleneck:router1->router2"
#: The build command for the program, and where it lands (the test profile: the release profile's
#: fat LTO takes many minutes). `QUICKSIM_QUINN_PEER` names another binary.
BUILD = ["cargo", "build", "--profile", "test", "-p", "quicksim-quinn", "--bin", "quinn-peer"]
ENV_BINARY = "QUICKSIM_QUINN_PEER"


@dataclass(frozen=True)
class Point:
    """One dumbbell: the bottleneck's rate, the base RTT (half on the bottleneck each way), a
    DropTail buffer of one BDP (1500 B packets) and quinn's congestion controller."""

    rate_mbps: float
    rtt_ms: float
    cc: str

    @property
    def id(self) -> str:
        return f"{self.cc}-{self.rate_mbps:g}M-{self.rtt_ms:g}ms"

    @property
    def buffer_packets(self) -> int:
        return max(1, round(self.rate_mbps * 1e6 * self.rtt_ms / 1e3 / 8 / MTU))

    @property
    def quinn(self) -> dict[str, Any]:
        """The quinn settings of both sides (the scenario's `quinn` table; the program's --config)."""
        return {"cc": self.cc}


def full_grid() -> list[Point]:
    return [Point(r, t, cc) for cc in ("newreno", "cubic") for r in (10.0, 20.0) for t in (20.0, 50.0)]


def quick_grid() -> list[Point]:
    return [Point(10.0, 20.0, "newreno"), Point(20.0, 50.0, "cubic")]


def _root() -> Path:
    return Path(__file__).resolve().parents[3]


def binary() -> tuple[Path | None, str]:
    """The quinn-peer program (built by cargo from the checkout if missing), or None and why."""
    env = os.environ.get(ENV_BINARY)
    if env:
        p = Path(env)
        return (p, "") if p.is_file() else (None, f"{ENV_BINARY}={env}: no such file")
    # `cargo test --workspace` (CI, `scripts/test`) builds it into release/ or debug/: the newest.
    built = [p for p in (_root() / "target" / d / "quinn-peer" for d in ("release", "debug")) if p.is_file()]
    if built:
        return max(built, key=lambda p: p.stat().st_mtime), ""
    path = _root() / "target" / "debug" / "quinn-peer"
    if shutil.which("cargo") is None or not (_root() / "Cargo.toml").is_file():
        return None, f"no {path} and no cargo with the sources to build it ({' '.join(BUILD)})"
    _say(f"building the program: {' '.join(BUILD)}")
    r = subprocess.run(BUILD, cwd=_root(), capture_output=True, text=True)
    if r.returncode != 0 or not path.is_file():
        tail = (r.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"`{' '.join(BUILD)}` failed: {tail}"
    return path, ""


def why_not() -> str | None:
    """Why the real side cannot run here (one line), or None."""
    if os.geteuid() != 0:
        return "not root: network namespaces and TUN devices need root"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun (the tun kernel module)"
    if shutil.which("ip") is None:
        return "no `ip` (iproute2)"
    probe = f"qs-probe-qrvm-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "network namespaces cannot be made here"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def _say(line: str) -> None:
    print(f"{NAME}: {line}", file=sys.stderr, flush=True)


def _dumbbell(p: Point) -> dict[str, Any]:
    return {
        "pairs": 1,
        "mtu": f"{MTU}B",
        "bottleneck": {
            "rate": f"{p.rate_mbps:g}Mbps",
            "delay": f"{p.rtt_ms / 2:g}ms",
            "queue": {"packets": p.buffer_packets},
        },
        "access": {"rate": "1Gbps", "delay": "0s"},
    }


def _record(duration_s: float) -> dict[str, Any]:
    return {
        "duration": f"{duration_s:.3f}s",
        "record_interval": "0.1s",
        "record": {"delays": True, "queues": ["bottleneck"]},
    }


def commands(prog: Path, p: Point, duration_s: float) -> tuple[str, str]:
    """The server's and the client's command lines ({dst}: the emulator fills it in)."""
    cfg = shlex.quote(json.dumps(p.quinn, separators=(",", ":")))
    common = f"--config {cfg} --seed {SEED}"
    server = f"{shlex.quote(str(prog))} server --listen {{dst}}:{PORT} {common}"
    client = f"{shlex.quote(str(prog))} client --connect {{dst}}:{PORT} -t {duration_s:g} {common}"
    return server, client


def real_scenario(prog: Path, p: Point, duration_s: float) -> dict[str, Any]:
    server, client = commands(prog, p, duration_s)
    flow = {
        "name": "f1",
        "kind": "program",
        "src": "sender1",
        "dst": "receiver1",
        "start": f"{START_S:g}s",
        "server": server,
        "client": client,
    }
    run = {**_record(START_S + duration_s + SLACK_S), "clock": "real"}
    return {"name": f"qrvm-real-{p.id}", "run": run, "dumbbell": _dumbbell(p), "flows": [flow]}


def model_scenario(p: Point, duration_s: float, start_s: float) -> dict[str, Any]:
    """The same dumbbell in virtual time: a quinn flow connecting when the real client started,
    saturated for T, then closed at once (`stop_mode = "send"`: the program's close)."""
    flow = {
        "name": "f1",
        "kind": "quinn",
        "src": "sender1",
        "dst": "receiver1",
        "start": f"{start_s:.6f}s",
        "stop": f"{start_s + duration_s:.6f}s",
        "stop_mode": "send",
        "quinn": p.quinn,
    }
    run = {**_record(start_s + duration_s + 1.0), "seed": SEED}
    return {"name": f"qrvm-model-{p.id}", "run": run, "dumbbell": _dumbbell(p), "flows": [flow]}


def _p99(block: dict[str, Any]) -> float:
    if not block.get("count"):
        return math.nan
    v = block.get("p99_us")
    return math.inf if v is None else float(v)


def _queue(totals: dict[str, Any]) -> dict[str, float]:
    q = totals["queues"][BOTTLENECK]
    return {
        "queue_mean_ms": float(q["queueing_mean_s"]) * 1e3,
        "queue_p95_ms": float(q["queueing_p95_s"]) * 1e3,
        "drops": float(q["dropped_packets"]),
    }


def _json_line(path: Path, what: str) -> dict[str, Any]:
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("{")]
    if not lines:
        raise RuntimeError(f"{what}: no JSON report in {path}")
    out: dict[str, Any] = json.loads(lines[-1])
    return out


def real_run(prog: Path, p: Point, duration_s: float, folder: Path) -> dict[str, Any]:
    """One real run of `p` into `folder`: its metrics, or {"error": line}."""
    from .. import api
    from ..errors import ScenarioError, SimulationError

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    try:
        r = api.run(real_scenario(prog, p, duration_s), out=folder)
    except (ScenarioError, SimulationError) as e:
        return {"error": str(e)}
    r.save(folder)
    try:
        server = _json_line(folder / "f1.server.stdout", "the server")
        client = _json_line(folder / "f1.client.stdout", "the client")
    except (OSError, ValueError, RuntimeError) as e:
        return {"error": str(e)}
    rt = r.totals.get("realtime", {})
    ev, dl = _p99(rt.get("event_lateness", {})), _p99(rt.get("delivery_lateness", {}))
    # When the client was started, in run time: the model's flow connects then.
    start = float(r.totals.get("programs", {}).get("f1", {}).get("client", {}).get("started_s", START_S))
    q = client.get("quinn") or {}
    timing = [
        (side.get("timing") or {}).get(k, {}).get("p99_us", math.nan)
        for side in (client, server)
        for k in ("timer_lateness", "receive_handoff")
    ]
    return {
        "mbps": int(server["bytes_delivered"]) * 8 / duration_s / 1e6,
        "packets_lost": int(q.get("packets_lost", 0)),
        "congestion_events": int(q.get("congestion_events", 0)),
        "packets_sent": int(q.get("packets_sent", 0)),
        "srtt_ms": float(q.get("smoothed_rtt_s", math.nan)) * 1e3,
        "min_rtt_ms": float(q.get("min_rtt_s", math.nan)) * 1e3,
        "program_p99_us": float(max(timing)),
        "handshake_ms": float(client.get("handshake_s") or math.nan) * 1e3,
        "server_ended_by": server.get("ended_by", ""),
        "start_s": start,
        "event_p99_us": ev,
        "delivery_p99_us": dl,
        "trusted": bool(max(ev, dl) <= TRUST_P99_US),
        **_queue(r.totals),
    }


def model_run(p: Point, duration_s: float, start_s: float) -> dict[str, Any]:
    from .. import api

    r = api.run(model_scenario(p, duration_s, start_s))
    fl = r.totals["flows"]["f1"]
    q = fl["quinn"]
    return {
        "mbps": int(fl["delivered_bytes"]) * 8 / duration_s / 1e6,
        "packets_lost": int(q["packets_lost"]),
        "congestion_events": int(q["congestion_events"]),
        "packets_sent": int(q["packets_sent"]),
        "srtt_ms": float(q["smoothed_rtt_s"]) * 1e3,
        "min_rtt_ms": float(q["min_rtt_s"]) * 1e3,
        **_queue(r.totals),
    }


def _diff(real: float, model: float) -> float:
    return real / model - 1.0 if model else math.nan


def run_point(ctx: Context, prog: Path, p: Point, duration_s: float) -> list[dict[str, Any]]:
    """The point's repetitions: each a real run and the model's run started when its client did."""
    rows = []
    for k in range(1, (1 if ctx.quick else FULL_REPS) + 1):
        real = real_run(prog, p, duration_s, ctx.out / "runs" / p.id / f"real-{k}")
        row: dict[str, Any] = {"point": p.id, "rep": k, "rate_mbps": p.rate_mbps, "rtt_ms": p.rtt_ms}
        row.update({"cc": p.cc, "buffer_packets": p.buffer_packets, "error": real.get("error", "")})
        if row["error"]:
            _say(f"{p.id} rep {k}: {row['error']}")
            rows.append(row)
            continue
        model = model_run(p, duration_s, real["start_s"])
        row.update({f"real_{key}": v for key, v in real.items()})
        row.update({f"model_{key}": v for key, v in model.items()})
        row["mbps_diff"] = _diff(real["mbps"], model["mbps"])
        row["queue_mean_diff"] = _diff(real["queue_mean_ms"], model["queue_mean_ms"])
        row["lost_diff"] = _diff(real["packets_lost"], model["packets_lost"])
        late = max(real["event_p99_us"], real["delivery_p99_us"])
        trust = "" if real["trusted"] else " (not trusted)"
        _say(
            f"{p.id} rep {k}: real/model {real['mbps']:.3f}/{model['mbps']:.3f} Mbit/s "
            f"({row['mbps_diff']:+.1%}), lost {real['packets_lost']}/{model['packets_lost']}, "
            f"p99 lateness {late:.0f} µs{trust}"
        )
        rows.append(row)
    return rows


def _skipped(ctx: Context, reason: str) -> Report:
    _say(f"skipped: {reason}")
    return Report(
        NAME,
        TITLE,
        SOURCE,
        [],
        sections=[f"## Skipped\n\nThe real side cannot run on this machine: {reason}."],
        explanation=EXPLANATION,
        quick=ctx.quick,
    )


def _pct(v: float) -> str:
    return "n/a" if not math.isfinite(v) else f"{v:+.1%}"


def _table(runs: Any) -> str:
    rows = []
    for r in runs.to_dict("records"):
        if r.get("error"):
            rows.append([r["point"], r["rep"], "failed: " + str(r["error"])] + [""] * 9)
            continue
        rows.append(
            [
                r["point"],
                r["rep"],
                f"{r['real_mbps']:.3f} / {r['model_mbps']:.3f}",
                _pct(r["mbps_diff"]),
                f"{r['real_packets_lost']} / {r['model_packets_lost']}",
                f"{r['real_congestion_events']} / {r['model_congestion_events']}",
                f"{r['real_queue_mean_ms']:.2f} / {r['model_queue_mean_ms']:.2f}",
                f"{r['real_queue_p95_ms']:.2f} / {r['model_queue_p95_ms']:.2f}",
                f"{r['real_min_rtt_ms']:.2f} / {r['model_min_rtt_ms']:.2f}",
                f"{r['real_event_p99_us']:.0f} / {r['real_delivery_p99_us']:.0f}",
                f"{r['real_program_p99_us']:.0f}",
                "yes" if r["real_trusted"] else "**no**",
            ]
        )
    head = [
        "point",
        "rep",
        "throughput real / model (Mbit/s)",
        "difference",
        "packets lost",
        "congestion events",
        "queueing mean (ms)",
        "queueing p95 (ms)",
        "min RTT (ms)",
        "emulator p99 lateness events / deliveries (µs)",
        "programs' p99 lateness (µs)",
        "trusted",
    ]
    return md_table(head, rows)


def points_table(runs: Any) -> Any:
    """Per point: the mean throughput of its trusted real runs and of their model runs, the
    difference, and whether it is within the goal (`untrusted`: no trusted run)."""
    import pandas as pd

    rows = []
    for point, g in runs.groupby("point", sort=False):
        ok = g[g["error"] == ""]
        t = ok[ok["real_trusted"].astype(bool)] if len(ok) else ok
        row: dict[str, Any] = {"point": point, "runs": len(g), "trusted": len(t)}
        if len(t):
            real, model = float(t["real_mbps"].mean()), float(t["model_mbps"].mean())
            row.update({"real_mbps": real, "model_mbps": model, "mbps_diff": _diff(real, model)})
            row["grade"] = "within" if abs(row["mbps_diff"]) <= GOAL else "outside"
        else:
            row["grade"] = "failed" if not len(ok) else "untrusted"
        rows.append(row)
    return pd.DataFrame(rows)


def _points_md(points: Any) -> str:
    rows = [
        [
            r["point"],
            f"{r['trusted']} of {r['runs']}",
            f"{r['real_mbps']:.3f} / {r['model_mbps']:.3f}" if r["trusted"] else "",
            _pct(r["mbps_diff"]) if r["trusted"] else "",
            r["grade"],
        ]
        for r in points.to_dict("records")
    ]
    return md_table(
        ["point", "trusted runs", "throughput real / model (Mbit/s)", "difference", "grade"], rows
    )


def _checks(ctx: Context, runs: Any, points: Any) -> list[Check]:
    """The harness's checks (every mode) and the goal (full mode; quick mode shows it)."""
    ok = runs[runs["error"] == ""]
    checks = [
        Check(
            "real runs that finished",
            len(ok),
            len(runs),
            0,
            "runs",
            kind="exact",
            note="both programs exited 0 and printed their reports",
        )
    ]
    if len(ok):
        # Stream bytes cannot exceed the UDP payload's share of the bottleneck's rate.
        share = float((ok["real_mbps"] / ok["rate_mbps"]).max())
        checks.append(
            Check(
                "largest real throughput / bottleneck rate",
                share,
                (MTU - 28) / MTU,
                0,
                "",
                kind="max",
                note="at most the UDP payload's share: the emulated link kept its rate",
            )
        )
    graded = points[points["grade"].isin(["within", "outside"])]
    if not ctx.quick:
        checks.append(
            Check(
                f"trusted points within {GOAL:.0%} (throughput)",
                float((graded["grade"] == "within").mean()) if len(graded) else math.nan,
                1.0,
                0,
                "",
                kind="min",
                note=f"{int((graded['grade'] == 'within').sum())} of {len(graded)} graded points; "
                f"{int((points['grade'] == 'untrusted').sum())} untrusted",
            )
        )
    return checks


def run(ctx: Context) -> Report:
    """Every point: real runs, the paired model runs, the tables and the checks."""
    import pandas as pd

    t = time.perf_counter()
    reason = why_not()
    if reason is not None:
        return _skipped(ctx, reason)
    prog, why = binary()
    if prog is None:
        return _skipped(ctx, why)
    duration = QUICK_DURATION_S if ctx.quick else FULL_DURATION_S
    points = quick_grid() if ctx.quick else full_grid()
    runs = pd.DataFrame([r for p in points for r in run_point(ctx, prog, p, duration)])
    table = points_table(runs)
    save_csv(runs, ctx.out / "runs.csv")
    save_csv(table, ctx.out / "points.csv")
    head = f"## Per point (the goal: within {GOAL:.0%}" + (
        ", shown, not checked in quick mode)" if ctx.quick else ")"
    )
    return Report(
        NAME,
        TITLE,
        SOURCE,
        _checks(ctx, runs, table),
        csvs=[
            ("points.csv", "per point: the trusted runs' mean throughput on both sides, the difference"),
            ("runs.csv", "per run: both sides' throughput, losses, queueing delay, RTT, timing errors"),
        ],
        explanation=EXPLANATION,
        sections=[
            _setup(ctx, points, duration, prog),
            f"{head}\n\n" + _points_md(table),
            "## Per run\n\n" + _table(runs),
        ],
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


def _short(command: str) -> str:
    """A command with the checkout's path left out (the program's path relative to it)."""
    return command.replace(str(_root()) + os.sep, "")


def _setup(ctx: Context, points: list[Point], duration: float, prog: Path) -> str:
    server, client = commands(prog, points[0], duration)
    return "\n".join(
        [
            "## Setup",
            "",
            f"- {len(points)} points; the client's `-t {duration:g}`; "
            + (
                "one real run per point."
                if ctx.quick
                else f"{FULL_REPS} real runs per point, each with its own model run."
            ),
            f"- The programs (point {points[0].id}): `{_short(server)}` and `{_short(client)}`.",
            f"- A real run is trusted when its p99 timing error (events and deliveries) is at most "
            f"{TRUST_P99_US:.0f} µs; the others are shown, not graded.",
            f"- The machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end.",
        ]
    )


EXPLANATION = """
**The same stack twice.** `quinn-peer` (`crates/quicksim-quinn/src/bin/quinn_peer.rs`) drives the
`QuinnEndpoint` that `kind = "quinn"` flows use (quinn-proto 0.11.19, rustls with the run's seed)
in real time: simulated time is the wall time since the program started, datagrams cross a
real UDP socket. The server accepts one connection and counts the stream bytes delivered to
it; the client is the model's saturated application (it writes whatever quinn accepts, on
`Established` and `SendQueueLow`, to stream 0) and closes the connection T seconds after its
start (quinn's CONNECTION_CLOSE, the unsent data dropped: a flow's `stop_mode = "send"`). Both
get the point's `quinn` table (`--config`) and the same seed.

**The same network twice.** A dumbbell: the bottleneck at the point's rate with half the base
RTT each way and a DropTail queue of one BDP (1500 B packets), 1 Gbit/s access links. The real
run starts the server with the run and the client at 0.5 s (`kind = "program"`,
`run.clock = "real"`); the model's run is the same scenario with a `kind = "quinn"` flow that
starts when the real client was started (`totals.programs`) and stops T later.

**What is compared.** Throughput: stream bytes delivered to the server's application over T
(the program's report; the model's `delivered_bytes`). Packets declared lost and congestion
events: quinn's own counters on the client. Queueing delay: the mean and p95 of every packet's
wait in the bottleneck queue (`run.record.delays`, the same code for both sides). Where the
difference is larger than the goal (3 %), what remains different is the emulator: the time a
datagram spends in the two hosts' kernels and in the program's receive thread (the model
delivers in zero time), the program's wake-ups (quinn's pacing timer is kept to the wall
clock's precision on a loaded machine, not exactly), and the emulator's own lateness.

**Why the real side is a little lower.** Every real run delivered less than its model run
(the committed full run: -0.0 to -1.5 %, points -0.1 to -1.3 %), and its bottleneck queue was a
little shorter (mean -1 to -8 %). Two things the model does not have slow the real sender:
the hosts' kernels (TUN devices, UDP sockets) and the program's reader thread add ~0.1-0.2 ms
to every round trip (the minimum RTT, real against model: +0.1 to +0.9 ms), and the programs,
running with normal scheduling on a loaded machine, handle quinn's timers late (p99 1-9 ms;
pacing is a timer). Both only cost throughput while the queue is empty: a late packet then
leaves the link idle, while a standing queue hides it. The queue runs empty after a window
reduction, so the gap is largest where reductions are deepest and the buffer shortest in time:
NewReno (halving) at 20 ms (-1.0 to -1.5 %), against -0.1 to -1.1 % for CUBIC (x 0.7) and
-0.3 to -0.6 % for NewReno at 50 ms. The losses differ by at most 13 packets of 77 to 259
(the same code sees the same queue, a little less often full); short runs (quick mode's 8 s)
vary more (-0.3 to -3.8 % here), a few late wake-ups weighing more in a shorter run.

**Timing.** The emulator measures its own error (`totals.realtime`); a run whose p99 (events or
deliveries) exceeds 1 ms is not graded. The programs measure theirs (`timing` in their
reports): how late each of quinn's timers (pacing, loss detection, delayed ACK) was handled,
and how long a datagram waited between the reader thread's `recv` and the endpoint. The
emulator's loop runs under SCHED_FIFO; the programs run with normal scheduling, as any program
through the emulator does, so on a loaded machine their error can be far larger than the
emulator's; the column "programs' p99 lateness" shows the larger of the four p99s (client and
server, timers and hand-off). It is shown, not used to grade.
"""
