"""Intervals that respect what a quantity can be, and a Jain default a user expects (issue 19:
a goodput interval of [-51.9, 164.2] Mbit/s from n = 2; `jain` gave 0.5 on the showcase whose
phases are 0.99 fair)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

import quicksim
from quicksim import analysis, metrics, stats


def test_an_interval_is_clipped_to_the_quantitys_range() -> None:
    # n = 2, values 1 and 100: t(0.975, 1) = 12.706, sem = 49.5 -> mean 50.5 +- 628.9.
    free = stats.mean_ci([1.0, 100.0])
    assert free["ci_low"] == pytest.approx(50.5 - 12.7062 * 49.5, rel=1e-4)
    rate = stats.mean_ci([1.0, 100.0], bounds=(0.0, None))
    assert rate["ci_low"] == 0.0 and rate["ci_high"] == free["ci_high"] and rate["mean"] == 50.5
    fraction = stats.mean_ci([0.9, 0.99], bounds=(0.0, 1.0))
    assert fraction["ci_high"] == 1.0 and 0.0 <= fraction["ci_low"] < 0.9
    assert math.isnan(stats.mean_ci([3.0], bounds=(0.0, None))["ci_low"])  # n = 1: no interval


def test_sweep_summaries_clip_each_metric_to_its_declared_range() -> None:
    runs = pd.DataFrame(
        {
            "x": [1, 1],
            "goodput_mbps[flow=a]": [1.0, 100.0],
            "jain": [0.9, 0.99],
            "custom": [1.0, 100.0],
        }
    )
    s = stats.summarize(runs, ["x"], ["goodput_mbps[flow=a]", "jain", "custom"], bounds=metrics.bounds)
    lo = dict(zip(s["metric"], s["ci_low"], strict=True))
    hi = dict(zip(s["metric"], s["ci_high"], strict=True))
    assert lo["goodput_mbps[flow=a]"] == 0.0 and hi["jain"] == 1.0
    assert lo["custom"] < 0  # no declared range: the plain t interval
    assert metrics.bounds("goodput_mbps[flow=a].a") == (0.0, None)


def test_the_sweep_summary_warns_about_few_runs() -> None:
    from types import SimpleNamespace

    from quicksim.cli.sweep import format_summary

    runs = pd.DataFrame({"g": [1.0, 2.0]})
    summary = stats.summarize(runs, [], ["g"])
    text = format_summary(SimpleNamespace(summary=summary, runs=runs, params=[], plan={}))  # type: ignore[arg-type]
    assert "fewer than 5 runs" in text


def test_jain_by_default_is_the_phase_tables_fairness() -> None:
    result = quicksim.run("linksharing")
    phases = analysis.phases(result)
    # Hand computation from the phase table's own windows and flows: Jain of each phase's mean
    # rates over exactly that window, weighted by the window's length.
    total = weighted = 0.0
    for _, ph in phases.groupby("phase"):
        t0, t1 = float(ph["t0_s"].iloc[0]), float(ph["t1_s"].iloc[0])
        weighted += metrics.jain(result, t0=t0, t1=t1, flows=list(ph["flow"])) * (t1 - t0)
        total += t1 - t0
    assert metrics.jain(result) == pytest.approx(weighted / total, rel=1e-12)
    assert metrics.jain(result) > 0.98  # every phase of the showcase is fair (0.985-1.0)
    # The former default (every flow, UDP background included, over the whole run) mixes
    # phases in which flows were not even running.
    assert metrics.jain(result, t0=0, t1=50, flows=result.flow_names) < 0.9
