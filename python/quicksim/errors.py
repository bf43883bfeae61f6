"""The two exceptions of the public API.

They are plain Python classes, so pure-Python code (scenario loading, overrides) can raise them
without the compiled core; `api` translates the core's own exceptions into these.
"""

from __future__ import annotations

__all__ = ["ScenarioError", "SimulationError"]


class ScenarioError(ValueError):
    """The scenario is invalid: bad TOML, a bad override, or rejected by the core's validator."""


class SimulationError(RuntimeError):
    """The simulation failed while running, including internal errors (panics) in the core."""
