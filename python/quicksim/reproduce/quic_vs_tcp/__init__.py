"""Seed 004: a 33.6 MB download over QUIC and over TCP + TLS through an emulated
netem/tbf link, over the seed's grid of bandwidth, delay, loss, rate spikes and jitter;
transfer time, average bandwidth and byte overhead, with checks from the mechanisms (handshake
round trips, header sizes, link capacity) rather than from the seed's numbers.

The link (`scenario`): server -> `netem` (10 Gbit/s, the one-way delay, S->C loss, jitter, at
most 1000 packets held: netem's `limit`) -> router -> `tbf` (the rate, a queue of rate x 1 s +
32 kB: tbf's `latency 1000ms burst 256kbit`) -> client. The server host opens the connection
and sends the file (the model's applications write on the connection's opening side), so a
transfer's time runs from the first handshake packet to the last byte delivered.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...units import bytes_
from ...validation import Check
from ..common import Context, Report, save_csv

if TYPE_CHECKING:
    import pandas as pd

    from ...results import Result
    from ...sweep import SweepResult

NAME = "quic-vs-tcp"
TITLE = "QUIC vs TCP+TLS: 33.6 MB download over an emulated netem/tbf link (seed 004)"

#: The seed's file: `dd if=/dev/urandom bs=2M count=16`, 32 MiB = 33.55 MB.
FILE_BYTES = 33_554_432
REPEAT = 5
QUICK_REPEAT = 1
#: Protocol variants: label, flow kind, TLS version, round trips before the first data byte
#: can be sent (TCP's handshake 1 + TLS 1.2's 2 or TLS 1.3's 1; QUIC's 1-RTT handshake 1).
PROTOCOLS: dict[str, tuple[str, str, str, int]] = {
    "quic": ("QUIC", "quic", "1.2", 1),
    "tcp-tls1.2": ("TCP+TLS 1.2", "tcp", "1.2", 3),
    "tcp-tls1.3": ("TCP+TLS 1.3", "tcp", "1.3", 2),
}
BANDWIDTHS_MBPS = (100, 40, 5)
DELAYS_MS = (10, 50)
DELAY_SWEEP_MS = (10, 20, 40, 60, 80, 100, 120)
LOSSES = (0.0, 0.05)
#: Spikes (the seed: "a period of time (default 200 ms) when bandwidth drops to a certain
#: percentage"; the scripts it derives from drop to 10 %): the data direction's rate falls to
#: SPIKE_FRACTION for SPIKE_DURATION_S every SPIKE_PERIOD_S, from one period in.
SPIKE_FRACTION = 0.1
SPIKE_DURATION_S = 0.2
SPIKE_PERIOD_S = 1.0
#: Jitter: netem `delay D J distribution normal` (J the standard deviation), as uniform
#: jitter with the same mean and standard deviation: [D - sqrt(3) J, D + sqrt(3) J], both
#: directions, reordering allowed (netem's time-sorted queue reorders).
JITTER_DELAY_MS = 60
JITTER_BANDWIDTH_MBPS = 40
JITTER_MS = (0, 5, 10, 20, 30)
QUICK_JITTER_MS = (0, 20)
#: netem's default `limit` (packets), and tbf's token bucket and latency.
NETEM_LIMIT = 1000
TBF_BURST_BYTES = 32_000
TBF_LATENCY_S = 1.0
#: Frame overhead on the emulated loopback: the 14 B Ethernet header tbf counts on `lo`.
L2_BYTES = 14
MTU = 1500
#: Header bytes: IPv4 + UDP; IPv4 + TCP + timestamps option; QUIC short header with an 8 B
#: connection id, 1 B packet number and the 16 B AEAD tag; the least STREAM frame header
#: (type and stream id); TLS record overheads (`tcp/tls.rs`).
IP_UDP = 28
IP_TCP_TS = 52
QUIC_SHORT_MIN = 1 + 8 + 1 + 16
STREAM_MIN = 2
TLS_RECORD = 16_384
TLS_OVERHEAD = {"1.2": 29, "1.3": 22}
#: The smallest ACK packets: QUIC short header + ACK frame (type, largest, delay, range count,
#: first range: 1 B each); TCP: headers only. A receiver acknowledges at least every second
#: packet (QUIC ack_ratio 2, TCP delayed ACKs), so there are at least n/2 of them.
QUIC_ACK_MIN = IP_UDP + QUIC_SHORT_MIN + 5
TCP_ACK_MIN = IP_TCP_TS
#: The seed's hosts (Linux 4.4): receive and send buffers autotune up to tcp_rmem[2] = 6 MiB
#: and tcp_wmem[2] = 4 MiB, which bound TCP's data in flight (the model's defaults too, fixed
#: at those maxima; set here explicitly so the comparison keeps the seed's). QUIC keeps the
#: model's flow-control windows, Chromium's: 15 MB per connection, 6 MB per stream.
LINUX_RMEM_MAX = 6 * 1024 * 1024
LINUX_WMEM_MAX = 4 * 1024 * 1024
#: The handshake probe: a transfer of one packet's worth, timed at two delays.
PROBE_BYTES = 1000
PROBE_DELAYS_MS = (10, 50)
PROBE_BANDWIDTH_MBPS = 40
#: Long enough for the slowest point (5 Mbit/s, 120 ms, 5 % loss: TCP's Mathis rate
#: 1448 B x 8 / 0.24 s x 1.22 / sqrt(0.05) = 0.26 Mbit/s, about 1000 s); a transfer that does
#: not finish fails the completion check.
DURATION_S = 3600.0


def tbf_queue_bytes(bw_mbps: float) -> int:
    """tbf's queue limit: rate x latency + burst (tc's `latency` option)."""
    return int(bw_mbps * 1e6 / 8 * TBF_LATENCY_S) + TBF_BURST_BYTES


def jitter_base_ms(delay_ms: float, jitter_ms: float) -> tuple[float, float]:
    """(base delay, uniform jitter width) with mean `delay_ms` and standard deviation
    `jitter_ms`: a uniform variable on [a, a + w] has mean a + w/2 and deviation w / sqrt(12)."""
    width = math.sqrt(12.0) * jitter_ms
    base = delay_ms - width / 2
    if base < 0:
        raise ValueError(f"jitter {jitter_ms} ms: sqrt(3) x jitter exceeds the delay {delay_ms} ms")
    return base, width


def scenario(record_interval: str = "1s") -> dict[str, Any]:
    """The emulated link with one download flow; the sweeps set the point (`point`)."""
    return {
        "name": NAME,
        "run": {
            "duration": f"{DURATION_S:g}s",
            "seed": 1,
            "record_interval": record_interval,
            "record": {"queues": False, "links": False, "conn": False},
        },
        "nodes": {"server": {"kind": "host"}, "emu": {"kind": "router"}, "client": {"kind": "host"}},
        "links": [
            {
                "name": "netem",
                "a": "server",
                "b": "emu",
                "rate": "10Gbps",
                "delay": "10ms",
                "mtu": f"{MTU}B",
                "overhead": f"{L2_BYTES}B",
                "hold_limit": NETEM_LIMIT,
                "jitter": {"max": "0s", "reorder": True},
                "forward": {"loss": {"kind": "bernoulli", "p": 0.0}},
            },
            {
                "name": "tbf",
                "a": "emu",
                "b": "client",
                "rate": "100Mbps",
                "delay": "0s",
                "mtu": f"{MTU}B",
                "overhead": f"{L2_BYTES}B",
                "queue": {"bytes": f"{tbf_queue_bytes(100)}B", "packets": 1_000_000},
                "forward": {
                    "spikes": {
                        "period": f"{SPIKE_PERIOD_S:g}s",
                        "duration": f"{SPIKE_DURATION_S:g}s",
                        "fraction": 1.0,
                    }
                },
            },
        ],
        "quic": {"header": "rfc9000", "cc": "cubic", "handshake": True},
        "tcp": {
            "cc": "cubic",
            "sack": True,
            "tls": "1.2",
            "recv_buffer": f"{LINUX_RMEM_MAX}B",
            "send_buffer": f"{LINUX_WMEM_MAX}B",
        },
        "flows": [
            {
                "name": "download",
                "kind": "quic",
                "src": "server",
                "dst": "client",
                "app": "bulk",
                "bytes": f"{FILE_BYTES}B",
            }
        ],
    }


def point(
    protocol: str,
    bw_mbps: float,
    delay_ms: float,
    loss: float = 0.0,
    spikes: bool = False,
    jitter_ms: float = 0.0,
    file_bytes: int = FILE_BYTES,
) -> dict[str, Any]:
    """The scenario paths and values of one grid point."""
    _, kind, tls, _ = PROTOCOLS[protocol]
    base, width = jitter_base_ms(delay_ms, jitter_ms)
    return {
        "flows.download.kind": kind,
        "tcp.tls": tls,
        "flows.download.bytes": f"{file_bytes}B",
        "links.tbf.rate": f"{bw_mbps:g}Mbps",
        "links.tbf.queue.bytes": f"{tbf_queue_bytes(bw_mbps)}B",
        "links.netem.delay": f"{base:.6g}ms",
        "links.netem.jitter.max": f"{width:.6g}ms",
        "links.netem.forward.loss.p": loss,
        "links.tbf.forward.spikes.fraction": SPIKE_FRACTION if spikes else 1.0,
    }


def transfer_metrics(result: Result) -> dict[str, float]:
    """Sweep metric: transfer time, average bandwidth, bytes on the wire in both directions
    (IP datagrams: headers, ACKs, retransmissions, handshake) and the emulator's losses."""
    totals = result.totals
    flow = totals["flows"]["download"]
    kind = str(flow["kind"])
    t = flow.get("completion_time_s")
    t_s = math.nan if t is None else float(t)
    size = float(bytes_(str(result.scenario["flows"][0]["bytes"])))
    if kind == "quic":
        q = flow["quic"]
        sent = q["bytes_sent"] + IP_UDP * q["packets_sent"]
        back = q["receiver_bytes_sent"] + IP_UDP * q["receiver_packets_sent"]
        packets, back_packets = q["packets_sent"], q["receiver_packets_sent"]
        retx = q["retransmitted_bytes"]
        events, declared = q["congestion_events"], q["packets_lost"]
    else:
        c = flow["tcp"]
        sent = c["bytes_sent"] + 20 * c["segments_sent"]
        back = c["receiver_bytes_sent"] + 20 * c["receiver_segments_sent"]
        packets, back_packets = c["segments_sent"], c["receiver_segments_sent"]
        retx = c["retransmitted_bytes"]
        events = c["sack_recoveries"] + c["reno_recoveries"] + c["rtos"]
        declared = c["retransmitted_segments"]
    links = totals["links"]
    fwd = _channel(links, "netem", forward=True)
    lost = fwd["frames_serialized"] - fwd["packets"]
    return {
        "time_s": t_s,
        "bandwidth_mbps": size * 8 / t_s / 1e6 if t_s > 0 else math.nan,
        "overhead": (sent + back) / size,
        "wire_bytes": float(sent + back),
        "forward_bytes": float(sent),
        "reverse_bytes": float(back),
        "forward_packets": float(packets),
        "reverse_packets": float(back_packets),
        "retransmitted_bytes": float(retx),
        "congestion_events": float(events),
        "declared_lost": float(declared),
        "netem_serialized": float(fwd["frames_serialized"]),
        "netem_lost": float(lost),
        "queue_drops": float(sum(q["dropped_packets"] for q in totals["queues"].values()) - lost),
    }


#: The columns `transfer_metrics` returns.
METRIC_KEYS = (
    "time_s",
    "bandwidth_mbps",
    "overhead",
    "wire_bytes",
    "forward_bytes",
    "reverse_bytes",
    "forward_packets",
    "reverse_packets",
    "retransmitted_bytes",
    "congestion_events",
    "declared_lost",
    "netem_serialized",
    "netem_lost",
    "queue_drops",
)


def _channel(links: Mapping[str, Any], link: str, forward: bool) -> Mapping[str, Any]:
    """The totals of one direction of `link` (channels are named `link:a->b`)."""
    ends = {"netem": ("server", "emu"), "tbf": ("emu", "client")}[link]
    a, b = ends if forward else ends[::-1]
    for name, v in links.items():
        if name.startswith(f"{link}") and name.endswith(f"{a}->{b}"):
            return v  # type: ignore[no-any-return]
    raise KeyError(f"no channel {link} {a}->{b} in {sorted(links)}")


def received_series(result: Result) -> pd.DataFrame:
    """Sweep metric: cumulative IP bytes of the download's packets that reached the client, at
    the end of each record interval: what the seed's tcpdump counted (the wire, not the
    in-order bytes the application has, which wait for retransmissions)."""
    f = result.flows
    f = f[f["flow"].astype(str) == "download"].sort_values("t_s")
    step = result.record_interval_s
    out = f[["t_s"]].copy()
    out["t_s"] = out["t_s"] + step
    out["key"] = "received_bytes"
    out["value"] = f["wire_recv_bytes"].cumsum().astype(float)
    return out


# --- theory ------------------------------------------------------------------------------------


def data_bytes_min(protocol: str, file_bytes: int) -> tuple[int, int]:
    """(data packets, their IP bytes) at least: full packets of the largest payload."""
    _, kind, tls, _ = PROTOCOLS[protocol]
    if kind == "quic":
        payload = MTU - IP_UDP - QUIC_SHORT_MIN - STREAM_MIN
        n = math.ceil(file_bytes / payload)
        return n, file_bytes + n * (IP_UDP + QUIC_SHORT_MIN + STREAM_MIN)
    stream = file_bytes + TLS_OVERHEAD[tls] * math.ceil(file_bytes / TLS_RECORD)
    payload = MTU - IP_TCP_TS
    n = math.ceil(stream / payload)
    return n, stream + n * IP_TCP_TS


def overhead_min(protocol: str, file_bytes: int = FILE_BYTES) -> float:
    """Bytes on the wire / file size, at least: data packets with the least headers, and one
    of the smallest ACKs per two of them."""
    n, data = data_bytes_min(protocol, file_bytes)
    ack = QUIC_ACK_MIN if PROTOCOLS[protocol][1] == "quic" else TCP_ACK_MIN
    return (data + (n // 2) * ack) / file_bytes


def serialize_until(start_s: float, bits: float, bw_bps: float, spikes: bool) -> float:
    """When `bits` have crossed the tbf link if it transmits without pause from `start_s`,
    at its rate (with the spike schedule if `spikes`)."""
    if not spikes:
        return start_s + bits / bw_bps
    t, left = start_s, bits
    while True:
        k = math.floor(t / SPIKE_PERIOD_S)
        in_spike = k >= 1 and t < k * SPIKE_PERIOD_S + SPIKE_DURATION_S
        rate = bw_bps * SPIKE_FRACTION if in_spike else bw_bps
        end = k * SPIKE_PERIOD_S + SPIKE_DURATION_S if in_spike else (k + 1) * SPIKE_PERIOD_S
        if left <= rate * (end - t):
            return t + left / rate
        left -= rate * (end - t)
        t = end


def time_min(
    protocol: str,
    bw_mbps: float,
    delay_ms: float,
    spikes: bool = False,
    jitter_ms: float = 0.0,
    file_bytes: int = FILE_BYTES,
) -> float:
    """The least transfer time: the handshake's round trips at the least delay (the sender
    may send data after them), the data's first crossing of netem, then every data frame
    serialized on tbf without a gap."""
    k = PROTOCOLS[protocol][3]
    base_s = jitter_base_ms(delay_ms, jitter_ms)[0] / 1e3
    n, data = data_bytes_min(protocol, file_bytes)
    start = k * 2 * base_s + base_s
    return serialize_until(start, (data + n * L2_BYTES) * 8, bw_mbps * 1e6, spikes)


# --- sweeps ------------------------------------------------------------------------------------


def grid_points(quick: bool) -> dict[str, list[dict[str, Any]]]:
    """Each experiment's points (protocol and link settings, as `point`'s keywords)."""
    protos = list(PROTOCOLS)
    if quick:
        main = [
            dict(protocol=p, bw_mbps=b, delay_ms=d, loss=loss)
            for p in protos
            for b in (100, 5)
            for d in DELAYS_MS
            for loss in LOSSES
        ]
        delay: list[dict[str, Any]] = [
            dict(protocol=p, bw_mbps=40, delay_ms=d, loss=0.0) for p in protos for d in (20, 120)
        ]
        spikes = [dict(protocol=p, bw_mbps=40, delay_ms=10, spikes=True) for p in protos]
        jitter = [
            dict(protocol=p, bw_mbps=JITTER_BANDWIDTH_MBPS, delay_ms=JITTER_DELAY_MS, jitter_ms=j)
            for p in protos
            for j in QUICK_JITTER_MS
        ]
    else:
        main = [
            dict(protocol=p, bw_mbps=b, delay_ms=d, loss=loss, spikes=s)
            for p in protos
            for b in BANDWIDTHS_MBPS
            for d in DELAYS_MS
            for loss in LOSSES
            for s in (False, True)
        ]
        delay = [
            dict(protocol=p, bw_mbps=b, delay_ms=d, loss=loss)
            for p in protos
            for b in BANDWIDTHS_MBPS
            for d in DELAY_SWEEP_MS
            for loss in LOSSES
            if d not in DELAYS_MS
        ]
        spikes = []
        jitter = [
            dict(protocol=p, bw_mbps=JITTER_BANDWIDTH_MBPS, delay_ms=JITTER_DELAY_MS, jitter_ms=j)
            for p in protos
            for j in JITTER_MS
        ]
    return {"grid": main + delay + spikes, "jitter": jitter}


def _sweep(ctx: Context, points: list[dict[str, Any]], suffix: str, repeat: int, **kw: Any) -> SweepResult:
    values = [point(**p) for p in points]
    keys = list(values[0])
    return ctx.sweep(
        kw.pop("doc", scenario()),
        params={k: [v[k] for v in values] for k in keys},
        zip=[keys],
        repeat=repeat,
        metrics=kw.pop("metrics", [transfer_metrics]),
        suffix=suffix,
    )


def tidy(sw: SweepResult, points: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per run: the point's settings (by matching the scenario values back) and the
    metrics without their prefix."""
    import pandas as pd

    keyed = {tuple(str(v) for v in point(**p).values()): p for p in points}
    keys = list(point(**points[0]))
    rows = []
    for _, r in sw.runs.iterrows():
        p = keyed[tuple(str(r[k]) for k in keys)]
        row: dict[str, Any] = {
            "protocol": p["protocol"],
            "bw_mbps": float(p["bw_mbps"]),
            "delay_ms": float(p["delay_ms"]),
            "loss_pct": 100.0 * float(p.get("loss", 0.0)),
            "spikes": bool(p.get("spikes", False)),
            "jitter_ms": float(p.get("jitter_ms", 0.0)),
            "rep": int(r["rep"]),
            "seed": int(r["seed"]),
            "error": r["error"] if isinstance(r["error"], str) else "",
        }
        for key in METRIC_KEYS:
            c = f"transfer_metrics.{key}"
            row[key] = float(r[c]) if c in sw.runs.columns else math.nan
        rows.append(row)
    data = pd.DataFrame(rows)
    data["time_min_s"] = [
        time_min(r.protocol, r.bw_mbps, r.delay_ms, r.spikes, r.jitter_ms) for r in data.itertuples()
    ]
    data["overhead_min"] = [overhead_min(p) for p in data["protocol"]]
    return data


def summarize(data: pd.DataFrame) -> pd.DataFrame:
    """Mean, standard deviation and count per point and protocol."""
    keys = ["protocol", "bw_mbps", "delay_ms", "loss_pct", "spikes", "jitter_ms"]
    agg = data.groupby(keys, sort=True).agg(
        n=("time_s", "count"),
        time_s=("time_s", "mean"),
        time_s_std=("time_s", "std"),
        bandwidth_mbps=("bandwidth_mbps", "mean"),
        bandwidth_mbps_std=("bandwidth_mbps", "std"),
        overhead=("overhead", "mean"),
        overhead_std=("overhead", "std"),
        retransmitted_bytes=("retransmitted_bytes", "mean"),
        congestion_events=("congestion_events", "mean"),
        declared_lost=("declared_lost", "mean"),
    )
    return agg.reset_index()


def handshake_rtts(ctx: Context) -> tuple[dict[str, float], pd.DataFrame]:
    """Round trips before the first byte, per protocol, from a one-packet transfer at two
    delays: its time is k x 2D + D + (serialization, the same at both delays), so
    k = ((T2 - T1) / (D2 - D1) - 1) / 2."""
    import pandas as pd

    pts: list[dict[str, Any]] = [
        dict(protocol=p, bw_mbps=PROBE_BANDWIDTH_MBPS, delay_ms=d, file_bytes=PROBE_BYTES)
        for p in PROTOCOLS
        for d in PROBE_DELAYS_MS
    ]
    sw = _sweep(ctx, pts, "handshake", 1)
    rows = []
    for p in pts:
        v = point(**p)
        match = sw.runs
        for k, val in v.items():
            match = match[match[k].astype(str) == str(val)]
        col = "transfer_metrics.time_s"
        t = float(match[col].iloc[0]) if col in match.columns and len(match) else math.nan
        rows.append({"protocol": p["protocol"], "delay_ms": p["delay_ms"], "time_s": t})
    frame = pd.DataFrame(rows)
    d1, d2 = (x / 1e3 for x in PROBE_DELAYS_MS)
    out = {}
    for proto, part in frame.groupby("protocol", sort=False):
        t = part.set_index("delay_ms")["time_s"]
        out[str(proto)] = ((t[PROBE_DELAYS_MS[1]] - t[PROBE_DELAYS_MS[0]]) / (d2 - d1) - 1) / 2
    return out, frame


def bound_checks(data: pd.DataFrame, experiment: str) -> list[Check]:
    """Per protocol: every transfer finished, none faster than its least time, none with less
    overhead than its headers allow."""
    checks = []
    for proto, part in data.groupby("protocol", sort=False):
        label = PROTOCOLS[str(proto)][0]
        done = part["time_s"].notna()
        checks.append(
            Check(
                f"{experiment}: {label} transfers completed",
                int(done.sum()),
                len(part),
                0,
                "runs",
                kind="exact",
                note="; ".join(sorted(set(part["error"]) - {""}))[:200],
            )
        )
        ok = part[done]
        ratio = (ok["time_s"] / ok["time_min_s"]).min() if len(ok) else math.nan
        checks.append(
            Check(
                f"{experiment}: {label} min(transfer time / least time)",
                float(ratio),
                1.0,
                0,
                "",
                kind="min",
                note="least time = handshake RTTs x 2D + D + data frames (least headers) / rate",
            )
        )
        oh = (ok["overhead"] / ok["overhead_min"]).min() if len(ok) else math.nan
        checks.append(
            Check(
                f"{experiment}: {label} min(overhead / header bound)",
                float(oh),
                1.0,
                0,
                "",
                kind="min",
                note=f"bound {overhead_min(str(proto)):.4f}: full packets, least headers, an ACK per 2",
            )
        )
    return checks


def loss_check(data: pd.DataFrame) -> Check:
    """netem's loss, as emulated: the fraction of frames lost on netem's S->C direction over
    all 5 % runs, within 4 binomial standard deviations of 5 %."""
    lossy = data[data["loss_pct"] > 0]
    n = float(lossy["netem_serialized"].sum())
    p = float(lossy["loss_pct"].iloc[0]) / 100 if len(lossy) else math.nan
    frac = float(lossy["netem_lost"].sum()) / n if n else math.nan
    tol = 4 * math.sqrt(p * (1 - p) / n) / p if n else 0.0
    return Check(
        "netem S->C loss fraction (all 5 % runs)",
        frac,
        p,
        tol,
        "",
        note=f"{int(n)} frames; tolerance 4 binomial standard deviations",
    )


def run(ctx: Context) -> Report:
    """The experiments, the handshake probe, the checks, the figures and the report."""
    from . import plots, text

    t0 = time.perf_counter()
    if ctx.quick and ctx.jobs is None and ctx.scheduler is None:
        # Quick mode's sweeps are a few seconds of simulation each: starting a process pool
        # per sweep cost more than it saved (36 s instead of 65 s on the 2-core machine).
        ctx = dataclasses.replace(ctx, jobs=1)
    repeat = QUICK_REPEAT if ctx.quick else REPEAT
    experiments = grid_points(ctx.quick)
    frames = {}
    for name, pts in experiments.items():
        sw = _sweep(ctx, pts, name, repeat)
        frames[name] = tidy(sw, pts)
    ks, probe = handshake_rtts(ctx)
    series_pts = series_points(ctx.quick)
    ts_sw = _sweep(ctx, series_pts, "series", repeat, doc=scenario("0.05s"), metrics=[received_series])
    series = plots.series_frame(ts_sw, series_pts, point)

    grid, jitter = frames["grid"], frames["jitter"]
    checks = bound_checks(grid, "grid") + bound_checks(jitter, "jitter")
    checks.append(loss_check(grid))
    for proto, k in ks.items():
        checks.append(
            Check(
                f"handshake: {PROTOCOLS[proto][0]} round trips before the first byte",
                k,
                PROTOCOLS[proto][3],
                1e-6,
                "RTT",
                note=f"{PROBE_BYTES} B transfer at {PROBE_DELAYS_MS[0]} and {PROBE_DELAYS_MS[1]} ms",
            )
        )
    summary = summarize(grid)
    jsummary = summarize(jitter)
    save_csv(grid, ctx.out / "runs.csv")
    save_csv(summary, ctx.out / "summary.csv")
    save_csv(jitter, ctx.out / "jitter_runs.csv")
    save_csv(jsummary, ctx.out / "jitter_summary.csv")
    save_csv(probe, ctx.out / "handshake_probe.csv")
    save_csv(series, ctx.out / "received_series.csv")
    figures = plots.write_all(ctx.out, summary, jsummary, series, ctx.quick)
    return Report(
        NAME,
        TITLE,
        "seed 004 (`004_fd7c45008ff16f15.txt`, a QUIC vs TCP benchmark on netem/tbf): transfer time, "
        "bandwidth and overhead of a 33.6 MB download over QUIC and over TCP + TLS, and the seed's "
        "conclusions one by one",
        checks,
        figures=figures,
        csvs=[
            ("runs.csv", "every run of the grid: settings, time, bandwidth, overhead, bytes, losses, bounds"),
            ("summary.csv", "per point and protocol: mean and standard deviation over the repetitions"),
            ("jitter_runs.csv", "every run of the jitter experiment"),
            ("jitter_summary.csv", "per jitter and protocol: means and standard deviations"),
            ("handshake_probe.csv", f"the {PROBE_BYTES} B transfers timing the handshakes"),
            (
                "received_series.csv",
                "IP bytes of the download received by the client over time (50 ms steps)",
            ),
        ],
        explanation=text.EXPLANATION,
        sections=text.findings(summary, jsummary, grid, ks, {p: overhead_min(p) for p in PROTOCOLS}),
        quick=ctx.quick,
        wall_s=time.perf_counter() - t0,
    )


def series_points(quick: bool) -> list[dict[str, Any]]:
    """The time-series runs: a favourable link, a lossy one and a jittery one."""
    conds: list[dict[str, Any]] = [
        dict(bw_mbps=100, delay_ms=10),
        dict(bw_mbps=40, delay_ms=50, loss=0.05),
        dict(
            bw_mbps=JITTER_BANDWIDTH_MBPS,
            delay_ms=JITTER_DELAY_MS,
            jitter_ms=(QUICK_JITTER_MS if quick else JITTER_MS)[-1],
        ),
    ]
    return [dict(protocol=p, **c) for c in conds for p in PROTOCOLS]
