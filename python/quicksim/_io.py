"""Atomic file writes shared by results, sweeps, plots and reproductions: write to a temporary
name in the same directory, fsync, rename. A reader never sees a half-written file, and a
crash leaves the previous version (or nothing) in place.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["atomic_write", "atomic_write_text", "parquet_writer"]


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


def parquet_writer(frame: pd.DataFrame) -> Callable[[Path], object]:
    """A writer for `atomic_write` that stores `frame` as Parquet, without its index."""
    return lambda path: frame.to_parquet(path, index=False)
