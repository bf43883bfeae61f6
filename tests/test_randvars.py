"""Random flow values, flow groups and queue limits in BDPs, through the CLI and the API: the
`--set` of a distribution from the issue (#35), what was drawn (`meta.drawn`), its repetition
with the seed, group members in the outputs, and bad input refused naming the field and value."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import quicksim
from conftest import REPO

pytestmark = pytest.mark.core

Cli = Callable[..., subprocess.CompletedProcess[str]]
SCENARIO = REPO / "scenarios" / "udp-bottleneck.toml"
UNIFORM = 'flows.cbr.start={dist="uniform",min="0s",max="1s"}'


def _drawn_start(cli: Cli, out: Path, seed: int) -> float:
    p = cli(
        "run",
        str(SCENARIO),
        "--no-plots",
        "--seed",
        str(seed),
        "--out",
        str(out),
        "--set",
        "run.duration=2s",
        "--set",
        UNIFORM,
    )
    assert p.returncode == 0, p.stderr
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    start = summary["meta"]["drawn"]["cbr"]["start_s"]
    assert summary["totals"]["flows"]["cbr"]["start_s"] == start
    # The scenario is saved as written: the distribution, not the value drawn.
    scenario = json.loads((out / "scenario.json").read_text(encoding="utf-8"))
    cbr = next(f for f in scenario["flows"] if f["name"] == "cbr")
    assert cbr["start"] == {"dist": "uniform", "min": "0s", "max": "1s"}
    return float(start)


def test_a_start_time_drawn_from_the_cli(cli: Cli, tmp_path: Path) -> None:
    a = _drawn_start(cli, tmp_path / "a", 1)
    assert 0.0 <= a <= 1.0
    assert _drawn_start(cli, tmp_path / "b", 1) == a
    assert _drawn_start(cli, tmp_path / "c", 2) != a


def test_a_group_lists_its_members_in_every_output() -> None:
    doc = quicksim.load_scenario(SCENARIO)
    doc["run"]["duration"] = "1s"
    doc["flows"] = [
        {
            "name": "g",
            "kind": "tcp",
            "src": "sender1",
            "dst": "receiver1",
            "count": 3,
            "app": "bulk",
            "bytes": {"dist": "exponential", "mean": "30kB"},
            "stagger": "10ms",
        },
    ]
    doc["dumbbell"]["bottleneck"]["queue"] = {"packets": {"bdp": 1.0, "rtt": "24ms"}}
    r = quicksim.run(doc, seed=4)
    members = ["g-0", "g-1", "g-2"]
    assert sorted(r.totals["flows"]) == members
    assert sorted(set(r.flows["flow"].astype(str))) == members
    # Member i starts i x stagger after the group's start (which is 0 s).
    assert [r.totals["flows"][m]["start_s"] for m in members] == pytest.approx([0.0, 0.01, 0.02])
    for m in members:
        assert r.totals["flows"][m]["delivered_bytes"] == r.meta["drawn"][m]["bytes"]
    # 10 Mbit/s x 24 ms = 30 000 B = 20 packets of 1500 B.
    queue = next(v["queue"] for k, v in r.meta["network"]["links"].items() if k.startswith("bottleneck"))
    assert queue["packets"] == 20


def test_a_rate_and_an_extra_delay_drawn_from_the_cli(cli: Cli, tmp_path: Path) -> None:
    def draws(out: Path, seed: int) -> tuple[float, float]:
        p = cli(
            "run",
            str(SCENARIO),
            "--no-plots",
            "--seed",
            str(seed),
            "--out",
            str(out),
            "--set",
            "run.duration=1s",
            "--set",
            'flows.cbr.rate={dist="uniform",min="1Mbps",max="3Mbps"}',
            "--set",
            'flows.cbr.extra_delay={dist="exponential",mean="10ms"}',
        )
        assert p.returncode == 0, p.stderr
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        drawn = summary["meta"]["drawn"]["cbr"]
        return float(drawn["rate_bps"]), float(drawn["extra_delay_s"])

    rate, delay = draws(tmp_path / "a", 1)
    assert 1e6 <= rate <= 3e6 and delay >= 0.0
    assert draws(tmp_path / "b", 1) == (rate, delay)
    other = draws(tmp_path / "c", 2)
    assert other[0] != rate and other[1] != delay


def test_an_extra_delay_gives_a_flow_its_own_rtt() -> None:
    # Two TCP flows on one dumbbell pair, one with 15 ms more each way: its smallest RTT is
    # 30 ms larger, and so is nothing else of the other's.
    doc = quicksim.load_scenario(SCENARIO)
    doc["run"]["duration"] = "2s"
    tcp = {"kind": "tcp", "src": "sender1", "dst": "receiver1", "app": "bulk", "bytes": "200kB"}
    doc["flows"] = [dict(tcp, name="near"), dict(tcp, name="far", extra_delay="15ms")]
    conn = quicksim.run(doc).conn
    min_rtt = conn.groupby(conn["flow"].astype(str))["min_rtt_s"].min()
    assert min_rtt["far"] - min_rtt["near"] == pytest.approx(0.030, abs=1e-3)
    assert min_rtt["near"] == pytest.approx(2 * (0.001 + 0.010 + 0.001), abs=2e-3)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ('{dist="uniform",min="2s",max="1s"}', ["flows[0].start", '"2s"', '"1s"']),
        ('{dist="normal",mean="1s"}', ["flows[0].start", "stddev"]),
        ('{dist="pareto",mean="1s",shape=0.9}', ["flows[0].start", "shape = 0.9"]),
        ('{dist="uniform",min="3Mbps",max="1Mbps"}', ["flows[0].rate", '"3Mbps"', '"1Mbps"']),
        ('{dist="exponential",mean="10ms"}', ["flows[0].rate", '"10ms"', "rate"]),
        ('{dist="weibull",mean="10ms"}', ["flows[0].extra_delay", '"weibull"']),
    ],
)
def test_a_bad_distribution_is_one_line_naming_field_and_value(
    cli: Cli, tmp_path: Path, value: str, words: list[str]
) -> None:
    setting = f"flows.cbr.{words[0].split('.')[-1]}={value}"
    p = cli("run", str(SCENARIO), "--no-plots", "--out", str(tmp_path / "x"), "--set", setting)
    assert p.returncode == 2, p.stderr
    line = p.stderr.strip()
    assert "\n" not in line, line
    for w in words:
        assert w in line, line


def test_the_sample_limit_is_announced_before_a_run_that_would_cut_it(cli: Cli, tmp_path: Path) -> None:
    from quicksim.cli.run import sample_limit_notes

    doc = quicksim.load_scenario(SCENARIO)
    doc["dumbbell"]["bottleneck"]["rate"] = "1Gbps"
    doc["run"]["duration"] = "30s"
    notes = sample_limit_notes(quicksim.validate(doc))
    # 1 Gbit/s of 1500 B frames: 83 333 packets/s, 2 samples each: 1e6 samples after 6 s.
    assert len(notes) == 1, notes
    assert "dumbbell.bottleneck, dumbbell.access" in notes[0]
    assert "t = 6 s of 30 s" in notes[0]
    assert "--set run.record.max_samples=5500001" in notes[0]
    # At 10 Mbit/s the default holds 600 s: nothing to say.
    assert sample_limit_notes(quicksim.validate(quicksim.load_scenario(SCENARIO))) == []
    # The CLI says it before the run.
    p = cli(
        "run",
        str(SCENARIO),
        "--no-plots",
        "--out",
        str(tmp_path / "x"),
        "--set",
        "dumbbell.bottleneck.rate=1Gbps",
        "--set",
        "run.duration=0.1s",
        "--set",
        "run.record.max_samples=10000",
    )
    assert p.returncode == 0, p.stderr
    assert "note: the queue series of dumbbell.bottleneck" in p.stderr


def test_the_summary_lists_a_groups_members_not_the_group(cli: Cli, tmp_path: Path) -> None:
    p = cli(
        "run",
        str(SCENARIO),
        "--no-plots",
        "--out",
        str(tmp_path / "x"),
        "--set",
        "run.duration=1s",
        "--set",
        "flows.cbr.count=2",
        "--set",
        "flows.cbr.stagger=100ms",
    )
    assert p.returncode == 0, p.stderr
    rows = [line.split()[0] for line in p.stdout.splitlines() if line.startswith(("cbr", "poisson"))]
    assert rows[:3] == ["cbr-0", "cbr-1", "poisson"], p.stdout


def test_the_json_schema_takes_the_new_forms_and_refuses_a_bad_one() -> None:
    import jsonschema

    from quicksim._native import load_core

    validator = jsonschema.Draft202012Validator(json.loads(load_core().scenario_schema()))
    doc = quicksim.load_scenario(SCENARIO)
    doc["flows"][0].update(
        count=10,
        stagger="1ms",
        start={"dist": "lognormal", "median": "1s", "sigma": 0.5},
        stop={"dist": "pareto", "mean": "5s", "shape": 1.5},
    )
    doc["dumbbell"]["bottleneck"]["queue"] = {"packets": {"bdp": 1.5, "rtt": "100ms"}}
    assert not list(validator.iter_errors(doc))
    doc["flows"][0]["start"] = {"dist": "normal", "mean": "1s"}
    assert list(validator.iter_errors(doc))
