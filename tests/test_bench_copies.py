"""scripts/bench_copies.py: builds compared over fresh copies of their files, on fake runners."""

from __future__ import annotations

import stat
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fake runners are shell scripts")


def _load() -> ModuleType:
    return load_script("bench_copies")


def _runner(path: Path, events: int) -> str:
    """A stand-in for run_json: the scenario file holds its events per second; it prints one
    line per repetition and logs where it ran from (which file) next to itself."""
    path.write_text(
        "#!/bin/sh\n"
        f'echo "$0" >> "{path}.log"\n'
        'rate=$(cat "$1")\n'
        'i=0; while [ $i -lt "$2" ]; do\n'
        f'  echo "events {events} wall_s 0.000 ev/s $rate trace 0"; i=$((i+1))\n'
        "done\n"
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_each_build_runs_from_its_own_copies_and_the_ratio_is_the_baseline_s(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bc = _load()
    scen = tmp_path / "s.json"
    scen.write_text("1e6")
    old = _runner(tmp_path / "old", 1000)  # 1000 events at 1e6/s: 1 ms
    new = _runner(tmp_path / "new", 1500)  # 1.5 ms
    assert (
        bc.main([str(scen), f"old={old}", f"new={new}", "--reps", "3", "--rounds", "2", "--copies", "3"]) == 0
    )
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["old", "0.00100", "s"]
    assert out[1].split()[:4] == ["new", "0.00150", "s", "x1.5000"]
    # Constant runners: the best rep and the 10th percentile are the median.
    assert out[1].split()[4:10] == ["best", "0.00150", "s", "x1.5000", "p10", "0.00150"]
    # Three distinct copies per build, each run once per round, none of them the original file.
    runs = (tmp_path / "old.log").read_text().split()
    assert len(runs) == 2 * 3 and len(set(runs)) == 3 and old not in runs


def test_a_build_can_have_its_own_scenario(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bc = _load()
    (tmp_path / "new.json").write_text("1e6")
    (tmp_path / "old.json").write_text("2e6")
    a = _runner(tmp_path / "a", 1000)
    b = _runner(tmp_path / "b", 1000)
    args = [str(tmp_path / "new.json"), f"old={a}", f"new={b}", "--copies", "1", "--rounds", "1"]
    assert bc.main([*args, "--scenario-for", f"old={tmp_path / 'old.json'}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[1] == "0.00050" and out[1].split()[3] == "x2.0000"
    with pytest.raises(SystemExit, match="'older'"):
        bc.main([*args, "--scenario-for", f"older={tmp_path / 'old.json'}"])


def test_best_and_tenth_percentile_see_through_slow_spells(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A build whose runs alternate between its own speed and twice as slow (a host's slow spell)
    keeps its median at the slow figure; its best rep and 10th percentile give its own."""
    bc = _load()
    scen = tmp_path / "s.json"
    scen.write_text("1e6")
    steady = _runner(tmp_path / "steady", 1200)  # 1.2 ms every run
    spells = tmp_path / "spells"  # 1 ms, then 2 ms, then 2 ms, ... (one run in three fast)
    spells.write_text(
        "#!/bin/sh\n"
        f'n=$(cat "{spells}.n" 2>/dev/null || echo 0); echo $((n+1)) > "{spells}.n"\n'
        "if [ $((n % 3)) -eq 0 ]; then ev=1000; else ev=2000; fi\n"
        'i=0; while [ $i -lt "$2" ]; do\n'
        '  echo "events $ev wall_s 0 ev/s $(cat "$1") trace 0"; i=$((i+1))\n'
        "done\n"
    )
    spells.chmod(0o755)
    assert bc.main([str(scen), f"steady={steady}", f"spells={spells}", "--rounds", "3", "--copies", "1"]) == 0
    out = capsys.readouterr().out.splitlines()[1].split()
    assert out[:4] == ["spells", "0.00200", "s", "x1.6667"]
    assert out[4:10] == ["best", "0.00100", "s", "x0.8333", "p10", "0.00100"]
    assert bc.quantile([5.0, 1.0, 3.0, 2.0, 4.0], 0.0) == 1.0
    assert bc.quantile([5.0, 1.0, 3.0, 2.0, 4.0], 0.5) == 3.0


def test_a_runner_without_figures_is_named(tmp_path: Path) -> None:
    bc = _load()
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\necho nothing\n")
    bad.chmod(0o755)
    (tmp_path / "s.json").write_text("1")
    with pytest.raises(SystemExit, match="no 'events N wall_s W ev/s R' line"):
        bc.main([str(tmp_path / "s.json"), str(bad), "--copies", "1", "--rounds", "1"])


def test_one_file_given_twice_is_two_builds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bc = _load()
    (tmp_path / "s.json").write_text("1e6")
    a = _runner(tmp_path / "a", 1000)
    assert bc.main([str(tmp_path / "s.json"), a, a, "--copies", "2", "--rounds", "1"]) == 0
    rows = [line.split()[:4] for line in capsys.readouterr().out.splitlines()]
    assert rows == [["a", "0.00100", "s", "x1.0000"], ["a#1", "0.00100", "s", "x1.0000"]]
    # 2 builds x 2 copies, each its own file.
    assert len(set((tmp_path / "a.log").read_text().split())) == 4
