"""Bad input gets one clear error naming the field and the value: from the CLI (exit status 2,
one line, no traceback) and from Python (a quicksim.ScenarioError, never a Rust panic)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import quicksim

pytestmark = pytest.mark.core

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "udp-bottleneck.toml"

CASES = [
    # (override, fragment the message must contain)
    ("dumbbell.bottleneck.rte=1Mbps", "dumbbell.bottleneck.rte: unknown field `rte`"),
    ('dumbbell.bottleneck.rate="10 Mbs"', 'dumbbell.bottleneck.rate: "10 Mbs" is not a rate; try "10Mbps"'),
    ("dumbbell.bottleneck.rate=-10Mbps", 'dumbbell.bottleneck.rate: "-10Mbps" is negative'),
    ("flows.cbr.dst=router1", 'flows[0].dst: "router1" is a router'),
    ("dumbbell.mtu=20B", "dumbbell.mtu: 20 B is smaller than the IPv4 + UDP headers"),
    ("dumbbell.bottleneck.queue.packets=0", "dumbbell.bottleneck.queue.packets: 0"),
    ("run.duration=10", 'run.duration: "10" needs a unit'),
    ("flows.cbr.size=1500B", "flows[0].size: 1500 B + 28 B of headers exceeds the path MTU 1500 B"),
]


@pytest.mark.parametrize(("override", "fragment"), CASES)
def test_python_raises_scenario_error(override: str, fragment: str) -> None:
    with pytest.raises(quicksim.ScenarioError) as e:
        quicksim.run(SCENARIO, sets=[override])
    assert fragment in str(e.value)


@pytest.mark.parametrize(("override", "fragment"), CASES[:3])
def test_cli_exit_2_one_line(override: str, fragment: str, tmp_path: Path) -> None:
    p = subprocess.run(
        [sys.executable, "-m", "quicksim", "run", str(SCENARIO), "--set", override, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quicksim: error: "), p.stderr
    assert fragment in lines[0]
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr


def test_unconnected_flow(tmp_path: Path) -> None:
    sc = {
        "run": {"duration": "1s"},
        "nodes": {"a": {"kind": "host"}, "b": {"kind": "host"}, "c": {"kind": "host"}},
        "links": [{"name": "l", "a": "a", "b": "b", "rate": "1Mbps"}],
        "flows": [{"name": "f", "kind": "udp", "src": "a", "dst": "c", "size": "100B", "interval": "10ms"}],
    }
    with pytest.raises(quicksim.ScenarioError, match=r'flows\[0\]\.dst: "c" is not connected to "a"'):
        quicksim.run(sc)


def test_ctrl_c_interrupts_a_python_run_without_callback(tmp_path: Path) -> None:
    # The core releases the GIL; without a progress callback it still checks for signals, so
    # Ctrl-C in a script or notebook stops a long run promptly.
    script = tmp_path / "long.py"
    script.write_text(
        "import quicksim, time\n"
        "t = time.time()\n"
        "try:\n"
        "    quicksim.run('mathis', sets=['run.duration=5000s'])\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', round(time.time() - t, 1))\n"
    )
    import signal
    import time

    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    time.sleep(2.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert out.startswith("interrupted"), out
    assert float(out.split()[1]) < 10.0
