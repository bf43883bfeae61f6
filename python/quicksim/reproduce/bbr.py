"""BBR (issue 17): `bbr1` (BBRv1, draft-cardwell-iccrg-bbr-congestion-control-00, as ns-3.44's
TcpBbr) and `bbr` (draft-ietf-ccwg-bbr-01, BBRv3) over TCP. Three parts: one flow under 1 %
random loss against CUBIC and Mathis' rate; one BBR flow against one CUBIC flow for buffers of
0.5-16 BDP (Cao et al. IMC'19, Ware et al. IMC'19); and TCP bbr1 beside ns-3.44's TcpBbr on
ns-3's BBR validation scenario (numbers committed in `reproduce/data/ns3_bbr_tcp.csv`, made
by `scripts/ns3-bbr/run.sh`)."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from .. import units, validation
from ..validation import Check
from ._bbr_plots import plot_loss, plot_ns3, plot_share
from ._common import Context, Report, md_table, save_csv
from ._ns3data import data_path

if TYPE_CHECKING:
    import pandas as pd

    from ..results import Result

NAME = "bbr"
TITLE = "BBR (bbr1 = BBRv1, bbr = draft-ietf-ccwg-bbr-01): random loss, share vs CUBIC, beside ns-3 TcpBbr"

LINK_BPS = 10e6
RTT_S = 0.040
PAYLOAD, FRAME = 1448, 1500
#: What the link can carry as goodput: 1448 B of payload per 1500-byte IP packet.
GOODPUT_MAX_MBPS = LINK_BPS * PAYLOAD / FRAME / 1e6
LOSS_P = 0.01
#: One BDP in 1500-byte packets: 10 Mbit/s · 40 ms / 12 000 bit = 33.3, rounded up.
BDP_PACKETS = 34
BUFFERS_BDP = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
QUICK_BUFFERS_BDP = (0.5, 8.0)
BBRS = ("bbr1", "bbr")
NS3_CSV = "ns3_bbr_tcp.csv"
#: The ns-3 comparison's window (s): after Startup, to the end of the 30 s run.
NS3_T0, NS3_T1 = 2.0, 30.0


def mathis_mbps(rtt_s: float = RTT_S, p: float = LOSS_P) -> float:
    """Mathis et al. (1997) with b = 1: MSS / RTT · sqrt(3 / (2p)), in Mbit/s."""
    return PAYLOAD * 8 / rtt_s * math.sqrt(3 / (2 * p)) / 1e6


def _goodput(result: Result, flow: str, t0: float) -> float:
    """Application goodput of `flow` over [t0, end of the run] (Mbit/s)."""
    f = result.flows
    end = units.seconds(result.scenario["run"]["duration"])
    w = f[(f.flow == flow) & (f.t_s >= t0 - 1e-9)]
    return float(w.delivered_bytes.sum()) * 8 / (end - t0) / 1e6


def loss_part(quick: bool) -> tuple[pd.DataFrame, list[Check]]:
    """One flow under 1 % random loss: bbr1, bbr and cubic."""
    import pandas as pd

    from .. import api

    dur = 20 if quick else 60
    rows = []
    for cc in (*BBRS, "cubic"):
        r = api.run(validation.scenario_path("bbr-loss"), sets=[f"tcp.cc={cc}", f"run.duration={dur}s"])
        srtt = r.conn[r.conn.flow == "tcp"].srtt_s
        rows.append(
            {
                "cc": cc,
                "goodput_mbps": _goodput(r, "tcp", 5.0),
                "utilization": _goodput(r, "tcp", 5.0) / GOODPUT_MAX_MBPS,
                "mean_srtt_ms": float(srtt[r.conn.t_s >= 5.0].mean()) * 1e3,
            }
        )
    frame = pd.DataFrame(rows)
    by = frame.set_index("cc")
    # Mathis with the measured mean smoothed RTT of the CUBIC flow (propagation, serialization
    # and what little queue 1 % loss leaves).
    cubic_rtt = float(by.loc["cubic", "mean_srtt_ms"]) / 1e3
    expect = mathis_mbps(cubic_rtt)
    checks = [
        Check(
            "bbr1: utilization under 1 % loss",
            float(by.loc["bbr1", "utilization"]),
            0.90,
            0.90,
            "",
            kind="min",
            note="goodput / 9.653 Mbit/s (1448 B payload per 1500 B packet), over [5 s, end]",
        ),
        Check(
            "bbr: goodput under 1 % loss above CUBIC's Mathis rate",
            float(by.loc["bbr", "goodput_mbps"]),
            expect,
            0.0,
            "Mbit/s",
            kind="min",
            note="BBRv3 cuts its lower bounds in every round with a loss (draft §5.5.10.3): not ≥ 90 % here",
        ),
    ]
    checks.append(
        Check(
            "cubic: goodput vs Mathis (b = 1, measured RTT)",
            float(by.loc["cubic", "goodput_mbps"]),
            expect,
            0.20,
            "Mbit/s",
            note="Mathis' constant 1.22 is for periodic loss; Bernoulli loss and SACK recovery scatter ±20 %",
        )
    )
    return frame, checks


def share_part(quick: bool) -> tuple[pd.DataFrame, list[Check]]:
    """One BBR flow against one CUBIC flow per buffer size and BBR version."""
    import pandas as pd

    from .. import api

    dur, t0 = (30, 5.0) if quick else (60, 10.0)
    rows = []
    for cc in BBRS:
        for k in QUICK_BUFFERS_BDP if quick else BUFFERS_BDP:
            packets = max(1, round(k * BDP_PACKETS))
            r = api.run(
                validation.scenario_path("bbr-vs-cubic"),
                sets=[
                    f"flows.bbr.tcp.cc={cc}",
                    f"dumbbell.bottleneck.queue.packets={packets}",
                    f"run.duration={dur}s",
                ],
            )
            b, c = _goodput(r, "bbr", t0), _goodput(r, "cubic", t0)
            rows.append(
                {
                    "bbr": cc,
                    "buffer_bdp": k,
                    "buffer_packets": packets,
                    "bbr_mbps": b,
                    "cubic_mbps": c,
                    "bbr_share": b / (b + c),
                }
            )
    frame = pd.DataFrame(rows)
    checks = []
    v1 = frame[frame.bbr == "bbr1"].set_index("buffer_bdp")
    v3 = frame[frame.bbr == "bbr"].set_index("buffer_bdp")
    checks.append(
        Check(
            "bbr1: share against CUBIC, 0.5 BDP buffer",
            float(v1.loc[0.5, "bbr_share"]),
            0.5,
            0.5,
            "",
            kind="min",
        )
    )
    for name, f in (("bbr1", v1), ("bbr", v3)):
        checks.append(
            Check(
                f"{name}: share against CUBIC, 8 BDP buffer",
                float(f.loc[8.0, "bbr_share"]),
                0.5,
                0.5,
                "",
                kind="max",
                note="in-flight capped at cwnd_gain · BDP while CUBIC fills the buffer",
            )
        )
    return frame, checks


def ns3_part() -> tuple[pd.DataFrame, list[Check], dict[str, float]]:
    """TCP bbr1 on bbr-ns3.toml beside the committed ns-3 TcpBbr series (0.1 s grid)."""
    import numpy as np
    import pandas as pd

    from .. import api

    ns3 = pd.read_csv(data_path(NS3_CSV), comment="#")
    r = api.run(validation.scenario_path("bbr-ns3"))
    conn = r.conn[r.conn.flow == "bbr"]
    grid = ns3.t_s.to_numpy()
    idx = np.searchsorted(conn.t_s.to_numpy(), grid, side="right") - 1
    cwnd = np.where(idx >= 0, conn.cwnd_bytes.to_numpy()[np.maximum(idx, 0)], 0)
    f = r.flows[r.flows.flow == "bbr"]
    by_bin = dict(zip(np.rint(f.t_s.to_numpy() * 10).astype(int), f.delivered_bytes.to_numpy(), strict=True))
    # quicksim's 0.1 s bin [t - 0.1, t) is ns-3's sample at t (bytes received since the last one).
    rx = np.array([float(by_bin.get(round(t * 10) - 1, 0)) for t in grid])
    frame = pd.DataFrame(
        {
            "t_s": grid,
            "ns3_cwnd_bytes": ns3.cwnd_bytes,
            "quicksim_cwnd_bytes": cwnd,
            "ns3_goodput_mbps": ns3.rx_bytes * 8 / 0.1 / 1e6,
            "quicksim_goodput_mbps": rx * 8 / 0.1 / 1e6,
        }
    )
    w = frame[(frame.t_s > NS3_T0) & (frame.t_s <= NS3_T1)]
    probe = 4 * PAYLOAD + 100  # a ProbeRTT window: 4 segments
    dips = {
        who: _dips(w.t_s.to_numpy(), w[f"{who}_cwnd_bytes"].to_numpy() <= probe)
        for who in ("ns3", "quicksim")
    }
    checks = [
        Check(
            "bbr1 vs ns-3 TcpBbr: mean cwnd (2-30 s)",
            float(w.quicksim_cwnd_bytes.mean()),
            float(w.ns3_cwnd_bytes.mean()),
            0.10,
            "B",
        ),
        Check(
            "bbr1 vs ns-3 TcpBbr: mean goodput (2-30 s)",
            float(w.quicksim_goodput_mbps.mean()),
            float(w.ns3_goodput_mbps.mean()),
            0.10,
            "Mbit/s",
        ),
        Check(
            "bbr1 vs ns-3 TcpBbr: ProbeRTT episodes (2-30 s)",
            len(dips["quicksim"]),
            len(dips["ns3"]),
            0,
            "",
            kind="exact",
        ),
    ]
    shift = max((abs(a - b) for a, b in zip(dips["quicksim"], dips["ns3"], strict=False)), default=math.nan)
    checks.append(
        Check(
            "bbr1 vs ns-3 TcpBbr: largest ProbeRTT time difference",
            shift,
            0.5,
            0.5,
            "s",
            kind="max",
            note="ProbeRTT comes 10 s after the last RTprop refresh, which depends on queueing detail",
        )
    )
    return frame, checks, {"ns3_dips": dips["ns3"], "quicksim_dips": dips["quicksim"]}  # type: ignore[dict-item]


def _dips(t: object, low: object) -> list[float]:
    """Start times of the runs of True in `low` (ProbeRTT episodes)."""
    out, prev = [], False
    for ti, lo in zip(t, low, strict=True):  # type: ignore[call-overload]
        if lo and not prev:
            out.append(round(float(ti), 3))
        prev = bool(lo)
    return out


def run(ctx: Context) -> Report:
    """The three parts, their CSVs, plots and checks."""
    t = time.perf_counter()
    loss, loss_checks = loss_part(ctx.quick)
    share, share_checks = share_part(ctx.quick)
    ns3, ns3_checks, dips = ns3_part()
    save_csv(loss, ctx.out / "loss.csv")
    save_csv(share, ctx.out / "share_vs_buffer.csv")
    save_csv(ns3, ctx.out / "ns3_side_by_side.csv")
    plot_loss(
        loss,
        mathis_mbps(float(loss.set_index("cc").loc["cubic", "mean_srtt_ms"]) / 1e3),
        GOODPUT_MAX_MBPS,
        ctx.out / "loss.png",
    )
    plot_share(share, ctx.out / "share_vs_buffer.png")
    plot_ns3(ns3, ctx.out / "ns3_side_by_side.png")
    sections = [
        "## Random loss (1 %)\n\n"
        + md_table(
            ["cc", "goodput (Mbit/s)", "utilization", "mean srtt (ms)"],
            [
                [r.cc, f"{r.goodput_mbps:.3f}", f"{r.utilization:.3f}", f"{r.mean_srtt_ms:.1f}"]
                for r in loss.itertuples()
            ],
        ),
        "## Share against CUBIC by buffer size\n\n"
        + md_table(
            ["BBR", "buffer (BDP)", "packets", "BBR (Mbit/s)", "CUBIC (Mbit/s)", "BBR share"],
            [
                [
                    r.bbr,
                    f"{r.buffer_bdp:g}",
                    r.buffer_packets,
                    f"{r.bbr_mbps:.3f}",
                    f"{r.cubic_mbps:.3f}",
                    f"{r.bbr_share:.3f}",
                ]
                for r in share.itertuples()
            ],
        ),
        "## ProbeRTT episodes beside ns-3\n\n"
        f"ns-3 TcpBbr: {dips['ns3_dips']} s; quicksim bbr1: {dips['quicksim_dips']} s",
    ]
    return Report(
        NAME,
        TITLE,
        "Cardwell et al. (ACM Queue 2016); Cao et al. and Ware et al. (IMC 2019); ns-3.44 TcpBbr",
        [*loss_checks, *share_checks, *ns3_checks],
        figures=[
            ("loss.png", "One flow, 10 Mbit/s / 40 ms / 1 % random loss: goodput by controller"),
            ("share_vs_buffer.png", "BBR's share against one CUBIC flow by buffer size"),
            ("ns3_side_by_side.png", "TCP bbr1 beside ns-3.44 TcpBbr: cwnd and goodput, 0.1 s samples"),
        ],
        csvs=[
            ("loss.csv", "per controller: goodput, utilization, mean smoothed RTT"),
            ("share_vs_buffer.csv", "per BBR version and buffer: both flows' goodput and BBR's share"),
            ("ns3_side_by_side.csv", "0.1 s samples: cwnd and goodput of ns-3 TcpBbr and quicksim bbr1"),
        ],
        explanation=EXPLANATION,
        sections=sections,
        quick=ctx.quick,
        wall_s=time.perf_counter() - t,
    )


EXPLANATION = """
**Controllers.** `bbr1` follows draft-cardwell-iccrg-bbr-congestion-control-00 with the
details ns-3.44's `TcpBbr` (after Linux 4.x) adds: high gain 2.89, 1 % pacing margin, the
ACK-aggregation allowance, packet conservation in recovery. `bbr` follows draft-ietf-ccwg-bbr-01
(BBRv3). Both read the transport's delivery-rate samples (draft-cheng-iccrg-delivery-rate-
estimation, kept per packet by QUIC and TCP) and pace at their own rate.

**Random loss** (`bbr-loss.toml`): 10 Mbit/s, 40 ms RTT, 100-packet buffer, Bernoulli 1 % loss
on the data direction, one TCP flow (SACK, every segment acked), goodput over [5 s, end].
The link carries at most 10 · 1448/1500 = 9.653 Mbit/s of payload; BBR must keep ≥ 90 % of it
(Cardwell et al. 2016, Fig. 8: BBR keeps the link up to ~15 % loss). CUBIC is in its
Reno-friendly region (RFC 9438 §5.1: the cubic window 1.054 · RTT^(3/4) / p^(3/4) ≈ 3 segments,
below Reno's 1.22/√p = 12.2), so its expected goodput is Mathis' MSS/RTT · sqrt(3/(2p)) with
the flow's measured mean RTT. BBRv3 reacts to loss above 2 % per round (one loss in a round of
~35 packets is 2.9 %): its lower bound bw_lo decays ~1 % per lossy round between probes, which
is why it keeps less than BBRv1 (see `bbr_tests.rs`).

**Share against CUBIC** (`bbr-vs-cubic.toml`): one BBR and one CUBIC TCP flow, 10 Mbit/s,
40 ms, DropTail of k · 34 packets (1 BDP = 33.3 packets of 1500 B), goodput over [10 s, end]
(quick: [5 s, 30 s]). Cao et al. and Ware et al. (IMC 2019) found BBR taking most of the link
in shallow buffers (CUBIC backs off at every overflow while BBR's pacing ignores the loss) and
the smaller share in deep ones (BBR's in-flight cap of 2 · BtlBw · RTprop stays fixed while
CUBIC fills the buffer).

**Beside ns-3** (`bbr-ns3.toml`, ns-3's `examples/tcp/tcp-bbr-example.cc`): sender - 1 Gbit/s
5 ms - 10 Mbit/s 10 ms FIFO 100 packets - 1 Gbit/s 5 ms - receiver, TcpBbr, 1448-byte
segments, delayed ACKs every 2 segments. ns-3's cwnd and received bytes are sampled every
0.1 s by `scripts/ns3-bbr/tcp-bbr.cc` (30 s; committed CSV, header says when and how). Means
over 2-30 s must agree within 10 %, and the ProbeRTT episodes (cwnd at 4 segments) must come
in the same number, within 0.5 s.
"""
