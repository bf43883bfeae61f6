"""Reproductions of the published results: the 2020 paper's Figs. 3-7 and the ACK_FREQUENCY
study, the INET linksharing showcase, the buffer-sizing note and TCP beside ns-3's TCP, each as a
report with plots, numbers and pass/fail checks.

    >>> from quicksim import reproduce
    >>> report = reproduce.reproduce("paper-fig3", out="out/reproduce", quick=True)
    >>> report.ok, report.path

Each reproduction is one module with NAME, TITLE and `run(ctx) -> Report`, listed in
`REPRODUCTIONS`; it writes its PNGs, CSVs and report.md into OUT/NAME/. The pass/fail logic is
`quicksim.validation.Check`, shared with `quicksim validate`.
"""

from __future__ import annotations

import errno
import importlib
import os
import time
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from .common import Context, Report, md_table

__all__ = ["REPRODUCTIONS", "Context", "Report", "module", "reproduce", "reproduce_all", "write_index"]

#: name -> module (in `--list` and `--all` order)
REPRODUCTIONS: dict[str, str] = {
    "paper-fig3": "paper_fig3",
    "paper-fig4": "paper_fig4",
    "paper-fig5": "paper_fig5",
    "paper-fig6": "paper_fig6",
    "paper-fig7": "paper_fig7",
    "ack-frequency": "ack_frequency",
    "showcase-linksharing": "showcase_linksharing",
    "buffer-sizing": "buffer_sizing",
    "quic-tcp-fairness": "quic_tcp_fairness",
    "cubic-rfc9438": "cubic_rfc9438",
    "cubic-dumbbell": "cubic_dumbbell",
    "tcp-vs-ns3": "tcp_vs_ns3",
    "quic-vs-tcp": "quic_vs_tcp",
    "aqm": "aqm",
    "quinn-vs-model": "quinn_vs_model",
    "quinn-real-vs-model": "quinn_real_vs_model",
    "bbr": "bbr",
    "buffer-sizing-sqrt-n": "sqrtn",
    "l4s": "l4s",
    "linux-vs-model": "linux_vs_model",
    "multipath": "multipath",
}

DEFAULT_OUT = Path("out") / "reproduce"
DEFAULT_QUICK_OUT = Path("out") / "reproduce-quick"
"""Quick mode writes elsewhere by default, so it never replaces a full-mode report."""


def default_out(quick: bool) -> Path:
    """The default output folder of a full (`out/reproduce`) or quick (`out/reproduce-quick`) run."""
    return DEFAULT_QUICK_OUT if quick else DEFAULT_OUT


def module(name: str) -> ModuleType:
    """The module of reproduction `name`, or a ValueError listing the known ones."""
    if name not in REPRODUCTIONS:
        raise ValueError(f"unknown reproduction {name!r}; choose from {', '.join(REPRODUCTIONS)}")
    return importlib.import_module(f"{__name__}.{REPRODUCTIONS[name]}")


def titles() -> dict[str, str]:
    """name -> one-line title of every reproduction."""
    return {name: module(name).TITLE for name in REPRODUCTIONS}


def reproduce(
    name: str,
    out: str | os.PathLike[str] = DEFAULT_OUT,
    *,
    quick: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    ns3_python: str | None = None,
    ns3_anchors: str | os.PathLike[str] | None = None,
) -> Report:
    """Run reproduction `name` into OUT/NAME/ (report.md, PNGs, CSVs) and return its Report.
    `ns3_python` and `ns3_anchors` reach the reproductions that compare with ns-3."""
    mod = module(name)
    ctx = Context(
        name,
        Path(out) / name,
        quick=quick,
        jobs=jobs,
        scheduler=scheduler,
        progress=progress,
        ns3_python=ns3_python,
        ns3_anchors=Path(ns3_anchors) if ns3_anchors is not None else None,
    )
    if quick:
        _refuse_to_replace_full(ctx.out / "report.md")
    ctx.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    report: Report = mod.run(ctx)
    report.wall_s = time.perf_counter() - start
    from .common import write_report

    write_report(report, ctx.out)
    return report


def _refuse_to_replace_full(report: Path) -> None:
    """A quick run must not overwrite a full-mode report (it took much longer to make)."""
    try:
        text = report.read_text(encoding="utf-8")
    except OSError:
        return
    if "Mode: full" in text:
        raise FileExistsError(
            errno.EEXIST,
            "holds a full-mode report that a quick run would overwrite; choose another --out "
            f"(quick runs default to {DEFAULT_QUICK_OUT}) or delete it",
            str(report.parent),
        )


def reproduce_all(
    out: str | os.PathLike[str] = DEFAULT_OUT,
    names: Iterable[str] | None = None,
    **kwargs: object,
) -> list[Report]:
    """Run every reproduction (or `names`) one after the other, then write OUT/index.md."""
    reports = [reproduce(n, out, **kwargs) for n in (names or REPRODUCTIONS)]  # type: ignore[arg-type]
    write_index(reports, Path(out))
    return reports


def write_index(reports: list[Report], out: Path) -> Path:
    """OUT/index.md: one line per report with its pass/fail counts."""
    from .._io import atomic_write_text

    rows = [
        [
            f"[{r.name}]({r.name}/report.md)",
            r.title,
            r.passed,
            r.failed,
            "pass" if r.ok else "**FAIL**",
            f"{r.wall_s:.1f} s",
        ]
        for r in reports
    ]
    total_failed = sum(r.failed for r in reports)
    quick = any(r.quick for r in reports)
    text = "\n\n".join(
        [
            "# quicksim reproductions",
            f"{sum(r.passed for r in reports)} of {sum(len(r.checks) for r in reports)} checks passed"
            f"{'' if not total_failed else f', {total_failed} failed'}"
            f"{' (quick mode: fewer points and repetitions)' if quick else ''}.",
            md_table(["reproduction", "what", "passed", "failed", "result", "wall time"], rows),
        ]
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / "index.md"
    atomic_write_text(path, text + "\n")
    return path
