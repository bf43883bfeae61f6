"""A conformance suite for any congestion controller, built in or written in Python: a fixed set
of scenarios (`cases`) run in parallel on local cores, a report card with pass/fail and the
measured values, and `report.md` with plots (`report`).

    >>> card = quicksim.conformance.run("py:examples.mycc:MyCC", quick=True, out="out/card")
    >>> card.passed, card.total

The controller is named as a scenario names it: a built-in name, `py:package.module:Class`, or
a name given to `quicksim.cc.register` (workers import that class by its path).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import cc as _cc
from ..errors import ControllerError, ScenarioError
from . import cases

__all__ = ["Card", "Row", "run"]


@dataclass
class Row:
    """One line of the card: a case (or a window-vs-loss cell), its measurement and verdict
    (None: reported, not judged)."""

    key: str
    title: str
    what: str
    measured: float
    criterion: str
    source: str
    passed: bool | None
    note: str = ""


@dataclass
class Card:
    """The suite's result for one controller."""

    cc: str
    quick: bool
    rows: list[Row] = field(default_factory=list)
    results: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> int:
        return sum(1 for r in self.rows if r.passed)

    @property
    def total(self) -> int:
        return sum(1 for r in self.rows if r.passed is not None)

    def text(self) -> str:
        """The card as printed by `quicksim conformance`."""
        mode = "quick" if self.quick else "full"
        lines = [f"conformance of {self.cc} ({mode}): {self.passed} of {self.total} passed"]
        for r in self.rows:
            verdict = "info" if r.passed is None else ("PASS" if r.passed else "FAIL")
            lines.append(f"  {verdict:4}  {r.title:48} {_fmt(r.measured):>9}  {r.criterion}")
        return "\n".join(lines)


def _fmt(v: float) -> str:
    return "inf" if math.isinf(v) else ("nan" if math.isnan(v) else f"{v:.4g}")


def family_of(cc: str) -> str:
    """Which window-vs-loss reference applies: Reno's for newreno, RFC 9438's table for cubic,
    the band between them for any other controller."""
    return {"newreno": "reno", "cubic": "cubic"}.get(cc, "band")


def slug(cc: str) -> str:
    """A directory name for a controller name (`py:examples.mycc:MyCC` -> `py-examples.mycc-MyCC`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", cc).strip("-") or "controller"


def _init_worker(paths: dict[str, str]) -> None:
    for name, path in paths.items():
        if name not in _cc.registered():
            _cc.register(name, _cc.resolve(_cc.PY_PREFIX + path))


def _job(key: str, cc: str, quick: bool, param: Any) -> dict[str, Any]:
    """One simulation in a worker; a failing Python controller comes back as its message."""
    try:
        with _cc.allow_python():  # the controller the user named to test: consent to import it
            return cases.measure(key, cc, quick, param)
    except ControllerError as e:
        return {"controller_error": str(e)}


def run(
    cc: str, quick: bool = False, out: str | os.PathLike[str] | None = None, jobs: int | None = None
) -> Card:
    """Run the suite for the controller `cc`; with `out`, write report.md, card.json and PNGs
    there. `jobs` local processes (default: every core)."""
    from .. import api

    if not isinstance(cc, str) or not cc:
        raise ScenarioError(f"controller: {cc!r} is not a controller name")
    # Refuse a bad name at once, naming it (the scenario error names the field).
    try:
        # The user named this controller to test it: that is the consent to import it.
        api.validate(cases.dumbbell([cc], 1.0), allow_python=True)
    except ScenarioError as e:
        raise ScenarioError(str(e).replace("flows[0].quic.cc", "controller")) from None
    family = family_of(cc)
    work = cases.jobs_for(quick, family)
    paths = {n: _cc.class_path(c) for n, c in _cc.registered().items() if n == cc}
    results = _execute(work, cc, quick, paths, jobs)
    for res in results.values():
        if "controller_error" in res:
            raise ControllerError(res["controller_error"])
    card = Card(cc, quick, _rows(results, family, quick), results)
    if out is not None:
        from .report import write

        write(card, Path(out))
    return card


def _key(key: str, param: Any) -> str:
    if key == "window":
        rtt, p, _ = param
        return f"window rtt={rtt:g} p={p:g}"
    return key


def _execute(
    work: list[tuple[str, Any]], cc: str, quick: bool, paths: dict[str, str], jobs: int | None
) -> dict[str, dict[str, Any]]:
    n = max(1, min(jobs or os.cpu_count() or 1, len(work)))
    if n == 1:
        _init_worker(paths)
        return {_key(k, p): _job(k, cc, quick, p) for k, p in work}
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=n, initializer=_init_worker, initargs=(paths,)) as pool:
        futures = {_key(k, p): pool.submit(_job, k, cc, quick, p) for k, p in work}
        return {k: f.result() for k, f in futures.items()}


def _rows(results: dict[str, dict[str, Any]], family: str, quick: bool) -> list[Row]:
    rows: list[Row] = []
    for rtt, p in cases.window_cells(quick):
        key = f"window rtt={rtt:g} p={p:g}"
        crit = cases.window_criterion(family, rtt, p)
        v = float(results[key]["value"])
        rows.append(
            Row(
                key,
                f"steady-state window, RTT {rtt * 1e3:g} ms, p = {p:g}",
                "mean cwnd, segments",
                v,
                crit.text(),
                crit.source,
                crit.passes(v),
                f"{results[key]['epochs']} loss epochs",
            )
        )
    for key, case in cases.CASES.items():
        if key.endswith("_delay"):
            base = results[key.removesuffix("_delay")]
            bdp = 0.25 if key.startswith("shallow") else 4.0
            reno, cubic = cases.delay_expectation_rtts(bdp, 0.5), cases.delay_expectation_rtts(bdp, 0.7)
            rows.append(
                Row(
                    key,
                    case.title,
                    case.what,
                    float(base["delay_rtts"]),
                    f"(fluid model: Reno {reno:.2f}, CUBIC {cubic:.2f})",
                    "reported, not judged: a loss-based controller fills what the buffer holds",
                    None,
                )
            )
            continue
        crit = cases.CRITERIA[key]
        res = results[key]
        v = float(res["value"])
        note = ""
        if key == "random_loss":
            note = f"{res['goodput_mbps']:.3g} Mbit/s vs {res['mathis_mbps']:.3g} Mbit/s"
        elif key == "convergence":
            note = f"fair share {res['fair_mbps']:.3g} Mbit/s, flow joins at {res['join_s']:g} s"
        rows.append(Row(key, case.title, case.what, v, crit.text(), crit.source, crit.passes(v), note))
    return rows


def card_json(card: Card) -> str:
    """The card's rows as JSON (what `report.md` shows, machine-readable)."""
    rows = [
        {**r.__dict__, "measured": None if not math.isfinite(r.measured) else r.measured} for r in card.rows
    ]
    doc = {"cc": card.cc, "quick": card.quick, "passed": card.passed, "total": card.total, "rows": rows}
    return json.dumps(doc, indent=1) + "\n"
