"""A fluid model of the window rules themselves (RFC 9438 CUBIC, RFC 5681 NewReno) under a
deterministic loss every 1/p packets, to explain where `cubic-rfc9438`'s runs differ from the
RFC's table.

RFC 9438 §5's table comes from two closed forms (the cubic curve alone, peaking exactly at W_max
in every epoch, and Reno's 1.2/√p) and takes the larger of the two *means*. The algorithm takes
the larger of the two *windows* at every instant (§4.3), switches W_est's slope from alpha_cubic
to 1 once it passes cwnd_prior, applies fast convergence (§4.7) when a loss comes a segment or
more below W_max, and holds the window for one RTT of recovery after each reduction (RFC 9002
§7.3.2). This model integrates exactly those rules in time steps of RTT/`steps_per_rtt`, windows
in segments, with no ACK clock, no slow start and no queue; the switches let each be turned off,
so the same code also gives the RFC's closed forms (see tests/test_cubic_fluid.py)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Rules", "simulate"]

C, BETA = 0.4, 0.7
#: RFC 9438 §4.3: alpha_cubic = 3 (1 - beta) / (1 + beta).
ALPHA = 3 * (1 - BETA) / (1 + BETA)


@dataclass(frozen=True)
class Rules:
    """Which of the protocol's rules the model applies (all on: what the simulator does)."""

    reno_friendly: bool = True
    fast_convergence: bool = True
    #: RTTs the window is held after each reduction (RFC 9002 §7.3.2: one).
    recovery_rtts: float = 1.0


def simulate(
    rtt: float,
    p: float,
    algo: str,
    w_first: float,
    *,
    warmup: int,
    epochs: int,
    rules: Rules = Rules(),
    steps_per_rtt: int = 20,
) -> tuple[float, list[float]]:
    """Starting with a loss at window `w_first` (segments), run `warmup + epochs` loss epochs of
    1/p packets each; return the time-weighted mean window over the last `epochs` and the window
    at every loss."""
    dt = rtt / steps_per_rtt
    n = 1 / p
    w_max = prior = w_first
    cwnd = (BETA if algo == "cubic" else 0.5) * w_first
    area = time = 0.0
    peaks = []
    for epoch in range(warmup + epochs):
        k = ((w_max - cwnd) / C) ** (1 / 3) if w_max > cwnd else 0.0
        w_est, w, t, sent = cwnd, cwnd, 0.0, 0.0
        while sent < n:
            ca = t - rules.recovery_rtts * rtt
            if ca >= 0:
                if algo == "cubic":
                    w_cubic = C * (ca - k) ** 3 + w_max
                    w_est += (ALPHA if w_est < prior else 1.0) * dt / rtt
                    w = max(w_cubic, w_est) if rules.reno_friendly else w_cubic
                else:
                    w += dt / rtt
            sent += w * dt / rtt
            if epoch >= warmup:
                area += w * dt
                time += dt
            t += dt
        peaks.append(w)
        if algo == "cubic":
            below = rules.fast_convergence and w <= w_max - 1
            w_max = w * (1 + BETA) / 2 if below else w
            prior, cwnd = w, BETA * w
        else:
            cwnd = 0.5 * w
    return area / time, peaks
