"""Per phase of one run: the run cut at every start and stop of a congestion-controlled flow,
with each phase's rates, fair shares and fairness, as the CLI, the checks and the reproductions
report it. (Per run, for sweeps: `quicksim.metrics`; across runs: `quicksim.stats`.)

`phases(result)` cuts a run at every start and stop of a responsive (congestion-controlled)
flow and reports, per phase, each active flow's goodput and link-layer rate next to its fair
share of what the non-responsive background traffic leaves of the bottleneck, plus Jain's index.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

from ._rows import connection_rows
from .stats import jain

if TYPE_CHECKING:
    import pandas as pd

    from .results import Result

__all__ = ["bottleneck", "phases"]

#: Flow kinds that react to congestion; the others (udp, onoff) are background load.
RESPONSIVE = ("quic", "tcp", "quinn")


def bottleneck(result: Result) -> tuple[str, float, int] | None:
    """(link direction, rate in bit/s, per-frame overhead in bytes) of the bottleneck that every
    responsive flow shares (every flow's, if none is responsive), as the core reports it
    (`Result.network`; a flow's bottleneck is the slowest direction of its forward path,
    docs/links.md); None if they do not share one (or the result predates those facts). For a
    dumbbell this is `bottleneck:router1->router2` unless its access links are slower. A
    trace-driven bottleneck's rate is its trace's mean (`Trace::mean_rate`, rounded to whole
    bit/s; phases over a trace compare with that mean, not with the capacity of their window)."""
    net = result.network
    found = {route.get("bottleneck") for route in _routes(result)}
    if len(found) != 1 or None in found:
        return None
    name = str(found.pop())
    link = net["links"][name]
    return name, float(link["rate_bps"]), int(link["overhead_bytes"])


def _routes(result: Result) -> list[dict[str, Any]]:
    """The routes (`Result.network`) of the responsive flows, or of every flow if none is
    responsive."""
    net = result.network
    of_flow: dict[str, str] = net.get("flows") or {}
    kinds = {n: f.get("kind") for n, f in (result.totals.get("flows") or {}).items()}
    names = [n for n in of_flow if kinds.get(n) in RESPONSIVE] or list(of_flow)
    return [net["routes"][of_flow[n]] for n in names]


def _path_overhead(result: Result) -> int | None:
    """The per-frame overhead every link on the responsive flows' forward paths has, if they
    all have the same."""
    links = result.network.get("links") or {}
    found = {links[link]["overhead_bytes"] for route in _routes(result) for link in route["forward"]}
    return int(found.pop()) if len(found) == 1 else None


def phases(
    result: Result,
    *,
    settle_s: float = 1.0,
    capacity_bps: float | None = None,
    overhead_bytes: int | None = None,
) -> pd.DataFrame:
    """One row per (phase, active responsive flow).

    A phase runs between consecutive start/stop times of responsive flows; its first
    `settle_s` seconds are left out (the transient after a flow joins or leaves). Columns:
    phase, t0_s, t1_s, flow, n_active, goodput_mbps (delivered to the application),
    link_mbps (frames on the bottleneck: IP bytes received + link overhead), background_mbps
    (the non-responsive flows' frames), fair_share_mbps = (capacity - background) / n_active,
    share (link_mbps / fair_share_mbps), jain (of the phase's goodputs), total_goodput_mbps and
    goodput_of_available (total goodput / (capacity - background)). `capacity_bps` and
    `overhead_bytes` default to those of the responsive flows' shared bottleneck (`bottleneck`);
    without one, pass the capacity (the overhead defaults to their links' if all have one).
    """
    import pandas as pd

    bn = bottleneck(result)
    if capacity_bps is None:
        if bn is None:
            raise ValueError("phases(): the responsive flows share no bottleneck; pass capacity_bps")
        capacity_bps = bn[1]
    if overhead_bytes is None:
        overhead_bytes = bn[2] if bn is not None else _path_overhead(result)
        if overhead_bytes is None:
            raise ValueError("phases(): the flows' links differ in overhead; pass overhead_bytes")
    totals = result.totals["flows"]
    responsive = [n for n, f in totals.items() if f.get("kind") in RESPONSIVE]
    background = [n for n, f in totals.items() if f.get("kind") not in RESPONSIVE]
    end = float(result.meta.get("sim_end_s") or result.meta["duration_s"])
    cuts = sorted(
        {min(totals[n]["start_s"], end) for n in responsive}
        | {min(totals[n]["stop_s"], end) for n in responsive}
    )
    flows = connection_rows(result.flows)
    rows: list[dict[str, Any]] = []
    phase = 0
    for a, b in itertools.pairwise(cuts):
        t0 = a + settle_s
        if b - t0 < result.record_interval_s:
            continue
        active = [n for n in responsive if totals[n]["start_s"] <= a and totals[n]["stop_s"] >= b]
        if not active:
            continue
        w = flows[(flows.t_s >= t0 - 1e-9) & (flows.t_s + result.record_interval_s <= b + 1e-9)]
        span = w.t_s.nunique() * result.record_interval_s
        if span <= 0:
            continue
        per = w.groupby("flow", observed=True)[["delivered_bytes", "wire_recv_bytes", "recv_packets"]].sum()
        # Plain dicts: a pandas index intersection per flow made this quadratic in the flows
        # (3.2 s instead of 0.024 s for 1 600 flows, issue 38).
        wire, packets = per.wire_recv_bytes.to_dict(), per.recv_packets.to_dict()
        delivered = per.delivered_bytes.to_dict()

        def frame_mbps(
            names: list[str],
            wire: dict[str, int] = wire,
            packets: dict[str, int] = packets,
            span: float = span,
        ) -> float:
            count = sum(packets.get(n, 0) for n in names)
            return float((sum(wire.get(n, 0) for n in names) + overhead_bytes * count) * 8 / span / 1e6)

        bg = frame_mbps(background)
        avail = capacity_bps / 1e6 - bg
        fair = avail / len(active)
        good = {n: float(delivered.get(n, 0)) * 8 / span / 1e6 for n in active}
        j = jain(good.values())
        total = sum(good.values())
        phase += 1
        for n in active:
            link = frame_mbps([n])
            rows.append(
                {
                    "phase": phase,
                    "t0_s": t0,
                    "t1_s": b,
                    "flow": n,
                    "n_active": len(active),
                    "goodput_mbps": good[n],
                    "link_mbps": link,
                    "background_mbps": bg,
                    "fair_share_mbps": fair,
                    "share": link / fair if fair > 0 else float("nan"),
                    "jain": j,
                    "total_goodput_mbps": total,
                    "goodput_of_available": total / avail if avail > 0 else float("nan"),
                }
            )
    return pd.DataFrame(rows)


def format_phases(df: pd.DataFrame) -> str:
    """The per-phase table the CLI prints; columns widen to fit any rate (a 100 Gbit/s link's
    fair share), and a share below 0.1 keeps two significant digits instead of printing 0.00."""
    if df.empty:
        return ""
    headers = [
        "phase",
        "window (s)",
        "flow",
        "goodput Mbit/s",
        "link Mbit/s",
        "fair share",
        "share",
        "Jain",
        "total/available",
    ]
    rows = [
        [
            str(r.phase),
            f"{r.t0_s:.1f}-{r.t1_s:.1f}",
            str(r.flow),
            f"{r.goodput_mbps:,.3f}",
            f"{r.link_mbps:,.3f}",
            f"{r.fair_share_mbps:,.3f}",
            _ratio(r.share),
            f"{r.jain:.3f}",
            _ratio(r.goodput_of_available, ".3f"),
        ]
        for r in df.itertuples()
    ]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(headers)]
    left = {1, 2}  # the window and the flow's name read left to right; figures align right

    def line(cells: list[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in pairs).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(row) for row in rows)])


def _ratio(value: float, spec: str = ".2f") -> str:
    """A ratio near 1 with `spec`; a small one (below 0.1) with two significant digits, so a flow
    that reaches 0.4 % of its fair share reads 0.0041, not 0.00."""
    if not math.isfinite(value):
        return "-"
    if value != 0 and abs(value) < 0.1:
        return f"{value:.2g}"
    return format(value, spec)
