//! Sender side of reliability: sent packets per space, RTT, loss detection, PTO and the
//! congestion-controller calls (RFC 9002 §5–7 and Appendix A/B; INET `ReliabilityManager`).
//!
//! Recovery only decides *which* packets are acked or lost; what that means for their frames
//! (re-queue stream data, regenerate MAX_* frames, trim ACK ranges) is the connection's job.

use quicksim_cc::{
    AckEvent, AckSampler, AckSummary, AnyController, CcCtx, CongestionCause, CongestionController,
    CongestionEvent, RttEstimator, SentPacket as CcSent, WindowRules,
};
use quicksim_engine::{SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use super::delivery::Delivery;
use super::ecn::Ecn;
use super::niche::Opt;
use super::packet::{AckFrame, EcnCounts, SpaceId};
use super::per_space::PerSpace;
use super::sent_packets::SentPackets;
pub use super::sent_packets::{KeptFrames, SentPacket};

/// kGranularity (RFC 9002 §6.1.2): 1 ms.
pub const GRANULARITY: SimDuration = SimDuration(1_000_000_000);
/// kPacketThreshold (RFC 9002 §6.1.1).
pub const PACKET_THRESHOLD: u64 = 3;
/// kPersistentCongestionThreshold (RFC 9002 §7.6.1).
pub const PERSISTENT_CONGESTION_THRESHOLD: u64 = 3;
/// Packets that are not in flight (ACK-only) are forgotten after this long without an ACK
/// (INET kOldNonInFlightPacketTimeThreshold = 5 s): a data receiver's ACKs are usually never acked.
pub const OLD_NON_IN_FLIGHT: SimDuration = SimDuration(5_000_000_000_000);
/// Backoff exponent cap, so 2^pto_count cannot overflow.
const MAX_BACKOFF_SHIFT: u32 = 30;
/// QUIC's congestion window rules (RFC 9002 §7.2: initial and minimum window; §7.6.2:
/// persistent congestion collapses the window to the minimum).
pub const WINDOW_RULES: WindowRules = WindowRules::RFC9002;

/// The controller's context at `$now` (a macro, not a method, so that it borrows only the
/// fields it reads while the controller is borrowed mutably).
macro_rules! cc_ctx {
    ($r:expr, $now:expr) => {
        CcCtx {
            now: $now,
            mds: u64::from($r.mds),
            rtt: &$r.rtt,
            bytes_in_flight: $r.bytes_in_flight,
            window: &WINDOW_RULES,
        }
    };
}

/// Per-space state (RFC 9002 Appendix A.3 per-space variables).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Space {
    sent: SentPackets,
    largest_acked: Opt<u64>,
    loss_time: Opt<SimTime>,
    last_ack_eliciting: Opt<SimTime>,
    /// Ack-eliciting packets in `sent` that are in flight (u32: 2^32 packets held would take
    /// over 400 GB).
    ack_eliciting_in_flight: u32,
    discarded: bool,
}

/// What the connection tells recovery when it sets the timer (RFC 9002 Appendix A.8).
#[derive(Clone, Copy, Debug)]
pub struct TimerCtx {
    pub handshake_confirmed: bool,
    /// PeerCompletedAddressValidation: always true on the server, on the client once the
    /// handshake is confirmed or a Handshake ACK arrived.
    pub peer_validated: bool,
    pub has_handshake_keys: bool,
}

/// Result of processing an ACK frame that acknowledged something new (the acknowledged
/// packets went to the caller's `on_acked`).
#[derive(Debug, Default)]
pub struct AckOutcome {
    pub lost: Vec<SentPacket>,
    /// A congestion event was reported to the controller.
    pub congestion: bool,
    pub persistent_congestion: bool,
}

/// What the RTT sample and ECN validation need of an ACK's newly acknowledged packets (`ect`
/// and `last_sent` only with ECN).
#[derive(Default)]
struct NewlyAcked {
    count: usize,
    /// Send time of the ACK's largest acknowledged, if newly acknowledged.
    largest_sent: Opt<SimTime>,
    ack_eliciting: bool,
    /// Sent with ECT(0).
    ect: u64,
    /// Send time of the highest-numbered one.
    last_sent: SimTime,
}

impl NewlyAcked {
    #[inline]
    fn add(&mut self, p: &SentPacket, largest: u64) {
        self.count += 1;
        if p.pn == largest {
            self.largest_sent = Opt::some(p.time_sent);
        }
        self.ack_eliciting |= p.ack_eliciting;
        self.ect += u64::from(p.ect);
        self.last_sent = p.time_sent;
    }
}

/// What a loss-detection timer expiry asks the connection to do.
#[derive(Debug)]
pub enum TimeoutAction {
    /// Time-threshold loss: these packets are lost.
    Lost { space: SpaceId, lost: Vec<SentPacket>, congestion: bool, persistent_congestion: bool },
    /// PTO: send a probe in this space.
    Probe { space: SpaceId },
    /// Client anti-deadlock PTO (RFC 9002 §6.2.2.1): send an ack-eliciting packet in this space.
    AntiDeadlock { space: SpaceId },
}

/// Loss detection, RTT and congestion control of one connection.
#[derive(Serialize, Deserialize)]
pub struct Recovery {
    pub rtt: RttEstimator,
    /// Encoded with the connection when it is a built-in algorithm (`AnyController::can_park`).
    pub cc: AnyController,
    pub pto_count: u32,
    pub bytes_in_flight: u64,
    /// Delivery-rate estimation with its per-packet records (`delivery.rs`), only for a
    /// controller that reads rate samples (`wants_rate_samples`: not NewReno or CUBIC, which
    /// then skip it on every packet and ACK).
    delivery: Option<Box<Delivery>>,
    /// Maximum datagram size (the controller's MDS).
    /// u32, as `max_packet_size` is validated to at most 65 527 B (it shares a word with
    /// `pto_count`).
    pub mds: u32,
    /// The peer's max_ack_delay (added to the application-data PTO).
    pub peer_max_ack_delay: SimDuration,
    /// Initial and Handshake in a box freed once both are discarded (`PerSpace`).
    spaces: PerSpace<Space>,
    first_rtt_sample: Opt<SimTime>,
    timer: Opt<SimTime>,
    /// The connection's ECN state (`ecn.rs`: received counts, marking, validation); None
    /// without ECN. Kept here, as the sender side acts on acknowledged and lost packets.
    pub ecn: Option<Box<Ecn>>,
}

impl std::fmt::Debug for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recovery")
            .field("cc", &self.cc)
            .field("bytes_in_flight", &self.bytes_in_flight)
            .field("pto_count", &self.pto_count)
            .field("timer", &self.timer)
            .finish()
    }
}

impl Recovery {
    pub fn new(
        cc: AnyController,
        initial_rtt: SimDuration,
        mds: u64,
        peer_max_ack_delay: SimDuration,
    ) -> Self {
        let delivery = cc.wants_rate_samples().then(Box::default);
        Recovery {
            rtt: RttEstimator::new(initial_rtt),
            cc,
            pto_count: 0,
            bytes_in_flight: 0,
            delivery,
            mds: u32::try_from(mds).expect("max_packet_size is at most 65 527 B"),
            peer_max_ack_delay,
            spaces: Default::default(),
            first_rtt_sample: Opt::NONE,
            timer: Opt::NONE,
            ecn: None,
        }
    }

    /// Marks ack-eliciting 1-RTT packets with ECT(0) and validates the peer's ECN counts
    /// (RFC 9000 §13.4.2), reacting to CE marks (RFC 9002 §7.1).
    /// ECT(1) and CE counts for the controller instead when it takes CE itself
    /// (`EcnResponse::Scalable`).
    pub fn enable_ecn(&mut self) {
        self.ecn = Some(Box::new(Ecn::new(self.cc.ecn_response())));
    }

    /// Whether the next ack-eliciting packet of `space` goes out with ECT(0) (counted as sent so).
    pub fn ecn_mark_next(&mut self, space: SpaceId) -> bool {
        space == SpaceId::Data && self.ecn.as_deref_mut().is_some_and(Ecn::mark_next)
    }

    /// The congestion controller's view of the connection at `now`.
    pub fn cc_ctx(&self, now: SimTime) -> CcCtx<'_> {
        cc_ctx!(self, now)
    }

    /// Largest of our packet numbers the peer acknowledged in `space` (packet number encoding).
    pub fn largest_acked(&self, space: SpaceId) -> Option<u64> {
        self.spaces.get(space).and_then(|s| s.largest_acked.get())
    }

    /// Ack-eliciting packets in flight in any space.
    pub fn ack_eliciting_in_flight(&self) -> bool {
        self.spaces.iter().any(|s| s.ack_eliciting_in_flight > 0)
    }

    pub fn is_discarded(&self, space: SpaceId) -> bool {
        self.spaces.get(space).is_none_or(|s| s.discarded)
    }

    /// The oldest in-flight packet of `space` that carries retransmittable frames.
    pub fn oldest_outstanding(&self, space: SpaceId) -> Option<&SentPacket> {
        self.spaces
            .get(space)?
            .sent
            .iter_tracked()
            .find(|p| p.in_flight && p.ack_eliciting && !p.frames.is_empty())
    }

    /// The in-flight packets of `space` that carry retransmittable frames, oldest first.
    pub fn outstanding(&self, space: SpaceId) -> impl Iterator<Item = &SentPacket> {
        self.spaces
            .get(space)
            .into_iter()
            .flat_map(|s| s.sent.iter_tracked())
            .filter(|p| p.in_flight && !p.frames.is_empty())
    }

    /// The loss-detection timer (earliest loss time, else PTO).
    pub fn timer(&self) -> Option<SimTime> {
        self.timer.get()
    }

    /// Records a sent packet (RFC 9002 Appendix A.5).
    pub fn on_packet_sent(&mut self, space: SpaceId, p: SentPacket, app_limited: bool, ctx: TimerCtx) {
        let now = p.time_sent;
        let sp = &mut self.spaces[space];
        debug_assert!(!sp.discarded, "sending in a discarded space");
        let in_flight = p.in_flight;
        if in_flight {
            if p.ack_eliciting {
                sp.last_ack_eliciting = Opt::some(now);
                sp.ack_eliciting_in_flight += 1;
            }
            let size = u64::from(p.size);
            if let Some(d) = self.delivery.as_deref_mut() {
                d.on_sent(space, p.pn, now, self.bytes_in_flight, size, app_limited);
            }
            self.bytes_in_flight += size;
            self.cc.on_packet_sent(&mut cc_ctx!(self, now), &CcSent { bytes: size, app_limited });
        }
        self.spaces[space].sent.insert(p);
        self.set_timer(now, ctx);
    }

    /// The frames of packet `pn`, the one last registered in `space` (`on_packet_sent`), to
    /// fill in place. Not for an ACK-only packet (not in flight, no frames: stored compactly).
    pub fn last_sent_frames(&mut self, space: SpaceId, pn: u64) -> &mut KeptFrames {
        let p = self.spaces[space].sent.last_mut().filter(|p| p.pn == pn);
        &mut p.expect("a packet with frames was just sent").frames
    }

    /// Processes an ACK frame (RFC 9002 Appendix A.7). `ecn`: its ECN counts if it is an
    /// ACK_ECN frame. `ack_delay` is the decoded delay (zero for Initial/Handshake).
    /// `app_limited` is passed to the controller with every acked packet. Each newly
    /// acknowledged packet is shown to `on_acked` (ascending packet numbers) after the
    /// controller's `on_ack` for it and before it is dropped: acknowledged packets are visited
    /// in place, never copied out. Returns None if the ACK acknowledged nothing new.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack_received(
        &mut self,
        now: SimTime,
        space: SpaceId,
        ack: &AckFrame,
        ecn: Option<&EcnCounts>,
        ack_delay: SimDuration,
        app_limited: bool,
        ctx: TimerCtx,
        mut on_acked: impl FnMut(&SentPacket),
    ) -> Option<AckOutcome> {
        // An ACK in a packet of a space discarded by an earlier frame of the same packet.
        let sp = self.spaces.get_mut(space)?;
        let largest = ack.largest();
        let raises_largest = sp.largest_acked.get().is_none_or(|l| largest > l);
        sp.largest_acked = Opt::some(sp.largest_acked.get().map_or(largest, |l| l.max(largest)));
        // What the RTT sample and ECN read of the newly acked packets, before loss detection;
        // they stay in place until the controller has seen the losses (below).
        let newly = match sp.sent.get_tracked(largest) {
            // The common case: the largest acknowledged is newly acked and elicited the ACK;
            // without ECN that is all the RTT sample needs.
            Some(p) if p.ack_eliciting && self.ecn.is_none() => {
                NewlyAcked { largest_sent: Opt::some(p.time_sent), ack_eliciting: true, ..Default::default() }
            }
            _ => {
                let mut newly = NewlyAcked::default();
                for &(s, l) in ack.ranges.iter().rev() {
                    sp.sent.visit_range(s, l, |p| newly.add(p, largest));
                }
                if newly.count == 0 {
                    return None;
                }
                newly
            }
        };
        // RFC 9002 §5.1: sample when the largest acknowledged is newly acked and at least one
        // newly acked packet was ack-eliciting.
        if let (Some(sent), true) = (newly.largest_sent.get(), newly.ack_eliciting) {
            self.rtt.update(now - sent, ack_delay, self.peer_max_ack_delay, ctx.handshake_confirmed);
            if self.first_rtt_sample.is_none() {
                self.first_rtt_sample = Opt::some(now);
            }
        }
        // RFC 9002 Appendix A.7: ECN is processed after the RTT sample, before loss detection.
        if let Some(e) = self.ecn.as_deref_mut().filter(|_| space == SpaceId::Data) {
            let sent_time = newly.last_sent;
            if e.on_ack(now, ecn, newly.ect, raises_largest, sent_time) {
                let ev = CongestionEvent { cause: CongestionCause::Ecn, sent_time, lost_bytes: 0 };
                self.cc.on_congestion_event(&mut cc_ctx!(self, now), &ev);
            }
        }
        let lost = self.detect_lost(now, space, &ack.ranges);
        let (congestion, persistent_congestion) = self.on_packets_lost(now, &lost);
        let (mut acked_bytes, mut acked_packets, mut largest_acked_sent_time) = (0, 0, SimTime::ZERO);
        let mut sampler = AckSampler::default();
        let sp = &mut self.spaces[space];
        let eliciting = &mut sp.ack_eliciting_in_flight;
        for &(s, l) in ack.ranges.iter().rev() {
            sp.sent.drain_range(s, l, |p| {
                if p.in_flight {
                    if p.ack_eliciting {
                        *eliciting -= 1;
                    }
                    let size = u64::from(p.size);
                    if let Some(d) = self.delivery.as_deref_mut() {
                        d.on_acked(&mut sampler, space, p.pn, now, p.time_sent, size);
                    }
                    self.bytes_in_flight -= size;
                    let ev = AckEvent { sent_time: p.time_sent, bytes: size, app_limited };
                    self.cc.on_ack(&mut cc_ctx!(self, now), &ev);
                    acked_bytes += size;
                    acked_packets += 1;
                    largest_acked_sent_time = p.time_sent;
                }
                on_acked(p);
            });
        }
        if let Some(d) = self.delivery.as_deref_mut() {
            d.forget_below(space, sp.sent.first_tracked_pn());
        }
        if acked_packets > 0 {
            let min_rtt = self.rtt.min();
            let rate = self.delivery.as_deref_mut().and_then(|d| d.rate.sample(sampler, min_rtt));
            // CE marks for a scalable controller (0 for others: they got an `Ecn` event).
            let ce_packets = self.ecn.as_deref_mut().map_or(0, Ecn::take_ce);
            let summary = AckSummary {
                acked_bytes,
                acked_packets,
                largest_acked_sent_time,
                app_limited,
                rate,
                ce_packets,
            };
            self.cc.on_ack_end(&mut cc_ctx!(self, now), &summary);
        }
        // RFC 9002 Appendix A.7 (INET: reset on any ACK that newly acks something).
        if ctx.peer_validated {
            self.pto_count = 0;
        }
        self.set_timer(now, ctx);
        Some(AckOutcome { lost, congestion, persistent_congestion })
    }

    /// An ACK acknowledged packets declared lost before: tells the controller.
    pub fn on_spurious_congestion(&mut self, now: SimTime) {
        self.cc.on_spurious_congestion(&mut cc_ctx!(self, now));
    }

    /// RFC 9002 Appendix A.10: packet and time thresholds. `acked`: the ACK ranges being
    /// processed (descending, as in the frame), whose packets are still held but acknowledged:
    /// they are skipped.
    fn detect_lost(&mut self, now: SimTime, space: SpaceId, acked: &[(u64, u64)]) -> Vec<SentPacket> {
        let loss_delay = self.rtt.loss_delay(GRANULARITY);
        let sp = &mut self.spaces[space];
        sp.loss_time = Opt::NONE;
        let Some(largest) = sp.largest_acked.get() else { return Vec::new() };
        // None early in the run (now < loss_delay): nothing is old enough.
        let lost_send_time = now.ps().checked_sub(loss_delay.ps()).map(SimTime);
        let is_lost = |p: &SentPacket| {
            lost_send_time.is_some_and(|t| p.time_sent <= t) || largest >= p.pn + PACKET_THRESHOLD
        };
        let Some(first) = sp.sent.first_pn() else { return Vec::new() };
        let (mut lost, mut loss_time) = (Vec::new(), None);
        let eliciting = &mut sp.ack_eliciting_in_flight;
        let mut take = |p: SentPacket| {
            if p.in_flight && p.ack_eliciting {
                *eliciting -= 1;
            }
            lost.push(p);
        };
        let mut keep = |p: &SentPacket| {
            let t = p.time_sent + loss_delay;
            loss_time = Some(loss_time.map_or(t, |lt: SimTime| lt.min(t)));
        };
        // The gaps of `acked` in [0, largest], ascending, from the lowest number held.
        let mut lo = first;
        for &(s, l) in acked.iter().rev() {
            if s > lo {
                sp.sent.drain_if(lo, s - 1, is_lost, &mut take, &mut keep);
            }
            lo = lo.max(l.saturating_add(1));
        }
        if lo <= largest {
            sp.sent.drain_if(lo, largest, is_lost, &mut take, &mut keep);
        }
        sp.loss_time = loss_time.into();
        if let Some(d) = self.delivery.as_deref_mut() {
            d.forget_below(space, sp.sent.first_tracked_pn());
        }
        lost
    }

    /// RFC 9002 Appendix B.8/B.9: removes lost packets from flight and reports one congestion
    /// event. Returns (congestion event, persistent congestion).
    fn on_packets_lost(&mut self, now: SimTime, lost: &[SentPacket]) -> (bool, bool) {
        let mut lost_bytes = 0;
        let mut largest_lost_time = None;
        let mut lost_ect = 0;
        for p in lost.iter().filter(|p| p.in_flight) {
            let size = u64::from(p.size);
            self.bytes_in_flight -= size;
            if let Some(d) = self.delivery.as_deref_mut() {
                d.rate.on_lost(size);
            }
            lost_bytes += size;
            largest_lost_time = Some(p.time_sent);
            lost_ect += u32::from(p.ect);
        }
        let Some(largest_lost_sent_time) = largest_lost_time else { return (false, false) };
        let persistent = self.in_persistent_congestion(lost);
        let cause = if persistent { CongestionCause::PersistentCongestion } else { CongestionCause::Loss };
        let ev = CongestionEvent { cause, sent_time: largest_lost_sent_time, lost_bytes };
        self.cc.on_congestion_event(&mut cc_ctx!(self, now), &ev);
        if let Some(e) = self.ecn.as_deref_mut() {
            e.on_marked_lost(lost_ect);
            e.on_congestion(now, largest_lost_sent_time, persistent);
        }
        (true, persistent)
    }

    /// RFC 9002 §7.6: a run of consecutively numbered lost packets, all sent after the first
    /// RTT sample, whose ack-eliciting ends are more than 3 × (srtt + max(4·rttvar, 1 ms) +
    /// max_ack_delay) apart.
    fn in_persistent_congestion(&self, lost: &[SentPacket]) -> bool {
        let Some(first_sample) = self.first_rtt_sample.get() else { return false };
        let period =
            (self.rtt.pto_base(GRANULARITY) + self.peer_max_ack_delay) * PERSISTENT_CONGESTION_THRESHOLD;
        let mut run_start: Option<SimTime> = None;
        let mut prev_pn: Option<u64> = None;
        for p in lost {
            if p.time_sent <= first_sample {
                run_start = None;
                prev_pn = Some(p.pn);
                continue;
            }
            if prev_pn.is_some_and(|q| q + 1 != p.pn) {
                run_start = None;
            }
            prev_pn = Some(p.pn);
            if p.ack_eliciting {
                match run_start {
                    None => run_start = Some(p.time_sent),
                    Some(s) if p.time_sent - s > period => return true,
                    Some(_) => {}
                }
            }
        }
        false
    }

    /// PTO duration with backoff (RFC 9002 §6.2.1); `with_ack_delay` for application data.
    pub fn pto_duration(&self, with_ack_delay: bool) -> SimDuration {
        let shift = self.pto_count.min(MAX_BACKOFF_SHIFT);
        let mut d = self.rtt.pto_base(GRANULARITY);
        if with_ack_delay {
            d += self.peer_max_ack_delay;
        }
        d * (1u64 << shift)
    }

    /// RFC 9002 Appendix A.8 GetPtoTimeAndSpace.
    fn pto_time_and_space(&self, now: SimTime, ctx: TimerCtx) -> Option<(SimTime, SpaceId)> {
        if !self.ack_eliciting_in_flight() {
            // Anti-deadlock: the client arms a PTO even with nothing in flight.
            let space = if ctx.has_handshake_keys { SpaceId::Handshake } else { SpaceId::Initial };
            return Some((now + self.pto_duration(false), space));
        }
        let mut best: Option<(SimTime, SpaceId)> = None;
        for space in SpaceId::ALL {
            let Some(sp) = self.spaces.get(space) else { continue };
            if sp.discarded || sp.ack_eliciting_in_flight == 0 {
                continue;
            }
            if space == SpaceId::Data && !ctx.handshake_confirmed {
                // RFC 9002 §6.2.1: no application-data PTO before the handshake is confirmed.
                break;
            }
            let Some(last) = sp.last_ack_eliciting.get() else { continue };
            let t = last + self.pto_duration(space == SpaceId::Data);
            if !matches!(best, Some((b, _)) if t >= b) {
                best = Some((t, space));
            }
        }
        best
    }

    fn earliest_loss_time(&self) -> Option<(SimTime, SpaceId)> {
        SpaceId::ALL.iter().filter_map(|&s| self.spaces.get(s)?.loss_time.get().map(|t| (t, s))).min()
    }

    /// RFC 9002 Appendix A.8 SetLossDetectionTimer.
    pub fn set_timer(&mut self, now: SimTime, ctx: TimerCtx) {
        // Fast path (called on every packet sent and every ACK): once the early spaces are
        // freed and the handshake is confirmed, only the application-data space counts, and
        // with ack-eliciting packets in flight the general code below reduces to this.
        if !self.spaces.has_early() && ctx.handshake_confirmed {
            let d = self.spaces.data();
            if !d.discarded && (d.loss_time.is_some() || d.ack_eliciting_in_flight > 0) {
                self.timer = match d.loss_time.get() {
                    Some(t) => Opt::some(t),
                    None => d.last_ack_eliciting.get().map(|last| last + self.pto_duration(true)).into(),
                };
                return;
            }
        }
        if let Some((t, _)) = self.earliest_loss_time() {
            self.timer = Opt::some(t);
            return;
        }
        if !self.ack_eliciting_in_flight() && ctx.peer_validated {
            self.timer = Opt::NONE;
            return;
        }
        self.timer = self.pto_time_and_space(now, ctx).map(|(t, _)| t).into();
    }

    /// RFC 9002 Appendix A.9 OnLossDetectionTimeout. None if the timer is not due.
    pub fn on_timeout(&mut self, now: SimTime, ctx: TimerCtx) -> Option<TimeoutAction> {
        if !matches!(self.timer.get(), Some(t) if t <= now) {
            return None;
        }
        if let Some((_, space)) = self.earliest_loss_time() {
            let lost = self.detect_lost(now, space, &[]);
            let (congestion, persistent_congestion) = self.on_packets_lost(now, &lost);
            self.set_timer(now, ctx);
            return Some(TimeoutAction::Lost { space, lost, congestion, persistent_congestion });
        }
        let action = if !self.ack_eliciting_in_flight() {
            let space = if ctx.has_handshake_keys { SpaceId::Handshake } else { SpaceId::Initial };
            TimeoutAction::AntiDeadlock { space }
        } else {
            match self.pto_time_and_space(now, ctx) {
                Some((_, space)) => TimeoutAction::Probe { space },
                None => {
                    self.set_timer(now, ctx);
                    return None;
                }
            }
        };
        self.pto_count += 1;
        self.set_timer(now, ctx);
        Some(action)
    }

    /// Drops a packet number space's keys: its packets leave flight without a congestion
    /// signal (RFC 9002 Appendix A.11).
    pub fn discard_space(&mut self, space: SpaceId, now: SimTime, ctx: TimerCtx) {
        let Some(sp) = self.spaces.get_mut(space) else { return };
        if sp.discarded {
            return;
        }
        for p in sp.sent.iter_tracked().filter(|p| p.in_flight) {
            self.bytes_in_flight -= u64::from(p.size);
        }
        *sp = Space { discarded: true, ..Default::default() };
        if let Some(d) = self.delivery.as_deref_mut() {
            d.forget_below(space, None);
        }
        if self.spaces.iter().take(2).all(|s| s.discarded) && space != SpaceId::Data {
            self.spaces.free_early();
        }
        self.pto_count = 0;
        self.set_timer(now, ctx);
    }

    /// Forgets old packets that are not in flight (ack-only packets that were never acked).
    pub fn prune(&mut self, now: SimTime) {
        for sp in self.spaces.iter_mut() {
            sp.sent.pop_while(|p| !p.in_flight && p.time_sent + OLD_NON_IN_FLIGHT <= now);
        }
    }

    /// Packets currently remembered in `space` (for tests and bounds).
    pub fn sent_count(&self, space: SpaceId) -> usize {
        self.spaces.get(space).map_or(0, |s| s.sent.len())
    }
}

#[cfg(test)]
mod tests {
    use super::super::packet::Frame;
    use super::*;
    use quicksim_cc::{CcSpec, InitCtx};

    fn ctx() -> TimerCtx {
        TimerCtx { handshake_confirmed: true, peer_validated: true, has_handshake_keys: true }
    }

    fn rec() -> Recovery {
        Recovery::new(
            CcSpec::default().build(&InitCtx {
                mds: 1252,
                window: &WINDOW_RULES,
                rng: &quicksim_engine::Rng::from_seed(1),
            }),
            SimDuration::from_millis(333),
            1252,
            SimDuration::from_millis(25),
        )
    }

    fn send(r: &mut Recovery, pn: u64, t: SimTime) {
        r.on_packet_sent(
            SpaceId::Data,
            SentPacket {
                pn,
                time_sent: t,
                size: 1252,
                ack_eliciting: true,
                in_flight: true,
                ect: false,
                frames: [Frame::Ping].into_iter().collect(),
                ack_largest: Opt::NONE,
            },
            false,
            ctx(),
        );
    }

    fn ack(ranges: Vec<(u64, u64)>) -> AckFrame {
        AckFrame { ranges: ranges.into(), ack_delay: 0 }
    }

    /// Processes an ACK of `ranges` (descending) at `now`: the packet numbers newly acked, in
    /// the order recovery showed them, and the outcome.
    fn ack_at(r: &mut Recovery, now: SimTime, ranges: Vec<(u64, u64)>) -> (Vec<u64>, AckOutcome) {
        let mut acked = Vec::new();
        let out =
            r.on_ack_received(now, SpaceId::Data, &ack(ranges), None, SimDuration::ZERO, false, ctx(), |p| {
                acked.push(p.pn)
            });
        (acked, out.expect("the ACK acknowledges new packets"))
    }

    #[test]
    fn packet_threshold_loss_and_single_congestion_event() {
        let mut r = rec();
        let t0 = SimTime::ZERO;
        for pn in 0..6 {
            send(&mut r, pn, t0);
        }
        assert_eq!(r.bytes_in_flight, 6 * 1252);
        let cwnd0 = r.cc.cwnd_bytes();
        // pn 0 and 1 missing, 2..=5 acked: 0, 1 and 2 below 5 − 3 → 0 and 1 lost.
        let (acked, out) = ack_at(&mut r, SimTime::from_millis(20), vec![(2, 5)]);
        assert_eq!(acked, [2, 3, 4, 5]);
        assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), vec![0, 1]);
        assert!(out.congestion);
        assert_eq!(r.bytes_in_flight, 0);
        assert_eq!(r.cc.cwnd_bytes(), cwnd0 / 2);
        assert_eq!(r.rtt.latest(), SimDuration::from_millis(20));
    }

    /// An ACK with a gap: its packets stay held while loss detection runs, which skips them and
    /// looks only at the gaps. Ten packets sent at 0, ACK of 5-6 and 9 at 20 ms: 0-4 are three
    /// below 9 (packet threshold), 7 and 8 are not and wait for the time threshold.
    #[test]
    fn loss_detection_skips_the_ranges_being_acknowledged() {
        let mut r = rec();
        for pn in 0..10 {
            send(&mut r, pn, SimTime::ZERO);
        }
        let (acked, out) = ack_at(&mut r, SimTime::from_millis(20), vec![(9, 9), (5, 6)]);
        assert_eq!(acked, [5, 6, 9]);
        assert_eq!(out.lost.iter().map(|p| p.pn).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
        assert_eq!(r.bytes_in_flight, 2 * 1252);
        assert_eq!(r.sent_count(SpaceId::Data), 2);
        // loss_delay = 9/8 · 20 ms after the send time of 7 and 8.
        assert_eq!(r.timer(), Some(SimTime(22_500_000_000)));
        // A later ACK of only already-acked packets changes nothing.
        let nothing = r.on_ack_received(
            SimTime::from_millis(21),
            SpaceId::Data,
            &ack(vec![(5, 6)]),
            None,
            SimDuration::ZERO,
            false,
            ctx(),
            |_| panic!("nothing new"),
        );
        assert!(nothing.is_none());
    }

    #[test]
    fn time_threshold_arms_the_loss_timer() {
        let mut r = rec();
        send(&mut r, 0, SimTime::ZERO);
        send(&mut r, 1, SimTime::from_millis(1));
        let (_, out) = ack_at(&mut r, SimTime::from_millis(21), vec![(1, 1)]);
        assert!(out.lost.is_empty());
        // loss_delay = 9/8 * 20 ms = 22.5 ms after pn 0 was sent.
        assert_eq!(r.timer(), Some(SimTime(22_500_000_000)));
        match r.on_timeout(SimTime(22_500_000_000), ctx()) {
            Some(TimeoutAction::Lost { lost, congestion, .. }) => {
                assert_eq!(lost.len(), 1);
                assert!(congestion);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r.timer(), None);
    }

    #[test]
    fn pto_backs_off_exponentially() {
        let mut r = rec();
        send(&mut r, 0, SimTime::ZERO);
        // Before a sample: 333 + 4 * 166.5 + 25 = 1024 ms.
        assert_eq!(r.timer(), Some(SimTime::from_millis(1024)));
        assert!(r.on_timeout(SimTime::from_millis(1000), ctx()).is_none());
        assert!(matches!(
            r.on_timeout(SimTime::from_millis(1024), ctx()),
            Some(TimeoutAction::Probe { space: SpaceId::Data })
        ));
        assert_eq!(r.pto_count, 1);
        assert_eq!(r.timer(), Some(SimTime::from_millis(2048)));
    }

    #[test]
    fn persistent_congestion_collapses_the_window() {
        let mut r = rec();
        send(&mut r, 0, SimTime::ZERO);
        ack_at(&mut r, SimTime::from_millis(10), vec![(0, 0)]);
        // srtt 10, rttvar 5: period = (10 + 20 + 25) * 3 = 165 ms.
        for (i, pn) in (1..=10).enumerate() {
            send(&mut r, pn, SimTime::from_millis(20 + 20 * i as u64));
        }
        send(&mut r, 11, SimTime::from_millis(300));
        let (_, out) = ack_at(&mut r, SimTime::from_millis(310), vec![(11, 11)]);
        assert_eq!(out.lost.len(), 10);
        assert!(out.persistent_congestion);
        // Collapsed to 2·MDS; then the ACK of pn 11 (processed after the losses, RFC 9002
        // Appendix A.7) grows it in slow start, as the recovery period was reset.
        assert_eq!(r.cc.cwnd_bytes(), 3 * 1252);
    }

    #[test]
    fn anti_deadlock_pto_without_anything_in_flight() {
        let mut r = rec();
        let c = TimerCtx { handshake_confirmed: false, peer_validated: false, has_handshake_keys: true };
        r.set_timer(SimTime::ZERO, c);
        assert_eq!(r.timer(), Some(SimTime::from_millis(999)));
        assert!(matches!(
            r.on_timeout(SimTime::from_millis(999), c),
            Some(TimeoutAction::AntiDeadlock { space: SpaceId::Handshake })
        ));
        r.set_timer(SimTime::ZERO, ctx());
        assert_eq!(r.timer(), None);
    }
}
