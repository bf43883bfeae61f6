"""Every command the README shows runs, as written (or in a stated quick variant).

The commands are read from the README's ```sh blocks, so a command added there without a line in
`HOW` fails `test_every_readme_command_has_a_test`. They run in a temporary folder that links the
repository's `scenarios/` and `examples/`, so their `out/` folders land there. The README's
Python snippet and its scenario example are run and validated too.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

# How each README command is run: "as written", a quick variant (the arguments appended or the
# replaced command, with why), "after:<command>" (as written, once that command made its
# input), or a reason it cannot run here.
AS_WRITTEN = "as written"
HOW: dict[str, tuple[str, str]] = {
    "pip install .": ("skip", "the test environment is this install"),
    "./scripts/test": ("skip", "it runs this test suite"),
    "quicksim schema > scenario.schema.json": ("schema", ""),
    "quicksim schema --reference": (AS_WRITTEN, ""),
    "quicksim run scenarios/linksharing.toml --out out/linksharing": (AS_WRITTEN, ""),
    "quicksim run scenarios/udp-bottleneck.toml --seed 3 --out out/udp": (AS_WRITTEN, ""),
    "quicksim run scenarios/link-bandwidth.toml --set dumbbell.mtu=9000B --json": (AS_WRITTEN, ""),
    "quicksim validate scenarios/mathis.toml --set dumbbell.bottleneck.delay=25ms": (AS_WRITTEN, ""),
    "quicksim run scenarios/mathis-tcp.toml --set run.duration=5s --set "
    "'run.capture={links=[\"access1\"]}' --out out/capture": (AS_WRITTEN, ""),
    "quicksim run trace-cellular --out out/trace": (AS_WRITTEN, "slow"),
    "quicksim validate": (AS_WRITTEN, "slow"),
    "quicksim validate --check mathis --quick --json": (AS_WRITTEN, "slow"),
    "quicksim sweep examples/ack-ratio-sweep.toml --out out/study -j 2": (AS_WRITTEN, "slow"),
    # The address is the user's scheduler: a local one takes its place, one repetition per point.
    "quicksim sweep examples/ack-ratio-sweep.toml --scheduler tcp://10.0.0.5:8786": ("dask", "slow"),
    "quicksim run examples/mycc.toml --allow-python": (AS_WRITTEN, ""),
    "quicksim conformance cubic --quick": (AS_WRITTEN, "slow"),
    "quicksim conformance py:examples.mycc:MyCC --quick --out out/mycc-card": (AS_WRITTEN, "slow"),
    "quicksim run scenarios/buffer-sizing.toml --set 'run.record.qlog=[\"quic\"]' --out out/bs-qlog": (
        AS_WRITTEN,
        "slow",
    ),
    "quicksim sweep examples/cc-report-sweep.toml --out out/cc-sweep": (AS_WRITTEN, "slow"),
    # Reads the sweep's output: the sweep runs first in the same folder.
    "quicksim report out/cc-sweep --html out/cc-sweep/report.html": (
        "after:quicksim sweep examples/cc-report-sweep.toml --out out/cc-sweep",
        "slow",
    ),
    "quicksim sweep examples/buffer-study-sweep.toml --out out/buffer-study": (AS_WRITTEN, "slow"),
    # Both read the sweep's output (tests/test_buffer_study.py runs the three in order and checks
    # what they print and write).
    "quicksim sweep examples/buffer-study-sweep.toml --out out/buffer-study --metrics jain": (
        "after:quicksim sweep examples/buffer-study-sweep.toml --out out/buffer-study",
        "slow",
    ),
    "quicksim report out/buffer-study --html out/buffer-study/report.html": (
        "after:quicksim sweep examples/buffer-study-sweep.toml --out out/buffer-study",
        "slow",
    ),
    "quicksim reproduce --list": (AS_WRITTEN, ""),
    # Real time: as written where root, namespaces, TUN and iperf3 exist (CI), else skipped saying so.
    "quicksim run examples/emulate-iperf3.toml --out out/emulate": ("emulate", ""),
    # Full mode takes minutes on the 2-core CI machine; quick mode runs the same code.
    "quicksim reproduce paper-fig4": ("append:--quick", "slow"),
    "quicksim reproduce --all --quick": (AS_WRITTEN, "slow"),
    "quicksim reproduce tcp-vs-ns3": ("append:--quick", "slow"),
    "quicksim run scenarios/linksharing.toml --set flows.sender1.kind=quinn --set quinn.cc=newreno "
    "--out out/ls-quinn": (AS_WRITTEN, ""),
    "quicksim reproduce quinn-vs-model --quick": (AS_WRITTEN, "slow"),
    # The whole suite takes minutes (10 000 flows, 3 reps each): one scenario, one rep.
    "quicksim bench": ("append:linksharing --reps 1", "slow"),
    "quicksim bench --vs-ns3 --ns3-anchors tools/ns3 --ns3-python /path/to/venv-with-ns3/bin/python": (
        "skip",
        "needs a Python with the ns-3 wheel (the user's path)",
    ),
    # With a checkout (QUICKSIM_HTSIM_SRC) in its place; as written, the one-line error.
    "quicksim bench --vs-htsim --htsim-src /path/to/csg-htsim": ("htsim", ""),
    "python -m quicksim.bench": (AS_WRITTEN, ""),
    "python -m quicksim.bench --outputs 10000": (AS_WRITTEN, "slow"),
    "python -m quicksim.bench --overhead": (AS_WRITTEN, ""),
    "cargo run --release --example queue_bench -p quicksim-engine": (AS_WRITTEN, "slow"),
}


def readme_commands() -> list[str]:
    """The commands of the README's sh blocks: comments cut, `&&` chains split."""
    commands: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S):
        for line in block.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            commands += [part.strip() for part in line.split("&&") if part.strip()]
    return commands


def test_every_readme_command_has_a_test() -> None:
    commands = readme_commands()
    assert "quicksim validate --check mathis --quick --json" in commands
    missing = [c for c in commands if c not in HOW]
    assert not missing, f"README commands without a line in HOW: {missing}"
    stale = [c for c in HOW if c not in commands]
    assert not stale, f"HOW lists commands the README no longer shows: {stale}"


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    for name in ("scenarios", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _argv(command: str) -> list[str]:
    words = shlex.split(command)
    if words[0] == "quicksim":  # the console script, run by this interpreter
        return [sys.executable, "-m", "quicksim", *words[1:]]
    if words[0] == "python":
        return [sys.executable, *words[1:]]
    return words


def _run(argv: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
    return proc


def _cases() -> list[object]:
    cases: list[object] = []
    for command, (how, note) in HOW.items():
        marks = [pytest.mark.slow] if note == "slow" else []
        if how == "skip":
            marks.append(pytest.mark.skip(reason=note))
        cases.append(pytest.param(command, how, marks=marks, id=command[:60]))
    return cases


@pytest.mark.parametrize(("command", "how"), _cases())
def test_readme_command_runs(command: str, how: str, workdir: Path) -> None:
    argv = _argv(command)
    if how.startswith("after:"):
        _run(_argv(how.removeprefix("after:")), workdir)
    if how.startswith("append:"):
        argv += how.removeprefix("append:").split()
    if argv[0] == "cargo":
        if shutil.which("cargo") is None:
            pytest.skip("no cargo on PATH")
        proc = _run(argv, ROOT, timeout=900)
        rows = [line for line in proc.stdout.splitlines() if line.split()[:1] in (["network"], ["bimodal"])]
        assert len(rows) >= 4, proc.stdout
        return
    if how == "emulate":
        from test_emulate import WHY_NOT

        if WHY_NOT is not None or shutil.which("iperf3") is None:
            pytest.skip(WHY_NOT or "iperf3 not installed")
        proc = _run(argv, workdir)
        import json

        summary = json.loads((workdir / "out" / "emulate" / "summary.json").read_text())
        assert summary["totals"]["programs"]["iperf3"]["client"]["exit_code"] == 0
        assert summary["totals"]["realtime"]["packets_out"] > 1000
        return
    if how == "htsim":
        src = os.environ.get("QUICKSIM_HTSIM_SRC")
        if src is None:
            # CI has no checkout: the path as written is not one, and says so in one line.
            proc = subprocess.run(argv, cwd=workdir, capture_output=True, text=True, timeout=120)
            assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
            assert "/path/to/csg-htsim is not an htsim checkout" in proc.stderr, proc.stderr
            return
        argv = [src if a == "/path/to/csg-htsim" else a for a in argv]
        _run([*argv, "--reps", "1", "--htsim-cache", str(workdir / "htsim")], workdir, timeout=900)
        import json

        report = json.loads((workdir / "bench.json").read_text())
        assert set(report["htsim"]) == {"3x10m", "100x1g"}
        return
    if how == "schema":
        # A shell redirection: the command's words up to `>`, stdout into the named file.
        words = shlex.split(command)
        target = workdir / words[words.index(">") + 1]
        proc = _run(_argv(" ".join(words[: words.index(">")])), workdir)
        target.write_text(proc.stdout, encoding="utf-8")
        import json

        assert json.loads(target.read_text(encoding="utf-8"))["title"] == "quicksim scenario"
        return
    if how == "dask":
        distributed = pytest.importorskip("distributed")
        # No dashboard and port 0: the test never needs a fixed port (8787 may be taken).
        with distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=False,
            protocol="tcp",
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,
        ) as cluster:
            address = str(cluster.scheduler_address)
            argv = [a if not a.startswith("tcp://") else address for a in argv]
            proc = _run([*argv, "--repeat", "1", "--out", str(workdir / "out" / "dask")], workdir)
        assert (workdir / "out" / "dask" / "runs.parquet").is_file()
        return
    proc = _run(argv, workdir)
    if "--json" in argv:
        import json

        json.loads(proc.stdout)  # the whole of stdout is one JSON document
    if "run.capture" in command:
        assert (workdir / "out" / "capture" / "capture.pcapng").stat().st_size > 10_000
    if argv[2:3] == ["report"]:
        assert (workdir / argv[argv.index("--html") + 1]).is_file()
    if argv[2:4] == ["run", "scenarios/buffer-sizing.toml"]:
        assert (workdir / "out" / "bs-qlog" / "quic.client.sqlog").is_file()
    if argv[2:4] == ["run", "scenarios/linksharing.toml"]:
        assert sorted(p.name for p in (workdir / "out" / "linksharing").glob("*.png"))


def test_readme_python_snippet_runs(workdir: Path) -> None:
    (snippet,) = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    script = workdir / "snippet.py"
    script.write_text(snippet, encoding="utf-8")
    _run([sys.executable, str(script)], workdir)
    assert (workdir / "out" / "run1" / "summary.json").is_file()


def test_readme_scenario_example_is_valid(workdir: Path) -> None:
    blocks = re.findall(r"```toml\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    (example,) = [b for b in blocks if "[[flows]]" in b and "[dumbbell]" in b]
    doc = tomllib.loads(example)
    assert {f["src"] for f in doc["flows"]} <= {f"sender{i + 1}" for i in range(doc["dumbbell"]["pairs"])}
    path = workdir / "example.toml"
    path.write_text(example, encoding="utf-8")
    proc = _run([sys.executable, "-m", "quicksim", "validate", str(path)], workdir)
    assert '"background"' in proc.stdout
