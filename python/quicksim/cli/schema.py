"""Write the scenario format's JSON Schema, or its reference in Markdown.

`quicksim schema` prints the JSON Schema (draft 2020-12) of scenario files; editors validate and
complete TOML with it (Even Better TOML / taplo: put `#:schema ./scenario.schema.json` on a
scenario's first line, or map `*.toml` to it in the editor's settings). `quicksim schema
--reference` prints `docs/scenario-reference.md`. Both come from the scenario format's own types
in the core, so they describe exactly what `quicksim run` accepts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NAME = "schema"
HELP = "print the scenario format's JSON Schema (or, with --reference, its Markdown reference)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim schema`."""
    parser.add_argument("--reference", action="store_true", help="the Markdown reference instead")
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout")


def main(args: argparse.Namespace) -> int:
    """Print or write the schema."""
    from .. import _native
    from .._io import atomic_write_text

    core = _native.load_core()
    text = core.scenario_reference() if args.reference else core.scenario_schema() + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        atomic_write_text(args.output, text)
    return 0
