"""The plan model: a base scenario, parameter values (expanded), repetitions and metrics, and
the runs it makes, each with a seed derived from the base seed, its parameter values and its
repetition number (SHA-256), so adding points or repetitions leaves existing runs unchanged.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ScenarioError

__all__ = ["MAX_RUNS", "PLAN_FORMAT", "MetricSpec", "Plan", "PlanError", "Run", "derive_seed", "point_id"]

PLAN_FORMAT = 1
"""Version of `plan.json`."""

MAX_RUNS = 100_000
"""Most runs (points x repetitions) a plan may hold; counted before anything is expanded. A
sweep of that size takes days on one machine; past it, a plan is a mistake or wants splitting."""

MetricSpec = str | Mapping[str, Any] | Callable[..., Any]
"""A registered metric's name (`"owd_s"`, with a stat `"queue_delay_s:p95"`), a user's
`"module:function"`, `{name=..., label=..., **params}`, or a function of a Result."""


class PlanError(ScenarioError):
    """The sweep plan is invalid, or the output directory holds a different plan."""


@dataclass(frozen=True)
class _Metric:
    label: str
    name: str
    fn: Callable[..., Any]
    params: dict[str, Any]
    path: str | None = None
    """`module:function` of a user's metric: what workers import (the module must be there)."""

    def task(self) -> tuple[str, Callable[..., Any] | str, dict[str, Any]]:
        """(label, function or its import path, params), as a worker's task carries it."""
        return self.label, self.path or self.fn, self.params

    def describe(self) -> dict[str, Any]:
        """JSON-ready form (a function is named by module and qualified name)."""
        return {"label": self.label, "name": self.name, "params": self.params}


@dataclass(frozen=True)
class Run:
    """One run of a plan: a point (parameter values), a repetition and its derived seed."""

    run_id: str
    point: int
    rep: int
    seed: int
    params: dict[str, Any]


@dataclass(frozen=True)
class Plan:
    """An expanded sweep: base scenario, parameter values, repetitions, metrics, base seed."""

    scenario: dict[str, Any]
    params: dict[str, list[Any]]
    zip: tuple[tuple[str, ...], ...] = ()
    repeat: int = 1
    metrics: tuple[_Metric, ...] = ()
    seed: int = 0
    name: str = "sweep"
    keep: tuple[str, ...] = ()
    """Tables of every run stored with the sweep (`kept/<run_id>/`), for metrics added later."""

    def points(self) -> list[dict[str, Any]]:
        """Every combination of parameter values, the first parameter varying slowest."""
        groups: list[tuple[str, ...]] = []
        zipped = {p for group in self.zip for p in group}
        for path in self.params:
            if path in zipped:
                group = next(g for g in self.zip if path in g)
                if group not in groups:
                    groups.append(group)
            else:
                groups.append((path,))
        choices = [
            [
                dict(zip(group, values, strict=True))
                for values in zip(*(self.params[p] for p in group), strict=True)
            ]
            for group in groups
        ]
        points = []
        for combo in itertools.product(*choices):
            merged: dict[str, Any] = {}
            for part in combo:
                merged.update(part)
            points.append({p: merged[p] for p in self.params})
        return points

    def runs(self) -> list[Run]:
        """Every run, point by point, repetitions 0..repeat-1."""
        out = []
        for index, point in enumerate(self.points()):
            pid = point_id(point)
            for rep in range(self.repeat):
                out.append(Run(f"{pid}-r{rep}", index, rep, derive_seed(self.seed, point, rep), point))
        return out

    def fingerprint(self) -> str:
        """What the results of a run depend on besides its point and seed: scenario and metrics."""
        doc = {
            "scenario": self.scenario,
            "metrics": [m.describe() | {"fn": _fn_name(m.fn)} for m in self.metrics],
        }
        return hashlib.sha256(_canonical(doc).encode()).hexdigest()[:16]

    def scenario_fingerprint(self) -> str:
        """What the stored runs of an output directory depend on: the scenario alone (metrics may
        be added to a finished sweep and computed from its kept tables)."""
        return hashlib.sha256(_canonical({"scenario": self.scenario}).encode()).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        """JSON-ready plan, as written to `plan.json`."""
        return {
            "format": PLAN_FORMAT,
            "name": self.name,
            "fingerprint": self.fingerprint(),
            "scenario_fingerprint": self.scenario_fingerprint(),
            "keep": list(self.keep),
            "seed": self.seed,
            "repeat": self.repeat,
            "params": self.params,
            "zip": [list(g) for g in self.zip],
            "metrics": [m.describe() | {"fn": _fn_name(m.fn)} for m in self.metrics],
            "scenario": self.scenario,
        }


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def point_id(point: Mapping[str, Any]) -> str:
    """A short stable id of a point's parameter values (independent of the other points)."""
    return "p" + hashlib.sha256(_canonical(dict(point)).encode()).hexdigest()[:10]


def derive_seed(base: int, point: Mapping[str, Any], rep: int) -> int:
    """The seed of one run: SHA-256 of (base seed, parameter values, repetition), 63 bits.

    It depends on the point's values, not its position, so a point keeps its seeds when
    other points are added; 63 bits keep it a valid int64 in Parquet.
    """
    digest = hashlib.sha256(_canonical({"base": base, "point": dict(point), "rep": rep}).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _fn_name(fn: Callable[..., Any]) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
