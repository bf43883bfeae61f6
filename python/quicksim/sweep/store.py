"""Storage: the output directory (`plan.json`, `runs/<run_id>.json` written as each run ends,
the Parquet tables at the end), resuming from it, and reading it back (`load_sweep`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._io import atomic_write, atomic_write_text, parquet_writer
from .plan import Plan, PlanError, point_id
from .tables import SweepResult, _tables

__all__ = ["load_sweep"]


def _prepare_out(out: Path, plan: Plan) -> dict[str, dict[str, Any]]:
    """Create or reopen an output directory; returns the runs already recorded in it."""
    (out / "runs").mkdir(parents=True, exist_ok=True)
    plan_path = out / "plan.json"
    if plan_path.is_file():
        old = json.loads(plan_path.read_text(encoding="utf-8"))
        if old.get("fingerprint") != plan.fingerprint():
            raise PlanError(
                f"{out} holds runs of a different plan (scenario or metrics changed); "
                "use another output directory, or delete this one"
            )
    # Rewritten each time: the parameters or repetitions may have grown since the last run.
    _write_json(plan_path, plan.describe())
    done = {}
    for path in sorted((out / "runs").glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue  # cannot happen with atomic writes, but a bad file means "not done"
        done[str(record.get("run_id", path.stem))] = record
    return done


def _write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, json.dumps(_jsonable(value), indent=1, allow_nan=False) + "\n")


def _write_tables(out: Path, result: SweepResult) -> None:
    for name, frame in (("runs", result.runs), ("summary", result.summary), ("series", result.series)):
        if name == "series" and frame.empty:
            continue
        atomic_write(out / f"{name}.parquet", parquet_writer(frame))


def _jsonable(value: Any) -> Any:
    """NaN and inf become None (strict JSON), numpy scalars Python ones."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def load_sweep(out: str | os.PathLike[str]) -> SweepResult:
    """Read a sweep's output directory (the Parquet tables, or the run files of an unfinished one)."""
    out = Path(out)
    plan_path = out / "plan.json"
    if not plan_path.is_file():
        raise FileNotFoundError(f"{out}: no plan.json; not a quicksim sweep directory")
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    params = list(plan.get("params") or {})
    records = []
    for path in sorted((out / "runs").glob("*.json")):
        records.append(json.loads(path.read_text(encoding="utf-8")))
    # Only the runs of the plan as last written (a directory may hold runs of a larger one).
    wanted = {f"{point_id(p)}-r{rep}" for p in _points_of(plan) for rep in range(int(plan.get("repeat", 1)))}
    records = [r for r in records if r.get("run_id") in wanted]
    result = _tables(records, plan, params)
    result.out = out
    return result


def _points_of(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    shell = Plan(
        {},
        {k: list(v) for k, v in (plan.get("params") or {}).items()},
        tuple(tuple(g) for g in plan.get("zip") or ()),
    )
    return shell.points()
