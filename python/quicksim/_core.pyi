"""Type stub of the compiled core (crates/quicksim-py). Private: use `quicksim.api` instead."""

from collections.abc import Callable
from typing import Any, Final

__version__: Final[str]

class ScenarioError(ValueError):
    """The scenario JSON was rejected; the message names the field and the value."""

class SimulationError(RuntimeError):
    """The run failed after the scenario was accepted."""

def run(
    scenario_json: str,
    seed: int | None = None,
    progress: Callable[[float, int], object] | None = None,
) -> dict[str, Any]:
    """Run a scenario; returns {"meta": ..., "tables": {name: {column: values}}, "totals": ...}.

    Numeric columns are `array.array` ("d" float64, "q" int64; read them with numpy through the
    buffer protocol), string columns are lists.

    `progress(sim_time_s, events_so_far)` is called periodically; returning False stops the run
    early (then meta["stopped_early"] is True).
    """

def validate(scenario_json: str) -> str:
    """Return the scenario as normalized JSON with all defaults filled in."""

def parse_duration(text: str) -> float: ...
def parse_rate(text: str) -> int: ...
def parse_bytes(text: str) -> int: ...
