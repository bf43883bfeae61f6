"""Building and running the ns-3 anchor programs (`linksharing.cc`, `scale.cc`, `mathis.cc`,
`dctcp.cc`, `sqrtn.cc` of the repository's `tools/ns3`) against the ns-3 of the `ns3` PyPI wheel, for
`quicksim bench --vs-ns3` and `quicksim reproduce tcp-vs-ns3`.

The sources come from a directory (`--ns3-anchors` or `$QUICKSIM_NS3_ANCHORS`, else `tools/ns3`
of the checkout this package runs from; the wheel does not ship them); they are copied into a
cache directory and built there with their own `build.sh` (never in the repository),
against the wheel found through a Python (`--ns3-python` or `$NS3_PYTHON`) where
`pip install ns3==3.44.post0` was done. Each program prints its `summary.json` as the last line
of stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["PROGRAMS", "REPO_ANCHORS", "SOURCES", "anchors_dir", "build", "default_cache", "run_program"]

#: The anchor programs' sources, as `build.sh` needs them.
SOURCES = ("build.sh", "common.h", "linksharing.cc", "scale.cc", "mathis.cc", "dctcp.cc", "sqrtn.cc")
#: The programs `build.sh` builds into bin/.
PROGRAMS = ("linksharing", "scale", "mathis", "dctcp", "sqrtn")
#: Where the sources are in a checkout: python/quicksim/bench/ns3.py -> tools/ns3.
REPO_ANCHORS = Path(__file__).resolve().parents[3] / "tools" / "ns3"


def anchors_dir(explicit: str | os.PathLike[str] | None, who: str) -> Path:
    """The anchor sources: `explicit`, else $QUICKSIM_NS3_ANCHORS, else the checkout's tools/ns3
    when this package runs from one; a SystemExit naming `who` (the command) when none is there
    or a source file is missing."""
    d = explicit or os.environ.get("QUICKSIM_NS3_ANCHORS")
    if not d:
        if not (REPO_ANCHORS / "build.sh").is_file():
            raise SystemExit(
                f"{who}: give --ns3-anchors DIR or set QUICKSIM_NS3_ANCHORS (the ns-3 programs are "
                "in tools/ns3 of a quicksim checkout; the installed package does not include them)"
            )
        d = REPO_ANCHORS
    path = Path(d)
    missing = [f for f in SOURCES if not (path / f).exists()]
    if missing:
        raise SystemExit(f"{who}: {path} has no {missing[0]}")
    return path


def default_cache() -> Path:
    """~/.cache/quicksim/ns3-anchors (or under $XDG_CACHE_HOME)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "quicksim" / "ns3-anchors"


def build(src: Path, python: str | None = None, cache: Path | None = None) -> Path:
    """Copy the sources into `cache` and build there when they changed or a binary is missing;
    returns the bin/ directory. `python` is the ns-3 Python (else $NS3_PYTHON, else build.sh's
    own default)."""
    cache = cache or default_cache()
    cache.mkdir(parents=True, exist_ok=True)
    changed = False
    for f in SOURCES:
        if not (cache / f).exists() or (cache / f).read_bytes() != (src / f).read_bytes():
            shutil.copy2(src / f, cache / f)
            changed = True
    bins = [cache / "bin" / p for p in PROGRAMS]
    if changed or not all(b.exists() for b in bins):
        env = dict(os.environ)
        py = python or os.environ.get("NS3_PYTHON")
        if py:
            env["NS3_PYTHON"] = py
        print(f"building the ns-3 anchors in {cache}", flush=True)
        subprocess.run(["bash", str(cache / "build.sh")], check=True, env=env, cwd=cache)
    return cache / "bin"


def run_program(
    binary: Path, args: Sequence[str] = (), outdir: Path | None = None
) -> tuple[dict[str, Any], Path | None]:
    """Run one anchor program with `args` (e.g. `--run=3`); returns its summary.json as a dict
    and `outdir` (where its CSVs are), or None when no `outdir` was given (a temporary one is
    used and deleted)."""
    if outdir is not None:
        outdir.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(
            [str(binary), *args, f"--outdir={outdir}"], check=True, capture_output=True, text=True
        )
        return json.loads(res.stdout.strip().splitlines()[-1]), outdir
    with tempfile.TemporaryDirectory(prefix="quicksim-ns3-") as out:
        res = subprocess.run(
            [str(binary), *args, f"--outdir={out}"], check=True, capture_output=True, text=True
        )
    return json.loads(res.stdout.strip().splitlines()[-1]), None
