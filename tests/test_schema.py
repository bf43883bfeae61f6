"""The scenario format's JSON Schema and reference (`quicksim schema`): both generated from the
core's types, the reference committed and kept up to date, the schema accepting every bundled
scenario and refusing what the core refuses."""

from __future__ import annotations

import glob
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema")

from quicksim import _native, api  # noqa: E402

pytestmark = pytest.mark.core
ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "scenario-reference.md"


def _validator() -> Any:
    schema = json.loads(_native.load_core().scenario_schema())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _bundled() -> list[Path]:
    """Every scenario file of the repository (the examples' sweep plans, which name a scenario
    under `scenario`, are another format)."""
    files = sorted(glob.glob(str(ROOT / "scenarios" / "*.toml"))) + sorted(
        glob.glob(str(ROOT / "examples" / "*.toml"))
    )
    return [Path(p) for p in files if "\nscenario =" not in "\n" + Path(p).read_text(encoding="utf-8")]


def test_reference_is_up_to_date() -> None:
    """docs/scenario-reference.md is what `quicksim schema --reference` writes today."""
    want = _native.load_core().scenario_reference()
    have = REFERENCE.read_text(encoding="utf-8")
    assert have == want, (
        "docs/scenario-reference.md is out of date: "
        "run `quicksim schema --reference -o docs/scenario-reference.md`"
    )


def test_reference_names_every_setting_of_each_transport() -> None:
    """Every key of each transport's settings type, and every flow kind, has a row."""
    text = REFERENCE.read_text(encoding="utf-8")
    schema = json.loads(_native.load_core().scenario_schema())
    for kind in ("quic", "tcp", "quinn"):
        for key in schema["$defs"][f"{kind}_settings"]["properties"]:
            assert f"| `{key}` |" in text, (kind, key)
    for kind in ("udp", "onoff", "quic", "tcp", "quinn"):
        assert f'## flows[] (kind = "{kind}")' in text, kind


def test_every_setting_has_a_line_of_documentation() -> None:
    """No row of the reference has an empty meaning: each setting's doc comment is its documentation."""
    section = ""
    undocumented = []
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif line.startswith("| `") and line.rstrip().endswith("|  |"):
            undocumented.append(f"{section}: {line.split('|')[1].strip()}")
    assert not undocumented, undocumented


@pytest.mark.parametrize("path", _bundled(), ids=lambda p: p.name)
def test_every_bundled_scenario_is_valid(path: Path) -> None:
    doc = api.load_scenario(path)
    errors = sorted(_validator().iter_errors(doc), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:3]]


@pytest.mark.parametrize(
    ("sets", "where"),
    [
        (["flows.0.tcp={sack=false}"], "a TCP table on a QUIC flow"),
        (["flows.0.on=1s"], "an ON period on a QUIC flow"),
        (["quic.bogus=1"], "an unknown QUIC setting"),
        (["quic.ack_policy=sometimes"], "a value outside the choices"),
        (["dumbbell.bottleneck.rate=10"], "a rate without a unit"),
        (["flows.0.kind=carrier-pigeon"], "an unknown flow kind"),
    ],
)
def test_schema_refuses_what_the_core_refuses(sets: list[str], where: str) -> None:
    doc = api.apply_overrides(api.load_scenario("linksharing"), sets)
    assert list(_validator().iter_errors(doc)), f"the schema accepts {where}"
    with pytest.raises(Exception, match=r"flows\[0\]|quic\.|dumbbell"):
        api.validate(doc)


def test_cli_prints_the_schema_and_writes_the_reference(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "quicksim", "schema"], capture_output=True, text=True, check=True
    )
    jsonschema.Draft202012Validator.check_schema(json.loads(out.stdout))
    target = tmp_path / "ref.md"
    subprocess.run([sys.executable, "-m", "quicksim", "schema", "--reference", "-o", str(target)], check=True)
    assert target.read_text(encoding="utf-8") == REFERENCE.read_text(encoding="utf-8")
