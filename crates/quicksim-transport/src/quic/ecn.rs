//! ECN for QUIC (RFC 9000 §13.4 and Appendix A.4; RFC 9002 §7.1 and Appendix B.7): the
//! counts of received codepoints that ACK_ECN frames report, which packets go out with ECT(0),
//! the validation of the counts the peer reports, and when an increase of its CE count is a new
//! congestion event. One box per connection with ECN enabled (in `Recovery`), none without.
//!
//! With a scalable controller (DCTCP, Prague: `EcnResponse::Scalable`) every CE increase is
//! passed on as a count instead (`take_ce`, into `AckSummary::ce_packets`), never as an event,
//! and with `ect1` the packets carry ECT(1) (RFC 9331 §4), which validation then expects.
//!
//! Only ack-eliciting 1-RTT packets are marked (RFC 9000 leaves the choice to the sender): an
//! ACK-only packet is never acknowledged, so its marks could neither be validated nor signal
//! anything, and the handshake then runs unmarked.

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};

use super::packet::{EcnCounts, SpaceId};
use crate::endpoint::{EcnCodepoint, EcnState};
use quicksim_cc::EcnResponse;

/// Packets sent with ECT(0) before waiting for the validation (RFC 9000 §13.4.2 "the first
/// ten outgoing packets"; Appendix A.4's testing state).
pub const TESTING_PACKETS: u32 = 10;

/// What a connection with ECN enabled keeps, as a receiver and as a sender.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ecn {
    /// Packets received per packet number space with ECT(0), ECT(1) and CE (RFC 9000 §13.4.1;
    /// duplicates not counted).
    received: [EcnCounts; 3],
    state: EcnState,
    /// Packets marked while testing, and how many of them were declared lost.
    testing_sent: u32,
    testing_lost: u32,
    /// Packets sent with our ECT codepoint in all (the peer's count of it cannot exceed it).
    ect0_sent: u64,
    /// The controller counts CE itself (`EcnResponse::Scalable`): CE increases go to
    /// `unreported_ce`, not to congestion events.
    scalable: bool,
    /// Mark ECT(1) instead of ECT(0).
    ect1: bool,
    /// CE increases not yet passed to the controller (scalable only).
    unreported_ce: u64,
    /// The peer's counts in the last ACK that passed validation.
    peer: EcnCounts,
    /// Increase of the peer's CE count: packets the network marked.
    pub ce_marks: u64,
    /// CE increases that were new congestion events.
    pub congestion_events: u64,
    /// congestion_recovery_start_time of RFC 9002 Appendix B.2: a CE mark on a packet sent
    /// at or before it starts no new congestion event (§7.3.2, "once per round trip"). Set by
    /// every congestion event the connection reports, losses included.
    recovery_start: SimTime,
}

impl Default for Ecn {
    fn default() -> Self {
        Ecn {
            received: Default::default(),
            state: EcnState::Testing,
            testing_sent: 0,
            testing_lost: 0,
            ect0_sent: 0,
            scalable: false,
            ect1: false,
            unreported_ce: 0,
            peer: EcnCounts::default(),
            ce_marks: 0,
            congestion_events: 0,
            recovery_start: SimTime::ZERO,
        }
    }
}

impl Ecn {
    /// ECN for a controller that takes CE marks as `response`.
    pub fn new(response: EcnResponse) -> Self {
        match response {
            EcnResponse::Classic => Ecn::default(),
            EcnResponse::Scalable { ect1 } => Ecn { scalable: true, ect1, ..Ecn::default() },
        }
    }

    /// The codepoint marked packets carry.
    pub fn codepoint(&self) -> EcnCodepoint {
        if self.ect1 {
            EcnCodepoint::Ect1
        } else {
            EcnCodepoint::Ect0
        }
    }

    /// CE marks the peer reported since the last call (scalable only; 0 otherwise).
    #[inline]
    pub fn take_ce(&mut self) -> u64 {
        std::mem::take(&mut self.unreported_ce)
    }

    pub fn state(&self) -> EcnState {
        self.state
    }

    /// Counts the codepoint of a packet of `space` that is not a duplicate.
    pub fn count_received(&mut self, space: SpaceId, e: EcnCodepoint) {
        self.received[space.index()].add(e);
    }

    /// CE-marked packets received, all spaces.
    pub fn ce_received(&self) -> u64 {
        self.received.iter().map(|c| c.ce).sum()
    }

    /// The counts an ACK of `space` reports: ACK_ECN once an ECN-marked packet arrived in
    /// the space, a plain ACK (None) before.
    pub fn report(&self, space: SpaceId) -> Option<EcnCounts> {
        let c = self.received[space.index()];
        (c != EcnCounts::default()).then_some(c)
    }

    /// Whether the next ack-eliciting 1-RTT packet carries ECT(0); counts it if so.
    pub fn mark_next(&mut self) -> bool {
        match self.state {
            EcnState::Testing => {
                self.testing_sent += 1;
                if self.testing_sent == TESTING_PACKETS {
                    self.state = EcnState::Unknown; // Appendix A.4: stop marking, wait for ACKs
                }
            }
            EcnState::Capable => {}
            EcnState::Off | EcnState::Unknown | EcnState::Failed => return false,
        }
        self.ect0_sent += 1;
        true
    }

    /// `n` packets sent with ECT(0) were declared lost. If every testing packet is lost
    /// before any was validated, the marks are taken to be what got them dropped (RFC 9000
    /// §13.4.2: "If all packets marked with non-zero ECN codepoints are subsequently lost, it
    /// can disable marking").
    pub fn on_marked_lost(&mut self, n: u32) {
        if matches!(self.state, EcnState::Testing | EcnState::Unknown) {
            self.testing_lost += n;
            if self.testing_lost >= TESTING_PACKETS {
                self.state = EcnState::Failed;
            }
        }
    }

    /// A congestion event (loss or ECN) was reported for a packet sent at `sent_time`:
    /// RFC 9002 Appendix B.6 OnCongestionEvent's recovery start. `persistent`: persistent
    /// congestion, after which the recovery period is forgotten (§7.6.2).
    pub fn on_congestion(&mut self, now: SimTime, sent_time: SimTime, persistent: bool) {
        if persistent {
            self.recovery_start = SimTime::ZERO;
        } else if sent_time > self.recovery_start {
            self.recovery_start = now;
        }
    }

    /// An ACK of the 1-RTT space newly acknowledged `newly_ect` packets sent with ECT(0);
    /// `counts` are its ECN counts (None: a plain ACK frame), `raises_largest` says whether it
    /// raised the largest acknowledged packet number, and `sent_time` is the send time of the
    /// newest packet it newly acknowledged. Validates the counts (RFC 9000 §13.4.2.1) and
    /// returns true if the CE count rose and that is a new congestion event (RFC 9002
    /// Appendix B.7), which the caller reports to the controller.
    pub fn on_ack(
        &mut self,
        now: SimTime,
        counts: Option<&EcnCounts>,
        newly_ect: u64,
        raises_largest: bool,
        sent_time: SimTime,
    ) -> bool {
        if matches!(self.state, EcnState::Off | EcnState::Failed) || !raises_largest {
            // §13.4.2.1: an ACK that does not raise the largest acknowledged (reordered) must
            // not fail validation; its counts are older than the ones already taken.
            return false;
        }
        let Some(c) = counts else {
            // §13.4.2.1: marked packets acknowledged without counts: the field was zeroed on
            // the way, or the peer does not report ECN.
            if newly_ect > 0 {
                self.state = EcnState::Failed;
            }
            return false;
        };
        // Our codepoint's count and the other one's (which must stay zero).
        let (ours, theirs, peer_ours) =
            if self.ect1 { (c.ect1, c.ect0, self.peer.ect1) } else { (c.ect0, c.ect1, self.peer.ect0) };
        let d_ect0 = ours.saturating_sub(peer_ours);
        let d_ce = c.ce.saturating_sub(self.peer.ce);
        // §13.4.2.1: fewer ECT + CE than newly acknowledged marked packets (marks removed on
        // the way), a count for a codepoint never sent, or more of ours than sent.
        if d_ect0 + d_ce < newly_ect || theirs > 0 || ours > self.ect0_sent {
            self.state = EcnState::Failed;
            return false;
        }
        if newly_ect > 0 && matches!(self.state, EcnState::Testing | EcnState::Unknown) {
            self.state = EcnState::Capable;
        }
        self.peer = *c;
        if d_ce == 0 {
            return false;
        }
        self.ce_marks += d_ce;
        if self.scalable {
            self.unreported_ce += d_ce;
            return false;
        }
        if sent_time <= self.recovery_start {
            return false; // RFC 9002 §7.3.2: within the current recovery period
        }
        self.recovery_start = now;
        self.congestion_events += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> SimTime {
        SimTime::from_millis(ms)
    }

    fn counts(ect0: u64, ce: u64) -> EcnCounts {
        EcnCounts { ect0, ect1: 0, ce }
    }

    /// Appendix A.4: ten marked packets, then none until an ACK validates them; then all.
    /// RFC 9000 §13.4.1: counts per space; ACK_ECN only once a marked packet arrived.
    #[test]
    fn received_counts_per_space() {
        let mut e = Ecn::default();
        e.count_received(SpaceId::Data, EcnCodepoint::NotEct);
        assert_eq!(e.report(SpaceId::Data), None);
        e.count_received(SpaceId::Data, EcnCodepoint::Ect0);
        e.count_received(SpaceId::Data, EcnCodepoint::Ce);
        assert_eq!(e.report(SpaceId::Data), Some(EcnCounts { ect0: 1, ect1: 0, ce: 1 }));
        assert_eq!(e.report(SpaceId::Initial), None);
    }

    #[test]
    fn testing_then_unknown_then_capable() {
        let mut e = Ecn::default();
        assert!((0..TESTING_PACKETS).all(|_| e.mark_next()));
        assert_eq!(e.state(), EcnState::Unknown);
        assert!(!e.mark_next());
        assert!(!e.on_ack(t(10), Some(&counts(10, 0)), 10, true, t(1)));
        assert_eq!(e.state(), EcnState::Capable);
        assert!(e.mark_next());
    }

    /// §13.4.2.1: marked packets acknowledged without counts (a bleaching path, or a peer
    /// that does not echo) and counts short of the marked packets (CE or ECT(0) removed).
    #[test]
    fn validation_fails_without_counts_or_with_too_few() {
        let mut e = Ecn::default();
        e.mark_next();
        e.on_ack(t(10), None, 1, true, t(1));
        assert_eq!(e.state(), EcnState::Failed);
        assert!(!e.mark_next());

        let mut e = Ecn::default();
        (0..3).for_each(|_| assert!(e.mark_next()));
        e.on_ack(t(10), Some(&counts(2, 0)), 3, true, t(1)); // one mark lost on the way
        assert_eq!(e.state(), EcnState::Failed);

        // A plain ACK of unmarked packets changes nothing.
        let mut e = Ecn::default();
        e.on_ack(t(10), None, 0, true, t(1));
        assert_eq!(e.state(), EcnState::Testing);
        // ECT(1) never sent, or more ECT(0) than sent: failed.
        let mut e = Ecn::default();
        e.mark_next();
        e.on_ack(t(10), Some(&EcnCounts { ect0: 1, ect1: 1, ce: 0 }), 1, true, t(1));
        assert_eq!(e.state(), EcnState::Failed);
        let mut e = Ecn::default();
        e.mark_next();
        e.on_ack(t(10), Some(&counts(2, 0)), 1, true, t(1));
        assert_eq!(e.state(), EcnState::Failed);
    }

    /// Every testing packet lost (a path dropping ECT packets): failed.
    #[test]
    fn all_testing_packets_lost_fails() {
        let mut e = Ecn::default();
        (0..TESTING_PACKETS).for_each(|_| {
            e.mark_next();
        });
        e.on_marked_lost(TESTING_PACKETS - 1);
        assert_eq!(e.state(), EcnState::Unknown);
        e.on_marked_lost(1);
        assert_eq!(e.state(), EcnState::Failed);
    }

    /// RFC 9002 B.7: a CE increase is a congestion event unless the newest acknowledged packet
    /// was sent within the recovery period; a reordered ACK neither fails nor signals.
    #[test]
    fn ce_is_one_congestion_event_per_recovery_period() {
        let mut e = Ecn::default();
        (0..TESTING_PACKETS).for_each(|_| {
            e.mark_next();
        });
        assert!(e.on_ack(t(100), Some(&counts(4, 1)), 5, true, t(50)));
        assert_eq!((e.ce_marks, e.congestion_events), (1, 1));
        // Another mark on a packet sent before the event at 100 ms: counted, no event.
        assert!(!e.on_ack(t(120), Some(&counts(6, 3)), 4, true, t(90)));
        assert_eq!((e.ce_marks, e.congestion_events), (3, 1));
        // Sent after it: a new event.
        assert!(e.on_ack(t(220), Some(&counts(6, 4)), 1, true, t(150)));
        assert_eq!((e.ce_marks, e.congestion_events), (4, 2));
        // A reordered ACK with lower counts, or without counts though it newly acknowledges
        // marked packets: nothing.
        assert!(!e.on_ack(t(230), Some(&counts(5, 3)), 0, false, t(151)));
        assert!(!e.on_ack(t(230), None, 2, false, t(151)));
        assert_eq!(e.state(), EcnState::Capable);
        // A loss event at 300 ms for a packet sent at 250 ms starts a period too.
        e.on_congestion(t(300), t(250), false);
        assert!(!e.on_ack(t(310), Some(&counts(6, 5)), 1, true, t(290)));
        assert!(e.on_ack(t(410), Some(&counts(6, 6)), 1, true, t(301)));
    }

    /// A scalable controller: ECT(1) marks, validated against the ECT(1) count; every CE
    /// increase is a count for the controller, never an event.
    #[test]
    fn scalable_counts_every_mark_on_ect1() {
        let mut e = Ecn::new(EcnResponse::Scalable { ect1: true });
        assert_eq!(e.codepoint(), EcnCodepoint::Ect1);
        (0..TESTING_PACKETS).for_each(|_| {
            e.mark_next();
        });
        let c = |ect1, ce| EcnCounts { ect0: 0, ect1, ce };
        assert!(!e.on_ack(t(100), Some(&c(4, 1)), 5, true, t(50)));
        assert!(!e.on_ack(t(120), Some(&c(6, 3)), 4, true, t(90)));
        assert_eq!(e.state(), EcnState::Capable);
        assert_eq!((e.take_ce(), e.take_ce(), e.congestion_events), (3, 0, 0));
        // An ECT(0) count when ECT(1) was sent fails validation.
        assert!(!e.on_ack(t(130), Some(&EcnCounts { ect0: 1, ect1: 6, ce: 3 }), 1, true, t(95)));
        assert_eq!(e.state(), EcnState::Failed);
        // Classic: ECT(0), and no counts for the controller.
        let mut e = Ecn::new(EcnResponse::Classic);
        assert_eq!(e.codepoint(), EcnCodepoint::Ect0);
        e.mark_next();
        assert!(e.on_ack(t(100), Some(&counts(0, 1)), 1, true, t(50)));
        assert_eq!(e.take_ce(), 0);
    }
}
