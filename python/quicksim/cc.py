"""Congestion controllers written in Python: subclass `Controller`, then name the class in a
scenario (`cc = "py:package.module:Class"`) or register it under a short name
(`quicksim.cc.register("mycc", MyCC)`, then `cc = "mycc"`). It runs in QUIC and TCP flows
exactly as a built-in controller does (the Rust `CongestionController` trait's callbacks, with
the same fields), in sweeps too: local and Dask workers import the class by its module path.

    class FixedWindow(quicksim.cc.Controller):
        def __init__(self, init, segments=10):
            super().__init__(init)
            self.cwnd = segments * init.mds

Callbacks (override those you need; the others are never called, which costs nothing):

- `on_packet_sent(cx, p)`: p.bytes, p.app_limited
- `on_ack(cx, ack)`: one newly acknowledged packet: ack.sent_time_ps, ack.bytes, ack.app_limited
- `on_ack_end(cx, ack)`: the end of one ACK: ack.acked_bytes, ack.acked_packets,
  ack.largest_acked_sent_time_ps, ack.app_limited, ack.rate (the delivery-rate sample, a
  `RateSample`, or None where the transport does not provide one), ack.ce_packets (CE marks
  this ACK reported, for a controller with `ecn_response = "scalable"`)
- `on_congestion_event(cx, ev)`: ev.cause ("loss", "ecn", "rto", "persistent_congestion"),
  ev.sent_time_ps, ev.lost_bytes
- `on_spurious_congestion(cx)`: a loss declared earlier was spurious

`cx` is the transport's state at the call: now_ps (and now_s), mds, bytes_in_flight (at a TCP
"rto" event: the bytes in flight just before the timeout), the RTT
estimator (latest_rtt_ps, smoothed_rtt_ps, min_rtt_ps, rttvar_ps, has_rtt_sample: the RTT sample
of an ACK is cx.latest_rtt_ps in its on_ack/on_ack_end) and the transport's window rules
(initial_window, minimum_window, loss_window). Times are integer picoseconds, so integer
arithmetic reproduces the simulator's exactly. The objects are valid during the call only.

After each callback the simulator reads `cwnd` (required: a positive int, bytes), `ssthresh`
(int or None), `state` (None, or "slow_start", "congestion_avoidance", "recovery",
"app_limited") and `pacing_rate` (None, or bit/s: it drives the pacer). Once, when it is made,
it reads `ecn_response`: "classic" (default: marks arrive as "ecn" congestion events, at most one
per round trip) or "scalable" (DCTCP, Prague: no "ecn" events, the marks counted in
`ack.ce_packets`; over TCP this asks for AccECN), `ect1` (scalable only: packets carry ECT(1),
the L4S identifier), `spreads_ecn_reduction` (TCP spreads the window cut the controller makes
on marks over a round with PRR, as Linux does for DCTCP) and `ce_change_ack` (how a TCP receiver
ACKs a change of CE state; "apart" for DCTCP). An exception, or a
window that is not a positive integer, stops the run with `quicksim.ControllerError` naming the
controller, the callback and the simulated time (the exception is its `__cause__`).

The per-packet `on_ack` calls of an ACK are made together when the ACK ends (one GIL
acquisition per ACK): the window is read once, after `on_ack_end`.

A scenario is data: reading or validating one never imports the modules its `py:` names point
at. Running them is an explicit choice of the user: `quicksim run --allow-python` (also `sweep`
and `validate`), or `allow_python=True` in `quicksim.run`, `quicksim.validate`, `quicksim.sweep`.
`controllers_of` is the one place that decides (`allow_python()` gives the same consent to a block
of code). A name given to `register` is code the user's own program imported, so it needs no flag.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import inspect
import os
import sys
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError

if TYPE_CHECKING:
    from ._core import AckEvent, AckSummary, CcContext, CongestionEvent, InitInfo, SentPacket

__all__ = [
    "ALLOW_PYTHON_HINT",
    "Controller",
    "allow_python",
    "class_path",
    "consented",
    "register",
    "registered",
    "resolve",
    "unregister",
]

PY_PREFIX = "py:"
"""A scenario's `cc = "py:package.module:Class"` names a class by its import path."""

_HOOKS = ("on_packet_sent", "on_ack", "on_ack_end", "on_congestion_event", "on_spurious_congestion")
_STATES = (None, "slow_start", "congestion_avoidance", "recovery", "app_limited")


class Controller:
    """Base class of a congestion controller written in Python.

    The simulator makes one per connection end: `Class(init, **settings)`, where `init` has
    mds, initial_window, minimum_window and loss_window (bytes) and seed (an int from the end's
    own random stream of the run's seed: draw from `random.Random(init.seed)`, never from the
    global `random`, so runs repeat), and `settings` are the scenario's (`cc = { algo =
    "py:mod:Class", beta = 0.8 }` gives beta=0.8). `Controller.__init__` sets `cwnd` to the
    transport's initial window.
    """

    cwnd: int
    """The congestion window in bytes (a positive int)."""
    ssthresh: int | None = None
    """The slow-start threshold in bytes, None while unset (recorded in the `conn` table)."""
    state: str | None = None
    """None (then slow start while cwnd < ssthresh, else congestion avoidance), or one of
    "slow_start", "congestion_avoidance", "recovery", "app_limited" (the `in_recovery` column)."""
    pacing_rate: float | None = None
    """None (no pacing), or the pacing rate in bit/s."""
    ecn_response: str = "classic"
    """"classic" (CE marks are "ecn" congestion events) or "scalable" (counted in
    `AckSummary.ce_packets`); read once, when the controller is made."""
    ect1: bool = False
    """With "scalable": packets carry ECT(1) (L4S) instead of ECT(0)."""
    spreads_ecn_reduction: bool = False
    """TCP brings the window down to the controller's cut on marks over a round with PRR (Linux's
    CWR state, as for DCTCP) instead of at once."""
    ce_change_ack: str = "together"
    """How this end, receiving over TCP AccECN, ACKs a change of CE state: "together" (one ACK
    with the changing segment, RFC 9768), "apart" (the delayed ACK of the segments before it
    first, then one at once: RFC 8257 §3.2, Linux DCTCP) or "apart-delayed" (the second waits
    for the delayed ACK: ns-3.44's TcpDctcp)."""

    def __init__(self, init: InitInfo) -> None:
        self.cwnd = init.initial_window

    def on_packet_sent(self, cx: CcContext, p: SentPacket) -> None:
        """A packet counting toward bytes in flight was sent."""

    def on_ack(self, cx: CcContext, ack: AckEvent) -> None:
        """One newly acknowledged in-flight packet (in ascending order, then `on_ack_end`)."""

    def on_ack_end(self, cx: CcContext, ack: AckSummary) -> None:
        """The end of one ACK that acknowledged in-flight packets."""

    def on_congestion_event(self, cx: CcContext, ev: CongestionEvent) -> None:
        """Packets were declared lost, an ECN-CE mark arrived, or the retransmission timer fired."""

    def on_spurious_congestion(self, cx: CcContext) -> None:
        """An ACK acknowledged a packet declared lost before (RFC 9438 §4.9 undo)."""


_REGISTRY: dict[str, type[Controller]] = {}


def register(name: str, cls: type[Controller]) -> None:
    """Make `cc = "name"` mean the class `cls` in this process's runs and sweeps (sweep workers
    import it by `class_path(cls)`, so it must live in an importable module)."""
    _check_class(cls, f"register({name!r})")
    if not isinstance(name, str) or not name or name.startswith(PY_PREFIX) or any(c.isspace() for c in name):
        raise ValueError(f"register: {name!r} is not a controller name (a word, not starting with 'py:')")
    if name in _builtin_names():
        raise ValueError(f"register: {name!r} is a built-in controller; choose another name")
    _REGISTRY[name] = cls


def unregister(name: str) -> None:
    """Forget a name given to `register` (no error if it was not registered)."""
    _REGISTRY.pop(name, None)


def registered() -> dict[str, type[Controller]]:
    """The names registered in this process."""
    return dict(_REGISTRY)


def class_path(cls: type) -> str:
    """`module:QualName` of a class, as `cc = "py:..."` names it."""
    return f"{cls.__module__}:{cls.__qualname__}"


def resolve(name: str) -> type[Controller]:
    """The class a scenario's controller name means: a registered name, or `py:module:Class`
    imported (the current directory is searched last, so `py:examples.mycc:MyCC` works from the
    repository root). A `ValueError` says what is wrong."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    obj = resolve_object(name)
    _check_class(obj, repr(name))
    return obj  # type: ignore[no-any-return]


def resolve_object(name: str) -> Any:
    """The object `py:module:Qual.Name` names, its module imported (as `resolve`; also for the
    path schedulers of `quicksim.schedulers`). A `ValueError` says what is wrong."""
    module_name, qualname = _split(name)
    try:
        module = _import(module_name)
    except Exception as e:
        raise ValueError(f"{name!r}: cannot import {module_name} ({type(e).__name__}: {e})") from None
    obj: Any = module
    for part in qualname.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{name!r}: {module_name} has no {qualname}")
        obj = getattr(obj, part)
    return obj


def _split(name: str) -> tuple[str, str]:
    """(module, qualified class name) of `py:module:Class`, without importing anything."""
    if not name.startswith(PY_PREFIX):
        raise ValueError(f"{name!r} is not a registered Python controller")
    module_name, sep, qualname = name[len(PY_PREFIX) :].partition(":")
    if not sep or not module_name or not qualname:
        raise ValueError(f"{name!r}: expected py:package.module:Class")
    return module_name, qualname


def _import(module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        cwd = os.getcwd()
        top = module_name.split(".")[0]
        if e.name != top or cwd in sys.path:
            raise
        sys.path.append(cwd)
        return importlib.import_module(module_name)


def _check_class(cls: Any, where: str) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Controller)):
        raise ValueError(f"{where}: {cls!r} is not a subclass of quicksim.cc.Controller")


def _builtin_names() -> tuple[str, ...]:
    from ._native import load_core

    return tuple(load_core().builtin_controllers())


def cc_names(doc: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(path, algo) of every `cc` setting in a scenario document."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Mapping):
            for k, v in node.items():
                sub = f"{path}.{k}" if path else str(k)
                if k == "cc" and isinstance(v, str):
                    yield sub, v
                elif k == "cc" and isinstance(v, Mapping) and isinstance(v.get("algo"), str):
                    yield sub, v["algo"]
                else:
                    stack.append((v, sub))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))


def names_in(doc: Mapping[str, Any]) -> set[str]:
    """Every controller name a scenario document uses."""
    return {algo for _, algo in cc_names(doc)}


ALLOW_PYTHON_HINT = "--allow-python, or allow_python=True in quicksim.run / validate / sweep"
"""How a user says that a scenario's `py:` controllers may be imported and run."""

_ALLOWED: contextvars.ContextVar[bool] = contextvars.ContextVar("quicksim_allow_python", default=False)


def consented(allow_python: bool = False) -> bool:
    """Whether `py:` controllers may be imported: the call's own `allow_python`, or an enclosing
    `allow_python()` block (what a sweep hands its worker processes, where the block is not)."""
    return bool(allow_python) or _ALLOWED.get()


@contextlib.contextmanager
def allow_python() -> Iterator[None]:
    """Within the block, runs and validations import `py:` controllers as with
    `allow_python=True`: for code that reaches the runs through layers that do not pass the flag
    (the conformance suite, which tests the controller the user named on its command line)."""
    token = _ALLOWED.set(True)
    try:
        yield
    finally:
        _ALLOWED.reset(token)


class _Unchecked(Controller):
    """Stands in, while a scenario is only validated, for a `py:` class that was not imported:
    the core checks everything else; the class and its settings are checked when it runs."""

    def __init__(self, init: InitInfo, **settings: Any) -> None:
        super().__init__(init)


def controllers_of(
    doc: Mapping[str, Any], *, allow_python: bool = False, validating: bool = False
) -> dict[str, type[Controller]]:
    """The Python controllers a scenario names, `{name: class}`: the one place that decides what
    code a scenario may import. A registered name is the user's own class. A `py:module:Class`
    name is imported only with `allow_python`; without it, a run is refused (ScenarioError naming
    the field and ALLOW_PYTHON_HINT) and validation (`validating`) gets a stand-in that accepts
    any settings, so `quicksim validate` of a stranger's scenario runs none of its code. A `py:`
    name that cannot be imported is a ScenarioError naming the field."""
    allow_python = consented(allow_python)
    found: dict[str, type[Controller]] = {}
    for path, algo in cc_names(doc):
        if algo in found or not (algo.startswith(PY_PREFIX) or algo in _REGISTRY):
            continue
        try:
            if algo in _REGISTRY or allow_python:
                found[algo] = resolve(algo)
                continue
            module_name, _ = _split(algo)  # a malformed name is refused either way
        except ValueError as e:
            raise ScenarioError(f"{path}: {e}") from None
        if not validating:
            raise ScenarioError(
                f"{path}: {algo!r} is Python code named by the scenario; importing {module_name} "
                f"and running it needs {ALLOW_PYTHON_HINT}"
            )
        found[algo] = _Unchecked
    return found


def unchecked(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(field, name) of the `py:` controllers that validation without `allow_python` leaves
    unimported, and so unchecked."""
    return [(p, a) for p, a in cc_names(doc) if a.startswith(PY_PREFIX) and a not in _REGISTRY]


def _instantiate(cls: type[Controller], init: InitInfo, settings: Mapping[str, Any]) -> tuple[Any, ...]:
    """Called by the core for each connection: the controller and its overridden callbacks
    (None for those left as `Controller`'s no-ops, which the core then never calls)."""
    obj = cls(init, **settings)
    hooks = tuple(
        getattr(obj, h) if getattr(type(obj), h, None) is not getattr(Controller, h) else None for h in _HOOKS
    )
    return (obj, *hooks)


def _check_settings(cls: type[Controller], settings: Mapping[str, Any]) -> tuple[str, str] | None:
    """Called by the core with a scenario's settings for `cls`: None if the constructor takes
    them, else (field, message)."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
    names = [
        p.name
        for p in params[1:]
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    for key in settings:
        if key not in names and not takes_any:
            accepted = ", ".join(names) or "none"
            return key, f"unknown setting of {cls.__qualname__} (its settings: {accepted})"
    try:
        sig.bind(None, **settings)
    except TypeError as e:
        return "", f"{cls.__qualname__}: {e}"
    return None
