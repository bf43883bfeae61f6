"""quinn-real-vs-model (docs/emulation.md, "QUIC: quinn-peer"): the scenarios and the grading
by hand, the skip without root, and `quinn-peer` through a 10 Mbit/s emulated link, after which
nothing may be left (namespaces, devices, processes). The program's own error paths are
crates/quicksim-quinn/tests/it. Cases that need root, network namespaces, /dev/net/tun or the
program skip, saying which is missing (CI runs as root and builds the program)."""

from __future__ import annotations

import json
import math
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import quicksim
from quicksim import reproduce as rp
from quicksim.emulate import netns
from quicksim.reproduce import quinn_real_vs_model as qr

WHY_NOT = qr.why_not()
PROG, NO_PROG = qr.binary() if WHY_NOT is None else (None, "")
needs_real_side = pytest.mark.skipif(
    WHY_NOT is not None or PROG is None, reason=WHY_NOT or NO_PROG or "quinn-peer not found"
)


def test_registered() -> None:
    assert rp.module("quinn-real-vs-model") is qr


def test_commands_carry_the_quinn_table_and_the_seed() -> None:
    p = qr.Point(10, 20, "newreno")
    server, client = qr.commands(Path("/opt/q p/quinn-peer"), p, 8)
    # As the emulator splits them ({dst} filled in): the JSON survives the quoting.
    s, c = (shlex.split(x.replace("{dst}", "10.0.0.4")) for x in (server, client))
    cfg = ["--config", '{"cc":"newreno"}', "--seed", "1"]
    assert s == ["/opt/q p/quinn-peer", "server", "--listen", "10.0.0.4:4433", *cfg]
    assert c[:6] == ["/opt/q p/quinn-peer", "client", "--connect", "10.0.0.4:4433", "-t", "8"]
    assert json.loads(c[c.index("--config") + 1]) == {"cc": "newreno"}
    assert p.buffer_packets == 17  # 10 Mbit/s x 20 ms / 1500 B = 16.7


def test_model_scenario_is_the_real_one_with_a_quinn_flow(tmp_path: Path) -> None:
    p = qr.Point(20, 50, "cubic")
    real = qr.real_scenario(Path("/bin/true"), p, 8)
    model = qr.model_scenario(p, 8, 0.512)
    assert real["dumbbell"] == model["dumbbell"]
    assert real["run"]["clock"] == "real" and "clock" not in model["run"]
    f = model["flows"][0]
    assert (f["kind"], f["start"], f["stop"], f["stop_mode"]) == ("quinn", "0.512000s", "8.512000s", "send")
    assert f["quinn"] == p.quinn
    quicksim.validate(real)
    r = quicksim.run(model)
    mbps = r.totals["flows"]["f1"]["delivered_bytes"] * 8 / 8 / 1e6
    # Saturated for 8 s through 20 Mbit/s: most of the UDP payload's share of the rate.
    assert 0.85 * 20 < mbps < 20 * 1472 / 1500


def _run(point: str, real: float, model: float, trusted: bool = True, error: str = "") -> dict[str, Any]:
    return {
        "point": point,
        "error": error,
        "real_mbps": real,
        "model_mbps": model,
        "real_trusted": trusted,
        "rate_mbps": 10.0,
    }


def test_points_are_graded_on_their_trusted_runs_only() -> None:
    runs = pd.DataFrame(
        [
            _run("a", 9.9, 10.0),
            _run("a", 5.0, 10.0, trusted=False),  # not graded
            _run("b", 9.0, 10.0),
            _run("c", 9.0, 10.0, trusted=False),
            _run("d", math.nan, math.nan, error="boom"),
        ]
    )
    t = qr.points_table(runs).set_index("point")
    assert list(t["grade"]) == ["within", "outside", "untrusted", "failed"]
    assert t.loc["a", "real_mbps"] == pytest.approx(9.9) and t.loc["a", "trusted"] == 1
    assert t.loc["b", "mbps_diff"] == pytest.approx(-0.1)


def test_skipped_without_the_real_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qr, "why_not", lambda: "not root: network namespaces and TUN devices need root")
    report = rp.reproduce("quinn-real-vs-model", tmp_path, quick=True)
    assert report.ok and report.checks == []
    text = (tmp_path / "quinn-real-vs-model" / "report.md").read_text()
    assert "## Skipped" in text and "not root" in text


def test_a_missing_program_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(qr.ENV_BINARY, str(tmp_path / "nothing"))
    assert qr.binary() == (None, f"{qr.ENV_BINARY}={tmp_path / 'nothing'}: no such file")


def _leftovers() -> tuple[list[str], list[str], list[str]]:
    ours = [n for n in netns.namespaces() if n.startswith(netns.PREFIX)]
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    devices = [line for line in links.splitlines() if ": qs" in line]
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    return ours, devices, [a for a in ps if "quinn-peer " in a and "pytest" not in a]


@needs_real_side
@pytest.mark.slow
def test_quinn_peer_through_a_10_mbit_link(tmp_path: Path) -> None:
    assert PROG is not None
    p = qr.Point(10, 20, "cubic")
    m = qr.real_run(PROG, p, 4.0, tmp_path / "real")
    assert _leftovers() == ([], [], [])
    assert m.get("error", "") == "", m
    # Goodput over the 4 s (handshake and slow start included) within 10 % of the link's
    # 10 Mbit/s; at most the UDP payload's share (1472 of 1500 B), which no timing error can
    # exceed. Measured here: 9.36-9.46 Mbit/s in three runs at a load average of 12 (the model:
    # 9.49); 9.0 leaves room for a busier machine.
    assert 9.0 <= m["mbps"] <= 10 * 1472 / 1500, m
    assert m["server_ended_by"] in ("close", "client reset", "client silent")
    assert 0 < m["queue_mean_ms"] < 17 * 1.2 * 1.05  # a 17-packet queue at 10 Mbit/s holds 20.4 ms
    assert m["min_rtt_ms"] >= 20 + 1.2  # the base RTT and a packet's serialization: a floor
    out = json.loads((tmp_path / "real" / "f1.server.stdout").read_text().splitlines()[-1])
    assert out["quinn"]["udp_payload"] == 1472
    # Against the same stack in virtual time (the reproduction's goal is 3 % at trusted runs;
    # here, one short run on a shared machine, 10 %).
    model = qr.model_run(p, 4.0, m["start_s"])
    assert abs(m["mbps"] / model["mbps"] - 1) <= 0.10, (m, model)


@needs_real_side
def test_a_failing_program_is_an_error_row(tmp_path: Path) -> None:
    # A client that refuses its --config: the emulator's one line names the flow and its output.
    bad = qr.Point(10, 20, "vegas")
    m = qr.real_run(PROG or Path("quinn-peer"), bad, 1.0, tmp_path / "bad")
    assert "flow f1" in m["error"] and "f1.client.stderr" in m["error"], m
    assert "unknown variant `vegas`" in (tmp_path / "bad" / "f1.client.stderr").read_text()
    assert _leftovers() == ([], [], [])
