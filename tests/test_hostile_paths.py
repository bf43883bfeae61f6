"""Issue 39, names that become paths: a flow name is a label, and `_io.file_name` is the one rule
that turns it (or a sweep's plot title) into a file name, so nothing a scenario names can land
outside the output folder; an empty output folder (`--out ''`) is refused, not the current
directory."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import quicksim
from conftest import REPO
from quicksim._io import MAX_FILE_NAME, file_name
from quicksim.errors import ScenarioError

Cli = Callable[..., subprocess.CompletedProcess[str]]

SCENARIO = REPO / "scenarios" / "buffer-sizing.toml"  # one QUIC flow, starting at 2 s
SHORT = ("--no-plots", "-q", "--set", "run.duration=2.2s", "--set", "run.record.packets=[]")


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.mark.core
@pytest.mark.parametrize("name", ["../../x", "/ABS/x", "a/b"])
def test_a_flow_name_never_writes_outside_out(cli: Cli, tmp_path: Path, name: str) -> None:
    """The audit's three names, as qlog files: each lands in --out under its escaped name, and the
    run completes (summary.json), where `../../x` wrote two folders up, `/...` wrote there and
    `a/b` failed after the run."""
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    name = name.replace("/ABS", str(tmp_path))  # an absolute name inside the test's own folder
    proc = cli(
        "run",
        str(SCENARIO),
        "--out",
        "out",
        *SHORT,
        "--set",
        f'flows.0.name="{name}"',
        "--set",
        f'run.record.qlog=["{name}"]',
        cwd=work,
    )
    assert proc.returncode == 0, proc.stderr
    out = work / "out"
    assert (out / "summary.json").is_file()
    assert _files(tmp_path) == _files(out), "a file was written outside --out"
    for role in ("client", "server"):
        path = out / file_name(f"{name}.{role}.sqlog")
        assert path.is_file() and path.read_text().startswith("\x1e")
    assert "/" not in file_name(f"{name}.client.sqlog")


@pytest.mark.core
@pytest.mark.parametrize("command", ["run", "sweep", "reproduce"])
def test_empty_out_is_refused(cli: Cli, tmp_path: Path, command: str) -> None:
    target = {
        "run": str(SCENARIO),
        "sweep": str(REPO / "examples" / "ack-ratio-sweep.toml"),
        "reproduce": "paper-fig3",
    }[command]
    proc = cli(command, target, "--out", "", cwd=tmp_path)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert "--out" in last and "'' is not a folder" in last and "Traceback" not in proc.stderr
    assert not any(tmp_path.iterdir()), "something was written into the current directory"


@pytest.mark.core
def test_empty_out_is_refused_by_the_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError, match=r"^out: '' is not a folder"):
        quicksim.run(SCENARIO, sets=["run.duration=2.1s"], out="")
    result = quicksim.run(SCENARIO, sets=["run.duration=2.1s"])
    with pytest.raises(ScenarioError, match=r"^directory: '' is not a folder"):
        result.save("")
    with pytest.raises(ScenarioError, match=r"^out: '' is not a folder"):
        quicksim.sweep(SCENARIO, {"run.duration": ["2.1s"]}, out="", progress=False)
    assert not any(tmp_path.iterdir())


# --- the rule, as a property ------------------------------------------------------------------

_NAMES = st.text(min_size=0, max_size=300) | st.sampled_from(["", ".", "..", "../..", "/", "a/../b", "%2F"])


@settings(max_examples=400, deadline=None)
@given(_NAMES)
def test_file_name_is_one_plain_name_inside_the_folder(name: str) -> None:
    escaped = file_name(name)
    assert escaped and escaped not in (".", "..") and not escaped.startswith(".")
    assert "/" not in escaped and "\\" not in escaped and "\0" not in escaped
    assert len(escaped.encode()) <= MAX_FILE_NAME
    assert escaped.isascii()
    base = Path("/base")
    assert (base / escaped).parent == base and len((base / escaped).parts) == 3


@settings(max_examples=400, deadline=None)
@given(_NAMES, _NAMES)
def test_file_name_keeps_names_apart(a: str, b: str) -> None:
    """Two names never share a file (the escape is injective; a long name's hash keeps it so)."""
    if a != b:
        assert file_name(a) != file_name(b)


@given(st.from_regex(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,100}", fullmatch=True))
def test_a_plain_name_is_its_own_file_name(name: str) -> None:
    assert file_name(name) == name


@pytest.mark.core
@settings(max_examples=30, deadline=None)
@given(st.lists(_NAMES, min_size=1, max_size=4, unique=True))
def test_saved_files_stay_inside_the_folder(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    """`Result.save` writes the `qlog` table's rows (whatever their names) inside its folder."""
    from quicksim.results import Result

    root = tmp_path_factory.mktemp("save")
    files = [f"{n}.client.sqlog" for n in names]
    result = Result({"meta": {}, "tables": {"qlog": {"file": files, "text": ["x"] * len(files)}}})
    out = result.save(root / "out", {})
    assert _files(root) == _files(out)
    assert {p.name for p in _files(out) if p.suffix == ".sqlog"} == {file_name(f) for f in files}


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80).filter(lambda s: "/" not in s and "\0" not in s))
def test_default_folders_are_one_level_under_out(stem: str) -> None:
    """`quicksim run X.toml` writes to out/<X>; a file named `..toml` (stem `.`) or `...toml`
    must not make that `out` itself or its parent."""
    from quicksim.cli.run import default_out

    out = default_out(Path(f"{stem}.toml"), [], None)
    assert out.parent == Path("out") and out.name not in ("", ".", "..") and "/" not in out.name
