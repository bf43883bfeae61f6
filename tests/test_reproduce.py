"""`quicksim reproduce`: the registry, the report files, and the theory it overlays."""

from __future__ import annotations

import csv
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from quicksim import reproduce as rp
from quicksim.reproduce.buffer_sizing import BDP, sawtooth

Cli = Callable[..., subprocess.CompletedProcess[str]]


def test_list_names_every_reproduction(cli: Cli) -> None:
    proc = cli("reproduce", "--list")
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines()]
    assert names == list(rp.REPRODUCTIONS)


def test_needs_a_name_or_all(cli: Cli) -> None:
    proc = cli("reproduce")
    assert proc.returncode == 2
    assert "--all" in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_name_is_a_usage_error(cli: Cli) -> None:
    proc = cli("reproduce", "paper-fig99")
    assert proc.returncode == 2
    assert "paper-fig3" in proc.stderr and "Traceback" not in proc.stderr


def test_every_module_has_the_interface() -> None:
    for name in rp.REPRODUCTIONS:
        mod = rp.module(name)
        assert name == mod.NAME
        assert mod.TITLE and callable(mod.run)


def test_rfc9438_fluid_model_gives_its_tables() -> None:
    """RFC 9438 §5.1: max(1.054 (RTT/p)^0.75, 1.2/sqrt(p)), rounded, is every cell of Tables 1-2."""
    from quicksim.reproduce.cubic_rfc9438 import TABLE, table_value

    for rtt, row in TABLE.items():
        for p, segments in row.items():
            assert round(table_value(rtt, p)) == segments, (rtt, p)


def test_sawtooth_limits() -> None:
    # W_max = BDP + B: the classic 75 % with no buffer, a busy link from B = BDP on.
    assert sawtooth(0.0, extra=0.0)[0] == pytest.approx(0.75)
    assert sawtooth(BDP, extra=0.0)[0] == pytest.approx(1.0)
    assert sawtooth(2 * BDP, extra=0.0)[0] == pytest.approx(1.0)
    # Closed form for B < BDP: U = 3 (P + B)^2 / (4 (P^2 + P B + B^2)).
    p, b = BDP, 0.4 * BDP
    assert sawtooth(b, extra=0.0)[0] == pytest.approx(3 * (p + b) ** 2 / (4 * (p * p + p * b + b * b)))
    # With B = BDP the queue runs from 0 to B; time-weighted (dt ~ W dW) its mean is above B / 2.
    assert BDP / 2 < sawtooth(BDP, extra=0.0)[1] < BDP


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.core
@pytest.mark.slow
def test_paper_fig3_quick_end_to_end(cli: Cli, tmp_path: Path) -> None:
    proc = cli("reproduce", "paper-fig3", "--quick", "--out", str(tmp_path), "-j", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "paper-fig3"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "2 of 2 checks passed" in report
    assert "link-bandwidth mtu=1280" in report and "link-bandwidth mtu=9000" in report
    assert (out / "fig3_throughput_vs_mtu.png").stat().st_size > 10_000
    rows = _read_csv(out / "throughput_vs_mtu.csv")
    assert [int(r["mtu_bytes"]) for r in rows] == [1280, 9000]
    checks = _read_csv(out / "checks.csv")
    assert all(c["passed"] == "True" for c in checks)
    # The sweep is resumable: a second run reuses the finished points.
    again = cli("reproduce", "paper-fig3", "--quick", "--out", str(tmp_path), "-j", "1")
    assert again.returncode == 0, again.stderr
    assert len(list((out / "sweep" / "runs").glob("*.json"))) == 2


@pytest.mark.core
@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["paper-fig6", "showcase-linksharing", "buffer-sizing", "quic-tcp-fairness", "cubic-rfc9438"]
)
def test_quick_reproductions_write_their_files(name: str, tmp_path: Path) -> None:
    report = rp.reproduce(name, tmp_path, quick=True, jobs=2)
    out = tmp_path / name
    assert report.path == out / "report.md" and report.path.is_file()
    assert report.checks
    for filename, _ in report.figures:
        assert (out / filename).stat().st_size > 10_000, filename
    for filename, _ in report.csvs:
        assert (out / filename).is_file(), filename


@pytest.mark.core
@pytest.mark.slow
def test_index_links_every_report(tmp_path: Path) -> None:
    reports = [rp.reproduce(n, tmp_path, quick=True, jobs=2) for n in ("paper-fig3", "paper-fig5")]
    index = rp.write_index(reports, tmp_path).read_text(encoding="utf-8")
    assert "[paper-fig3](paper-fig3/report.md)" in index
    assert "[paper-fig5](paper-fig5/report.md)" in index


def test_jain_and_the_fairness_scenario() -> None:
    from quicksim.reproduce import quic_tcp_fairness as qt

    assert qt.jain([5.0, 5.0]) == pytest.approx(1.0)
    # (6 + 4)^2 / (2 (36 + 16)) = 100 / 104.
    assert qt.jain([6.0, 4.0]) == pytest.approx(100 / 104)
    assert qt.jain([10.0, 0.0]) == pytest.approx(0.5)
    assert qt.BDP_BYTES == 50_000  # 10 Mbit/s x 40 ms
    doc = qt.scenario(3, 20.0)
    assert [f["kind"] for f in doc["flows"]] == ["quic", "tcp"]
    assert doc["quic"]["cc"] == doc["tcp"]["cc"] == "cubic"
    # One flow starts at 0, the other within the first second; the seed decides.
    starts = {qt.start_offsets(s) for s in qt.SEEDS}
    assert len(starts) == len(qt.SEEDS) and all(min(s) == 0.0 and max(s) < 1.0 for s in starts)


@pytest.mark.core
def test_quic_tcp_fairness_quick(tmp_path: Path) -> None:
    # Quick mode: 3 seeds of 20 s (< 1 s of simulation), Jain >= 0.85 on average.
    report = rp.reproduce("quic-tcp-fairness", tmp_path, quick=True, jobs=1)
    assert report.ok, [(c.name, c.measured) for c in report.checks]
    assert (tmp_path / "quic-tcp-fairness" / "fairness.png").stat().st_size > 10_000
