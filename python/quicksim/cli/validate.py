"""Check a scenario file and print it as JSON, normalized by the core with every default filled in.

Exit status 0 if the scenario is valid, 2 with a one-line error naming the field otherwise.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ._common import add_set_option

NAME = "validate"
HELP = "check a scenario and print it with defaults filled in"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of `quicksim validate`."""
    parser.add_argument("scenario", type=Path, metavar="SCENARIO.toml", help="scenario file")
    add_set_option(parser)


def main(args: argparse.Namespace) -> int:
    """Validate and print; errors are reported by the caller (cli.handle_errors)."""
    from .. import api

    scenario = api.apply_overrides(api.load_scenario(args.scenario), args.sets)
    print(json.dumps(api.validate(scenario), indent=2))
    return 0
