"""The README's buffer-size study (examples/buffer-study-sweep.toml), run as written: a flow group
with random start times, buffers in BDPs, intervals per buffer size, kept tables, a metric added
afterwards without running anything, and the report page. Checked against what the scenario
says (the buffer limits, the drain time of a full buffer, the metrics' ranges), not against
numbers printed by an earlier run."""

from __future__ import annotations

import json
import math
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from conftest import REPO

Cli = Callable[..., subprocess.CompletedProcess[str]]

SWEEP = "sweep examples/buffer-study-sweep.toml --out out/buffer-study"
LATER = "sweep examples/buffer-study-sweep.toml --out out/buffer-study --metrics jain"
REPORT = "report out/buffer-study --html out/buffer-study/report.html"

BDP = "dumbbell.bottleneck.queue.packets.bdp"
RATE_BPS = 10e6
BDP_BYTES = RATE_BPS * 0.040 / 8  # 10 Mbit/s x 40 ms = 50 kB
PACKET = 1500
QUEUE = "bottleneck:router1->router2"
METRICS = ["queue_delay_p95_s", "queue_delay_mean_s", "utilization"]
RANGES = {"queue_delay_p95_s": (0, math.inf), "queue_delay_mean_s": (0, math.inf), "utilization": (0, 1)}
RANGES["jain"] = (0.25, 1)  # 1/n .. 1 for n = 4 flows


def _run(cli: Cli, command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = cli(*command.split(), cwd=cwd, timeout=900)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, f"{command}\n{proc.stderr[-3000:]}"
    return proc


def _limit(bdp: float) -> int:
    """The buffer in packets: the BDP in bytes, rounded up to whole packets."""
    return math.ceil(bdp * BDP_BYTES / PACKET)


def _check_summary(summary: pd.DataFrame, runs: pd.DataFrame, metrics: list[str]) -> None:
    assert set(summary["metric"]) == set(metrics)
    for _, row in summary.iterrows():
        values = runs.loc[runs[BDP] == row[BDP], row["metric"]].to_numpy(dtype=float)
        assert row["n"] == len(values) == 5
        lo, hi = RANGES[row["metric"]]
        assert lo <= row["mean"] <= hi, row.to_dict()
        if row["method"] == "identical":
            # No interval, and rightly: every repetition gave the same value.
            assert (values == values[0]).all() and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])
        else:
            assert row["method"] == "bootstrap", row.to_dict()  # bounded metrics, 5 runs
            assert len(set(values)) > 1
            assert lo <= row["ci_low"] <= row["mean"] <= row["ci_high"] <= hi, row.to_dict()


@pytest.mark.slow
@pytest.mark.core
def test_the_buffer_study_as_the_readme_gives_it(cli: Cli, tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for command in (SWEEP, LATER, REPORT):
        assert f"\nquicksim {command}" in readme, command  # the commands the README shows
    (tmp_path / "examples").symlink_to(REPO / "examples")
    out = tmp_path / "out" / "buffer-study"

    proc = _run(cli, SWEEP, tmp_path)
    runs = pd.read_parquet(out / "runs.parquet")
    assert len(runs) == 20 and runs["error"].isna().all()
    assert sorted(set(runs[BDP])) == [0.25, 0.5, 1.0, 2.0]
    for _, run in runs.iterrows():
        kept = out / "kept" / run["run_id"]
        assert sorted(p.name for p in kept.iterdir()) == ["flows.parquet", "queues.parquet", "result.json"]
        result = json.loads((kept / "result.json").read_text(encoding="utf-8"))
        # The group's 4 members, each with its own start drawn from [0, 1] s.
        drawn = result["meta"]["drawn"]
        assert sorted(drawn) == [f"cubic-{i}" for i in range(4)]
        assert all(0.0 <= d["start_s"] <= 1.0 for d in drawn.values())
        # The buffer in BDPs: CUBIC fills it to exactly its limit and overflows it.
        queue = result["totals"]["queues"][QUEUE]
        limit = _limit(run[BDP])
        assert queue["max_packets"] == limit and queue["overflow_dropped_packets"] > 0
        # The p95 of the queueing delay is the drain time of a whole number of packets, at most a
        # full buffer's, and above the mean.
        packets = run["queue_delay_p95_s"] * RATE_BPS / 8 / PACKET
        assert packets == pytest.approx(round(packets), abs=1e-9) and limit - 1 <= round(packets) <= limit
        assert run["queue_delay_mean_s"] < run["queue_delay_p95_s"]
    # The same queue length gives the same delay, to the bit: repetitions whose p95 is the same
    # number of packets are reported identical, not given a zero-width interval.
    for bdp, group in runs.groupby(BDP):
        counts = {round(v * RATE_BPS / 8 / PACKET) for v in group["queue_delay_p95_s"]}
        if len(counts) == 1:
            assert group["queue_delay_p95_s"].nunique() == 1, bdp
    starts = [
        tuple(
            d["start_s"]
            for d in json.loads((out / "kept" / r / "result.json").read_text())["meta"]["drawn"].values()
        )
        for r in runs["run_id"]
    ]
    assert len(set(starts)) == 20, "every run draws other start times"
    # So the repetitions differ: the mean delay varies at every buffer size.
    assert (runs.groupby(BDP)["queue_delay_mean_s"].nunique() == 5).all()
    summary = pd.read_parquet(out / "summary.parquet")
    _check_summary(summary, runs, METRICS)
    # The printed summary says what its intervals are, and why some points have none.
    assert "(bootstrap)" in proc.stdout and "identical in all 5 runs: no interval" in proc.stdout
    assert "a delay quantile at a full buffer's" in proc.stdout
    plots = sorted(p.name for p in (out / "plots").glob("*.png"))
    assert plots == sorted(f"{m}.png" for m in METRICS)

    # A metric added afterwards: computed from the kept flow tables, nothing run again.
    kept_times = {p: p.stat().st_mtime_ns for p in (out / "kept").rglob("*.parquet")}
    proc = _run(cli, LATER, tmp_path)
    assert "reusing 20 of 20 runs stored in" in proc.stderr and ", 0 to run" in proc.stderr, proc.stderr
    assert "computed new metrics of 20 stored run(s) from their kept tables" in proc.stderr
    after = pd.read_parquet(out / "runs.parquet")
    assert after["wall_s"].tolist() == runs["wall_s"].tolist()  # the stored runs, not new ones
    assert {p: p.stat().st_mtime_ns for p in (out / "kept").rglob("*.parquet")} == kept_times
    assert after["jain"].between(0.25, 1.0).all()
    _check_summary(pd.read_parquet(out / "summary.parquet"), after, [*METRICS, "jain"])
    assert (out / "plots" / "jain.png").is_file()

    proc = _run(cli, REPORT, tmp_path)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<h2>Sweep buffer-study</h2>" in page
    for metric in [*METRICS, "jain"]:
        assert f'alt="buffer-study: {metric} against {BDP}"' in page, metric
    assert "<th>method</th>" in page and "<td>identical</td>" in page and "<td>bootstrap</td>" in page
    assert not re.findall(r"""(?:src|href)\s*=\s*["'](?!data:)""", page)  # self-contained
    assert "no throughput per flow to compare" in proc.stdout


def test_a_metric_plot_says_what_its_points_are_and_marks_identical_ones() -> None:
    """Without the ring, a point whose repetitions were identical reads as one whose band or bar
    is missing; the caption says what the points and intervals are."""
    from quicksim.sweep_plots import interval_caption, plot_metric

    summary = pd.DataFrame(
        {
            "b": [0.5, 1.0, 2.0],
            "metric": ["u"] * 3,
            "n": [5, 5, 5],
            "mean": [0.99, 0.995, 0.999999],
            "std": [0.01, 0.004, math.nan],
            "sem": [0.004, 0.002, math.nan],
            "ci_low": [0.98, 0.99, math.nan],
            "ci_high": [0.995, 0.999, math.nan],
            "method": ["bootstrap", "bootstrap", "identical"],
            "identical": [False, False, True],
        }
    )
    assert interval_caption(summary, ["u"]) == "mean of 5 repetitions, 95 % interval: bootstrap"
    assert interval_caption(summary[summary["method"] == "identical"], ["u"]) == "mean of 5 repetitions"
    for style in ("band", "bars"):
        fig = plot_metric(summary, "u", "b", style=style)  # type: ignore[arg-type]
        ax = fig.axes[0]
        _, labels = ax.get_legend_handles_labels()
        assert labels == ["identical in every repetition: no interval"], labels
        (ring,) = [c for c in ax.collections if c.get_label() == labels[0]]
        assert ring.get_offsets().tolist() == [[2.0, 0.999999]]
