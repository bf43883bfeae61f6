"""Running linux-vs-model's two sides of a grid point and keeping what they measured: the
kernel's run (real time, iperf3) and the model's (virtual time, started when the kernel's flows
started), each in a folder of its own with `metrics.json` written last, so an interrupted
reproduction resumes where it stopped. Also: what this machine needs for the kernel side."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from . import grid, measure
from .grid import Point, Timeline

#: A kernel run whose p99 timing error (events or deliveries, `totals.realtime`) is above this
#: is not trusted: the emulated network did not keep its rates and delays.
TRUST_P99_US = 1000.0
#: Tools the kernel side runs (besides root, network namespaces and /dev/net/tun).
TOOLS = ("ip", "iperf3", "ss", "tshark")
#: Bumped when what `metrics.json` holds changes, so older files are measured again.
METRICS_FORMAT = 1


def why_not() -> str | None:
    """Why the kernel side cannot run here (one line), or None."""
    if os.geteuid() != 0:
        return "not root: network namespaces and TUN devices need root"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun (the tun kernel module)"
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if missing:
        return f"missing {', '.join(missing)} (apt-get install iproute2 iperf3 tshark)"
    probe = f"qs-probe-lvm-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "network namespaces cannot be made here"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


def kernel_algorithms() -> set[str]:
    """The kernel's congestion control modules (`tcp_available_congestion_control`)."""
    try:
        text = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text(encoding="utf-8")
    except OSError:
        return set()
    return set(text.split())


def tshark(capture: Path) -> str:
    """tshark's TCP rows of `capture` (measure.TSHARK_FIELDS)."""
    cmd = ["tshark", "-n", "-r", str(capture), "-Y", "tcp", "-T", "fields", "-E", "occurrence=f"]
    for f in measure.TSHARK_FIELDS:
        cmd += ["-e", f]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"tshark on {capture} failed: {r.stderr.strip().splitlines()[-1:]}")
    return r.stdout


def _senders(totals: dict[str, Any], point: Point) -> dict[str, str]:
    nodes = totals["capture"]["nodes"]
    return {f: nodes[f"sender{i + 1}"] for i, f in enumerate(point.flows)}


def _p99(block: dict[str, Any]) -> float:
    """A lateness block's p99 in µs (beyond the 100 ms its histogram holds: infinity)."""
    if not block.get("count"):
        return math.nan
    p = block.get("p99_us")
    return math.inf if p is None else float(p)


def _queues(totals: dict[str, Any], point: Point) -> dict[str, Any]:
    q = totals["queues"][grid.BOTTLENECK]
    out = {
        "queue_mean_ms": float(q["queueing_mean_s"]) * 1e3,
        "queue_p95_ms": float(q["queueing_p95_s"]) * 1e3,
        "drops": int(q["dropped_packets"]),
    }
    for f in point.flows:
        fl = totals["flows"][f]
        out[f"{f}.queue_mean_ms"] = float(fl.get("queueing_mean_s") or math.nan) * 1e3
        out[f"{f}.queue_p95_ms"] = float(fl.get("queueing_p95_s") or math.nan) * 1e3
    return out


def _mean_cwnd(t: Any, cwnd: Any, t0: float, t1: float) -> float:
    """Time-weighted mean of a sample-and-hold cwnd series over [t0, t1)."""
    from ...metrics_quantiles import held_steps, weighted_stat

    v, w = held_steps(t, cwnd, t0, t1)
    return weighted_stat(v, w, "mean")


def _write(folder: Path, metrics: dict[str, Any]) -> dict[str, Any]:
    from ..._io import atomic_write_text

    atomic_write_text(folder / "metrics.json", json.dumps(metrics, indent=1, sort_keys=True) + "\n")
    return metrics


def _read(folder: Path) -> dict[str, Any] | None:
    try:
        m: dict[str, Any] = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return m if m.get("format") == METRICS_FORMAT else None


def kernel_rep(point: Point, duration_s: float, folder: Path) -> dict[str, Any]:
    """One kernel run of `point` into `folder` (reused if it finished before): its metrics, or
    {"error": line} if it failed."""
    done = _read(folder)
    if done is not None:
        return done
    from ... import api
    from ...errors import ScenarioError, SimulationError

    folder.mkdir(parents=True, exist_ok=True)
    try:
        r = api.run(grid.kernel_scenario(point, duration_s, folder), out=folder)
    except (ScenarioError, SimulationError) as e:
        return {"format": METRICS_FORMAT, "error": str(e)}
    r.save(folder)
    try:
        return _write(folder, kernel_metrics(point, duration_s, folder, r.totals))
    except (ValueError, RuntimeError, OSError, KeyError) as e:  # measured again on the next run
        return {"format": METRICS_FORMAT, "error": f"{folder}: {e}"}


def kernel_metrics(point: Point, duration_s: float, folder: Path, totals: dict[str, Any]) -> dict[str, Any]:
    """What a finished kernel run in `folder` measured; also writes its cwnd series (cwnd.csv:
    t_s in run time, flow, cwnd_bytes) from the `ss` samples."""
    import pandas as pd

    rt = totals.get("realtime", {})
    late = max(_p99(rt.get("event_lateness", {})), _p99(rt.get("delivery_lateness", {})))
    m: dict[str, Any] = {
        "format": METRICS_FORMAT,
        "event_p99_us": _p99(rt.get("event_lateness", {})),
        "delivery_p99_us": _p99(rt.get("delivery_lateness", {})),
        "trusted": bool(late <= TRUST_P99_US),
        **_queues(totals, point),
    }
    caps = measure.capture_flows(
        measure.parse_tshark(tshark(folder / "capture.pcapng")), _senders(totals, point)
    )
    series = []
    for f in point.flows:
        ip = measure.parse_iperf3(
            (folder / f"{f}.client.stdout").read_text(encoding="utf-8"), f"{f}'s iperf3"
        )
        cap = caps.get(f)
        if cap is None:
            raise RuntimeError(f"{folder}: no data of flow {f} in the capture")
        ss = measure.data_connection(measure.parse_ss((folder / f"{f}.ss.txt").read_text(encoding="utf-8")))
        # The sampler's clock starts when it starts iperf3, whose first packet (the control
        # connection's SYN) follows within a few ms: that SYN places the samples in run time.
        t = ss["t_s"].to_numpy(dtype=float) + cap.first_syn_s
        cwnd = ss["cwnd_bytes"].to_numpy(dtype=float)
        series.append(pd.DataFrame({"t_s": t, "flow": f, "cwnd_bytes": cwnd}))
        m[f] = {
            "algo": ip.algo,
            "mbps": ip.received_bytes * 8 / duration_s / 1e6,
            "iperf3_mbps": ip.receiver_mbps,
            "retransmits": cap.retransmits,
            "iperf3_retransmits": ip.retransmits,
            "segments": cap.segments,
            "syn_s": cap.syn_s,
            "data_s": cap.data_s,
            "max_ip_len": cap.max_ip_len,
            "cwnd_mean_bytes": _mean_cwnd(t, cwnd, cap.data_s, cap.data_s + duration_s)
            if len(t)
            else math.nan,
        }
    frame = pd.concat(series, ignore_index=True)
    frame.to_csv(folder / "cwnd.csv", index=False, float_format="%.6f")
    return m


def trim(folder: Path) -> None:
    """Remove a measured run's capture and tables (the full grid's would take ~10 GB); its
    metrics, summary, programs' output, `ss` samples and cwnd series stay."""
    if _read(folder) is None:
        return
    for f in [folder / "capture.pcapng", *folder.glob("*.parquet")]:
        f.unlink(missing_ok=True)


def timelines(kernel: dict[str, Any], point: Point) -> list[Timeline]:
    """Each flow's data-connection SYN and first data segment in the kernel run."""
    return [Timeline(kernel[f]["syn_s"], kernel[f]["data_s"]) for f in point.flows]


def model_rep(
    point: Point, duration_s: float, kernel: dict[str, Any], folder: Path, build: str
) -> dict[str, Any]:
    """The model's run of `point` paired with one kernel run (its flows start when the kernel's
    did), into `folder`; reused if it ran with this core `build` and these TCP settings."""
    done = _read(folder)
    if done is not None and done.get("build") == build and done.get("model_tcp") == grid.MODEL_TCP:
        return done
    from ... import api

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    tl = timelines(kernel, point)
    r = api.run(grid.model_scenario(point, duration_s, tl), out=folder)
    r.save(folder)
    caps = measure.capture_flows(
        measure.parse_tshark(tshark(folder / "capture.pcapng")), _senders(r.totals, point)
    )
    m: dict[str, Any] = {
        "format": METRICS_FORMAT,
        "build": build,
        "model_tcp": grid.MODEL_TCP,
        **_queues(r.totals, point),
    }
    conn = r.conn
    conn.loc[:, ["t_s", "flow", "cwnd_bytes"]].to_csv(folder / "cwnd.csv", index=False, float_format="%.6f")
    for f, algo, t in zip(point.flows, point.case.algos, tl, strict=True):
        fl = r.totals["flows"][f]
        c = conn[conn["flow"].astype(str) == f]
        cap = caps.get(f)
        m[f] = {
            "algo": grid.ALGOS[algo],
            "mbps": int(fl["delivered_bytes"]) * 8 / duration_s / 1e6,
            "retransmits": cap.retransmits if cap is not None else 0,
            "model_retransmits": int(fl["tcp"]["retransmitted_segments"]),
            "timeouts": int(fl["tcp"]["timeouts"]),
            "segments": cap.segments if cap is not None else 0,
            "cwnd_mean_bytes": _mean_cwnd(c["t_s"], c["cwnd_bytes"], t.data_s, t.data_s + duration_s),
        }
    return _write(folder, m)
