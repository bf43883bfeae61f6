"""`quicksim.run` / `validate` against a stand-in for the compiled core.

The stand-in follows the `_core` contract, so the glue (JSON in, exceptions out, progress
callback, seed, Result) is tested without building the Rust crate.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import quicksim
from conftest import FakeCore, PanicException
from quicksim import ScenarioError, SimulationError, api


def test_run_returns_a_result_with_normalized_scenario_and_seed(
    core: FakeCore, scenario: dict[str, Any]
) -> None:
    res = quicksim.run(scenario, seed=5, sets=["flows.bg.size=1000B"])
    assert isinstance(res, quicksim.Result)
    sent, seed, progress = core.calls[-1][1]
    assert sent["flows"][1]["size"] == "1000B" and seed == 5 and progress is None
    assert res.meta["seed"] == 5
    assert res.scenario["run"]["seed"] == 5  # scenario.json reruns this exact run
    assert res.scenario["run"]["record_interval"] == "500ms"  # normalized by the core
    assert scenario["flows"][1]["size"] == "625B"  # the caller's dict is untouched


def test_run_from_a_file_is_named_after_it(core: FakeCore, tmp_path: Path) -> None:
    path = tmp_path / "linksharing.toml"
    path.write_text('[run]\nduration = "3s"\n', encoding="utf-8")
    assert quicksim.run(path).name == "linksharing"


def test_the_scenarios_own_name_wins(core: FakeCore, scenario: dict[str, Any], tmp_path: Path) -> None:
    assert quicksim.run(scenario).name == "scenario"
    assert quicksim.run({**scenario, "name": "linksharing"}).name == "linksharing"


def test_core_scenario_error_becomes_quicksim_scenario_error(core: FakeCore) -> None:
    with pytest.raises(ScenarioError, match='bogus: unknown field "bogus"') as info:
        quicksim.validate({"bogus": 1})
    assert isinstance(info.value, ValueError)
    assert not isinstance(info.value, FakeCore.ScenarioError)


def test_core_simulation_error_becomes_quicksim_simulation_error(
    core: FakeCore, scenario: dict[str, Any]
) -> None:
    def fail(*_: Any) -> dict[str, Any]:
        raise core.SimulationError("event scheduled in the past")

    core.behaviour = fail
    with pytest.raises(SimulationError, match="scheduled in the past"):
        quicksim.run(scenario)


def test_panic_never_leaks(core: FakeCore, scenario: dict[str, Any]) -> None:
    def panic(*_: Any) -> dict[str, Any]:
        raise PanicException("index out of bounds: the len is 3 but the index is 7")

    core.behaviour = panic
    with pytest.raises(SimulationError, match=r"internal error.*index out of bounds") as info:
        quicksim.run(scenario)
    assert isinstance(info.value.__cause__, PanicException)


def test_keyboard_interrupt_from_the_core_passes_through(core: FakeCore, scenario: dict[str, Any]) -> None:
    def interrupted(*_: Any) -> dict[str, Any]:
        raise KeyboardInterrupt

    core.behaviour = interrupted
    with pytest.raises(KeyboardInterrupt):
        quicksim.run(scenario)


def _ticking(core: FakeCore, ticks: int = 10) -> list[float]:
    """Make the fake run call progress `ticks` times, honouring a False answer."""
    seen: list[float] = []

    def behaviour(_json: str, _seed: Any, progress: Any) -> dict[str, Any]:
        out = copy.deepcopy(core.raw)
        for i in range(ticks):
            t = 0.3 * i
            seen.append(t)
            answer = progress(t, 1000 * i)
            assert isinstance(answer, bool)  # the core gets a real bool
            if not answer:
                out["meta"].update(stopped_early=True, sim_end_s=t)
                break
        return out

    core.behaviour = behaviour
    return seen


def test_progress_none_means_continue(core: FakeCore, scenario: dict[str, Any]) -> None:
    seen = _ticking(core)
    calls: list[tuple[float, int]] = []
    res = quicksim.run(scenario, progress=lambda t, n: calls.append((t, n)))
    assert len(seen) == len(calls) == 10 and calls[2] == (pytest.approx(0.6), 2000)
    assert res.meta["stopped_early"] is False


def test_progress_false_stops_early(core: FakeCore, scenario: dict[str, Any]) -> None:
    seen = _ticking(core)
    res = quicksim.run(scenario, progress=lambda t, n: t < 1.0)
    assert len(seen) == 5
    assert res.meta["stopped_early"] is True and res.sim_end_s == pytest.approx(1.2)


def test_progress_exception_stops_the_run_and_is_reraised(core: FakeCore, scenario: dict[str, Any]) -> None:
    seen = _ticking(core)

    def boom(t: float, n: int) -> bool:
        if t > 0.5:
            raise ZeroDivisionError("in the callback")
        return True

    with pytest.raises(ZeroDivisionError, match="in the callback"):
        quicksim.run(scenario, progress=boom)
    assert len(seen) == 3  # stopped at the first failure, not called again


def test_progress_exception_wins_over_the_cores_own_error(core: FakeCore, scenario: dict[str, Any]) -> None:
    def behaviour(_json: str, _seed: Any, progress: Any) -> dict[str, Any]:
        progress(0.0, 0)
        raise core.SimulationError("progress callback failed")

    core.behaviour = behaviour

    def interrupt(t: float, n: int) -> bool:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        quicksim.run(scenario, progress=interrupt)


def test_unserializable_scenario_is_a_scenario_error(core: FakeCore) -> None:
    # NaN is named with its field (issue 20); a value with no JSON form is still refused whole.
    with pytest.raises(ScenarioError, match=r"run\.duration: nan is not a finite number"):
        quicksim.run({"run": {"duration": float("nan")}})
    with pytest.raises(ScenarioError, match="cannot be passed to the core"):
        quicksim.run({"run": {"duration": object()}})


def test_missing_core_gives_a_build_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_core(
        name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
    ) -> Any:
        if fromlist and "_core" in fromlist:
            raise ImportError("No module named 'quicksim._core'")
        return real_import(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", no_core)
    with pytest.raises(ImportError, match="maturin develop"):
        api._load_core()


def test_public_api_is_small() -> None:
    ours = {"Result", "ScenarioError", "SimulationError", "__version__", "apply_overrides", "load_scenario"}
    assert ours | {"run", "validate"} <= set(quicksim.__all__)
    assert len(quicksim.__all__) <= 12
    for name in quicksim.__all__:
        assert getattr(quicksim, name) is not None
