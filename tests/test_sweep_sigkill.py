"""A sweep killed with SIGKILL leaves no worker behind (issue 19: two ~150 MB workers were still
running, parentless, 12 minutes after their sweep was killed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCENARIO = Path(__file__).resolve().parent.parent / "scenarios" / "linksharing.toml"


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text(encoding="ascii") if (task / "children").exists() else ""
        out |= {int(c) for c in text.split()}
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
def test_workers_exit_when_their_sweep_is_killed(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'scenario = "{SCENARIO.as_posix()}"\n[sweep]\nrepeat = 40\nmetrics = ["goodput_mbps"]\n',
        encoding="utf-8",
    )
    argv = [
        sys.executable,
        "-m",
        "quicksim",
        "sweep",
        str(plan),
        "--out",
        str(tmp_path / "o"),
        "-j",
        "2",
        "-q",
    ]
    sweep = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and len(workers) < 2:
            workers = {w for w in _children(sweep.pid) if _alive(w)}
            time.sleep(0.2)
        assert len(workers) >= 2, "the sweep did not start its workers"
        time.sleep(1.0)  # the workers are inside their first runs
        os.kill(sweep.pid, signal.SIGKILL)
        sweep.wait(timeout=30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        survivors = [w for w in workers if _alive(w)]
        assert not survivors, f"workers {survivors} outlived their sweep"
    finally:
        for w in workers:
            if _alive(w):
                os.kill(w, signal.SIGKILL)
        if sweep.poll() is None:
            sweep.kill()
