//! DCTCP, RFC 8257: the sender estimates the fraction of CE-marked packets per window of data
//! (alpha, an EWMA with gain g) and cuts the window by alpha/2 once per window with marks, so
//! that a step-marking queue (mark above K packets) stays short while the link stays full.
//!
//! Built on [`NewReno`] (RFC 8257 §3.4: "DCTCP ... behaves like standard TCP on loss"): the loss
//! and timeout responses and the recovery period are NewReno's; DCTCP adds the ECN response.
//! The window grows as Linux's `tcp_reno_cong_avoid`, which `tcp_dctcp.c` uses and ns-3's
//! `TcpDctcp` inherits from `TcpLinuxReno`: slow start adds the acknowledged segments up to
//! ssthresh, congestion avoidance counts acknowledged segments and adds one once they reach the
//! window in whole segments (`tcp_cong_avoid_ai`), the count kept until a reduction. Not INET's
//! byte counting (NewReno's default), whose count restarts whenever nothing is in flight: with
//! delayed ACKs a flow at two segments has its whole window acknowledged by each ACK and never
//! grew again (a 10-flow run left one flow at 1.4 Mbit/s of 9.6 for good). Marks are counted in packets, as Linux does since 5.1 (`tcp_dctcp.c`:
//! `delivered_ce / delivered`) and as QUIC's ACK_ECN counts and TCP's AccECN ACE field give
//! them; RFC 8257 counts bytes, the same with full-sized segments.
//!
//! The window this controller sets on marks is a target: a TCP transport with PRR reaches it
//! over the next round trip, as Linux does (`spreads_ecn_reduction`, the CWR state).
//!
//! As a receiver it keeps RFC 8257 §3.2's rule under Accurate ECN too: at a change of CE state
//! a pending delayed ACK goes first, with the segments before the change, then the changing
//! segment is acknowledged at once ([`CeChangeAck::Apart`], Linux `dctcp_ece_ack_update`). With
//! RFC 9768's single change-triggered ACK, the mark of a segment sent before a reduction could
//! ride on the ACK that ends CWR (which covers the first segment sent after it) and start a
//! second reduction at once: in the 10-flow ns-3 comparison 45 % of the intervals between a
//! flow's reductions were one round trip (33 % in ns-3's `TcpDctcp`), and the queue spent 16.6 %
//! of the time at 0-4 packets (10.8 % in ns-3).
//!
//! The transport reports marks through [`AckSummary::ce_packets`] ([`EcnResponse::Scalable`]).
//! Over TCP it needs Accurate ECN feedback; over a peer that negotiated only RFC 3168 ECN the
//! transport reports one `Ecn` event per round trip, which DCTCP answers as NewReno (halving).

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};

use super::newreno::{self, NewReno};
use crate::registry::{check, ratio, Algorithm};
use crate::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CeChangeAck, CongestionController, CongestionEvent, EcnResponse, InitCtx,
    Phase,
};

/// alpha is kept in units of 2^-20 (Prague's `PRAGUE_ALPHA_BITS`; Linux DCTCP uses 2^-10,
/// too coarse for the hand-checked EWMA to be exact).
pub const ALPHA_ONE: u64 = 1 << 20;

/// DCTCP settings. `Config::default()` is RFC 8257's recommendation.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// EWMA gain g of alpha (RFC 8257 §3.3 and §4.2: 1/16 = 0.0625, Linux `dctcp_shift_g` 4).
    #[serde(deserialize_with = "check::open_unit")]
    pub g: f64,
    /// alpha before the first window completes (RFC 8257 §3.3 initialises it to 1; Linux's
    /// `dctcp_alpha_on_init` defaults to 1024/1024 = 1, ns-3's `DctcpAlphaOnInit` to 1.0): the
    /// first marks halve the window as classic ECN would.
    #[serde(deserialize_with = "check::unit")]
    pub alpha_on_init: f64,
    /// Send ECT(1) (the L4S identifier, RFC 9331, for a DualPI2 L queue) instead of ECT(0)
    /// (RFC 8257's data-centre setting, Linux and ns-3 defaults). Default false.
    pub ect1: bool,
    /// Grow once per ACK (RFC 5681 §3.1 as written, ns-3's `TcpNewReno`), as NewReno's
    /// `per_ack_increase`; default false (per acknowledged segment, Linux's and ns-3's
    /// `TcpLinuxReno` rule: module docs).
    pub per_ack_increase: bool,
    /// Keep the congestion-avoidance count of acknowledged segments across a window
    /// reduction, as ns-3's `TcpLinuxReno` keeps `m_cWndCnt`; Linux zeroes `snd_cwnd_cnt`
    /// (`tcp_init_cwnd_reduction`). Default false (Linux).
    pub keep_increase_count: bool,
    /// As a receiver, after the ACK of the segments before a change of CE state, let the
    /// changing segment wait for the delayed ACK, as ns-3.44's `TcpDctcp` does, instead of
    /// acknowledging it at once (RFC 8257 §3.2's second ACK, Linux). Default false.
    pub delay_ce_change_ack: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            g: 1.0 / 16.0,
            alpha_on_init: 1.0,
            ect1: false,
            per_ack_increase: false,
            keep_increase_count: false,
            delay_ce_change_ack: false,
        }
    }
}

/// DCTCP state for one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Dctcp {
    reno: NewReno,
    /// g as num/den.
    g: (u32, u32),
    /// DCTCP.Alpha in units of 2^-20.
    alpha: u64,
    /// Packets acknowledged and CE-marked in the current window (DCTCP.BytesAcked and
    /// DCTCP.BytesMarked, in packets).
    acked: u64,
    marked: u64,
    /// The current window ends with the ACK of a packet sent at or after this time (RFC 8257
    /// §3.3 DCTCP.WindowEnd = SND.NXT, as a send time: the controller sees no sequence numbers).
    window_end: SimTime,
    ect1: bool,
    /// Grow by NewReno's per-ACK rule instead of `linux_increase`.
    per_ack_increase: bool,
    keep_increase_count: bool,
    delay_ce_change_ack: bool,
}

impl Algorithm for Dctcp {
    const NAME: &'static str = "dctcp";
    type Config = Config;

    fn new(config: &Config, cx: &InitCtx) -> Self {
        // NewReno keeps the phase and the recovery period; the growth is `linux_increase` (or
        // NewReno's per-ACK rule): `per_ack_increase` stops NewReno's own per-byte growth in
        // `on_ack`, `exact_increase: false` its count resets, which `linux_increase` does not have.
        let reno_cfg = newreno::Config { per_ack_increase: Some(true), exact_increase: false, ..Default::default() };
        Dctcp {
            reno: NewReno::new(&reno_cfg, cx),
            g: ratio(config.g),
            alpha: (config.alpha_on_init * ALPHA_ONE as f64).round() as u64,
            acked: 0,
            marked: 0,
            window_end: SimTime::ZERO,
            ect1: config.ect1,
            per_ack_increase: config.per_ack_increase,
            keep_increase_count: config.keep_increase_count,
            delay_ce_change_ack: config.delay_ce_change_ack,
        }
    }
}

impl Dctcp {
    /// DCTCP.Alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / ALPHA_ONE as f64
    }

    /// RFC 8257 §3.3 steps 5-6: alpha = (1 - g)·alpha + g·F with F = marked / acked of the
    /// window that just ended, in integer units of 2^-20 (truncated).
    fn update_alpha(&mut self) {
        let (gn, gd) = (u64::from(self.g.0), u64::from(self.g.1));
        let f = (self.marked.min(self.acked) * ALPHA_ONE).checked_div(self.acked).unwrap_or(0);
        self.alpha = (self.alpha * (gd - gn) + f * gn) / gd;
    }

    /// A reduction: Linux's `tcp_init_cwnd_reduction` (CWR and recovery) and `tcp_enter_loss`
    /// zero `snd_cwnd_cnt`, `linux_increase`'s count; ns-3's `TcpLinuxReno` keeps its
    /// `m_cWndCnt` (`keep_increase_count`).
    fn reset_count(&mut self) {
        if !self.keep_increase_count {
            self.reno.carry = 0;
        }
    }
}

impl NewReno {
    /// A reduction decided by a controller built on NewReno (DCTCP's ECN response): cwnd =
    /// ssthresh = max(`cwnd`, minimum window), and a recovery period starts at `now`, shared
    /// with the loss response (one reduction per window, RFC 8257 §3.3).
    fn reduce_to(&mut self, cx: &CcCtx, cwnd: u64) {
        self.cwnd = cwnd.max(cx.window.minimum_window(cx.mds));
        self.ssthresh = self.cwnd;
        self.recovery_start = cx.now;
        self.phase = Phase::Recovery;
    }
}

impl CongestionController for Dctcp {
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent) {
        self.reno.on_ack(cx, ack);
    }

    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        // RFC 8257 §3.3 steps 2-3: count the window's acknowledged and marked data.
        self.acked += ack.acked_packets;
        self.marked += ack.ce_packets;
        // Steps 4-7: at the end of the window, update alpha and start the next one.
        if ack.largest_acked_sent_time >= self.window_end {
            self.update_alpha();
            self.acked = 0;
            self.marked = 0;
            self.window_end = cx.now;
        }
        // Steps 8-9: on marks, cwnd = cwnd·(1 - alpha/2), at most once per window (the recovery
        // period NewReno keeps for losses, so a loss and marks in one window reduce once).
        if ack.ce_packets > 0 && !self.reno.sent_in_recovery(ack.largest_acked_sent_time) {
            let cwnd = self.reno.cwnd_bytes();
            let cut = (u128::from(cwnd) * u128::from(self.alpha) / u128::from(2 * ALPHA_ONE)) as u64;
            self.reno.reduce_to(cx, cwnd - cut);
            self.reset_count();
        }
        // Growth last: the ACK that cuts grows nothing (it now counts as in the recovery period),
        // as Linux enters CWR before `tcp_cong_control` and ns-3 before `IncreaseWindow`.
        if self.per_ack_increase {
            self.reno.on_ack_end(cx, ack);
        } else {
            self.reno.linux_increase(cx, ack);
        }
    }

    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        let start = self.reno.recovery_start;
        self.reno.on_congestion_event(cx, ev);
        if self.reno.recovery_start != start {
            self.reset_count();
        }
    }

    fn wants_rate_samples(&self) -> bool {
        false
    }

    fn ecn_response(&self) -> EcnResponse {
        EcnResponse::Scalable { ect1: self.ect1 }
    }

    /// Linux's DCTCP reduces through the CWR state and PRR (`dctcp_ssthresh` is the target).
    fn spreads_ecn_reduction(&self) -> bool {
        true
    }

    /// RFC 8257 §3.2's receiver: each ACK covers segments of one CE state (module docs).
    fn ce_change_ack(&self) -> CeChangeAck {
        if self.delay_ce_change_ack {
            CeChangeAck::ApartDelayed
        } else {
            CeChangeAck::Apart
        }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.reno.cwnd_bytes()
    }

    fn metrics(&self) -> CcMetrics {
        self.reno.metrics()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RttEstimator, WindowRules};
    use quicksim_engine::{Rng, SimDuration};

    const MDS: u64 = 1000;

    fn new_cc(config: Config) -> Dctcp {
        Dctcp::new(&config, &InitCtx { mds: MDS, window: &WindowRules::RFC9002, rng: &Rng::from_seed(1) })
    }

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    /// One ACK at `now` of `n` packets sent at `sent`, `ce` of them newly marked.
    fn ack(cc: &mut Dctcp, n: u64, ce: u64, sent: SimTime, now: SimTime) {
        let rtt = RttEstimator::new(SimDuration::from_millis(10));
        let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: 50 * MDS, window: &WindowRules::RFC9002 };
        for _ in 0..n {
            cc.on_ack(&mut cx, &AckEvent { sent_time: sent, bytes: MDS, app_limited: false });
        }
        let s = AckSummary {
            acked_bytes: n * MDS,
            acked_packets: n,
            largest_acked_sent_time: sent,
            app_limited: false,
            rate: None,
            ce_packets: ce,
        };
        cc.on_ack_end(&mut cx, &s);
    }

    /// RFC 8257 §3.3 by hand, g = 1/16, alpha in units of 2^-20 (1 = 1 048 576):
    /// window 1 (F = 0):    1 048 576 · 15/16                    = 983 040
    /// window 2 (F = 1/2):  (983 040 · 15 + 524 288) / 16         = 954 368
    /// window 3 (F = 1/4):  (954 368 · 15 + 262 144) / 16         = 911 104
    /// window 4 (F = 1):    (911 104 · 15 + 1 048 576) / 16       = 919 696
    #[test]
    fn alpha_follows_the_ewma_once_per_window() {
        let mut cc = new_cc(Config::default());
        assert_eq!(cc.alpha, ALPHA_ONE);
        // Window 1 ends with the first ACK (window_end starts at zero).
        ack(&mut cc, 4, 0, t(0), t(10));
        assert_eq!(cc.alpha, 983_040);
        // Window 2: packets sent from 10 ms on; ACKs of packets sent before do not end it.
        ack(&mut cc, 2, 1, t(5), t(12));
        assert_eq!(cc.alpha, 983_040);
        ack(&mut cc, 2, 1, t(10), t(20));
        assert_eq!(cc.alpha, 954_368);
        ack(&mut cc, 4, 1, t(20), t(30));
        assert_eq!(cc.alpha, 911_104);
        ack(&mut cc, 4, 4, t(30), t(40));
        assert_eq!(cc.alpha, 919_696);
        assert!((cc.alpha() - 919_696.0 / 1_048_576.0).abs() < 1e-12);
    }

    #[test]
    fn marks_cut_the_window_by_half_alpha_once_per_window() {
        let mut cc = new_cc(Config { alpha_on_init: 0.0, ..Default::default() });
        ack(&mut cc, 10, 0, t(0), t(10)); // slow start: 10 000 + 10 000
        assert_eq!((cc.cwnd_bytes(), cc.alpha), (20_000, 0));
        // Window 2: F = 4/8 = 1/2, alpha = 2^20/32 = 32 768 (1/32); cwnd · (1 - 1/64) = 19 687.5,
        // truncated cut 312: 19 688 (the cutting ACK grows nothing). ssthresh = cwnd: slow
        // start is over.
        ack(&mut cc, 8, 4, t(10), t(20));
        assert_eq!(cc.alpha, 32_768);
        assert_eq!(cc.cwnd_bytes(), 20_000 - 20_000 / 64);
        let after = cc.cwnd_bytes();
        assert_eq!(cc.metrics().ssthresh_bytes, after);
        // More marks on packets sent before the reduction (at 20 ms): no second cut.
        ack(&mut cc, 2, 2, t(15), t(22));
        assert_eq!(cc.cwnd_bytes(), after);
        // A new window with marks: cut again with the new alpha.
        ack(&mut cc, 2, 2, t(21), t(30));
        assert!(cc.cwnd_bytes() < after);
    }

    #[test]
    fn alpha_one_halves_like_reno_and_losses_halve() {
        let mut cc = new_cc(Config::default());
        // First ACK updates alpha from 1 with F = 1: stays 1; one mark halves the window (the
        // ACK that cuts grows nothing: Linux's CWR, ns-3's `EnterCwr`, before any increase).
        ack(&mut cc, 1, 1, t(0), t(10));
        assert_eq!(cc.alpha, ALPHA_ONE);
        assert_eq!(cc.cwnd_bytes(), 10_000 / 2);
        let mut lossy = new_cc(Config::default());
        let rtt = RttEstimator::new(SimDuration::from_millis(10));
        let mut cx = CcCtx { now: t(50), mds: MDS, rtt: &rtt, bytes_in_flight: 0, window: &WindowRules::RFC9002 };
        let ev = CongestionEvent { cause: crate::CongestionCause::Loss, sent_time: t(40), lost_bytes: MDS };
        lossy.on_congestion_event(&mut cx, &ev);
        assert_eq!(lossy.cwnd_bytes(), 5_000);
        assert_eq!(lossy.ecn_response(), EcnResponse::Scalable { ect1: false });
    }

    /// Linux's `tcp_reno_cong_avoid` in congestion avoidance, with delayed ACKs that each
    /// acknowledge the whole flight (nothing left in flight): two segments acknowledged per
    /// round at a two-segment window still add one segment per round. NewReno's INET counting
    /// restarted whenever the flight emptied and never grew here.
    #[test]
    fn grows_one_segment_per_window_when_each_ack_empties_the_flight() {
        let mut cc = new_cc(Config { alpha_on_init: 1.0, ..Default::default() });
        // A mark at alpha = 1 halves 11 000 to 5 500; repeated rounds of marks take the window
        // to the 2-segment floor (RFC 9002's minimum, 2 MDS).
        for r in 0..6 {
            ack(&mut cc, 1, 1, t(10 * r + 5), t(10 * r + 10));
        }
        assert_eq!(cc.cwnd_bytes(), 2 * MDS);
        let rtt = RttEstimator::new(SimDuration::from_millis(10));
        let round = |cc: &mut Dctcp, r: u64| {
            let now = t(100 + 10 * r);
            let mut cx = CcCtx { now, mds: MDS, rtt: &rtt, bytes_in_flight: 0, window: &WindowRules::RFC9002 };
            let sent = now - SimDuration::from_millis(5);
            for _ in 0..2 {
                cc.on_ack(&mut cx, &AckEvent { sent_time: sent, bytes: MDS, app_limited: false });
            }
            let s = AckSummary {
                acked_bytes: 2 * MDS,
                acked_packets: 2,
                largest_acked_sent_time: sent,
                app_limited: false,
                rate: None,
                ce_packets: 0,
            };
            cc.on_ack_end(&mut cx, &s);
        };
        // w = 2: the first ACK of two segments reaches the count: 3 segments.
        round(&mut cc, 0);
        assert_eq!(cc.cwnd_bytes(), 3 * MDS);
        // w = 3: 2 counted, then 4 >= 3 adds one and carries 1.
        round(&mut cc, 1);
        assert_eq!(cc.cwnd_bytes(), 3 * MDS);
        round(&mut cc, 2);
        assert_eq!((cc.cwnd_bytes(), cc.reno.carry), (4 * MDS, 1));
    }

    /// RFC 8257 §3.2's two ACKs at a change of CE state, the second delayed as ns-3 has it.
    #[test]
    fn the_receiver_acks_each_ce_state_apart() {
        assert_eq!(new_cc(Config::default()).ce_change_ack(), CeChangeAck::Apart);
        let ns3 = new_cc(Config { delay_ce_change_ack: true, ..Default::default() });
        assert_eq!(ns3.ce_change_ack(), CeChangeAck::ApartDelayed);
    }

    /// The count is zeroed by a reduction (Linux), or kept (`keep_increase_count`, ns-3).
    #[test]
    fn a_reduction_zeroes_the_count_unless_kept() {
        for keep in [false, true] {
            let mut cc = new_cc(Config { alpha_on_init: 0.0, keep_increase_count: keep, ..Default::default() });
            // Slow start to 20 000, a mark ends it (alpha 1/16: 19 375, 19 segments), then one
            // congestion-avoidance ACK of 8 segments.
            ack(&mut cc, 10, 0, t(0), t(10));
            ack(&mut cc, 1, 1, t(10), t(20));
            assert_eq!(cc.cwnd_bytes(), 19_375);
            ack(&mut cc, 8, 0, t(25), t(30));
            assert_eq!(cc.reno.carry, 8);
            ack(&mut cc, 1, 1, t(31), t(40));
            assert_eq!(cc.reno.carry, if keep { 8 } else { 0 }, "keep {keep}");
        }
    }
}
