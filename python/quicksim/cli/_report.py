"""The human-readable run summary printed by `quicksim run`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["format_summary"]


def format_summary(summary: Mapping[str, Any]) -> str:
    """Render `Result.summary()` as a header line and tables of flows, queues and links."""
    meta = summary.get("meta") or {}
    parts = [_header(summary, meta)]
    if meta.get("stopped_early"):
        parts.append(f"stopped early at t = {_num(meta.get('sim_end_s'), '.3f')} s")
    flows = summary.get("flows") or {}
    if flows:
        parts.append(
            _table(
                [
                    "flow",
                    "kind",
                    "path",
                    "active (s)",
                    "goodput Mbit/s",
                    "OWD mean/p50/p95/p99 ms",
                    "sent pkts",
                    "delivered",
                    "dropped",
                    "retx kB",
                    "lost",
                ],
                [_flow_row(name, f) for name, f in flows.items()],
                left=4,
                drop_empty=True,
            )
        )
        if not any(f.get("owd_p50_s") is not None for f in flows.values()):
            parts[-1] += "\n(one-way and queueing delays not recorded: run.record.delays = true records them)"
    # Only queues where packets waited or were dropped: a dumbbell has many idle interfaces.
    queues = {
        name: q
        for name, q in (summary.get("queues") or {}).items()
        if q.get("max_packets") or q.get("dropped_packets")
    }
    if queues:
        parts.append(
            _table(
                ["queue", "enqueued", "dropped", "drop %", "max pkts", "max kB", "mean pkts", "wait p95 ms"],
                [
                    [
                        name,
                        _int(q.get("enqueued_packets")),
                        _int(q.get("dropped_packets")),
                        _num(_pct(q.get("drop_fraction")), ".2f"),
                        _int(q.get("max_packets")),
                        _num(_div(q.get("max_bytes"), 1e3), ".1f"),
                        _num(q.get("mean_packets"), ".1f"),
                        _num(_div(q.get("queueing_p95_s"), 1e-3), ".3f"),
                    ]
                    for name, q in queues.items()
                ],
                drop_empty=True,
            )
        )
    links = {name: link for name, link in (summary.get("links") or {}).items() if link.get("packets")}
    if links:
        parts.append(
            _table(
                ["link", "utilization %", "packets", "MB"],
                [
                    [
                        name,
                        _num(_pct(link.get("utilization")), ".1f"),
                        _int(link.get("packets")),
                        _num(_div(link.get("bytes"), 1e6), ".2f"),
                    ]
                    for name, link in links.items()
                ],
            )
        )
    return "\n\n".join(parts)


def _header(summary: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    events, wall = meta.get("events"), meta.get("wall_s")
    rate = f" ({events / wall / 1e6:.2f} M events/s)" if events and wall else ""
    version = (summary.get("version") or {}).get("quicksim", "?")
    return (
        f"{summary.get('scenario')}: seed {summary.get('seed')}, "
        f"{_num(meta.get('sim_end_s'), '.3f')} s simulated in {_num(wall, '.2f')} s, "
        f"{_int(events)} events{rate}, quicksim {version}"
    )


def _flow_row(name: str, f: Mapping[str, Any]) -> list[str]:
    # The transport's own block (summary.json `flows.<name>.<kind>`): QUIC counts packets declared
    # lost, TCP the segments it retransmitted.
    transport = f.get(str(f.get("kind"))) or {}
    lost = transport.get("packets_lost", transport.get("retransmitted_segments"))
    start, stop = f.get("start_s"), f.get("stop_s")
    return [
        name,
        str(f.get("kind", "-")),
        f"{f.get('src', '?')}->{f.get('dst', '?')}",
        f"{_num(start, 'g')}-{_num(stop, 'g') if stop is not None else 'end'}",
        _num(_div(f.get("mean_delivered_bps"), 1e6), ".3f"),
        _owd(f),
        _int(f.get("packets_sent")),
        _int(f.get("packets_delivered")),
        _int(f.get("packets_dropped")),
        _num(_div(transport.get("retransmitted_bytes"), 1e3), ".1f") if transport else "-",
        _int(lost) if transport else "-",
    ]


def _owd(f: Mapping[str, Any]) -> str:
    """The flow's one-way delay statistics in ms (`-` when not recorded or nothing delivered)."""
    values = [f.get(f"owd_{s}_s") for s in ("mean", "p50", "p95", "p99")]
    numbers = [float(v) for v in values if v is not None]
    if len(numbers) < len(values):
        return "-"
    return "/".join(format(v * 1e3, ".2f") for v in numbers)


def _table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1, *, drop_empty: bool = False
) -> str:
    """Plain-text table: the first `left` columns (names) left-aligned, figures right-aligned.
    `drop_empty` leaves out a figure column that is "-" in every row (a statistic not recorded)."""
    if drop_empty and rows:
        keep = [i for i in range(len(headers)) if i < left or any(r[i] != "-" for r in rows)]
        headers = [headers[i] for i in keep]
        rows = [[r[i] for i in keep] for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        out = [
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def _int(value: Any) -> str:
    return "-" if value is None else f"{int(value):,}"


def _num(value: Any, spec: str) -> str:
    return "-" if value is None else format(float(value), spec)


def _div(value: Any, by: float) -> float | None:
    return None if value is None else float(value) / by


def _pct(value: Any) -> float | None:
    return None if value is None else 100.0 * float(value)
