//! RACK-TLP's steps on the sending half (`rack.rs` has the state and the rules): loss
//! detection on an ACK or at the reordering timer, and the ACK of a loss probe.

use quicksim_cc::{CcCtx, CongestionCause, CongestionController, CongestionEvent};
use quicksim_engine::SimTime;

use super::config::TcpConfig;
use super::sender::{CaState, Sender};

impl Sender {
    /// RACK's loss detection now (§6.2 step 5): marks what is lost and sets the reordering
    /// timer for the rest. Returns the bytes newly marked.
    pub fn rack_detect(&mut self, cfg: &TcpConfig, cx: &CcCtx, now: SimTime) -> u64 {
        let Some(r) = self.rack.as_deref_mut() else { return 0 };
        let recovering = matches!(self.state, CaState::Recovery | CaState::Loss);
        // Linux: `sacked_out >= reordering` (3 segments); in bytes as RFC 6675's IsLost.
        let dupthresh_sacked = self.board.sacked_bytes() > (cfg.dupthresh - 1) * self.smss;
        let reo_wnd = r.reo_wnd(recovering, dupthresh_sacked, cx.rtt.min(), cx.rtt.smoothed());
        let (lost, wait) = self.board.rack_mark_lost(now, r.xmit_ts, r.end_seq, r.rtt + reo_wnd);
        r.reo_at = wait.map(|w| now + w);
        lost
    }

    /// The reordering timer fired (§6.3, Linux `tcp_rack_reo_timeout`): marks what is lost by
    /// now and starts recovery if something was and none is under way. Returns whether it did.
    pub fn on_reo_timeout(&mut self, cfg: &TcpConfig, cx: &CcCtx, now: SimTime) -> bool {
        let lost = self.rack_detect(cfg, cx, now);
        // The ACK path counts its losses for the rate samples itself (`on_ack`).
        self.delivery.on_lost(lost);
        if lost > 0
            && matches!(self.state, CaState::Open | CaState::Cwr)
            && self.snd_una >= self.recovery_point
        {
            self.enter_recovery(cfg, cx, now, 0);
            return true;
        }
        false
    }

    /// An ACK while a loss probe's episode is open (§7.4, Linux `tcp_process_tlp_ack`): at or
    /// beyond the probe's SND.NXT it ends; beyond it after a retransmitted probe, the probe
    /// repaired a loss (without D-SACK, `rack.rs`) and the controller reduces once. A pure
    /// duplicate ACK at it means both the original and the probe arrived.
    pub(super) fn on_tlp_ack(&mut self, cx: &CcCtx, now: SimTime, ack: u64, progress: bool) {
        let Some(r) = self.rack.as_deref_mut() else { return };
        let Some(high) = r.tlp_high_seq else { return };
        if ack < high {
            return;
        }
        if !r.tlp_retrans || !progress {
            r.tlp_high_seq = None;
        } else if ack > high {
            r.tlp_high_seq = None;
            let ev = CongestionEvent { cause: CongestionCause::Loss, sent_time: now, lost_bytes: self.smss };
            let mut cx = CcCtx { now, bytes_in_flight: self.in_flight(), ..*cx };
            self.cc.on_congestion_event(&mut cx, &ev);
        }
    }
}
