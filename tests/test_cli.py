"""The `quicksim` command without the core: help, argument and input errors.

Every error must be one `quicksim: error: ...` line (argparse adds its usage line) on stderr,
exit status 2, and no traceback.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import PYTHON_DIR, FakeCore, PanicException
from quicksim.cli import main

Cli = Callable[..., subprocess.CompletedProcess[str]]


def _assert_usage_error(proc: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("quicksim")]
    assert len(errors) == 1 and ": error: " in errors[0], proc.stderr
    for fragment in fragments:
        assert fragment in errors[0]
    assert proc.stdout == ""


def test_help_lists_subcommands(cli: Cli) -> None:
    proc = cli("--help")
    assert proc.returncode == 0
    assert "run" in proc.stdout and "validate" in proc.stdout


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys; from quicksim.cli import build_parser; build_parser(); "
        "heavy = {'pandas', 'matplotlib', 'numpy', 'tqdm', 'pyarrow'} & set(sys.modules); "
        "print(sorted(heavy))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PYTHON_DIR)},
        check=True,
    )
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["frobnicate"],
        ["run"],
        ["run", "x.toml", "--seed", "abc"],
        ["run", "x.toml", "--seed", "-1"],
        ["run", "x.toml", "--no-such-option"],
    ],
)
def test_argument_errors(cli: Cli, args: list[str]) -> None:
    _assert_usage_error(cli(*args))


@pytest.mark.parametrize("command", ["run", "validate"])
def test_missing_scenario_file(cli: Cli, command: str, tmp_path: Path) -> None:
    _assert_usage_error(cli(command, str(tmp_path / "nope.toml")), "No such file", "nope.toml")


@pytest.mark.parametrize("command", ["run", "validate"])
def test_toml_syntax_error_names_the_line(cli: Cli, command: str, tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('[run]\nduration = "1s"\n\n[dumbbell\npairs = 1\n', encoding="utf-8")
    _assert_usage_error(cli(command, str(path)), "broken.toml", "invalid TOML", "line 4")


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("flows.0.start", "expected KEY=VALUE"),
        ("flows.nosuch.start=1s", "no element named 'nosuch'"),
        ("flows.3.start=1s", "index 3 is out of range"),
    ],
)
def test_bad_override(cli: Cli, override: str, fragment: str, tmp_path: Path) -> None:
    path = tmp_path / "ok.toml"
    path.write_text('[run]\nduration = "1s"\n\n[[flows]]\nname = "a"\n', encoding="utf-8")
    _assert_usage_error(cli("run", str(path), "--set", override), fragment)


def test_directory_instead_of_file(cli: Cli, tmp_path: Path) -> None:
    _assert_usage_error(cli("validate", str(tmp_path)))


def test_report_formats_a_summary(result: object) -> None:
    from quicksim.cli._report import format_summary

    text = format_summary(result.summary())  # type: ignore[attr-defined]
    lines = text.splitlines()
    assert lines[0].startswith("handmade: seed 7, 3.000 s simulated")
    flow_row = next(line for line in lines if line.startswith("sender1 "))
    assert "quic" in flow_row and "sender1->receiver1" in flow_row and "0.5-2.5" in flow_row
    assert "1.500" in flow_row  # mean goodput over the active window, Mbit/s
    assert "2.5" in flow_row  # retransmitted kB
    assert any(line.startswith("bottleneck:router1->router2") and "0.77" in line for line in lines)  # drop %
    assert not any(line.startswith("access:router2->receiver1") for line in lines)  # idle links hidden


# --- `quicksim run` in-process, against the stand-in core -------------------------------------


def _scenario_file(tmp_path: Path, scenario: dict[str, object]) -> Path:
    path = tmp_path / "handmade.json"  # load_scenario reads .json too
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return path


def test_run_saves_everything_and_prints_tables(
    core: FakeCore, scenario: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "res"
    status = main(["run", str(_scenario_file(tmp_path, scenario)), "--seed", "9", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out.startswith("handmade: seed 9")
    assert "results: " in captured.err and "7 plots" in captured.err
    names = {p.name for p in out.iterdir()}
    assert {"flows.parquet", "summary.json", "scenario.json", "cwnd_queue_drops.png"} <= names
    assert json.loads((out / "scenario.json").read_text(encoding="utf-8"))["run"]["seed"] == 9


def test_run_json_output(
    core: FakeCore, scenario: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "run",
            str(_scenario_file(tmp_path, scenario)),
            "--out",
            str(tmp_path / "o"),
            "--json",
            "--no-plots",
            "-q",
        ]
    )
    captured = capsys.readouterr()
    assert status == 0
    assert json.loads(captured.out) == json.loads(
        (tmp_path / "o" / "summary.json").read_text(encoding="utf-8")
    )
    assert captured.err == ""
    assert not list((tmp_path / "o").glob("*.png"))


def test_run_with_progress_bar(
    core: FakeCore, scenario: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def behaviour(_json: str, _seed: object, progress: Callable[[float, int], bool]) -> dict[str, object]:
        for i in range(4):
            assert progress(0.75 * i, 100 * i) is True
        return copy.deepcopy(core.raw)

    core.behaviour = behaviour
    status = main(
        [
            "run",
            str(_scenario_file(tmp_path, scenario)),
            "--out",
            str(tmp_path / "o"),
            "--no-plots",
            "--progress",
        ]
    )
    assert status == 0
    assert "simulating" in capsys.readouterr().err


def test_first_ctrl_c_stops_and_saves_partial_results(
    core: FakeCore, scenario: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def behaviour(_json: str, _seed: object, progress: Callable[[float, int], bool]) -> dict[str, object]:
        out = copy.deepcopy(core.raw)
        for i in range(1000):
            if i == 3:
                os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C during the run
            if not progress(0.01 * i, i):
                out["meta"].update(stopped_early=True, sim_end_s=0.01 * i)
                return out
        raise AssertionError("the run was not stopped")

    core.behaviour = behaviour
    out = tmp_path / "o"
    status = main(["run", str(_scenario_file(tmp_path, scenario)), "--out", str(out), "--no-plots", "-q"])
    assert status == 130
    assert "saving the partial results" in capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["meta"]["stopped_early"] is True
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored


def test_simulation_error_is_one_line_exit_1(
    core: FakeCore, scenario: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def behaviour(*_: object) -> dict[str, object]:
        raise PanicException("attempt to subtract with overflow\nnote: run with RUST_BACKTRACE=1")

    core.behaviour = behaviour
    status = main(["run", str(_scenario_file(tmp_path, scenario)), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 1
    assert err.count("\n") == 1 and err.startswith("quicksim: error: simulation failed: internal error")
    assert not (tmp_path / "o").exists()


def test_validate_prints_json(
    core: FakeCore, scenario: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(_scenario_file(tmp_path, scenario)), "--set", "run.seed=3"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run"]["seed"] == 3 and doc["run"]["record_interval"] == "500ms"


def test_validate_reports_the_cores_error(
    core: FakeCore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bogus.toml"
    path.write_text("bogus = 1\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == 'quicksim: error: bogus: unknown field "bogus"\n'
