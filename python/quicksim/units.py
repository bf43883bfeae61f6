"""Quantities with units ("10ms", "10Mbps", "1500B"), read by the core's own parser.

Scenario files, the CLI, metrics and reproductions all read units through these functions, and
they call the parser the schema uses (`crates/quicksim-scenario/src/units.rs`), so a value means
the same everywhere: decimal SI prefixes (k = 1000), binary ones for bytes (KiB), "b" for bits
("200kb" = 25000 B), exact decimal arithmetic. The core writes them back canonically ("1500ms",
"25kB"; see `quicksim.validate`).
"""

from __future__ import annotations

import re
from typing import Any

from . import _native

__all__ = ["bits_per_s", "bytes_", "seconds", "split_number"]

# A plain number, as Python writes one; in `seconds` it means seconds.
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_PLAIN = re.compile(rf"\s*{_NUMBER}\s*")
_NUMBER_SUFFIX = re.compile(rf"^\s*({_NUMBER})\s*([A-Za-z%/]*)\s*$")


def seconds(value: Any, what: str = "time") -> float:
    """A time in seconds: a number (or a string of one) is seconds already, a string with a
    unit ("500ms", "2min") is read by the core. Raises ValueError naming `what`."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: {value!r} is not a time")
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    if _PLAIN.fullmatch(text):
        return float(text)
    core = _native.load_core()
    try:
        return float(core.parse_duration(text))
    except core.ScenarioError:
        raise ValueError(f'{what}: {value!r} is not a time; try "3s" or "500ms"') from None


def bits_per_s(text: str) -> int:
    """A rate with its unit ("10Mbps", "2.5Gbps") in bit/s; ScenarioError if it is not one."""
    core = _native.load_core()
    return int(_native.call(core, core.parse_rate, str(text)))


def bytes_(text: str) -> int:
    """A size with its unit ("1500B", "25kB", "200kb", "1KiB") in bytes; ScenarioError if it is
    not one. (The trailing underscore keeps the builtin `bytes` usable next to it.)"""
    core = _native.load_core()
    return int(_native.call(core, core.parse_bytes, str(text)))


def split_number(text: str) -> tuple[float, str] | None:
    """("2.5", "ms") of "2.5ms" as (2.5, "ms"), whatever the suffix means ("%" too); None if
    `text` is not a number followed by letters. For building and plotting series of values
    ("2ms", "4ms", ...), not for their meaning: that is what the other functions are for."""
    m = _NUMBER_SUFFIX.match(text)
    return (float(m.group(1)), m.group(2)) if m else None
