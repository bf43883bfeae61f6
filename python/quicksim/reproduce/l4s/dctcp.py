"""DCTCP on a step-marking dumbbell against the DCTCP paper's analysis of the queue's sawtooth
(Alizadeh et al., SIGCOMM 2010, section 3.3): amplitude, period, Q_max and Q_min for N flows."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...validation import Check
from .cases import BOTTLENECK, FRAME_B, Flow, scenario
from .theory import DctcpSawtooth

if TYPE_CHECKING:
    import numpy as np

    from ...results import Result
    from ..common import Context

RATE_BPS = 100e6
RTT_S = 0.010
K = 20
NS = (2, 10)
DURATION_S = 20.0
QUICK_DURATION_S = 6.0
WARMUP_S = 2.0
SAMPLE_S = 1e-4
#: The amplitude, period and peak within 30 % of the analysis (a fluid model of synchronized
#: flows with alpha's small-alpha form; see the report).
TOL = 0.30
#: Rounds a cut adds to the period beyond eq. 10's ramp: the paper's fluid model cuts at once,
#: Linux (and ns-3) bring cwnd down by PRR over the next round in the CWR state, during which
#: the window does not grow (`tcp_cong_control` calls no `cong_avoid` then).
CWR_ROUNDS = 1
#: The receiver ACKs every packet: the analysis feeds each packet's mark back at once (the DCTCP
#: paper's section 3.1 receiver in its simplest form, "ACK every packet, setting the ECN-Echo
#: flag if and only if the packet has a marked CE codepoint"; delayed ACKs are its
#: optimisation). With the default two segments per ACK the queue swings wider (amplitude 15
#: and 33 packets at N = 2 and 10, period 94 ms; ns-3.44's TcpDctcp 19 and 29 on this setup):
#: the report gives those beside it.
ACK_EVERY = 1
#: Why the period is checked for N = 2 only.
PERIOD_NOTE = (
    "With N = 10 each window is about (C RTT + K) / N = 10 packets: alpha = sqrt(2 / W*) = 0.44 "
    "is no longer small, and eq. 10's small-alpha form is rough there, so the N = 10 period is "
    "reported, not checked: 50.7 ms in the full run against 39.6 for T_C plus the CWR round, "
    "44.3 with the exact alpha^2 (1 - alpha / 4) = 2 / W* (alpha = 0.47, T_C = 2.65 RTTs)."
)


def bdp_packets() -> float:
    """C x RTT in packets of FRAME_B bytes on the wire."""
    return RATE_BPS * RTT_S / (FRAME_B * 8)


def sampled_queue(r: Result, t0: float, t1: float) -> np.ndarray:
    """The bottleneck queue's length (packets) sampled every SAMPLE_S over [t0, t1)."""
    import numpy as np

    q = r.queues
    q = q[q["queue"].astype(str) == BOTTLENECK].sort_values("t_s", kind="stable")
    t = q["t_s"].to_numpy(dtype=float)
    v = q["packets"].to_numpy(dtype=float)
    grid = np.arange(t0, t1, SAMPLE_S)
    i = np.searchsorted(t, grid, side="right") - 1
    return np.where(i >= 0, v[np.clip(i, 0, None)], 0.0)


def oscillation(x: np.ndarray) -> tuple[float, float, float, float]:
    """(amplitude, period in s, q_low, q_high) of a sampled queue: the 2nd-98th percentile
    spread, and the period of the strongest spectral component between 1 and 100 Hz."""
    import numpy as np

    lo, hi = (float(v) for v in np.percentile(x, [2, 98]))
    spec = np.abs(np.fft.rfft(x - x.mean()))
    f = np.fft.rfftfreq(len(x), SAMPLE_S)
    band = (f >= 1.0) & (f <= 100.0)
    peak = float(f[band][np.argmax(spec[band])])
    return hi - lo, 1.0 / peak, lo, hi


def dctcp_part(ctx: Context, checks: list[Check], rows: list[dict[str, Any]]) -> None:
    """N DCTCP TCP flows (ECT(0)) through `step` with K packets."""
    from ... import api
    from . import plots

    dur = QUICK_DURATION_S if ctx.quick else DURATION_S
    series = {}
    for n in NS:
        flows = [Flow(f"dctcp{i}", "tcp", "dctcp") for i in range(n)]
        sc = scenario(f"l4s-dctcp-{n}", RATE_BPS, RTT_S, flows, {"kind": "step", "k": K}, dur)
        sc["run"]["record"]["packets"] = []
        # ACK_EVERY: each mark fed back by its own ACK, as the analysis assumes.
        sc["tcp"] = {**sc.get("tcp", {}), "ack_every": ACK_EVERY}
        r = api.run(sc)
        x = sampled_queue(r, WARMUP_S, dur)
        amp, period, lo, hi = oscillation(x)
        th = DctcpSawtooth(n, K, bdp_packets())
        # The analysis counts time in RTTs; a packet's RTT includes the mean queue.
        rtt_eff = RTT_S + float(x.mean()) * FRAME_B * 8 / RATE_BPS
        rows.append(
            {
                "n": n,
                "k": K,
                "bdp_packets": th.bdp,
                "amplitude": amp,
                "amplitude_theory": th.amplitude,
                "period_ms": period * 1e3,
                "rtt_eff_ms": rtt_eff * 1e3,
                "period_theory_ms": th.period_rtts * rtt_eff * 1e3,
                "period_with_cwr_ms": (th.period_rtts + CWR_ROUNDS) * rtt_eff * 1e3,
                "q_high": hi,
                "q_max_theory": th.q_max,
                "q_low": lo,
                "q_min_theory": th.q_min,
            }
        )
        series[n] = (x, th)
        note = f"N = {n}, K = {K}, C x RTT = {th.bdp:.1f} packets"
        checks.append(
            Check(f"DCTCP queue amplitude, N = {n}", amp, th.amplitude, TOL, "packets", note=note + "; eq. 9")
        )
        if n == NS[0]:  # eq. 10 is checked where alpha is small: PERIOD_NOTE
            checks.append(
                Check(
                    f"DCTCP queue period, N = {n}",
                    period * 1e3,
                    (th.period_rtts + CWR_ROUNDS) * rtt_eff * 1e3,
                    TOL,
                    "ms",
                    note=note + "; eq. 10's T_C plus the CWR round, RTTs of base RTT + mean queue",
                )
            )
        checks += [
            Check(
                f"DCTCP queue peak, N = {n}",
                hi,
                th.q_max,
                TOL,
                "packets",
                note=note + "; eq. 11, Q_max = K + N",
            ),
        ]
    plots.dctcp_figure(series, WARMUP_S, SAMPLE_S, ctx.out / "dctcp_queue.png")


#: ns-3.44's TcpDctcp on the matched dumbbell (tools/ns3/dctcp.cc; the scenario
#: quicksim/scenarios/dctcp-ns3.toml maps it: RED as a step at K = 20 packets, RTT 12 ms).
NS3_CSV = Path(__file__).parents[1] / "data" / "ns3_dctcp.csv"
NS3_TOL = 0.05
#: Flow counts compared with ns-3.
NS3_FLOWS = (2, 10)
#: Each comparison averages runs at these bottleneck delays (ms) on both sides (the rows of
#: NS3_CSV): a deterministic sawtooth of a few flows locks into a phase that a 10 us change of
#: the RTT moves; ns-3's own 2-flow queue std goes from 3.47 at 5 ms to 5.22 at 4.99 ms.
NS3_DELAYS_MS = (4.99, 5.0, 5.01)


def ns3_percentile(x: np.ndarray, p: float) -> float:
    """dctcp.cc's percentile: the sorted sample at index floor(p n), so both sides count alike."""
    import numpy as np

    v = np.sort(x)
    return float(v[min(len(v) - 1, int(p * len(v)))])


def ns3_doc(n: int, delay_ms: float = 5.0) -> dict[str, Any]:
    """scenarios/dctcp-ns3.toml with `n` flows (dctcp.cc's --flows=n) and the bottleneck's
    one-way delay (--delay)."""
    from ...api import load_scenario
    from ...validation import scenario_path

    doc = load_scenario(scenario_path("dctcp-ns3"))
    doc["dumbbell"]["pairs"] = n
    doc["dumbbell"]["bottleneck"]["delay"] = f"{delay_ms:g}ms"
    doc["flows"] = [
        {"name": f"d{i + 1}", "kind": "tcp", "src": f"sender{i + 1}", "dst": f"receiver{i + 1}"}
        for i in range(n)
    ]
    return doc


def ns3_part(ctx: Context, checks: list[Check], rows: list[dict[str, Any]]) -> None:
    """2 and 10 DCTCP flows on the ns-3 dumbbell, through its RED step marker (and, for 2, through
    `step` with K = 19: an arrival that finds more than 19, i.e. 20 or more, is marked, as RED
    with min_th 19.5 and max_th 20): goodput, the queue's mean and its standard deviation (the
    oscillation's amplitude as a continuous measure), each averaged over the NS3_DELAYS_MS runs,
    against ns-3's averages of the same runs, within 5 %; the spread p95 - p5 as dctcp.cc
    computes it is reported beside them. One row per run and one per average."""
    import numpy as np
    import pandas as pd

    from ... import api

    ref_all = pd.read_csv(NS3_CSV, comment="#")
    # Quick mode: 2 flows through RED only, over ns-3's own window (a shorter one would compare
    # a different stretch of the sawtooth: its mean moves by 2-3 % between 5 s windows).
    for n in NS3_FLOWS[:1] if ctx.quick else NS3_FLOWS:
        for marker in ("red", "step") if n == 2 and not ctx.quick else ("red",):
            runs = []
            per_flow: list[tuple[list[float], list[float]]] = []
            for delay in NS3_DELAYS_MS:
                ref = ref_all[(ref_all["flows"] == n) & (ref_all["delay"] == f"{delay:g}ms")].iloc[0]
                theirs = [float(g) for g in str(ref["goodput_bps"]).split(";")]
                doc = ns3_doc(n, delay)
                if marker == "step":
                    doc["dumbbell"]["bottleneck"]["queue"] = {"kind": "step", "k": 19, "packets": 2666}
                t0, t1 = float(ref["warmup_s"]), float(ref["sim_time_s"])
                r = api.run(doc)
                q = r.queues
                q = q[q["queue"].astype(str) == BOTTLENECK].sort_values("t_s", kind="stable")
                grid = np.arange(t0, t1, SAMPLE_S)
                i = np.searchsorted(q["t_s"].to_numpy(dtype=float), grid, side="right") - 1
                x = np.where(i >= 0, q["packets"].to_numpy(dtype=float)[np.clip(i, 0, None)], 0.0)
                ours = [r.mean_throughput(f, t0, t1) for f in r.flow_names]
                per_flow.append((ours, theirs))
                runs.append(
                    {
                        "flows": n,
                        "marker": marker,
                        "delay_ms": delay,
                        "goodput_mbps": sum(ours) / 1e6,
                        "ns3_goodput_mbps": sum(theirs) / 1e6,
                        "flow_goodputs_mbps": ";".join(f"{g / 1e6:.3f}" for g in ours),
                        "ns3_flow_goodputs_mbps": ";".join(f"{g / 1e6:.3f}" for g in theirs),
                        "queue_mean": float(x.mean()),
                        "ns3_queue_mean": float(ref["queue_mean"]),
                        "queue_std": float(x.std()),
                        "ns3_queue_std": float(ref["queue_std"]),
                        "queue_p95_p5": ns3_percentile(x, 0.95) - ns3_percentile(x, 0.05),
                        "ns3_queue_p95_p5": float(ref["queue_p95"] - ref["queue_p5"]),
                    }
                )
            rows.extend(runs)
            avg = pd.DataFrame(runs).drop(columns=["flow_goodputs_mbps", "ns3_flow_goodputs_mbps"])
            mean = avg.mean(numeric_only=True).to_dict()
            rows.append({**mean, "flows": n, "marker": marker, "delay_ms": "mean"})
            tag = f"DCTCP vs ns-3 ({n} flows, {marker}, mean of {len(runs)} delays)"
            note = (
                f"sampled every 0.1 ms after the warm-up, averaged over bottleneck delays "
                f"{', '.join(f'{d:g}' for d in NS3_DELAYS_MS)} ms; "
                f"ns-3: tools/ns3/dctcp.cc, {n} flows, K = 20"
            )
            # How the flows split the link moves with the phase on both sides (ns-3's own 2 flows
            # split 46.98 : 49.43 at 5 ms, 51.57 : 44.83 at 4.99 ms): per flow for 2 flows, as
            # means over the runs; with 10 only the total (ns-3's own 10 range 8.8-10.7 Mbit/s).
            if n == 2:
                for k in range(n):
                    a = float(np.mean([o[k] for o, _ in per_flow])) / 1e6
                    b = float(np.mean([t[k] for _, t in per_flow])) / 1e6
                    checks.append(Check(f"{tag}: flow {k + 1} goodput", a, b, NS3_TOL, "Mbit/s"))
            checks += [
                Check(
                    f"{tag}: total goodput",
                    mean["goodput_mbps"],
                    mean["ns3_goodput_mbps"],
                    NS3_TOL,
                    "Mbit/s",
                ),
                Check(
                    f"{tag}: queue mean",
                    mean["queue_mean"],
                    mean["ns3_queue_mean"],
                    NS3_TOL,
                    "packets",
                    note=note,
                ),
                Check(
                    f"{tag}: queue amplitude (standard deviation)",
                    mean["queue_std"],
                    mean["ns3_queue_std"],
                    NS3_TOL,
                    "packets",
                    note=note,
                ),
            ]
