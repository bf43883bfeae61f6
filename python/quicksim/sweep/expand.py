"""Parameter values: a list, `{values = [...]}`, or an inclusive range with an optional unit;
and a value written back as the TOML literal `apply_overrides` reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..units import split_number
from .plan import PlanError

__all__ = ["expand_values"]


def expand_values(path: str, spec: Any) -> list[Any]:
    """The values of one parameter: a list, `{values=[...]}`, or an inclusive range.

    A range is `{start, stop, step}` or `{start, stop, count}` (evenly spaced); `unit = "ms"`,
    or start/stop/step written with the same unit ("2ms"), makes the values strings ("2ms").
    """
    if isinstance(spec, list):
        values = spec
    elif isinstance(spec, Mapping):
        if "values" in spec:
            extra = set(spec) - {"values"}
            if extra or not isinstance(spec["values"], list):
                raise PlanError(f"sweep.params.{path}: a values table holds only `values = [...]`")
            values = spec["values"]
        else:
            values = _expand_range(path, spec)
    else:
        values = [spec]
    if not values:
        raise PlanError(f"sweep.params.{path}: no values")
    return list(values)


def _expand_range(path: str, spec: Mapping[str, Any]) -> list[Any]:
    where = f"sweep.params.{path}"
    known = {"start", "stop", "step", "count", "unit"}
    if set(spec) - known:
        raise PlanError(
            f"{where}: unknown key(s) {', '.join(sorted(set(spec) - known))}; "
            "use start, stop, step or count, unit"
        )
    if "start" not in spec or "stop" not in spec or ("step" in spec) == ("count" in spec):
        raise PlanError(
            f"{where}: a range needs start, stop and one of step or count, e.g. {{start=2, stop=100, step=2}}"
        )
    unit = spec.get("unit")
    numbers = {}
    for key in ("start", "stop", "step"):
        if key not in spec:
            continue
        value = spec[key]
        if isinstance(value, str):
            split = split_number(value)
            if split is None:
                raise PlanError(f"{where}.{key}: {value!r} is not a number")
            number: float = split[0]
            if unit is not None and split[1] != unit:
                raise PlanError(
                    f"{where}: mixed units {unit!r} and {split[1]!r}; write start, stop and step in one unit"
                )
            unit = split[1]
        elif isinstance(value, int | float) and not isinstance(value, bool):
            number = value
        else:
            raise PlanError(f"{where}.{key}: {value!r} is not a number")
        numbers[key] = number
    start, stop = numbers["start"], numbers["stop"]
    if "count" in spec:
        count = spec["count"]
        if not isinstance(count, int) or count < 1:
            raise PlanError(f"{where}.count: {count!r} must be a positive integer")
        step = (stop - start) / (count - 1) if count > 1 else 0.0
    else:
        step = numbers["step"]
        if step == 0 or (stop - start) * step < 0:
            raise PlanError(f"{where}: step {step} never gets from {start} to {stop}")
        count = math.floor((stop - start) / step + 1e-9) + 1
    if count > 1_000_000:
        raise PlanError(f"{where}: {count} values; that is surely a mistake")
    exact_ints = all(isinstance(v, int) for v in numbers.values()) and "count" not in spec
    values: list[Any] = []
    for i in range(count):
        v = start + i * step
        # Round away float noise (0.1 * 3 = 0.30000000000000004), like OMNeT++'s printed values.
        number_value: float | int = v if exact_ints else float(f"{v:.12g}")
        if isinstance(number_value, float) and number_value.is_integer() and exact_ints:
            number_value = int(number_value)
        values.append(number_value if not unit else f"{_fmt_number(number_value)}{unit}")
    return values


def _fmt_number(v: float | int) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return repr(v)


def _toml_value(value: Any) -> str:
    """A value as `apply_overrides` reads it back unchanged (TOML literal)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml_value(v)}" for k, v in value.items()) + "}"
    raise PlanError(f"parameter value {value!r} ({type(value).__name__}) has no TOML form")
