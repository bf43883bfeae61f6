"""Sweep plans, seeds, statistics, storage and resume, with the stand-in core of conftest.

Everything here runs in-process (jobs=1) against FakeCore; tests/test_sweep_core.py runs the
real core in process pools, on Dask, and interrupts a sweep from the command line.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import quicksim
from conftest import FakeCore
from quicksim import stats
from quicksim.sweep import (
    Plan,
    PlanError,
    derive_seed,
    expand_values,
    load_plan,
    load_sweep,
    make_plan,
    run_plan,
)

# --- statistics -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "df", "expected"),
    [
        (0.975, 1, 12.7062047362),
        (0.975, 2, 4.3026527297),
        (0.975, 4, 2.7764451052),
        (0.975, 9, 2.2621571628),
        (0.975, 29, 2.0452296421),
        (0.975, 99, 1.9842169516),
        (0.995, 9, 3.2498355416),
        (0.95, 4, 2.1318467863),
        (0.6, 3, 0.2766706623),
        (0.025, 4, -2.7764451052),
    ],
)
def test_t_quantile_matches_tables(p: float, df: int, expected: float) -> None:
    assert stats.t_quantile(p, df) == pytest.approx(expected, abs=1e-6)


def test_t_quantile_inverts_the_cdf_for_fractional_df() -> None:
    for df in (1.5, 3.7, 42.0, 1000.0):
        for p in (0.51, 0.9, 0.975, 0.9999):
            assert stats.t_cdf(stats.t_quantile(p, df), df) == pytest.approx(p, abs=1e-12)
    assert stats.t_quantile(0.975, 1e9) == pytest.approx(1.959963985, abs=1e-6)  # the normal limit
    with pytest.raises(ValueError, match="p must be"):
        stats.t_quantile(1.0, 3)


def test_mean_ci_and_jain() -> None:
    ci = stats.mean_ci([1.0, 2.0, 3.0, 4.0, 5.0, math.nan])
    half = 2.7764451052 * math.sqrt(2.5) / math.sqrt(5)
    assert ci["n"] == 5 and ci["mean"] == 3.0 and ci["std"] == pytest.approx(math.sqrt(2.5))
    assert (ci["ci_low"], ci["ci_high"]) == pytest.approx((3 - half, 3 + half))
    one = stats.mean_ci([7.0])
    assert one["mean"] == 7.0 and math.isnan(one["ci_low"])
    assert stats.jain([1, 1, 1, 1]) == 1.0
    assert stats.jain([1, 0, 0, 0]) == 0.25
    assert math.isnan(stats.jain([0, 0]))


# --- plans ------------------------------------------------------------------------------------


def test_ranges_are_inclusive_and_free_of_float_noise() -> None:
    assert expand_values("x", {"start": 2, "stop": 10, "step": 2}) == [2, 4, 6, 8, 10]
    assert expand_values("x", {"start": 0.1, "stop": 0.5, "step": 0.1}) == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert expand_values("x", {"start": 10, "stop": 1, "step": -4}) == [10, 6, 2]
    assert expand_values("x", {"start": 0, "stop": 1, "count": 5}) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert expand_values("x", {"start": 2, "stop": 6, "step": 2, "unit": "ms"}) == ["2ms", "4ms", "6ms"]
    assert expand_values("x", {"start": "5kB", "stop": "25kB", "step": "10kB"}) == ["5kB", "15kB", "25kB"]
    assert expand_values("x", {"values": ["a", "b"]}) == ["a", "b"]
    assert expand_values("x", ["10Mbps"]) == ["10Mbps"]
    with pytest.raises(PlanError, match="never gets"):
        expand_values("x", {"start": 1, "stop": 5, "step": -1})
    with pytest.raises(PlanError, match="one of step or count"):
        expand_values("x", {"start": 1, "stop": 5})
    with pytest.raises(PlanError, match="mixed units"):
        expand_values("x", {"start": "1ms", "stop": "1s", "step": "1ms"})


def test_points_are_the_cross_product_with_zipped_groups(scenario: dict[str, Any]) -> None:
    plan = make_plan(
        scenario,
        {"a.x": [1, 2], "a.y": ["p", "q", "r"], "a.z": [10, 20, 30]},
        zip=[["a.y", "a.z"]],
        metrics=["goodput"],
    )
    assert plan.points() == [
        {"a.x": 1, "a.y": "p", "a.z": 10},
        {"a.x": 1, "a.y": "q", "a.z": 20},
        {"a.x": 1, "a.y": "r", "a.z": 30},
        {"a.x": 2, "a.y": "p", "a.z": 10},
        {"a.x": 2, "a.y": "q", "a.z": 20},
        {"a.x": 2, "a.y": "r", "a.z": 30},
    ]
    assert [m.label for m in plan.metrics] == ["goodput_mbps"]  # the alias resolves
    with pytest.raises(PlanError, match="equally many"):
        make_plan(scenario, {"a.x": [1, 2], "a.y": [1]}, zip=[["a.x", "a.y"]])
    with pytest.raises(PlanError, match="not one of the swept"):
        make_plan(scenario, {"a.x": [1]}, zip=[["a.x", "a.q"]])
    with pytest.raises(PlanError, match="collected twice"):
        make_plan(scenario, {}, metrics=["jain", "jain"])
    with pytest.raises(PlanError, match="unknown metric 'nope'"):
        make_plan(scenario, {}, metrics=["nope"])


def test_seeds_are_stable_and_independent_of_other_points(scenario: dict[str, Any]) -> None:
    small = make_plan(scenario, {"d": [1, 2]}, repeat=3)
    large = make_plan(scenario, {"d": [0, 1, 2, 3]}, repeat=5)
    seeds_small = {r.run_id: r.seed for r in small.runs()}
    seeds_large = {r.run_id: r.seed for r in large.runs()}
    assert len(seeds_small) == 6 and len(set(seeds_small.values())) == 6
    assert all(seeds_large[k] == v for k, v in seeds_small.items())
    # Pinned: a change of the derivation would silently change every published number.
    assert derive_seed(1, {"d": 1}, 0) == derive_seed(1, {"d": 1}, 0) < 2**63
    assert derive_seed(1, {"d": 1}, 0) != derive_seed(2, {"d": 1}, 0)
    assert small.seed == scenario["run"]["seed"] and "seed" not in small.scenario["run"]


def test_load_plan_from_a_plan_file_and_from_a_scenario(tmp_path: Path, scenario: dict[str, Any]) -> None:
    (tmp_path / "base.json").write_text(json.dumps(scenario))
    (tmp_path / "plan.toml").write_text(
        'scenario = "base.json"\n'
        "[sweep]\nrepeat = 4\nseed = 9\n"
        'metrics = ["jain", { name = "goodput", flow = "sender1", t0 = "1s", label = "g1" }]\n'
        '[sweep.params]\n"dumbbell.bottleneck.delay" = { start = 10, stop = 30, step = 10, unit = "ms" }\n'
    )
    plan = load_plan(tmp_path / "plan.toml", sets=["dumbbell.pairs=2"], repeat=2)
    assert plan.repeat == 2 and plan.seed == 9 and plan.scenario["dumbbell"]["pairs"] == 2
    assert plan.params == {"dumbbell.bottleneck.delay": ["10ms", "20ms", "30ms"]}
    assert [m.label for m in plan.metrics] == ["jain", "g1"]
    assert plan.metrics[1].params == {"flow": "sender1", "t0": "1s"}

    inline = copy.deepcopy(scenario)
    inline["sweep"] = {"params": {"dumbbell.pairs": [1, 2]}, "metrics": ["drops"]}
    (tmp_path / "inline.json").write_text(json.dumps(inline))
    plan = load_plan(tmp_path / "inline.json")
    assert "sweep" not in plan.scenario and len(plan.runs()) == 2
    (tmp_path / "bad.toml").write_text("[sweep]\nrepat = 3\n")
    with pytest.raises(PlanError, match=r"unknown key.*repat"):
        load_plan(tmp_path / "bad.toml")


# --- running with the stand-in core ------------------------------------------------------------


def _seeded_core(core: FakeCore, fail_seeds: set[int] = frozenset()) -> None:  # type: ignore[assignment]
    """sender1's delivered bytes depend on the seed and on the bottleneck delay parameter."""

    def behaviour(scenario_json: str, seed: int | None, progress: Any) -> dict[str, Any]:
        if seed in fail_seeds:
            raise core.SimulationError(f"boom at seed {seed}")
        doc = json.loads(scenario_json)
        delay = int(str(doc["dumbbell"]["bottleneck"]["delay"]).removesuffix("ms"))
        out = copy.deepcopy(core.raw)
        out["meta"]["seed"] = seed
        rows = out["tables"]["flows"]
        for i, flow in enumerate(rows["flow"]):
            if flow == "sender1":
                rows["delivered_bytes"][i] = (seed or 0) % 1000 * 100 + 1000 * delay
        return out

    core.behaviour = behaviour


def _plan(scenario: dict[str, Any], repeat: int = 3) -> Plan:
    return make_plan(
        scenario,
        {"dumbbell.bottleneck.delay": ["10ms", "20ms"]},
        repeat=repeat,
        metrics=[{"name": "goodput_mbps", "flow": "sender1", "label": "g"}, "drops", "throughput_series"],
    )


def test_run_plan_tables_and_statistics(core: FakeCore, scenario: dict[str, Any], tmp_path: Path) -> None:
    _seeded_core(core)
    res = run_plan(_plan(scenario), tmp_path / "out", jobs=1, progress=False)
    runs = res.runs
    assert len(runs) == 6 and runs["error"].isna().all()
    assert list(runs.columns[:5]) == ["run_id", "point", "rep", "seed", "dumbbell.bottleneck.delay"]
    assert res.metrics == ["g", "drops"]
    seeds = [c[1][1] for c in core.calls if c[0] == "run"]
    assert sorted(seeds) == sorted(runs["seed"])
    # g = 4 bins x bytes x 8 / 2 s, and the expected value per run follows from its seed.
    expected = (
        (runs["seed"] % 1000 * 100 + 1000 * runs["dumbbell.bottleneck.delay"].str[:2].astype(int))
        * 4
        * 8
        / 2
        / 1e6
    )
    assert runs["g"].to_numpy() == pytest.approx(expected.to_numpy())
    s = res.summary
    row = s[(s["metric"] == "g") & (s["dumbbell.bottleneck.delay"] == "20ms")].iloc[0]
    direct = stats.mean_ci(runs.loc[runs["dumbbell.bottleneck.delay"] == "20ms", "g"])
    assert (
        row["n"] == 3
        and row["mean"] == pytest.approx(direct["mean"])
        and row["ci_high"] == pytest.approx(direct["ci_high"])
    )
    assert set(res.series["series"]) == {"throughput_series"} and len(res.series) == 6 * 2 * 6

    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "plan.json",
        "runs",
        "runs.parquet",
        "series.parquet",
        "summary.parquet",
    ]
    assert len(list((out / "runs").glob("*.json"))) == 6
    pd.testing.assert_frame_equal(pd.read_parquet(out / "runs.parquet"), runs)
    again = load_sweep(out)
    pd.testing.assert_frame_equal(again.runs, runs)
    pd.testing.assert_frame_equal(again.summary, s)


def test_resume_runs_only_what_is_missing(core: FakeCore, scenario: dict[str, Any], tmp_path: Path) -> None:
    _seeded_core(core)
    full = run_plan(_plan(scenario), tmp_path / "full", jobs=1, progress=False).runs
    out = tmp_path / "out"
    run_plan(_plan(scenario, repeat=1), out, jobs=1, progress=False)  # a partial sweep: 2 of 6 runs
    mtimes = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    core.calls.clear()
    resumed = run_plan(_plan(scenario), out, jobs=1, progress=False).runs
    assert len([c for c in core.calls if c[0] == "run"]) == 4
    assert all((out / "runs" / name).stat().st_mtime_ns == t for name, t in mtimes.items())
    cols = [c for c in full.columns if c != "wall_s"]
    pd.testing.assert_frame_equal(resumed[cols], full[cols])
    core.calls.clear()
    run_plan(_plan(scenario), out, jobs=1, progress=False)
    assert not [c for c in core.calls if c[0] == "run"]


def test_a_failed_run_is_recorded_and_the_sweep_goes_on(
    core: FakeCore, scenario: dict[str, Any], tmp_path: Path
) -> None:
    plan = _plan(scenario)
    bad = plan.runs()[1]
    _seeded_core(core, {bad.seed})
    res = run_plan(plan, tmp_path, jobs=1, progress=False)
    assert len(res.runs) == 6 and len(res.failed) == 1
    failed = res.failed.iloc[0]
    assert (
        failed["run_id"] == bad.run_id
        and "SimulationError: boom" in failed["error"]
        and math.isnan(failed["g"])
    )
    s = res.summary
    assert (
        s.loc[
            (s["metric"] == "g")
            & (s["dumbbell.bottleneck.delay"] == bad.params["dumbbell.bottleneck.delay"]),
            "n",
        ].item()
        == 2
    )
    record = json.loads((tmp_path / "runs" / f"{bad.run_id}.json").read_text())
    assert "boom" in record["traceback"] or "boom" in record["error"]
    # A plain rerun keeps the failure; --retry-failed runs it again.
    _seeded_core(core)
    assert len(run_plan(plan, tmp_path, jobs=1, progress=False).failed) == 1
    assert len(run_plan(plan, tmp_path, jobs=1, progress=False, retry_failed=True).failed) == 0


def test_a_failing_metric_keeps_the_others(core: FakeCore, scenario: dict[str, Any]) -> None:
    def broken(result: Any) -> float:
        raise ZeroDivisionError("no")

    res = quicksim.sweep(scenario, {}, repeat=2, metrics=["drops", broken], jobs=1, progress=False)
    assert res.runs["drops"].tolist() == [3.0, 3.0]
    assert res.runs["error"].str.contains("metric broken: ZeroDivisionError").all()


def test_a_different_plan_in_the_same_directory_is_refused(
    core: FakeCore, scenario: dict[str, Any], tmp_path: Path
) -> None:
    run_plan(_plan(scenario, repeat=1), tmp_path, jobs=1, progress=False)
    changed = copy.deepcopy(scenario)
    changed["dumbbell"]["pairs"] = 3
    with pytest.raises(PlanError, match="different plan"):
        run_plan(_plan(changed, repeat=1), tmp_path, jobs=1, progress=False)


def test_an_invalid_point_fails_before_anything_runs(core: FakeCore, scenario: dict[str, Any]) -> None:
    plan = make_plan(scenario, {"bogus": [1]})
    with pytest.raises(PlanError, match=r"point bogus=1: .*unknown field"):
        run_plan(plan, jobs=1, progress=False)
    assert not [c for c in core.calls if c[0] == "run"]


def test_sweep_reads_the_scenario_sweep_table(core: FakeCore, scenario: dict[str, Any]) -> None:
    _seeded_core(core)
    scenario["sweep"] = {"params": {"dumbbell.bottleneck.delay": ["10ms"]}, "repeat": 2, "metrics": ["drops"]}
    res = quicksim.sweep(scenario, jobs=1, progress=False)
    assert len(res.runs) == 2 and res.metrics == ["drops"] and res.out is None


# --- plots ------------------------------------------------------------------------------------


def test_plots_of_a_sweep(core: FakeCore, scenario: dict[str, Any]) -> None:
    from matplotlib.figure import Figure

    from quicksim import theory
    from quicksim.sweep_plots import axis_values, plot_metric, plot_series

    _seeded_core(core)
    res = run_plan(_plan(scenario), jobs=1, progress=False)
    x, unit = axis_values(res.summary["dumbbell.bottleneck.delay"])
    assert unit == "ms" and sorted(set(x)) == [10.0, 20.0]
    fig = plot_metric(res, "g", theory={"window": lambda d: theory.window_limited_mbps(25_000, 2 * d / 1e3)})
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "dumbbell.bottleneck.delay [ms]" and len(ax.lines) == 2
    assert isinstance(plot_metric(res.summary, "g", style="bars"), Figure)
    fig = plot_series(res, "throughput_series", where={"dumbbell.bottleneck.delay": "10ms"})
    assert "mean of 3 repetitions" in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="several points"):
        plot_series(res, "throughput_series")
    with pytest.raises(KeyError, match="no metric"):
        plot_metric(res, "nope")


def test_theory_formulas() -> None:
    from quicksim import theory

    # The INET README's table: 1252 B, RTT 20 ms, p = 0.01 -> 6.13 Mbit/s.
    assert theory.mathis_mbps(1252, 0.020, 0.01) == pytest.approx(6.13, abs=0.01)
    assert theory.window_limited_mbps(65_000, 0.010) == pytest.approx(52.0)
    assert theory.link_goodput_mbps(10e6, 1472, 1500) == pytest.approx(9.8133, abs=1e-4)
    # p = 1/6: W/2 = sqrt(2/(3p)) = 2 segments, so a cycle of 2 round trips gets a third: 2/3.
    assert theory.mathis_tcp_mbps(1228, 0.02, 1 / 6) == pytest.approx(
        theory.mathis_mbps(1228, 0.02, 1 / 6) * 2 / 3
    )
