"""Atomic file writes shared by results, sweeps, plots and reproductions: write to a temporary
name in the same directory, fsync, rename. A reader never sees a half-written file, and a
crash leaves the previous version (or nothing) in place. Also the JSON layout of result files
(`dumps_readable`) and the provenance stored in Parquet files (`parquet_writer`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["PARQUET_KEY", "atomic_write", "atomic_write_text", "dumps_readable", "parquet_writer"]

PARQUET_KEY = b"quicksim"
"""Key of the JSON provenance (seed, scenario hash, versions, table) in a Parquet file's
key-value metadata: `pyarrow.parquet.read_schema(path).metadata[b"quicksim"]`."""


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Write via a temporary file in the same directory, then rename over `path`."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """`atomic_write` of UTF-8 text."""
    atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))


def parquet_writer(
    frame: pd.DataFrame, provenance: Mapping[str, Any] | None = None
) -> Callable[[Path], object]:
    """A writer for `atomic_write` that stores `frame` as Parquet, without its index, with
    `provenance` as JSON under PARQUET_KEY in the file's metadata (a file copied out of its
    folder still says which scenario, seed and version made it)."""
    if not provenance:
        return lambda path: frame.to_parquet(path, index=False)

    def write(path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        metadata = dict(table.schema.metadata or {})
        metadata[PARQUET_KEY] = json.dumps(dict(provenance), sort_keys=True).encode()
        pq.write_table(table.replace_schema_metadata(metadata), path)

    return write


def dumps_readable(value: Any, levels: int = 2, *, _depth: int = 0) -> str:
    """JSON with the outer `levels` levels indented and everything deeper on one line.

    A summary of 10 000 flows reads as one line per flow, and is written by the C encoder in
    pieces (`json.dumps(indent=...)` runs the pure-Python encoder: seconds for such a file).
    Strict: NaN or infinity raise ValueError.
    """
    if levels <= 0 or not isinstance(value, dict | list) or not value:
        return json.dumps(value, allow_nan=False)
    pad, end = "  " * (_depth + 1), "  " * _depth
    if isinstance(value, dict):
        items = [
            f"{pad}{json.dumps(str(k))}: {dumps_readable(v, levels - 1, _depth=_depth + 1)}"
            for k, v in value.items()
        ]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    items = [pad + dumps_readable(v, levels - 1, _depth=_depth + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + end + "]"
