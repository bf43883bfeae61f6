//! What the two BBR controllers share: `bbr1` (draft-cardwell-iccrg-bbr-congestion-control-00,
//! ns-3's TcpBbr) and `bbr` (draft-ietf-ccwg-bbr). [`BbrWindow`] is the window and pacing rate
//! with the loss-recovery bookkeeping both drafts define alike (SaveCwnd / RestoreCwnd, the end
//! of recovery at the first ACK of a packet sent after it began, the cwnd growth toward the
//! model's target, the pacing-rate update with its 1 % margin, the metrics); [`AckAggregation`]
//! is the extra-acked estimate (Linux `bbr_update_ack_aggregation`, ns-3 `UpdateAckAggregation`).
//! What differs between the versions (the state machines, BBRv1's packet conservation in
//! recovery) stays in each controller's file.

use quicksim_engine::{Rate, SimTime};
use serde::{Deserialize, Serialize};

use crate::{CcMetrics, CcState, InitCtx};

/// Linux/ns-3 and draft-ietf-ccwg-bbr §5.6.2: pace 1 % below the bandwidth estimate.
const PACING_MARGIN: f64 = 0.01;

/// The window, the pacing rate and the recovery period of one BBR connection (bytes, bit/s).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct BbrWindow {
    pub mds: u64,
    /// The transport's loss window: the floor of every reduction (1 SMSS for TCP, 2 MDS for
    /// QUIC, RFC 9002 §7.2).
    pub floor: u64,
    pub initial_cwnd: u64,
    pub cwnd: u64,
    /// The last window not cut by recovery or ProbeRTT (BBR.prior_cwnd).
    pub prior_cwnd: u64,
    pub pacing_bps: u64,
    /// Packets sent before this time belong to the current recovery; None outside recovery.
    pub recovery_start: Option<SimTime>,
}

impl BbrWindow {
    pub fn new(cx: &InitCtx) -> Self {
        let iw = cx.window.initial_window(cx.mds);
        BbrWindow {
            mds: cx.mds,
            floor: cx.window.loss_window(cx.mds),
            initial_cwnd: iw,
            cwnd: iw,
            prior_cwnd: iw,
            pacing_bps: 0,
            recovery_start: None,
        }
    }

    /// SaveCwnd: remember the window, unless recovery or ProbeRTT (`in_probe_rtt`) cut it.
    pub fn save_cwnd(&mut self, in_probe_rtt: bool) {
        self.prior_cwnd = if self.recovery_start.is_none() && !in_probe_rtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    /// RestoreCwnd.
    pub fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// The first ACK of a packet sent after recovery began ends it (RFC 9002 §7.3.2; TCP's
    /// recovery point; ns-3's CA_EVENT_COMPLETE_CWR) and restores the window. True if it did.
    pub fn ack_ends_recovery(&mut self, largest_acked_sent_time: SimTime) -> bool {
        match self.recovery_start {
            Some(start) if largest_acked_sent_time > start => {
                self.recovery_start = None;
                self.restore_cwnd();
                true
            }
            _ => false,
        }
    }

    /// The pacing rate `gain · bw` less the margin; before the pipe is full it only grows.
    pub fn set_pacing_rate(&mut self, gain: f64, bw_bps: u64, filled_pipe: bool) {
        let rate = (gain * bw_bps as f64 * (1.0 - PACING_MARGIN)) as u64;
        if filled_pipe || rate > self.pacing_bps {
            self.pacing_bps = rate;
        }
    }

    /// The window's growth on an ACK of `acked` bytes (draft-cardwell-00 §4.2.3.6,
    /// draft-ietf-ccwg-bbr §5.6.4.6): toward `target` once the pipe is full, else by what was
    /// acked while below it (or while less than the initial window was delivered); never below
    /// `min_pipe`.
    pub fn grow(&mut self, acked: u64, target: u64, filled_pipe: bool, delivered: u64, min_pipe: u64) {
        if filled_pipe {
            self.cwnd = (self.cwnd + acked).min(target);
        } else if self.cwnd < target || delivered < self.initial_cwnd {
            self.cwnd += acked;
        }
        self.cwnd = self.cwnd.max(min_pipe);
    }

    pub fn pacing_rate(&self) -> Option<Rate> {
        (self.pacing_bps > 0).then(|| Rate::bps(self.pacing_bps))
    }

    /// Recovery, else slow start while in Startup, else congestion avoidance.
    pub fn metrics(&self, in_startup: bool) -> CcMetrics {
        let state = if self.recovery_start.is_some() {
            CcState::Recovery
        } else if in_startup {
            CcState::SlowStart
        } else {
            CcState::CongestionAvoidance
        };
        CcMetrics { cwnd_bytes: self.cwnd, ssthresh_bytes: u64::MAX, state }
    }
}

/// The largest excess of acked data over what the bandwidth estimate explains, over the last
/// 5-10 rounds (two slots of `win_rounds`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct AckAggregation {
    extra: [u64; 2],
    idx: usize,
    rounds: u32,
    epoch_start: SimTime,
    epoch_acked: u64,
}

impl AckAggregation {
    /// One ACK of `acked` bytes at `now`: `bw_bps` is the estimate, `cwnd` caps the excess, an
    /// epoch that reaches `reset_bytes` starts over (Linux `bbr_ack_epoch_acked_reset_thresh`).
    #[allow(clippy::too_many_arguments)]
    pub fn update(
        &mut self,
        now: SimTime,
        acked: u64,
        bw_bps: u64,
        cwnd: u64,
        round_start: bool,
        win_rounds: u32,
        reset_bytes: u64,
    ) {
        if round_start {
            self.rounds = (self.rounds + 1).min(31);
            if self.rounds >= win_rounds {
                self.rounds = 0;
                self.idx ^= 1;
                self.extra[self.idx] = 0;
            }
        }
        let mut expected = Rate::bps(bw_bps).bytes_in(now - self.epoch_start);
        if self.epoch_acked <= expected || self.epoch_acked.saturating_add(acked) >= reset_bytes {
            self.epoch_acked = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_acked += acked;
        let extra = (self.epoch_acked - expected).min(cwnd);
        let slot = &mut self.extra[self.idx];
        *slot = (*slot).max(extra);
    }

    /// The larger of the two slots.
    pub fn get(&self) -> u64 {
        self.extra[0].max(self.extra[1])
    }
}
