//! NewReno as the INET QUIC model implements it (RFC 9002 §7 plus INET's quirks).
//!
//! Follows `NewRenoCongestionController.cc` of INET's `transportlayer/quic` line by line:
//! - Slow start adds the acked packet size; no ABC limit, no HyStart (RFC 9002 §7.3.1), unless
//!   `hystart = true` turns on HyStart++ (RFC 9406, [`crate::hystart`]; not in INET).
//! - Congestion avoidance is either RFC 5681 §3.1 byte counting (INET's default,
//!   `accurateIncreaseInNewRenoCongestionAvoidance = true`) with INET's `pba > cwnd - MDS`
//!   test, or the approximate `cwnd += MDS·acked/cwnd` of the RFC 9002 pseudo-code with an
//!   integer remainder (RFC 9002 Appendix B.5).
//! - A packet is "in recovery" when it was sent strictly **before** the recovery start time.
//!   RFC 9002 §7.3.2 / Appendix B.4 uses `sent_time <= recovery_start`; INET uses `<`, so a
//!   packet sent at the very instant of the congestion event (e.g. the `allowOnePacket` packet)
//!   counts as new. We follow INET.
//!
//! With `per_ack_increase` (the default on TCP, whose [`crate::WindowRules`] say so) the window
//! grows once per ACK instead, as RFC 5681 §3.1 writes it and ns-3's `TcpNewReno` does it: slow start adds at most one SMSS per ACK (RFC 3465's L = 1),
//! congestion avoidance adds max(1, ⌊SMSS·SMSS/cwnd⌋) per ACK (eq. 3), whatever the ACK covers.
//! With delayed ACKs (one ACK per two segments) the window then grows by about half an SMSS
//! per round trip, and Mathis' formula holds with b = 2 (ns-3's ratio of about 0.70 to the
//! b = 1 formula).
//!
//! The initial, minimum and loss windows are the transport's ([`crate::WindowRules`]: RFC 9002
//! §7.2 for QUIC). An ECN-CE mark is treated as a loss (RFC 9002 §7.1). An RTO (TCP, not INET's
//! QUIC) follows RFC 5681 §3.1: ssthresh = max(FlightSize/2, 2·SMSS), cwnd = the loss window.
//!
//! INET's `allowOnePacket` (after a congestion event the next window query returns one MDS,
//! RFC 9002 §7.3.2 "MAY send a packet immediately") is a transport concern and is not modelled
//! here: the transport should allow one packet after `on_congestion_event` reduced the window.

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};

use crate::registry::Algorithm;
use crate::{
    AckEvent, AckSummary, CcCtx, HyStart, CcMetrics, CongestionCause, CongestionController, CongestionEvent, Growth, InitCtx, Phase,
};

/// NewReno settings. `Config::default()` is INET's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Congestion avoidance by RFC 5681 §3.1 byte counting (`true`, INET's default
    /// `accurateIncreaseInNewRenoCongestionAvoidance`), else `cwnd += MDS·acked/cwnd` per ACK.
    /// The scenario's older `quic.exact_increase` key sets it too.
    pub exact_increase: bool,
    /// HyStart++ (RFC 9406) in slow start (default off, as INET).
    pub hystart: bool,
    /// Grow once per ACK (RFC 5681 §3.1 as written; ns-3 `TcpNewReno`): slow start
    /// +min(acked, SMSS), congestion avoidance +max(1, ⌊SMSS²/cwnd⌋), from `on_ack_end`, so an
    /// ACK of two segments grows the window as much as an ACK of one. `true` overrides
    /// `exact_increase`; `false` grows per acknowledged byte (RFC 9002 §7.3, INET). Default: the
    /// transport's rule ([`crate::WindowRules::growth`]): per ACK on TCP, Linux's count on TCP
    /// under `profile = "linux"`, per byte on QUIC. (INET's byte counting on TCP, whose count restarts whenever nothing is in flight,
    /// never grows a 2-segment window that one delayed ACK empties: measured, 5 of 6 flows at
    /// 2.5 segments for 52 s of 60 s on a 2 Mbit/s dumbbell.)
    /// (Written as null when unset: the controller's state is also encoded without field
    /// names, where a skipped field would not decode.)
    pub per_ack_increase: Option<bool>,
    /// On a loss, ssthresh = max(in-flight bytes / 2, 2·SMSS) from the transport's count
    /// (RFC 5681 §3.1 eq. 4 FlightSize; TCP reports RFC 6675's `pipe` after the lost segment
    /// left it, as ns-3's `TcpNewReno::GetSsThresh` gets it), not cwnd / 2 (RFC 9002 §7.3.2,
    /// INET, Linux). On a timeout likewise from the bytes in flight just before it (ns-3's
    /// `ReTxTimeout` passes `BytesInFlight()`, the pipe), not from SND.MAX - SND.UNA, which
    /// after a long SACK recovery counts every SACKed byte above a lost retransmission and can
    /// be many windows (ssthresh 125 segments after a 37-segment window, measured in the
    /// `aqm` reproduction's RED runs). Default false.
    pub ssthresh_from_flight: bool,
    /// Congestion avoidance as quinn-proto 0.11's NewReno (`congestion/new_reno.rs`): one MDS
    /// once the bytes acknowledged reach cwnd (RFC 5681 `pba >= cwnd`, not INET's
    /// `pba > cwnd - MDS`), the rest carried over; acknowledgements of packets sent before the
    /// recovery started count for nothing, and the count is kept across congestion events.
    /// For comparing the model with quinn (`quicksim reproduce quinn-vs-model`). Overrides
    /// `exact_increase`; default false.
    pub quinn_increase: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            exact_increase: true,
            hystart: false,
            per_ack_increase: None,
            ssthresh_from_flight: false,
            quinn_increase: false,
        }
    }
}

/// NewReno state for one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NewReno {
    pub(super) config: Config,
    pub(crate) cwnd: u64,
    /// `u64::MAX` until the first congestion event (INET: UINT32_MAX).
    #[serde(with = "crate::serde_max_u64")]
    pub(crate) ssthresh: u64,
    /// Exact mode: RFC 5681 §3.1 partial_bytes_acked. Approximate mode: the carry of the
    /// increase (INET keeps it in a function-level `static`, shared by every connection of the
    /// process; we keep one per controller so runs stay independent). One field for the two, as
    /// each mode uses only its own: the controller then fits a 48-byte allocation, not 64.
    pub(crate) carry: u64,
    /// Packets sent strictly before this time belong to the recovery period. `ZERO` = none.
    pub(super) recovery_start: SimTime,
    pub(crate) phase: Phase,
    /// How the window grows (`Config::per_ack_increase`, else the transport's rule).
    growth: Growth,
    /// HyStart++ state while `config.hystart` (boxed: 8 bytes when off).
    hystart: Option<Box<HyStart>>,
}

impl Algorithm for NewReno {
    const NAME: &'static str = "newreno";
    type Config = Config;

    /// A controller with the transport's initial window for `cx.mds` (the MDS when the path is
    /// attached; later MDS changes reach the controller through `CcCtx::mds`, as in INET).
    fn new(config: &Config, cx: &InitCtx) -> Self {
        assert!(cx.mds > 0, "NewReno needs a positive MDS");
        // The configuration's growth rule, else the transport's.
        let growth = match config.per_ack_increase {
            Some(true) => Growth::PerAck,
            Some(false) => Growth::PerByte,
            None => cx.window.growth,
        };
        NewReno {
            config: *config,
            growth,
            cwnd: cx.window.initial_window(cx.mds),
            ssthresh: u64::MAX,
            carry: 0,
            recovery_start: SimTime::ZERO,
            phase: Phase::Open,
            hystart: config.hystart.then(Box::default),
        }
    }
}

impl NewReno {
    /// INET `inCongestionRecovery`: strictly before the recovery start (RFC 9002 uses <=).
    pub(crate) fn sent_in_recovery(&self, sent_time: SimTime) -> bool {
        sent_time < self.recovery_start
    }

    /// Linux's `tcp_reno_cong_avoid` for one ACK ([`Growth::Linux`]): `carry` is
    /// `snd_cwnd_cnt`, in segments. No growth for an ACK whose newest packet was sent before
    /// the last reduction (Linux grows nothing in CWR or recovery) or while application-limited.
    pub(crate) fn linux_increase(&mut self, cx: &CcCtx, ack: &AckSummary) {
        if ack.app_limited || self.sent_in_recovery(ack.largest_acked_sent_time) {
            return;
        }
        let mds = cx.mds;
        let mut acked = ack.acked_packets;
        if self.cwnd < self.ssthresh {
            // `tcp_slow_start`: cwnd = min(cwnd + acked, ssthresh); what is left goes on to
            // congestion avoidance (ns-3 `TcpLinuxReno::SlowStart` in bytes, the same).
            let before = self.cwnd;
            self.cwnd = self.cwnd.saturating_add(acked * mds).min(self.ssthresh);
            acked -= ((self.cwnd - before) / mds).min(acked);
            if acked == 0 {
                return;
            }
        }
        // `tcp_cong_avoid_ai(tp, cwnd, acked)`: w is the window in whole segments.
        let w = (self.cwnd / mds).max(1);
        if self.carry >= w {
            self.carry = 0;
            self.cwnd += mds;
        }
        self.carry += acked;
        if self.carry >= w {
            let delta = self.carry / w;
            self.carry -= delta * w;
            self.cwnd += delta * mds;
        }
    }

}

impl CongestionController for NewReno {
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        let mds = cx.mds;
        let quinn = self.config.quinn_increase;
        let exact = self.config.exact_increase && !quinn && self.growth == Growth::PerByte;
        // INET (after RFC 4960 §7.2.2): partial_bytes_acked is reset when nothing is in flight.
        if cx.bytes_in_flight == 0 && exact {
            self.carry = 0;
        }
        if self.sent_in_recovery(ack.sent_time) {
            // RFC 9002 §7.3.2: no increase in the recovery period. INET quirk: in CA with byte
            // counting the bytes still count toward partial_bytes_acked.
            if self.cwnd >= self.ssthresh && exact {
                self.carry += ack.bytes;
            }
            return;
        }
        // RFC 9002 §7.8: do not grow while not limited by the window. INET uses the flag at ACK
        // time, which the transport reports in `ack.app_limited`.
        if ack.app_limited {
            self.phase = Phase::AppLimited;
            return;
        }
        self.phase = Phase::Open;
        if self.growth != Growth::PerByte {
            return; // grows in `on_ack_end`
        }
        if self.cwnd < self.ssthresh {
            // RFC 9002 §7.3.1: slow start adds the acked bytes (no ABC limit in INET); RFC 9406:
            // a quarter of them in HyStart++'s conservative slow start.
            self.cwnd += self.hystart.as_mut().map_or(ack.bytes, |h| h.increase(ack.bytes));
            if exact {
                self.carry = 0;
            }
            if quinn && self.cwnd >= self.ssthresh {
                // quinn: what slow start took beyond ssthresh starts the count.
                self.carry = self.cwnd - self.ssthresh;
            }
        } else if quinn {
            self.carry += ack.bytes;
            if self.carry >= self.cwnd {
                self.carry -= self.cwnd;
                self.cwnd += mds;
            }
        } else if exact {
            // RFC 5681 §3.1 byte counting, with INET's `pba > cwnd - MDS` (RFC 5681: pba >= cwnd)
            // and INET's reset rule (pba -= the *new* cwnd if that leaves something, else 0).
            self.carry += ack.bytes;
            if self.carry > self.cwnd.saturating_sub(mds) {
                self.cwnd += mds;
                if self.cwnd < self.carry {
                    self.carry -= self.cwnd;
                } else {
                    self.carry = 0;
                }
            }
        } else {
            // RFC 9002 Appendix B.5: cwnd += MDS * acked / cwnd, carrying the integer remainder.
            let n = mds * ack.bytes + self.carry;
            self.carry = n % self.cwnd;
            self.cwnd += n / self.cwnd;
        }
    }

    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        // An ACK counts once the path has an RTT sample (latest() is zero before).
        let open = self.phase == Phase::Open && !ack.app_limited && cx.rtt.has_sample();
        let in_slow_start = self.cwnd < self.ssthresh && !self.sent_in_recovery(ack.largest_acked_sent_time);
        if let Some(h) = self.hystart.as_mut() {
            // RFC 9406 §4.2: CSS_ROUNDS rounds of CSS end slow start: ssthresh = cwnd.
            if open && in_slow_start && h.on_ack_end(cx.now, cx.rtt.latest(), ack.largest_acked_sent_time) {
                self.ssthresh = self.cwnd;
            }
        }
        if self.growth == Growth::Linux {
            self.linux_increase(cx, ack);
            return;
        }
        // `per_ack_increase`: one increase per ACK (RFC 5681 §3.1), the ACK's packets having
        // passed the recovery and application-limited tests of `on_ack` (its newest packet decides).
        if self.growth != Growth::PerAck
            || ack.app_limited
            || self.sent_in_recovery(ack.largest_acked_sent_time)
        {
            return;
        }
        let mds = cx.mds;
        let mut left = ack.acked_bytes;
        if self.cwnd < self.ssthresh {
            // RFC 5681 §3.1: "increments cwnd by at most SMSS bytes for each ACK" (ns-3
            // `TcpNewReno::SlowStart`: one segment per ACK). What the ACK covers beyond that
            // SMSS goes to congestion avoidance if this increase reached ssthresh (as ns-3).
            let add = left.min(mds);
            self.cwnd += add;
            left -= add;
        }
        if self.cwnd >= self.ssthresh && left > 0 {
            // RFC 5681 §3.1 eq. 3: cwnd += SMSS·SMSS/cwnd, in integer bytes, at least 1 byte
            // ("if the above formula yields 0, the result SHOULD be rounded up to 1 byte").
            self.cwnd += (mds * mds / self.cwnd).max(1);
        }
    }

    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        if let Some(h) = self.hystart.as_mut() {
            h.on_congestion();
        }
        let (mds, rules) = (cx.mds, cx.window);
        // RFC 9002 §7.3.2: one reduction per recovery period. The transport excludes DPLPMTUD
        // probes from the send time, as INET does.
        if !self.sent_in_recovery(ev.sent_time) {
            self.recovery_start = cx.now;
            self.ssthresh = match ev.cause {
                // RFC 5681 §3.1 eq. 4: max(FlightSize / 2, 2·SMSS).
                // ns-3's `ReTxTimeout`: the same from the in-flight count before the timeout,
                // which the transport reports with an RTO event.
                CongestionCause::Rto if self.config.ssthresh_from_flight => {
                    (cx.bytes_in_flight / 2).max(rules.minimum_window(mds))
                }
                CongestionCause::Rto => (ev.lost_bytes / 2).max(rules.minimum_window(mds)),
                // RFC 9002 §7.3.2 / Appendix B.6: kLossReductionFactor = 0.5 (of cwnd, as INET).
                // RFC 5681 §3.1 eq. 4 with the transport's in-flight count (ns-3).
                CongestionCause::Loss | CongestionCause::Ecn if self.config.ssthresh_from_flight => {
                    (cx.bytes_in_flight / 2).max(rules.minimum_window(mds))
                }
                CongestionCause::Loss | CongestionCause::Ecn | CongestionCause::PersistentCongestion => {
                    self.cwnd / 2
                }
            };
            self.cwnd = self.ssthresh.max(rules.minimum_window(mds));
            // Linux zeroes `snd_cwnd_cnt` at each reduction (`tcp_init_cwnd_reduction`).
            if (self.config.exact_increase && !self.config.quinn_increase) || self.growth == Growth::Linux {
                self.carry = 0;
            }
            self.phase = Phase::Recovery;
        }
        match ev.cause {
            CongestionCause::PersistentCongestion => {
                // RFC 9002 §7.6.2 / Appendix B.8: collapse to the minimum window and forget the
                // recovery period. INET leaves ssthresh and partial_bytes_acked as they are.
                self.cwnd = rules.loss_window(mds);
                self.recovery_start = SimTime::ZERO;
                self.phase = Phase::Open;
            }
            CongestionCause::Rto => {
                // RFC 5681 §3.1: cwnd = LW, then slow start. Packets sent before the timeout
                // stay in the recovery period, so their losses do not reduce again (the role of
                // RFC 6582 §4's `recover` after a timeout).
                self.cwnd = rules.loss_window(mds);
                self.recovery_start = cx.now;
                self.phase = Phase::Recovery;
            }
            CongestionCause::Loss | CongestionCause::Ecn => {}
        }
    }

    /// NewReno never reads the delivery-rate sample.
    fn wants_rate_samples(&self) -> bool {
        false
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.cwnd,
            ssthresh_bytes: self.ssthresh,
            state: self.phase.state(self.cwnd, self.ssthresh),
        }
    }
}

#[cfg(test)]
#[path = "newreno_tests.rs"]
mod tests;
