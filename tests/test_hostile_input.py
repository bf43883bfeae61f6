"""Hostile input: what cannot fit is refused before it is allocated, numbers and nestings Python
cannot hold are one error line, and the Python API is as strict as the CLI. Each CLI case runs
`quicksim` in a subprocess and checks exit status 2, one line naming the field, no traceback,
and (for the resource limits) a bound on wall time and peak memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import quicksim
from conftest import PYTHON_DIR, REPO

SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return env


# Runs a Python child as `python -m MODULE ...` or `python -c CODE ...` would, and writes its own
# peak RSS (`VmHWM` of /proc/self/status, in KiB) to the file named first when it exits. The
# child's `ru_maxrss` from wait4 is not its own peak on Linux: exec carries the high-water mark
# of the parent's address space over (with vfork, the parent's own), so a test process that once
# held 2 GB saw every small child "peak" at 2 GB.
_HWM_LAUNCHER = """
import atexit, runpy, sys
out = sys.argv[1]
def _hwm():
    with open('/proc/self/status') as f:
        kib = next((line.split()[1] for line in f if line.startswith('VmHWM:')), None)
    if kib is not None:
        with open(out, 'w') as o:
            o.write(kib)
atexit.register(_hwm)
flag, target, *rest = sys.argv[2:]
if flag == '-m':
    sys.argv = [target, *rest]
    runpy.run_module(target, run_name='__main__', alter_sys=True)
else:
    sys.argv = ['-c', *rest]
    exec(compile(target, '<string>', 'exec'), {'__name__': '__main__'})
"""


def _measured(args: list[str], timeout: float) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """Run a Python command (`[python, -m|-c, ...]`); returns the process, its wall time and its
    own peak RSS in bytes (the child's VmHWM at exit; ru_maxrss if it was killed before)."""
    import tempfile
    import threading

    assert args[0] == sys.executable and args[1] in ("-m", "-c"), args
    with (
        tempfile.TemporaryFile("w+") as out,
        tempfile.TemporaryFile("w+") as err,
        tempfile.TemporaryDirectory() as tmp,
    ):
        hwm = Path(tmp) / "hwm"
        launched = [sys.executable, "-c", _HWM_LAUNCHER, str(hwm), *args[1:]]
        started = time.monotonic()
        proc = subprocess.Popen(launched, stdout=out, stderr=err, text=True, cwd=REPO, env=_env())
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # reaped here, with its own resource usage
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(args, proc.returncode, out.read(), err.read())
        peak_kib = int(hwm.read_text()) if hwm.exists() else usage.ru_maxrss
    return done, wall, peak_kib * 1024


def _quicksim(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """Run the CLI; returns the process, its wall time and its peak RSS in bytes (Linux)."""
    return _measured([sys.executable, "-m", "quicksim", *args], timeout)


def _error_line(p: subprocess.CompletedProcess[str]) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quicksim: error: "), p.stderr[-2000:]
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    return lines[0]


@pytest.mark.parametrize("interval", ["1ps", "10ns"])
def test_tiny_record_interval_is_refused_fast_and_small(interval: str, tmp_path: Path) -> None:
    p, wall, peak = _quicksim(
        "run", str(SCENARIO), "--set", "run.duration=1s", "--set", f"run.record_interval={interval}",
        "--out", str(tmp_path / "o"),
    )  # fmt: skip
    line = _error_line(p)
    assert line.startswith(f'quicksim: error: run.record_interval: "{interval}" on a 1s run makes '), line
    assert wall < 30 and peak < 1_500_000_000, (wall, peak)
    # Through the Python API the interpreter survives, with the same error.
    with pytest.raises(quicksim.ScenarioError, match=r"run\.record_interval"):
        quicksim.run(SCENARIO, sets=["run.duration=1s", f"run.record_interval={interval}"])


def test_memory_limit_is_configurable(tmp_path: Path) -> None:
    env = {"QUICKSIM_MEMORY_LIMIT": "1MB"}
    os.environ.update(env)
    try:
        with pytest.raises(
            quicksim.ScenarioError, match=r"run.record_interval: .* more than the 1.0 MB available"
        ):
            quicksim.validate(SCENARIO, sets=["run.record_interval=1ms"])
    finally:
        del os.environ["QUICKSIM_MEMORY_LIMIT"]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_huge_numbers_and_deep_nesting_are_one_error_line(tmp_path: Path) -> None:
    base = SCENARIO.read_text()
    digits = "9" * 5000
    files = {
        "digits.toml": base.replace("pairs = ", f"pairs = {digits} #"),
        "digits4000.toml": base.replace("pairs = ", f"pairs = {'9' * 4000} #"),
        "deep.toml": base + "\n[extra]\nx = " + "[" * 5000 + "]" * 5000 + "\n",
        "digits.json": json.dumps({"run": {"duration": "1s"}})[:-1] + f', "x": {digits}}}',
        "deep.json": '{"run": ' + "[" * 5000 + "]" * 5000 + "}",
    }
    for name, text in files.items():
        line = _error_line(_quicksim("validate", str(_write(tmp_path, name, text)))[0])
        assert "digits" in line or "nested more than 64 levels" in line, (name, line)
    deep_set = "x=" + "[" * 5000 + "]" * 5000
    for override in (
        f"dumbbell.pairs={digits}",
        f"dumbbell.pairs={'9' * 300}",
        deep_set,
        "a" + ".a" * 3000 + "=1",
    ):
        line = _error_line(_quicksim("validate", str(SCENARIO), "--set", override)[0])
        assert "pairs" in line or "nested" in line or "override" in line or "seed" in line, (override, line)
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(quicksim.ScenarioError, match="nested more than 64 levels"):
        quicksim.validate({"run": {"duration": "1s"}, "x": deep})


def test_non_finite_numbers_name_the_field(tmp_path: Path) -> None:
    p = _quicksim(
        "validate", str(SCENARIO), "--set", 'dumbbell.bottleneck.loss={ kind = "bernoulli", p = nan }'
    )[0]
    assert "dumbbell.bottleneck.loss.p: nan is not a finite number" in _error_line(p)
    with pytest.raises(quicksim.ScenarioError, match=r"flows\[0\]\.x: inf is not a finite number"):
        quicksim.validate({"run": {"duration": "1s"}, "flows": [{"x": float("inf")}]})


@pytest.mark.parametrize(
    "seed", [-1, 2**64, 10**5000, "3", 1.5, True], ids=["-1", "2^64", "10^5000", "str", "float", "bool"]
)
def test_python_seed_is_checked(seed: Any) -> None:
    with pytest.raises(quicksim.ScenarioError, match="seed"):
        quicksim.run(SCENARIO, seed=seed, sets=["run.duration=3s"])


@pytest.mark.parametrize("seed", [-1, 2**64, "3", 1.5, True], ids=["-1", "2^64", "str", "float", "bool"])
def test_python_sweep_seed_is_checked(seed: Any) -> None:
    # As strict as quicksim.run: refused before any run, naming the argument or the [sweep] key.
    with pytest.raises(quicksim.ScenarioError, match=r"^seed: "):
        quicksim.sweep(SCENARIO, seed=seed, progress=False, jobs=1)
    doc = quicksim.load_scenario(SCENARIO)
    doc["sweep"] = {"seed": seed}
    with pytest.raises(quicksim.ScenarioError, match=r"^sweep\.seed: "):
        quicksim.sweep(doc, progress=False, jobs=1)


def test_python_sweep_sets_as_one_string() -> None:
    res = quicksim.sweep(SCENARIO, sets="run.duration=1s", progress=False, jobs=1)
    assert len(res.runs) == 1 and res.runs["error"].isna().all()


def test_python_sets_as_one_string() -> None:
    r = quicksim.run(SCENARIO, sets="run.duration=3s")
    assert r.meta["sim_end_s"] == pytest.approx(3.0)
    with pytest.raises(quicksim.ScenarioError, match="is not a KEY=VALUE string"):
        quicksim.run(SCENARIO, sets=[1])  # type: ignore[list-item]


def test_flow_name_with_a_dot_is_settable_by_name(tmp_path: Path) -> None:
    text = SCENARIO.read_text().replace('name = "cbr"', 'name = "a.b"')
    assert '"a.b"' in text
    path = _write(tmp_path, "dotted.toml", text)
    got = quicksim.validate(path, sets=["flows.a.b.start=0.25s"])
    assert [f["start"] for f in got["flows"] if f["name"] == "a.b"] == ["250ms"]


def test_out_pointing_at_a_file_exits_2(tmp_path: Path) -> None:
    f = _write(tmp_path, "file", "x")
    assert "--out" in _error_line(_quicksim("run", str(SCENARIO), "--out", str(f))[0])
    assert "--out" in _error_line(
        _quicksim("sweep", str(REPO / "examples" / "ack-ratio-sweep.toml"), "--out", str(f))[0]
    )


def test_unfinished_flow_says_why_on_the_terminal(tmp_path: Path) -> None:
    sc = {
        "run": {"duration": "1s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "1Mbps", "delay": "10ms"}},
        "flows": [
            {
                "name": "big",
                "kind": "quic",
                "app": "bulk",
                "bytes": "10MB",
                "src": "sender1",
                "dst": "receiver1",
            }
        ],
    }
    path = _write(tmp_path, "bulk.json", json.dumps(sc))
    p = _quicksim("run", str(path), "--out", str(tmp_path / "o"), "--no-plots")[0]
    assert p.returncode == 0, p.stderr
    assert "quicksim: flow big did not finish: still sending at the end of the run (" in p.stderr
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["meta"]["unfinished_flows"]["big"].startswith("still sending")


@pytest.mark.slow
def test_ctrl_c_twice_during_a_sweep_prints_no_traceback(tmp_path: Path) -> None:
    plan = _write(
        tmp_path,
        "plan.toml",
        f'scenario = {str(SCENARIO)!r}\n[sweep]\nrepeat = 4\nmetrics = ["goodput"]\n'
        '[sweep.params]\n"run.duration" = ["3000s"]\n"flows.poisson.stop" = ["3000s"]\n',
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "quicksim", "sweep", str(plan), "--out", str(out), "-j", "2", "--no-plots"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (out / "plan.json").exists():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.5)  # the pool is running (each run takes seconds)
        assert proc.poll() is None, "the sweep ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr


@pytest.mark.slow
def test_hundred_thousand_pair_dumbbell_runs_a_second(tmp_path: Path) -> None:
    """The routing table was dense over node pairs (160 GB for 200,002 nodes); now it is linear."""
    pairs = 100_000
    sc = {
        "run": {"duration": "1s", "record": {"queues": False}},
        "dumbbell": {"pairs": pairs, "bottleneck": {"rate": "1Gbps", "delay": "10ms"}},
        "flows": [
            {"name": f"f{i}", "kind": "udp", "src": f"sender{i}", "dst": f"receiver{i}",
             "size": "1000B", "interval": "100ms"}
            for i in range(1, pairs + 1, 1000)
        ],
    }  # fmt: skip
    path = _write(tmp_path, "big.json", json.dumps(sc))
    code = (
        "import sys, time, quicksim; t = time.monotonic(); r = quicksim.run(sys.argv[1]); "
        "print(time.monotonic() - t, len(r.links), int(r.flows['delivered_bytes'].sum()))"
    )
    p, wall, peak = _measured([sys.executable, "-c", code, str(path)], timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    _, links, delivered = p.stdout.split()
    print(f"100,000 pairs, 1 s: {wall:.1f} s wall, peak RSS {peak / 1e9:.2f} GB")
    # 2 directions x (1 bottleneck + 2 x pairs links) x 2 bins of 0.5 s.
    assert int(links) == 2 * (1 + 2 * pairs) * 2
    # 100 flows x 10 datagrams of 1000 B each (at 0, 100, ..., 900 ms), all delivered.
    assert int(delivered) == 100 * 10 * 1000
    assert peak < 4_000_000_000, peak
