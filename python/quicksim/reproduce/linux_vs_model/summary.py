"""linux-vs-model's numbers per grid point: the kernel's and the model's means over the trusted
repetitions, their differences and the goal's grade; the goal over the grid; the report's
tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..common import md_table
from . import measure
from .grid import Point

if TYPE_CHECKING:
    import pandas as pd


def _mean(values: Sequence[float]) -> float:
    vals = [float(v) for v in values if not math.isnan(float(v))]
    return sum(vals) / len(vals) if vals else math.nan


def point_row(point: Point, reps: Sequence[tuple[dict[str, Any], dict[str, Any] | None]]) -> dict[str, Any]:
    """One row of points.csv from the point's repetitions, (kernel metrics, paired model
    metrics or None): means over the trusted repetitions whose both sides finished, the spread
    of the kernel's throughput, the pairs the goal compares and its grade ("untrusted" without a
    trusted repetition, "failed" without a finished one)."""
    done = [(k, m) for k, m in reps if "error" not in k and m is not None and "error" not in m]
    good = [(k, m) for k, m in done if k["trusted"]]
    row: dict[str, Any] = {
        "point": point.id,
        "case": point.case.label,
        "rate_mbps": point.rate_mbps,
        "rtt_ms": point.rtt_ms,
        "buffer_bdp": point.buffer_bdp,
        "buffer_packets": point.buffer_packets,
        "reps": len(reps),
        "finished": len(done),
        "trusted": len(good),
        "worst_p99_us": max(
            (max(k["event_p99_us"], k["delivery_p99_us"]) for k, _ in done), default=math.nan
        ),
        "errors": "; ".join(
            str(k.get("error") or (m or {}).get("error", "")) for k, m in reps if (k, m) not in done
        ),
    }
    if not done:
        row["grade"] = "failed"
        return row
    untrusted = not good
    if untrusted:
        good = done  # shown, not graded
    kernel, model = [k for k, _ in good], [m for _, m in good if m is not None]
    for side, runs in (("k", kernel), ("m", model)):
        for key in ("queue_mean_ms", "queue_p95_ms", "drops"):
            row[f"{side}.{key}"] = _mean([r[key] for r in runs])
        for f in point.flows:
            for key in ("mbps", "retransmits", "cwnd_mean_bytes", "queue_mean_ms"):
                v = [r[f][key] for r in runs] if key != "queue_mean_ms" else [r[f"{f}.{key}"] for r in runs]
                row[f"{f}.{side}.{key}"] = _mean(v)
        row[f"{side}.retransmits"] = sum(row[f"{f}.{side}.retransmits"] for f in point.flows)
        row[f"{side}.jain"] = (
            measure.jain([row[f"{f}.{side}.mbps"] for f in point.flows]) if len(point.flows) > 1 else math.nan
        )
    for f in point.flows:
        row[f"{f}.k.iperf3_retransmits"] = _mean([r[f]["iperf3_retransmits"] for r in kernel])
        row[f"{f}.m.timeouts"] = _mean([r[f]["timeouts"] for r in model])
        k_mbps = [r[f]["mbps"] for r in kernel]
        row[f"{f}.k.mbps_spread"] = (max(k_mbps) - min(k_mbps)) / _mean(k_mbps) if _mean(k_mbps) else math.nan
    pairs = goal_pairs(row, point)
    for key, (m, k) in pairs.items():
        row[f"diff.{key}"] = measure.rel(m, k)
    row["grade"] = "untrusted" if untrusted else measure.grade(pairs)
    return row


def goal_pairs(row: dict[str, Any], point: Point) -> dict[str, tuple[float, float]]:
    """(model, kernel) of what the goal compares: each flow's throughput, the bottleneck's mean
    queueing delay, the retransmitted segments of all flows (the capture's count)."""
    pairs = {f"throughput.{f}": (row[f"{f}.m.mbps"], row[f"{f}.k.mbps"]) for f in point.flows}
    pairs["queueing"] = (row["m.queue_mean_ms"], row["k.queue_mean_ms"])
    pairs["retransmits"] = (row["m.retransmits"], row["k.retransmits"])
    return pairs


def goal(points: pd.DataFrame) -> dict[str, Any]:
    """The goal over the graded (trusted) points: how many are within the tight and the loose
    tolerances, and whether >= GOAL_SHARE are tight and the rest loose."""
    graded = points[points["grade"].isin(["tight", "loose", "outside"])]
    n = len(graded)
    tight = int((graded["grade"] == "tight").sum())
    loose = int((graded["grade"] == "loose").sum())
    share = tight / n if n else math.nan
    return {
        "graded": n,
        "tight": tight,
        "loose": loose,
        "outside": n - tight - loose,
        "untrusted": int((points["grade"] == "untrusted").sum()),
        "failed": int((points["grade"] == "failed").sum()),
        "tight_share": share,
        "met": bool(n and share >= measure.GOAL_SHARE and tight + loose == n),
    }


def _pct(d: float) -> str:
    return "n/a" if math.isnan(d) else f"{d:+.1%}"


def _num(v: float, fmt: str = ".3g") -> str:
    return "n/a" if isinstance(v, float) and math.isnan(v) else format(v, fmt)


def flows_table(points: pd.DataFrame, grid_points: Sequence[Point]) -> str:
    """Per point and flow: throughput (kernel, model, difference), the kernel's spread over
    its repetitions, retransmitted segments (capture; iperf3's) and the mean cwnd."""
    by_id = {p.id: p for p in grid_points}
    rows = []
    for d in points.to_dict("records"):
        if d["grade"] == "failed":
            continue
        for f in by_id[d["point"]].flows:
            rows.append(
                [
                    d["point"],
                    f,
                    _num(d[f"{f}.k.mbps"]),
                    _num(d[f"{f}.m.mbps"]),
                    _pct(measure.rel(d[f"{f}.m.mbps"], d[f"{f}.k.mbps"])),
                    _pct(d[f"{f}.k.mbps_spread"]).lstrip("+"),
                    f"{_num(d[f'{f}.k.retransmits'], '.0f')} ({_num(d[f'{f}.k.iperf3_retransmits'], '.0f')})",
                    _num(d[f"{f}.m.retransmits"], ".0f"),
                    _num(d[f"{f}.k.cwnd_mean_bytes"] / 1448),
                    _num(d[f"{f}.m.cwnd_mean_bytes"] / 1448),
                ]
            )
    head = ["point", "flow", "kernel Mbit/s", "model Mbit/s", "diff", "kernel spread"]
    head += ["kernel retrans (iperf3)", "model retrans", "kernel cwnd (MSS)", "model cwnd (MSS)"]
    return md_table(head, rows)


def points_table(points: pd.DataFrame) -> str:
    """Per point: queueing delay (mean, p95), retransmissions, Jain's index, timing, grade."""
    rows = []
    for d in points.to_dict("records"):
        if d["grade"] == "failed":
            rows.append(
                [d["point"], d["buffer_packets"], "", "", "", "", "", "", "", "failed: " + d["errors"]]
            )
            continue
        rows.append(
            [
                d["point"],
                d["buffer_packets"],
                f"{d['trusted']}/{d['reps']}",
                _num(d["worst_p99_us"], ".0f"),
                f"{_num(d['k.queue_mean_ms'])} / {_num(d['m.queue_mean_ms'])}",
                _pct(d["diff.queueing"]),
                f"{_num(d['k.queue_p95_ms'])} / {_num(d['m.queue_p95_ms'])}",
                f"{_num(d['k.retransmits'], '.0f')} / {_num(d['m.retransmits'], '.0f')}",
                f"{_num(d['k.jain'])} / {_num(d['m.jain'])}",
                d["grade"],
            ]
        )
    head = ["point", "buffer (pkts)", "trusted reps", "worst p99 (µs)", "queue mean ms (kernel / model)"]
    head += ["diff", "queue p95 ms", "retrans (kernel / model)", "Jain", "grade"]
    return md_table(head, rows)
