"""Kept tables: the tables a plan keeps of every run (`keep = ["flows", "queues"]`), stored with
the sweep as `kept/<run_id>/<table>.parquet` beside `kept/<run_id>/result.json` (meta, totals and
the normalized scenario), and metrics added to a finished sweep computed from them, no run
executed. A metric that reads a table the sweep did not keep is refused, naming the table.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import metrics
from .._io import atomic_write, atomic_write_text
from ..results import Result, _conform, _nulls
from .plan import PlanError, _Metric
from .store import _jsonable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["KeptResult", "MissingTable", "computed_labels", "pack", "recompute", "write"]


class MissingTable(KeyError):
    """A metric read a table the sweep did not keep."""

    def __init__(self, table: str) -> None:
        super().__init__(table)
        self.table = table


def pack(result: Result, keep: Sequence[str]) -> dict[str, Any]:
    """In a worker: what `write` stores of a run (tables as Parquet bytes, so they travel from a
    Dask worker to the sweep's process like any result)."""
    tables = {}
    for name in keep:
        if name == "totals":
            continue
        buffer = io.BytesIO()
        result.table(name).to_parquet(buffer, index=False)
        tables[name] = buffer.getvalue()
    doc = {"name": result.name, "meta": result.meta, "totals": result.totals, "scenario": result.scenario}
    return {"tables": tables, "result": _jsonable(doc)}


def write(out: Path, run_id: str, packed: Mapping[str, Any]) -> list[str]:
    """Store a run's kept tables under `out/kept/<run_id>/`; returns the names kept ("totals"
    first). Written before the run's record, so a recorded run has its tables."""
    folder = out / "kept" / run_id
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in packed["tables"].items():
        atomic_write(folder / f"{name}.parquet", _bytes_writer(data))
    doc = {**packed["result"], "tables": sorted(packed["tables"])}
    atomic_write_text(folder / "result.json", json.dumps(doc, allow_nan=False) + "\n")
    return ["totals", *sorted(packed["tables"])]


def _bytes_writer(data: bytes) -> Callable[[Path], object]:
    return lambda path: path.write_bytes(data)


class KeptResult(Result):
    """A run rebuilt from its kept tables: a table it did not keep raises `MissingTable`."""

    def __init__(self, folder: Path) -> None:
        doc = json.loads((folder / "result.json").read_text(encoding="utf-8"))
        super().__init__(
            {"meta": doc.get("meta") or {}, "totals": doc.get("totals") or {}, "tables": {}},
            scenario=doc.get("scenario") or {},
            name=doc.get("name"),
        )
        self._folder = folder
        self._kept = tuple(doc.get("tables") or ())

    def table(self, name: str) -> pd.DataFrame:
        """The kept table `name`, read on first use; `MissingTable` for one not kept."""
        if name not in self._frames:
            if name not in self._kept:
                raise MissingTable(name)
            import pandas as pd

            frame = pd.read_parquet(self._folder / f"{name}.parquet")
            self._frames[name] = _nulls(name, _conform(name, frame))
        return self._frames[name]

    @property
    def flow_names(self) -> list[str]:
        """As `Result.flow_names`, from the scenario, the totals and the kept tables only."""
        if self._flow_names is None:
            names = [
                f["name"]
                for f in self.scenario.get("flows") or []
                if isinstance(f, Mapping) and isinstance(f.get("name"), str)
            ]
            names += [n for n in (self.totals.get("flows") or {}) if n not in names]
            for table in ("flows", "conn", "drops"):
                if table in self._kept:
                    present = self.table(table)["flow"].dropna().astype(str).unique()
                    names += sorted(set(present) - set(names))
            self._flow_names = names
        return list(self._flow_names)


def computed_labels(record: Mapping[str, Any], labels: Iterable[str]) -> set[str]:
    """Which of `labels` a stored run has values for: its `metrics` list, or for records written
    before it existed, the labels its value columns and series start with."""
    if isinstance(record.get("metrics"), list):
        return set(record["metrics"]) & set(labels)
    columns = [*(record.get("values") or {}), *(record.get("series") or {})]
    return {lab for lab in labels if any(c == lab or c.startswith(lab + ".") for c in columns)}


def recompute(
    out: Path, records: dict[str, dict[str, Any]], wanted: Sequence[_Metric], keep: Sequence[str]
) -> int:
    """Compute the metrics of `wanted` that stored runs lack, from their kept tables, and store
    the updated records; returns how many runs were updated. A run without kept tables, or a
    metric reading a table not kept, is a PlanError naming the metric and the table: nothing is
    computed then (the check runs on the first run that needs it, before any record changes)."""
    from .store import _write_json

    labels = [m.label for m in wanted]
    todo = []
    for run_id, record in records.items():
        if record.get("events") is None and record.get("error"):
            continue  # the simulation failed: no result to compute from, its values stay empty
        missing = [m for m in wanted if m.label not in computed_labels(record, labels)]
        if missing:
            todo.append((run_id, record, missing))
    if not todo:
        return 0
    kept_note = f"keep = {list(keep)}" if keep else "no keep"
    updates = []
    for run_id, record, missing in todo:
        folder = out / "kept" / run_id
        if not record.get("kept") or not (folder / "result.json").is_file():
            raise PlanError(
                f"sweep.metrics: {missing[0].label} is not among the values of the runs stored in {out}, "
                f"and run {run_id} kept no tables to compute it from (its plan had {kept_note}); "
                "add `keep` to the plan and use a new output directory, or delete this one"
            )
        result = KeptResult(folder)
        values, series, errors = dict(record.get("values") or {}), dict(record.get("series") or {}), []
        for m in missing:
            try:
                new, s = metrics.compute(result, m.fn, m.label, m.params)
            except MissingTable as e:
                raise PlanError(
                    f"sweep.metrics: {m.label} needs the table {e.table!r}, which the runs stored in {out} "
                    f"did not keep ({kept_note}); add {e.table!r} to keep and run the sweep in a new "
                    "output directory"
                ) from None
            except Exception as e:  # as in a worker: the metric's failure is the run's error
                errors.append(f"metric {m.label}: {type(e).__name__}: {e}")
                continue
            values.update(new)
            if s is not None:
                series[m.label] = {c: s[c].tolist() for c in ("t_s", "key", "value")}
        done = [*(record.get("metrics") or computed_labels(record, labels)), *(m.label for m in missing)]
        error = "; ".join(e for e in [record.get("error"), *errors] if e) or None
        updates.append(
            (run_id, {**record, "values": values, "series": series, "metrics": done, "error": error})
        )
    for run_id, record in updates:  # every metric computed first: a refusal leaves no record changed
        _write_json(out / "runs" / f"{run_id}.json", record)
        records[run_id] = record
    return len(updates)
