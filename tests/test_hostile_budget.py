"""Issue 39, aborts: the memory budget counts every table that grows during a run and reads the
limits the process really has. Before: the drops table of an overloaded link grew until the
process aborted; a 19.9 GB estimate was accepted under a 4 GB `ulimit -v`; any UDP rate from
1e15 bit/s ran ~1e11 events per simulated second until its drops filled the memory. Now the
smallest limit (MemAvailable, RLIMIT_AS, the cgroup's, QUICKSIM_MEMORY_LIMIT) is the budget and
the error names it; a growing table stops at its share and `meta.truncated_tables` says which,
when and why; a rate picosecond time cannot carry is a validation error naming the field."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quicksim
from conftest import PYTHON_DIR, REPO
from quicksim.errors import ScenarioError

pytestmark = pytest.mark.core

GB = 1_000_000_000

# The audit's overloaded link: 100 Gbit/s of UDP into 1 Gbit/s for 2 s (16.6 M drops, 1.9 GB).
OVERLOADED = """
[run]
duration = "2s"
[dumbbell]
pairs = 1
bottleneck = { rate = "1Gbps", delay = "10ms" }
access = { rate = "100Gbps", delay = "1ms" }
[[flows]]
name = "flood"
kind = "udp"
src = "sender1"
dst = "receiver1"
size = "1472B"
rate = "100Gbps"
"""


def _doc() -> dict[str, Any]:
    """OVERLOADED as a document (for the Python API)."""
    return {
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "1Gbps", "delay": "10ms"},
                     "access": {"rate": "100Gbps", "delay": "1ms"}},
        "flows": [{"name": "flood", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1472B",
                   "rate": "100Gbps"}],
    }  # fmt: skip


def _quicksim(
    *args: str, env: dict[str, str] | None = None, address_space: int | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`python -m quicksim ARGS` in a child with `env` added and RLIMIT_AS set (as `ulimit -v`)."""
    full = dict(os.environ)
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), full.get("PYTHONPATH")]))
    full.update(env or {})

    def limit() -> None:
        if address_space is not None:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    return subprocess.run(
        [sys.executable, "-m", "quicksim", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=full,
        timeout=timeout,
        preexec_fn=limit,
    )


def _error_line(p: subprocess.CompletedProcess[str]) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quicksim: error: "), p.stderr[-2000:]
    return lines[0]


@pytest.mark.slow
def test_an_overloaded_links_drops_stop_at_their_share(tmp_path: Path) -> None:
    """The audit's case: SIGABRT with QUICKSIM_MEMORY_LIMIT=500MB (the child here also has a
    3 GB RLIMIT_AS, so an allocation past the budget fails instead of swapping the machine).
    Now the run finishes, the drops table holds its share, summary.json says when and why it
    was cut, and the totals still count every drop."""
    scenario = tmp_path / "overloaded.toml"
    scenario.write_text(OVERLOADED)
    out = tmp_path / "o"
    p = _quicksim(
        "run", str(scenario), "--out", str(out), "-q", "--no-plots",
        env={"QUICKSIM_MEMORY_LIMIT": "500MB"}, address_space=3 * GB,
    )  # fmt: skip
    assert p.returncode == 0, (p.returncode, p.stderr[-3000:])
    summary = json.loads((out / "summary.json").read_text())
    (cut,) = summary["meta"]["truncated_tables"]
    assert cut["table"] == "drops" and 0 < cut["cut_at_s"] < 2.0
    assert "share of the memory budget" in cut["why"] and "QUICKSIM_MEMORY_LIMIT" in cut["why"]
    assert summary["tables"]["drops"] == cut["rows"]
    assert cut["rows"] * 256 <= 500_000_000  # at most the whole budget at the measured row cost
    # The totals are not in the table: every drop is counted (~16.6 M).
    dropped = sum(q["dropped_packets"] for q in summary["queues"].values())
    assert dropped > 16_000_000 > cut["rows"]
    (warning,) = [line for line in p.stderr.splitlines() if "drops table" in line]
    assert warning.startswith("quicksim: warning: the drops table stopped growing at t = ")


def test_a_19_9_gb_estimate_is_refused_under_a_4_gb_ulimit() -> None:
    """The audit's case: a 19.9 GB estimate accepted under `ulimit -v` 4 GB, abort after 3 s.
    udp-bottleneck's 2 flows and 10 link directions take 3072 B a bin; 10 s in bins of
    1.544 us are 6.48 M bins: 19.9 GB. Refused at once, naming RLIMIT_AS."""
    p = _quicksim(
        "run", str(REPO / "scenarios" / "udp-bottleneck.toml"), "--set", "run.record_interval=1.544us",
        "--out", "/nonexistent/never-written", address_space=4 * GB, timeout=120,
    )  # fmt: skip
    line = _error_line(p)
    assert "needs about 19.9 GB of memory" in line, line
    assert "RLIMIT_AS (ulimit -v)" in line and line.startswith("quicksim: error: run.record_interval: "), line


@pytest.mark.parametrize("rate", ["1000Tbps", "100000Tbps", "18446744073709551615bps"])
def test_a_udp_rate_from_1e15_is_a_validation_error(tmp_path: Path, rate: str) -> None:
    """The audit's case: any UDP rate >= 1e15 bit/s aborted (a 1472 B datagram every 12 ps:
    ~1e11 events per simulated second, each drop a row, until the memory ran out)."""
    scenario = tmp_path / "fast.toml"
    scenario.write_text(OVERLOADED.replace('rate = "100Gbps"', f'rate = "{rate}"'))
    for command in ("validate", "run"):
        extra = ("--out", str(tmp_path / "o")) if command == "run" else ()
        line = _error_line(_quicksim(command, str(scenario), *extra, timeout=60))
        assert line.startswith(f'quicksim: error: flows[0].rate: "{rate}" sends a 1472 B datagram every '), (
            line
        )
        assert line.endswith('at most "11776Gbps" for 1472 B datagrams'), line
    assert not (tmp_path / "o").exists()


def test_a_trace_that_cannot_fit_is_refused_before_the_run() -> None:
    """A packet trace of the overloaded flow: its sends alone (17 M rows) are known before the
    run; past the trace's share it is refused at once, naming run.record.packets."""
    doc = _doc()
    doc["run"]["record"] = {"packets": ["flood"]}
    os.environ["QUICKSIM_MEMORY_LIMIT"] = "500MB"
    try:
        with pytest.raises(
            ScenarioError, match=r"^run\.record\.packets: the traced constant-rate flows send"
        ):
            quicksim.validate(doc)
    finally:
        del os.environ["QUICKSIM_MEMORY_LIMIT"]


def _cgroup_v2() -> Path | None:
    root = Path("/sys/fs/cgroup")
    if os.geteuid() != 0 or not (root / "cgroup.controllers").exists():
        return None
    if "memory" not in (root / "cgroup.subtree_control").read_text().split():
        return None
    return root


@pytest.fixture
def memory_cgroup() -> Iterator[Path]:
    root = _cgroup_v2()
    if root is None:
        pytest.skip(
            "needs root and cgroup v2 at /sys/fs/cgroup with the memory controller enabled "
            "(this machine has cgroup v1 or hybrid, or no permission); the reading of v1 and v2 "
            "files is unit-tested in budget/limits.rs"
        )
    group = root / f"quicksim-test-{os.getpid()}"
    group.mkdir()
    try:
        (group / "memory.max").write_text("400000000\n")
        yield group
    finally:
        group.rmdir()


def test_a_cgroup_limit_is_the_budget(memory_cgroup: Path) -> None:
    """A child in a cgroup of 400 MB: a 1.2 GB estimate is refused naming the cgroup."""

    def enter() -> None:
        (memory_cgroup / "cgroup.procs").write_text(str(os.getpid()))

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    p = subprocess.run(
        [sys.executable, "-m", "quicksim", "validate", str(REPO / "scenarios" / "udp-bottleneck.toml"),
         "--set", "run.record_interval=25us"],
        capture_output=True, text=True, env=env, timeout=120, preexec_fn=enter,
    )  # fmt: skip
    line = _error_line(p)
    assert "memory.max minus memory.current" in line and "run.record_interval" in line, line


# The property: rates from 1 kbit/s to 2^64 bit/s, datagram sizes, budgets from 1 MB, and
# which growing tables are recorded; a run is refused with one line naming a field or finishes,
# each cut table holding exactly the rows it says, none past its cut, every drop in the totals.
_FIELDS = ("flows[0].rate", "run.record.packets", "run.record_interval", "dumbbell.pairs")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rate_exp=st.floats(min_value=3.0, max_value=19.26),
    size=st.integers(min_value=1, max_value=1472),
    limit_mb=st.integers(min_value=1, max_value=64),
    drops=st.booleans(),
    queues=st.booleans(),
    trace=st.booleans(),
    max_samples=st.sampled_from([10, 1000, 1_000_000]),
)
def test_no_rate_or_table_setting_aborts(
    rate_exp: float, size: int, limit_mb: int, drops: bool, queues: bool, trace: bool, max_samples: int
) -> None:
    rate = min(int(10**rate_exp), 2**64 - 1)
    doc = _doc()
    doc["run"] = {
        "duration": "50ms",
        "max_events": 30_000,
        "record": {"drops": drops, "queues": queues, "packets": ["flood"] if trace else [],
                   "max_samples": max_samples},
    }  # fmt: skip
    doc["flows"][0].update(size=f"{size}B", rate=f"{rate}bps")
    os.environ["QUICKSIM_MEMORY_LIMIT"] = f"{limit_mb}MB"
    try:
        res = quicksim.run(doc)
    except ScenarioError as e:
        assert "\n" not in str(e) and str(e).startswith(_FIELDS), str(e)
        return
    finally:
        del os.environ["QUICKSIM_MEMORY_LIMIT"]
    tables: dict[str, Callable[[], Any]] = {"drops": lambda: res.drops, "queues": lambda: res.queues,
                                           "packets": lambda: res.packets}  # fmt: skip
    for cut in res.meta["truncated_tables"]:
        frame = tables[cut["table"]]()
        assert len(frame) == cut["rows"] and (frame["t_s"] <= cut["cut_at_s"]).all(), cut
        assert f"{limit_mb}.0 MB available (QUICKSIM_MEMORY_LIMIT)" in cut["why"], cut
    dropped = sum(q["dropped_packets"] for q in res.summary()["queues"].values())
    assert dropped >= len(res.drops)
    if drops and not res.meta["truncated_tables"]:
        assert dropped == len(res.drops)
