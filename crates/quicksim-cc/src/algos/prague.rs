//! Prague, the L4S scalable congestion control, as draft-briscoe-iccrg-prague-congestion-control-04
//! (July 2024) describes it; the draft documents the Linux reference implementation
//! (L4STeam/linux `net/ipv4/tcp_prague.c`, v0.6), whose defaults are followed where the draft
//! defers to it:
//! - ECT(1) on every data packet; CE counted per packet from accurate feedback (QUIC ACK_ECN,
//!   TCP AccECN) through [`AckSummary::ce_packets`].
//! - DCTCP's scalable response (draft §2.3.2): alpha, the EWMA (g = 1/16, initial 1) of the
//!   fraction of marked packets per round, updated only once a mark was seen; on marks at most
//!   once per round trip cwnd -= alpha/2 · cwnd (an entry into the "CWR" state).
//! - Additive increase per ACK from the packets it acknowledges that were not marked (draft
//!   §2.3.3, "unsaturated" increase, (1-p)/p per round), also while reducing: only a loss
//!   stops it until recovery ends. Slow start as Reno, left at the first reduction.
//! - RTT independence (draft §2.4, Linux `RTT_CONTROL_RATE`, default on): once a flow has been
//!   out of slow start for `rtt_transition_rounds` rounds, a flow with smoothed RTT R below the
//!   target R' = 25 ms grows by (R/R')² segments per round instead of 1, and updates alpha and
//!   reduces at most once per R', so that it takes the rate of a flow with RTT R'.
//! - Pacing (draft §2.5): rate = cwnd / srtt, doubled while cwnd < ssthresh / 2 (slow start).
//! - Loss (draft §2.3.4): cwnd halves once per round trip, as Reno; a timeout collapses to the
//!   loss window (RFC 5681 §3.1).
//!
//! Left out: the classic-ECN-AQM detection and fallback (draft §2.4.5; off by default in Linux,
//! `prague_ecn_fallback = 0`), the TSO/GSO burst limit (no segmentation offload here), undo of
//! spurious loss reductions, and the fallback to Reno when AccECN is not negotiated (the TCP
//! transport then reports classic `Ecn` events, which Prague answers as a loss).

use quicksim_engine::{Rate, SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use crate::registry::Algorithm;
use crate::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CongestionCause, CongestionController, CongestionEvent,
    EcnResponse, InitCtx, Phase,
};

/// alpha and the additive increase in units of 2^-20 (Linux `PRAGUE_ALPHA_BITS`, `CWND_UNIT`).
pub const ONE: u64 = 1 << 20;
/// EWMA gain g = 2^-4 (draft §2.3.2, Linux `PRAGUE_SHIFT_G`).
const SHIFT_G: u32 = 4;
/// RTTs above this are never scaled (Linux `MAX_SCALED_RTT`, 100 ms), in ps.
const MAX_SCALED_RTT_PS: u64 = 100_000_000_000;

/// Prague settings. `Config::default()` is the draft's (and Linux's) default.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// RTT independence (draft §2.4; Linux `prague_rtt_scaling = RTT_CONTROL_RATE`). Off: the
    /// flow is a plain scalable controller whose rate goes as 1/RTT. Default true.
    pub rtt_independence: bool,
    /// The target RTT R' of RTT independence, in ms (Linux `prague_rtt_target`, 25 ms).
    #[serde(deserialize_with = "positive_ms")]
    pub rtt_target_ms: f64,
    /// Rounds after slow start before RTT independence applies (Linux
    /// `prague_rtt_transition`, 500): short flows keep their own RTT's responsiveness.
    pub rtt_transition_rounds: u32,
    /// Pace at cwnd / srtt (twice that in slow start). Default true.
    pub pacing: bool,
}

fn positive_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if (0.001..=10_000.0).contains(&v) {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!("{v} is not a time in ms in [0.001, 10000]")))
    }
}

impl Default for Config {
    fn default() -> Self {
        Config { rtt_independence: true, rtt_target_ms: 25.0, rtt_transition_rounds: 500, pacing: true }
    }
}

/// Prague state for one path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Prague {
    /// cwnd in units of 2^-20 bytes (Linux `frac_cwnd`, there in segments).
    cwnd_fp: u64,
    #[serde(with = "crate::serde_max_u64")]
    ssthresh: u64,
    /// alpha in units of 2^-20, times 1/g (Linux `upscaled_alpha`: keeps the EWMA's remainder).
    upscaled_alpha: u64,
    /// Packets acknowledged and marked since the last alpha update.
    acked: u64,
    marked: u64,
    /// The round ends with the ACK of a packet sent at or after this time (Linux `next_seq`).
    round_end: SimTime,
    /// When alpha was last updated, and the last reduction on marks (Linux `alpha_stamp`,
    /// `cwr_stamp`).
    alpha_stamp: SimTime,
    cwr_stamp: SimTime,
    /// Packets sent before these times belong to the current CWR (marks) and loss periods.
    cwr_start: SimTime,
    loss_start: SimTime,
    /// Rounds since slow start ended (Linux `round`).
    round: u32,
    saw_ce: bool,
    phase: Phase,
    target: SimDuration,
    rtt_independence: bool,
    transition: u32,
    pacing: bool,
}

impl Algorithm for Prague {
    const NAME: &'static str = "prague";
    type Config = Config;

    fn new(config: &Config, cx: &InitCtx) -> Self {
        assert!(cx.mds > 0, "Prague needs a positive MDS");
        Prague {
            cwnd_fp: cx.window.initial_window(cx.mds) * ONE,
            ssthresh: u64::MAX,
            upscaled_alpha: ONE << SHIFT_G,
            acked: 0,
            marked: 0,
            round_end: SimTime::ZERO,
            alpha_stamp: SimTime::ZERO,
            cwr_stamp: SimTime::ZERO,
            cwr_start: SimTime::ZERO,
            loss_start: SimTime::ZERO,
            round: 0,
            saw_ce: false,
            phase: Phase::Open,
            target: SimDuration::from_secs_f64(config.rtt_target_ms / 1e3),
            rtt_independence: config.rtt_independence,
            transition: config.rtt_transition_rounds,
            pacing: config.pacing,
        }
    }
}

impl Prague {
    /// alpha (0..=1).
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> SHIFT_G) as f64 / ONE as f64
    }

    fn cwnd(&self) -> u64 {
        self.cwnd_fp.div_ceil(ONE)
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd() < self.ssthresh
    }

    /// Linux `prague_is_rtt_indep`: on, out of slow start, and past the transition rounds.
    fn rtt_indep(&self) -> bool {
        self.rtt_independence && !self.in_slow_start() && self.round >= self.transition
    }

    /// The additive increase per round in units of 2^-20 segments (Linux
    /// `prague_rate_scaled_ai_ack_increase`): (srtt / R')² below the target, else 1.
    pub fn ai_per_round(&self, srtt: SimDuration) -> u64 {
        if !self.rtt_independence || self.round < self.transition || srtt.ps() == 0 || srtt.ps() > MAX_SCALED_RTT_PS {
            return ONE;
        }
        let (r, t) = (u128::from(srtt.ps()), u128::from(self.target.ps()));
        if r >= t {
            return ONE;
        }
        let d = t * t;
        ((r * r * u128::from(ONE) + d / 2) / d) as u64
    }

    /// Linux `prague_update_alpha` with `prague_new_round`.
    fn new_round(&mut self, now: SimTime) {
        if self.saw_ce {
            let f = if self.marked == 0 { 0 } else { (self.marked << 20) / self.acked.max(1) };
            let a = self.upscaled_alpha;
            self.upscaled_alpha = (a - (a >> SHIFT_G) + f).min(ONE << SHIFT_G);
        }
        self.alpha_stamp = now;
        self.round_end = now;
        self.acked = 0;
        self.marked = 0;
        if !self.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
    }

    fn floor(cx: &CcCtx) -> u64 {
        cx.window.minimum_window(cx.mds) * ONE
    }
}

impl CongestionController for Prague {
    fn on_ack(&mut self, _cx: &mut CcCtx, _ack: &AckEvent) {}

    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        let now = cx.now;
        let ce = ack.ce_packets.min(ack.acked_packets);
        self.saw_ce |= ce > 0;
        let sent = ack.largest_acked_sent_time;
        let in_loss = sent < self.loss_start;
        if (!in_loss && self.phase == Phase::Recovery) || self.phase == Phase::AppLimited {
            self.phase = Phase::Open;
        }
        // Reduction on marks (Linux `prague_enter_cwr`): once per CWR period, and with RTT
        // independence not within R' of the previous one.
        let cwr_due = !(self.rtt_indep() && now.saturating_sub(self.cwr_stamp) < self.target);
        if ce > 0 && sent >= self.cwr_start && cwr_due {
            self.cwr_stamp = now;
            self.cwr_start = now;
            let alpha = u128::from(self.upscaled_alpha >> SHIFT_G);
            let cut = ((alpha * u128::from(self.cwnd_fp) + u128::from(ONE)) >> 21) as u64;
            self.cwnd_fp = (self.cwnd_fp - cut).max(Self::floor(cx));
            self.ssthresh = self.cwnd();
        }
        // Additive increase from the unmarked packets (Linux `prague_update_cwnd`).
        let unmarked = ack.acked_packets - ce;
        if unmarked > 0 && !in_loss && !ack.app_limited {
            let mut left = unmarked * cx.mds;
            if self.in_slow_start() {
                let add = left.min(self.ssthresh.saturating_sub(self.cwnd()));
                self.cwnd_fp += add * ONE;
                left -= add;
            }
            if !self.in_slow_start() && left > 0 {
                // cwnd += ai · MDS · acked / cwnd per ACK: ai segments per round.
                let ai = u128::from(self.ai_per_round(cx.rtt.smoothed()));
                let inc = ai * u128::from(left) * u128::from(cx.mds) / u128::from(self.cwnd().max(1));
                self.cwnd_fp += inc as u64;
            }
        } else if ack.app_limited && !in_loss {
            self.phase = Phase::AppLimited;
        }
        // Counts for alpha; the round ends (Linux `prague_should_update_ewma`) when a packet sent
        // after its start is acknowledged and, with RTT independence, R' has passed.
        self.acked += ack.acked_packets;
        self.marked += ce;
        if sent >= self.round_end && !(self.rtt_indep() && now.saturating_sub(self.alpha_stamp) < self.target) {
            self.new_round(now);
        }
    }

    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        let floor = Self::floor(cx);
        if ev.sent_time >= self.loss_start {
            // Linux `prague_enter_loss`: frac_cwnd -= frac_cwnd / 2; ssthresh follows cwnd.
            self.loss_start = cx.now;
            self.cwnd_fp = (self.cwnd_fp - self.cwnd_fp / 2).max(floor);
            self.ssthresh = match ev.cause {
                CongestionCause::Rto => (ev.lost_bytes / 2).max(cx.window.minimum_window(cx.mds)),
                _ => self.cwnd(),
            };
            self.phase = Phase::Recovery;
        }
        match ev.cause {
            CongestionCause::Rto => {
                self.cwnd_fp = cx.window.loss_window(cx.mds) * ONE;
                self.loss_start = cx.now;
            }
            CongestionCause::PersistentCongestion => {
                self.cwnd_fp = cx.window.loss_window(cx.mds) * ONE;
                self.loss_start = SimTime::ZERO;
                self.phase = Phase::Open;
            }
            CongestionCause::Loss | CongestionCause::Ecn => {}
        }
    }

    fn pacing_rate(&self, cx: &CcCtx) -> Option<Rate> {
        let srtt = cx.rtt.smoothed().ps();
        if !self.pacing || srtt == 0 || !cx.rtt.has_sample() {
            return None;
        }
        // Linux `prague_update_pacing_rate`: 200 % in the first half of slow start, else 100 %.
        let gain = if self.cwnd() < self.ssthresh / 2 { 2 } else { 1 };
        let bits = u128::from(self.cwnd()) * 8 * 1_000_000_000_000 * gain / u128::from(srtt);
        Some(Rate::bps(u64::try_from(bits).unwrap_or(u64::MAX)))
    }

    fn wants_rate_samples(&self) -> bool {
        false
    }

    fn ecn_response(&self) -> EcnResponse {
        EcnResponse::Scalable { ect1: true }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.cwnd()
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd(), ssthresh_bytes: self.ssthresh, state: self.phase.state(self.cwnd(), self.ssthresh) }
    }
}

#[cfg(test)]
#[path = "prague_tests.rs"]
mod tests;
