//! BBR as the IETF specifies it today (`cc = "bbr"`): draft-ietf-ccwg-bbr-01 (21 October 2024,
//! BBRv3). Section numbers below are that revision's.
//!
//! Model (§5.5): `max_bw`, the maximum delivery rate over the last two ProbeBW cycles;
//! `min_rtt` over 10 s; the short-term lower bounds `bw_lo`/`inflight_lo` cut by loss
//! (×0.7 per round with loss, outside bandwidth probing) and the long-term `inflight_hi`
//! set where loss exceeded 2 % of the data in flight. Control (§5.6): pacing rate =
//! pacing_gain · bw · 99 %, cwnd = cwnd_gain · BDP (+ ACK aggregation, quantization), bounded
//! by the model. States (§5.3): Startup (pacing 2.77, cwnd 2) until the bandwidth grew < 25 %
//! for three rounds or loss was high; Drain (0.35); ProbeBW's DOWN (0.9), CRUISE (1), REFILL
//! (1, one round) and UP (1.25, cwnd 2.25) with a probe every 2-3 s or after as many rounds as
//! a Reno flow would take (at most 63); ProbeRTT (cwnd BDP/2) when min_rtt was not refreshed for
//! 5 s, for 200 ms and a round.
//!
//! Losses (§5.5.10, §5.6.4.4): fast recovery only saves the window (no packet conservation:
//! that was BBRv1's) and restores it at the end; the loss response is the model's, once per
//! round with a loss (BBRNoteLoss makes that round last one round past its first loss). An RTO
//! leaves in flight + 1 packet. draft-ietf-ccwg-bbr-06 (6 July 2026, the latest revision) reads
//! the same on each of these rules.
//!
//! Simplifications, said here: the per-lost-packet `BBRHandleLostPacket` is checked on each
//! ACK's rate sample (the transport reports losses per ACK; Linux BBRv3 checks both; the
//! sample's tx_in_flight is the newest acked packet's, a little above the lost one's while
//! in-flight rises in ProbeBW_UP); ECN is treated as loss by the transport's event, as for every controller; the quantum is one
//! segment (no TSO); no undo of spurious recoveries (§5.5.11 of -06).

use quicksim_engine::{Rate, Rng, SimDuration, SimTime, PS_PER_MS};
use serde::{Deserialize, Serialize};

use super::bbr_common::{AckAggregation, BbrWindow};
use crate::registry::Algorithm;
use crate::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CongestionCause, CongestionController, CongestionEvent,
    InitCtx, RateSample, SentPacket,
};

/// BBR settings (`cc = { algo = "bbr", .. }`). Defaults: the draft's constants.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// BBRLossThresh (§5.5.10.2): the loss rate per round that bounds inflight_hi. Default 0.02.
    #[serde(deserialize_with = "crate::registry::check::open_unit")]
    pub loss_thresh: f64,
    /// BBRBeta (§5.5.10.3): the multiplicative cut of the lower bounds on loss. Default 0.7.
    #[serde(deserialize_with = "crate::registry::check::open_unit")]
    pub beta: f64,
    /// ProbeRTTInterval (§5.3.4.2) in ms. Default 5000.
    pub probe_rtt_interval_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { loss_thresh: 0.02, beta: 0.7, probe_rtt_interval_ms: 5_000 }
    }
}

/// §5.3.1.1 BBRStartupPacingGain = 4·ln 2.
const STARTUP_PACING_GAIN: f64 = 2.77;
const STARTUP_CWND_GAIN: f64 = 2.0;
/// §5.3.2 BBRDrainPacingGain.
const DRAIN_PACING_GAIN: f64 = 0.35;
/// §5.3.3 ProbeBW gains.
const DOWN_PACING_GAIN: f64 = 0.90;
const UP_PACING_GAIN: f64 = 1.25;
const PROBE_BW_CWND_GAIN: f64 = 2.0;
const UP_CWND_GAIN: f64 = 2.25;
/// §5.3.4 ProbeRTT: cwnd gain, duration; §5.5.4 MinRTTFilterLen.
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
const PROBE_RTT_DURATION: SimDuration = SimDuration(200 * PS_PER_MS);
const MIN_RTT_FILTER_LEN: SimDuration = SimDuration(10_000 * PS_PER_MS);
/// §5.5.10.3 BBRHeadroom.
const HEADROOM: f64 = 0.15;
/// §5.3.1.3 Startup high-loss exit: loss events per round.
const STARTUP_FULL_LOSS_COUNT: u32 = 6;
/// §5.5.9 ACK aggregation window (rounds).
const EXTRA_ACKED_FILTER_LEN: u32 = 10;

/// The state machine's state (§5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum State {
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}

impl State {
    fn in_probe_bw(self) -> bool {
        matches!(self, State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp)
    }
    /// §5.5.10.3 BBRIsProbingBW.
    fn probing_bw(self) -> bool {
        matches!(self, State::Startup | State::ProbeBwRefill | State::ProbeBwUp)
    }
}

/// §5.3.3.6 where ProbeBW is in its reaction to its own probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
enum AckPhase {
    Init,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
    Refilling,
}

/// BBR state of one connection. Bytes and bits/s; `u64::MAX` stands for the draft's Infinity.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bbr {
    config: Config,
    /// cwnd, pacing rate and the recovery period (shared with `bbr1`).
    w: BbrWindow,
    state: State,
    pacing_gain: f64,
    cwnd_gain: f64,
    // Model.
    max_bw_slots: [u64; 2],
    bw: u64,
    bw_lo: u64,
    bw_latest: u64,
    inflight_hi: u64,
    inflight_lo: u64,
    inflight_latest: u64,
    min_rtt: Option<SimDuration>,
    min_rtt_stamp: SimTime,
    probe_rtt_min_delay: Option<SimDuration>,
    probe_rtt_min_stamp: SimTime,
    probe_rtt_expired: bool,
    aggregation: AckAggregation,
    // Rounds.
    delivered: u64,
    next_round_delivered: u64,
    round_count: u64,
    round_start: bool,
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    // Startup.
    filled_pipe: bool,
    full_bw: u64,
    full_bw_count: u32,
    full_bw_now: bool,
    // ProbeBW.
    cycle_stamp: SimTime,
    ack_phase: AckPhase,
    rounds_since_bw_probe: u64,
    bw_probe_wait: SimDuration,
    bw_probe_samples: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_acks: u64,
    probe_up_cnt: u64,
    // ProbeRTT.
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    newly_acked: u64,
    /// A congestion event came before the ACK that declared it (the transports call
    /// `on_congestion_event` first): BBRNoteLoss runs once that ACK's delivery is counted.
    loss_pending: bool,
    /// C.is_cwnd_limited: the window was full at a send in this round or the last one.
    cwnd_limited_round: bool,
    cwnd_limited_prev: bool,
    /// The connection's own random stream (`InitCtx::rng`), for BBRPickProbeWait.
    rng: Rng,
}

impl Algorithm for Bbr {
    const NAME: &'static str = "bbr";
    type Config = Config;
    fn new(cfg: &Config, cx: &InitCtx) -> Self {
        let mut b = Bbr {
            config: *cfg,
            w: BbrWindow::new(cx),
            state: State::Startup,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            max_bw_slots: [0; 2],
            bw: 0,
            bw_lo: u64::MAX,
            bw_latest: 0,
            inflight_hi: u64::MAX,
            inflight_lo: u64::MAX,
            inflight_latest: 0,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: SimTime::ZERO,
            probe_rtt_expired: false,
            aggregation: AckAggregation::default(),
            delivered: 0,
            next_round_delivered: 0,
            round_count: 0,
            round_start: false,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            filled_pipe: false,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_now: false,
            cycle_stamp: SimTime::ZERO,
            ack_phase: AckPhase::Init,
            rounds_since_bw_probe: 0,
            bw_probe_wait: SimDuration::ZERO,
            bw_probe_samples: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_acks: 0,
            probe_up_cnt: u64::MAX,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            newly_acked: 0,
            loss_pending: false,
            cwnd_limited_round: false,
            cwnd_limited_prev: false,
            rng: cx.rng.clone(),
        };
        // §5.6.2 BBRInitPacingRate: 2.77 · IW / 1 ms until an RTT is known.
        b.w.pacing_bps = (STARTUP_PACING_GAIN * b.w.initial_cwnd as f64 * 8.0 / 1e-3) as u64;
        b
    }
}

impl Bbr {
    /// The current state (for tests and traces).
    pub fn state(&self) -> State {
        self.state
    }

    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The bandwidth the control uses (min of max_bw and the bounds).
    pub fn bw(&self) -> Rate {
        Rate::bps(self.bw)
    }

    fn max_bw(&self) -> u64 {
        self.max_bw_slots[0].max(self.max_bw_slots[1])
    }

    fn min_pipe(&self) -> u64 {
        (4 * self.w.mds).max(self.w.floor)
    }

    /// §5.6.4.2 BBRBDPMultiple.
    fn bdp_multiple(&self, bw: u64, gain: f64) -> u64 {
        match self.min_rtt {
            None => self.w.initial_cwnd,
            Some(rtt) => (gain * Rate::bps(bw).bytes_in(rtt) as f64) as u64,
        }
    }

    /// §5.6.4.2 BBRQuantizationBudget (send quantum = one segment).
    fn quantization_budget(&self, inflight: u64) -> u64 {
        let mut v = inflight.max(3 * self.w.mds).max(self.min_pipe());
        if self.state == State::ProbeBwUp {
            v += 2 * self.w.mds;
        }
        v
    }

    /// §5.6.4.2 BBRInflight.
    fn inflight(&self, bw: u64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// §5.5.10.3 BBRInflightWithHeadroom.
    fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_hi == u64::MAX {
            return u64::MAX;
        }
        let headroom = ((HEADROOM * self.inflight_hi as f64) as u64).max(self.w.mds);
        self.inflight_hi.saturating_sub(headroom).max(self.min_pipe())
    }

    /// §5.3.3.5 BBRTargetInflight.
    fn target_inflight(&self) -> u64 {
        self.bdp_multiple(self.bw, 1.0).min(self.w.cwnd)
    }

    fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u64::MAX;
        self.inflight_lo = u64::MAX;
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    fn enter_startup(&mut self) {
        self.state = State::Startup;
        self.pacing_gain = STARTUP_PACING_GAIN;
        self.cwnd_gain = STARTUP_CWND_GAIN;
    }

    fn enter_drain(&mut self) {
        self.state = State::Drain;
        self.pacing_gain = DRAIN_PACING_GAIN;
        self.cwnd_gain = STARTUP_CWND_GAIN;
    }

    fn start_probe_bw_down(&mut self, now: SimTime) {
        // BBRResetCongestionSignals.
        self.loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
        self.probe_up_cnt = u64::MAX;
        // BBRPickProbeWait (§5.3.3.5.3): random_int_between(0, 1) rounds, 2 s plus
        // random_float_between(0, 1) s (in whole microseconds, as Linux's bbr_pick_probe_wait).
        self.rounds_since_bw_probe = self.rng.range_u64(0, 1);
        self.bw_probe_wait = SimDuration::from_micros(2_000_000 + self.rng.range_u64(0, 999_999));
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.state = State::ProbeBwDown;
        self.pacing_gain = DOWN_PACING_GAIN;
        self.cwnd_gain = PROBE_BW_CWND_GAIN;
    }

    fn start_probe_bw_cruise(&mut self) {
        self.state = State::ProbeBwCruise;
        self.pacing_gain = 1.0;
        self.cwnd_gain = PROBE_BW_CWND_GAIN;
    }

    fn start_probe_bw_refill(&mut self) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.state = State::ProbeBwRefill;
        self.pacing_gain = 1.0;
        self.cwnd_gain = PROBE_BW_CWND_GAIN;
    }

    fn start_probe_bw_up(&mut self, now: SimTime, rs: Option<&RateSample>) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rs.map_or(0, |r| r.rate.bits_per_s);
        self.state = State::ProbeBwUp;
        self.pacing_gain = UP_PACING_GAIN;
        self.cwnd_gain = UP_CWND_GAIN;
        self.cycle_stamp = now;
        self.raise_inflight_hi_slope();
    }

    fn raise_inflight_hi_slope(&mut self) {
        let growth = self.w.mds << self.bw_probe_up_rounds.min(30);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_cnt = (self.w.cwnd / growth).max(1);
    }

    /// §5.5.10.2 BBRNoteLoss: the first loss of a round restarts the loss round, so that the
    /// latest delivery signals cover a full round trip after it.
    fn note_loss(&mut self) {
        if !self.loss_in_round {
            self.loss_round_delivered = self.delivered;
        }
        self.loss_in_round = true;
    }

    /// C.is_cwnd_limited (§2): the window was full at some send in the last round trip.
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_round || self.cwnd_limited_prev
    }
}

#[path = "bbr_model.rs"]
mod model;

impl CongestionController for Bbr {
    fn on_packet_sent(&mut self, cx: &mut CcCtx, _p: &SentPacket) {
        if cx.bytes_in_flight + self.w.mds > self.w.cwnd {
            self.cwnd_limited_round = true;
        }
    }

    fn on_ack(&mut self, _cx: &mut CcCtx, _ack: &AckEvent) {}

    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        self.delivered += ack.acked_bytes;
        self.newly_acked = ack.acked_bytes;
        if std::mem::take(&mut self.loss_pending) || ack.rate.is_some_and(|r| r.newly_lost > 0) {
            // §5.2.4 / §5.5.10.2: the transport marked packets lost while processing this ACK.
            self.note_loss();
        }
        // §5.6.4.4: recovery ends, the window before it comes back.
        self.w.ack_ends_recovery(ack.largest_acked_sent_time);
        self.update_model_and_state(cx, ack);
        self.update_control_parameters(cx, ack);
    }

    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        match ev.cause {
            CongestionCause::Rto | CongestionCause::PersistentCongestion => {
                // §5.6.4.4 BBROnEnterRTO: save the window, then what is in flight plus one
                // packet (at least the transport's loss window).
                self.w.save_cwnd(self.state == State::ProbeRtt);
                self.note_loss();
                self.w.cwnd = (cx.bytes_in_flight + self.w.mds).max(self.w.floor);
                self.w.recovery_start = Some(cx.now);
            }
            CongestionCause::Loss | CongestionCause::Ecn => {
                self.loss_pending = true;
                if self.w.recovery_start.is_some_and(|s| ev.sent_time < s) {
                    return;
                }
                // §5.6.4.4 BBROnEnterFastRecovery: save the window, nothing more; the loss
                // response is the model's (§5.5.10), and the window comes back at the end.
                self.w.save_cwnd(self.state == State::ProbeRtt);
                self.w.recovery_start = Some(cx.now);
            }
        }
    }

    fn cwnd_bytes(&self) -> u64 {
        self.w.cwnd
    }

    fn owns_recovery_window(&self) -> bool {
        true
    }

    fn pacing_rate(&self, _cx: &CcCtx) -> Option<Rate> {
        self.w.pacing_rate()
    }

    fn metrics(&self) -> CcMetrics {
        self.w.metrics(self.state == State::Startup)
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
