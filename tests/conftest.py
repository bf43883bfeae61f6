"""Shared fixtures: a hand-made core result (no compiled core needed) and a CLI runner."""

from __future__ import annotations

import copy
import importlib.util
import json
import math
import os
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
PYTHON_DIR = REPO / "python"


def load_script(name: str) -> types.ModuleType:
    """`scripts/<name>.py` as a module (the scripts are not a package), for their tests."""
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# A 3 s run with 0.5 s bins. sender1 (QUIC, active 0.5..2.5 s) delivers 0, 1, 2, 2, 1, 0 Mbit/s;
# its rows for the idle bins 0.0 and 2.5 are missing on purpose (they must read as zero).
# bg (UDP, whole run) delivers 6250 B per bin = 0.1 Mbit/s.
DELAY_COLUMNS = ("owd_mean_s", "owd_p50_s", "owd_p95_s", "owd_p99_s", "queueing_mean_s", "queueing_p95_s")

_RAW: dict[str, Any] = {
    "meta": {
        "seed": 7,
        "duration_s": 3.0,
        "events": 12345,
        "wall_s": 0.01,
        "sim_end_s": 3.0,
        "scenario_hash": "ab12cd34",
        "version": "0.1.0",
        "stopped_early": False,
        "record_interval_s": 0.5,
    },
    "tables": {
        "flows": {
            "flow": ["bg", "bg", "sender1", "bg", "sender1", "bg", "sender1", "bg", "sender1", "bg"],
            "t_s": [0.0, 0.5, 0.5, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0, 2.5],
            "app_sent_bytes": [6250, 6250, 80000, 6250, 130000, 6250, 130000, 6250, 65000, 6250],
            "wire_sent_bytes": [6500, 6500, 70000, 6500, 130000, 6500, 130000, 6500, 65000, 6500],
            "sent_packets": [10, 10, 56, 10, 104, 10, 104, 10, 52, 10],
            "wire_recv_bytes": [6500, 6500, 67500, 6500, 130000, 6500, 130000, 6500, 65000, 6500],
            "recv_packets": [10, 10, 54, 10, 104, 10, 104, 10, 52, 10],
            "delivered_bytes": [6250, 6250, 62500, 6250, 125000, 6250, 125000, 6250, 62500, 6250],
            # The delay statistics (run.record.delays): not recorded here, NaN in every bin.
            **{c: [math.nan] * 10 for c in DELAY_COLUMNS},
        },
        "queues": {
            "t_s": [0.6, 0.7, 0.8, 1.0, 2.0],
            "queue": ["bottleneck:router1->router2"] * 5,
            "packets": [1, 5, 10, 3, 0],
            "bytes": [1250, 6250, 12500, 3750, 0],
        },
        "drops": {
            "t_s": [0.75, 0.76, 1.9],
            "queue": ["bottleneck:router1->router2"] * 3,
            "flow": ["sender1", "sender1", "bg"],
            "bytes": [1250, 1250, 600],
            "reason": ["overflow", "overflow", "overflow"],
        },
        "links": {
            "t_s": [0.0, 0.5, 1.0, 1.5, 2.0, 2.5],
            "link": ["bottleneck:router1->router2"] * 6,
            "bytes": [6400, 70000, 131000, 131000, 70000, 6400],
            "utilization": [0.01, 0.11, 0.21, 0.21, 0.11, 0.01],
            **{c: [math.nan] * 6 for c in ("queueing_mean_s", "queueing_p95_s", "queueing_p99_s")},
        },
        "conn": {
            "t_s": [0.5, 0.6, 0.75, 0.8, 1.5],
            "flow": ["sender1"] * 5,
            "cwnd_bytes": [12000, 24000, 48000, 24000, 30000],
            "ssthresh_bytes": [-1, -1, -1, 24000, 24000],
            "inflight_bytes": [0, 12000, 40000, 20000, 25000],
            "srtt_s": [0.0, 0.021, 0.025, 0.03, 0.022],
            "latest_rtt_s": [0.0, 0.021, 0.028, 0.032, 0.021],
            "min_rtt_s": [0.0, 0.021, 0.021, 0.021, 0.021],
        },
        "packets": {"t_ps": [], "t_s": [], "flow": [], "node": [], "uid": [], "bytes": [], "event": []},
    },
    "totals": {
        "flows": {
            "sender1": {
                "kind": "quic",
                "src": "sender1",
                "dst": "receiver1",
                "start_s": 0.5,
                "stop_s": 2.5,
                "app_sent_bytes": 405000,
                "wire_sent_bytes": 395000,
                "delivered_bytes": 375000,
                "packets_sent": 330,
                "packets_delivered": 312,
                "packets_dropped": 2,
                "completion_time_s": None,
                "quic": {
                    "packets_sent": 330,
                    "packets_acked": 312,
                    "packets_lost": 2,
                    "retransmitted_bytes": 2500,
                    "ack_frames_sent": 160,
                },
            },
            "bg": {
                "kind": "udp",
                "src": "background_sender",
                "dst": "background_receiver",
                "start_s": 0.0,
                "stop_s": None,
                "app_sent_bytes": 37500,
                "wire_sent_bytes": 39000,
                "delivered_bytes": 37500,
                "packets_sent": 60,
                "packets_delivered": 59,
                "packets_dropped": 1,
                "completion_time_s": None,
            },
        },
        "queues": {
            "bottleneck:router1->router2": {
                "enqueued_packets": 387,
                "dropped_packets": 3,
                "dropped_bytes": 3100,
                "max_packets": 10,
                "max_bytes": 12500,
                "mean_packets": 2.5,
            }
        },
        "links": {
            "bottleneck:router1->router2": {"bytes": 414800, "packets": 384, "utilization": 0.11},
            "access:router2->receiver1": {"bytes": 0, "packets": 0, "utilization": 0.0},
        },
    },
}

SCENARIO: dict[str, Any] = {
    "run": {"duration": "3s", "seed": 7, "record_interval": "500ms"},
    "dumbbell": {
        "pairs": 1,
        "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"bytes": "25kB"}},
        "access": {"rate": "1Gbps", "delay": "0s"},
    },
    "flows": [
        {
            "name": "sender1",
            "kind": "quic",
            "src": "sender1",
            "dst": "receiver1",
            "start": "0.5s",
            "stop": "2.5s",
        },
        {
            "name": "bg",
            "kind": "udp",
            "src": "background_sender",
            "dst": "background_receiver",
            "size": "625B",
        },
    ],
}


@pytest.fixture
def raw_result() -> dict[str, Any]:
    """What `_core.run` would return for SCENARIO (a fresh deep copy)."""
    return copy.deepcopy(_RAW)


@pytest.fixture
def scenario() -> dict[str, Any]:
    """A scenario dict in the TOML schema (a fresh deep copy)."""
    return copy.deepcopy(SCENARIO)


@pytest.fixture
def result(raw_result: dict[str, Any], scenario: dict[str, Any]) -> Any:
    """A Result built from the hand-made core output."""
    from quicksim.results import Result

    return Result(raw_result, scenario=scenario, name="handmade")


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run `python -m quicksim ARGS...` in a subprocess with the source tree on the path."""

    def run(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
        return subprocess.run(
            [sys.executable, "-m", "quicksim", *args],
            capture_output=True,
            text=True,
            cwd=cwd or REPO,
            env=env,
            timeout=timeout,
        )

    return run


# --- a stand-in for quicksim._core ---------------------------------------------------------


class PanicException(BaseException):
    """Same name and base as pyo3_runtime.PanicException."""


class FakeCore(types.ModuleType):
    """Records calls; `behaviour` can replace what run() does."""

    class ScenarioError(ValueError):
        pass

    class SimulationError(RuntimeError):
        pass

    def __init__(self, raw: dict[str, Any]) -> None:
        super().__init__("fake_core")
        self.raw = raw
        self.calls: list[tuple[str, Any]] = []
        self.behaviour: Callable[..., dict[str, Any]] | None = None

    def validate(self, scenario_json: str) -> str:
        doc = json.loads(scenario_json)
        self.calls.append(("validate", doc))
        if "bogus" in doc:
            raise self.ScenarioError('bogus: unknown field "bogus"')
        doc.setdefault("run", {}).setdefault("record_interval", "500ms")
        return json.dumps(doc)

    def normalize(self, scenario_json: str) -> str:
        """`validate` without the build; not recorded (`calls` lists what was checked or run)."""
        doc = json.loads(scenario_json)
        doc.setdefault("run", {}).setdefault("record_interval", "500ms")
        return json.dumps(doc)

    def run(
        self,
        scenario_json: str,
        seed: int | None = None,
        progress: Any = None,
        controllers: Any = None,
        out_dir: str | None = None,
    ) -> dict[str, Any]:
        """As `_core.run`; `controllers` (Python controllers) and `out_dir` (where a capture
        would go) are accepted and not recorded."""
        self.calls.append(("run", (json.loads(scenario_json), seed, progress)))
        if self.behaviour is not None:
            return self.behaviour(scenario_json, seed, progress)
        out = copy.deepcopy(self.raw)
        out["meta"]["seed"] = 42 if seed is None else seed
        return out


@pytest.fixture
def core(raw_result: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> FakeCore:
    """Install a FakeCore in place of the compiled core (for in-process tests)."""
    from quicksim import api

    fake = FakeCore(raw_result)
    monkeypatch.setattr(api, "_load_core", lambda: fake)
    return fake
