"""Honest sweep statistics and the metrics of issue 35, with the stand-in core of conftest: an
interval method per metric (t, bootstrap, Wilson), identical repetitions reported as such,
intervals inside a metric's range and around its mean, quantile metrics against hand-computed
values, a user's metric module, kept tables and metrics computed later without running."""

from __future__ import annotations

import copy
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from conftest import REPO, FakeCore
from quicksim import metrics, stats
from quicksim.results import Result
from quicksim.sweep import PlanError, load_plan, make_plan, run_plan

BOTTLENECK = "bottleneck:router1->router2"

# --- intervals --------------------------------------------------------------------------------


def test_each_kind_of_metric_gets_its_method() -> None:
    free = stats.interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert free["method"] == "t" and free["ci_low"] == stats.mean_ci([1, 2, 3, 4, 5])["ci_low"]
    few = stats.interval([0.9, 0.99, 0.95], bounds=(0.0, 1.0))
    assert few["method"] == "t-clipped" and few["ci_high"] == 1.0
    many = stats.interval([0.90, 0.99, 0.95, 0.97, 0.93, 0.96], bounds=(0.0, 1.0))
    assert many["method"] == "bootstrap" and 0.90 <= many["ci_low"] < many["mean"] < many["ci_high"] <= 0.99
    # Wilson's score interval by hand for 8 of 10: centre (0.8 + z^2/20) / (1 + z^2/10).
    z = 1.959963984540054
    centre = (0.8 + z * z / 20) / (1 + z * z / 10)
    half = z / (1 + z * z / 10) * math.sqrt(0.8 * 0.2 / 10 + z * z / 400)
    prop = stats.interval([1.0] * 8 + [0.0] * 2, bounds=(0.0, 1.0), kind="proportion")
    assert prop["method"] == "wilson"
    assert (prop["ci_low"], prop["ci_high"]) == pytest.approx((centre - half, centre + half), abs=1e-12)
    assert (prop["ci_low"], prop["ci_high"]) == pytest.approx((0.4902, 0.9433), abs=1e-4)  # the tables'
    # 10 of 10 is identical, yet Wilson's interval still bounds the proportion: [0.72, 1].
    every = stats.interval([1.0] * 10, bounds=(0.0, 1.0), kind="proportion")
    assert (
        every["identical"]
        and every["method"] == "wilson"
        and every["ci_low"] == pytest.approx(0.7225, abs=1e-4)
    )


def test_identical_repetitions_get_no_interval() -> None:
    same = stats.interval([0.970528] * 3, bounds=(0.0, 1.0))
    assert same["identical"] and same["method"] == "identical" and same["mean"] == 0.970528
    assert all(math.isnan(same[k]) for k in ("std", "sem", "ci_low", "ci_high"))  # not "std 0"
    # Bit-identical only: values that differ in the last bit are two values.
    assert stats.interval([0.1 + 0.2, 0.3, 0.3])["method"] == "t"


@pytest.mark.parametrize(
    ("values", "bounds"),
    [
        ([1.0, 1.0, 1.0, 0.99995, 1.0, 1.0], (0.0, 1.0)),  # utilization at its bound
        ([1.0, 1.0, 0.9999], (0.0, 1.0)),  # the same with n = 3 (t clipped)
        ([0.25, 0.25, 0.25, 0.25, 0.2501], (0.25, 1.0)),  # Jain of 4 flows at 1/n
        ([0.0, 0.0, 0.0, 0.0, 0.0, 3.0], (0.0, None)),  # drops: mostly none
        ([0.0, 1e-9, 0.0], (0.0, None)),
    ],
)
def test_a_bounded_metric_at_its_bound_keeps_its_interval_inside(
    values: list[float], bounds: tuple[float, float | None]
) -> None:
    ci = stats.interval(values, bounds=bounds)
    low, high = bounds
    assert low <= ci["ci_low"] <= ci["mean"] <= ci["ci_high"]
    assert high is None or ci["ci_high"] <= high
    assert ci["ci_low"] < ci["ci_high"]


def test_the_bootstrap_is_deterministic_and_as_wide_as_t_for_symmetric_values() -> None:
    xs = [float(x) for x in np.random.default_rng(5).normal(10.0, 2.0, size=12)]
    a, b = stats.bootstrap_ci(xs), stats.bootstrap_ci(list(reversed(xs)))
    assert a == b  # same values, any order: the same interval, on every machine (SplitMix64)
    t = stats.mean_ci(xs)
    # The expansion (Hesterberg 2015) makes it about the t interval's width, not z's.
    assert (a[1] - a[0]) / (t["ci_high"] - t["ci_low"]) == pytest.approx(1.0, abs=0.12)
    # Pinned: a change of the generator or the expansion would silently move every interval.
    assert stats.bootstrap_ci([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) == pytest.approx((3.4, 7.7))


def test_summary_columns_and_the_text_say_identical(core: FakeCore, scenario: dict[str, Any]) -> None:
    from quicksim.cli.sweep import format_summary

    # The stand-in core returns the same result for every seed: a deterministic scenario.
    res = run_plan(make_plan(scenario, {}, repeat=3, metrics=["drops", "jain"]), jobs=1, progress=False)
    s = res.summary
    assert list(s.columns[-2:]) == ["method", "identical"]
    assert s["identical"].all() and (s["method"] == "identical").all() and s["ci_low"].isna().all()
    text = format_summary(res)
    assert "drops: 3  identical in all 3 runs: no interval  (n=3)" in text
    assert "1 point(s) identical in every metric" in text and "std" not in text
    assert "fewer than 5 runs" not in text  # no interval was given, so none is wide


def test_error_bars_are_never_negative() -> None:
    from quicksim.sweep_plots import plot_metric

    summary = pd.DataFrame(
        {
            "x": [1, 2, 3],
            "metric": ["u"] * 3,
            "n": [5, 3, 3],
            "mean": [0.999, 1.0, 0.5],
            "std": [0.001, math.nan, 0.1],
            "sem": [0.0005, math.nan, 0.05],
            "ci_low": [0.998, math.nan, 0.4],
            "ci_high": [1.0, math.nan, 0.6],
            "method": ["bootstrap", "identical", "t-clipped"],
            "identical": [False, True, False],
        }
    )
    fig = plot_metric(summary, "u", style="bars")  # matplotlib raises on a negative error
    assert fig.axes[0].get_xlabel() == "x"


# --- metrics ----------------------------------------------------------------------------------


def test_queue_delay_quantiles_are_time_weighted(result: Result) -> None:
    # Over [0, 3): 0 B for 1.6 s, 1250 for 0.1, 3750 for 1.0, 6250 for 0.1, 12500 for 0.2; the
    # cumulative shares of time are 0.533, 0.567, 0.9, 0.933, 1.
    rate_bps = 414800 * 8 / (0.11 * 3.0)
    delay = {b: b * 8 / rate_bps for b in (0, 1250, 3750, 6250, 12500)}
    for stat, expected in [
        ("p50", 0),
        ("median", 0),
        ("p55", 1250),
        ("p80", 3750),
        ("p92", 6250),
        ("p95", 12500),
    ]:
        assert metrics.queue_delay_s(result, queue=BOTTLENECK, stat=stat) == pytest.approx(delay[expected]), (
            stat
        )
    with pytest.raises(ValueError, match="pNN"):
        metrics.queue_delay_s(result, queue=BOTTLENECK, stat="p100")


def test_utilization_never_exceeds_one(raw_result: dict[str, Any], scenario: dict[str, Any]) -> None:
    raw = copy.deepcopy(raw_result)
    raw["totals"]["links"][BOTTLENECK]["utilization"] = 1.000002  # one frame counted past the window
    raw["tables"]["links"]["utilization"] = [1.0, 1.0002, 1.0, 0.9999, 1.0, 1.0]
    result = Result(raw, scenario=scenario)
    assert metrics.utilization(result, link=BOTTLENECK) == 1.0
    assert metrics.utilization(result, link=BOTTLENECK, t0=0.5, t1=1.5) == 1.0
    assert metrics.utilization(result, link=BOTTLENECK, t0=1.5, t1=2.0) == pytest.approx(0.9999)


def test_delay_distribution_metrics(raw_result: dict[str, Any], scenario: dict[str, Any]) -> None:
    plain = Result(raw_result, scenario=scenario)
    with pytest.raises(ValueError, match=r"run\.record\.delays = true"):
        metrics.METRICS["owd_s"](plain, flow="sender1")
    raw = copy.deepcopy(raw_result)
    flows, queues = raw["totals"]["flows"], raw["totals"]["queues"]
    flows["sender1"].update(owd_p50_s=0.011, owd_p95_s=0.02, owd_p99_s=0.03, owd_mean_s=0.012)
    flows["sender1"].update(queueing_p95_s=0.008, completion_time_s=1.75)
    flows["bg"].update(owd_p50_s=None, owd_p95_s=None, owd_p99_s=None, owd_mean_s=None)
    queues[BOTTLENECK].update(queueing_p50_s=0.001, queueing_p95_s=0.005, queueing_p99_s=0.009)
    r = Result(raw, scenario=scenario)
    owd, sojourn = metrics.METRICS["owd_s"], metrics.METRICS["sojourn_s"]
    assert owd(r, flow="sender1", stat="p99") == 0.03 and owd(r, stat="mean")["sender1"] == 0.012
    assert math.isnan(owd(r)["bg"])  # delivered nothing
    with pytest.raises(ValueError, match="p90 needs the delay sketches"):  # a run saved before them
        owd(r, flow="sender1", stat="p90")
    assert sojourn(r) == {BOTTLENECK: 0.005} and sojourn(r, queue=BOTTLENECK, stat="p99") == 0.009
    assert sojourn(r, flow="sender1") == 0.008
    assert metrics.METRICS["fct_s"](r) == 1.75  # bg did not complete: left out
    assert metrics.METRICS["completed"](r) == {"sender1": 1.0, "bg": 0.0}
    spread = metrics.METRICS["flow_goodput_mbps"]
    assert spread(r) == pytest.approx((1.5 + 0.1) / 2) and spread(r, stat="min") == pytest.approx(0.1)
    assert spread(r, stat="p75") == pytest.approx(0.1 + 0.75 * 1.4)  # type 7 between the two


def test_the_metric_reference_is_generated_from_the_registry(
    cli: Any,
) -> None:
    from quicksim import metrics_doc

    page = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert page == metrics_doc.markdown(), "regenerate: python3 -m quicksim.metrics_doc > docs/metrics.md"
    listed = cli("sweep", "--list-metrics")
    assert listed.returncode == 0, listed.stderr
    for name in ("queue_delay_s", "owd_s", "sojourn_s", "fct_s", "completed", "flow_goodput_mbps", "jain"):
        assert f"### `{name}`" in page and f"\n{name}(" in "\n" + listed.stdout
    assert "stat='mean'" in listed.stdout and "wilson" in listed.stdout


# --- a user's metric module ---------------------------------------------------------------------

USER_MODULE = """
def events_k(result, scale=1.0):
    return result.meta["events"] / 1000 * scale

def share(result):
    return 0.5

share.bounds = (0.0, 1.0)
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"usermetrics_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)
    for key in [k for k in metrics.METRICS if k.startswith(name)]:
        del metrics.METRICS[key]
        metrics.BOUNDS.pop(key, None)


def test_a_plan_names_a_metric_in_a_users_module(
    core: FakeCore, scenario: dict[str, Any], user_module: str, tmp_path: Path
) -> None:
    plan = make_plan(
        scenario,
        {},
        repeat=2,
        metrics=[
            f"{user_module}:events_k",
            {"name": f"{user_module}:events_k", "scale": 2},
            f"{user_module}:share",
        ],
    )
    assert plan.metrics[0].path == f"{user_module}:events_k"
    res = run_plan(plan, jobs=1, progress=False)
    assert res.runs[f"{user_module}:events_k"].tolist() == [12.345, 12.345]
    assert res.runs[f"{user_module}:events_k[scale=2]"].tolist() == [24.69, 24.69]
    assert metrics.bounds(f"{user_module}:share") == (0.0, 1.0)  # the function's own attribute
    # In a plan file it is code someone else may have written: imported only when allowed.
    (tmp_path / "s.json").write_text(__import__("json").dumps(scenario))
    (tmp_path / "plan.toml").write_text(f'scenario = "s.json"\n[sweep]\nmetrics = ["{user_module}:share"]\n')
    with pytest.raises(
        PlanError, match=r"is Python code \(module:function\); importing it needs --allow-python"
    ):
        load_plan(tmp_path / "plan.toml")
    assert [m.label for m in load_plan(tmp_path / "plan.toml", allow_python=True).metrics] == [
        f"{user_module}:share"
    ]
    # Given by the user (the command line's --metrics), it needs no flag.
    extra = load_plan(tmp_path / "plan.toml", allow_python=True, metrics=[f"{user_module}:events_k"])
    assert len(extra.metrics) == 2
    with pytest.raises(PlanError, match="cannot import nosuchmodule_xyz"):
        make_plan(scenario, {}, metrics=["nosuchmodule_xyz.m:f"])
    with pytest.raises(PlanError, match="unexpected keyword argument 'stat'"):
        make_plan(scenario, {}, metrics=["goodput_mbps:p95"])


# --- kept tables ----------------------------------------------------------------------------------


def test_metrics_added_later_come_from_the_kept_tables(
    core: FakeCore, scenario: dict[str, Any], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    first = make_plan(
        scenario, {"dumbbell.pairs": [1, 2]}, repeat=2, metrics=["drops"], keep=["queues", "flows"]
    )
    run_plan(first, out, jobs=1, progress=False)
    assert sorted(p.name for p in (out / "kept").iterdir()) == sorted(r.run_id for r in first.runs())
    assert sorted(p.name for p in next((out / "kept").iterdir()).iterdir()) == [
        "flows.parquet",
        "queues.parquet",
        "result.json",
    ]
    runs_before = len([c for c in core.calls if c[0] == "run"])
    later = make_plan(
        scenario,
        {"dumbbell.pairs": [1, 2]},
        repeat=2,
        metrics=["drops", "queue_delay_s:p95", "goodput_mbps"],
        keep=["queues", "flows"],
    )
    res = run_plan(later, out, jobs=1, progress=False)
    assert len([c for c in core.calls if c[0] == "run"]) == runs_before  # nothing ran again
    full = Result(core.raw, scenario=scenario)
    expected = metrics.queue_delay_s(full, stat="p95")[BOTTLENECK]
    assert res.runs[f"queue_delay_s:p95.{BOTTLENECK}"].tolist() == pytest.approx([expected] * 4)
    assert res.runs["goodput_mbps.sender1"].tolist() == pytest.approx([1.5] * 4)
    # A metric reading a table that was not kept: refused, naming it, and no record changed.
    stamps = {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")}
    plan_json = (out / "plan.json").read_text()
    more = make_plan(
        scenario, {"dumbbell.pairs": [1, 2]}, repeat=2, metrics=["cwnd_bytes"], keep=["queues", "flows"]
    )
    with pytest.raises(
        PlanError, match=r"cwnd_bytes needs the table 'conn', which the runs stored in .* did not keep"
    ):
        run_plan(more, out, jobs=1, progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in (out / "runs").glob("*.json")} == stamps
    assert (out / "plan.json").read_text() == plan_json  # still the plan the tables are of
    assert len([c for c in core.calls if c[0] == "run"]) == runs_before


def test_keep_is_checked_and_needs_an_output_directory(
    core: FakeCore, scenario: dict[str, Any], tmp_path: Path
) -> None:
    with pytest.raises(PlanError, match=r"sweep.keep: 'flow' is not a table; tables: flows, "):
        make_plan(scenario, {}, keep=["flow"])
    with pytest.raises(PlanError, match="needs an output directory"):
        run_plan(make_plan(scenario, {}, keep=["flows"]), jobs=1, progress=False)
    # A sweep without kept tables cannot compute a new metric: it says so.
    run_plan(make_plan(scenario, {}, metrics=["drops"]), tmp_path, jobs=1, progress=False)
    with pytest.raises(PlanError, match=r"kept no tables to compute it from \(its plan had no keep\)"):
        run_plan(make_plan(scenario, {}, metrics=["drops", "jain"]), tmp_path, jobs=1, progress=False)


def test_keeping_totals_alone_serves_the_metrics_that_read_only_totals(
    core: FakeCore, scenario: dict[str, Any], tmp_path: Path
) -> None:
    run_plan(
        make_plan(scenario, {}, repeat=2, metrics=["drops"], keep=["totals"]),
        tmp_path,
        jobs=1,
        progress=False,
    )
    assert sorted(p.name for p in next((tmp_path / "kept").iterdir()).iterdir()) == ["result.json"]
    calls = len(core.calls)
    res = run_plan(
        make_plan(scenario, {}, repeat=2, metrics=["drops", "loss_rate"], keep=["totals"]),
        tmp_path,
        jobs=1,
        progress=False,
    )
    assert len(core.calls) == calls  # computed from result.json, no run (and no validation) again
    assert res.runs["loss_rate.sender1"].tolist() == pytest.approx([1 - 312 / 330] * 2)
    with pytest.raises(PlanError, match="needs the table 'flows'"):
        run_plan(
            make_plan(scenario, {}, repeat=2, metrics=["goodput_mbps"], keep=["totals"]),
            tmp_path,
            jobs=1,
            progress=False,
        )


def test_an_alias_with_a_stat_is_not_taken_for_python_code(scenario: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(__import__("json").dumps(scenario))
    (tmp_path / "plan.toml").write_text('scenario = "s.json"\n[sweep]\nmetrics = ["queue_delay:p99"]\n')
    plan = load_plan(tmp_path / "plan.toml")  # no --allow-python: a built-in, not a module
    assert [(m.label, m.name, m.params) for m in plan.metrics] == [
        ("queue_delay_s:p99", "queue_delay_s", {"stat": "p99"})
    ]


def test_a_labelled_metric_keeps_its_metrics_range() -> None:
    from quicksim.sweep.tables import _tables

    values = [1.0, 0.9995, 1.0, 0.999, 1.0, 0.9998]
    records = [
        {"run_id": f"p-r{i}", "point": 0, "rep": i, "seed": i, "params": {}, "error": None, "wall_s": 0.1}
        | {"values": {"util": v, "done.a": float(i % 2)}, "series": {}}
        for i, v in enumerate(values)
    ]
    plan = {
        "metrics": [
            {"label": "util", "name": "utilization", "params": {"t0": "1s"}},
            {"label": "done", "name": "completed", "params": {}},
        ]
    }
    s = _tables(records, plan, []).summary.set_index("metric")
    assert s.loc["util", "method"] == "bootstrap" and s.loc["util", "ci_high"] <= 1.0  # not t's 1.0004
    assert s.loc["done.a", "method"] == "wilson"
