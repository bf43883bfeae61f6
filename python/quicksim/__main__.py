"""`python -m quicksim` is the `quicksim` command."""

import sys

from .cli import main

sys.exit(main())
