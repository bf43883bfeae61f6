"""The words of the `cubic-dumbbell` report: what was chosen where seed 001 is silent, how the
model maps its sender, and each of the seed's findings beside the model's, with the mechanism;
the numbers are read from the run's own tables."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..common import md_table
from . import study as cd

if TYPE_CHECKING:
    import pandas as pd

CSV_DOC = {
    "capacity": "experiment 1 per case and capacity: mean and 95 % CI (`_lo`, `_hi`) of JFI, "
    "utilization, each flow's throughput and completion time, drops; `util_bound` (slow start)",
    "loss": "experiment 2 per transport and loss rate; `util_theory` (RFC 9438 mean window)",
    "rtt": "experiment 3 per transport and client 2's extra one-way delay",
    "background": "experiment 4 per transport and mean OFF time; `udp_util` = the UDP's share",
    "runs": "every run: experiment, case, parameters, repetition (flow 2's start offset) and metrics",
    "timeseries_1g": "one run each of IW 1 and IW 10 at 1 Gbit/s: received rate per 40 ms and "
    "congestion window (packets) every 5 ms, per flow",
}


def _get(frame: pd.DataFrame, case: str, col: str, **where: float) -> float:
    mask = frame["case"] == case
    for k, v in where.items():
        mask &= frame[k] == v
    rows = frame[mask]
    return float(rows[col].iloc[0]) if len(rows) else math.nan


def _ci(frame: pd.DataFrame, case: str, col: str, scale: float = 1.0, digits: int = 3, **where: float) -> str:
    m = _get(frame, case, col, **where) * scale
    lo = _get(frame, case, f"{col}_lo", **where) * scale
    hi = _get(frame, case, f"{col}_hi", **where) * scale
    if math.isnan(lo) or math.isnan(hi):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def _rtt_ratio(extra_delay_ms: float) -> float:
    return (cd.BASE_RTT_MS + 2 * extra_delay_ms) / cd.BASE_RTT_MS


def sections(data: dict[str, pd.DataFrame]) -> list[str]:
    """One table per experiment: mean [95 % CI] per point."""
    cap, loss, rtt, bg = data["capacity"], data["loss"], data["rtt"], data["background"]
    out = []
    rows = [
        [
            r.case,
            f"{r.rate_mbps:g}",
            f"{r.rtt_ms:g}",
            f"{r.buffer_bdp:g}",
            _ci(cap, r.case, "jfi", 1, 4, rate_mbps=r.rate_mbps, rtt_ms=r.rtt_ms),
            _ci(cap, r.case, "util", 100, 1, rate_mbps=r.rate_mbps, rtt_ms=r.rtt_ms),
            f"{r.util_bound * 100:.1f}",
            f"{r.ct1_s:.3f} / {r.ct2_s:.3f}",
            f"{r.drops:.0f}",
        ]
        for r in cap.itertuples()
    ]
    out.append(
        "## Experiment 1: capacity (with the mechanisms and the sensitivity to RTT and buffer)\n\n"
        + md_table(
            [
                "case",
                "capacity (Mbit/s)",
                "base RTT (ms)",
                "buffer (BDP)",
                "JFI",
                "utilization (%)",
                "bound (%)",
                "transfer times 1 / 2 (s)",
                "drops",
            ],
            rows,
        )
    )
    rows = [
        [
            r.case,
            f"{r.loss:.2%}",
            _ci(loss, r.case, "util", 100, 1, loss=r.loss),
            f"{r.util_theory * 100:.1f}",
            _ci(loss, r.case, "jfi", 1, 4, loss=r.loss),
            f"{r.ct1_s:.1f} / {r.ct2_s:.1f}",
        ]
        for r in loss.itertuples()
    ]
    out.append(
        "## Experiment 2: random loss\n\n"
        + md_table(["case", "loss", "utilization (%)", "RFC 9438 (%)", "JFI", "transfer times (s)"], rows)
    )
    rows = [
        [
            r.case,
            f"{r.extra_delay_ms:g}",
            f"{2 * r.extra_delay_ms:g}",
            _ci(rtt, r.case, "jfi", 1, 4, extra_delay_ms=r.extra_delay_ms),
            _ci(rtt, r.case, "util", 100, 1, extra_delay_ms=r.extra_delay_ms),
            f"{r.thr1_mbps:.1f} / {r.thr2_mbps:.1f}",
            f"{r.shared_ratio:.2f}",
            f"{_rtt_ratio(r.extra_delay_ms):.2f} / {_rtt_ratio(r.extra_delay_ms) ** 2:.2f}",
            f"{r.util_seed * 100:.1f}",
        ]
        for r in rtt.itertuples()
    ]
    out.append(
        "## Experiment 3: client 2's extra delay\n\n"
        + md_table(
            [
                "case",
                "extra one-way delay (ms)",
                "RTT difference (ms)",
                "JFI",
                "utilization (%)",
                "throughput 1 / 2 (Mbit/s)",
                "rate ratio while both send",
                "RTT2/RTT1 / its square",
                "seed's formula (%)",
            ],
            rows,
        )
    )
    rows = [
        [
            r.case,
            f"{r.off_mean_s:g}",
            _ci(bg, r.case, "util", 100, 1, off_mean_s=r.off_mean_s),
            f"{r.udp_util * 100:.1f}",
            f"{(r.util + r.udp_util) * 100:.1f}",
            _ci(bg, r.case, "jfi", 1, 4, off_mean_s=r.off_mean_s),
        ]
        for r in bg.itertuples()
    ]
    out.append(
        "## Experiment 4: ON/OFF UDP background\n\n"
        + md_table(
            ["case", "mean OFF (s)", "files' utilization (%)", "UDP (%)", "files + UDP (%)", "JFI"], rows
        )
    )
    return out


def explanation(data: dict[str, pd.DataFrame], quick: bool) -> str:
    """Setup, mapping, and the seed's findings one by one against the model's."""
    cap, loss, rtt, bg = data["capacity"], data["loss"], data["rtt"], data["background"]
    g = _get
    hi, lo = max(cap.rate_mbps), min(cap.rate_mbps)
    u_lo, u_hi = (
        g(cap, "quic", "util", rate_mbps=lo, rtt_ms=cd.BASE_RTT_MS),
        g(cap, "quic", "util", rate_mbps=hi, rtt_ms=cd.BASE_RTT_MS),
    )
    b_hi = g(cap, "quic", "util_bound", rate_mbps=hi, rtt_ms=cd.BASE_RTT_MS)
    iw10, b_iw10 = g(cap, "quic-iw10", "util", rate_mbps=hi), g(cap, "quic-iw10", "util_bound", rate_mbps=hi)
    lng, b_lng = (
        g(cap, "quic-longfile", "util", rate_mbps=hi),
        g(cap, "quic-longfile", "util_bound", rate_mbps=hi),
    )
    r2, r50 = g(cap, "quic-rtt2", "util", rate_mbps=hi), g(cap, "quic-rtt50", "util", rate_mbps=hi)
    iw_diff = [
        g(cap, "quic-iw10", "util", rate_mbps=c) - g(cap, "quic", "util", rate_mbps=c, rtt_ms=cd.BASE_RTT_MS)
        for c in sorted(set(cap[cap.case == "quic-iw10"].rate_mbps))
    ]
    iw_better = sum(d > 0 for d in iw_diff)
    small, big = cd.SENSITIVITY_BUFFERS
    u_small = g(cap, f"quic-buf{small:g}", "util", rate_mbps=hi)
    u_big = g(cap, f"quic-buf{big:g}", "util", rate_mbps=hi)
    d_big = g(cap, f"quic-buf{big:g}", "drops", rate_mbps=hi)
    tcp_hi = g(cap, "tcp", "util", rate_mbps=hi, rtt_ms=cd.BASE_RTT_MS)
    jmin = float(cap[cap.rtt_ms == cd.BASE_RTT_MS].query("case in ['quic', 'tcp']").jfi.min())
    l1 = (
        g(loss, "quic", "util", loss=0.01)
        if (loss.loss == 0.01).any()
        else g(loss, "quic", "util", loss=0.005)
    )
    l1_at = "1 %" if (loss.loss == 0.01).any() else "0.5 %"
    checked = loss[(loss.loss >= cd.MATHIS_MIN_LOSS) & (loss.case == "quic")]
    worst = float((checked.util / checked.util_theory - 1).abs().max())
    low_p = float(loss[loss.loss > 0].loss.min())
    low_err = g(loss, "quic", "util", loss=low_p) / g(loss, "quic", "util_theory", loss=low_p) - 1
    dmax = float(rtt.extra_delay_ms.max())
    j_rtt = g(rtt, "quic", "jfi", extra_delay_ms=dmax)
    ratio = g(rtt, "quic", "thr1_mbps", extra_delay_ms=dmax) / g(
        rtt, "quic", "thr2_mbps", extra_delay_ms=dmax
    )
    useed = g(rtt, "quic", "util_seed", extra_delay_ms=dmax)
    shared = g(rtt, "quic", "shared_ratio", extra_delay_ms=dmax)
    rr = _rtt_ratio(dmax)
    u_rtt = g(rtt, "quic", "util", extra_delay_ms=dmax)
    off_lo, off_hi = float(bg.off_mean_s.min()), float(bg.off_mean_s.max())
    bgu = {o: g(bg, "quic", "util", off_mean_s=o) for o in (off_lo, off_hi)}
    bgt = {
        o: g(bg, "quic", "util", off_mean_s=o) + g(bg, "quic", "udp_util", off_mean_s=o)
        for o in (off_lo, off_hi)
    }
    bgj = float(bg[bg.case == "quic"].jfi.min())
    ref = g(cap, "quic", "util", rate_mbps=cd.BASE_RATE_MBPS, rtt_ms=cd.BASE_RTT_MS)
    ref_j = g(cap, "quic", "jfi", rate_mbps=cd.BASE_RATE_MBPS, rtt_ms=cd.BASE_RTT_MS)
    reps = cd.QUICK_REPS if quick else cd.REPS
    return f"""
### Setup: the seed's sender in the model, and the values the seed leaves open

Seed 001 is a student testbed study: a CUBIC-style sender written over UDP, two client-server
pairs on a Mininet dumbbell, one file of about 32.3 MB per flow. Its numbers came from real
(emulated) machines, so the aim is its experiments and its findings, not its curves point by point.

- **Sender** (default): quicksim's QUIC with CUBIC (RFC 9438: cubic growth with the TCP-friendly
  estimate, beta 0.7, fast convergence), **initial window 1 packet** (`quic.initial_window = 1`, new
  in this reproduction) carrying **1180 B** of stream data (`max_packet_size = 1201B`: INET header
  profile, 21 B of QUIC overhead), slow start by acked bytes, loss after 3 packets (RFC 9002's
  packet threshold: the seed's 3 duplicate ACKs), a probe timeout of SRTT + 4 RTTVAR (+ max_ack_delay)
  with exponential backoff, an ACK for every packet (`ack_ratio = 1`: the seed's receiver acks each
  datagram), and at most 3 ACK ranges (the cumulative one plus the seed's two SACK blocks).
  Differences: QUIC's handshake takes one RTT before data and its packet counts against the
  window of 1; after a PTO QUIC keeps its window (RFC 9002) where the seed resets it to 1 MSS, and
  persistent congestion collapses it to 2 packets.
- **Variant**: TCP with CUBIC (`kind = "tcp"`), `initial_window = 1`, MSS 1180 B without
  timestamps, SACK with RFC 6675 recovery and PRR, RTO = SRTT + 4 RTTVAR (min 200 ms) with backoff
  and a window of 1 SMSS after it (the seed's rule), an ACK per segment; up to 4 SACK blocks
  (option space) instead of the seed's 2.
- **Left open by the seed, chosen here**: base RTT {cd.BASE_RTT_MS:g} ms (bottleneck one-way
  delay {cd.BASE_RTT_MS / 2:g} ms, access links {cd.ACCESS_RATE} without delay), a DropTail buffer
  of one bandwidth-delay product at the base RTT (the rule of thumb; 250 kB at 100 Mbit/s), MTU
  1500 B. Experiments 2-4 run at {cd.BASE_RATE_MBPS:g} Mbit/s. Random loss (Bernoulli) hits the
  bottleneck's data direction. "Client 2's delay" is the one-way delay of its access link, so the
  RTT difference is twice it (a Mininet link delay applies per direction). The ON/OFF background
  sends 1180 B datagrams at {cd.ON_RATE_MBPS:g} Mbit/s (half the link) during exponential ON periods
  of mean {cd.ON_MEAN_S:g} s on a third pair, OFF periods exponential with the seed's means.
- **Repetitions**: {reps} per point. Flow 2 starts 0-{cd.OFFSET_MAX_MS:g} ms after flow 1 (an offset
  per repetition, as two clients launched by a script), and the loss and the background draw from
  each run's seed. Intervals are 95 % Student t intervals of the mean, clipped to [0, 1] for
  JFI and utilization. Without loss or background the model is deterministic up to that offset,
  so many intervals are narrow: the model has none of a testbed's CPU and timer noise.
- **Metrics** as the seed's: throughput of a flow = file / its transfer time; JFI of the two.
  Utilization = both files / (capacity x the time from the first start to the last byte). The
  seed's (thr1 + thr2) / C is the same number when both finish together, but exceeds 1 when one
  finishes first and leaves the link to the other (it reaches {useed:.0%} at +{dmax:g} ms in experiment 3:
  the "seed's formula" column), so the report uses the physical one.

### The seed's findings against the model's

1. **"JFI is about 1 at every capacity."** The model agrees: the lowest JFI of QUIC and TCP over
   {lo:g}-{hi:g} Mbit/s is {jmin:.3f}. Same RTT, same controller, same drops at one DropTail queue:
   nothing favours a flow for long, and at high capacity both flows spend most of the transfer in
   the same slow start and the same loss burst at its end. The dips below 1 are the overshoot at
   the end of slow start splitting the link unevenly, with too few loss epochs left in a file of
   a few seconds for CUBIC's multiplicative decrease to even the windows out (see 4 and 5).
2. **"Utilization falls as capacity grows; the testbed's CPU and run time are to blame."** The
   model has no CPU, and utilization still falls, from {u_lo:.1%} at {lo:g} Mbit/s to {u_hi:.1%} at
   {hi:g} Mbit/s (TCP {tcp_hi:.1%}). The cause is the finite file: from a window of one packet,
   slow start needs log2(BDP / MSS) round trips to fill the link whatever the file, so its fixed
   cost grows relative to the transfer (2 x 32.3 MB take 0.54 s at 1 Gbit/s but 5.4 s at
   100 Mbit/s). The slow-start bound (dashed in Fig. 1: the first byte after one RTT, the window
   at most doubling per RTT, then line rate) allows at most {b_hi:.1%} at {hi:g} Mbit/s, and the
   model reaches {u_hi / b_hi:.0%} of it. **Two mechanisms, one run each, at {hi:g} Mbit/s:**
   a {cd.LONG_FILE_FACTOR}x longer file (bound {b_lng:.1%}) reaches {lng:.1%}: the file size is what
   limits. An initial window of {cd.IW_RFC} (RFC 9002) raises the bound only to {b_iw10:.1%} (log2 10 =
   3.3 round trips saved) and measures {iw10:.1%} (IW 10 is above IW 1 at {iw_better} of
   {len(iw_diff)} capacities, by up to {max(iw_diff) * 100:.1f} points): slow start without HyStart
   overshoots to about
   twice what the path holds (fig5_timeseries_1g.png), and the loss burst that follows, not the
   first round trips, decides the makespan: with IW 10 one flow's window was cut three times in
   the burst and CUBIC regrows a window of ~1000 packets only over K = cbrt(W_max (1 - beta) / C)
   of several seconds, longer than the rest of the transfer. So a testbed without any CPU limit
   would have seen the same fall; the seed's CPU explanation is not needed.
   **Sensitivity** (fig1_sensitivity_rtt.png). The base RTT sets the slow-start bound itself: at
   {hi:g} Mbit/s the utilization is {r2:.1%} with a 2 ms RTT and {r50:.1%} with 50 ms (bounds
   dashed), because every slow-start round costs one RTT. The buffer acts only below one BDP: with
   {big:g} BDP nothing is dropped ({d_big:.0f} drops) and the utilization stays {u_big:.1%}, at the
   same slow-start ceiling; with {small:g} BDP the overshoot is cut several times, to windows well
   below the pipe that regrow by about one packet per RTT, and it falls to {u_small:.1%}. So the
   base RTT is the open value that moves the seed's finding at every buffer size; a buffer under a
   BDP (netem's and Linux's default queue of 1000 packets is about half a BDP at 1 Gbit/s and 20
   ms) adds a second
   loss of its own at high capacity.
3. **"Utilization drops rapidly with small random loss; under 30 % at 1 %."** The model agrees:
   {l1:.1%} at {l1_at} (QUIC). Both flows sit in CUBIC's TCP-friendly region (at RTT
   {cd.BASE_RTT_MS:g} ms the cubic curve grows slower than the Reno-friendly estimate), where the
   mean window is Mathis' 1.2/sqrt(p) segments: 12 segments at 1 % are 5.7 Mbit/s per flow at
   20 ms, whatever the capacity; the loss-limited rate scales as 1/RTT, so the seed's exact value
   depends on its RTT. From p = 0.5 % on, the model is within {worst:.0%} of RFC 9438's average
   window (the checks); at {low_p:.1%} it is {low_err:+.0%} above it: random rather than periodic loss
   gives AIMD a larger mean window, and the first slow start (about 1/p packets before the first
   loss) carries a larger share of the file.
4. **"Fairness stays high for small RTT differences; JFI about 0.94 at 25 ms."** The model is
   much less RTT-fair: JFI {j_rtt:.3f} at +{dmax:g} ms one way (RTT {cd.BASE_RTT_MS:g} vs
   {cd.BASE_RTT_MS + 2 * dmax:g} ms, a ratio of {rr:.1f}); flow 1's file goes {ratio:.1f}x as fast,
   and while both send, flow 1 gets {shared:.0f}x flow 2's rate, far beyond the RTT ratio ({rr:.1f})
   or its square ({rr**2:.1f}), the steady-state RTT unfairness of AIMD flows with synchronized
   losses. The transfers never reach a steady state: flow 1, with the shorter RTT, finishes its
   slow start first and overshoots the buffer while flow 2 is still in slow start, so flow 2 takes
   losses at a window of a few packets while flow 1's is hundreds, and CUBIC regrows a small
   window slowly, by one packet per RTT in its
   TCP-friendly region and 0.4 t^3 packets along the cubic curve: seconds, longer than flow 1's
   whole transfer. Even at equal RTTs the overshoot splits the link unevenly (rate ratio
   {g(rtt, "quic", "shared_ratio", extra_delay_ms=0.0):.2f}, JFI of the files still
   {g(rtt, "quic", "jfi", extra_delay_ms=0.0):.3f}). Once flow 1 is done, flow 2 would need to fill the
   link for the JFI of two equal files to stay >= 0.9; its small window regrows slowly instead,
   and the link is underused ({u_rtt:.1%}). The seed's 0.94 fits a much smaller RTT ratio: if
   its 25 ms were the RTT difference on a base RTT of 100 ms, the ratio would be 1.25. The seed
   also saw utilization rise with the asymmetry: its
   formula (thr1 + thr2) / C does exactly that ({useed:.0%} at +{dmax:g} ms here), because the fast
   flow's short transfer time enters it while the link idles after it. The check asserts the
   direction theory gives (the shorter RTT is never slower).
5. **"Heavier bursty UDP load lowers fairness slightly; utilization rises (more bytes overall)."**
   JFI stays at or above {bgj:.3f}, and is, if anything, higher with heavier background
   ({g(bg, "quic", "jfi", off_mean_s=off_lo):.3f} at a mean OFF of {off_lo:g} s,
   {g(bg, "quic", "jfi", off_mean_s=off_hi):.3f} at {off_hi:g} s, {ref_j:.3f}
   without): every burst that fills the buffer is one more loss epoch, and each multiplicative
   decrease takes more from the larger window, so the split left by slow start evens out faster.
   The seed's slight decrease is within a testbed's noise; the model's effect is the opposite
   and small. The files' own utilization falls with heavier background ({bgu[off_lo]:.1%} at
   {off_lo:g} s, {bgu[off_hi]:.1%} at {off_hi:g} s; {ref:.1%} without), while files + UDP together
   give {bgt[off_lo]:.1%} and {bgt[off_hi]:.1%}: counted with the UDP bytes, as the seed's remark
   suggests it did, the link is fuller than without background. The UDP does not back off, so
   its bursts take their share, fill the buffer and cause the drops CUBIC reacts to.

### Checks

Each check is a bound or a direction from theory, never a number from an earlier run: every
run's utilization below its point's slow-start bound and below payload / frame, JFI <= 1, a
longer file above the 32.3 MB file at 1 Gbit/s, the loss-limited utilization within
{cd.MATHIS_TOLERANCE:.0%} of RFC 9438's mean window (random instead of periodic loss, timeouts and slow
start in a finite file; stated at the constant), the shorter-RTT flow not slower, and files +
UDP at most the link.

Quick mode (`--quick`, what CI runs): {cd.QUICK_REPS} repetitions, 3 capacities, 3 loss rates, 3
delays, 2 OFF means. Full mode: {cd.REPS} repetitions and every point (the committed report).
"""
