//! RACK-TLP loss detection (RFC 8985), `loss_detection = "rack"`, as Linux runs it where the
//! RFC leaves a choice (net/ipv4/tcp_recovery.c; tcp_output.c `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`; tcp_input.c `tcp_process_tlp_ack`).
//!
//! - **RACK** (§6): each ACK records the most recently sent segment it delivered (RACK.xmit_ts,
//!   RACK.end_seq) and its RTT (RACK.rtt). A segment sent before it and not delivered is lost
//!   once RACK.rtt + RACK.reo_wnd has passed since it was sent (`Scoreboard::rack_mark_lost`);
//!   the reordering timer fires when the next such deadline comes. This finds a lost
//!   retransmission too, which RFC 6675 leaves to the RTO.
//! - **reo_wnd** (§6.2 step 4, Linux `tcp_rack_reo_wnd`): zero while no reordering was seen and
//!   the sender is in recovery or `dupthresh` segments' worth is SACKed (so a loss is repaired
//!   as soon as RFC 6675 would); else min_RTT/4, at most SRTT.
//! - **TLP** (§7): while nothing is being recovered, a probe goes out a PTO after the last new
//!   segment or advancing ACK: PTO = 2·SRTT, plus `min_rto` (Linux `TCP_RTO_MIN`, the worst-case
//!   delayed ACK) when one segment is in flight, else plus 2 ms (`TCP_TIMEOUT_MIN`); 1 s before an
//!   RTT sample; never later than the RTO. The probe is a new segment if the peer's window takes
//!   one, else the highest segment not SACKed again, either regardless of cwnd; one per episode.
//!   An ACK at or beyond the probe's SND.NXT ends the episode; if the probe was a retransmission
//!   and the ACK goes beyond it, the probe repaired a loss and the controller reduces once (§7.4,
//!   `tcp_process_tlp_ack`).
//!
//! Left out: D-SACK (RFC 2883), so RACK.reo_wnd does not grow on spurious retransmissions
//! (`tcp_rack_update_reo_wnd`: it stays min_RTT/4) and a probe retransmission whose original
//! also arrived cannot be told from a repaired loss (Linux: a D-SACK ends the episode without
//! a reduction; here the ACK beyond the probe reduces). The timestamp check of §6.2 step 2 for
//! retransmitted segments: Linux's min_RTT test alone decides (`tcp_rack_advance`).
//!
//! Where the model follows the RFC rather than Linux: RACK.rtt is the RTT of the most recently
//! sent segment an ACK delivered (§6.2; Linux keeps the last one it processed), and the timers
//! are exact (Linux rounds to jiffies and adds `TCP_TIMEOUT_MIN` to the reordering timer).
//!
//! The state and its rules are here; the sender's steps that use them (detection, the
//! reordering timer, the probe's ACK) are in `rack_steps.rs`, the probe's sending in
//! `output.rs` and its timer in `recovery.rs`.

use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// Linux's `TCP_TIMEOUT_MIN` (2 jiffies at HZ = 1000): added to a PTO with several segments
/// in flight.
pub const TLP_SLACK: SimDuration = SimDuration(2_000_000_000);
/// The PTO before an RTT sample (Linux `TCP_TIMEOUT_INIT`, RFC 8985 §7.2: 1 s).
pub const TLP_INITIAL_PTO: SimDuration = SimDuration(1_000_000_000_000);

/// RACK-TLP state of one sender (boxed in `Sender::rack` when `loss_detection = "rack"` and
/// SACK was agreed).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment delivered so far.
    pub xmit_ts: SimTime,
    pub end_seq: u64,
    /// RACK.rtt: the RTT of the most recently sent segment the last advancing ACK delivered.
    pub rtt: SimDuration,
    /// RACK moved since the last loss detection (Linux `rack.advanced`): detect again.
    pub advanced: bool,
    /// RACK.reordering_seen: a segment never retransmitted was delivered below one SACKed.
    pub reordering_seen: bool,
    /// The reordering timer (§6.3).
    pub reo_at: Option<SimTime>,
    /// The loss probe timer (§7.2).
    pub tlp_at: Option<SimTime>,
    /// The probe is due: the next transmission opportunity sends it.
    pub tlp_due: bool,
    /// TLP.end_seq: SND.NXT after the probe, while its episode is open (§7.3).
    pub tlp_high_seq: Option<u64>,
    /// The probe was a retransmission (TLPRxtOut).
    pub tlp_retrans: bool,
}

/// `a` was sent after `b` (by send time, then by end sequence: Linux `tcp_skb_sent_after`).
pub fn sent_after(a: (SimTime, u64), b: (SimTime, u64)) -> bool {
    a.0 > b.0 || (a.0 == b.0 && a.1 > b.1)
}

/// What RACK needs of the segments one ACK delivered: the most recently sent one that may
/// move RACK (§6.2 step 2), and whether one was delivered out of order (step 3).
#[derive(Clone, Copy, Debug, Default)]
pub struct RackSample {
    /// min_RTT, and the highest sequence SACKed or acknowledged before this ACK (RACK.fack).
    pub min_rtt: SimDuration,
    pub prior_fack: u64,
    /// (send time, end) of the newest eligible segment.
    pub newest: Option<(SimTime, u64)>,
    pub reordered: bool,
}

impl RackSample {
    /// A delivered segment sent at `sent`, ending at `end`, `retransmitted` or not.
    #[inline]
    pub fn add(&mut self, now: SimTime, sent: SimTime, end: u64, retransmitted: bool) {
        // Step 2: a retransmitted segment delivered sooner than min_RTT after its last sending
        // was the original's delivery (ambiguous): it does not move RACK (`tcp_rack_advance`).
        if retransmitted && now - sent < self.min_rtt {
            return;
        }
        if !retransmitted && end <= self.prior_fack {
            self.reordered = true;
        }
        if self.newest.is_none_or(|n| sent_after((sent, end), n)) {
            self.newest = Some((sent, end));
        }
    }
}

impl Rack {
    /// RACK's update from one ACK's sample (§6.2 steps 2-3).
    pub fn on_sample(&mut self, now: SimTime, s: &RackSample) {
        self.reordering_seen |= s.reordered;
        if let Some((sent, end)) = s.newest {
            self.rtt = now - sent;
            self.advanced = true;
            if sent_after((sent, end), (self.xmit_ts, self.end_seq)) {
                (self.xmit_ts, self.end_seq) = (sent, end);
            }
        }
    }

    /// RACK.reo_wnd (module docs). `recovering`: in recovery or after an RTO; `dupthresh_sacked`:
    /// at least `dupthresh` segments' worth is SACKed.
    pub fn reo_wnd(
        &self,
        recovering: bool,
        dupthresh_sacked: bool,
        min_rtt: SimDuration,
        srtt: SimDuration,
    ) -> SimDuration {
        if !self.reordering_seen && (recovering || dupthresh_sacked) {
            return SimDuration::ZERO;
        }
        SimDuration(min_rtt.ps() / 4).min(srtt)
    }

    /// The PTO (module docs): `srtt` None before a sample; `one_in_flight`; `min_rto`; the
    /// time left until the RTO, `rto_left`, caps it.
    pub fn pto(
        srtt: Option<SimDuration>,
        one_in_flight: bool,
        min_rto: SimDuration,
        rto_left: SimDuration,
    ) -> SimDuration {
        let pto = match srtt {
            Some(s) => {
                SimDuration(s.ps().saturating_mul(2)) + if one_in_flight { min_rto } else { TLP_SLACK }
            }
            None => TLP_INITIAL_PTO,
        };
        pto.min(rto_left)
    }

    /// No timer and no probe any more (an RTO, the end of the connection).
    pub fn stop(&mut self) {
        self.reo_at = None;
        self.tlp_at = None;
        self.tlp_due = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn at(x: u64) -> SimTime {
        SimTime::from_millis(x)
    }

    #[test]
    fn reo_wnd_is_zero_when_dupthresh_is_met_else_a_quarter_min_rtt() {
        let mut r = Rack::default();
        // min_RTT 40 ms, SRTT 60 ms: a quarter of min_RTT, 10 ms.
        assert_eq!(r.reo_wnd(false, false, ms(40), ms(60)), ms(10));
        assert_eq!(r.reo_wnd(true, false, ms(40), ms(60)), SimDuration::ZERO);
        assert_eq!(r.reo_wnd(false, true, ms(40), ms(60)), SimDuration::ZERO);
        // Once reordering was seen, the window stays, capped by SRTT.
        r.reordering_seen = true;
        assert_eq!(r.reo_wnd(true, true, ms(40), ms(60)), ms(10));
        assert_eq!(r.reo_wnd(true, true, ms(40), ms(8)), ms(8));
    }

    #[test]
    fn ambiguous_retransmissions_do_not_move_rack() {
        let mut s = RackSample { min_rtt: ms(50), prior_fack: 5001, ..Default::default() };
        // A retransmission at 100 ms acknowledged at 120 ms: 20 ms < min_RTT, the original's.
        s.add(at(120), at(100), 2001, true);
        assert_eq!(s.newest, None);
        // An original below RACK.fack: reordering; it is the newest so far.
        s.add(at(120), at(60), 3001, false);
        assert!(s.reordered);
        assert_eq!(s.newest, Some((at(60), 3001)));
        let mut r = Rack::default();
        r.on_sample(at(120), &s);
        assert_eq!((r.xmit_ts, r.end_seq, r.rtt, r.reordering_seen), (at(60), 3001, ms(60), true));
    }

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_ack_allowance_capped_by_the_rto() {
        // RFC 8985 §7.2 with Linux's constants: 2·50 + 2 ms; one segment: 2·50 + 200 ms.
        assert_eq!(Rack::pto(Some(ms(50)), false, ms(200), ms(1000)), ms(102));
        assert_eq!(Rack::pto(Some(ms(50)), true, ms(200), ms(1000)), ms(300));
        assert_eq!(Rack::pto(Some(ms(50)), true, ms(200), ms(250)), ms(250));
        assert_eq!(Rack::pto(None, false, ms(200), ms(3000)), ms(1000));
    }
}
