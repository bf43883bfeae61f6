"""Seed 001: two CUBIC file transfers of 32.3 MB share a dumbbell's bottleneck; link
utilization and Jain's index against capacity, random loss, client 2's extra delay and an ON/OFF
UDP background, with the theory each finding is checked against (slow-start round trips of a
finite file, RFC 9438's average window under loss, RTT unfairness, the UDP's share)."""

from __future__ import annotations

import time

from ..common import Context, Report, save_csv, save_figure
from .study import NAME, TITLE

__all__ = ["NAME", "TITLE", "run"]


def run(ctx: Context) -> Report:
    """The four experiments (QUIC, and TCP as the variant), the sensitivity to the base RTT and
    the two mechanisms at 1 Gbit/s; figures, CSVs and the checks."""
    from . import experiments as st

    t = time.perf_counter()
    data, checks = st.run_all(ctx)
    for name, frame in data.items():
        save_csv(frame, ctx.out / f"{name}.csv")
    from . import plots as pl

    figures = pl.figures(data, ctx.quick)
    for filename, (fig, _) in figures.items():
        save_figure(fig, ctx.out / filename)
    from . import text as tx

    return Report(
        NAME,
        TITLE,
        "seed 001 (a CUBIC-style sender over UDP on a Mininet dumbbell): the link utilization and "
        "Jain's index of two transfers against capacity, random loss, RTT difference and an ON/OFF "
        "UDP background",
        checks,
        figures=[(f, caption) for f, (_, caption) in figures.items()],
        csvs=[(f"{name}.csv", tx.CSV_DOC[name]) for name in data],
        explanation=tx.explanation(data, ctx.quick),
        sections=tx.sections(data),
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )
