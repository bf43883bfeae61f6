"""Parameter studies: expand a plan into runs, execute them in parallel, keep every result.

A plan names scenario fields (by the same paths as `--set`), their values, a number of
repetitions and the metrics to collect. As TOML, in a scenario or in a plan file that points at
one with `scenario = "path.toml"`::

    [sweep]
    repeat = 10
    metrics = ["goodput_mbps", { name = "jain", t0 = "20s", t1 = "30s" }]
    zip = [["dumbbell.bottleneck.delay", "dumbbell.bottleneck.queue.bytes"]]  # vary together

    [sweep.params]
    "dumbbell.bottleneck.rate" = ["5Mbps", "10Mbps"]
    "dumbbell.bottleneck.delay" = { start = 2, stop = 10, step = 2, unit = "ms" }  # inclusive
    "dumbbell.bottleneck.queue.bytes" = { values = ["5kB", "10kB", "15kB", "20kB", "25kB"] }

Each run's seed is derived from the base seed, the run's parameter values and its repetition
number by SHA-256, so the same plan gives the same numbers, and adding points or repetitions
leaves the seeds (and results) of the existing runs unchanged.

With an output directory every finished run is written at once to `runs/<run_id>.json`
(atomically); a rerun of the same plan skips those, so an interrupted sweep resumes where it
stopped. At the end `runs.parquet` (one row per run), `summary.parquet` (per point and metric:
n, mean, std, sem, the 95 % interval and its method, `quicksim.stats.interval`) and, for series
metrics, `series.parquet` are written. A run that fails is recorded with its error and the sweep
goes on. `keep = ["flows", ...]` stores those tables of every run (`kept/`); metrics added to
the plan later are computed from them without running again.

The parts: `plan` (the model and seeds), `expand` (parameter values), `make` (plans from values
or files), `execute` (one run; serial, process-pool and Dask executors), `store` (output
directory, resume, `load_sweep`), `kept` (kept tables, metrics computed from them), `tables`
(`SweepResult` and its tables), `driver` (`run_plan`, `sweep`).
"""

from __future__ import annotations

import sys
import types

from .driver import run_plan, sweep
from .expand import expand_values
from .make import load_plan, make_plan
from .plan import Plan, PlanError, derive_seed
from .store import load_sweep
from .tables import SweepResult

__all__ = [
    "Plan",
    "PlanError",
    "SweepResult",
    "derive_seed",
    "expand_values",
    "load_plan",
    "load_sweep",
    "make_plan",
    "run_plan",
    "sweep",
]


class _CallableModule(types.ModuleType):
    """This package, callable as the function `sweep`.

    `quicksim.sweep(...)` is the public entry point (like `quicksim.run`), and `quicksim.sweep`
    is also this package (`from quicksim.sweep import load_sweep`). A function bound over the
    package attribute would make the name mean two objects, depending on how it is reached
    (`import quicksim.sweep as m` gives the attribute, `importlib.import_module` the module) and
    on import order. Making the module itself callable leaves one object, whatever the route.
    Type checkers see the function (see `quicksim/__init__.py`), which is what calls need.
    """

    __call__ = staticmethod(sweep)


sys.modules[__name__].__class__ = _CallableModule
__wrapped__ = sweep  # so inspect.signature(quicksim.sweep) is the function's
