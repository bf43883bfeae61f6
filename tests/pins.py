"""Golden values of the Python suite, in one file (`tests/pins.json`), each with what it guards.

A test checks its values with `check(name, values)`. A change meant to alter them re-blesses the
file: `UPDATE_PINS=1 python3 -m pytest -s tests/<the test file>` rewrites the entries it checks
and prints each value that moved (old -> new); the commit says why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

PINS = Path(__file__).resolve().parent / "pins.json"


def moved(name: str, pinned: dict[str, str], got: dict[str, str]) -> list[str]:
    """`name key: old -> new` for every value that differs (a missing one shows as None)."""
    keys = sorted(set(pinned) | set(got))
    return [f"{name} {k}: {pinned.get(k)} -> {got.get(k)}" for k in keys if pinned.get(k) != got.get(k)]


def check(name: str, got: dict[str, str]) -> None:
    """Asserts that the values of pin `name` are `got`; with UPDATE_PINS=1, records them."""
    data = json.loads(PINS.read_text(encoding="utf-8"))
    entry = data["pins"][name]
    pinned = {k: v for k, v in entry.items() if k != "guards"}
    diff = moved(name, pinned, got)
    if os.environ.get("UPDATE_PINS") == "1":
        if diff:
            data["pins"][name] = {"guards": entry["guards"], **got}
            PINS.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"pins: {len(diff)} value(s) moved", *diff, sep="\n  ")
        return
    assert not diff, (
        "pinned values moved (name key: pinned -> now):\n  " + "\n  ".join(diff) + "\nIf the change is meant "
        "to move results, re-bless with UPDATE_PINS=1 python3 -m pytest -s <this test file> and say why."
    )
