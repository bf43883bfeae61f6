"""Type stub of the compiled core (crates/quicksim-py). Private: reach it through `quicksim._native`."""

from collections.abc import Callable
from typing import Any, Final

__version__: Final[str]

class ScenarioError(ValueError):
    """The scenario JSON was rejected; the message names the field and the value."""

class SimulationError(RuntimeError):
    """The run failed after the scenario was accepted."""

class ControllerError(SimulationError):
    """A congestion controller written in Python failed; `__cause__` is its exception, if any."""

def run(
    scenario_json: str,
    seed: int | None = None,
    progress: Callable[[float, int], object] | None = None,
    controllers: dict[str, type] | None = None,
    out_dir: str | None = None,
) -> dict[str, Any]:
    """Run a scenario; returns {"meta": ..., "tables": {name: {column: values}}, "totals": ...}.

    Files the run writes itself (`run.capture`: capture.pcapng) go to `out_dir`.

    Number columns are `Column`s (float64, int64), which numpy reads in place; the built-in
    tables' name columns are `Strings` (dictionary-encoded); other string columns are lists.

    `progress(sim_time_s, events_so_far)` is called periodically; returning False stops the run
    early (then meta["stopped_early"] is True).
    """

class Column:
    """A number column of a run's output, owned by the core: `numpy.asarray(column)` reads it in
    place (read-only, the array keeps the column alive)."""

    @property
    def __array_interface__(self) -> dict[str, Any]: ...
    def __len__(self) -> int: ...

class Strings:
    """A dictionary-encoded string column: row i is `labels[codes[i]]`."""

    codes: Column
    """The rows' indexes into `labels` (uint32)."""
    labels: list[str]
    """Each distinct string once."""
    def __len__(self) -> int: ...

def emulation_plan(scenario_json: str) -> str:
    """A real-time scenario's hosts (name, 10.x address, MTU) and program flows, as JSON text."""

def run_real(
    scenario_json: str,
    fds: list[int],
    hosts: list[str],
    seed: int | None = None,
    progress: Callable[[float, int], object] | None = None,
    warn: Callable[[str], object] | None = None,
    out_dir: str | None = None,
) -> dict[str, Any]:
    """Run a `run.clock = "real"` scenario over the open TUN descriptors `fds` of `hosts` (in
    `emulation_plan`'s order); returns what `run` returns, with `totals["realtime"]`."""

def validate(scenario_json: str, controllers: dict[str, type] | None = None) -> str:
    """Check the scenario completely (schema and build); return it as normalized JSON: values in
    canonical units, defaults filled in (crates/quicksim-scenario/src/normalize.rs says which)."""

def normalize(scenario_json: str) -> str:
    """`validate` without the build (the schema is still checked): for a scenario just run."""

def table_schema() -> list[dict[str, Any]]:
    """The output tables in order: [{"table": name, "columns": [{"name": ..., "type": t}]}] with
    t "f64", "i64" or "str"."""

def parse_duration(text: str) -> float: ...
def parse_rate(text: str) -> int: ...
def parse_bytes(text: str) -> int: ...
def scenario_schema() -> str:
    """The JSON Schema (draft 2020-12) of the scenario format, as JSON text."""

def scenario_reference() -> str:
    """docs/scenario-reference.md, generated from the same schema."""

def builtin_controllers() -> list[str]:
    """The names of the built-in congestion controllers."""

# What a controller written in Python (quicksim.cc.Controller) is given. Times in picoseconds.

class InitInfo:
    mds: int
    initial_window: int
    minimum_window: int
    loss_window: int
    seed: int

class CcContext:
    now_ps: int
    now_s: float
    mds: int
    bytes_in_flight: int
    latest_rtt_ps: int
    smoothed_rtt_ps: int
    min_rtt_ps: int
    rttvar_ps: int
    has_rtt_sample: bool
    initial_window: int
    minimum_window: int
    loss_window: int

class SentPacket:
    bytes: int
    app_limited: bool

class AckEvent:
    sent_time_ps: int
    bytes: int
    app_limited: bool

class RateSample:
    delivered: int
    prior_delivered: int
    delivered_time_ps: int
    first_sent_time_ps: int
    is_app_limited: bool
    interval_ps: int
    rate_bps: int

class AckSummary:
    acked_bytes: int
    acked_packets: int
    largest_acked_sent_time_ps: int
    app_limited: bool
    rate: RateSample | None
    ce_packets: int

class CongestionEvent:
    cause: str
    sent_time_ps: int
    lost_bytes: int

class PathInfo:
    """One path of a multipath connection as a Python path scheduler sees it."""

    path_id: int
    usable: bool
    backup: bool
    srtt_ps: int
    cwnd_bytes: int
    bytes_in_flight: int
    room_bytes: int
