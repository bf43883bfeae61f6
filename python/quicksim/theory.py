"""Closed-form expectations to overlay on sweep plots (all rates in Mbit/s).

Each function accepts numbers or numpy arrays, so `plot_metric(..., theory=...)` can evaluate it
on the swept axis.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fair_share_mbps", "link_goodput_mbps", "mathis_mbps", "window_limited_mbps"]


def mathis_mbps(mss_bytes: Any, rtt_s: Any, p: Any, c: float = math.sqrt(1.5)) -> Any:
    """Mathis et al. 1997, eq. (3): rate = MSS / RTT * C / sqrt(p), C = sqrt(3/2) for Reno-style
    halving with an ack for every packet (the INET README writes it as MSS / (RTT sqrt(2p/3)))."""
    return mss_bytes * 8.0 / rtt_s * c / (p**0.5) / 1e6


def mathis_tcp_mbps(mss_bytes: Any, rtt_s: Any, p: Any) -> Any:
    """`mathis_mbps` (C = sqrt(3/2)) for a TCP whose window does not grow during fast recovery
    (RFC 5681 section 3.2, RFC 6675 section 5; Linux): each loss cycle of W/2 round trips gets one
    more round trip at W/2, so the rate is that of Mathis x (W/2) / (W/2 + 1), W/2 = sqrt(2/(3p))
    segments (-3.7 % at p = 0.1 %, -0.9 % at p = 0.005 %)."""
    half = (2.0 / (3.0 * p)) ** 0.5
    return mathis_mbps(mss_bytes, rtt_s, p) * half / (half + 1.0)


def link_goodput_mbps(rate_bps: Any, payload_bytes: Any, frame_bytes: Any) -> Any:
    """A saturated link's goodput: its rate times the payload share of each frame."""
    return rate_bps * payload_bytes / frame_bytes / 1e6


def window_limited_mbps(window_bytes: Any, rtt_s: Any) -> Any:
    """A sender limited by a window (flow-control credit, or a fixed cwnd): window / RTT."""
    return window_bytes * 8.0 / rtt_s / 1e6


def fair_share_mbps(capacity_mbps: Any, flows: Any) -> Any:
    """Each of `flows` long-lived flows' share of a bottleneck under perfect fairness."""
    return capacity_mbps / flows
