"""`quicksim report DIR...`: one self-contained HTML page, looked at in real headless Chromium
(screenshot not blank, no console message), runs labelled uniquely, and nothing to show is an
error saying why (issue 35)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from quicksim.cli.report import labels

REPO = Path(__file__).resolve().parent.parent

Cli = Callable[..., subprocess.CompletedProcess[str]]

# buffer-sizing's flow starts at 2 s; with the delay statistics the scatter has points.
SHORT = ("--set", "run.duration=2.6s", "--no-plots", "-q")
DELAYS = ("--set", "run.record.delays=true")


def test_labels_are_the_shortest_distinguishing_path_ends(tmp_path: Path) -> None:
    assert labels([tmp_path / "a" / "out", tmp_path / "b" / "out"]) == ["a/out", "b/out"]
    assert labels([tmp_path / "x" / "a" / "out", tmp_path / "y" / "a" / "out", tmp_path / "z"]) == [
        "x/a/out",
        "y/a/out",
        "z",
    ]
    assert labels([tmp_path / "run1"]) == ["run1"]
    assert labels([tmp_path / "p" / "q", tmp_path / "q"]) == ["p/q", tmp_path.name + "/q"]


def _run(cli: Cli, out: Path, *extra: str) -> Path:
    proc = cli("run", "scenarios/buffer-sizing.toml", "--out", str(out), *SHORT, *extra)
    assert proc.returncode == 0, proc.stderr
    return out


def _one_line_error(proc: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("quicksim: error: report: ") and fragment in lines[0], (
        lines
    )


@pytest.mark.core
def test_two_runs_named_out_get_their_own_labels_and_one_page(cli: Cli, tmp_path: Path) -> None:
    a = _run(cli, tmp_path / "a" / "out", *DELAYS)
    b = _run(cli, tmp_path / "b" / "out", *DELAYS, "--set", "dumbbell.bottleneck.queue.packets=88")
    page, png = tmp_path / "page.html", tmp_path / "scatter.png"
    proc = cli("report", str(a), str(b), "--html", str(page), "--png", str(png))
    assert proc.returncode == 0, proc.stderr
    sources = {line.split()[0] for line in proc.stdout.splitlines()[2:] if line.startswith(("a/", "b/"))}
    assert sources == {"a/out", "b/out"}, proc.stdout
    text = page.read_text(encoding="utf-8")
    assert "<h2>Run a/out</h2>" in text and "<h2>Run b/out</h2>" in text
    # Self-contained: every image inline, nothing to fetch (no src or href but data: URLs).
    assert not re.findall(r"""(?:src|href)\s*=\s*["'](?!data:)""", text)
    assert not re.search(r"<(?:script|link)\b", text)
    # The scatter, and each run's throughput, queue and congestion window.
    assert text.count('src="data:image/png;base64,') == 1 + 2 * 3
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.core
def test_runs_without_delays_have_no_scatter_to_draw(cli: Cli, tmp_path: Path) -> None:
    """The issue's case: exit 0 and an empty plot in out/report.png. Asked for the scatter, it is
    an error saying why; the page shows the time series and says why the scatter is missing."""
    run = _run(cli, tmp_path / "nodelays")
    png, page = tmp_path / "s.png", tmp_path / "p.html"
    _one_line_error(cli("report", str(run), "--png", str(png), "--html", str(page)), "run.record.delays")
    assert not png.exists() and not page.exists()
    proc = cli("report", str(run), "--html", str(page))
    assert proc.returncode == 0, proc.stderr
    text = page.read_text(encoding="utf-8")
    assert "No run or sweep point has both a throughput and a p95 one-way delay" in text
    assert "p95 one-way delay" not in proc.stdout.splitlines()[0]  # no column of "-" printed


def test_an_empty_directory_is_nothing_to_show(cli: Cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    page = tmp_path / "p.html"
    _one_line_error(cli("report", str(tmp_path / "empty"), "--html", str(page)), "empty directory")
    assert not page.exists()


def test_a_damaged_table_of_a_run_is_one_line(cli: Cli, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.json").write_text('{"scenario": "x", "seed": 1, "flows": {}}', encoding="utf-8")
    (run / "flows.parquet").write_bytes(b"PAR1 not really")
    _one_line_error(cli("report", str(run), "--html", str(tmp_path / "p.html")), str(run))


# --- the page in a real browser --------------------------------------------------------------


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on PATH (.ci/run installs it: apt-get install chromium)")


def _browse(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [
        _chromium(),
        "--headless",
        "--no-sandbox",  # CI runs as root
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=tmp_path)


@pytest.mark.slow
@pytest.mark.core
def test_the_page_renders_in_headless_chromium(cli: Cli, tmp_path: Path) -> None:
    a = _run(cli, tmp_path / "a" / "out", *DELAYS)
    b = _run(cli, tmp_path / "b" / "out", *DELAYS, "--set", "dumbbell.bottleneck.queue.packets=88")
    page = tmp_path / "page.html"
    assert cli("report", str(a), str(b), "--html", str(page)).returncode == 0

    dom = _browse(page, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<h2>Run a/out</h2>" in dom.stdout
    # Every console message is a fault here: the page has no script, so a message is a blocked
    # fetch (its Content-Security-Policy allows nothing from outside the file) or a broken page.
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console

    shot = tmp_path / "shot.png"
    proc = _browse(page, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000")
    assert proc.returncode == 0 and shot.is_file(), proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    ink = (pixels < 0.9).any(axis=-1).mean()
    assert ink > 0.02, f"the screenshot is nearly blank ({ink:.2%} of its pixels are not white)"
    # The figures drew: the first colour of the cycle (matplotlib's tab:blue, #1f77b4) is there.
    blue = (
        (abs(pixels[..., 0] - 0x1F / 255) < 0.08)
        & (abs(pixels[..., 1] - 0x77 / 255) < 0.08)
        & (abs(pixels[..., 2] - 0xB4 / 255) < 0.08)
    )
    assert blue.mean() > 0.0005, "no plotted line in the screenshot"


@pytest.mark.slow
@pytest.mark.core
def test_a_sweep_shows_its_metrics_against_its_parameter_with_intervals(cli: Cli, tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'scenario = "{(REPO / "scenarios" / "buffer-sizing.toml").as_posix()}"\n\n'
        "[sweep]\nrepeat = 2\nseed = 1\n"
        'metrics = [{ name = "goodput_mbps" }, { name = "owd_p95_ms" }]\n\n'
        "[sweep.params]\n"
        '"dumbbell.bottleneck.queue.packets" = [11, 44]\n'
        '"run.duration" = ["2.4s"]\n'
        '"run.record.delays" = [true]\n',
        encoding="utf-8",
    )
    out = tmp_path / "sweep"
    proc = cli("sweep", str(plan), "--out", str(out), "-j", "1", timeout=600)
    assert proc.returncode == 0, proc.stderr
    page = tmp_path / "page.html"
    proc = cli("report", str(out), "--html", str(page), "--json")
    assert proc.returncode == 0, proc.stderr
    text = page.read_text(encoding="utf-8")
    assert "<h2>Sweep sweep</h2>" in text
    # The scatter, and each metric (per flow) against the swept buffer.
    assert 'alt="sweep: goodput_mbps.quic against dumbbell.bottleneck.queue.packets"' in text
    assert 'alt="sweep: owd_p95_ms.quic against dumbbell.bottleneck.queue.packets"' in text
    assert "<th>ci_low</th>" in text and "<th>ci_high</th>" in text
