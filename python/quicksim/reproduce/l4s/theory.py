"""Closed forms the l4s reproduction checks against: the DCTCP queue's sawtooth (Alizadeh et
al., "Data Center TCP", SIGCOMM 2010, section 3.3) and the DualQ coupling's rate balance (RFC
9332 section 2.1), and the published DualQ figures the report sets beside the measurements."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class DctcpSawtooth:
    """The DCTCP paper's fluid analysis of N synchronized flows on a step-marking queue (its
    section 3.3, eqs. 7-11): everything in packets and round-trip times."""

    n: int
    k: float
    bdp: float  # C x RTT, packets

    @property
    def w_star(self) -> float:
        """The window at which the queue reaches K: (C RTT + K) / N (eq. 6's critical window)."""
        return (self.bdp + self.k) / self.n

    @property
    def alpha(self) -> float:
        """The fraction of marked packets in steady state, from alpha^2 (1 - alpha/4) = 2 / W*... its
        small-alpha form alpha ~ sqrt(2 / W*) (eq. 8)."""
        return math.sqrt(2.0 / self.w_star)

    @property
    def amplitude(self) -> float:
        """The queue's oscillation amplitude A = N D = (1/2) sqrt(2 N (C RTT + K)) (eq. 9)."""
        return 0.5 * math.sqrt(2.0 * self.n * (self.bdp + self.k))

    @property
    def period_rtts(self) -> float:
        """The oscillation period T_C = D = (1/2) sqrt(2 (C RTT + K) / N), in RTTs (eq. 10)."""
        return 0.5 * math.sqrt(2.0 * (self.bdp + self.k) / self.n)

    @property
    def q_max(self) -> float:
        """The queue's peak: K + N (each flow's window overshoots W* by one packet in the RTT
        before the marks reach it, eq. 11's Q_max)."""
        return self.k + self.n

    @property
    def q_min(self) -> float:
        """The queue's trough Q_max - A (eq. 11)."""
        return self.q_max - self.amplitude


def coupled_rate_ratio(k: float = 2.0, scalable_c: float = 2.0, classic_c: float = 1.22) -> float:
    """The L4S : Classic rate ratio the coupling gives two flows of equal RTT (RFC 9332 section
    2.1): a scalable flow's window is scalable_c / p_L (DCTCP and Prague: 2 / p), a Classic
    Reno-friendly flow's classic_c / sqrt(p_C) (Mathis: 1.22 / sqrt(p)), and p_L = k sqrt(p_C),
    so W_L / W_C = scalable_c / (k classic_c): 0.82 at k = 2."""
    return scalable_c / (k * classic_c)


#: The design range stated for the Prague : CUBIC rate ratio: within a factor of 2 of parity
#: either way. RFC 9332 section 2.1 chooses k = 2 so that a scalable flow and a Classic flow get
#: "roughly equal" rates; the ratio moves with CUBIC's mode (Reno-friendly at small BDPs,
#: cubic growth at large ones, getting more than Reno) and with the RTT (both windows are per
#: RTT, but Prague's RTT independence targets 25 ms), so a factor of two is the band the
#: coupling is designed to hold, not a tolerance around the 0.82 point.
RATIO_RANGE = (0.5, 2.0)

#: The published DualQ figures set beside the measurements. The L4S team's testbed paper: De
#: Schepper, Albisser, Tilmans, Briscoe, "Dual Queue Coupled AQM: Deployable Very Low Queuing
#: Delay for All", arXiv:2209.01078 (2022), abstract and evaluation: L4S queue delay median
#: 100-300 us and p99 below 2 ms, on a testbed of residential broadband equipment.
DUALQ_PAPER = (
    'De Schepper et al., "Dual Queue Coupled AQM: Deployable Very Low Queuing Delay for All", '
    "arXiv:2209.01078"
)
L4S_P99_MAX_MS = 2.0
CLASSIC_TARGET_MS = 15.0
