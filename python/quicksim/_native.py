"""The one door to the compiled core, `quicksim._core`: every module that needs it goes through
here, so the core stays private (like pydantic-core's `_pydantic_core`), a missing build gives
one clear hint, and the core's exceptions become quicksim's.

Tests stand a fake core in for `api._load_core` (what runs scenarios); unit parsing and the
output schema always use the real core.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any, TypeVar

from .errors import ControllerError, ScenarioError, SimulationError

__all__ = ["call", "load_core"]

_T = TypeVar("_T")


def load_core() -> ModuleType:
    """The compiled module, or an ImportError that says how to build it."""
    # Not cached: the import system already does, and a test can then hide the core.
    try:
        from . import _core
    except ImportError as e:
        raise ImportError(
            "quicksim's compiled core (quicksim._core) is not available; "
            "build it with `maturin develop --release` in the repository root"
        ) from e
    return _core


def call(core: ModuleType, fn: Callable[..., _T], *args: Any) -> _T:
    """Call into the core, translating its exceptions; a Rust panic never leaks as is."""
    # A stand-in core (tests) may not define it; `except ()` matches nothing.
    controller_error = getattr(core, "ControllerError", ())
    try:
        return fn(*args)
    except core.ScenarioError as e:
        raise ScenarioError(str(e)) from None
    except controller_error as e:
        raise ControllerError(str(e)) from e.__cause__
    except core.SimulationError as e:
        raise SimulationError(str(e)) from None
    except BaseException as e:
        # pyo3 turns a panic into pyo3_runtime.PanicException, a BaseException subclass that
        # `except Exception` would not catch.
        if type(e).__name__ == "PanicException":
            raise SimulationError(
                f"internal error in the simulator core (Rust panic: {e}); "
                "this is a bug, please report it with the scenario and the seed"
            ) from e
        raise
