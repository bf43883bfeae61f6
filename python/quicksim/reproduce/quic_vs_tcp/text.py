"""The words of the `quic-vs-tcp` report: how the seed's testbed is mapped onto the model, and
the seed's conclusions taken one by one, each with the model's measure and verdict computed from
this run's numbers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..common import md_table

if TYPE_CHECKING:
    import pandas as pd

EXPLANATION = """
**The seed's testbed.** A 33.6 MB file (32 MiB of random bytes) is downloaded over loopback,
from Chromium's QUIC test server with its client, and from Apache (TLS) with wget; tcpdump
captures every packet; each point is repeated five times. The link is shaped by `tc netem`
(one-way delay, loss, jitter) with a `tbf` under it (the rate; the scripts the seed derives
from, mgordo/quic-vs-tcp-tls, use `tbf rate R burst 256kbit latency 1000ms`). The grid:
bandwidth 100, 40 and 5 Mbit/s; delay 10 and 50 ms and the sweep 10 to 120 ms; loss 0 and 5 %;
spikes off and on; and jitter.

**How the model maps it.** Two links in series, server -> `netem` -> router -> `tbf` -> client:

| testbed | model |
|---|---|
| netem `delay D` | `netem` link delay D in both directions (netem on `lo` delays every packet, so the RTT is 2D) |
| netem `loss p` | Bernoulli loss p on `netem`'s server->client direction, before the tbf queue (the seed applies it to packets from server to client) |
| netem's queue (`limit 1000`, the default) | `hold_limit = 1000` on each `netem` direction: at most 1000 packets held, propagating ones included, a packet beyond it dropped. netem holds its delayed packets in that queue, so the delay line itself is bounded: 1000 x 1500 B per D (at 100 Mbit/s and D >= 120 ms the pipe cannot be filled) |
| netem `delay D J distribution normal` | uniform jitter with the same mean and standard deviation, D ± sqrt(3) J, both directions, reordering allowed (netem's time-ordered queue reorders) |
| tbf `rate R` | `tbf` link rate R (both directions; the spikes only on the data direction) |
| tbf `latency 1000ms burst 256kbit` | `tbf` queue of R x 1 s + 32 kB (tc's limit = rate x latency + burst), DropTail |
| tbf's token bucket | serialization at R: a 32 kB bucket lets a burst leave faster than R after an idle period, which a bulk transfer has only at its start; the model serializes at R from the first packet |
| loopback MTU 1500, Ethernet header on `lo` | MTU 1500 B; 14 B of frame overhead per packet (what tbf counts on `lo`) |
| "spikes": the rate drops to a percentage for 200 ms | 10 % of the rate for 200 ms, every second from t = 1 s (the seed's scripts drop to 10 %; one spike per second makes the effect independent of when a single spike would fall) |

**The protocols.** QUIC: real header sizes (`header = "rfc9000"`: 8 B connection id, 1-4 B
packet number, 16 B AEAD tag), CUBIC, the 1-RTT handshake, ACK every second packet (RFC 9000),
RFC 9002 loss detection (packet threshold 3, time threshold 9/8 RTT). TCP: CUBIC, SACK with
RFC 6675 recovery and PRR, timestamps, delayed ACKs (every second segment, 40 ms), minimum RTO
200 ms (Linux), receive and send buffers of 6 MiB and 4 MiB (the seed's Linux 4.4
autotuning limits, `tcp_rmem[2]` and `tcp_wmem[2]`: they bound TCP's data in flight as QUIC's
flow-control windows, 15 MB per connection and 6 MB per stream as in Chromium, bound QUIC's), with TLS 1.2 (the seed's era: Apache 2.4 on Ubuntu 16.04, two round trips) as
the default and TLS 1.3 (one round trip) as the variant, 16 kB records. The model's
applications write on the side that opens the connection, so the server opens it and sends the
file: the handshake round trips are those of a download, and the HTTP request's round trip,
the same for both protocols, is left out.

**Metrics.** Transfer time: from the first handshake packet to the last byte delivered to the
client's application. Average bandwidth: file size x 8 / transfer time. Overhead: every IP
byte sent by both ends (headers, ACKs, retransmissions, handshake, also the packets netem
then drops) / file size. The seed counted what tcpdump saw on `lo`, after netem's drops; the
difference is at most the loss rate times the data bytes.

**Checks (from the mechanisms, not from the seed's numbers).**
- *Least transfer time*: the sender may send data only after its handshake's k round trips
  (QUIC 1, TCP+TLS 1.3 2, TCP+TLS 1.2 3) at the least delay, the data then crosses netem (D),
  and every data frame (full packets with the least headers) must be serialized by tbf, at R
  or, with spikes, at the scheduled rate: no run may be faster.
- *Overhead bound*: full packets with the least header bytes (QUIC: IP + UDP 28 B, short
  header 26 B, STREAM frame 2 B; TCP: IP + TCP + timestamps 52 B, plus the TLS record
  overhead) and one of the smallest ACKs per two data packets: no run may carry less.
- *Handshake round trips*: a 1000 B transfer at one-way delays of 10 and 50 ms takes
  k x 2D + D plus serialization times that do not depend on D, so its slope in D is 2k + 1:
  k must be exactly 1, 2 and 3.
- *Loss emulation*: the fraction of frames netem's server->client direction lost over all
  5 % runs is 5 % within four binomial standard deviations.
"""  # noqa: E501 (a Markdown table: one row per line)


def _verdict(share: float) -> str:
    if math.isnan(share):
        return "n/a"
    if share >= 0.75:
        return "**agrees**"
    if share <= 0.25:
        return "**disagrees**"
    return "**partly**"


def _cv(summary: pd.DataFrame, loss_pct: float) -> dict[str, float]:
    """Coefficient of variation of the transfer time per protocol at 100 Mbit/s, 10 ms."""
    at = summary[
        (summary["bw_mbps"] == 100)
        & (summary["delay_ms"] == 10)
        & (summary["loss_pct"] == loss_pct)
        & ~summary["spikes"]
    ].set_index("protocol")
    return {str(p): float(v) for p, v in (at["time_s_std"] / at["time_s"]).items()}


def _stability(summary: pd.DataFrame) -> list[str]:
    """The seed's "QUIC is more stable under favourable conditions". Without random loss or
    jitter the model has no randomness: the repetitions of a lossless point are identical
    (the seed's spread came from its host), so the claim can only be read under loss."""
    fav, lossy = _cv(summary, 0.0), _cv(summary, 5.0)
    text = ", ".join(f"{p} {v:.2%}" for p, v in fav.items())
    if not fav or any(math.isnan(v) for v in fav.values()):
        return ["under favourable conditions QUIC is more stable", "n/a (one repetition)", "n/a"]
    ltext = ", ".join(f"{p} {v:.2%}" for p, v in lossy.items())
    if all(v == 0 for v in fav.values()):
        verdict = "cannot be tested (deterministic without loss)"
        if lossy and not any(math.isnan(v) for v in lossy.values()):
            verdict += "; under loss " + (
                "QUIC varies less"
                if lossy.get("quic", 0) < lossy.get("tcp-tls1.2", 0)
                else "QUIC varies more"
            )
    else:
        verdict = _verdict(1.0 if fav.get("quic", 0) < fav.get("tcp-tls1.2", 0) else 0.0)
    return [
        "under favourable conditions QUIC is more stable (time series)",
        f"coefficient of variation of the time at 100 Mbit/s, 10 ms: 0 % loss {text}; "
        f"5 % loss {ltext or 'n/a'}",
        verdict,
    ]


def _pivot(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rows: (bw, delay, loss) without spikes or jitter; columns: protocols."""
    base = summary[~summary["spikes"] & (summary["jitter_ms"] == 0)]
    return base.pivot_table(index=["bw_mbps", "delay_ms", "loss_pct"], columns="protocol", values=metric)


def _median(x: pd.Series) -> float:
    x = x.dropna()
    return float(x.median()) if len(x) else math.nan


def findings(
    summary: pd.DataFrame,
    jsummary: pd.DataFrame,
    runs: pd.DataFrame,
    ks: dict[str, float],
    bounds: dict[str, float],
) -> list[str]:
    """The seed's conclusions, each with the model's measure and verdict, as Markdown."""
    t = _pivot(summary, "time_s")
    oh = _pivot(summary, "overhead")
    rows = []
    for tls in ("tcp-tls1.2", "tcp-tls1.3"):
        name = "TLS 1.2" if tls.endswith("2") else "TLS 1.3"
        r = (t[tls] / t["quic"]).dropna()
        rows.append(
            [
                f"QUIC outperforms TCP in transfer time and bandwidth (vs TCP+{name})",
                f"QUIC faster at {int((r > 1).sum())} of {len(r)} points; "
                f"median time ratio TCP/QUIC {_median(r):.3f}",
                _verdict(float((r > 1).mean()) if len(r) else math.nan),
            ]
        )
    r = (t["tcp-tls1.2"] / t["quic"]).dropna()
    idx = r.index.to_frame(index=False)
    lo0 = r[(idx["loss_pct"] == 0).to_numpy()]
    d = lo0.index.get_level_values("delay_ms")
    hi_d, lo_d = _median(lo0[d >= 80]), _median(lo0[d <= 20])
    rows.append(
        [
            "... much more so at high delay (0 % loss)",
            f"median TCP1.2/QUIC time ratio {lo_d:.3f} at <= 20 ms, {hi_d:.3f} at >= 80 ms",
            _verdict(1.0 if hi_d > lo_d else 0.0) if not math.isnan(hi_d + lo_d) else "n/a",
        ]
    )
    l5, l0 = _median(r[(idx["loss_pct"] > 0).to_numpy()]), _median(r[(idx["loss_pct"] == 0).to_numpy()])
    rows.append(
        [
            "... and under packet loss (QUIC's lead larger at 5 % than at 0 %)",
            f"median ratio {l0:.3f} at 0 %, {l5:.3f} at 5 %",
            _verdict(1.0 if l5 > l0 else 0.0) if not math.isnan(l5 + l0) else "n/a",
        ]
    )
    b = r.index.get_level_values("bw_mbps")
    b100, b5 = _median(r[b == 100]), _median(r[b == 5])
    rows.append(
        [
            "... and at high bandwidth",
            f"median ratio {b5:.3f} at 5 Mbit/s, {b100:.3f} at 100 Mbit/s",
            _verdict(1.0 if b100 > b5 else 0.0) if not math.isnan(b100 + b5) else "n/a",
        ]
    )
    r5 = r[(idx["loss_pct"] > 0).to_numpy()]
    rows.append(
        [
            "at 5 % loss the two are close, QUIC still ahead",
            f"QUIC faster at {int((r5 > 1).sum())} of {len(r5)} lossy points; median |1 - ratio| "
            f"{_median((r5 - 1).abs()):.3f}",
            _verdict(float((r5 > 1).mean()) if len(r5) else math.nan),
        ]
    )
    o = (oh["quic"] / oh["tcp-tls1.2"]).dropna()
    rows.append(
        [
            "QUIC's overhead is higher",
            f"QUIC above TCP+TLS 1.2 at {int((o > 1).sum())} of {len(o)} points; median overhead "
            f"QUIC {_median(oh['quic']):.4f}, TCP+TLS 1.2 {_median(oh['tcp-tls1.2']):.4f}",
            _verdict(float((o > 1).mean()) if len(o) else math.nan),
        ]
    )
    jt = jsummary.pivot_table(index="jitter_ms", columns="protocol", values="time_s")
    jr = (jt["quic"] / jt["tcp-tls1.2"]).dropna()
    jr = jr[jr.index > 0]
    rows.append(
        [
            "with jitter TCP surpasses QUIC",
            "QUIC/TCP1.2 time ratio "
            + ", ".join(f"{v:.2f} at {j:g} ms" for j, v in jr.items())
            + " (> 1: TCP faster)",
            _verdict(float((jr > 1).mean()) if len(jr) else math.nan),
        ]
    )
    rows.append(_stability(summary))
    table = md_table(["the seed says", "the model (this run)", "verdict"], rows)
    hs = ", ".join(f"{p} {k:.6f}" for p, k in ks.items())
    ack = runs[(runs["loss_pct"] == 0) & (runs["jitter_ms"] == 0)].copy()
    ack["acks_per_packet"] = ack["reverse_packets"] / ack["forward_packets"]
    per = ack.groupby("protocol")["acks_per_packet"].median().to_dict()
    acks = ", ".join(f"{p} {v:.3f}" for p, v in per.items())
    return [
        "## The seed's conclusions, one by one\n\n" + table,
        "## Numbers behind the mechanisms\n\n"
        f"- Round trips before the first byte (handshake probe): {hs}.\n"
        f"- Reverse-path packets per data packet at 0 % loss (median over the grid): {acks}.\n"
        f"- Header bounds of the overhead: {', '.join(f'{p} {v:.4f}' for p, v in bounds.items())}.",
    ]
