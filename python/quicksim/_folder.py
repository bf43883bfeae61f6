"""What a run's output folder holds, for the checks that keep one folder to one run: the stale
outputs of an earlier run removed when a run reuses the folder (`clear_outputs`), and the files
read back checked to come from one run (`check_one_run`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._io import PARQUET_KEY
from .errors import ScenarioError

__all__ = ["RUN_STAMP", "check_one_run", "clear_outputs"]

RUN_STAMP = ("seed", "scenario_hash", "trace_hash")
"""What identifies the run that wrote a file: the provenance fields every Parquet file carries
(`Result.provenance`) that summary.json's `meta` holds too. `trace_hash` is a hash of the run's
whole event trace, so two runs differ in it unless they are the same simulation."""

FIXED_FILES = ("summary.json", "scenario.json", "capture.pcapng")
"""Files a run writes under these names (besides `<table>.parquet` and the qlog files)."""


def clear_outputs(folder: Path, tables: Iterable[str], also: Iterable[str] = ()) -> list[Path]:
    """Remove what an earlier run left in `folder` (summary.json first, so an interruption leaves
    the folder reading as incomplete): its tables, scenario.json, capture.pcapng, qlog files and
    the files named in `also` (the CLI's plots). Only in a folder that holds a quicksim result
    (its summary.json or scenario.json): a folder of the user's own files is left alone. Returns
    the paths removed."""
    if not ((folder / "summary.json").is_file() or (folder / "scenario.json").is_file()):
        return []
    names = [*FIXED_FILES, *(f"{t}.parquet" for t in tables), *also]
    candidates = [folder / n for n in dict.fromkeys(names)]
    candidates += sorted({*folder.glob("*.client.sqlog"), *folder.glob("*.server.sqlog")})
    removed = []
    for path in candidates:
        if path.is_file():
            path.unlink()
            removed.append(path)
    return removed


def check_one_run(folder: Path, meta: Mapping[str, Any], tables: Iterable[str]) -> None:
    """Refuse (ScenarioError naming the file) a folder whose Parquet files were written by another
    run than its summary.json: two runs into one folder used to leave tables of both seeds behind
    a summary that looked complete. Files without provenance (written before it existed) and a
    summary without the stamp are not judged."""
    import pyarrow.parquet as pq

    want = {k: meta.get(k) for k in RUN_STAMP if meta.get(k) is not None}
    if not want:
        return
    for table in tables:
        path = folder / f"{table}.parquet"
        try:
            raw = (pq.read_schema(path).metadata or {}).get(PARQUET_KEY)
        except OSError:
            continue  # a missing or unreadable table is reported when it is read
        if raw is None:
            continue
        try:
            stamp = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise ScenarioError(f"{path}: its provenance is not JSON; the file is damaged") from None
        differs = [k for k in want if k in stamp and stamp[k] != want[k]]
        if differs:
            shown = ", ".join(f"{k} {stamp[k]!r} vs {want[k]!r}" for k in differs)
            raise ScenarioError(
                f"{path}: written by another run than summary.json ({shown}); the folder mixes the "
                "outputs of two runs: run again into an empty folder"
            )
