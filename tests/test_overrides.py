"""`apply_overrides` and `load_scenario`: pure Python, no core needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quicksim import ScenarioError, apply_overrides, load_scenario


def test_index_path(scenario: dict[str, Any]) -> None:
    out = apply_overrides(scenario, ["flows.0.start=2s"])
    assert out["flows"][0]["start"] == "2s"


def test_name_path(scenario: dict[str, Any]) -> None:
    out = apply_overrides(scenario, ["flows.bg.size=1000B", "flows.sender1.stop=3s"])
    assert out["flows"][1]["size"] == "1000B"
    assert out["flows"][0]["stop"] == "3s"


def test_nested_inline_table_and_new_keys(scenario: dict[str, Any]) -> None:
    out = apply_overrides(
        scenario,
        ["dumbbell.bottleneck.queue.packets=50", "quic.cc=cubic", "flows.sender1.extra.deep=1"],
    )
    assert out["dumbbell"]["bottleneck"]["queue"] == {"bytes": "25kB", "packets": 50}
    assert out["quic"] == {"cc": "cubic"}
    assert out["flows"][0]["extra"] == {"deep": 1}


def test_replace_whole_element_and_table(scenario: dict[str, Any]) -> None:
    out = apply_overrides(scenario, ['flows.bg={ name = "bg", kind = "udp" }', 'run={ duration = "1s" }'])
    assert out["flows"][1] == {"name": "bg", "kind": "udp"}
    assert out["run"] == {"duration": "1s"}


def test_overrides_apply_in_order_and_leave_input_alone(scenario: dict[str, Any]) -> None:
    before = repr(scenario)
    out = apply_overrides(scenario, ["run.seed=1", "run.seed=2"])
    assert out["run"]["seed"] == 2
    assert repr(scenario) == before


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("5", 5),
        ("-3", -3),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        ("0x10", 16),
        ("true", True),
        ("false", False),
        ("[1, 2]", [1, 2]),
        ('["a", "b"]', ["a", "b"]),
        ('{ rate = "1Mbps", delay = "5ms" }', {"rate": "1Mbps", "delay": "5ms"}),
        ('"10"', "10"),
        ("'single'", "single"),
        ("10Mbps", "10Mbps"),
        ("10 Mbps", "10 Mbps"),
        ("cubic", "cubic"),
        ("", ""),
        ("1979-05-27", "1979-05-27"),  # a TOML date, but no field takes dates
        ("  7  ", 7),  # surrounding blanks are ignored
    ],
)
def test_value_types(text: str, expected: Any) -> None:
    out = apply_overrides({}, [f"a.b={text}"])
    assert out["a"]["b"] == expected
    assert type(out["a"]["b"]) is type(expected)


def test_value_may_contain_equals_sign() -> None:
    assert apply_overrides({}, ["a=x=y"])["a"] == "x=y"


def test_quoted_key_segments() -> None:
    doc = {"flows": [{"name": "a.b", "start": "0s"}]}
    out = apply_overrides(doc, ['flows."a.b".start=1s', '"odd key"=1'])
    assert out["flows"][0]["start"] == "1s"
    assert out["odd key"] == 1


@pytest.mark.parametrize(
    ("override", "fragments"),
    [
        ("flows.0.start", ["expected KEY=VALUE", "flows.0.start"]),
        ("=5", ["expected KEY=VALUE"]),
        ("a..b=1", ["not a valid dotted key"]),
        ("flows.7.start=1s", ["flows.7.start=1s", "flows has 2 element(s)", "index 7"]),
        ("flows.nosuch.start=1s", ["flows.nosuch.start=1s", "no element named 'nosuch'", "sender1, bg"]),
        ("run.duration.unit=s", ["run.duration is a string ('3s')", "'unit'"]),
        ("dumbbell.pairs.x=1", ["dumbbell.pairs is an integer (1)"]),
        ("nodes.0.name=r1", ["nodes does not exist", "element 0"]),
    ],
)
def test_errors_name_the_path(scenario: dict[str, Any], override: str, fragments: list[str]) -> None:
    with pytest.raises(ScenarioError) as info:
        apply_overrides(scenario, [override])
    for fragment in fragments:
        assert fragment in str(info.value)


def test_error_for_unnamed_elements() -> None:
    with pytest.raises(ScenarioError, match=r"no names; use an index 0\.\.1"):
        apply_overrides({"links": [{"a": 1}, {"a": 2}]}, ["links.x.a=3"])


def test_error_for_duplicate_names() -> None:
    doc = {"flows": [{"name": "f"}, {"name": "f"}]}
    with pytest.raises(ScenarioError, match="2 elements named 'f'; use an index"):
        apply_overrides(doc, ["flows.f.start=1s"])


def test_scenario_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        apply_overrides({}, ["nokey"])


def _toml_basic_string(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\' or ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@given(st.text(alphabet=st.characters(exclude_categories=("Cs",))))
def test_any_quoted_string_round_trips(s: str) -> None:
    assert apply_overrides({}, [f"k={_toml_basic_string(s)}"])["k"] == s


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_integers_parse(n: int) -> None:
    assert apply_overrides({}, [f"k={n}"])["k"] == n


@given(st.text(alphabet=st.characters(exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1))
def test_unparsable_text_is_kept_verbatim(s: str) -> None:
    from quicksim.api import tomllib  # tomli on 3.10

    try:
        tomllib.loads(f"v = {s}")
    except tomllib.TOMLDecodeError:
        assert apply_overrides({}, [f"k={s}"])["k"] == s


# --- load_scenario -----------------------------------------------------------------------------


def test_load_toml(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text('[run]\nduration = "10s"\n\n[[flows]]\nname = "a"\n', encoding="utf-8")
    assert load_scenario(path) == {"run": {"duration": "10s"}, "flows": [{"name": "a"}]}
    assert load_scenario(str(path)) == load_scenario(path)


def test_load_json(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"run": {"duration": "1s"}}', encoding="utf-8")
    assert load_scenario(path) == {"run": {"duration": "1s"}}


def test_load_dict_is_a_deep_copy(scenario: dict[str, Any]) -> None:
    loaded = load_scenario(scenario)
    loaded["flows"][0]["start"] = "9s"
    assert scenario["flows"][0]["start"] == "0.5s"


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[run]\nduration = "10s"\nseed = = 3\n', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.toml: invalid TOML: .*line 3"):
        load_scenario(path)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_scenario(tmp_path / "nope.toml")


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ScenarioError, match="not UTF-8"):
        load_scenario(path)
