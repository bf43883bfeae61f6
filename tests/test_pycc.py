"""Congestion controllers written in Python (`quicksim.cc`): NewReno and CUBIC re-written in
Python (tests/pycc_algos.py) give bit-identical runs to the Rust ones over QUIC and TCP; settings,
registration, sweeps (local processes and a real Dask cluster on loopback); errors in user code
stop the run with one line naming the controller, the callback and the simulated time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import quicksim
from conftest import PYTHON_DIR, REPO
from quicksim import cc

pytestmark = pytest.mark.core

TESTS = Path(__file__).resolve().parent
LINKSHARING = REPO / "scenarios" / "linksharing.toml"
LINKSHARING_TCP = REPO / "scenarios" / "linksharing-tcp.toml"
TCP_NEWRENO = "per_ack_increase = true, ssthresh_from_flight = true"


def _same(a: quicksim.Result, b: quicksim.Result) -> None:
    """Bit-identical runs: the event trace, and every table the run records."""
    assert a.meta["trace_hash"] == b.meta["trace_hash"]
    assert a.meta["events"] == b.meta["events"]
    for table in ("flows", "conn", "queues", "drops"):
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table))
    assert a.hash() == b.hash()


@pytest.mark.parametrize(
    ("scenario", "rust", "python"),
    [
        (LINKSHARING, 'quic.cc="newreno"', 'quic.cc="py:pycc_algos:PyNewReno"'),
        (LINKSHARING, 'quic.cc="cubic"', 'quic.cc="py:pycc_algos:PyCubic"'),
        (
            LINKSHARING_TCP,
            f'tcp.cc={{algo="newreno", {TCP_NEWRENO}}}',
            f'tcp.cc={{algo="py:pycc_algos:PyNewReno", {TCP_NEWRENO}}}',
        ),
        (LINKSHARING_TCP, 'tcp.cc="cubic"', 'tcp.cc="py:pycc_algos:PyCubic"'),
    ],
    ids=["quic-newreno", "quic-cubic", "tcp-newreno", "tcp-cubic"],
)
def test_python_newreno_and_cubic_are_bit_identical_to_rust(scenario: Path, rust: str, python: str) -> None:
    a = quicksim.run(scenario, sets=[rust])
    b = quicksim.run(scenario, sets=[python], allow_python=True)
    _same(a, b)
    # Not vacuous: the controllers saw losses and grew again (the conn table moves).
    assert a.conn["ssthresh_bytes"].min() < 2**62 and a.conn["cwnd_bytes"].nunique() > 100


def test_settings_reach_the_constructor_and_registration_works() -> None:
    from pycc_algos import PyCubic

    rust = quicksim.run(LINKSHARING, sets=['quic.cc={algo="cubic", beta=0.5, c=0.8}', "run.duration=20s"])
    cc.register("pycubic", PyCubic)
    try:
        py = quicksim.run(LINKSHARING, sets=['quic.cc={algo="pycubic", beta=0.5, c=0.8}', "run.duration=20s"])
    finally:
        cc.unregister("pycubic")
    _same(rust, py)
    default = quicksim.run(LINKSHARING, sets=['quic.cc="cubic"', "run.duration=20s"])
    assert default.meta["trace_hash"] != py.meta["trace_hash"]


def test_a_flow_of_its_own_and_the_default_mix() -> None:
    """A Python controller on one flow beside built-in ones on the others."""
    sets = ['flows.sender2.quic.cc="py:pycc_algos:PyCubic"', 'flows.sender3.quic.cc="cubic"']
    a = quicksim.run(LINKSHARING, sets=['flows.sender2.quic.cc="cubic"', 'flows.sender3.quic.cc="cubic"'])
    b = quicksim.run(LINKSHARING, sets=sets, allow_python=True)
    _same(a, b)


def test_each_end_gets_a_seed_from_its_own_stream_and_runs_repeat() -> None:
    """`init.seed` comes from the end's own stream of the run's seed (the flow's "cc" stream):
    one per end, the same for the same seed, others for another seed; a controller drawing from
    `random.Random(init.seed)` repeats its run exactly."""
    import pycc_algos

    def run(seed: int) -> tuple[quicksim.Result, list[int]]:
        pycc_algos.SEEDS.clear()
        sets = ['quic.cc="py:pycc_algos:RandomWindow"', "run.duration=20s"]
        r = quicksim.run(LINKSHARING, sets=sets, seed=seed, allow_python=True)
        return r, list(pycc_algos.SEEDS)

    (a, seeds_a), (b, seeds_b), (c, seeds_c) = run(1), run(1), run(2)
    assert len(seeds_a) == 6 and len(set(seeds_a)) == 6, seeds_a  # three flows, two ends each
    assert seeds_a == seeds_b and set(seeds_c).isdisjoint(seeds_a)
    _same(a, b)
    # The draws changed the run: NewReno's halving would give another one.
    sets = ['quic.cc="py:pycc_algos:PyNewReno"', "run.duration=20s"]
    newreno = quicksim.run(LINKSHARING, sets=sets, seed=1, allow_python=True)
    assert newreno.meta["trace_hash"] != a.meta["trace_hash"] != c.meta["trace_hash"]


@pytest.mark.parametrize(
    ("cc_value", "expected"),
    [
        ('"py:pycc_algos:RaisesAt"', "on_ack at t = 6.000"),
        ('{algo="py:pycc_algos:BadWindow", value=-5}', "on_congestion_event at t = 5.10"),
        ('{algo="py:pycc_algos:BadWindow", value="nan"}', "cwnd = nan is a float, not an integer"),
        ('{algo="py:pycc_algos:BadWindow", value=0}', "cwnd = 0: the window must be a positive"),
        ('{algo="py:pycc_algos:BadWindow", value="x"}', "cwnd = 'x' is a str"),
        ('{algo="py:pycc_algos:BadWindow", value=true}', "cwnd = True is a bool"),
    ],
)
def test_errors_in_user_code_stop_the_run_naming_controller_callback_and_time(
    cc_value: str, expected: str
) -> None:
    with pytest.raises(quicksim.ControllerError) as info:
        quicksim.run(LINKSHARING, sets=[f"quic.cc={cc_value}"], allow_python=True)
    message = str(info.value)
    assert message.startswith('congestion controller "py:pycc_algos:') and expected in message, message
    assert "\n" not in message
    if "RaisesAt" in cc_value:
        assert isinstance(info.value.__cause__, ZeroDivisionError)
        assert message.endswith("ZeroDivisionError: boom")


def test_ctrl_c_inside_a_callback_stays_an_interrupt() -> None:
    with pytest.raises(KeyboardInterrupt):
        quicksim.run(LINKSHARING, sets=['quic.cc="py:pycc_algos:InterruptedAt"'], allow_python=True)


def test_an_exception_in_the_constructor_is_reported_too() -> None:
    with pytest.raises(quicksim.ControllerError, match=r"__init__ at t = 0\.000000 s: TypeError"):
        quicksim.run(
            LINKSHARING, sets=['quic.cc={algo="py:pycc_algos:RaisesAt", at_s="soon"}'], allow_python=True
        )


@pytest.mark.parametrize(
    ("cc_value", "expected"),
    [
        (
            '{algo="py:pycc_algos:PyCubic", bta=0.5}',
            "quic.cc.bta: unknown setting of PyCubic (its settings: beta",
        ),
        ('"py:pycc_algos:Nope"', "quic.cc: 'py:pycc_algos:Nope': pycc_algos has no Nope"),
        ('"py:no_such_module:X"', "quic.cc: 'py:no_such_module:X': cannot import no_such_module"),
        ('"py:pycc_algos:ratio"', "is not a subclass of quicksim.cc.Controller"),
        ('"py:pycc_algos"', "expected py:package.module:Class"),
    ],
)
def test_bad_names_and_settings_are_scenario_errors_naming_the_field(cc_value: str, expected: str) -> None:
    with pytest.raises(quicksim.ScenarioError) as info:
        quicksim.validate(LINKSHARING, sets=[f"quic.cc={cc_value}"], allow_python=True)
    assert expected in str(info.value)


def test_registration_refuses_builtin_names_and_non_controllers() -> None:
    from pycc_algos import PyCubic

    with pytest.raises(ValueError, match="built-in"):
        cc.register("cubic", PyCubic)
    with pytest.raises(ValueError, match="not a subclass"):
        cc.register("x", int)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not a controller name"):
        cc.register("py:x", PyCubic)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), str(TESTS), env.get("PYTHONPATH")]))
    return env


def test_cli_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "quicksim",
            "run",
            str(LINKSHARING),
            "-q",
            "--no-plots",
            "--out",
            str(tmp_path),
            "--set",
            'quic.cc="py:pycc_algos:RaisesAt"',
            "--allow-python",
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith(
        'quicksim: error: congestion controller "py:pycc_algos:RaisesAt": on_ack at t = 6.0'
    )


def _plan(tmp_path: Path, algo: str) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f"scenario = {str(LINKSHARING)!r}\n"
        "[sweep]\n"
        'metrics = [{ name = "goodput_mbps", flow = "sender1", t0 = "5s", t1 = "20s" }]\n'
        "[sweep.params]\n"
        '"run.duration" = ["20s"]\n'
        # No random draw left: every point runs the same, whatever the seed the sweep derives.
        '"flows.background.size" = ["750B"]\n'
        '"flows.background.interval" = ["15ms"]\n'
        f'"quic.cc" = ["cubic", "{algo}"]\n'
        '"dumbbell.bottleneck.delay" = ["10ms", "20ms"]\n'
    )
    return plan


def _goodputs(out: Path) -> dict[tuple[str, str], float]:
    runs = pd.read_parquet(out / "runs.parquet")
    return {
        (str(r["quic.cc"]), str(r["dumbbell.bottleneck.delay"])): float(
            r["goodput_mbps[flow=sender1,t0=5s,t1=20s]"]
        )
        for _, r in runs.iterrows()
    }


def test_sweep_on_local_processes_registered_name(tmp_path: Path) -> None:
    """A name given to `register` in this process reaches the pool's workers by import path."""
    from pycc_algos import PyCubic

    cc.register("pycubic", PyCubic)
    try:
        from quicksim.sweep import load_plan, run_plan

        run_plan(load_plan(_plan(tmp_path, "pycubic")), tmp_path / "out", jobs=2, progress=False)
    finally:
        cc.unregister("pycubic")
    g = _goodputs(tmp_path / "out")
    assert len(g) == 4 and all(v > 1.0 for v in g.values())
    for delay in ("10ms", "20ms"):
        assert g[("cubic", delay)] == g[("pycubic", delay)]


@pytest.fixture
def dask_address(tmp_path: Path) -> Iterator[str]:
    """A real Dask scheduler and one worker on 127.0.0.1 (as test_sweep_core.py starts them), with
    tests/ on the worker's PYTHONPATH so that it can import `pycc_algos`."""
    pytest.importorskip("distributed")
    from test_sweep_core import _wait_for

    dask = shutil.which("dask")
    if dask is None:
        pytest.skip("the `dask` command is not installed")
    info = tmp_path / "scheduler.json"
    logs = [open(tmp_path / name, "w") for name in ("scheduler.log", "worker.log")]  # noqa: SIM115
    common = ["--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(info)]
    procs = [
        subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", *common], stderr=logs[0])
    ]
    try:
        _wait_for(lambda: info.is_file() and "address" in info.read_text(), "the scheduler to start")
        worker = [dask, "worker", "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1", *common]
        # Started elsewhere than the tests' directory: the class is found through PYTHONPATH.
        procs.append(subprocess.Popen(worker, stderr=logs[1], env=_env(), cwd=tmp_path))
        _wait_for(lambda: "Registered to" in (tmp_path / "worker.log").read_text(), "the worker to register")
        yield str(json.loads(info.read_text())["address"])
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in reversed(procs):
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in logs:
            log.close()


@pytest.mark.slow
def test_sweep_on_a_dask_cluster_imports_the_class_by_path(tmp_path: Path, dask_address: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "quicksim",
            "sweep",
            str(_plan(tmp_path, "py:pycc_algos:PyCubic")),
            "--out",
            str(tmp_path / "dask"),
            "--scheduler",
            dask_address,
            "--no-plots",
            "--allow-python",
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(next((tmp_path / "dask" / "runs").glob("*.json")).read_text())
    assert record["worker"]  # ran on the Dask worker
    g = _goodputs(tmp_path / "dask")
    for delay in ("10ms", "20ms"):
        assert g[("cubic", delay)] == g[("py:pycc_algos:PyCubic", delay)] > 1.0


DCTCP_NS3 = REPO / "scenarios" / "dctcp-ns3.toml"


def test_python_dctcp_declares_a_scalable_ecn_response_and_matches_rust() -> None:
    """A Python controller with `ecn_response = "scalable"` gets the CE counts (TCP AccECN) in
    `ack.ce_packets`, no "ecn" events, and TCP spreads its cut as for the built-in: DCTCP written
    in Python (pycc_algos.PyDctcp) gives the Rust one's run bit for bit on the ns-3 dumbbell."""
    a = quicksim.run(DCTCP_NS3, sets=["run.duration=4s", "run.record.conn=true"])
    b = quicksim.run(
        DCTCP_NS3,
        sets=[
            'tcp.cc={algo="py:pycc_algos:PyDctcp", keep_increase_count=true}',
            "run.duration=4s",
            "run.record.conn=true",
        ],
        allow_python=True,
    )
    _same(a, b)
    # Not vacuous: marks arrived as counts and cut the windows (no classic ECN events).
    assert a.conn["ce_marks"].max() > 100 and a.conn["ecn_events"].max() == 0
    assert a.conn["ssthresh_bytes"].nunique() > 10


def test_a_bad_ecn_response_stops_the_run_naming_it() -> None:
    with pytest.raises(
        quicksim.ControllerError, match=r"__init__ at t = 0\.000000 s: ecn_response = 'scalable-ish'"
    ):
        quicksim.run(DCTCP_NS3, sets=['tcp.cc="py:pycc_algos:BadEcn"', "run.duration=1s"], allow_python=True)
    with pytest.raises(quicksim.ControllerError, match=r"ce_change_ack = 'sometimes' is not \"together\""):
        bad = ['tcp.cc="py:pycc_algos:BadCeAck"', "run.duration=1s"]
        quicksim.run(DCTCP_NS3, sets=bad, allow_python=True)
