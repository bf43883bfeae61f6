"""Trace-driven links from the Python side: the bundled traces are what scripts/make_traces.py
makes, a trace file is found relative to its scenario file, a bad trace file is one error line
naming the file and the line (exit status 2), and the bundled trace scenario runs."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import quicksim
from conftest import load_script

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "python" / "quicksim" / "scenarios" / "traces"


def _make_traces() -> ModuleType:
    return load_script("make_traces")


def test_the_bundled_traces_are_what_the_script_makes(tmp_path: Path) -> None:
    mod = _make_traces()
    assert mod.main(["make_traces.py", str(tmp_path)]) == 0
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(p.name for p in TRACES.glob("*.mm"))
    for name in made:
        assert (tmp_path / name).read_bytes() == (TRACES / name).read_bytes(), name


def test_the_patterns_hold_their_rates() -> None:
    # Square wave: 20 Mbit/s for 1.5 s = 2500 opportunities of 1500 B, 2 Mbit/s for 1.5 s = 250.
    sq = [int(x) for x in (TRACES / "square-20-2mbps.mm").read_text().split()]
    assert sum(t <= 1500 for t in sq) == 2500 and sum(t > 1500 for t in sq) == 250 and sq[-1] == 3000
    assert (TRACES / "constant-12mbps.mm").read_text() == "1\n"
    walk = [int(x) for x in (TRACES / "cellular-walk.mm").read_text().split()]
    assert walk == sorted(walk) and walk[-1] == 20_000
    per_s = [sum((t - 1) // 1000 == s for t in walk) * 12_000 / 1e6 for s in range(20)]
    assert min(per_s) >= 1 and max(per_s) <= 40  # Mbit/s, the walk's bounds


def _scenario(trace_file: str) -> str:
    return f"""
[run]
duration = "1s"
[dumbbell]
pairs = 1
bottleneck = {{ delay = "5ms", overhead = "0B", model = {{ kind = "trace", file = "{trace_file}" }} }}
[[flows]]
name = "u"
kind = "udp"
src = "sender1"
dst = "receiver1"
size = "1472B"
rate = "20Mbps"
"""


@pytest.mark.core
def test_a_trace_is_found_relative_to_its_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "two.mm").write_text("1\n1\n")  # 2 x 1500 B per ms: 24 Mbit/s
    (tmp_path / "s.toml").write_text(_scenario("sub/two.mm"))
    monkeypatch.chdir(REPO)  # not the scenario's folder
    doc = quicksim.validate(tmp_path / "s.toml")
    assert doc["dumbbell"]["bottleneck"]["model"]["file"] == str(tmp_path / "sub" / "two.mm")
    res = quicksim.run(tmp_path / "s.toml")
    # 20 Mbit/s of 1500 B datagrams (1666.7 per s) below the trace's 2000 per s: all delivered
    # but those still on their way at the end (a 5 ms path).
    t = res.totals["flows"]["u"]
    assert t["packets_sent"] - t["packets_delivered"] <= 10
    assert res.totals["links"]["bottleneck:router1->router2"]["packets"] == t["packets_delivered"]


@pytest.mark.core
def test_a_bad_trace_is_one_line_naming_file_and_line(
    tmp_path: Path, cli: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    (tmp_path / "bad.mm").write_text("1\n2\n\n3\n")
    (tmp_path / "s.toml").write_text(_scenario("bad.mm"))
    p = cli("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    expect = f'dumbbell.bottleneck.model.file: "{tmp_path / "bad.mm"}": line 3: an empty line'
    assert lines[0].startswith(f"quicksim: error: {expect}"), lines[0]


@pytest.mark.core
def test_the_bundled_trace_scenario_runs(tmp_path: Path) -> None:
    res = quicksim.run("trace-cellular", sets=["run.duration=3s"])
    util = res.totals["links"]["bottleneck:router1->router2"]["utilization"]
    assert 0.5 < util < 1.5
    assert Path(res.scenario["dumbbell"]["bottleneck"]["forward"]["model"]["file"]).is_file()
