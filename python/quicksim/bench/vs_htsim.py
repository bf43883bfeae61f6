"""`quicksim bench --vs-htsim`: quicksim and htsim on the same dumbbells, alternately.

For each workload of `quicksim.bench.htsim.WORKLOADS` the reps alternate (quicksim TCP, quicksim QUIC,
htsim, and again), so all three see the same machine load; the medians are compared on
bottleneck packets per wall second of the run loop (setup and outputs excluded on both sides),
with events, events per bottleneck packet and peak memory beside them. The best rep of each
side is compared too (`ratio_best`): on a host whose speed comes and goes with other tenants'
load (a VM whose identical runs differ by 2x from one minute to the next), the medians compare
how often each side ran in a slow spell, the best reps what each program does unhindered. The
TCP row is the like-for-like comparison (quicksim's TCP NewReno configured as htsim's: no SACK, an ACK per
segment); the QUIC row is quicksim's QUIC NewReno on the same dumbbell. Each row also shows
Jain's index of the flows' delivered bytes: the same network need not give the same dynamics
(before the TCP rows got `bench.TIE_BREAK_JITTER`, quicksim's flows locked one another out at
the DropTail queue while htsim's shared it), and a reader of the ratio should know when the two
sides did different work per packet.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import htsim


def run(
    args: argparse.Namespace,
    report: dict[str, Any],
    quicksim_rep: Callable[[str], dict[str, Any]],
    median: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> None:
    """Build htsim and its harness, run every workload `args.reps` times alternately with
    quicksim's two rows, print the table and store it under report["htsim"]."""
    sim = htsim.source_dir(args.htsim_src, "quicksim bench --vs-htsim")
    binary = htsim.build(sim, args.htsim_cache)
    print(f"htsim: {sim} (harness {binary})")
    report["htsim"] = {}
    for w in htsim.WORKLOADS:
        reps: dict[str, list[dict[str, Any]]] = {w.tcp_scenario: [], w.quic_scenario: [], "htsim": []}
        for _ in range(args.reps):
            reps[w.tcp_scenario].append(quicksim_rep(w.tcp_scenario))
            reps[w.quic_scenario].append(quicksim_rep(w.quic_scenario))
            reps["htsim"].append(htsim.run(binary, w))
        h = median(reps["htsim"])
        h["jain_delivered"] = _jain(reps["htsim"])
        entry: dict[str, Any] = {"workload": w.args(), "htsim": {"median": h, "reps": reps["htsim"]}}
        print(
            f"\n{w.name}: {w.flows} flows, {w.rate_mbps:g} Mbit/s, {w.delay_ms:g} ms, "
            f"{w.queue_bytes} B DropTail, {w.packet_bytes} B packets, {w.duration_s:g} s "
            f"(medians of {args.reps})"
        )
        _row("htsim TCP", h)
        h_best = _best(reps["htsim"])
        for proto, name in (("TCP", w.tcp_scenario), ("QUIC", w.quic_scenario)):
            q = median(reps[name])
            q["jain_delivered"] = _jain(reps[name])
            ratio = q["bottleneck_packets_per_s"] / h["bottleneck_packets_per_s"]
            ratio_best = _best(reps[name]) / h_best
            entry[proto.lower()] = {
                "scenario": name,
                "median": q,
                "reps": reps[name],
                "ratio": ratio,
                "ratio_best": ratio_best,
            }
            _row(f"quicksim {proto}", q)
            print(
                f"  quicksim {proto} / htsim TCP: {ratio:.2f}x the bottleneck packets per wall second"
                + (" (like for like)" if proto == "TCP" else " (another protocol)")
                + f"; best rep against best rep: {ratio_best:.2f}x"
            )
            if proto == "TCP" and abs(q["jain_delivered"] - h["jain_delivered"]) > JAIN_GAP:
                print(
                    f"  the flows shared the bottleneck differently (Jain's index of their delivered "
                    f"bytes: htsim {h['jain_delivered']:.3f}, quicksim TCP {q['jain_delivered']:.3f}): "
                    "the same network, not the same dynamics"
                )
        report["htsim"][w.name] = entry


JAIN_GAP = 0.1
"""A difference of Jain's index between the two TCP rows worth a line under the table."""


def _jain(reps: list[dict[str, Any]]) -> float:
    """Jain's index of the flows' delivered bytes in the first rep (every rep of one side runs
    the same deterministic simulation; NaN where a rep does not say)."""
    from ..stats import jain

    return jain(reps[0].get("flow_delivered_bytes") or [])


def _best(reps: list[dict[str, Any]]) -> float:
    """The most bottleneck packets per wall second any rep reached."""
    return max(float(r["bottleneck_packets_per_s"]) for r in reps)


def _row(who: str, m: dict[str, Any]) -> None:
    per_pkt = m["events"] / max(m["bottleneck_packets"], 1)
    print(
        f"  {who:<13} wall {m['wall_s']:8.4f} s  events {m['events']:>11,.0f} "
        f"({per_pkt:4.1f} per bottleneck packet)  {m['events_per_s'] / 1e6:6.2f} M ev/s  "
        f"{m['bottleneck_packets_per_s'] / 1e6:6.3f} M bottleneck pkts/s  peak {m['peak_rss_mib']:6.1f} MiB  "
        f"Jain {m['jain_delivered']:.3f}"
    )
