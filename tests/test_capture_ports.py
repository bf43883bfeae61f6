"""`run.capture`'s client ports beyond the first 16 384 flows: every flow between the same two hosts
gets a 4-tuple no other flow has, so tshark sees one TCP conversation per flow, and a capture that
needs more ports between two hosts than the range has says so. Needs the compiled core and tshark.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import quicksim

pytestmark = [pytest.mark.core]

Cli = Callable[..., subprocess.CompletedProcess[str]]

#: Ports in the IANA dynamic range (49152-65535): the capture's client ports.
RANGE = 16_384


def many_flows(groups: list[tuple[int, int]], kind: str = "tcp") -> dict[str, Any]:
    """Groups of (count, pair) one-packet flows from sender<pair> to receiver<pair>, in that flow
    order, a flow every 100 us in each group, on a fast dumbbell captured on its bottleneck."""
    if kind == "tcp":
        flow: dict[str, Any] = {"kind": "tcp", "app": "bulk", "bytes": "100B"}
    else:
        flow = {"kind": "udp", "size": "100B", "interval": "10s"}  # one datagram in the run
    return {
        "run": {"duration": "3s", "capture": {"links": ["bottleneck"]}},
        "dumbbell": {
            "pairs": 2,
            "bottleneck": {"rate": "1Gbps", "delay": "100us", "queue": {"packets": 1000}},
        },
        "flows": [
            {
                "name": f"g{g}",
                "count": n,
                "stagger": "100us",
                "src": f"sender{p}",
                "dst": f"receiver{p}",
                **flow,
            }
            for g, (n, p) in enumerate(groups)
        ],
    }


def tshark(*args: str) -> str:
    exe = shutil.which("tshark")
    if exe is None:
        pytest.skip("tshark is not on the PATH (CI installs it with apt-get where it can)")
    return subprocess.run([exe, *args], capture_output=True, text=True, check=True, timeout=300).stdout


def conversations(f: Path, proto: str) -> int:
    """The rows of tshark's conversation table (`-z conv,tcp`: one per TCP stream)."""
    out = tshark("-r", str(f), "-q", "-z", f"conv,{proto}")
    return sum(1 for line in out.splitlines() if "<->" in line)


def test_more_flows_than_ports_get_one_tcp_conversation_each(tmp_path: Path) -> None:
    # 8 200 flows of pair 1, 8 200 of pair 2, then 100 more of pair 1. The last 100 used to get
    # 49152 + index mod 16384 = the ports of g0-16 .. g0-115, the same 4-tuples: tshark merged
    # them (the model's TCP starts every connection at sequence number 0 and sends no FIN).
    # Now they take pair 1's lowest unused ports: 49152 + 8200 on, which only pair 2 has.
    groups = [(8200, 1), (8200, 2), (100, 1)]
    res = quicksim.run(many_flows(groups), out=tmp_path)
    cap = res.totals["capture"]
    assert "warning" not in cap and "port_collisions" not in cap
    listed = cap["flows"]
    client1, client2 = listed["g0-0"]["client"].split(":")[0], listed["g1-0"]["client"].split(":")[0]
    assert listed["g0-0"]["client"] == f"{client1}:49152"  # the first 16 384 as they always were
    assert listed["g1-8183"]["client"] == f"{client2}:65535"
    assert [listed[f"g2-{i}"]["client"] for i in range(100)] == [
        f"{client1}:{49152 + 8200 + i}" for i in range(100)
    ]
    assert conversations(tmp_path / "capture.pcapng", "tcp") == sum(n for n, _ in groups)


def test_udp_flows_beyond_the_range_are_counted_and_warned(tmp_path: Path, cli: Cli) -> None:
    # More flows between one pair of hosts than the range has ports: a port is never given twice
    # (a reused UDP 4-tuple is one conversation however long after), so the last 11 share, and
    # `quicksim run` says so in one line.
    scenario = tmp_path / "many.json"
    scenario.write_text(json.dumps(many_flows([(RANGE + 11, 1)], kind="udp")))
    out = tmp_path / "out"
    proc = cli("run", str(scenario), "--out", str(out), "--quiet", "--no-plots", timeout=600)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "client ports" in line]
    assert len(warnings) == 1 and warnings[0].startswith("quicksim: warning: "), proc.stderr
    assert f"{out / 'capture.pcapng'}: 11 flows found all 16384 client ports taken" in warnings[0]
    cap = json.loads((out / "summary.json").read_text())["totals"]["capture"]
    assert cap["port_collisions"] == 11
    assert conversations(out / "capture.pcapng", "udp") == RANGE
