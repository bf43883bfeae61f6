"""NewReno and CUBIC written in Python (`quicksim.cc.Controller`), line for line as the Rust ones
(crates/quicksim-cc/src/algos/newreno.rs and cubic.rs, without HyStart++), in the same integer
arithmetic: the tests check that they give bit-identical runs (trace hash, tables) to the
built-in controllers, and measure what a Python controller costs. Also the faulty controllers
the error tests use, and one that draws random numbers.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from quicksim.cc import Controller

U64_MAX = 2**64 - 1
US3_PER_S3 = 10**18
PS_PER_US = 10**6


def ratio(v: float) -> tuple[int, int]:
    """`v` to 6 decimals as a reduced fraction (quicksim_cc::registry::ratio)."""
    f = Fraction(round(v * 1_000_000), 1_000_000)
    return f.numerator, f.denominator


class PyNewReno(Controller):
    """quicksim's NewReno (INET's QUIC NewReno; RFC 9002 §7), options as the Rust `Config`."""

    def __init__(
        self,
        init: Any,
        exact_increase: bool = True,
        per_ack_increase: bool = False,
        ssthresh_from_flight: bool = False,
    ) -> None:
        super().__init__(init)
        self.exact = exact_increase
        self.per_ack = per_ack_increase
        self.from_flight = ssthresh_from_flight
        self.ss = U64_MAX
        self.carry = 0
        self.recovery_start = 0

    def on_ack(self, cx: Any, ack: Any) -> None:
        exact = self.exact
        if exact and cx.bytes_in_flight == 0:
            self.carry = 0
        if ack.sent_time_ps < self.recovery_start:
            if exact and self.cwnd >= self.ss:
                self.carry += ack.bytes
            return
        if ack.app_limited:
            self.state = "app_limited"
            return
        self.state = None
        if self.per_ack:
            return
        cwnd = self.cwnd
        if cwnd < self.ss:
            self.cwnd = cwnd + ack.bytes
            if exact:
                self.carry = 0
        elif exact:
            mds = cx.mds
            carry = self.carry + ack.bytes
            if carry > max(cwnd - mds, 0):
                cwnd += mds
                carry = carry - cwnd if cwnd < carry else 0
                self.cwnd = cwnd
            self.carry = carry
        else:
            n = cx.mds * ack.bytes + self.carry
            self.carry = n % cwnd
            self.cwnd = cwnd + n // cwnd

    def on_ack_end(self, cx: Any, ack: Any) -> None:
        if not self.per_ack or ack.app_limited or ack.largest_acked_sent_time_ps < self.recovery_start:
            return
        mds = cx.mds
        left = ack.acked_bytes
        if self.cwnd < self.ss:
            add = min(left, mds)
            self.cwnd += add
            left -= add
        if self.cwnd >= self.ss and left > 0:
            self.cwnd += max(mds * mds // self.cwnd, 1)

    def on_congestion_event(self, cx: Any, ev: Any) -> None:
        if not ev.sent_time_ps < self.recovery_start:
            self.recovery_start = cx.now_ps
            if ev.cause == "rto" and not self.from_flight:
                ss = max(ev.lost_bytes // 2, cx.minimum_window)
            elif ev.cause in ("loss", "ecn", "rto") and self.from_flight:
                ss = max(cx.bytes_in_flight // 2, cx.minimum_window)
            else:
                ss = self.cwnd // 2
            self.ss = ss
            self.ssthresh = ss
            self.cwnd = max(ss, cx.minimum_window)
            if self.exact:
                self.carry = 0
            self.state = "recovery"
        if ev.cause == "persistent_congestion":
            self.cwnd = cx.loss_window
            self.recovery_start = 0
            self.state = None
        elif ev.cause == "rto":
            self.cwnd = cx.loss_window
            self.recovery_start = cx.now_ps
            self.state = "recovery"


def icbrt(x: int) -> int:
    """Floor of the cube root of a non-negative integer."""
    r = round(x ** (1 / 3)) if x else 0
    while r**3 > x:
        r -= 1
    while (r + 1) ** 3 <= x:
        r += 1
    return r


class PyCubic(Controller):
    """quicksim's CUBIC (RFC 9438 on RFC 9002's recovery), integer arithmetic as in Rust."""

    def __init__(
        self,
        init: Any,
        beta: float = 0.7,
        c: float = 0.4,
        fast_convergence: bool = True,
        reno_friendly: bool = True,
    ) -> None:
        super().__init__(init)
        self.bn, self.bd = ratio(beta)
        self.cn, self.cd = ratio(c)
        self.fast_convergence = fast_convergence
        self.reno_friendly = reno_friendly
        self.ss = U64_MAX
        self.w_max = 0
        self.cwnd_prior = 0
        self.epoch = False
        self.e_start = self.k_us = self.origin = self.w_est = self.cubic_rem = self.est_rem = 0
        self.recovery_start: int | None = None

    def curve(self, t_ps: int, mds: int) -> int:
        dt = t_ps // PS_PER_US - self.k_us
        delta = (dt * dt * dt * (self.cn * mds)) // (self.cd * US3_PER_S3)
        return min(max(self.origin + delta, 0), U64_MAX)

    def on_ack(self, cx: Any, ack: Any) -> None:
        rs = self.recovery_start
        if rs is not None and ack.sent_time_ps <= rs:
            return
        if ack.app_limited:
            self.state = "app_limited"
            return
        self.state = None
        cwnd = self.cwnd
        if cwnd < self.ss:
            self.cwnd = cwnd + ack.bytes
            return
        mds = cx.mds
        now = cx.now_ps
        if not self.epoch:
            self.epoch = True
            self.e_start = now
            if self.w_max > cwnd:
                k3 = (self.w_max - cwnd) * (US3_PER_S3 * self.cd) // (mds * self.cn)
                self.k_us, self.origin = icbrt(k3), self.w_max
            else:
                self.k_us, self.origin = 0, cwnd
            self.w_est = cwnd
            self.cubic_rem = self.est_rem = 0
        t = max(now - self.e_start, 0)
        target = min(max(self.curve(t + cx.smoothed_rtt_ps, mds), cwnd), cwnd + cwnd // 2)
        n = (target - cwnd) * ack.bytes + self.cubic_rem
        self.cubic_rem = n % cwnd
        new = cwnd + n // cwnd
        if self.reno_friendly:
            if self.w_est >= self.cwnd_prior:
                an, ad = 1, 1
            else:
                an, ad = 3 * (self.bd - self.bn), self.bd + self.bn
            n = an * mds * ack.bytes + self.est_rem
            d = ad * cwnd
            self.est_rem = n % d
            self.w_est = min(self.w_est + n // d, U64_MAX)
            if self.curve(t, mds) < self.w_est:
                new = max(new, self.w_est)
        self.cwnd = new

    def on_congestion_event(self, cx: Any, ev: Any) -> None:
        rs = self.recovery_start
        if rs is None or ev.sent_time_ps > rs:
            self.recovery_start = cx.now_ps
            self.state = "recovery"
            cwnd = self.cwnd
            if self.fast_convergence and cwnd + cx.mds <= self.w_max:
                self.w_max = cwnd * (self.bd + self.bn) // (2 * self.bd)
            else:
                self.w_max = cwnd
            self.cwnd_prior = cwnd
            self.ss = max(cwnd * self.bn // self.bd, cx.minimum_window)
            self.ssthresh = self.ss
            self.cwnd = self.ss
            self.epoch = False
        if ev.cause == "persistent_congestion":
            self.cwnd = cx.loss_window
            self.recovery_start = None
            self.state = None
            self.w_max = 0
            self.epoch = False
        elif ev.cause == "rto":
            self.cwnd = cx.loss_window
            self.recovery_start = cx.now_ps
            self.state = "recovery"
            self.w_max = 0
            self.epoch = False


class PyDctcp(PyNewReno):
    """quicksim's DCTCP (crates/quicksim-cc/src/algos/dctcp.rs, RFC 8257) on PyNewReno, in the
    same integer arithmetic: alpha in units of 2^-20, g = 1/16, alpha 1 at the start; marks come
    as `ack.ce_packets` (a scalable ECN response), and TCP spreads the cut as it does for Rust's.
    The window grows as Linux's `tcp_reno_cong_avoid` (`carry` counts segments, zeroed by a
    reduction unless `keep_increase_count`), after the cut, so the ACK that cuts grows nothing."""

    ecn_response = "scalable"
    spreads_ecn_reduction = True
    ce_change_ack = "apart"
    ONE = 1 << 20

    def __init__(self, init: Any, keep_increase_count: bool = False) -> None:
        super().__init__(init, exact_increase=False, per_ack_increase=True)
        self.keep = keep_increase_count
        self.alpha = self.ONE
        self.acked = 0
        self.marked = 0
        self.window_end = 0

    def on_ack_end(self, cx: Any, ack: Any) -> None:
        self.acked += ack.acked_packets
        self.marked += ack.ce_packets
        if ack.largest_acked_sent_time_ps >= self.window_end:
            f = min(self.marked, self.acked) * self.ONE // self.acked if self.acked else 0
            self.alpha = (self.alpha * 15 + f) // 16
            self.acked = self.marked = 0
            self.window_end = cx.now_ps
        if ack.ce_packets > 0 and not ack.largest_acked_sent_time_ps < self.recovery_start:
            cwnd = self.cwnd
            cwnd = max(cwnd - cwnd * self.alpha // (2 * self.ONE), cx.minimum_window)
            self.cwnd = self.ss = self.ssthresh = cwnd
            self.recovery_start = cx.now_ps
            if not self.keep:
                self.carry = 0
            self.state = "recovery"
        if ack.app_limited or ack.largest_acked_sent_time_ps < self.recovery_start:
            return
        mds, acked = cx.mds, ack.acked_packets
        if self.cwnd < self.ss:
            before = self.cwnd
            self.cwnd = min(self.cwnd + acked * mds, self.ss)
            acked -= min((self.cwnd - before) // mds, acked)
            if acked == 0:
                return
        w = max(self.cwnd // mds, 1)
        if self.carry >= w:
            self.carry = 0
            self.cwnd += mds
        self.carry += acked
        if self.carry >= w:
            delta = self.carry // w
            self.carry -= delta * w
            self.cwnd += delta * mds

    def on_congestion_event(self, cx: Any, ev: Any) -> None:
        start = self.recovery_start
        super().on_congestion_event(cx, ev)
        if self.recovery_start != start and not self.keep:
            self.carry = 0


class BadEcn(PyNewReno):
    """Declares an ECN response that does not exist."""

    ecn_response = "scalable-ish"


class BadCeAck(PyNewReno):
    """Declares a way of acknowledging CE changes that does not exist."""

    ce_change_ack = "sometimes"


class Fixed(Controller):
    """A fixed window of `segments` packets: the cheapest controller (measures the bare cost)."""

    def __init__(self, init: Any, segments: int = 10) -> None:
        super().__init__(init)
        self.cwnd = segments * init.mds


class RaisesAt(PyNewReno):
    """NewReno that raises in on_ack once the simulated time reaches `at_s`."""

    def __init__(self, init: Any, at_s: float = 6.0) -> None:
        super().__init__(init)
        self.at_ps = int(at_s * 1e12)

    def on_ack(self, cx: Any, ack: Any) -> None:
        if cx.now_ps >= self.at_ps:
            raise ZeroDivisionError("boom")
        super().on_ack(cx, ack)


class BadWindow(PyNewReno):
    """NewReno whose window becomes `value` at the first congestion event."""

    def __init__(self, init: Any, value: Any = -1) -> None:
        super().__init__(init)
        self.value = value

    def on_congestion_event(self, cx: Any, ev: Any) -> None:
        super().on_congestion_event(cx, ev)
        self.cwnd = float("nan") if self.value == "nan" else self.value


class InterruptedAt(RaisesAt):
    """As if Ctrl-C arrived while on_ack ran (Python raises KeyboardInterrupt there)."""

    def on_ack(self, cx: Any, ack: Any) -> None:
        if cx.now_ps >= self.at_ps:
            raise KeyboardInterrupt
        PyNewReno.on_ack(self, cx, ack)


SEEDS: list[int] = []
"""`init.seed` of every `RandomWindow` made, in order (the seed test reads it)."""


class RandomWindow(PyNewReno):
    """NewReno whose window after each congestion event is cut by a random 30-70 %, drawn from
    `random.Random(init.seed)`, the controller's own stream: runs repeat, seed for seed."""

    def __init__(self, init: Any) -> None:
        super().__init__(init)
        SEEDS.append(init.seed)
        self.rng = random.Random(init.seed)

    def on_congestion_event(self, cx: Any, ev: Any) -> None:
        super().on_congestion_event(cx, ev)
        self.cwnd = max(cx.minimum_window, self.cwnd * self.rng.randint(30, 70) // 100)
