"""scripts/perf_join.py's reading of callgrind's per-instruction counts (the profile join)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    return load_script("perf_join")


# A --dump-instr=yes profile in callgrind's format: positions "instr line", relative addresses
# (+N / -N / *), a call's inclusive cost on the line after `calls=` (not the caller's own cost),
# and an object named first in a `cob=` line.
PROFILE = """\
positions: instr line
events: Ir
ob=(1) /usr/lib/libc.so.6
fn=(1) memcpy
0x500 10 7
+4 * 7
ob=(2)
cob=(3) /bins/run_json-x
fn=(2) World::run
0x1000 5 3
+2 * 3
calls=1 0x2000 9
* * 1000
+3 +1 2
-1 * 5
ob=(3)
fn=(3) poll_transmit
0x2000 9 11
"""


def test_counts_of_the_binary_only_with_relative_addresses_and_calls_skipped(tmp_path: Path) -> None:
    f = tmp_path / "cg.out"
    f.write_text(PROFILE)
    counts = _load().callgrind_counts(str(f), "/somewhere/run_json-x")
    # ob=(2) is not the binary (no name: not run_json-x), ob=(3) is (named by cob=).
    assert dict(counts) == {0x2000: 11}


def test_the_binary_named_in_ob_counts_every_line(tmp_path: Path) -> None:
    f = tmp_path / "cg.out"
    f.write_text(
        PROFILE.replace("ob=(2)\n", "ob=(2) /bins/run_json-x\n").replace(
            "cob=(3) /bins/run_json-x", "cob=(3) /x"
        )
    )
    counts = _load().callgrind_counts(str(f), "run_json-x")
    # 0x1000: 3; +2 -> 0x1002: 3; the calls= cost line (1000) is skipped; +3 -> 0x1005: 2;
    # -1 -> 0x1004: 5. ob=(3) is then another object (/x).
    assert dict(counts) == {0x1000: 3, 0x1002: 3, 0x1005: 2, 0x1004: 5}
