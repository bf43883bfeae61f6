"""Real-time runs (`run.clock = "real"`): real programs through the simulated network.

`run_real` sets up what the core's real-time loop needs (docs/emulation.md): a network
namespace with a TUN device per host of a `kind = "program"` flow (`netns`), the programs in
them (`programs`), then hands the devices' descriptors to `_core.run_real`, which paces the
same event loop by the wall clock and moves the programs' packets through the model. The run
ends at `run.duration` or when every client has exited; everything made is removed on the way
out, whatever the way out is. Not deterministic: the exception to quicksim's rule.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from .._native import call
from ..errors import ScenarioError, SimulationError
from .netns import Namespaces, check_environment, clean_leftovers, ns_name
from .programs import Program, check_commands

__all__ = ["LATENESS_LIMIT_US", "SERVER_GRACE_S", "ns_name", "run_real"]

SERVER_GRACE_S = 1.0
"""How long the run goes on after the last client exited, for the servers to finish."""

LATENESS_LIMIT_US = 1000.0
"""Above this p99 lateness (µs) a run says on the terminal that its timing is off."""


def _warn(line: str) -> None:
    print(f"quicksim: {line}", file=sys.stderr)


def run_real(
    core: ModuleType,
    text: str,
    seed: int | None,
    progress: Callable[[float, int], object] | None,
    out: str | os.PathLike[str] | None,
) -> dict[str, Any]:
    """Runs the scenario (JSON `text`, `run.clock = "real"`) in real time; the core's result dict
    with the programs' block in `totals["programs"]`."""
    plan = json.loads(call(core, core.emulation_plan, text))
    flows: list[dict[str, Any]] = plan["flows"]
    if flows and out is None:
        raise ScenarioError(
            "out: a run with program flows saves the programs' output: give it an output folder (--out DIR)"
        )
    if plan["hosts"]:
        check_environment()
        check_commands(flows)
        clean_leftovers()
    folder = Path(out) if out is not None else Path(".")
    hosts = [h["name"] for h in plan["hosts"]]
    started: dict[tuple[str, str], Program] = {}
    ended_by: list[str] = []
    done_at: list[float] = []
    with Namespaces(plan["hosts"]) as nss:
        ns_of = dict(zip(hosts, nss.names, strict=True))
        t0 = time.monotonic()
        try:
            for f in flows:
                if f["server"]:
                    started[f["name"], "server"] = Program(
                        f["name"], "server", f["server"], ns_of[f["dst"]], folder
                    )

            def step(t: float, n: int) -> bool:
                for f in flows:
                    if (f["name"], "client") not in started and t >= f["start_s"]:
                        started[f["name"], "client"] = Program(
                            f["name"], "client", f["client"], ns_of[f["src"]], folder
                        )
                clients = [p for (_, role), p in started.items() if role == "client"]
                if flows and len(clients) == len(flows) and all(p.exited() is not None for p in clients):
                    # The servers get up to SERVER_GRACE_S to finish their side (their last
                    # packets still cross the network) before the run ends.
                    done_at.append(t)
                    servers = [p for (_, role), p in started.items() if role == "server"]
                    if all(p.exited() is not None for p in servers) or t - done_at[0] >= SERVER_GRACE_S:
                        ended_by.append("the clients exited")
                        return False
                if progress is not None and progress(t, n) is False:
                    ended_by.append("stopped early")  # Ctrl-C in the CLI, or the caller's wish
                    return False
                return True

            args = (text, nss.fds, hosts, seed, step, _warn, None if out is None else os.fspath(out))
            raw: dict[str, Any] = call(core, core.run_real, *args)
        finally:
            for p in sorted(started.values(), key=lambda p: p.role):  # clients first
                p.stop()
    _report(raw, flows, started, ended_by, t0, plan["duration_s"], folder)
    return raw


def _report(
    raw: dict[str, Any],
    flows: list[dict[str, Any]],
    started: dict[tuple[str, str], Program],
    ended_by: list[str],
    t0: float,
    duration_s: float,
    folder: Path,
) -> None:
    """The programs' totals and the run's end; one line and SimulationError for a program that
    failed or hung; a terminal line when the timing was off."""
    meta, totals = raw.setdefault("meta", {}), raw.setdefault("totals", {})
    if ended_by:
        meta["ended_by"] = ended_by[0]
        if ended_by[0] == "the clients exited":
            meta["stopped_early"] = False  # a program run ends when its clients are done
    programs: dict[str, Any] = {}
    for (flow, role), p in started.items():
        programs.setdefault(flow, {})[role] = p.report(t0)
    totals["programs"] = programs
    rt = totals.get("realtime", {})
    lateness = rt.get("event_lateness", {})
    if lateness.get("count"):
        p99 = lateness.get("p99_us")  # None: beyond the 100 ms the histogram holds
        if p99 is None or p99 > LATENESS_LIMIT_US:
            shown = "over 100 ms" if p99 is None else f"{p99:.0f} µs"
            _warn(f"real time: p99 lateness {shown} > {LATENESS_LIMIT_US:.0f} µs: this run's timing is off")
    for f in flows:
        c = started.get((f["name"], "client"))
        if c is None:
            continue
        if c.killed and ended_by[:1] == ["stopped early"]:
            continue  # stopped with the run: not the program's failure
        if c.killed:
            raise SimulationError(
                f"flow {f['name']}: client still running at the end of the run "
                f"(run.duration = {duration_s:g} s): stopped (its output: {folder / c.stderr_path.name})"
            )
        if c.proc.returncode != 0:
            raise SimulationError(
                f"flow {f['name']}: client exited with status {c.proc.returncode} "
                f"(its output: {folder / c.stderr_path.name})"
            )
        s = started.get((f["name"], "server"))
        if s is not None and not s.killed and s.proc.returncode != 0:
            raise SimulationError(
                f"flow {f['name']}: server exited with status {s.proc.returncode} "
                f"(its output: {folder / s.stderr_path.name})"
            )
