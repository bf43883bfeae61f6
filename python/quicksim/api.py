"""Scenario loading, `key.path=value` overrides, and the entry points into the core.

Python never checks scenario semantics: the Rust validator (`_core.validate`) is the single
source of truth for the schema. This module only turns files and overrides into a dict and the
dict into JSON; the core is reached through `_native`, which also turns its exceptions into
`ScenarioError` / `SimulationError`.
"""

from __future__ import annotations

import copy
import datetime
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from ._io import locked_folder, out_dir
from ._native import call as _call_core
from ._native import load_core as _load_core  # tests replace this name with a fake core
from .errors import ScenarioError

if TYPE_CHECKING:
    from .results import Result

__all__ = ["ProgressFn", "ScenarioSource", "apply_overrides", "load_scenario", "run", "validate"]

ScenarioSource = str | os.PathLike[str] | Mapping[str, Any]
"""A path to a .toml (or .json) scenario file, or an already loaded scenario dict."""

ProgressFn = Callable[[float, int], object]
"""`progress(sim_time_s, events_so_far)`; returning False stops the run early."""


def load_scenario(source: ScenarioSource) -> dict[str, Any]:
    """Read a scenario from a TOML (or JSON) file, or deep-copy a scenario dict.

    A bare name that is not a file (e.g. "linksharing") means the bundled scenario of that name
    (quicksim/scenarios/NAME.toml), so `quicksim run linksharing` works anywhere. A trace file
    named by a link (`model = { kind = "trace", file = "traces/x.mm" }`) is relative to the
    scenario file; it is made absolute here, so the core, sweeps and a saved scenario.json
    find it from anywhere (a dict's relative paths stay relative to the working directory).
    """
    if isinstance(source, Mapping):
        check_values(source)  # before copying, which would recurse into a too deep nesting
        return dict(_copy_doc(dict(source)))
    path = Path(source)
    if not path.exists() and path.parent == Path(".") and not path.suffix:
        bundled = Path(__file__).parent / "scenarios" / f"{path.name}.toml"
        if bundled.is_file():
            path = bundled
    with open(path, "rb") as f:  # OSError (e.g. FileNotFoundError) propagates unchanged
        data = f.read(MAX_SCENARIO_BYTES + 1)  # capped: `quicksim run /dev/zero` must not read forever
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(
            f"{path}: more than {MAX_SCENARIO_BYTES // 2**20} MiB; a scenario is a small text file "
            "(is this the right file?)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    if path.suffix.lower() == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"{path}: invalid JSON: {e}") from None
        except (ValueError, RecursionError) as e:
            raise ScenarioError(f"{path}: invalid JSON: {_parse_failure(e)}") from None
    else:
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            # The message already ends in "(at line L, column C)".
            raise ScenarioError(f"{path}: invalid TOML: {e}") from None
        except (ValueError, RecursionError) as e:
            raise ScenarioError(f"{path}: invalid TOML: {_parse_failure(e)}") from None
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: the top level must be a table, not {_type_name(doc)}")
    check_values(doc)
    _resolve_trace_files(doc, path.parent.resolve())
    return doc


def _resolve_trace_files(doc: dict[str, Any], base: Path) -> None:
    """Make the relative `file` of every link's (or link direction's) trace model absolute
    against `base`. Anything not shaped like a trace model is left for the core to judge."""
    links: list[Any] = []
    dumbbell = doc.get("dumbbell")
    if isinstance(dumbbell, dict):
        links += [dumbbell.get("bottleneck"), dumbbell.get("access")]
    if isinstance(doc.get("links"), list):
        links += doc["links"]
    tables = [
        t
        for link in links
        if isinstance(link, dict)
        for t in (link, link.get("forward"), link.get("reverse"))
    ]
    for table in tables:
        model = table.get("model") if isinstance(table, dict) else None
        if (
            isinstance(model, dict)
            and model.get("kind") == "trace"
            and isinstance(model.get("file"), str)
            and not os.path.isabs(model["file"])
        ):
            model["file"] = str(base / model["file"])


def _parse_failure(e: BaseException) -> str:
    """What a parser's non-syntax failure means: Python's own limits on huge or deep input."""
    if isinstance(e, RecursionError):
        return f"nested more than {MAX_DEPTH} levels deep"
    if "digits" in str(e):
        return "an integer with thousands of digits (the largest allowed is 2**64-1)"
    return str(e)


MAX_SCENARIO_BYTES = 64 * 2**20
"""Largest scenario file read (64 MiB: a scenario of 100 000 flows is about 15 MiB)."""

MAX_DEPTH = 64
"""Deepest nesting of tables and arrays a scenario may have (real ones use fewer than 10)."""


def check_values(doc: Mapping[str, Any]) -> None:
    """Refuse, naming the field, what JSON or the core cannot carry: NaN and infinities, integers
    beyond 64 bits, nesting deeper than MAX_DEPTH. Iterative, so no input can exhaust the stack."""
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        where = path or "the scenario"
        if depth > MAX_DEPTH:
            raise ScenarioError(f"{where}: nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, bool) or value is None or isinstance(value, str):
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ScenarioError(f"{where}: {value} is not a finite number")
        elif isinstance(value, int):
            if not -(2**64) < value < 2**64:
                digits = int(value.bit_length() * math.log10(2)) + 1
                raise ScenarioError(f"{where}: an integer of about {digits} digits is out of range")
        elif isinstance(value, Mapping):
            for k, v in value.items():
                stack.append((v, f"{path}.{k}" if path else str(k), depth + 1))
        elif isinstance(value, list | tuple):
            for i, v in enumerate(value):
                stack.append((v, f"{path}[{i}]", depth + 1))


def apply_overrides(scenario: Mapping[str, Any], sets: Iterable[str]) -> dict[str, Any]:
    """Return a copy of `scenario` with each `key.path=value` override applied in order.

    The key is a TOML dotted key (`flows."a.b".start` works). A segment that meets an array
    selects an element by index (`flows.0.start`) or by its `name` (`flows.sender1.start`).
    The value is read as a TOML value when it parses (`5`, `2.5`, `true`, `[1, 2]`,
    `{ rate = "1Mbps" }`, `"quoted"`), otherwise it is kept as the string (`10Mbps`).
    Missing tables on the way are created; whether the result is a valid scenario is for the
    core's validator to say.
    """
    doc = load_scenario(scenario)  # checked, then deep-copied
    for raw in _override_list(sets):
        key, sep, value = raw.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ScenarioError(f"override {raw!r}: expected KEY=VALUE, e.g. flows.0.start=5s")
        try:
            parsed = _parse_value(value.strip())
        except (ValueError, RecursionError) as e:
            raise ScenarioError(f"override {_short(raw)}: {_parse_failure(e)}") from None
        _set_path(doc, _parse_key(key, raw), parsed, raw)
    check_values(doc)
    return doc


def _override_list(sets: Iterable[str] | str) -> list[str]:
    """`sets` as a list of strings: one string is one override (not its characters)."""
    if isinstance(sets, str):
        return [sets]
    if isinstance(sets, Mapping) or not isinstance(sets, Iterable):
        raise ScenarioError(f"sets: expected a list of KEY=VALUE strings, not {_type_name(sets)}")
    items = list(sets)
    for item in items:
        if not isinstance(item, str):
            raise ScenarioError(f"sets: {item!r} is not a KEY=VALUE string")
    return items


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def check_seed(seed: Any) -> int | None:
    """A seed must be an integer in 0..2**64-1 (None: the scenario's own)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        try:
            import operator

            seed = operator.index(seed) if not isinstance(seed, bool) else None
        except TypeError:
            seed = None
        if seed is None:
            raise ScenarioError("seed: expected an integer in 0..2**64-1") from None
    if not 0 <= seed < 2**64:
        digits = int(abs(seed).bit_length() * math.log10(2)) + 1
        shown = str(seed) if digits < 40 else f"an integer of about {digits} digits"
        raise ScenarioError(f"seed: {shown} is out of range 0..2**64-1")
    return int(seed)


def validate(
    scenario: ScenarioSource, sets: Iterable[str] = (), *, allow_python: bool = False
) -> dict[str, Any]:
    """Check the scenario completely and return it normalized by the core, or raise ScenarioError.

    A `cc = "py:module:Class"` is imported (and its settings checked against the class) only with
    `allow_python`; without it the module is not imported and runs no code (`quicksim.cc`).

    Normalized: every value in its canonical unit ("1500ms", "25kB") and the defaults filled in
    (record settings, seed, record interval, link delay/overhead/queue, MTUs, QUIC settings; the
    core's `normalize` module lists which, and why a few stay open), so a saved scenario reruns
    the same under a later version whose defaults changed.
    """
    doc = apply_overrides(load_scenario(scenario), sets)
    core = _load_core()
    controllers = _controllers(doc, allow_python, validating=True)
    if controllers:
        return dict(json.loads(_call_core(core, core.validate, _to_json(doc), controllers)))
    return dict(json.loads(_call_core(core, core.validate, _to_json(doc))))


def run(
    scenario: ScenarioSource,
    seed: int | None = None,
    progress: ProgressFn | None = None,
    sets: Iterable[str] = (),
    out: str | os.PathLike[str] | None = None,
    *,
    allow_python: bool = False,
) -> Result:
    """Run one simulation and return its `Result`.

    `seed` overrides `run.seed`. `progress(sim_time_s, events)` is called periodically from
    inside the run; returning False stops it early (`result.meta["stopped_early"]`). An exception
    raised by `progress` stops the run and is re-raised here. `out` is the folder for the files
    the run writes while it runs (`run.capture`'s `capture.pcapng`; created if missing); a
    scenario with `run.capture` needs it. The tables go there only with `result.save(out)`. The
    folder is locked during the run (another process running into it is refused), and what an
    earlier run left in it (tables, summary, capture, qlog files) is removed first.
    `allow_python` lets the scenario's `cc = "py:module:Class"` controllers be imported and run;
    without it such a scenario is refused (a ScenarioError naming the field).
    """
    seed = check_seed(seed)
    if out is not None and not isinstance(out, (str, os.PathLike)):
        raise ScenarioError(f"out: expected a folder path, not {_type_name(out)}")
    if out is not None:
        out = out_dir(out, "out")
    # Read (checked, a fresh copy) once; a second copy only to apply overrides.
    doc = load_scenario(scenario)
    if not isinstance(sets, (list, tuple)) or sets:
        doc = apply_overrides(doc, sets)
    text = _to_json(doc)
    core = _load_core()
    controllers = _controllers(doc, allow_python)
    wrapped, failure = _guard_progress(progress)
    try:
        # Positional, in the core's order (a stand-in core in tests takes the same).
        extra: tuple[Any, ...] = ()
        if controllers or out is not None:
            extra = (controllers or None,) if out is None else (controllers or None, os.fspath(out))
        if _real_clock(doc):
            raw = _run_real(core, text, seed, wrapped, out, controllers)
        elif out is None:
            raw = _call_core(core, core.run, text, seed, wrapped, *extra)
        else:
            with locked_folder(out, "out"):  # one run per folder; an earlier run's files go
                from ._folder import clear_outputs
                from .results import TABLES

                clear_outputs(out, TABLES)
                raw = _call_core(core, core.run, text, seed, wrapped, *extra)
    except BaseException:
        if failure:  # the core surfaced the callback's error in its own way; prefer the original
            raise failure[0] from None
        raise
    if failure:
        raise failure[0]
    # The run has checked the scenario; normalizing only parses it again (no second build).
    normalized = dict(json.loads(_call_core(core, core.normalize, text)))

    from .results import Result

    used_seed = raw.get("meta", {}).get("seed")
    if used_seed is not None and isinstance(normalized.get("run"), dict):
        # Make scenario.json self-contained: rerunning it reproduces this run exactly.
        normalized["run"]["seed"] = used_seed
    return Result(raw, scenario=normalized, name=_scenario_name(scenario, doc))


def _real_clock(doc: Mapping[str, Any]) -> bool:
    """`run.clock = "real"`: a real-time run (`quicksim.emulate`)."""
    run = doc.get("run")
    return isinstance(run, Mapping) and run.get("clock") == "real"


def _run_real(
    core: Any, text: str, seed: int | None, progress: Any, out: Path | None, controllers: Mapping[str, Any]
) -> dict[str, Any]:
    """A real-time run (programs in network namespaces), in `out` (locked and cleared first)."""
    if controllers:
        raise ScenarioError("run.clock: controllers written in Python cannot run in real time")
    from .emulate import run_real

    if out is None:
        return run_real(core, text, seed, progress, None)
    with locked_folder(out, "out"):
        from ._folder import clear_outputs
        from .results import TABLES

        clear_outputs(out, TABLES)
        return run_real(core, text, seed, progress, out)


def _controllers(doc: Mapping[str, Any], allow_python: bool, validating: bool = False) -> dict[str, Any]:
    """The congestion controllers (`quicksim.cc`) and path schedulers (`quicksim.schedulers`)
    written in Python that the scenario names, by name: the core tells them apart by class."""
    from .cc import controllers_of
    from .schedulers import schedulers_of

    found: dict[str, Any] = dict(controllers_of(doc, allow_python=bool(allow_python), validating=validating))
    found.update(schedulers_of(doc, allow_python=bool(allow_python), validating=validating))
    return found


def _scenario_name(source: ScenarioSource, doc: Mapping[str, Any]) -> str:
    """The scenario's own `name`, else the file's stem, else "scenario"."""
    if isinstance(doc.get("name"), str) and doc["name"]:
        return str(doc["name"])
    return "scenario" if isinstance(source, Mapping) else Path(source).stem


# --- overrides -----------------------------------------------------------------------------


def _copy_doc(value: Any) -> Any:
    """A deep copy of a scenario document: new dicts and lists, the (immutable) scalars shared.
    Several times faster than `copy.deepcopy` (no memo), which took seconds for 10 000 flows."""
    kind = type(value)
    if kind is dict:
        return {k: _copy_doc(v) for k, v in value.items()}
    if kind is list:
        return [_copy_doc(v) for v in value]
    if kind in (str, int, float, bool) or value is None:
        return value
    return copy.deepcopy(value)


def _parse_key(key: str, raw: str) -> list[str]:
    """Split a dotted key with TOML's own rules, so quoting works exactly as in the file."""
    try:
        node: Any = tomllib.loads(f"{key} = 0")
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        raise ScenarioError(f"override {_short(raw)}: {_short(key)} is not a valid dotted key") from None
    segments: list[str] = []
    while isinstance(node, dict):
        if len(node) != 1:
            raise ScenarioError(f"override {raw!r}: {key!r} is not a valid dotted key")
        (segment, node) = next(iter(node.items()))
        segments.append(segment)
    return segments


def _parse_value(text: str) -> Any:
    try:
        parsed = tomllib.loads(f"v = {text}")
    except tomllib.TOMLDecodeError:
        return text
    if set(parsed) != {"v"} or _has_datetime(parsed["v"]):
        # Something like "1\nx = 2", or a TOML date: no scenario field takes those, so the
        # user most likely meant the literal text.
        return text
    return parsed["v"]


def _has_datetime(value: Any) -> bool:
    if isinstance(value, datetime.date | datetime.time):
        return True
    if isinstance(value, dict):
        return any(_has_datetime(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_datetime(v) for v in value)
    return False


def _set_path(doc: dict[str, Any], segments: list[str], value: Any, raw: str) -> None:
    node: Any = doc
    segments = list(segments)
    i = -1
    while i + 1 < len(segments):
        i += 1
        if isinstance(node, list):
            segments = _join_dotted_name(node, segments, i)
        segment = segments[i]
        last = i == len(segments) - 1
        where = ".".join(segments[:i])
        if isinstance(node, dict):
            if last:
                node[segment] = value
                return
            if segment not in node:
                if segments[i + 1].isdigit():
                    path = ".".join(segments[: i + 1])
                    raise ScenarioError(
                        f"override {raw!r}: {path} does not exist, so it has no element {segments[i + 1]}"
                    )
                node[segment] = {}
            node = node[segment]
        elif isinstance(node, list):
            index = _element_index(node, segment, where, raw)
            if last:
                node[index] = value
                return
            node = node[index]
        else:
            raise ScenarioError(
                f"override {raw!r}: {where} is {_type_name(node)} ({node!r}), not a table, "
                f"so it has no {segment!r}"
            )


def _join_dotted_name(items: list[Any], segments: list[str], i: int) -> list[str]:
    """A name with dots (`flows.a.b.start` for the flow named "a.b"): when no element is named
    `segments[i]`, the longest run of segments from i that joins into an element's name is one."""
    names = {item["name"] for item in items if isinstance(item, dict) and isinstance(item.get("name"), str)}
    if segments[i] in names or segments[i].isdigit():
        return segments
    for j in range(len(segments), i + 1, -1):
        joined = ".".join(segments[i:j])
        if joined in names:
            return [*segments[:i], joined, *segments[j:]]
    return segments


def _element_index(items: list[Any], segment: str, where: str, raw: str) -> int:
    if segment.isascii() and segment.isdigit():
        index = int(segment)
        if index >= len(items):
            raise ScenarioError(
                f"override {raw!r}: {where} has {len(items)} element(s), so index {index} is out of range"
            )
        return index
    named = [i for i, item in enumerate(items) if isinstance(item, dict) and item.get("name") == segment]
    if len(named) == 1:
        return named[0]
    if named:
        raise ScenarioError(
            f"override {raw!r}: {where} has {len(named)} elements named {segment!r}; use an index"
        )
    # Names as written by an earlier override may hold any character: quoted where they would
    # break the one-line message.
    names = [
        n if n.isprintable() else repr(n)
        for n in (str(item["name"]) for item in items if isinstance(item, dict) and "name" in item)
    ]
    hint = (
        f"names: {', '.join(names)}"
        if names
        else f"its elements have no names; use an index 0..{len(items) - 1}"
    )
    raise ScenarioError(f"override {raw!r}: {where} has no element named {segment!r} ({hint})")


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array"}
    return names.get(type(value), f"a {type(value).__name__}")


# --- the core ------------------------------------------------------------------------------


def _to_json(doc: Mapping[str, Any]) -> str:
    def refuse(value: Any) -> Any:
        raise TypeError(f"{value!r} ({type(value).__name__}) has no JSON form")

    check_values(doc)
    try:
        return json.dumps(doc, allow_nan=False, default=refuse)
    except (TypeError, ValueError) as e:
        raise ScenarioError(f"the scenario cannot be passed to the core: {e}") from None


def _guard_progress(progress: ProgressFn | None) -> tuple[ProgressFn | None, list[BaseException]]:
    """Wrap the callback so it always returns a bool and never raises into the core.

    Only an explicit False stops the run (a callback returning None keeps going). An exception,
    KeyboardInterrupt included, is kept and stops the run; `run` re-raises it afterwards.
    """
    if progress is None:
        return None, []
    failure: list[BaseException] = []

    def guarded(sim_time_s: float, events: int) -> bool:
        if failure:
            return False
        try:
            return progress(sim_time_s, events) is not False
        except BaseException as e:
            failure.append(e)
            return False

    return guarded, failure
