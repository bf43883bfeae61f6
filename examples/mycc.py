"""A CUBIC-inspired congestion controller written in Python, in the spirit of the student study
of seed 001 (COL334 "Congestion Control over UDP"): start from 1 MSS, slow start by the acked
bytes, then cubic growth in the time since the last loss, never slower than a Reno-like window
`w_tcp` tracked beside it; on a loss a multiplicative decrease (W_max remembered), on a timeout
back to 1 MSS and slow start. Floats, as a student writes it: not bit-exact RFC 9438 (the
built-in `cubic` is), but the same shape.

Run it:  quicksim run examples/mycc.toml --allow-python   (cc = "py:examples.mycc:MyCC")
Check it: quicksim conformance py:examples.mycc:MyCC --quick
"""

from __future__ import annotations

from typing import Any

from quicksim.cc import Controller


class MyCC(Controller):
    """CUBIC-inspired: W(t) = C (t - K)^3 + W_max after a loss, with a TCP-friendly floor."""

    def __init__(self, init: Any, c: float = 0.4, beta: float = 0.7, initial_segments: int = 1) -> None:
        super().__init__(init)
        self.c, self.beta = c, beta
        self.mss = init.mds
        self.cwnd = initial_segments * init.mds  # the study starts from 1 MSS
        self.ssthresh = None
        self.w_max = 0.0  # segments
        self.k = 0.0  # seconds
        self.epoch_start_s: float | None = None
        self.w_tcp = 0.0  # segments
        self.recovery_until_ps = -1  # packets sent before this were in flight at the last loss

    def on_ack(self, cx: Any, ack: Any) -> None:
        if ack.sent_time_ps <= self.recovery_until_ps or ack.app_limited:
            return  # one reduction per loss event; no growth when not window-limited
        self.state = None
        if self.ssthresh is None or self.cwnd < self.ssthresh:
            self.cwnd += ack.bytes  # slow start: +acked bytes (doubles per RTT)
            return
        now_s = cx.now_s
        if self.epoch_start_s is None:  # first ACK of a congestion-avoidance epoch
            self.epoch_start_s = now_s
            w = self.cwnd / self.mss
            self.k = max(self.w_max - w, 0.0) / self.c
            self.k = self.k ** (1 / 3)
            self.w_tcp = w
        t = now_s - self.epoch_start_s + cx.smoothed_rtt_ps * 1e-12
        w_cubic = self.c * (t - self.k) ** 3 + self.w_max
        w = self.cwnd / self.mss
        # Reno-like estimate: +3(1-beta)/(1+beta) segments per window of acked data.
        self.w_tcp += 3 * (1 - self.beta) / (1 + self.beta) * (ack.bytes / self.mss) / w
        target = max(w_cubic, self.w_tcp)
        if target > w:  # move toward the target over one window of ACKs
            w += min(target - w, w / 2) * (ack.bytes / self.mss) / w
        self.cwnd = max(int(w * self.mss), 2 * self.mss)

    def on_congestion_event(self, cx: Any, ev: Any) -> None:
        if ev.sent_time_ps <= self.recovery_until_ps and ev.cause in ("loss", "ecn"):
            return
        self.recovery_until_ps = cx.now_ps
        w = self.cwnd / self.mss
        # Fast convergence: release some room if we lost below the previous maximum.
        self.w_max = w * (1 + self.beta) / 2 if w < self.w_max else w
        self.ssthresh = max(int(self.cwnd * self.beta), cx.minimum_window)
        self.epoch_start_s = None
        if ev.cause in ("rto", "persistent_congestion"):
            self.cwnd = self.mss  # timeout: back to 1 MSS and slow start
            self.state = None
        else:
            self.cwnd = self.ssthresh
            self.state = "recovery"
