"""The benchmark harness: speed and memory of the core on fixed scenarios, alone or beside ns-3
and htsim. A tool for measuring quicksim, not part of the simulation library.

    scenarios   the scenarios, built in code (`SUITE`, `BASELINES`, the UDP dumbbell)
    harness     measuring them: `measure`, `outputs`, `overhead`, `sweep_speedup`, `suite_worker`
    __main__    `python -m quicksim.bench`
    cli         `quicksim bench` (the suite, `--vs-ns3`, `--vs-htsim`, `--sweep`)
    ns3         building and running the ns-3 programs of tools/ns3 (also for `quicksim reproduce`)
    htsim       building and running htsim with the harness of anchors/htsim_dumbbell_tcp.cpp
    vs_htsim    `quicksim bench --vs-htsim`

The names below are re-exported, so `quicksim.bench.SUITE` and `quicksim.bench.suite_worker`
read as before the harness became a package.
"""

from __future__ import annotations

from .harness import measure, outputs, overhead, suite_worker, sweep_speedup
from .scenarios import (
    BASELINES,
    HTSIM_TCP,
    LIGHT_RECORD,
    NS3_LINKSHARING_RECORD,
    NS3_TCP,
    SQRTN_HTSIM_BUFFER,
    SQRTN_NS3_BUFFER,
    SUITE,
    TIE_BREAK_JITTER,
    htsim_3x10m_scenario,
    htsim_3x10m_tcp_scenario,
    htsim_100x1g_tcp_scenario,
    linksharing_full_scenario,
    linksharing_quinn_scenario,
    linksharing_scenario,
    linksharing_tcp_scenario,
    many_flows_scenario,
    many_flows_tcp_scenario,
    quinn_1g_scenario,
    scale_10g_scenario,
    scale_100x1g_scenario,
    scale_100x1g_tcp_scenario,
    scenario,
    short_flows_scenario,
    sqrtn_2g5_1600_tcp_scenario,
    sqrtn_155m_200_tcp_scenario,
)

__all__ = [
    "BASELINES",
    "HTSIM_TCP",
    "LIGHT_RECORD",
    "NS3_LINKSHARING_RECORD",
    "NS3_TCP",
    "SQRTN_HTSIM_BUFFER",
    "SQRTN_NS3_BUFFER",
    "SUITE",
    "TIE_BREAK_JITTER",
    "htsim_3x10m_scenario",
    "htsim_3x10m_tcp_scenario",
    "htsim_100x1g_tcp_scenario",
    "linksharing_full_scenario",
    "linksharing_quinn_scenario",
    "linksharing_scenario",
    "linksharing_tcp_scenario",
    "many_flows_scenario",
    "many_flows_tcp_scenario",
    "measure",
    "outputs",
    "overhead",
    "quinn_1g_scenario",
    "scale_10g_scenario",
    "scale_100x1g_scenario",
    "scale_100x1g_tcp_scenario",
    "scenario",
    "short_flows_scenario",
    "sqrtn_2g5_1600_tcp_scenario",
    "sqrtn_155m_200_tcp_scenario",
    "suite_worker",
    "sweep_speedup",
]
