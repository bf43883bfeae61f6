//! NewReno as the INET QUIC model implements it (RFC 9002 §7 plus INET's quirks).
//!
//! Follows `NewRenoCongestionController.cc` of INET's `transportlayer/quic` line by line:
//! - Slow start adds the acked packet size; no ABC limit, no HyStart (RFC 9002 §7.3.1).
//! - Congestion avoidance is either RFC 5681 §3.1 byte counting (INET's default,
//!   `accurateIncreaseInNewRenoCongestionAvoidance = true`) with INET's `pba > cwnd - MDS`
//!   test, or the approximate `cwnd += MDS·acked/cwnd` of the RFC 9002 pseudo-code with an
//!   integer remainder (RFC 9002 Appendix B.5).
//! - A packet is "in recovery" when it was sent strictly **before** the recovery start time.
//!   RFC 9002 §7.3.2 / Appendix B.4 uses `sent_time <= recovery_start`; INET uses `<`, so a
//!   packet sent at the very instant of the congestion event (e.g. the `allowOnePacket` packet)
//!   counts as new. We follow INET.
//!
//! INET's `allowOnePacket` (after a congestion event the next window query returns one MDS,
//! RFC 9002 §7.3.2 "MAY send a packet immediately") is a transport concern and is not modelled
//! here: the transport should allow one packet after `on_congestion_event` reduced the window.

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};

use crate::{AckEvent, CcCtx, CcMetrics, CongestionController, CongestionEvent};

/// Initial window: min(10·MDS, max(2·MDS, 14720)) bytes (RFC 9002 §7.2; 12520 B for MDS 1252).
pub fn initial_window(mds: u64) -> u64 {
    // RFC 9002 §7.2: kInitialWindow = min(10 * max_datagram_size, max(14720, 2 * max_datagram_size)).
    (10 * mds).min((2 * mds).max(14_720))
}

/// Minimum window: 2·MDS bytes (RFC 9002 §7.2 kMinimumWindow).
pub fn minimum_window(mds: u64) -> u64 {
    // RFC 9002 §7.2: kMinimumWindow = 2 * max_datagram_size.
    2 * mds
}

/// NewReno settings. `Config::default()` is INET's default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// Congestion avoidance by RFC 5681 §3.1 byte counting (`true`, INET's default
    /// `accurateIncreaseInNewRenoCongestionAvoidance`), else `cwnd += MDS·acked/cwnd` per ACK.
    pub exact_increase: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config { exact_increase: true }
    }
}

/// NewReno state for one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NewReno {
    config: Config,
    cwnd: u64,
    /// `u64::MAX` until the first congestion event (INET: UINT32_MAX).
    #[serde(with = "crate::serde_max_u64")]
    ssthresh: u64,
    /// Exact mode: RFC 5681 §3.1 partial_bytes_acked. Approximate mode: the carry of the
    /// increase (INET keeps it in a function-level `static`, shared by every connection of the
    /// process; we keep one per controller so runs stay independent). One field for the two, as
    /// each mode uses only its own: the controller then fits a 48-byte allocation, not 64.
    carry: u64,
    /// Packets sent strictly before this time belong to the recovery period. `ZERO` = none.
    recovery_start: SimTime,
    /// For metrics only: set by a congestion event, cleared by the first ACK of a packet sent
    /// after recovery started (RFC 9002 §7.3.2 exit condition).
    in_recovery: bool,
}

impl NewReno {
    /// A controller with the initial window of `mds` (the MDS when the path is attached;
    /// later MDS changes reach the controller through `CcCtx::mds`, as in INET).
    pub fn new(mds: u64, config: Config) -> Self {
        assert!(mds > 0, "NewReno needs a positive MDS");
        NewReno {
            config,
            cwnd: initial_window(mds),
            ssthresh: u64::MAX,
            carry: 0,
            recovery_start: SimTime::ZERO,
            in_recovery: false,
        }
    }

    /// INET `inCongestionRecovery`: strictly before the recovery start (RFC 9002 uses <=).
    fn sent_in_recovery(&self, sent_time: SimTime) -> bool {
        sent_time < self.recovery_start
    }
}

impl CongestionController for NewReno {
    fn snapshot(&self) -> super::CcSnapshot {
        super::CcSnapshot::NewReno(self.clone())
    }
    fn on_ack(&mut self, cx: &CcCtx, ack: &AckEvent) {
        let mds = cx.mds;
        let exact = self.config.exact_increase;
        // INET (after RFC 4960 §7.2.2): partial_bytes_acked is reset when nothing is in flight.
        if ack.bytes_in_flight == 0 && exact {
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
        self.in_recovery = false;
        // RFC 9002 §7.8: do not grow while not limited by the window. INET uses the flag at ACK
        // time, which the transport reports in `ack.app_limited`.
        if ack.app_limited {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 9002 §7.3.1: slow start adds the acked bytes (no ABC limit in INET).
            self.cwnd += ack.bytes;
            if exact {
                self.carry = 0;
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

    fn on_congestion_event(&mut self, cx: &CcCtx, ev: &CongestionEvent) {
        // RFC 9002 §7.3.2: one reduction per recovery period. The transport excludes DPLPMTUD
        // probes from `largest_lost_sent_time`, as INET does.
        if !self.sent_in_recovery(ev.largest_lost_sent_time) {
            self.recovery_start = ev.now;
            // RFC 9002 §7.3.2 / Appendix B.6: kLossReductionFactor = 0.5.
            self.ssthresh = self.cwnd / 2;
            self.cwnd = self.ssthresh.max(minimum_window(cx.mds));
            if self.config.exact_increase {
                self.carry = 0;
            }
            self.in_recovery = true;
        }
        if ev.persistent_congestion {
            // RFC 9002 §7.6.2 / Appendix B.8: collapse to the minimum window and forget the
            // recovery period. INET leaves ssthresh and partial_bytes_acked as they are.
            self.cwnd = minimum_window(cx.mds);
            self.recovery_start = SimTime::ZERO;
            self.in_recovery = false;
        }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd, ssthresh_bytes: self.ssthresh, in_recovery: self.in_recovery }
    }

    fn name(&self) -> &'static str {
        "newreno"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_engine::SimDuration;

    const MDS: u64 = 1252;

    fn cx() -> CcCtx {
        CcCtx {
            mds: MDS,
            smoothed_rtt: SimDuration::from_millis(100),
            min_rtt: SimDuration::from_millis(100),
            latest_rtt: SimDuration::from_millis(100),
        }
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// Acks `n` full-size packets sent at `sent` and acked at `now`, not app-limited.
    fn ack_n(cc: &mut NewReno, n: u64, sent: SimTime, now: SimTime) {
        for _ in 0..n {
            ack_one(cc, MDS, sent, now, false);
        }
    }

    fn ack_one(cc: &mut NewReno, bytes: u64, sent: SimTime, now: SimTime, app_limited: bool) {
        let ack = AckEvent { now, sent_time: sent, bytes, bytes_in_flight: 100_000, app_limited };
        cc.on_ack(&cx(), &ack);
    }

    fn lose(cc: &mut NewReno, sent: SimTime, now: SimTime) {
        let ev = CongestionEvent {
            now,
            largest_lost_sent_time: sent,
            lost_bytes: MDS,
            bytes_in_flight: 100_000,
            persistent_congestion: false,
        };
        cc.on_congestion_event(&cx(), &ev);
    }

    #[test]
    fn initial_and_minimum_window() {
        assert_eq!(initial_window(1252), 12_520);
        assert_eq!(initial_window(1200), 12_000);
        assert_eq!(initial_window(1500), 14_720); // capped by 14720
        assert_eq!(initial_window(8000), 16_000); // floored at 2 MDS
        assert_eq!(minimum_window(1252), 2_504);
        let cc = NewReno::new(MDS, Config::default());
        assert_eq!(cc.cwnd_bytes(), 12_520);
        assert_eq!(cc.metrics().ssthresh_bytes, u64::MAX);
        assert!(!cc.metrics().in_recovery);
    }

    #[test]
    fn slow_start_doubles_per_rtt_of_acks() {
        let mut cc = NewReno::new(MDS, Config::default());
        ack_n(&mut cc, 10, t(0), t(100));
        assert_eq!(cc.cwnd_bytes(), 25_040);
        ack_n(&mut cc, 20, t(100), t(200));
        assert_eq!(cc.cwnd_bytes(), 50_080);
    }

    #[test]
    fn loss_halves_window_and_sets_ssthresh() {
        let mut cc = NewReno::new(MDS, Config::default());
        ack_n(&mut cc, 10, t(0), t(100));
        lose(&mut cc, t(150), t(200));
        assert_eq!(cc.cwnd_bytes(), 12_520);
        let m = cc.metrics();
        assert_eq!(m.ssthresh_bytes, 12_520);
        assert!(m.in_recovery);
        // Odd window: ssthresh = floor(cwnd / 2).
        let mut odd = NewReno::new(MDS, Config::default());
        ack_one(&mut odd, 1, t(0), t(100), false); // 12521
        lose(&mut odd, t(50), t(100));
        assert_eq!(odd.cwnd_bytes(), 6_260);
    }

    #[test]
    fn window_never_below_two_mds() {
        let mut cc = NewReno::new(MDS, Config::default());
        lose(&mut cc, t(10), t(100)); // 6260
        lose(&mut cc, t(110), t(200)); // 3130
        assert_eq!(cc.cwnd_bytes(), 3_130);
        lose(&mut cc, t(210), t(300)); // ssthresh 1565, cwnd max(1565, 2504)
        assert_eq!(cc.cwnd_bytes(), 2_504);
        assert_eq!(cc.metrics().ssthresh_bytes, 1_565);
    }

    /// Enters congestion avoidance at cwnd = ssthresh = 12520 with recovery started at 200 ms.
    fn in_ca(config: Config) -> NewReno {
        let mut cc = NewReno::new(MDS, config);
        ack_n(&mut cc, 10, t(0), t(100));
        lose(&mut cc, t(150), t(200));
        assert_eq!((cc.cwnd_bytes(), cc.metrics().ssthresh_bytes), (12_520, 12_520));
        cc
    }

    #[test]
    fn exact_ca_adds_one_mds_per_cwnd_of_acked_bytes() {
        let mut cc = in_ca(Config { exact_increase: true });
        // Increase when pba > cwnd - MDS = 11268: 9 packets (11268) are not enough, 10 are.
        ack_n(&mut cc, 9, t(250), t(300));
        assert_eq!(cc.cwnd_bytes(), 12_520);
        assert_eq!(cc.carry, 11_268);
        ack_n(&mut cc, 1, t(250), t(300));
        assert_eq!(cc.cwnd_bytes(), 13_772);
        assert_eq!(cc.carry, 0); // new cwnd 13772 >= pba 12520 -> 0
        assert!(!cc.metrics().in_recovery);
        // Next step needs pba > 12520: 11 packets (one cwnd of 13772 B).
        ack_n(&mut cc, 10, t(300), t(400));
        assert_eq!(cc.cwnd_bytes(), 13_772);
        ack_n(&mut cc, 1, t(300), t(400));
        assert_eq!(cc.cwnd_bytes(), 15_024);
    }

    #[test]
    fn exact_ca_subtracts_new_cwnd_from_large_pba() {
        // INET: after the increase, pba -= cwnd (the increased one) if cwnd < pba.
        let mut cc = in_ca(Config { exact_increase: true });
        ack_one(&mut cc, 30_000, t(250), t(300), false);
        assert_eq!(cc.cwnd_bytes(), 13_772);
        assert_eq!(cc.carry, 30_000 - 13_772);
    }

    #[test]
    fn approximate_ca_keeps_integer_remainder() {
        let mut cc = in_ca(Config { exact_increase: false });
        // 1252 * 1252 = 1_567_504 = 125 * 12520 + 2504
        ack_n(&mut cc, 1, t(250), t(300));
        assert_eq!(cc.cwnd_bytes(), 12_645);
        assert_eq!(cc.carry, 2_504);
        // 1_567_504 + 2504 = 1_570_008 = 124 * 12645 + 2028
        ack_n(&mut cc, 1, t(250), t(300));
        assert_eq!(cc.cwnd_bytes(), 12_769);
        assert_eq!(cc.carry, 2_028);
        // The remainder is per controller: a fresh one starts from zero.
        let mut other = in_ca(Config { exact_increase: false });
        ack_n(&mut other, 1, t(250), t(300));
        assert_eq!(other.cwnd_bytes(), 12_645);
        // One cwnd of acks grows the window by about one MDS.
        let mut cc = in_ca(Config { exact_increase: false });
        ack_n(&mut cc, 10, t(250), t(300));
        assert!((13_600..=13_772).contains(&cc.cwnd_bytes()), "{}", cc.cwnd_bytes());
    }

    #[test]
    fn recovery_period_ignores_losses_and_acks_of_older_packets() {
        // Recovery started at 200 ms.
        let mut cc = in_ca(Config::default());
        // Loss of a packet sent before the recovery start: ignored.
        lose(&mut cc, t(199), t(260));
        assert_eq!(cc.cwnd_bytes(), 12_520);
        // Acks of packets sent before recovery start: no growth, but pba still counts (INET).
        ack_n(&mut cc, 5, t(190), t(260));
        assert_eq!(cc.cwnd_bytes(), 12_520);
        assert_eq!(cc.carry, 5 * MDS);
        assert!(cc.metrics().in_recovery);
        // A packet sent exactly at the recovery start is not in recovery (INET's `<`).
        lose(&mut cc, t(200), t(270));
        assert_eq!(cc.cwnd_bytes(), 6_260);
        assert_eq!(cc.carry, 0);
        assert_eq!(cc.recovery_start, t(270));
    }

    #[test]
    fn recovery_acks_count_toward_pba_only_in_ca() {
        let mut cc = NewReno::new(MDS, Config::default());
        lose(&mut cc, t(50), t(100)); // cwnd 6260 = ssthresh, CA
        ack_n(&mut cc, 2, t(50), t(150));
        assert_eq!(cc.carry, 2 * MDS);
        // After persistent congestion cwnd < ssthresh: slow start, and no pba in recovery.
        let mut pc = NewReno::new(MDS, Config::default());
        pc.on_congestion_event(
            &cx(),
            &CongestionEvent {
                now: t(100),
                largest_lost_sent_time: t(50),
                lost_bytes: 3 * MDS,
                bytes_in_flight: 0,
                persistent_congestion: true,
            },
        );
        pc.recovery_start = t(100); // pretend a later loss started recovery again
        ack_n(&mut pc, 2, t(50), t(150));
        assert_eq!(pc.carry, 0);
        assert_eq!(pc.cwnd_bytes(), 2 * MDS);
    }

    #[test]
    fn persistent_congestion_collapses_to_minimum_and_resets_recovery() {
        let mut cc = NewReno::new(MDS, Config::default());
        ack_n(&mut cc, 10, t(0), t(100)); // 25040
        let ev = CongestionEvent {
            now: t(1_000),
            largest_lost_sent_time: t(500),
            lost_bytes: 10 * MDS,
            bytes_in_flight: 0,
            persistent_congestion: true,
        };
        cc.on_congestion_event(&cx(), &ev);
        assert_eq!(cc.cwnd_bytes(), 2_504);
        assert_eq!(cc.metrics().ssthresh_bytes, 12_520);
        assert!(!cc.metrics().in_recovery);
        // Recovery start is reset: a loss of an old packet now triggers a new reduction, and
        // acks of old packets grow the window (slow start, cwnd < ssthresh).
        ack_n(&mut cc, 1, t(400), t(1_100));
        assert_eq!(cc.cwnd_bytes(), 2_504 + MDS);
        lose(&mut cc, t(600), t(1_200));
        assert_eq!(cc.cwnd_bytes(), 2_504); // max(3756 / 2, 2 MDS)
        assert_eq!(cc.metrics().ssthresh_bytes, 1_878);
    }

    #[test]
    fn app_limited_acks_do_not_grow_the_window() {
        let mut ss = NewReno::new(MDS, Config::default());
        ack_one(&mut ss, MDS, t(0), t(100), true);
        assert_eq!(ss.cwnd_bytes(), 12_520);
        for exact in [true, false] {
            let mut ca = in_ca(Config { exact_increase: exact });
            for _ in 0..50 {
                ack_one(&mut ca, MDS, t(250), t(300), true);
            }
            assert_eq!(ca.cwnd_bytes(), 12_520);
            assert_eq!(ca.carry, 0);
        }
    }

    #[test]
    fn empty_flight_resets_partial_bytes_acked() {
        let mut cc = in_ca(Config::default());
        ack_n(&mut cc, 3, t(250), t(300));
        assert_eq!(cc.carry, 3 * MDS);
        let last =
            AckEvent { now: t(300), sent_time: t(250), bytes: MDS, bytes_in_flight: 0, app_limited: false };
        cc.on_ack(&cx(), &last);
        // Reset first, then this ack counts.
        assert_eq!(cc.carry, MDS);
    }
}
