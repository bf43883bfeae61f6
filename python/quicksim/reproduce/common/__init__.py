"""What every reproduction shares: its context, its report (report.md, checks.csv) and the way
it turns model checks into a parallel, resumable sweep.

The modules beside this one are helpers of more than one reproduction, or of one that is a single
module: `ackpolicy` (paper-fig7, ack-frequency), `ns3data` (ns-3's committed numbers: tcp-vs-ns3,
bbr), `cubic_fluid` (cubic-rfc9438, the conformance cards), `inet_linksharing`
(showcase-linksharing).
"""

from __future__ import annotations

import math
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...validation import Check, scenario_path

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ...sweep import SweepResult

__all__ = ["Context", "Report", "check_sweep", "md_table", "save_csv", "save_figure", "write_report"]


@dataclass
class Context:
    """Where a reproduction writes (`out` = DIR/NAME) and how it runs its simulations."""

    name: str
    out: Path
    quick: bool = False
    jobs: int | None = None
    scheduler: str | None = None
    progress: bool = False
    #: For comparisons with ns-3 (`tcp-vs-ns3`): a Python with the `ns3` wheel, to compute
    #: ns-3's half fresh (else $NS3_PYTHON, else the committed numbers), and the anchor sources
    #: (else $QUICKSIM_NS3_ANCHORS).
    ns3_python: str | None = None
    ns3_anchors: Path | None = None

    def sweep(self, scenario: Any, **kwargs: Any) -> SweepResult:
        """`quicksim.sweep` into OUT/sweep[-suffix] with this context's jobs, scheduler and progress."""
        from ...sweep import sweep

        suffix = kwargs.pop("suffix", "")
        out = self.out / f"sweep{'-' + suffix if suffix else ''}"
        _forget_other_builds(out)
        return sweep(
            scenario,
            out=out,
            jobs=self.jobs,
            scheduler=self.scheduler,
            progress=self.progress,
            **kwargs,
        )


@dataclass
class Report:
    """The outcome of one reproduction, as written to report.md."""

    name: str
    title: str
    source: str
    checks: list[Check]
    #: (file name, caption) of each PNG, in the order the report shows them
    figures: list[tuple[str, str]] = field(default_factory=list)
    #: (file name, what it holds) of each CSV
    csvs: list[tuple[str, str]] = field(default_factory=list)
    #: Markdown: how it was measured and what the theory is
    explanation: str = ""
    #: extra Markdown sections (e.g. a per-phase table), shown after the checks
    sections: list[str] = field(default_factory=list)
    quick: bool = False
    wall_s: float = math.nan
    path: Path | None = None

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.checks)

    @property
    def failed(self) -> int:
        return len(self.checks) - self.passed

    @property
    def ok(self) -> bool:
        return self.failed == 0


def _fmt(value: float) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f"{value:.6g}"


def _tolerance(c: Check) -> str:
    if c.kind == "rel":
        return f"± {c.tolerance:.1%}"
    return {"min": "≥ expected", "max": "≤ expected", "exact": "= expected"}.get(c.kind, c.kind)


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines)


def checks_table(checks: Sequence[Check]) -> str:
    """Measured and expected side by side, with the tolerance and the verdict."""
    rows = []
    for c in checks:
        err = "" if c.kind != "rel" or not c.expected or math.isnan(c.measured) else f"{c.error:+.2%}"
        rows.append(
            [
                c.name,
                f"{_fmt(c.measured)} {c.unit}".strip(),
                f"{_fmt(c.expected)} {c.unit}".strip(),
                err,
                _tolerance(c),
                "pass" if c.passed else "**FAIL**",
                c.note,
            ]
        )
    return md_table(["check", "measured", "expected", "error", "tolerance", "result", "how"], rows)


def write_report(report: Report, out: Path) -> Path:
    """Write OUT/report.md and OUT/checks.csv; returns the report's path."""
    import pandas as pd

    from ... import __version__

    out.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame([c.as_dict() for c in report.checks])
    save_csv(frame, out / "checks.csv")
    verdict = "all passed" if report.ok else f"{report.failed} FAILED"
    mode = "quick (`--quick`: fewer points and repetitions)" if report.quick else "full"
    parts = [
        f"# {report.name}: {report.title}",
        f"Reproduces {report.source}.",
        f"**{report.passed} of {len(report.checks)} checks passed ({verdict}).** "
        f"Mode: {mode}; wall time {report.wall_s:.1f} s; quicksim {__version__}; "
        f"Python {platform.python_version()}, {os.cpu_count()} cores. "
        f"Rerun: `quicksim reproduce {report.name}{' --quick' if report.quick else ''}`.",
        "## Checks",
        checks_table(report.checks),
        *report.sections,
    ]
    if report.figures:
        parts.append("## Figures")
        for filename, caption in report.figures:
            parts.append(f"![{caption}]({filename})\n\n*{caption}*")
    csvs = [("checks.csv", "every check: measured, expected, tolerance, passed"), *report.csvs]
    parts.append("## Data\n\n" + "\n".join(f"- [`{f}`]({f}): {what}" for f, what in csvs))
    if report.explanation:
        parts.append("## How it is measured, and the theory\n\n" + report.explanation.strip())
    path = out / "report.md"
    from ..._io import atomic_write_text

    atomic_write_text(path, "\n\n".join(parts) + "\n")
    report.path = path
    return path


def save_figure(fig: Figure, path: Path, dpi: int = 120) -> Path:
    """Write a matplotlib Figure as PNG (atomically)."""
    from ..._io import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda p: fig.savefig(p, format="png", dpi=dpi))
    return path


def save_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write a DataFrame as CSV (atomically)."""
    from ..._io import atomic_write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, frame.to_csv(index=False, float_format="%.9g"))
    return path


def _core_build() -> str:
    """SHA-256 of the compiled core, so results of another build of the model are not reused."""
    import hashlib

    from ... import _native

    return hashlib.sha256(Path(str(_native.load_core().__file__)).read_bytes()).hexdigest()


def _forget_other_builds(out: Path) -> None:
    """A sweep directory resumes only runs of the same core build: the plan's fingerprint covers
    the scenario and the metrics but not the model, and a reproduction must not report numbers
    from a model that has since been fixed. Runs of another build are deleted."""
    import shutil

    stamp = out / "core-build.txt"
    build = _core_build()
    if out.exists() and (not stamp.is_file() or stamp.read_text(encoding="utf-8").strip() != build):
        print(
            f"quicksim reproduce: {out} holds runs of another core build; starting it afresh", file=sys.stderr
        )
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    stamp.write_text(build + "\n", encoding="utf-8")


# --- model checks as a sweep -------------------------------------------------------------------

#: How long the sweep's own run of each point lasts. The point's metric runs the check's real
#: simulation (the validation function chooses its duration and overrides), so the sweep's run is
#: a placeholder; it only carries the point's parameters to the metric.
PLACEHOLDER_DURATION = "1ms"


def check_sweep(
    ctx: Context,
    scenario: str,
    points: Sequence[Mapping[str, Any]],
    metric: Callable[..., Any],
) -> SweepResult:
    """Run one `validation` check per point through `quicksim.sweep`.

    `points` are dicts of scenario paths to values; `metric(result)` reads its point back from
    `result.scenario`, calls the validation function and returns {measured, expected,
    tolerance}. Running the checks as a sweep makes them parallel (all cores, or a Dask
    cluster) and resumable (OUT/sweep keeps every finished point), and the checks' own
    measurement and tolerance stay in one place, `quicksim.validation`.
    """
    keys = list(points[0])
    params = {k: [p[k] for p in points] for k in keys}
    return ctx.sweep(
        scenario_path(scenario),
        params=params,
        zip=[keys] if len(keys) > 1 else (),
        repeat=1,
        metrics=[metric],
        sets=[f"run.duration={PLACEHOLDER_DURATION}"],
    )


def sweep_checks(
    result: SweepResult, metric: str, name: Callable[[Mapping[str, Any]], str], unit: str, note: str
) -> list[Check]:
    """One Check per run of a `check_sweep`; a failed run becomes a failing check (NaN)."""
    checks = []
    for _, row in result.runs.iterrows():
        point = {p: row[p] for p in result.params}
        if isinstance(row["error"], str):
            checks.append(
                Check(name(point), math.nan, math.nan, 0.0, unit, note=f"run failed: {row['error']}")
            )
            continue
        checks.append(
            Check(
                name(point),
                float(row[f"{metric}.measured"]),
                float(row[f"{metric}.expected"]),
                float(row[f"{metric}.tolerance"]),
                unit,
                note=note,
            )
        )
    return checks


def failed_runs_checks(sw: SweepResult, name: str = "runs without error") -> list[Check]:
    """A failing exact check (runs that finished vs all runs) when any run of `sw` failed,
    noting the first error; none when every run finished."""
    failed = sw.failed
    if not len(failed):
        return []
    return [
        Check(
            name,
            len(sw.runs) - len(failed),
            len(sw.runs),
            0,
            "runs",
            kind="exact",
            note=str(failed["error"].iloc[0]),
        )
    ]


def check_values(checks: Sequence[Check]) -> dict[str, float]:
    """What a check-sweep metric returns: the single check's measured, expected and tolerance."""
    (c,) = checks
    if c.kind != "rel":  # the reconstruction in sweep_checks assumes relative checks
        raise ValueError(f"{c.name}: only relative checks can run as a sweep, not {c.kind!r}")
    return {"measured": c.measured, "expected": c.expected, "tolerance": c.tolerance}


def is_tty() -> bool:
    """Show progress bars only on a terminal."""
    return sys.stderr.isatty()
