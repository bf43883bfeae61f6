//! BBR version 1 (`cc = "bbr1"`), as draft-cardwell-iccrg-bbr-congestion-control-00 specifies it
//! and ns-3.44's `TcpBbr` implements it (following Linux `tcp_bbr.c` of 2017).
//!
//! The model: BtlBw, the windowed maximum of the delivery-rate samples over 10 packet-timed
//! round trips (§4.1.1), and RTprop, the minimum RTT over 10 s (§4.1.2). The control: pacing
//! rate = pacing_gain · BtlBw (less a 1 % margin, Linux/ns-3), cwnd = cwnd_gain · BtlBw · RTprop
//! plus 3 segments (§4.2.3.2) and the ACK-aggregation allowance of Linux/ns-3 (`extra_acked`).
//! The states (§4.3): Startup (gains 2/ln 2 ≈ 2.89) until the bandwidth grew by less than 25 %
//! for three rounds; Drain (pacing gain 1/2.89) until in flight ≤ BDP; ProbeBW cycling the
//! pacing gain through [1.25, 0.75, 1, 1, 1, 1, 1, 1], one phase per RTprop; ProbeRTT when
//! RTprop was not refreshed for 10 s: cwnd 4 segments for at least 200 ms and one round.
//!
//! Losses: on entering recovery the window drops to what is in flight plus what the ACK
//! delivered, then packet conservation for one round; at the end of recovery the window before
//! it is restored (§4.2.3.4). An RTO (TCP) or persistent congestion (QUIC) leaves one segment.
//!
//! The ProbeBW start phase is `GAIN_CYCLE_LENGTH - 1 - U{0..6}`, as Linux draws it
//! (`bbr_cycle_rand` = 7: any phase but the 0.75 one comes first; ns-3's `(int)
//! m_uv->GetValue(0, 6)` never draws 6), from the connection's own random stream
//! (`InitCtx::rng`).

use quicksim_engine::{Rate, Rng, SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use super::bbr_common::{AckAggregation, BbrWindow};
use crate::minmax::WindowedMax;
use crate::registry::Algorithm;
use crate::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CongestionCause, CongestionController, CongestionEvent,
    InitCtx,
};

/// BBRv1 settings (`cc = { algo = "bbr1", .. }`). Defaults: ns-3.44 `TcpBbr`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Startup pacing and cwnd gain. Default 2.89 (ns-3 `HighGain`; draft §4.3.1: 2/ln 2).
    #[serde(deserialize_with = "crate::registry::check::positive_up_to_1000")]
    pub high_gain: f64,
    /// BtlBw filter length in round trips. Default 10 (draft §4.1.1 BtlBwFilterLen).
    pub bw_window_rounds: u64,
    /// RTprop filter length. Default 10 s (draft §4.1.2 RTpropFilterLen).
    pub rtprop_window_ms: u64,
    /// Time in ProbeRTT. Default 200 ms (draft §4.3.4 ProbeRTTDuration).
    pub probe_rtt_ms: u64,
    /// ACK-aggregation allowance added to the window (Linux `bbr_extra_acked_gain`, ns-3
    /// `m_extraAckedGain`): 0 turns it off. Default 1.
    pub extra_acked_gain: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config { high_gain: 2.89, bw_window_rounds: 10, rtprop_window_ms: 10_000, probe_rtt_ms: 200, extra_acked_gain: 1 }
    }
}

/// §4.3.3.5: ProbeBW's pacing gains, one phase per RTprop.
const PACING_GAIN_CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// §4.3.3: ProbeBW's cwnd gain.
const PROBE_BW_CWND_GAIN: f64 = 2.0;
/// §4.3.2: Startup exits when BtlBw grew less than this factor over three rounds.
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_COUNT: u32 = 3;
/// §4.2.3.3: the minimum window, 4 segments (also ProbeRTT's window).
const MIN_PIPE_SEGMENTS: u64 = 4;
/// Linux/ns-3 ACK aggregation: the extra-acked filter's window (round trips), the epoch reset.
const EXTRA_ACKED_WIN_ROUNDS: u32 = 5;
const ACK_EPOCH_RESET_BYTES: u64 = 1 << 12 << 10;

/// The state machine's mode (§4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// BBRv1 state of one connection.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bbr1 {
    config: Config,
    /// cwnd, pacing rate and the recovery period (shared with `bbr`).
    w: BbrWindow,
    mode: Mode,
    pacing_gain: f64,
    cwnd_gain: f64,
    btl_bw: WindowedMax,
    /// RTprop; None before the first RTT sample.
    rtprop: Option<SimDuration>,
    rtprop_stamp: SimTime,
    rtprop_expired: bool,
    delivered: u64,
    next_round_delivered: u64,
    round_count: u64,
    round_start: bool,
    filled_pipe: bool,
    full_bw: u64,
    full_bw_count: u32,
    cycle_index: usize,
    cycle_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    idle_restart: bool,
    packet_conservation: bool,
    aggregation: AckAggregation,
    acked_this_ack: u64,
    /// The connection's own random stream (`InitCtx::rng`), for the ProbeBW start phase.
    rng: Rng,
}

impl Algorithm for Bbr1 {
    const NAME: &'static str = "bbr1";
    type Config = Config;
    fn new(cfg: &Config, cx: &InitCtx) -> Self {
        let mut b = Bbr1 {
            config: *cfg,
            w: BbrWindow::new(cx),
            mode: Mode::Startup,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            btl_bw: WindowedMax::default(),
            rtprop: None,
            rtprop_stamp: SimTime::ZERO,
            rtprop_expired: false,
            delivered: 0,
            next_round_delivered: 0,
            round_count: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0,
            full_bw_count: 0,
            cycle_index: 0,
            cycle_stamp: SimTime::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            packet_conservation: false,
            aggregation: AckAggregation::default(),
            acked_this_ack: 0,
            rng: cx.rng.clone(),
        };
        // §4.2.1: before any RTT sample, pace at high_gain · IW / 1 ms.
        b.init_pacing_rate(SimDuration::from_millis(1));
        b
    }
}

impl Bbr1 {
    /// The current mode (for tests and traces).
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The BtlBw estimate.
    pub fn btl_bw(&self) -> Rate {
        Rate::bps(self.btl_bw.get())
    }

    /// The current pacing gain.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    fn init_pacing_rate(&mut self, rtt: SimDuration) {
        let bps = self.w.cwnd as f64 * 8.0 / rtt.as_secs_f64().max(1e-9);
        self.w.pacing_bps = (self.pacing_gain * bps) as u64;
    }

    fn min_pipe(&self) -> u64 {
        MIN_PIPE_SEGMENTS * self.w.mds
    }

    /// BDP · gain + 3 segments (§4.2.3.2 quanta); the initial window before an RTprop.
    fn inflight(&self, gain: f64) -> u64 {
        let Some(rtprop) = self.rtprop else { return self.w.initial_cwnd };
        let bdp = Rate::bps(self.btl_bw.get()).bytes_in(rtprop) as f64;
        let mut v = (gain * bdp) as u64 + 3 * self.w.mds;
        if self.mode == Mode::ProbeBw && self.cycle_index == 0 {
            // Linux/ns-3: room for the 1.25 phase's extra segments beyond the quanta.
            v += 2 * self.w.mds;
        }
        v
    }

    fn enter_startup(&mut self) {
        self.mode = Mode::Startup;
        self.pacing_gain = self.config.high_gain;
        self.cwnd_gain = self.config.high_gain;
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.pacing_gain = 1.0;
        self.cwnd_gain = PROBE_BW_CWND_GAIN;
        // §4.3.3.6: start at a random phase other than the 0.75 one (see the module doc).
        let draw = self.rng.range_u64(0, 6) as usize;
        self.cycle_index = PACING_GAIN_CYCLE.len() - 1 - draw;
        self.advance_cycle_phase(now);
    }

    fn advance_cycle_phase(&mut self, now: SimTime) {
        self.cycle_stamp = now;
        self.cycle_index = (self.cycle_index + 1) % PACING_GAIN_CYCLE.len();
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index];
    }

    fn exit_probe_rtt(&mut self, now: SimTime) {
        if self.filled_pipe {
            self.enter_probe_bw(now);
        } else {
            self.enter_startup();
        }
    }

    fn update_model_and_state(&mut self, cx: &CcCtx, ack: &AckSummary) {
        let now = cx.now;
        let rs = ack.rate;
        // §4.1.1.3 round counting and the BtlBw filter (ns-3 `UpdateBottleneckBandwidth`).
        self.round_start = false;
        if let Some(rs) = rs {
            if rs.prior_delivered >= self.next_round_delivered {
                self.next_round_delivered = self.delivered;
                self.round_count += 1;
                self.round_start = true;
                self.packet_conservation = false;
            }
            if rs.rate.bits_per_s >= self.btl_bw.get() || !rs.is_app_limited {
                self.btl_bw.update(self.round_count, rs.rate.bits_per_s, self.config.bw_window_rounds);
            }
        }
        self.update_ack_aggregation(now, ack.acked_bytes);
        // §4.3.3.5 ProbeBW gain cycling.
        if self.mode == Mode::ProbeBw {
            let prior_inflight = cx.bytes_in_flight + ack.acked_bytes;
            let lost = rs.map_or(0, |r| r.newly_lost);
            if self.is_next_cycle_phase(now, prior_inflight, lost) {
                self.advance_cycle_phase(now);
            }
        }
        // §4.3.2 full pipe.
        if !self.filled_pipe && self.round_start && !rs.is_some_and(|r| r.is_app_limited) {
            let bw = self.btl_bw.get();
            if bw as f64 >= self.full_bw as f64 * FULL_BW_THRESH {
                self.full_bw = bw;
                self.full_bw_count = 0;
            } else {
                self.full_bw_count += 1;
                if self.full_bw_count >= FULL_BW_COUNT {
                    self.filled_pipe = true;
                }
            }
        }
        // §4.3.2 Drain.
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / self.config.high_gain;
            self.cwnd_gain = self.config.high_gain;
        }
        if self.mode == Mode::Drain && cx.bytes_in_flight <= self.inflight(1.0) {
            self.enter_probe_bw(now);
        }
        // §4.1.2.3 RTprop.
        let window = SimDuration::from_millis(self.config.rtprop_window_ms);
        self.rtprop_expired = now > self.rtprop_stamp + window;
        let latest = cx.rtt.latest();
        if latest.ps() > 0 && (self.rtprop.is_none_or(|r| latest <= r) || self.rtprop_expired) {
            if self.rtprop.is_none() {
                self.init_pacing_rate(latest);
            }
            self.rtprop = Some(latest);
            self.rtprop_stamp = now;
        }
        // §4.3.4 ProbeRTT.
        if self.mode != Mode::ProbeRtt && self.rtprop_expired && !self.idle_restart {
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.w.save_cwnd(self.mode == Mode::ProbeRtt);
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            self.handle_probe_rtt(cx);
        }
        if ack.acked_bytes > 0 {
            self.idle_restart = false;
        }
    }

    fn handle_probe_rtt(&mut self, cx: &CcCtx) {
        let now = cx.now;
        match self.probe_rtt_done {
            None if cx.bytes_in_flight <= self.min_pipe() => {
                self.probe_rtt_done = Some(now + SimDuration::from_millis(self.config.probe_rtt_ms));
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.delivered;
            }
            None => {}
            Some(done) => {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && now > done {
                    self.rtprop_stamp = now;
                    self.w.restore_cwnd();
                    self.exit_probe_rtt(now);
                }
            }
        }
    }

    fn is_next_cycle_phase(&self, now: SimTime, prior_inflight: u64, lost: u64) -> bool {
        let full_length = self.rtprop.is_some_and(|r| now - self.cycle_stamp > r);
        if self.pacing_gain == 1.0 {
            full_length
        } else if self.pacing_gain > 1.0 {
            full_length && (lost > 0 || prior_inflight >= self.inflight(self.pacing_gain))
        } else {
            full_length || prior_inflight <= self.inflight(1.0)
        }
    }

    /// Linux `bbr_update_ack_aggregation`: the largest excess of acked data over what BtlBw
    /// explains, over the last 5-10 rounds.
    fn update_ack_aggregation(&mut self, now: SimTime, acked: u64) {
        self.acked_this_ack = acked;
        if self.config.extra_acked_gain == 0 || acked == 0 {
            return;
        }
        let (bw, cwnd) = (self.btl_bw.get(), self.w.cwnd);
        self.aggregation.update(now, acked, bw, cwnd, self.round_start, EXTRA_ACKED_WIN_ROUNDS, ACK_EPOCH_RESET_BYTES);
    }

    fn aggregation_cwnd(&self) -> u64 {
        if self.config.extra_acked_gain == 0 || !self.filled_pipe {
            return 0;
        }
        let max_aggr = self.btl_bw.get() / 80; // BtlBw · 100 ms, in bytes
        (self.config.extra_acked_gain * self.aggregation.get()).min(max_aggr)
    }

    /// §4.2.2 pacing rate, §4.2.3 cwnd.
    fn update_control_parameters(&mut self, cx: &CcCtx, ack: &AckSummary) {
        let bw = self.btl_bw.get();
        if bw > 0 {
            self.w.set_pacing_rate(self.pacing_gain, bw, self.filled_pipe);
        }
        let acked = ack.acked_bytes;
        let newly_lost = ack.rate.map_or(0, |r| r.newly_lost);
        if acked > 0 {
            let mut conserving = false;
            if self.w.recovery_start.is_some() {
                // §4.2.3.4 (ns-3 `ModulateCwndForRecovery`).
                if newly_lost > 0 {
                    self.w.cwnd = self.w.cwnd.saturating_sub(newly_lost).max(self.w.floor);
                }
                if self.packet_conservation {
                    self.w.cwnd = self.w.cwnd.max(cx.bytes_in_flight + acked);
                    conserving = true;
                }
            }
            if !conserving {
                let target = self.inflight(self.cwnd_gain) + self.aggregation_cwnd();
                let min_pipe = self.min_pipe();
                self.w.grow(acked, target, self.filled_pipe, self.delivered, min_pipe);
            }
        }
        if self.mode == Mode::ProbeRtt {
            self.w.cwnd = self.w.cwnd.min(self.min_pipe());
        }
    }
}

impl CongestionController for Bbr1 {
    fn on_ack(&mut self, _cx: &mut CcCtx, _ack: &AckEvent) {}

    fn on_ack_end(&mut self, cx: &mut CcCtx, ack: &AckSummary) {
        self.delivered += ack.acked_bytes;
        if let Some(start) = self.w.recovery_start {
            // The first ACK of a packet sent after recovery began ends it (RFC 9002 §7.3.2;
            // TCP's recovery point); ns-3's CA_EVENT_COMPLETE_CWR restores the window.
            if ack.largest_acked_sent_time > start {
                self.w.recovery_start = None;
                self.packet_conservation = false;
                self.w.restore_cwnd();
            }
        }
        self.update_model_and_state(cx, ack);
        self.update_control_parameters(cx, ack);
    }

    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent) {
        match ev.cause {
            CongestionCause::Rto | CongestionCause::PersistentCongestion => {
                // ns-3 CA_LOSS: save the window, the loss window (TCP: one segment), a new round.
                self.w.save_cwnd(self.mode == Mode::ProbeRtt);
                self.w.cwnd = self.w.floor;
                self.round_start = true;
                self.w.recovery_start = Some(cx.now);
                self.packet_conservation = false;
            }
            CongestionCause::Loss | CongestionCause::Ecn => {
                if self.w.recovery_start.is_some_and(|s| ev.sent_time < s) {
                    return; // one reaction per recovery period
                }
                // ns-3 CA_RECOVERY: in flight + what was acked (at least one segment), then
                // packet conservation for one round.
                self.w.save_cwnd(self.mode == Mode::ProbeRtt);
                self.w.recovery_start = Some(cx.now);
                self.w.cwnd = (cx.bytes_in_flight + self.acked_this_ack.max(self.w.mds)).max(self.w.floor);
                self.packet_conservation = true;
                self.next_round_delivered = self.delivered;
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
        self.w.metrics(self.mode == Mode::Startup)
    }
}

#[cfg(test)]
#[path = "bbr1_tests.rs"]
mod tests;
