"""The INET showcase "QUIC Bandwidth Sharing on a Bottleneck Link": its six plots, the per-phase
table and the fairness checks."""

from __future__ import annotations

import time

from .. import validation
from .common import Context, Report, save_csv
from .common.inet_linksharing import inet_checks

NAME = "showcase-linksharing"
TITLE = "INET linksharing showcase: plots, phases, fairness"
SEEDS = (1, 2, 3)
QUICK_SEEDS = (1,)
#: Seeds of the first phase's comparison with INET's means (quick mode: the first three).
INET_SEEDS = tuple(range(1, 11))

_CAPTIONS = {
    "receiver_throughput.png": "Incoming data rate at the receivers (application layer), 0.5 s bins",
    "sender_throughput.png": "Outgoing data rate at the senders (IP layer), 0.5 s bins",
    "sender_throughput_smoothed.png": "Sender throughput, mean of 10 bins (the showcase's winavg(10))",
    "queue_length.png": "Bottleneck queue length (not one of the showcase's charts; added for context)",
    "packet_drop_rate.png": "Drop rate at the bottleneck queue",
    "congestion_window.png": "Congestion window of the three senders",
    "cwnd_queue_drops.png": "Zoom on sender1's start: cwnd, queue length and drops",
}


def run(ctx: Context) -> Report:
    """Run linksharing.toml (seed 1) for the plots and the table; check fairness on every seed."""
    from .. import api
    from ..analysis import format_phases, phases
    from ..plotting import save_standard_plots

    t = time.perf_counter()
    result = api.run(validation.scenario_path("linksharing"), seed=1)
    written = save_standard_plots(result, ctx.out)
    table = phases(result)
    save_csv(table, ctx.out / "phases.csv")
    save_csv(result.throughput(layer="delivered"), ctx.out / "receiver_throughput.csv")
    checks = [c for seed in (QUICK_SEEDS if ctx.quick else SEEDS) for c in validation.linksharing(seed)]
    checks += inet_checks(INET_SEEDS[:3] if ctx.quick else INET_SEEDS)
    figures = [(p.name, _CAPTIONS.get(p.name, p.stem)) for p in written]
    section = "## Per phase (seed 1)\n\n```\n" + format_phases(table) + "\n```"
    return Report(
        NAME,
        TITLE,
        "the INET showcase `showcases/quic/linksharing` (INET 4.6; its six charts)",
        checks,
        figures=figures,
        csvs=[
            ("phases.csv", "per phase and sender (seed 1): goodput, link rate, fair share, share, Jain"),
            ("receiver_throughput.csv", "per flow and 0.5 s bin (seed 1): application throughput (Mbit/s)"),
        ],
        explanation=EXPLANATION,
        sections=[section],
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
Scenario `linksharing.toml`, the showcase's `omnetpp.ini`: three QUIC NewReno senders (5-30 s,
10-40 s, 20-45 s) and UDP background traffic (uniform(500, 1000) B every uniform(10, 20) ms)
share a 10 Mbit/s, 10 ms bottleneck with a 25 kB (one BDP) DropTail queue; MTU 1280; 1 Gbit/s
zero-delay access links; 50 s. The plots are `quicksim.plotting.save_standard_plots` of the run
with seed 1 (the showcase's charts: receiver throughput, sender throughput, the smoothed sender
throughput, drop rate, cwnd, and the zoom on sender1's start with cwnd, queue and drops; plus
the queue length).

As in the showcase's `omnetpp.ini`, each connection opens at 0 s (`connect`, INET's
`connectTime`), so its handshake runs on the idle network, and the generator hands QUIC whole
100 kB messages whenever the send queue is below its 100 kB limit (`write_size`), so the queue
holds up to ~180 kB and does not cap slow start.

The showcase claims ~10 / 5 / 3.3 Mbit/s fair shares. The checks are
`quicksim.validation.linksharing` (seed 1; seeds 1-3 in full mode): per phase (cut at every start
and stop, the first second left out), each sender's link-layer rate is within 15 % of
(10 Mbit/s - background) / active senders, Jain's index of the goodputs is at least 0.95, and
the senders together get at least 90 % of what the background leaves (their goodput excludes
the headers, 1252/1287 = 97.3 % of the frames, and the slow-start overshoot after each start).
The first phase (sender1 alone, 5-10 s, slow start included) is compared with INET 4.6's:
sender1's mean goodput within 0.2 % and the mean bottleneck drops within 5 % over seeds 1-10
(1-3 in quick mode), and seed 1's slow-start peak of the cwnd exactly INET's 95 152 B
(`quicksim.reproduce.common.inet_linksharing` says where INET's numbers come from).
"""
