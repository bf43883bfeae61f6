//! BBR's per-ACK work (draft-ietf-ccwg-bbr-01 §5.2 `BBRUpdateOnACK`): the model and state
//! update (§5.3, §5.5) and the control parameters (§5.6), in the draft's order.

use quicksim_engine::SimTime;

use super::{
    AckPhase, Bbr, State, EXTRA_ACKED_FILTER_LEN, MIN_RTT_FILTER_LEN, PROBE_RTT_CWND_GAIN,
    PROBE_RTT_DURATION, STARTUP_FULL_LOSS_COUNT,
};
use crate::{AckSummary, CcCtx, RateSample};

impl Bbr {
    /// §5.2 BBRUpdateModelAndState.
    pub(super) fn update_model_and_state(&mut self, cx: &CcCtx, ack: &AckSummary) {
        let rs = ack.rate.as_ref();
        self.update_latest_delivery_signals(rs);
        self.update_congestion_signals(rs);
        self.update_ack_aggregation(cx.now, ack.acked_bytes);
        self.check_full_bw_reached(rs);
        self.check_startup_done(cx, rs);
        self.check_drain_done(cx);
        self.update_probe_bw_cycle_phase(cx, rs);
        self.update_min_rtt(cx);
        self.check_probe_rtt(cx, ack);
        self.advance_latest_delivery_signals(rs);
        // §5.5.8 BBRBoundBWForModel.
        self.bw = self.max_bw().min(self.bw_lo);
    }

    /// §5.5.10.2 BBRUpdateLatestDeliverySignals.
    fn update_latest_delivery_signals(&mut self, rs: Option<&RateSample>) {
        self.loss_round_start = false;
        let Some(rs) = rs else { return };
        self.bw_latest = self.bw_latest.max(rs.rate.bits_per_s);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.2 BBRAdvanceLatestDeliverySignals.
    fn advance_latest_delivery_signals(&mut self, rs: Option<&RateSample>) {
        if let (true, Some(rs)) = (self.loss_round_start, rs) {
            self.bw_latest = rs.rate.bits_per_s;
            self.inflight_latest = rs.delivered;
        }
    }

    /// §5.5.10.3 BBRUpdateCongestionSignals (with §5.5.5 BBRUpdateMaxBw and §5.5.1 rounds).
    fn update_congestion_signals(&mut self, rs: Option<&RateSample>) {
        self.round_start = false;
        let Some(rs) = rs else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.start_round();
            self.round_count += 1;
            self.rounds_since_bw_probe += 1;
            self.round_start = true;
            self.cwnd_limited_prev = self.cwnd_limited_round;
            self.cwnd_limited_round = false;
        }
        if rs.rate.bits_per_s >= self.max_bw() || !rs.is_app_limited {
            self.max_bw_slots[0] = self.max_bw_slots[0].max(rs.rate.bits_per_s);
        }
        if rs.newly_lost > 0 {
            self.loss_events_in_round += 1;
        }
        if !self.loss_round_start {
            return;
        }
        // BBRAdaptLowerBoundsFromCongestion: not while probing for bandwidth.
        if !self.state.probing_bw() && self.loss_in_round {
            if self.bw_lo == u64::MAX {
                self.bw_lo = self.max_bw();
            }
            if self.inflight_lo == u64::MAX {
                self.inflight_lo = self.w.cwnd;
            }
            let beta = self.config.beta;
            self.bw_lo = self.bw_latest.max((beta * self.bw_lo as f64) as u64);
            self.inflight_lo = self.inflight_latest.max((beta * self.inflight_lo as f64) as u64);
        }
        self.loss_in_round = false;
        if self.state != State::Startup {
            self.loss_events_in_round = 0;
        }
    }

    /// §5.5.9 BBRUpdateACKAggregation (two slots of half the 10-round window, as Linux).
    fn update_ack_aggregation(&mut self, now: SimTime, acked: u64) {
        if acked == 0 {
            return;
        }
        let (bw, cwnd) = (self.bw, self.w.cwnd);
        self.aggregation.update(now, acked, bw, cwnd, self.round_start, EXTRA_ACKED_FILTER_LEN / 2, u64::MAX);
    }

    /// §5.3.1.2 BBRCheckFullBWReached (also ends ProbeBW_UP: `full_bw_now`).
    fn check_full_bw_reached(&mut self, rs: Option<&RateSample>) {
        let Some(rs) = rs else { return };
        if self.full_bw_now || rs.is_app_limited {
            return;
        }
        if rs.rate.bits_per_s as f64 >= self.full_bw as f64 * 1.25 {
            self.reset_full_bw();
            self.full_bw = rs.rate.bits_per_s;
            return;
        }
        if !self.round_start {
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= 3;
        if self.full_bw_now {
            self.filled_pipe = true;
        }
    }

    /// §5.3.1.3 BBRCheckStartupDone with BBRCheckStartupHighLoss.
    fn check_startup_done(&mut self, cx: &CcCtx, rs: Option<&RateSample>) {
        if self.state == State::Startup && self.loss_round_start {
            let high_loss = self.w.recovery_start.is_some()
                && self.loss_events_in_round >= STARTUP_FULL_LOSS_COUNT
                && rs.is_some_and(|r| self.inflight_too_high(r));
            if high_loss {
                self.inflight_hi = self.bdp_multiple(self.max_bw(), 1.0).max(self.inflight_latest);
                self.filled_pipe = true;
            }
            self.loss_events_in_round = 0;
        }
        if self.state == State::Startup && self.filled_pipe {
            self.enter_drain();
        }
        let _ = cx;
    }

    /// §5.3.2 BBRCheckDrainDone.
    fn check_drain_done(&mut self, cx: &CcCtx) {
        if self.state == State::Drain && cx.bytes_in_flight <= self.inflight(self.max_bw(), 1.0) {
            self.enter_probe_bw(cx.now);
        }
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.start_probe_bw_down(now);
    }

    /// §5.5.10.2 IsInflightTooHigh.
    fn inflight_too_high(&self, rs: &RateSample) -> bool {
        rs.lost as f64 > rs.tx_in_flight as f64 * self.config.loss_thresh
    }

    /// §5.3.3.6 BBRUpdateProbeBWCyclePhase.
    fn update_probe_bw_cycle_phase(&mut self, cx: &CcCtx, rs: Option<&RateSample>) {
        if !self.filled_pipe {
            return;
        }
        self.adapt_upper_bounds(cx, rs);
        if !self.state.in_probe_bw() {
            return;
        }
        let now = cx.now;
        let state = self.state;
        match state {
            State::ProbeBwDown => {
                if self.check_time_to_probe_bw(now) {
                    return;
                }
                if self.check_time_to_cruise(cx) {
                    self.start_probe_bw_cruise();
                }
            }
            State::ProbeBwCruise => {
                self.check_time_to_probe_bw(now);
            }
            State::ProbeBwRefill if self.round_start => {
                self.bw_probe_samples = true;
                self.start_probe_bw_up(now, rs);
            }
            State::ProbeBwUp if self.check_time_to_go_down(rs) => self.start_probe_bw_down(now),
            _ => {}
        }
    }

    /// §5.3.3.6 BBRCheckTimeToProbeBW, with BBRIsRenoCoexistenceProbeTime.
    fn check_time_to_probe_bw(&mut self, now: SimTime) -> bool {
        let reno_rounds = (self.target_inflight() / self.w.mds).min(63);
        if now - self.cycle_stamp > self.bw_probe_wait || self.rounds_since_bw_probe >= reno_rounds {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// §5.3.3.6 BBRCheckTimeToCruise.
    fn check_time_to_cruise(&self, cx: &CcCtx) -> bool {
        let inflight = cx.bytes_in_flight;
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight(self.max_bw(), 1.0)
    }

    /// §5.3.3.6 BBRCheckTimeToGoDown.
    fn check_time_to_go_down(&mut self, rs: Option<&RateSample>) -> bool {
        if self.is_cwnd_limited() && self.w.cwnd >= self.inflight_hi {
            // inflight_hi is the limit: probe further before deciding.
            self.reset_full_bw();
            self.full_bw = rs.map_or(0, |r| r.rate.bits_per_s);
            return false;
        }
        self.full_bw_now
    }

    /// §5.5.10.2 BBRAdaptUpperBounds.
    fn adapt_upper_bounds(&mut self, cx: &CcCtx, rs: Option<&RateSample>) {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The end of the samples of the bandwidth probe (Linux `bbr_adapt_upper_bounds`):
            // forget the previous cycle's maximum (BBRAdvanceMaxBwFilter), once per cycle.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.state.in_probe_bw() && !rs.is_some_and(|r| r.is_app_limited) {
                self.max_bw_slots[1] = self.max_bw_slots[0];
                self.max_bw_slots[0] = 0;
            }
        }
        let Some(rs) = rs else { return };
        if self.inflight_too_high(rs) {
            if self.bw_probe_samples {
                // BBRHandleInflightTooHigh.
                self.bw_probe_samples = false;
                if !rs.is_app_limited {
                    let target = (self.config.beta * self.target_inflight() as f64) as u64;
                    self.inflight_hi = rs.tx_in_flight.max(target);
                }
                if self.state == State::ProbeBwUp {
                    self.start_probe_bw_down(cx.now);
                }
            }
            // Loss is too high for this sample to raise the upper bound.
            return;
        }
        if self.inflight_hi == u64::MAX {
            return;
        }
        if rs.tx_in_flight > self.inflight_hi {
            self.inflight_hi = rs.tx_in_flight;
        }
        if self.state == State::ProbeBwUp {
            // BBRProbeInflightHiUpward.
            if !self.is_cwnd_limited() || self.w.cwnd < self.inflight_hi {
                return;
            }
            self.bw_probe_up_acks += self.newly_acked;
            if self.bw_probe_up_acks >= self.probe_up_cnt {
                let delta = self.bw_probe_up_acks / self.probe_up_cnt;
                self.bw_probe_up_acks -= delta * self.probe_up_cnt;
                self.inflight_hi += delta * self.w.mds;
            }
            if self.round_start {
                self.raise_inflight_hi_slope();
            }
        }
    }

    /// §5.5.4 BBRUpdateMinRTT (with §5.3.4 ProbeRTT's shorter filter).
    fn update_min_rtt(&mut self, cx: &CcCtx) {
        let now = cx.now;
        let interval = quicksim_engine::SimDuration::from_millis(self.config.probe_rtt_interval_ms);
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + interval;
        let rtt = cx.rtt.latest();
        if rtt.ps() > 0 && (self.probe_rtt_min_delay.is_none_or(|d| rtt < d) || self.probe_rtt_expired) {
            self.probe_rtt_min_delay = Some(rtt);
            self.probe_rtt_min_stamp = now;
        }
        let min_rtt_expired = now > self.min_rtt_stamp + MIN_RTT_FILTER_LEN;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
    }

    /// §5.3.4.4 BBRCheckProbeRTT.
    fn check_probe_rtt(&mut self, cx: &CcCtx, ack: &AckSummary) {
        let now = cx.now;
        if self.state != State::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.state = State::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = PROBE_RTT_CWND_GAIN;
            self.w.save_cwnd(self.state == State::ProbeRtt);
            self.probe_rtt_done = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state == State::ProbeRtt {
            let probe_cwnd = self.probe_rtt_cwnd();
            match self.probe_rtt_done {
                None if cx.bytes_in_flight <= probe_cwnd => {
                    self.probe_rtt_done = Some(now + PROBE_RTT_DURATION);
                    self.probe_rtt_round_done = false;
                    self.start_round();
                }
                None => {}
                Some(done) => {
                    if self.round_start {
                        self.probe_rtt_round_done = true;
                    }
                    if self.probe_rtt_round_done && now > done {
                        // BBRCheckProbeRTTDone / BBRExitProbeRTT.
                        self.probe_rtt_min_stamp = now;
                        self.w.restore_cwnd();
                        self.reset_lower_bounds();
                        if self.filled_pipe {
                            self.start_probe_bw_down(now);
                            self.start_probe_bw_cruise();
                        } else {
                            self.enter_startup();
                        }
                    }
                }
            }
        }
        if ack.acked_bytes > 0 {
            self.idle_restart = false;
        }
    }

    /// §5.6.4.5 BBRProbeRTTCwnd.
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN).max(self.min_pipe())
    }

    /// §5.2 BBRUpdateControlParameters: pacing rate (§5.6.2) and cwnd (§5.6.4).
    pub(super) fn update_control_parameters(&mut self, cx: &CcCtx, ack: &AckSummary) {
        if self.min_rtt.is_some() && self.bw > 0 {
            self.w.set_pacing_rate(self.pacing_gain, self.bw, self.filled_pipe);
        } else if let (None, true) = (self.min_rtt, cx.rtt.has_sample()) {
            // §5.6.2 BBRInitPacingRate from the first smoothed RTT.
            let s = cx.rtt.smoothed().as_secs_f64().max(1e-6);
            self.w.pacing_bps = (self.pacing_gain * self.w.initial_cwnd as f64 * 8.0 / s) as u64;
        }
        let acked = ack.acked_bytes;
        if acked > 0 {
            // BBRUpdateMaxInflight: cwnd_gain · BDP + ACK aggregation, quantized.
            let extra = self.aggregation.get();
            let max_inflight = self.quantization_budget(self.bdp_multiple(self.bw, self.cwnd_gain) + extra);
            // BBRSetCwnd (§5.6.4.6); in fast recovery too (§5.6.4.4: the model's loss response).
            let min_pipe = self.min_pipe();
            self.w.grow(acked, max_inflight, self.filled_pipe, self.delivered, min_pipe);
        }
        if self.state == State::ProbeRtt {
            self.w.cwnd = self.w.cwnd.min(self.probe_rtt_cwnd());
        }
        // BBRBoundCwndForModel.
        let mut cap = if self.state.in_probe_bw() && self.state != State::ProbeBwCruise {
            self.inflight_hi
        } else if matches!(self.state, State::ProbeRtt | State::ProbeBwCruise) {
            self.inflight_with_headroom()
        } else {
            u64::MAX
        };
        cap = cap.min(self.inflight_lo).max(self.min_pipe());
        self.w.cwnd = self.w.cwnd.min(cap);
    }
}
