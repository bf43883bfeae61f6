"""RFC 9438 §5.1 Tables 1 and 2: the mean congestion window of one CUBIC flow (and of NewReno) under
deterministic loss, over QUIC and over TCP, against the RFC's fluid model."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

from ..validation import Check, scenario_path
from .common import Context, Report, md_table, save_csv, save_figure

if TYPE_CHECKING:
    import pandas as pd

NAME = "cubic-rfc9438"
TITLE = "CUBIC's mean window vs RFC 9438 §5.1 Tables 1 and 2 (QUIC and TCP)"
#: RFC 9438 §5.1 Table 1 (RTT 0.1 s) and Table 2 (RTT 0.01 s), CUBIC with C = 0.4, segments.
TABLE = {
    0.1: {1e-2: 12, 1e-3: 38, 1e-4: 187, 1e-5: 1054, 1e-6: 5926},
    0.01: {1e-2: 12, 1e-3: 38, 1e-4: 120, 1e-5: 379, 1e-6: 1200},
}
#: --quick: one cell per region and RTT, cheap ones (the Reno-friendly cells at p = 1e-2 and
#: 1e-3, the CUBIC-region cell at RTT 0.1 s, p = 1e-4), QUIC and TCP.
QUICK_CELLS = ((0.1, 1e-3), (0.1, 1e-4), (0.01, 1e-2), (0.01, 1e-4))
TOLERANCE = 0.10
#: Loss epochs measured after the warm-up, and epochs of warm-up.
EPOCHS, WARMUP_EPOCHS = 10, 3
MTU = 1280
#: The initial window in segments (RFC 9002: 10 x 1252 B <= 14 720 B; TCP: RFC 6928).
INITIAL_WINDOW = 10
#: Segment sizes: QUIC counts its window in packets of max_packet_size (1252 B at MTU 1280);
#: TCP in SMSS = MTU - 40 - 12 (timestamps) = 1228 B.
SEGMENT = {"quic": 1252, "tcp": 1228}


def fluid_cubic(rtt: float, p: float, c: float = 0.4, beta: float = 0.7) -> float:
    """RFC 9438 §5 (Figure 9): AVG_W_cubic = (C (3 + beta) / (4 (1 - beta)))^(1/4) (RTT / p)^(3/4)."""
    return float((c * (3 + beta) / (4 * (1 - beta))) ** 0.25 * (rtt / p) ** 0.75)


def fluid_reno(p: float) -> float:
    """RFC 9438 §5.1's Reno column, 1.2 / sqrt(p) (RFC 3649)."""
    return 1.2 / math.sqrt(p)


def table_value(rtt: float, p: float) -> float:
    """What the RFC's table computes: the larger of the CUBIC and Reno-friendly averages."""
    return max(fluid_cubic(rtt, p), fluid_reno(p))


def peak_window(rtt: float, p: float, algo: str) -> float:
    """The window at a loss in the fluid model's steady state, in segments: W_max = 4 avg / (3 +
    beta) for the cubic curve, 2 avg / (1 + beta) for an AIMD sawtooth (beta 0.7 for CUBIC's
    Reno-friendly region, 0.5 for NewReno)."""
    if algo == "newreno":
        return 2 * fluid_reno(p) / 1.5
    if fluid_cubic(rtt, p) >= fluid_reno(p):
        return 4 * fluid_cubic(rtt, p) / 3.7
    return 2 * fluid_reno(p) / 1.7


def epoch_s(rtt: float, p: float, algo: str) -> float:
    """Fluid-model time between losses: 1/p packets at the mean window per RTT."""
    avg = fluid_reno(p) if algo == "newreno" else table_value(rtt, p)
    return rtt / (p * avg)


def cell_sets(rtt: float, p: float, algo: str, transport: str) -> list[str]:
    """`--set` overrides of scenarios/mathis.toml for one cell."""
    every = round(1 / p) - 1
    peak = peak_window(rtt, p, algo)
    # The first drop comes after `first` packets. Slow start grows by one segment per ACK until
    # the loss is detected, and the packets acked by then are the `first` before the drop and
    # the few after it, so the window at the first reduction is about first + IW: it lands at
    # the fluid model's W_max, the operating point, instead of above it (see the explanation:
    # near W_max the cubic plateau is neutrally stable, so a start above it persists).
    first = min(every, max(1, round(peak) - INITIAL_WINDOW))
    duration = 1.0 + (EPOCHS + WARMUP_EPOCHS + 1) * epoch_s(rtt, p, algo)
    cap_bytes = int(8 * peak * SEGMENT[transport]) + 4_000_000
    cc = '{ algo = "cubic" }' if algo == "cubic" else '{ algo = "newreno" }'
    sets = [
        f"dumbbell.mtu={MTU}B",
        f"dumbbell.bottleneck.delay={rtt / 2 * 1e3:g}ms",
        f"dumbbell.bottleneck.forward.loss.every={every}",
        f"dumbbell.bottleneck.forward.loss.first={first}",
        "dumbbell.bottleneck.queue.packets=10000000",
        f"run.duration={duration:.3f}s",
        # A grid of RTT/100 samples the window exactly (as a step function) without a row per ACK.
        f"run.record.conn_interval={rtt * 10:g}ms",
        "run.record.flows=false",
        "run.record.links=false",
        "run.record.queues=false",
    ]
    if transport == "quic":
        sets += [f"quic.cc={cc}", f"quic.send_queue_limit={cap_bytes}B"]
    else:
        sets += [
            "flows.0.kind=tcp",
            f"tcp.cc={cc}",
            "tcp.ack_every=1",
            f"tcp.send_buffer={cap_bytes}B",
            f"tcp.recv_buffer={cap_bytes}B",
        ]
    return sets


def measure(rtt: float, p: float, algo: str, transport: str, cc: str | None = None) -> dict[str, Any]:
    """One run: time-weighted mean cwnd (segments) from the end of the warm-up epochs to the
    last loss, over whole loss epochs, and the window at the first and the last reduction.
    `cc` runs another controller (by its scenario name) in the cell made for `algo`."""
    import json

    import numpy as np

    from .. import api

    sets = cell_sets(rtt, p, algo, transport)
    if cc is not None:
        sets.append(f"{transport}.cc={json.dumps(cc)}")
    r = api.run(scenario_path("mathis"), sets=sets)
    c = r.conn
    t = c.t_s.to_numpy()
    w = c.cwnd_bytes.to_numpy() / SEGMENT[transport]
    drops = r.drops
    red = np.sort(drops[drops.reason == "loss"].t_s.to_numpy())  # one drop per loss epoch
    if len(red) < WARMUP_EPOCHS + 3:
        nan = math.nan
        return {"mean": nan, "epochs": len(red), "t0": nan, "t1": nan, "w_first": nan, "w_last": nan}
    t0, t1 = red[WARMUP_EPOCHS], red[-1]
    edges = np.append(t, float(r.meta["sim_end_s"]))
    lo, hi = np.clip(edges[:-1], t0, t1), np.clip(edges[1:], t0, t1)
    mean = float((w * (hi - lo)).sum() / (t1 - t0))

    def peak(i: int) -> float:
        """The largest window between drop i and drop i + 1: where reduction i happened."""
        return float(w[(t >= red[i]) & (t < red[i + 1])].max())

    return {
        "mean": mean,
        "epochs": len(red) - 1 - WARMUP_EPOCHS,
        "t0": float(t0),
        "t1": float(t1),
        "w_first": peak(0),
        "w_last": peak(len(red) - 2),
    }


def rules_model(rtt: float, p: float, algo: str) -> float:
    """The fluid model of the window rules (`common.cubic_fluid`), started like the runs (first loss at
    the closed form's W_max) and averaged over the same epochs."""
    from .common.cubic_fluid import simulate

    mean, _ = simulate(rtt, p, algo, peak_window(rtt, p, algo), warmup=WARMUP_EPOCHS, epochs=EPOCHS)
    return mean


def run(ctx: Context) -> Report:
    import pandas as pd

    start = time.perf_counter()
    cells = QUICK_CELLS if ctx.quick else tuple((rtt, p) for rtt in TABLE for p in TABLE[rtt])
    model = {(rtt, p, algo): rules_model(rtt, p, algo) for rtt, p in cells for algo in ("cubic", "newreno")}
    rows = []
    for transport in ("quic", "tcp"):
        for rtt, p in cells:
            for algo in ("cubic", "newreno"):
                wall = time.perf_counter()
                m = measure(rtt, p, algo, transport)
                expected = TABLE[rtt][p] if algo == "cubic" else fluid_reno(p)
                rows.append(
                    {
                        "transport": transport,
                        "algo": algo,
                        "rtt_s": rtt,
                        "p": p,
                        "measured_segments": m["mean"],
                        "expected_segments": expected,
                        "error": m["mean"] / expected - 1,
                        "rules_model_segments": model[rtt, p, algo],
                        "vs_rules_model": m["mean"] / model[rtt, p, algo] - 1,
                        "fluid_w_max_segments": peak_window(rtt, p, algo),
                        "first_peak_segments": m["w_first"],
                        "last_peak_segments": m["w_last"],
                        "epochs": m["epochs"],
                        "from_s": m["t0"],
                        "to_s": m["t1"],
                        "wall_s": time.perf_counter() - wall,
                    }
                )
    data = pd.DataFrame(rows)
    save_csv(data, ctx.out / "mean_cwnd.csv")
    checks = [
        Check(
            f"{r.transport} {r.algo} rtt={r.rtt_s:g}s p={r.p:g}",
            float(r.measured_segments),
            float(r.expected_segments),
            TOLERANCE,
            "segments",
            note=f"time-weighted mean cwnd over {r.epochs} loss epochs ({r.from_s:.1f}-{r.to_s:.1f} s)",
        )
        for r in data.itertuples()
    ]
    save_figure(_figure(data), ctx.out / "mean_cwnd.png")
    save_figure(_error_figure(data), ctx.out / "mean_cwnd_error.png")
    return Report(
        NAME,
        TITLE,
        "RFC 9438 (CUBIC) §5.1, Tables 1 and 2, and its Reno column 1.2/√p",
        checks,
        figures=[
            (
                "mean_cwnd.png",
                "Mean cwnd (segments) vs loss rate: measured (markers) and the RFC's table (lines)",
            ),
            (
                "mean_cwnd_error.png",
                "Error of each cell against the RFC's value (markers), the fluid model of the window "
                "rules against the same value (black crosses), and the ±10 % tolerance",
            ),
        ],
        csvs=[
            (
                "mean_cwnd.csv",
                "per transport, algorithm, RTT and p: measured, expected and rules-model mean cwnd, "
                "and the window at the first and the last reduction",
            )
        ],
        sections=["## Mean window per cell\n\n" + _cell_table(data, cells)],
        explanation=EXPLANATION,
        quick=ctx.quick,
        wall_s=time.perf_counter() - start,
    )


def _cell_table(data: pd.DataFrame, cells: tuple[tuple[float, float], ...]) -> str:
    """One row per transport and cell: CUBIC and NewReno, measured against the RFC and the
    rules model."""
    rows = []
    for tr in ("quic", "tcp"):
        for rtt, p in cells:
            row = [tr, f"{rtt:g}", f"{p:g}"]
            for algo in ("cubic", "newreno"):
                r = data[(data.transport == tr) & (data.rtt_s == rtt) & (data.p == p) & (data.algo == algo)]
                x = r.iloc[0]
                row += [
                    f"{x.measured_segments:.1f}",
                    f"{x.expected_segments:.1f}",
                    f"{x.error:+.1%}",
                    f"{x.rules_model_segments:.1f}",
                ]
            rows.append(row)
    header = ["transport", "RTT (s)", "p"]
    header += ["CUBIC measured", "RFC table", "error", "CUBIC rules model"]
    header += ["NewReno measured", "1.2/√p", "error", "NewReno rules model"]
    return md_table(header, rows)


EXPLANATION = """
**What the table assumes** (RFC 9438 §5 and §5.1): a deterministic loss every 1/p packets, a fixed
RTT, and the fluid model of the window in its steady state, where every epoch is the same: the
window climbs the concave curve from beta·W_max to W_max in exactly K seconds and the loss comes
at W_max ("CUBIC always operates with the concave window profile"). Then 1/p = W_max·K·(3 +
beta)/(4·RTT) and the mean is AVG_W_cubic = (C (3 + beta)/(4 (1 - beta)))^(1/4) (RTT/p)^(3/4),
1.054 (RTT/p)^(3/4) for beta = 0.7, C = 0.4. W_max is constant, so fast convergence (§4.7) never
acts; the Reno-friendly region (§4.3) enters as the larger of that and Reno's 1.2/√p (RFC 3649);
slow start, the recovery period and ACK clocking are not modelled. Windows are in MSS-sized
segments: here cwnd_bytes / 1252 B for QUIC (its max_packet_size at MTU 1280) and / 1228 B for TCP
(SMSS with timestamps).

**The runs** (`scenarios/mathis.toml` with overrides): one flow, 100 Gbit/s links so the rate
never limits (the largest window, ~6 400 segments at RTT 0.1 s, needs ~0.7 Gbit/s), a queue of
10^7 packets that never drops, periodic loss `every = 1/p - 1` on the data direction, every packet
acked (QUIC ack_ratio 1, TCP ack_every 1), and a sender buffer far above the largest window so the
flow is never application-limited. The first drop comes after `first` = W_max - 10 packets (W_max
of the closed form: 4·mean/(3 + beta) on the cubic curve, 2·mean/(1 + beta) on a sawtooth), so
that slow start, which keeps adding a segment per ACK until the loss is detected, reduces at about
the closed form's W_max (column `first_peak_segments` of the CSV). Each run lasts 1 s + 14 fluid
epochs (1/(p·mean) RTTs each); the first 3 epochs after the first drop are warm-up and the mean is
the time-weighted cwnd from the 4th drop to the last one, over whole epochs (about 10). The `conn`
table is recorded on a grid of RTT/100 (`run.record.conn_interval`), which samples the exact
window without a row per ACK. The same cells, measured the same way, are the Rust golden test
`crates/quicksim-scenario/tests/it/cubic_rfc9438.rs` (p = 1e-2 to 1e-5 by default, 1e-6 with
`--ignored`); it measures the same numbers to the printed digit.

**The rules model** (`reproduce/common/cubic_fluid.py`, column "rules model"): a fluid model of the
algorithm as specified rather than of its two closed forms: the window is the larger of the cubic
curve and W_est at every instant (§4.3), W_est's slope becomes 1 once it passes cwnd_prior, fast
convergence acts on a loss a segment or more below W_max (§4.7), and the window is held for the
one-RTT recovery period (RFC 9002 §7.3.2); it starts at the same window and averages over the
same epochs as the runs. With those rules off it gives the closed forms to 0.5 %
(`tests/test_cubic_fluid.py`). It agrees with every run at p <= 1e-4 within 0.3 %, and within
4.4 % at p = 1e-3 and 1e-2 (whole packets, and the two NewRenos below), so the differences from
the table are properties of the algorithm under this loss pattern, not of the simulator. Cell by
cell (full mode):

- **QUIC's NewReno is +2.0 to +2.1 % above 1.2/√p at p <= 1e-4**: the exact sawtooth mean is
  √(3/2)/√p = 1.2247/√p, and RFC 3649's 1.2 rounds it down by 2.0 %. At p = 1e-2 the windows are
  12-16 segments, and the one-RTT recovery hold and whole packets pull it to -1.8 to -1.9 %. At
  p = 1e-3 QUIC's NewReno (INET's rules, exact byte-counting increase) is +4.0 %: in steady state
  its window peaks at 51-52 segments and averages 0.775 of its peak (80-epoch runs); the rules
  model gives 37.8. Inside the tolerance; not traced further.
- **TCP's NewReno grows once per ACK** (RFC 5681 §3.1 eq. 3, TCP's default since 2026-11-29;
  an ACK per segment here), by ⌊SMSS²/cwnd⌋ bytes, and the floor costs growth where that
  quotient is small: at p = 1e-5 the window is about 380 segments, ⌊1228²/(380·1228)⌋ = 3 B
  instead of 3.23 B per ACK, 7 % slower growth, and the mean is -6.4 %; at p = 1e-6 (1 200
  segments, 1 B for 1.02) -2.3 %; at p = 1e-4 (10 B for 10.2) -1.2 %; at 1e-3 -1.4 %. ns-3's
  `TcpNewReno` truncates the same way. At p = 1e-2, -7.2 % (-3.6 % with the earlier byte
  counting): the recovery hold and whole packets as for QUIC; the rest not traced.
- **CUBIC's Reno-friendly region** (RTT 0.01 s, p = 1e-3 to 1e-5): -1.4 to +2.0 %. There the
  window is W_est, an AIMD(9/17, 0.7) sawtooth whose mean is again √(3/2)/√p (alpha_cubic is
  chosen for that), so +2 % where the windows are large.
- **CUBIC at p = 1e-2** (both RTTs) is -6.4 to -7.2 %, the largest error: a 12-segment window
  climbs from 0.7·W_max at 9/17 segment per RTT, ~8 RTTs per epoch, one of them held in recovery
  (rules model: -4.6 %; the rest is whole packets).
- **CUBIC's concave region** (RTT 0.1 s, p = 1e-4 to 1e-6): -0.3 to +0.5 %.
- **The cubic plateau is neutrally stable.** Near W_max the curve is flat, so an epoch that lasts
  a little longer or shorter than K ends at almost the same window: W_max moves by C·ΔT³ per
  epoch, and a run whose W_max is off the fixed point stays off it for hundreds of epochs. With
  the earlier start (`first` = W_max, so slow start reduced ~12 segments above it), RTT 0.1 s,
  p = 1e-4 measured 196 segments (+4.8 %), and after 80 epochs W_max had come down only from
  214.9 to 212.0 (mean 194, +3.7 %); with `first` = W_max - 10 the run reduces at 205.0 and
  measures 187.8 (+0.4 %). An earlier version's -12 % (165 against 187) came from the same neutrality: a
  fast-convergence test in bytes fired on losses a few bytes below the plateau, cut W_max by 15 %,
  and the flat curve never climbed back; fast convergence now needs cwnd a whole segment below
  W_max (Linux's integer window reaches W_max exactly on the plateau).
- **Where the two regions meet**, the algorithm's window is the larger of the two curves at every
  instant, and its mean is above the larger of the two means that the table takes. At RTT 0.1 s,
  p = 1e-3 (AVG_W_cubic 33, 1.2/√p 38) the measured epochs 4-14 give +3.9 to +4.3 % (rules model
  +2.8 %), a transient on the way down to a steady state that 80-epoch runs reach after ~40
  epochs: peaks of 43 segments, mean 38.5 (+1.3 %). At RTT 0.01 s, p = 1e-6 (1054 against 1200)
  W_est passes cwnd_prior and sets the peak at one segment per RTT, the cubic curve aimed at the
  previous peak is still a few segments short when the next loss comes, and fast convergence
  fires on every second loss: the epochs alternate between means of 1294 and 1222 segments
  (peaks 1430 and 1436) for as long as the run lasts (60 epochs checked), and the mean is 1254
  (+4.5 %); the rules model shows the same cycle and gives 1257. The RFC's table does not
  describe this cell's dynamics (its closed forms have neither the pointwise maximum nor fast
  convergence), but the mean stays within the tolerance.
"""


def _figure(data: pd.DataFrame) -> Any:
    import numpy as np
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4.5), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    ps = np.logspace(-6.2, -1.8, 100)
    for ax, rtt in zip(axes, (0.1, 0.01), strict=True):
        ax.plot(ps, [table_value(rtt, p) for p in ps], color="tab:blue", label="RFC 9438 table (CUBIC)")
        ax.plot(ps, [fluid_reno(p) for p in ps], color="tab:orange", linestyle="--", label="1.2/√p (Reno)")
        part = data[data.rtt_s == rtt]
        for (tr, algo), g in part.groupby(["transport", "algo"]):
            ax.plot(
                g.p,
                g.measured_segments,
                "o" if tr == "quic" else "s",
                color="tab:blue" if algo == "cubic" else "tab:orange",
                markerfacecolor="none" if tr == "tcp" else None,
                label=f"{tr} {algo}",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("loss rate p")
        ax.set_title(f"RTT = {rtt:g} s")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("mean cwnd (segments)")
    axes[0].legend(fontsize="small")
    return fig


def _error_figure(data: pd.DataFrame) -> Any:
    """measured / expected - 1 per cell, with the rules model's and the tolerance band."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4.5), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, rtt in zip(axes, (0.1, 0.01), strict=True):
        ax.axhspan(-100 * TOLERANCE, 100 * TOLERANCE, color="0.92", label="±10 % tolerance")
        ax.axhline(0, color="0.5", linewidth=0.8)
        part = data[data.rtt_s == rtt]
        for (tr, algo), g in part.groupby(["transport", "algo"]):
            ax.plot(
                g.p,
                100 * g.error,
                "o" if tr == "quic" else "s",
                color="tab:blue" if algo == "cubic" else "tab:orange",
                markerfacecolor="none" if tr == "tcp" else None,
                label=f"{tr} {algo}",
            )
        for algo, g in part[part.transport == "quic"].groupby("algo"):
            ax.plot(
                g.p,
                100 * (g.rules_model_segments / g.expected_segments - 1),
                "x",
                color="black" if algo == "cubic" else "0.45",
                label=f"rules model, {algo}",
            )
        ax.set_xscale("log")
        ax.set_xlabel("loss rate p")
        ax.set_title(f"RTT = {rtt:g} s")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("mean cwnd vs RFC value (%)")
    axes[0].legend(fontsize="small", ncol=2)
    return fig
