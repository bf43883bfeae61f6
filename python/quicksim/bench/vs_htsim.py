"""`quicksim bench --vs-htsim`: quicksim and htsim on the same dumbbells, alternately.

For each workload of `quicksim.bench.htsim.WORKLOADS` (the default ones, or those whose scenarios
are named) the reps alternate (quicksim TCP, quicksim QUIC where the workload has it, htsim, and
again), so all three see the same machine load; the medians are compared on
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

Every ratio is per bottleneck packet: bottleneck packets per wall (or processor) second on
each side, each side's run loop charged for the packets its own bottleneck served, so a side
whose link ran less full is not credited for doing less; each row also gives the wall time per
bottleneck packet. Where the two TCP rows' bottlenecks served more than `PACKETS_GAP` apart, a
line under the table says so: the per-packet ratio still holds, but the two ran in different
regimes (losses, timeouts, recoveries), whose cost per packet differs.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from . import htsim
from .scenarios import BASELINES


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
    named = set(getattr(args, "scenarios", None) or ())
    chosen = [w for w in htsim.WORKLOADS if named & {w.tcp_scenario, w.quic_scenario}]
    for w in chosen or [w for w in htsim.WORKLOADS if w.default]:
        rows: list[tuple[str, str]] = [("TCP", w.tcp_scenario)]
        if w.quic_scenario is not None:
            rows.append(("QUIC", w.quic_scenario))
        reps: dict[str, list[dict[str, Any]]] = {name: [] for _, name in [*rows, ("", "htsim")]}
        for _ in range(args.reps):
            for _, name in rows:
                reps[name].append(quicksim_rep(name))
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
        for proto, name in rows:
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
            if all("cpu_s" in r for r in reps[name] + reps["htsim"]):
                # Per processor second of the run loop: what the programs cost, whatever the
                # machine's other tenants did meanwhile.
                cpu = _per_cpu_s(reps[name], median) / _per_cpu_s(reps["htsim"], median)
                cpu_best = _per_cpu_s(reps[name], None) / _per_cpu_s(reps["htsim"], None)
                entry[proto.lower()].update(ratio_cpu=cpu, ratio_cpu_best=cpu_best)
                print(
                    f"  the same per processor second of the run loop: {cpu:.2f}x (medians), "
                    f"{cpu_best:.2f}x (best against best)"
                )
            packets = q["bottleneck_packets"] / max(h["bottleneck_packets"], 1)
            entry[proto.lower()]["packets_ratio"] = packets
            if proto == "TCP" and abs(packets - 1) > PACKETS_GAP:
                print(
                    "  the bottlenecks served different numbers of packets "
                    f"(htsim {h['bottleneck_packets']:,.0f}, "
                    f"quicksim TCP {q['bottleneck_packets']:,.0f}: {packets:.3f}x): the ratios are per "
                    "bottleneck packet, but the runs were not the same workload"
                )
            if proto == "TCP" and abs(q["jain_delivered"] - h["jain_delivered"]) > JAIN_GAP:
                print(
                    f"  the flows shared the bottleneck differently (Jain's index of their delivered "
                    f"bytes: htsim {h['jain_delivered']:.3f}, quicksim TCP {q['jain_delivered']:.3f}): "
                    "the same network, not the same dynamics"
                )
        if w.tcp_scenario in BASELINES:
            entry["memory"] = _memory_per_flow(w.tcp_scenario, reps[w.tcp_scenario], quicksim_rep, median)
        report["htsim"][w.name] = entry


def _memory_per_flow(
    name: str,
    reps: list[dict[str, Any]],
    quicksim_rep: Callable[[str], dict[str, Any]],
    median: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> dict[str, Any]:
    """Memory per active flow of quicksim scenario `name`: its peak RSS at the end of the run
    loop less that of its baseline (`bench.BASELINES`: the same link and duration with a few
    flows), over the flows between them; and its peak less the process's RSS before the run
    (Python, the core, the scenario's text), over all its flows."""
    base = [quicksim_rep(name + "+baseline")]
    m, bm = median(reps), median(base)
    added = m["flows"] - bm["flows"]
    out = {
        "baseline": {"median": bm, "reps": base},
        "flows": m["flows"],
        "bytes_per_flow_vs_baseline": (m["peak_rss_run_mib"] - bm["peak_rss_run_mib"]) * 2**20 / added,
        "bytes_per_flow_vs_idle_process": (m["peak_rss_run_mib"] - m["rss_before_run_mib"])
        * 2**20
        / m["flows"],
    }
    print(
        f"  quicksim memory: peak RSS of the run loop {m['peak_rss_run_mib']:.1f} MiB, "
        f"{bm['peak_rss_run_mib']:.1f} MiB with {bm['flows']} flows: "
        f"{out['bytes_per_flow_vs_baseline'] / 1024:.2f} KiB per flow; "
        f"{out['bytes_per_flow_vs_idle_process'] / 1024:.2f} KiB per flow over the idle process "
        f"({m['rss_before_run_mib']:.1f} MiB before the run)"
    )
    return out


def _per_cpu_s(
    reps: list[dict[str, Any]], median: Callable[[list[dict[str, Any]]], dict[str, Any]] | None
) -> float:
    """Bottleneck packets per processor second: the median's, or the best rep's (`median` None)."""
    if median is None:
        return max(float(r["bottleneck_packets"]) / float(r["cpu_s"]) for r in reps)
    m = median(reps)
    return float(m["bottleneck_packets"]) / float(m["cpu_s"])


PACKETS_GAP = 0.05
"""A relative difference of the two TCP rows' bottleneck packets worth a line under the table."""

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
    packets = max(m["bottleneck_packets"], 1)
    per_pkt = m["events"] / packets
    print(
        f"  {who:<13} wall {m['wall_s']:8.4f} s  bottleneck packets {m['bottleneck_packets']:>11,.0f} "
        f"({m['wall_s'] / packets * 1e6:6.3f} us each)  events {m['events']:>11,.0f} "
        f"({per_pkt:4.1f} per bottleneck packet)  {m['events_per_s'] / 1e6:6.2f} M ev/s  "
        f"{m['bottleneck_packets_per_s'] / 1e6:6.3f} M bottleneck pkts/s  peak {m['peak_rss_mib']:6.1f} MiB  "
        f"Jain {m['jain_delivered']:.3f}"
    )
