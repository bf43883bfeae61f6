"""The Python suite's golden file (`tests/pins.json`, read by `tests/pins.py`): it parses, every
entry says what it guards, and a difference names each moved, new and vanished value."""

from __future__ import annotations

import json

import pins


def test_every_pin_says_what_it_guards() -> None:
    data = json.loads(pins.PINS.read_text(encoding="utf-8"))
    assert data["pins"]
    for name, entry in data["pins"].items():
        assert entry["guards"].strip(), name
        assert len(entry) > 1, f"{name} pins nothing"


def test_moved_names_each_difference() -> None:
    assert pins.moved("p", {"a": "1", "b": "2"}, {"a": "1", "b": "2"}) == []
    assert pins.moved("p", {"a": "1", "b": "2"}, {"a": "9", "c": "3"}) == [
        "p a: 1 -> 9",
        "p b: 2 -> None",
        "p c: None -> 3",
    ]
