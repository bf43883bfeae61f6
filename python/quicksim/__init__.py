"""quicksim: a packet-level network simulator with a Rust core.

    >>> import quicksim
    >>> res = quicksim.run("scenarios/udp-bottleneck.toml", seed=1, sets=["run.duration=5s"])
    >>> res.throughput(layer="delivered").head()

Importing the package is cheap: pandas is loaded only when a `Result` is built, matplotlib only
by `quicksim.plotting`, so `quicksim --help` stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import cc, schedulers  # noqa: F401  (quicksim.schedulers.register without an import)
from .api import apply_overrides, load_scenario, run, validate
from .errors import ControllerError, ScenarioError, SimulationError

if TYPE_CHECKING:
    from .results import Result
    from .sweep import sweep
else:
    # The package quicksim.sweep is itself callable as the function `sweep` (one object for the
    # name, see quicksim/sweep/__init__.py); type checkers are shown the function's signature.
    # Light: stdlib only until a sweep runs.
    from . import sweep

__all__ = [
    "ControllerError",
    "Result",
    "ScenarioError",
    "SimulationError",
    "__version__",
    "apply_overrides",
    "cc",
    "load",
    "load_scenario",
    "run",
    "sweep",
    "validate",
]


def load(directory: Any) -> Result:
    """Read a run saved by `Result.save` (or `quicksim run --out DIR`) back into the same
    `Result`: tables, meta, totals, the scenario, and the same `hash()`."""
    from .results import Result

    return Result.load(directory)


def _version() -> str:
    from ._native import load_core

    try:
        core_version = load_core().__version__
    except ImportError:  # core not built yet: fall back to the installed metadata
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("quicksim")
        except PackageNotFoundError:
            return "0+unknown"
    return str(core_version)


__version__: str = _version()


def __getattr__(name: str) -> Any:
    # Result pulls in pandas; resolve it on first use (PEP 562) to keep `import quicksim` light.
    if name == "Result":
        from .results import Result

        return Result
    raise AttributeError(f"module 'quicksim' has no attribute {name!r}")
