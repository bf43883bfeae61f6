"""quinn flows (the real quinn-proto stack) from Python and the CLI: the README's `[quinn]`
table is accepted as written, the same seed gives the same tables, bad settings get one line
naming the field."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import quicksim

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
LINKSHARING = ROOT / "scenarios" / "linksharing.toml"
SHORT = [
    "run.duration=8s",
    "flows.sender1.kind=quinn",
    "flows.sender2.kind=quinn",
    "flows.sender3.kind=quinn",
]


def test_the_readme_quinn_table_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", text, flags=re.S) if b.startswith("[quinn]")]
    table = tomllib.loads(block)["quinn"]
    sets = [f"quinn.{k}={v if isinstance(v, str) else str(v).lower()}" for k, v in table.items()]
    r = quicksim.run(LINKSHARING, sets=SHORT + sets)
    assert r.totals["flows"]["sender1"]["quinn"]["established"] is True
    assert r.mean_throughput("sender1", 6, 8) > 5e6


def test_same_seed_same_tables_other_seed_other_handshake() -> None:
    a, b, c = (quicksim.run(LINKSHARING, seed=s, sets=SHORT) for s in (4, 4, 5))
    assert a.flows.equals(b.flows) and a.conn.equals(b.conn)
    assert a.meta["trace_hash"] == b.meta["trace_hash"]
    digest = [r.totals["flows"]["sender1"]["quinn"]["handshake_digest"] for r in (a, b, c)]
    assert digest[0] == digest[1] != digest[2]


@pytest.mark.parametrize(
    ("setting", "field"),
    [("quinn.cc=vegas", "quinn.cc"), ("flows.sender1.quinn.initial_rtt=0s", "flows[0].quinn.initial_rtt")],
)
def test_bad_settings_name_the_field(setting: str, field: str) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "quicksim",
            "run",
            str(LINKSHARING),
            "--set",
            "flows.sender1.kind=quinn",
            "--set",
            setting,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"quicksim: error: {field}:"), line
