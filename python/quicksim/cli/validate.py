"""Check a scenario file, or the model itself.

`quicksim validate SCENARIO.toml` prints the scenario as JSON, normalized by the core; exit status
0 if it is valid, 2 with a one-line error naming the field otherwise. It imports none of the
Python controllers the scenario names (`cc = "py:module:Class"`) unless --allow-python is given.

`quicksim validate [--check NAME]... [--quick] [--json]` (no scenario) runs the model's checks
against theory (link bandwidth, Mathis, flow control, buffer sizing, link sharing; TCP link
bandwidth and Mathis: tcp-link-bandwidth, tcp-mathis), prints each
(name, measured, expected, tolerance, pass) and exits 1 if any fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._common import add_allow_python, add_set_option

NAME = "validate"
HELP = "check a scenario (print it normalized) or, without one, the model against theory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim validate`."""
    parser.add_argument(
        "scenario",
        type=Path,
        nargs="?",
        metavar="SCENARIO.toml",
        help="scenario file (omit to check the model)",
    )
    add_set_option(parser)
    add_allow_python(parser)
    parser.add_argument("--check", action="append", metavar="NAME", help="model check group (repeatable)")
    parser.add_argument("--quick", action="store_true", help="fewer points per model check")
    parser.add_argument("--json", action="store_true", help="print the model checks as JSON")


def main(args: argparse.Namespace) -> int:
    """Validate and print; errors are reported by the caller (cli.handle_errors)."""
    from .. import api

    if args.scenario is None:
        from ..errors import ScenarioError
        from ..validation import UnknownCheck, format_checks, run_checks

        try:
            checks = run_checks(args.check, quick=args.quick)
        except UnknownCheck as e:  # bad input: one line and exit 2, like a bad scenario
            raise ScenarioError(str(e)) from None
        if args.json:
            print(json.dumps([c.as_dict() for c in checks], indent=2, allow_nan=False))
        else:
            print(format_checks(checks))
        return 0 if all(c.passed for c in checks) else 1
    scenario = api.apply_overrides(api.load_scenario(args.scenario), args.sets)
    print(json.dumps(api.validate(scenario, allow_python=args.allow_python), indent=2))
    if not args.allow_python:
        from ..cc import unchecked

        for field, name in unchecked(scenario):
            print(
                f"quicksim: note: {field} = {name!r} was not imported (a scenario runs no code unless "
                "you say so): its class and settings are unchecked; --allow-python checks them",
                file=sys.stderr,
            )
    return 0
