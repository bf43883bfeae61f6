"""The exceptions of the public API.

They are plain Python classes, so pure-Python code (scenario loading, overrides) can raise them
without the compiled core; `api` translates the core's own exceptions into these.
"""

from __future__ import annotations

__all__ = ["ControllerError", "ScenarioError", "SimulationError"]


class ScenarioError(ValueError):
    """The scenario is invalid: bad TOML, a bad override, or rejected by the core's validator."""


class SimulationError(RuntimeError):
    """The simulation failed while running, including internal errors (panics) in the core."""


class ControllerError(SimulationError):
    """A congestion controller written in Python failed (an exception, or a window that is not a
    positive integer): the message names the controller, the callback and the simulated time; the
    Python exception, if any, is the `__cause__`."""
