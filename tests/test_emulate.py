"""Real-time runs (`run.clock = "real"`, docs/emulation.md): the clock without programs (no
root needed), then real programs through namespaces and TUN devices, and every fault: a missing
command, a name in use, a program that fails or hangs, SIGINT and SIGKILL of quicksim. After each
case nothing may be left: no namespace of ours (`ip netns list`), no device (`ip link`), no
process of the case (the process table). Cases that need root, network namespaces, /dev/net/tun
or iperf3 skip, saying which is missing (CI runs as root with them)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import quicksim
from quicksim.emulate import netns
from quicksim.errors import ScenarioError, SimulationError

ROOT = Path(__file__).resolve().parent.parent


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "not root: network namespaces and TUN devices need root"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    if shutil.which("ip") is None:
        return "no `ip` command (iproute2)"
    probe = f"qs-probe-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "network namespaces cannot be made here"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


WHY_NOT = _why_not()
needs_netns = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")
needs_iperf3 = pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 not installed")


def scenario(flows: list[dict[str, Any]], duration: str = "6s", **run: Any) -> dict[str, Any]:
    """h1 -- 100 Mbit/s -- r -- 20 Mbit/s, 10 ms, 50 packets -- h2, in real time."""
    return {
        "run": {"duration": duration, "clock": "real", **run},
        "nodes": {"h1": {"kind": "host"}, "r": {"kind": "router"}, "h2": {"kind": "host"}},
        "links": [
            {"name": "access", "a": "h1", "b": "r", "rate": "100Mbps", "delay": "1ms"},
            {
                "name": "bottleneck",
                "a": "r",
                "b": "h2",
                "rate": "20Mbps",
                "delay": "10ms",
                "queue": {"packets": 50},
            },
        ],
        "flows": flows,
    }


def program(client: str, server: str | None = None, start: str = "0.2s") -> dict[str, Any]:
    f = {"name": "p", "kind": "program", "src": "h1", "dst": "h2", "start": start, "client": client}
    if server is not None:
        f["server"] = server
    return f


def _ours() -> list[str]:
    return [n for n in netns.namespaces() if n.startswith(netns.PREFIX)]


def _processes(*markers: str) -> list[str]:
    """Command lines in the process table that contain one of `markers`, but not this test's own.
    Markers are a test's exact commands: another program on the machine (a `sleep 300` of
    someone else's) must not count."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(m in cmd for m in markers) and "pytest" not in cmd:
            found.append(f"{d.name}: {cmd}")
    return found


def assert_nothing_left(*markers: str) -> None:
    for _ in range(50):  # a killed process may take a moment to be reaped
        if not _ours() and not _processes(*markers):
            break
        time.sleep(0.1)
    assert _ours() == [], "namespaces left behind"
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    assert not [line for line in links.splitlines() if ": qs" in line], links
    assert _processes(*markers) == [], "processes left behind"


def test_a_real_time_run_without_programs_follows_the_wall_clock() -> None:
    # A model UDP flow at 10 Mbit/s for 1.5 s: the run takes (at least) its simulated time and
    # delivers what the virtual-time run delivers, give or take the datagrams the timing moves.
    doc = scenario(
        [{"name": "u", "kind": "udp", "src": "h1", "dst": "h2", "rate": "10Mbps", "size": "1000B"}],
        duration="1.5s",
    )
    t = time.monotonic()
    real = quicksim.run(doc)
    took = time.monotonic() - t
    doc["run"]["clock"] = "virtual"
    virtual = quicksim.run(doc)
    assert took >= 1.5
    rt = real.summary()["totals"]["realtime"]
    assert rt["clock"] == "real" and rt["event_lateness"]["count"] > 1000
    assert rt["packets_in"] == 0
    got = real.summary()["totals"]["flows"]["u"]["delivered_bytes"]
    want = virtual.summary()["totals"]["flows"]["u"]["delivered_bytes"]
    assert got == want  # the same events: only when they were handled differs


def test_a_program_flow_needs_the_real_clock_and_a_client() -> None:
    doc = scenario([program("iperf3 -c {dst}")])
    doc["run"]["clock"] = "virtual"
    with pytest.raises(ScenarioError, match=r'flows\[0\]\.kind.*run\.clock = "real"'):
        quicksim.validate(doc)
    doc = scenario([program("  ")])
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.client: missing"):
        quicksim.validate(doc)


def test_without_root_or_tun_one_line_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(netns.os, "geteuid", lambda: 1000)
    with pytest.raises(SimulationError, match="emulation needs root"):
        netns.check_environment()
    monkeypatch.setattr(netns.os, "geteuid", lambda: 0)
    real_exists = os.path.exists
    monkeypatch.setattr(netns.os.path, "exists", lambda p: p != "/dev/net/tun" and real_exists(p))
    with pytest.raises(SimulationError, match="needs /dev/net/tun"):
        netns.check_environment()


@needs_netns
@needs_iperf3
def test_iperf3_through_the_model(tmp_path: Path) -> None:
    out = tmp_path / "out"
    doc = scenario(
        [program("iperf3 -c {dst} -p 5391 -t 3 -C cubic -J", "iperf3 -s -1 -J -p 5391")],
        capture={"links": ["bottleneck"]},
    )
    r = quicksim.run(doc, out=out)
    s = r.summary()
    assert s["meta"]["ended_by"] == "the clients exited"
    report = json.loads((out / "p.client.stdout").read_text())
    bps = report["end"]["sum_received"]["bits_per_second"]
    # 20 Mbit/s of 1500 B frames carry 1448 B of TCP payload each (timestamps on): 19.3 Mbit/s.
    # The start (slow start, the first RTTs) and the real-time error cost some of it.
    assert 14e6 < bps < 19.4e6, bps
    flow = s["totals"]["flows"]["p"]
    assert flow["packets_sent"] > 1000 and flow["packets_delivered"] > 1000
    assert s["totals"]["realtime"]["packets_in"] > 2000
    assert s["totals"]["programs"]["p"]["client"]["exit_code"] == 0
    # The capture holds the real packets: tshark's TCP analysis works on it, and no segment is
    # larger than the MTU (no TSO/GSO through the TUN device).
    if shutil.which("tshark"):
        cap = str(out / "capture.pcapng")
        rtt = subprocess.run(
            ["tshark", "-r", cap, "-Y", "tcp.analysis.ack_rtt", "-T", "fields", "-e", "tcp.analysis.ack_rtt"],
            capture_output=True,
            text=True,
        ).stdout.split()
        # Frames are written as they reach the far end of the link: a segment at h2, its ACK at
        # r, after the ACK's 10 ms of propagation back.
        assert len(rtt) > 100 and min(float(x) for x in rtt) >= 0.0099, rtt[:5]
        big = subprocess.run(["tshark", "-r", cap, "-Y", "ip.len > 1500"], capture_output=True, text=True)
        assert big.stdout.strip() == ""
    assert_nothing_left("5391")


@needs_netns
def test_a_missing_command_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    doc = scenario([program("no-such-program-qs {dst}")])
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.client: command 'no-such-program-qs' not found"):
        quicksim.run(doc, out=tmp_path)
    assert_nothing_left("no-such-program-qs")


@needs_netns
def test_a_namespace_in_use_is_refused(tmp_path: Path) -> None:
    taken = netns.ns_name("h2")
    netns.ip("netns", "add", taken)
    try:
        with pytest.raises(SimulationError, match=f"network namespace {taken} is in use"):
            quicksim.run(scenario([program("sleep 0.1")]), out=tmp_path)
        assert _ours() == [taken]  # ours is untouched, h1's was removed
    finally:
        netns.ip("netns", "del", taken)
    assert_nothing_left("sleep 0.1")


@needs_netns
def test_a_client_that_fails_or_hangs_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(SimulationError, match="flow p: client exited with status 3"):
        quicksim.run(scenario([program("sh -c 'exit 3'", "sleep 31.5")]), out=tmp_path / "a")
    assert_nothing_left("sleep 31.5")
    t = time.monotonic()
    with pytest.raises(SimulationError, match=r"flow p: client still running at the end of the run"):
        quicksim.run(scenario([program("sleep 32.5")], duration="1s"), out=tmp_path / "b")
    assert time.monotonic() - t < 10
    assert_nothing_left("sleep 32.5")


def _cli(tmp_path: Path, doc: dict[str, Any]) -> subprocess.Popen[str]:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.Popen(
        [sys.executable, "-m", "quicksim", "run", str(path), "--out", str(tmp_path / "out"), "--quiet"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_namespaces(n: int) -> None:
    for _ in range(100):
        if len(_ours()) >= n:
            return
        time.sleep(0.05)
    raise AssertionError("the run made no namespaces")


@needs_netns
def test_sigint_stops_and_cleans_up(tmp_path: Path) -> None:
    proc = _cli(tmp_path, scenario([program("sleep 33.5", "sleep 34.5")], duration="30s"))
    _wait_for_namespaces(2)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    # As for a simulated run: the partial results are saved, the exit status is 130.
    assert proc.returncode == 130, err
    assert "interrupted at t = " in err and "Traceback" not in err, err
    assert (tmp_path / "out" / "summary.json").is_file()
    assert_nothing_left("sleep 33.5", "sleep 34.5")


@needs_netns
def test_after_sigkill_the_next_run_removes_the_leftovers(tmp_path: Path) -> None:
    proc = _cli(tmp_path, scenario([program("sleep 35.5", "sleep 36.5")], duration="30s"))
    _wait_for_namespaces(2)
    time.sleep(0.5)
    proc.kill()
    proc.communicate(timeout=30)
    left = _ours()
    assert len(left) == 2 and all(n.startswith(f"qs-{proc.pid}-") for n in left), left
    # The programs died with quicksim (PR_SET_PDEATHSIG); the namespaces wait for the next run.
    for _ in range(50):
        if not _processes("sleep 35.5", "sleep 36.5"):
            break
        time.sleep(0.1)
    assert _processes("sleep 35.5", "sleep 36.5") == []
    doc = scenario([program("sleep 0.2")], duration="2s")
    nxt = _cli(tmp_path, doc)
    _, err = nxt.communicate(timeout=60)
    assert nxt.returncode == 0, err
    assert f"removed what a killed run left: namespaces qs-{proc.pid}-h1, qs-{proc.pid}-h2" in err, err
    assert_nothing_left("sleep 35.5", "sleep 36.5")
