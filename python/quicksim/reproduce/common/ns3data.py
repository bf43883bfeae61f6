"""ns-3's half of `tcp-vs-ns3`: the numbers of ns-3.44's anchor programs (`linksharing.cc`,
`mathis.cc`), either read from the CSVs committed under `reproduce/data/` or computed fresh by
building and running the programs of `tools/ns3` (`quicksim.bench.ns3`).

Both sources give the same tidy tables:

* linksharing, one row per (run, phase): run, t0_s, t1_s, recv1_mbps, recv2_mbps, recv3_mbps,
  udp_mbps, tcp_sum_mbps, jfi_active, drops (straight from each run's summary.json);
* mathis, one row per (variant, rtt_ms, p, run): variant, loss, delack, rtt_ms, p, run,
  goodput_mbps, ci95_mbps, mathis_b1_mbps, ratio_b1, p_measured, fast_recoveries, rtos,
  events, run_wall_s.

The committed CSVs start with `#` lines saying how they were made (commands, ns-3 version,
date); `load` skips them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "LINKSHARING_CSV",
    "MATHIS_CSV",
    "VARIANTS",
    "linksharing_rows",
    "load",
    "mathis_args",
    "mathis_row",
    "run_fresh",
    "write_csv",
]

LINKSHARING_CSV = "ns3_linksharing_tcp.csv"
MATHIS_CSV = "ns3_mathis_tcp.csv"

#: Mathis variants: name -> (loss process, DelAckCount), as mathis.cc's --loss and --delAck.
VARIANTS: dict[str, tuple[str, int]] = {
    "random": ("random", 1),
    "periodic": ("periodic", 1),
    "delack2": ("random", 2),
}

LINKSHARING_COLUMNS = (
    "run",
    "t0_s",
    "t1_s",
    "recv1_mbps",
    "recv2_mbps",
    "recv3_mbps",
    "udp_mbps",
    "tcp_sum_mbps",
    "jfi_active",
    "drops",
)


def data_path(name: str) -> Path:
    """Path of a committed data file (quicksim/reproduce/data/NAME)."""
    return Path(str(resources.files("quicksim.reproduce") / "data" / name))


def load(name: str, path: str | Path | None = None) -> pd.DataFrame:
    """A committed ns-3 table (`LINKSHARING_CSV` or `MATHIS_CSV`), its `#` header skipped.
    A ValueError names the file when a column the comparison needs is missing."""
    import pandas as pd

    p = Path(path) if path is not None else data_path(name)
    frame = pd.read_csv(p, comment="#")
    need = LINKSHARING_COLUMNS if name == LINKSHARING_CSV else ("variant", "rtt_ms", "p", "ratio_b1")
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ValueError(f"{p}: no column {missing[0]!r} (has {', '.join(frame.columns)})")
    return frame


def header(path: Path) -> list[str]:
    """The `#` lines at the top of a committed CSV (how it was made), without the `# `."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].strip())
    return lines


def linksharing_rows(summary: dict[str, Any], run: int) -> list[dict[str, Any]]:
    """Rows of one linksharing.cc summary.json: one per phase (ns-3's own phase edges)."""
    rows = []
    for ph in summary["phases"]:
        recv = list(ph["mbps"]) + [math.nan] * (3 - len(ph["mbps"]))
        jfi = ph.get("jfi_active")
        rows.append(
            {
                "run": run,
                "t0_s": float(ph["t0"]),
                "t1_s": float(ph["t1"]),
                "recv1_mbps": recv[0],
                "recv2_mbps": recv[1],
                "recv3_mbps": recv[2],
                "udp_mbps": float(ph["udp_mbps"]),
                "tcp_sum_mbps": float(ph["tcp_sum_mbps"]),
                # Jain's index over one flow is 1 (ns-3 writes it); none active: NaN.
                "jfi_active": math.nan if jfi is None else float(jfi),
                "drops": int(ph["drops"]),
            }
        )
    return rows


def mathis_args(variant: str, rtt_ms: float, p: float, run: int = 1) -> list[str]:
    """mathis.cc's arguments for one point (every other option at the program's default)."""
    loss, delack = VARIANTS[variant]
    return [f"--rttMs={rtt_ms:g}", f"--p={p:g}", f"--loss={loss}", f"--delAck={delack}", f"--run={run}"]


def mathis_row(summary: dict[str, Any], variant: str, run: int = 1) -> dict[str, Any]:
    """The row of one mathis.cc summary.json."""
    cfg, res, perf = summary["config"], summary["results"], summary["perf"]
    loss, delack = VARIANTS[variant]
    return {
        "variant": variant,
        "loss": loss,
        "delack": delack,
        "rtt_ms": float(cfg["rtt_ms"]),
        "p": float(cfg["p"]),
        "run": run,
        "goodput_mbps": float(res["goodput_mbps"]),
        "ci95_mbps": float(res["goodput_ci95_mbps"]),
        "mathis_b1_mbps": float(res["mathis_b1_mbps"]),
        "ratio_b1": float(res["ratio_to_mathis_b1"]),
        "p_measured": float(res["p_measured"]),
        "fast_recoveries": int(res["fast_recoveries"]),
        "rtos": int(res["rtos"]),
        "events": int(perf["events"]),
        "run_wall_s": float(perf["run_wall_s"]),
    }


def run_fresh(
    python: str | None,
    anchors: str | Path | None,
    runs: Sequence[int],
    points: Iterable[tuple[str, float, float, int]],
    cache: Path | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build the anchors against the ns-3 of `python` and run linksharing (`--run=` each of
    `runs`) and mathis at each (variant, rtt_ms, p, run) of `points`, one program at a time.
    Returns the linksharing and mathis tables."""
    import pandas as pd

    from ...bench import ns3

    bindir = ns3.build(ns3.anchors_dir(anchors, "quicksim reproduce tcp-vs-ns3"), python, cache)
    ls: list[dict[str, Any]] = []
    for run in runs:
        summary, _ = ns3.run_program(bindir / "linksharing", [f"--run={run}"])
        ls.extend(linksharing_rows(summary, run))
    ma = []
    for variant, rtt_ms, p, run in points:
        summary, _ = ns3.run_program(bindir / "mathis", mathis_args(variant, rtt_ms, p, run))
        ma.append(mathis_row(summary, variant, run))
    return pd.DataFrame(ls), pd.DataFrame(ma)


def write_csv(frame: pd.DataFrame, path: Path, header_lines: Sequence[str]) -> Path:
    """A table with `#` header lines (how it was made) above the CSV."""
    from ..._io import atomic_write_text

    text = "".join(f"# {line}\n" for line in header_lines) + frame.to_csv(index=False, float_format="%.10g")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return path
