"""Issue 15's outputs from the command line: qlog files in the output folder, the delay
statistics in summary.json and the printed table, and `quicksim report` over runs and a sweep."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., subprocess.CompletedProcess[str]]

# The flow starts at 2 s.
SHORT = ("--set", "run.duration=3s", "--set", "run.record.delays=true", "--no-plots", "-q")


def _records(path: Path) -> list[dict[str, object]]:
    """A JSON-SEQ file's records (RFC 7464: Record Separator, JSON text, newline)."""
    text = path.read_text()
    assert text.startswith("\x1e") and text.endswith("\n")
    return [json.loads(r) for r in text.split("\x1e")[1:]]


def test_qlog_files_and_delay_statistics(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "bs"
    proc = cli(
        "run", "scenarios/buffer-sizing.toml", "--out", str(out), *SHORT, "--set", 'run.record.qlog=["quic"]'
    )
    assert proc.returncode == 0, proc.stderr
    for role in ("client", "server"):
        recs = _records(out / f"quic.{role}.sqlog")
        assert recs[0]["qlog_version"] == "0.3"
        assert any(r.get("name") == "transport:packet_sent" for r in recs[1:])
    assert not (out / "qlog.parquet").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert "qlog" not in summary["tables"]
    flow = summary["flows"]["quic"]
    # One-way delay = queueing + 1 ms + 102.4 us serialization (1280 B at 100 Mbit/s), at least.
    assert flow["owd_p50_s"] <= flow["owd_p95_s"] <= flow["owd_p99_s"]
    assert flow["owd_p95_s"] >= 1.1e-3 and flow["queueing_p95_s"] < flow["owd_p95_s"]
    assert summary["totals"]["delays"]["owd_p95_s"] == pytest.approx(flow["owd_p95_s"])
    q = summary["queues"]["bottleneck:router1->router2"]
    assert 0 < q["queueing_p95_s"] <= 22 * 102.4e-6 * 1.01
    # The saved result loads back (the qlog table is files, not Parquet).
    import quicksim

    res = quicksim.load(out)
    assert {"owd_p95_s", "queueing_p95_s"} <= set(res.flows.columns)


def test_printed_table_shows_the_delays(cli: Cli, tmp_path: Path) -> None:
    proc = cli(
        "run",
        "scenarios/buffer-sizing.toml",
        "--out",
        str(tmp_path / "o"),
        "--no-plots",
        "--set",
        "run.duration=2.5s",
        "--set",
        "run.record.delays=true",
    )
    assert proc.returncode == 0, proc.stderr
    assert "OWD mean/p50/p95/p99 ms" in proc.stdout and "wait p95 ms" in proc.stdout
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["flows"]["quic"]["owd_p95_s"] > 1.1e-3


def test_delay_statistics_switch_off(cli: Cli, tmp_path: Path) -> None:
    off = ("--set", "run.record.delays=false")
    proc = cli("run", "scenarios/buffer-sizing.toml", "--out", str(tmp_path), *SHORT, *off)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "owd_p95_s" not in summary["flows"]["quic"] and "delays" not in summary["totals"]


def test_qlog_of_a_tcp_flow_is_one_line_naming_the_field(cli: Cli, tmp_path: Path) -> None:
    proc = cli(
        "run",
        "scenarios/quic-vs-tcp.toml",
        "--out",
        str(tmp_path / "x"),
        *SHORT,
        "--set",
        'run.record.qlog=["tcp"]',
    )
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and "run.record.qlog" in errors[0] and "tcp flow" in errors[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_report_over_runs(cli: Cli, tmp_path: Path) -> None:
    dirs = []
    for packets in (22, 88):
        d = tmp_path / f"q{packets}"
        set_queue = f"dumbbell.bottleneck.queue.packets={packets}"
        assert (
            cli("run", "scenarios/buffer-sizing.toml", "--out", str(d), *SHORT, "--set", set_queue).returncode
            == 0
        )
        dirs.append(str(d))
    png = tmp_path / "report.png"
    proc = cli("report", *dirs, "--png", str(png), "--html", str(tmp_path / "report.html"), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    by = {(r["source"], r["flow"]): r for r in rows}
    small, large = by[("q22", "quic")], by[("q88", "quic")]
    # A 4x larger buffer: a larger p95 delay at the same throughput (the link is saturated).
    assert large["owd_p95_ms"] > 2 * small["owd_p95_ms"]
    assert small["throughput_mbps"] == pytest.approx(large["throughput_mbps"], rel=0.02)
    assert 0 <= small["loss_rate"] < 0.05 and not math.isnan(by[("q22", "total")]["owd_p95_ms"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = cli("report", str(tmp_path / "missing"), "--html", str(tmp_path / "bad.html"))
    assert bad.returncode == 2 and "neither a run" in bad.stderr


@pytest.mark.slow
def test_report_over_a_sweep(cli: Cli, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    proc = cli("sweep", "examples/cc-report-sweep.toml", "--out", str(out), "-j", "1", timeout=300)
    assert proc.returncode == 0, proc.stderr
    png = tmp_path / "sweep.png"
    proc = cli("report", str(out), "--png", str(png), "--html", str(tmp_path / "sweep.html"), "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {r["source"] for r in rows} == {
        f"cc={cc}, packets={p}" for cc in ("newreno", "cubic") for p in (22, 88)
    }
    assert all(r["owd_p95_ms"] > 1.1 for r in rows)
    assert png.stat().st_size > 10_000
