"""The rows of whole connections in `flows` and `conn`: a run with multipath flows adds rows per
path to both tables, told apart by their `path` column (-1: the whole connection; 0, 1, ...: one
path of a multipath connection; docs/multipath.md). Per-flow figures read the connections' rows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # `quicksim --help` imports this module and must not load pandas
    import pandas as pd


def connection_rows(df: pd.DataFrame) -> pd.DataFrame:
    """`df` without the per-path rows (unchanged when it has no `path` column: no multipath flow)."""
    if "path" not in df.columns:
        return df
    return df[df["path"].to_numpy() < 0]
