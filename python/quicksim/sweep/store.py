"""Storage: the output directory (`plan.json`, `runs/<run_id>.json` written as each run ends,
the Parquet tables at the end), resuming from it, and reading it back (`load_sweep`).
"""

from __future__ import annotations

import hashlib
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
        # Metrics may change (new ones are computed from the kept tables); the scenario may not.
        # A plan.json from before `scenario_fingerprint` holds both in `fingerprint`.
        same = (
            old.get("scenario_fingerprint") == plan.scenario_fingerprint()
            if "scenario_fingerprint" in old
            else old.get("fingerprint") == plan.fingerprint()
        )
        if not same:
            raise PlanError(
                f"{out} holds runs of a different plan (scenario or metrics changed); "
                "use another output directory, or delete this one"
            )
    # plan.json is rewritten by the caller (`write_plan`) once the stored runs are known to serve
    # this plan: the parameters, repetitions or metrics may have grown since the last run.
    # Temporary files of writes a killed sweep left behind (`_io.atomic_write` names them so).
    for stray in [*out.glob(".*.tmp-*"), *(out / "runs").glob(".*.tmp-*")]:
        stray.unlink(missing_ok=True)
    done = {}
    for path in sorted((out / "runs").glob("*.json")):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue  # cannot happen with atomic writes, but a bad file means "not done"
        if _complete(record) and record["run_id"] == path.stem:
            done[path.stem] = record
    return done


def write_plan(out: Path, plan: Plan) -> None:
    """Write `plan.json`, the plan the directory's tables are of (`load_sweep` reads it)."""
    _write_json(out / "plan.json", plan.describe())


def _complete(record: Any) -> bool:
    """A stored run record with every field the tables read (else: not done, run it again)."""
    return (
        isinstance(record, dict)
        and isinstance(record.get("run_id"), str)
        and isinstance(record.get("key"), str)
        and isinstance(record.get("values"), dict)
        and isinstance(record.get("series"), dict)
        and isinstance(record.get("params"), dict)
        and isinstance(record.get("point"), int)
        and isinstance(record.get("rep"), int)
        and isinstance(record.get("seed"), int)
        and "error" in record
    )


def run_key(scenario: Mapping[str, Any], seed: int, inputs: str = "") -> str:
    """What a stored run must match to be reused: its effective scenario (the plan's scenario with
    the point's overrides applied), its seed and the contents of the files the scenario names
    (`inputs`, from `InputDigests`): an edited trace or controller module reruns the runs."""
    # Without input files, the key of the versions before file digests (their runs stay reusable).
    key = [_jsonable(scenario), seed, inputs] if inputs else [_jsonable(scenario), seed]
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class InputDigests:
    """SHA-256 of the contents of every file a scenario's results depend on besides its text:
    each mahimahi trace (`model = { kind = "trace", file = ... }`, wherever it is) and the source
    file of each Python controller (a `py:` name, imported only with `allow_python`, as
    `cc.controllers_of` decides; a registered name). Each file is read once per sweep."""

    def __init__(self, allow_python: bool) -> None:
        self._allow_python = allow_python
        self._files: dict[str, str] = {}

    def of(self, doc: Mapping[str, Any]) -> str:
        """One digest of the files `doc` names ("" when it names none)."""
        files = input_files(doc, self._allow_python)
        parts = sorted(f"{field}={path}:{self._file(path)}" for field, path in files)
        return hashlib.sha256("\n".join(parts).encode()).hexdigest() if parts else ""

    def _file(self, path: str) -> str:
        if path not in self._files:
            h = hashlib.sha256()
            try:
                with open(path, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                self._files[path] = h.hexdigest()
            except OSError as e:  # the run reports it; the key only has to differ from a readable file
                self._files[path] = f"unreadable ({type(e).__name__})"
        return self._files[path]


def input_files(doc: Mapping[str, Any], allow_python: bool) -> list[tuple[str, str]]:
    """(field, path) of the files `doc` names whose contents change its results (see
    `InputDigests`)."""
    from .. import cc

    found: list[tuple[str, str]] = []
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Mapping):
            if node.get("kind") == "trace" and isinstance(node.get("file"), str):
                found.append((f"{path}.file", str(node["file"])))
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))
    for name, cls in cc.controllers_of(doc, allow_python=allow_python).items():
        source = _source_file(cls)
        if source is not None:
            found.append((f"cc {name}", source))
    return found


def _source_file(cls: type) -> str | None:
    import inspect

    try:
        return inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None


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
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            continue
        if _complete(record):
            records.append(record)
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
