"""Path schedulers of multipath QUIC written in Python: subclass `Scheduler`, then name the class
in a flow's `multipath.scheduler` (`scheduler = "py:package.module:Class"`, imported only with
`--allow-python` / `allow_python=True`, as `py:` controllers are: `quicksim.cc`) or register it
under a short name (`quicksim.schedulers.register("lowrtt", LowRtt)`, then
`scheduler = "lowrtt"`). The built-in ones are "minrtt", "roundrobin", "redundant" and "backup"
(docs/multipath.md).

    class LowRtt(quicksim.schedulers.Scheduler):
        def order(self, paths):
            usable = [p for p in paths if p.usable and not p.backup]
            usable = usable or [p for p in paths if p.usable]  # backups while nothing else works
            return [p.path_id for p in sorted(usable, key=lambda p: (p.srtt_ps, p.path_id))]

is the built-in "minrtt", bit for bit. The connection makes one object per end (`Class()`)
and calls `order(paths)` whenever it has new data to send: `paths` holds one `PathInfo` per path
of the connection, in id order, with path_id, usable (validated, not abandoned and not suspected
of having failed), backup (marked backup by either end), srtt_ps (smoothed RTT in integer
picoseconds; the initial RTT before a sample), cwnd_bytes, bytes_in_flight and room_bytes
(window minus bytes in flight). It returns the ids of the paths to try, best first: the
connection sends the packet on the first of them whose window and pacer allow it, and a path
left out gets no new data now (PTO probes, path validation and ACKs go on every path
regardless). A class attribute `redundant = True` sends each packet's new data on every path
returned (copies on all but the first), as the built-in "redundant" does.

An exception, or a return that is not a sequence of the connection's path ids, stops the run
with `quicksim.ControllerError` naming the scheduler (the exception is its `__cause__`). In a
sweep, name the class by `py:module:Class` (worker processes import it); a short name given to
`register` is known in this process only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import cc
from .errors import ScenarioError

if TYPE_CHECKING:
    from ._core import PathInfo

__all__ = ["BUILTIN", "Scheduler", "register", "registered", "resolve", "schedulers_of", "unregister"]

BUILTIN = ("minrtt", "roundrobin", "redundant", "backup")
"""The core's own path schedulers (`quic/path_sched.rs`, `SCHEDULERS`)."""


class Scheduler:
    """Base class of a path scheduler written in Python (see the module's documentation)."""

    redundant: bool = False
    """Send each packet's new data on every path `order` returns (read once, at creation)."""

    def order(self, paths: Sequence[PathInfo]) -> Sequence[int]:
        """The ids of the paths to try for the next packet of new data, best first."""
        raise NotImplementedError(f"{type(self).__qualname__} does not define order(paths)")


_REGISTRY: dict[str, type[Scheduler]] = {}


def register(name: str, cls: type[Scheduler]) -> None:
    """Make `multipath.scheduler = "name"` mean the class `cls` in this process's runs."""
    _check_class(cls, f"register({name!r})")
    if (
        not isinstance(name, str)
        or not name
        or name.startswith(cc.PY_PREFIX)
        or any(c.isspace() for c in name)
    ):
        raise ValueError(f"register: {name!r} is not a scheduler name (a word, not starting with 'py:')")
    if name in BUILTIN:
        raise ValueError(f"register: {name!r} is a built-in path scheduler; choose another name")
    if name in cc.registered():
        raise ValueError(f"register: {name!r} is a registered congestion controller; choose another name")
    _REGISTRY[name] = cls


def unregister(name: str) -> None:
    """Forget a name given to `register` (no error if it was not registered)."""
    _REGISTRY.pop(name, None)


def registered() -> dict[str, type[Scheduler]]:
    """The names registered in this process."""
    return dict(_REGISTRY)


def resolve(name: str) -> type[Scheduler]:
    """The class a scenario's scheduler name means: a registered name, or `py:module:Class`
    imported. A `ValueError` says what is wrong."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if not name.startswith(cc.PY_PREFIX):
        known = ", ".join((*BUILTIN, *_REGISTRY))
        raise ValueError(f"{name!r} is not a path scheduler; use one of {known}, or py:module:Class")
    obj = cc.resolve_object(name)
    _check_class(obj, repr(name))
    return obj  # type: ignore[no-any-return]


def _check_class(cls: Any, where: str) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
        raise ValueError(f"{where}: {cls!r} is not a subclass of quicksim.schedulers.Scheduler")


def scheduler_names(doc: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, name) of every `multipath.scheduler` in a scenario document."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Mapping):
            for k, v in node.items():
                sub = f"{path}.{k}" if path else str(k)
                if k == "multipath" and isinstance(v, Mapping) and isinstance(v.get("scheduler"), str):
                    yield f"{sub}.scheduler", v["scheduler"]
                else:
                    stack.append((v, sub))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))


class _Unchecked(Scheduler):
    """Stands in, while a scenario is only validated, for a `py:` class that was not imported."""

    def order(self, paths: Sequence[PathInfo]) -> Sequence[int]:
        return []


def schedulers_of(
    doc: Mapping[str, Any], *, allow_python: bool = False, validating: bool = False
) -> dict[str, type[Scheduler]]:
    """The Python path schedulers a scenario names, `{name: class}`, decided as
    `cc.controllers_of` decides for controllers: a registered name is the user's own class; a
    `py:module:Class` is imported only with `allow_python` (without it a run is refused naming
    the field, and validation gets a stand-in). Built-in names are the core's."""
    allow_python = cc.consented(allow_python)
    found: dict[str, type[Scheduler]] = {}
    for path, name in scheduler_names(doc):
        if name in found or not (name.startswith(cc.PY_PREFIX) or name in _REGISTRY):
            continue
        if name in _REGISTRY or allow_python:
            try:
                found[name] = resolve(name)
            except ValueError as e:
                raise ScenarioError(f"{path}: {e}") from None
            continue
        try:
            module_name, _ = cc._split(name)
        except ValueError as e:
            raise ScenarioError(f"{path}: {e}") from None
        if not validating:
            raise ScenarioError(
                f"{path}: {name!r} is Python code named by the scenario; importing {module_name} "
                f"and running it needs {cc.ALLOW_PYTHON_HINT}"
            )
        found[name] = _Unchecked
    return found
