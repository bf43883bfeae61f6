"""`quicksim reproduce linux-vs-model`: what it reads from iperf3, ss and tshark (recorded
output of this machine's iperf3 3.12, iproute2 6.1 and tshark 4.0), the comparison and the
goal's grades, the grid's scenarios, the sampler; then, where root, namespaces, TUN, iperf3, ss
and tshark exist, a kernel run that fails and the quick mode end to end, each leaving nothing
behind (namespaces, devices, processes)."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import quicksim
from quicksim import reproduce as rp
from quicksim.emulate import netns
from quicksim.reproduce import linux_vs_model as lvm
from quicksim.reproduce.linux_vs_model import grid, measure, runner, summary
from quicksim.reproduce.linux_vs_model.grid import Case, Point, Timeline

WHY_NOT = runner.why_not()
needs_kernel_side = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")

# iperf3 3.12's client report of one CUBIC flow (pair-cubic+cubic-10M-20ms-1bdp, 8 s), its
# intervals left out.
IPERF3 = """{"start": {"connecting_to": {"host": "10.0.0.4", "port": 5201}}, "intervals": [],
"end": {"sum_sent": {"start": 0, "end": 8.000075, "seconds": 8.000075, "bytes": 4740752,
"bits_per_second": 4740707.555866663, "retransmits": 33, "sender": true},
"sum_received": {"start": 0, "end": 8.034383, "seconds": 8.034383, "bytes": 4652424,
"bits_per_second": 4632514.033747208, "sender": true}, "sender_tcp_congestion": "cubic",
"receiver_tcp_congestion": "cubic"}}"""

IPERF3_ERROR = """{"start": {"connected": [], "version": "iperf 3.12"}, "intervals": [], "end": {},
"error": "unable to connect to server: Connection refused"}"""

# sampler.py's file (lines trimmed): the control connection (ESTAB), the data connection before (SYN-SENT,
# ss's default mss of 524 B) and after its handshake.
SS = """# t=0.100218
ESTAB    0      0      10.0.0.3:50362 10.0.0.4:5201
\t bbr wscale:10,10 rto:224 rtt:20.745/6.62 ato:44 mss:1448 pmtu:1500 cwnd:13 bytes_sent:185 bytes_acked:186
SYN-SENT 0      1      10.0.0.3:50370 10.0.0.4:5201
\t cubic rto:1000 mss:524 pmtu:1500 rcvmss:88 advmss:1460 cwnd:10 segs_out:1 unacked:1
# t=0.202016
ESTAB 0      0      10.0.0.3:50362 10.0.0.4:5201
\t bbr wscale:10,10 rto:224 rtt:20.745/6.62 ato:40 mss:1448 pmtu:1500 cwnd:13 bytes_sent:185 bytes_acked:186
ESTAB 0      55024  10.0.0.3:50370 10.0.0.4:5201
\t cubic wscale:10,10 rto:224 rtt:21.5/3.2 mss:1448 cwnd:21 ssthresh:20 bytes_acked:15966 retrans:0/2
# t=0.300165
ESTAB 0      0      10.0.0.3:50370 10.0.0.4:5201
\t cubic wscale:10,10 rto:228 rtt:30.1/4.0 mss:1448 cwnd:36 ssthresh:20 bytes_acked:95966 retrans:1/5
"""

# tshark's TSHARK_FIELDS on the same run: the sender's control connection (stream 1), its data
# connection (stream 3) with a fast retransmission and an "out-of-order" one; the receiver's
# ACK (10.0.0.4) and a non-TCP row are left out.
TSHARK = "\n".join(
    "\t".join(row)
    for row in [
        ("0.781402825", "10.0.0.3", "60", "1", "1", "0", "0", "", "", ""),
        ("0.809850747", "10.0.0.3", "89", "1", "0", "1", "37", "", "", ""),
        ("0.831981608", "10.0.0.3", "196", "1", "0", "1", "144", "", "", ""),
        ("0.855954979", "10.0.0.3", "60", "3", "1", "0", "0", "", "", ""),
        ("0.876307925", "10.0.0.3", "52", "3", "0", "1", "0", "", "", ""),
        ("0.879867778", "10.0.0.3", "89", "3", "0", "1", "37", "", "", ""),
        ("0.901317105", "10.0.0.3", "1500", "3", "0", "1", "1448", "", "", ""),
        ("0.901329161", "10.0.0.3", "1500", "3", "0", "1", "1448", "", "", ""),
        ("0.974522833", "10.0.0.3", "1500", "3", "0", "1", "1448", "1", "1", ""),
        ("0.975739707", "10.0.0.3", "1500", "3", "0", "1", "1448", "", "", "1"),
        ("0.975800000", "10.0.0.4", "52", "3", "0", "1", "0", "", "", ""),
        ("0.975900000", "10.0.0.9", "84", "", "", "", "", "", "", ""),
    ]
)


def test_registered() -> None:
    assert rp.module("linux-vs-model").NAME == "linux-vs-model"


def test_iperf3_report() -> None:
    r = measure.parse_iperf3(IPERF3)
    assert (r.received_bytes, r.sent_bytes, r.retransmits, r.algo) == (4652424, 4740752, 33, "cubic")
    assert r.receiver_mbps == pytest.approx(4652424 * 8 / 8.034383 / 1e6)


def test_iperf3_errors_name_the_output() -> None:
    with pytest.raises(ValueError, match="f1's iperf3: iperf3 failed: unable to connect"):
        measure.parse_iperf3(IPERF3_ERROR, "f1's iperf3")
    with pytest.raises(ValueError, match="f1's iperf3: not iperf3 JSON"):
        measure.parse_iperf3("iperf3: error - unable to connect", "f1's iperf3")
    with pytest.raises(ValueError, match=r"without end\.sum_sent"):
        measure.parse_iperf3('{"end": {}}')


def test_ss_samples_and_the_data_connection() -> None:
    ss = measure.parse_ss(SS)
    assert len(ss) == 5 and list(ss["t_s"].unique()) == [0.100218, 0.202016, 0.300165]
    data = measure.data_connection(ss)
    # The data connection (port 50370) from its handshake on: the SYN-SENT sample is left out.
    assert list(data["local_port"]) == [50370, 50370]
    assert list(data["cwnd_bytes"]) == [21 * 1448, 36 * 1448]
    assert list(data["srtt_ms"]) == [21.5, 30.1]
    assert list(data["retrans_total"]) == [2, 5]
    assert math.isnan(ss.loc[0, "ssthresh_segments"]) and data.loc[0, "ssthresh_segments"] == 20
    assert measure.data_connection(measure.parse_ss("")).empty


def test_capture_flows_by_hand() -> None:
    rows = measure.parse_tshark(TSHARK)
    assert len(rows) == 11  # the row without a TCP stream is not TCP
    caps = measure.capture_flows(rows, {"f1": "10.0.0.3", "f2": "10.0.0.5"})
    assert set(caps) == {"f1"}  # no packet of f2's sender: left out
    c = caps["f1"]
    assert (c.first_syn_s, c.syn_s, c.data_s) == (0.781402825, 0.855954979, 0.879867778)
    # Stream 3 carries 37 + 4 x 1448 B against stream 1's 181: the data connection. Its fast
    # retransmission and its "out-of-order" segment are the two retransmissions.
    assert (c.segments, c.retransmits, c.max_ip_len) == (5, 2, 1500)


def test_jain_and_relative_differences() -> None:
    assert measure.jain([5.0, 5.0]) == pytest.approx(1.0)
    assert measure.jain([10.0, 0.0]) == pytest.approx(0.5)
    assert measure.jain([3.0, 1.0]) == pytest.approx(16 / 20)
    assert math.isnan(measure.jain([])) and math.isnan(measure.jain([0.0, 0.0]))
    assert measure.rel(10.5, 10.0) == pytest.approx(0.05)
    assert measure.rel(0.0, 0.0) == 0.0
    assert math.isnan(measure.rel(1.0, 0.0)) and math.isnan(measure.rel(math.nan, 1.0))


def test_grades() -> None:
    ok = {"throughput.f1": (9.6, 10.0), "queueing": (10.4, 10.0), "retransmits": (120.0, 100.0)}
    assert measure.grade(ok) == "tight"
    assert measure.grade({**ok, "throughput.f1": (9.4, 10.0)}) == "loose"
    assert measure.grade({**ok, "retransmits": (149.0, 100.0)}) == "loose"
    assert measure.grade({**ok, "queueing": (8.9, 10.0)}) == "outside"
    assert measure.grade({**ok, "queueing": (math.nan, 10.0)}) == "outside"
    # A count: two segments either way are within, whatever the ratio; three are not.
    assert measure.grade({**ok, "retransmits": (2.0, 0.0)}) == "tight"
    assert measure.grade({**ok, "retransmits": (7.0, 4.0)}) == "outside"


def test_grid_by_hand() -> None:
    full = grid.full_grid()
    assert len(full) == 270 and len({p.id for p in full}) == 270
    assert {a for p in full for a in p.case.algos} == set(grid.ALGOS) == {"reno", "cubic", "bbr"}
    single = Case("single", ("cubic",), (1.0,))
    # 5 Mbit/s x 20 ms = 12 500 B = 8.33 packets: half of it 4; 20 Mbit/s x 100 ms x 2 = 333.
    assert Point(single, 5, 20, 0.5).buffer_packets == 4
    assert Point(single, 20, 100, 2).buffer_packets == 333
    assert Point(single, 5, 20, 0.05).buffer_packets == 1
    assert [p.id for p in grid.select(full, "single-reno-5M-20ms-*, pair-bbr+cubic-20M-100ms-2bdp")] == [
        "single-reno-5M-20ms-0.5bdp",
        "single-reno-5M-20ms-1bdp",
        "single-reno-5M-20ms-2bdp",
        "pair-bbr+cubic-20M-100ms-2bdp",
    ]
    assert grid.select(full, None) == full and grid.select(full, "nothing") == []
    assert all(len(p.flows) in (1, 2) for p in grid.quick_grid())


def test_model_scenario_starts_when_the_kernel_did() -> None:
    case = Case("pair-rtt", ("bbr", "bbr"), (1.0, 2.0))
    p = Point(case, 10, 50, 1)
    doc = grid.model_scenario(p, 30.0, [Timeline(0.8, 0.86), Timeline(0.9, 1.0)])
    assert doc["dumbbell"]["bottleneck"]["delay"] == "25ms"
    assert doc["dumbbell"]["access_delays"] == ["0ms", "25ms"]  # flow 2: 50 + 2 x 25 = 100 ms
    assert doc["dumbbell"]["bottleneck"]["queue"] == {"packets": 42}
    f2 = doc["flows"][1]
    assert (f2["connect"], f2["start"], f2["stop"]) == ("0.900000s", "1.000000s", "31.000000s")
    assert f2["tcp"] == {**grid.MODEL_TCP, "cc": "bbr1"} and f2["kind"] == "tcp" and f2["stop_mode"] == "send"
    assert doc["run"]["duration"] == "32.000s"
    assert quicksim.validate(doc) is not None
    with pytest.raises(ValueError, match=r"timelines\[0\]"):
        grid.model_scenario(p, 30.0, [Timeline(1.0, 0.9), Timeline(0.9, 1.0)])


def test_the_linux_profile_keeps_its_own_cubic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grid, "MODEL_TCP", {})
    assert grid.model_tcp("cubic") == {"cc": "cubic"}
    monkeypatch.setattr(grid, "MODEL_TCP", {"profile": "linux"})
    assert grid.model_tcp("cubic") == {"profile": "linux"}
    assert grid.model_tcp("reno") == {"profile": "linux", "cc": "newreno"}
    assert grid.model_tcp("bbr") == {"profile": "linux", "cc": "bbr1"}


def test_kernel_scenario_runs_iperf3_under_the_sampler(tmp_path: Path) -> None:
    p = Point(Case("pair", ("bbr", "cubic"), (1.0, 1.0)), 10, 20, 2)
    doc = grid.kernel_scenario(p, 8.0, tmp_path)
    assert doc["run"]["clock"] == "real"
    assert doc["run"]["capture"]["links"] == ["access1", "access2"]
    f1, f2 = doc["flows"]
    assert f1["kind"] == "program" and "exec iperf3 -s -1 -J" in f1["server"]
    assert "-C bbr -J" in f1["client"] and "-C cubic -J" in f2["client"]
    assert str(grid.sampler_path()) in f1["client"] and "--dst {dst}" in f1["client"]
    assert str(tmp_path.resolve() / "f2.ss.txt") in f2["client"]
    # Each host's connections to its peer start with the flow's algorithm (a route's congctl),
    # so a cubic socket is never first set up by the machine's default (bbr, which paces).
    route = "sh -c 'ip route replace {peer} dev qs0 congctl cubic && exec "
    assert f2["client"].startswith(route.format(peer="{dst}")), f2["client"]
    assert f2["server"] == route.format(peer="{src}") + "iperf3 -s -1 -J -p 5201'"
    assert "congctl bbr && exec" in f1["client"] and "congctl bbr && exec" in f1["server"]
    # One shell word after `sh -c`: the emulator splits commands with shlex.
    words = shlex.split(f2["client"])
    assert words[:2] == ["sh", "-c"] and len(words) == 3


def _kernel(mbps: float, trusted: bool = True, retrans: int = 10) -> dict[str, Any]:
    m = {"event_p99_us": 50.0, "delivery_p99_us": 80.0 if trusted else 5000.0, "trusted": trusted}
    m.update({"queue_mean_ms": 10.0, "queue_p95_ms": 19.0, "drops": 12, "f1.queue_mean_ms": 10.0})
    m["f1"] = {"mbps": mbps, "retransmits": retrans, "iperf3_retransmits": retrans, "cwnd_mean_bytes": 4e4}
    return m


def _model(mbps: float) -> dict[str, Any]:
    m = {"queue_mean_ms": 10.2, "queue_p95_ms": 19.0, "drops": 14, "f1.queue_mean_ms": 10.2}
    m["f1"] = {"mbps": mbps, "retransmits": 11, "timeouts": 0, "cwnd_mean_bytes": 4.1e4}
    return m


def test_point_rows_grade_only_trusted_runs() -> None:
    p = Point(Case("single", ("cubic",), (1.0,)), 10, 20, 1)
    row = summary.point_row(p, [(_kernel(9.6), _model(9.7)), (_kernel(9.4), _model(9.7))])
    assert row["f1.k.mbps"] == pytest.approx(9.5) and row["f1.k.mbps_spread"] == pytest.approx(0.2 / 9.5)
    assert row["diff.throughput.f1"] == pytest.approx(9.7 / 9.5 - 1)
    assert row["grade"] == "tight" and row["trusted"] == 2
    # The untrusted run is left out of the means.
    mixed = summary.point_row(p, [(_kernel(9.6), _model(9.7)), (_kernel(5.0, trusted=False), _model(9.7))])
    assert mixed["f1.k.mbps"] == pytest.approx(9.6) and mixed["trusted"] == 1
    assert summary.point_row(p, [(_kernel(9.6, trusted=False), _model(9.7))])["grade"] == "untrusted"
    failed = summary.point_row(p, [({"error": "flow f1: client exited with status 1"}, None)])
    assert failed["grade"] == "failed" and "status 1" in failed["errors"]
    import pandas as pd

    g = summary.goal(pd.DataFrame([row, mixed, failed]))
    assert (g["graded"], g["tight"], g["failed"], g["met"]) == (2, 2, 1, True)


def test_sampler_passes_the_exit_status_through(tmp_path: Path) -> None:
    if shutil.which("ss") is None:
        pytest.skip("no ss (iproute2)")
    out = tmp_path / "ss.txt"
    cmd = [sys.executable, str(grid.sampler_path()), "--out", str(out), "--interval", "0.05"]
    cmd += [
        "--dst",
        "127.0.0.1",
        "--",
        sys.executable,
        "-c",
        # The command lasts until the sampler has written three samples (whatever the load),
        # then fails with 3.
        "import pathlib, sys, time\n"
        f"out, deadline = pathlib.Path({str(out)!r}), time.monotonic() + 20\n"
        "def samples():\n"
        "    return out.read_text().count('# t=') if out.is_file() else 0\n"
        "while samples() < 3 and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\n"
        "sys.exit(3)",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert r.returncode == 3
    times = [float(line[4:]) for line in out.read_text().splitlines() if line.startswith("# t=")]
    # On a 0.05 s grid from the command's start: sample k not before k x 0.05 s.
    assert len(times) >= 3 and all(t >= k * 0.05 - 1e-3 for k, t in enumerate(times))
    bad = subprocess.run([*cmd[:2], "--out", str(out), "--dst", "x"], capture_output=True, text=True)
    assert bad.returncode == 2 and "command after --" in bad.stderr


def test_skipped_without_the_kernel_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "why_not", lambda: "not root: network namespaces and TUN devices need root")
    report = rp.reproduce("linux-vs-model", tmp_path, quick=True)
    assert report.ok and report.checks == []
    text = (tmp_path / "linux-vs-model" / "report.md").read_text()
    assert "## Skipped" in text and "not root" in text


def _leftovers() -> tuple[list[str], list[str], list[str]]:
    ours = [n for n in netns.namespaces() if n.startswith(netns.PREFIX)]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    devices = [line for line in links.splitlines() if f"qs{os.getpid() % 1_000_000}t" in line]
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    procs = [a for a in ps if str(grid.sampler_path()) in a or a.startswith("iperf3 -s -1 -J -p 5201")]
    return ours, devices, procs


@needs_kernel_side
@pytest.mark.slow
def test_a_failing_kernel_run_is_an_error_row(tmp_path: Path) -> None:
    # An unknown congestion control: `ip route ... congctl` refuses it before iperf3 starts,
    # so the client exits with an error: the run's error names the flow and where the reason is.
    p = Point(Case("single", ("nosuchcc",), (1.0,)), 10, 20, 1)
    m = runner.kernel_rep(p, 2.0, tmp_path / "k")
    assert m["error"].startswith("flow f1: client exited with status"), m["error"]
    stderr = (tmp_path / "k" / "f1.client.stderr").read_text(encoding="utf-8")
    assert "Unknown tcp congestion algorithm" in stderr, stderr
    assert not (tmp_path / "k" / "metrics.json").exists()  # tried again on the next run
    assert _leftovers() == ([], [], [])


@needs_kernel_side
@pytest.mark.slow
def test_quick_mode_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two of the quick points (one flow, and BBR against CUBIC) keep the test near 30 s.
    monkeypatch.setenv(lvm.ENV_POINTS, "single-cubic-*,pair-bbr+cubic-*")
    report = rp.reproduce("linux-vs-model", tmp_path, quick=True)
    assert _leftovers() == ([], [], [])
    assert report.ok, [c for c in report.checks if not c.passed]
    assert {c.name for c in report.checks} >= {"kernel runs that finished", "largest packet the kernel sent"}
    out = tmp_path / "linux-vs-model"
    for f in ("report.md", "points.csv", "runs.csv", "scatter.png", "cwnd.png", "timing.png"):
        assert (out / f).is_file(), f
    import pandas as pd

    points = pd.read_csv(out / "points.csv")
    assert list(points["point"]) == ["single-cubic-10M-20ms-1bdp", "pair-bbr+cubic-10M-20ms-2bdp"]
    assert (points["grade"] != "failed").all()
    k = json.loads((out / "runs" / points["point"][0] / "kernel-1" / "metrics.json").read_text())
    assert k["f1"]["algo"] == "cubic" and 5 < k["f1"]["mbps"] <= 10
    assert 0 < k["queue_mean_ms"] < 20 * 1.21  # a 17-packet queue at 10 Mbit/s holds ~20 ms
    # Resumed: a second run measures nothing again (every run's metrics.json, written last when
    # a run is measured, stays the same file) and reports the same numbers.
    stamps = {m: m.stat().st_mtime_ns for m in (out / "runs").rglob("metrics.json")}
    assert stamps
    again = rp.reproduce("linux-vs-model", tmp_path, quick=True)
    assert {m: m.stat().st_mtime_ns for m in (out / "runs").rglob("metrics.json")} == stamps
    assert [c.measured for c in again.checks] == [c.measured for c in report.checks]
