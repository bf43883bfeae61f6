"""Issue 39, code run by reading a scenario: `cc = "py:module:Class"` imports nothing while a
scenario is read or validated; running it needs the user's consent (`--allow-python`,
`allow_python=True`), and `quicksim.cc.controllers_of` is the one place that decides."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import quicksim
from quicksim import cc
from quicksim.errors import ScenarioError

Cli = Callable[..., subprocess.CompletedProcess[str]]

SCENARIO = """\
name = "evil"
[run]
duration = "2s"
[dumbbell]
pairs = 1
bottleneck = { rate = "10Mbps", delay = "5ms" }
[[flows]]
name = "f"
kind = "quic"
src = "sender1"
dst = "receiver1"
quic = { cc = "py:evil:X" }
"""

# Import-time code that leaves a mark, then a valid controller: what a stranger's module may do.
MODULE = """\
import pathlib
pathlib.Path("PWNED").write_text("evil.py ran")
import quicksim.cc
class X(quicksim.cc.Controller):
    pass
"""


@pytest.fixture
def evil(tmp_path: Path) -> Path:
    (tmp_path / "evil.toml").write_text(SCENARIO)
    (tmp_path / "evil.py").write_text(MODULE)
    return tmp_path


@pytest.mark.core
def test_validate_runs_none_of_the_scenarios_code(cli: Cli, evil: Path) -> None:
    proc = cli("validate", "evil.toml", cwd=evil)
    assert proc.returncode == 0, proc.stderr
    assert not (evil / "PWNED").exists(), "quicksim validate imported evil.py"
    assert "flows[0].quic.cc = 'py:evil:X' was not imported" in proc.stderr
    assert "--allow-python" in proc.stderr


@pytest.mark.core
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_run_and_sweep_refuse_without_consent(cli: Cli, evil: Path, command: str) -> None:
    target = "evil.toml"
    if command == "sweep":
        (evil / "plan.toml").write_text(SCENARIO + '[sweep.params]\n"run.duration" = ["2s", "3s"]\n')
        target = "plan.toml"
    proc = cli(command, target, "--out", "o", "--no-plots", "-q", cwd=evil)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "flows[0].quic.cc: 'py:evil:X' is Python code named by the scenario" in lines[0]
    assert "--allow-python" in lines[0]
    assert not (evil / "PWNED").exists() and not (evil / "o").exists()


@pytest.mark.core
def test_consent_imports_and_runs_it(cli: Cli, evil: Path) -> None:
    proc = cli("run", "evil.toml", "--allow-python", "--out", "o", "--no-plots", "-q", cwd=evil)
    assert proc.returncode == 0, proc.stderr
    assert (evil / "PWNED").exists() and (evil / "o" / "summary.json").is_file()


@pytest.mark.core
def test_the_api_asks_for_consent_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "evil2.py").write_text(MODULE.replace("PWNED", "PWNED2").replace("class X", "class Y"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "evil2.toml").write_text(SCENARIO.replace("py:evil:X", "py:evil2:Y"))
    doc = quicksim.load_scenario(tmp_path / "evil2.toml")
    quicksim.validate(doc)
    assert "evil2" not in sys.modules and not (tmp_path / "PWNED2").exists()
    with pytest.raises(ScenarioError, match=r"^flows\[0\]\.quic\.cc: 'py:evil2:Y' is Python code"):
        quicksim.run(doc)
    with pytest.raises(ScenarioError, match=r"'py:evil2:Y' is Python code"):
        quicksim.sweep(doc, {"run.duration": ["2s"]}, out=tmp_path / "sw", progress=False)
    assert "evil2" not in sys.modules and not (tmp_path / "sw").exists()
    quicksim.validate(doc, allow_python=True)
    assert "evil2" in sys.modules and (tmp_path / "PWNED2").exists()
    sys.modules.pop("evil2")


# --- the rule, as a property: no placement or shape of a `py:` name gets imported -------------


class _Recorder:
    """A meta-path finder that records every top-level module an import looks for (and finds
    none of them, so nothing is loaded either way)."""

    def __init__(self, watched: str) -> None:
        self.watched = watched
        self.seen: list[str] = []

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.split(".")[0].startswith(self.watched):
            self.seen.append(name)


@pytest.fixture
def recorder() -> Iterator[_Recorder]:
    finder = _Recorder("qs_hostile_")
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        sys.meta_path.remove(finder)


_MODULES = st.from_regex(r"qs_hostile_[a-z]{1,8}(\.[a-z]{1,6}){0,2}", fullmatch=True)
_CLASSES = st.from_regex(r"[A-Z][A-Za-z0-9]{0,8}(\.[A-Z][a-z]{0,4})?", fullmatch=True)
_SETTINGS = st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), st.integers(0, 9), max_size=3)
_PLACES = st.sampled_from(["quic", "flow", "tcp"])


def _scenario(where: str, algo: Any) -> dict[str, Any]:
    flow: dict[str, Any] = {"name": "f", "kind": "quic", "src": "sender1", "dst": "receiver1"}
    doc: dict[str, Any] = {
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "5ms"}},
        "flows": [flow],
    }
    if where == "quic":
        doc["quic"] = {"cc": algo}
    elif where == "flow":
        flow["quic"] = {"cc": algo}
    else:
        flow["kind"] = "tcp"
        doc["tcp"] = {"cc": algo}
    return doc


@pytest.mark.core
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_MODULES, _CLASSES, _SETTINGS, _PLACES)
def test_validation_never_imports_and_running_is_refused(
    recorder: _Recorder, module: str, cls: str, params: dict[str, int], where: str
) -> None:
    name = f"py:{module}:{cls}"
    doc = _scenario(where, {"algo": name, **params} if params else name)
    recorder.seen.clear()
    quicksim.validate(doc)
    assert cc.unchecked(doc) and all(n == name for _, n in cc.unchecked(doc))
    with pytest.raises(ScenarioError, match="needs --allow-python"):
        quicksim.run(doc)
    assert recorder.seen == [], f"imported {recorder.seen}"
    # With consent it is imported (and, not existing, refused naming the field).
    with pytest.raises(ScenarioError, match=r"cc: .* cannot import"):
        quicksim.validate(doc, allow_python=True)
    assert recorder.seen


def test_consent_for_a_block_of_code() -> None:
    """`quicksim.cc.allow_python()` gives a block the consent `allow_python=True` gives one call
    (the conformance suite runs the controller its user named through such a block)."""
    doc = _scenario("quic", "py:pycc_algos:PyCubic")
    with pytest.raises(ScenarioError, match="needs --allow-python"):
        cc.controllers_of(doc)
    with cc.allow_python():
        assert cc.controllers_of(doc)["py:pycc_algos:PyCubic"].__name__ == "PyCubic"
    with pytest.raises(ScenarioError, match="needs --allow-python"):
        cc.controllers_of(doc)
