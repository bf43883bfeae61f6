"""Output steps stay linear in the number of flows (issue 19): a run of 2 000 short flows gets
its tables, summary, Parquet files and plots in bounded time, as `quicksim run` makes them.

Before, `Result.summary` filtered the whole `flows` table once per flow and `flow_names` was
rebuilt on every call: 1 000 flows took more than 120 s, 10 000 did not finish in 300 s.
"""

from __future__ import annotations

import time

import pytest

from quicksim import bench

# CPU seconds of this process for the 2 000-flow run's simulation and every output step:
# 2.2 s measured on the 2-core development machine (load ~9); the bound leaves room for a slower
# CI machine while the former quadratic path (minutes) cannot pass. CPU time, not wall time, so
# other processes on the machine do not count.
BOUND_CPU_S = 20.0


@pytest.mark.slow
def test_a_2000_flow_run_has_all_its_outputs_in_bounded_time() -> None:
    bench.outputs(20)  # imports (pandas, matplotlib, fonts) outside the measurement
    started = time.process_time()
    figures = bench.outputs(2000)
    cpu_s = time.process_time() - started
    assert figures["flows"] == 2000 and figures["rows"] > 100_000
    assert cpu_s < BOUND_CPU_S, figures


def test_per_flow_summary_touches_the_flows_table_once() -> None:
    """The summary of many flows does not filter the table per flow: its cost per flow stays
    flat from 200 to 2 000 flows (a per-flow filter makes it grow tenfold)."""
    from quicksim import api

    per_flow = []
    for n in (200, 2000):
        result = api.run(bench.short_flows_scenario(n, duration_s=2.5))
        result.tables  # noqa: B018 - the DataFrames are built outside the measurement
        started = time.process_time()
        summary = result.summary()
        per_flow.append((time.process_time() - started) / n)
        assert len(summary["flows"]) == n
    assert per_flow[1] < 4 * per_flow[0] + 2e-4, per_flow
