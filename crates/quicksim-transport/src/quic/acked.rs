//! What acknowledgements and losses mean for a connection (RFC 9000 §13.3, RFC 9002 §6):
//! recovery decides which packets are acked or lost; here their frames are released or queued
//! again, spurious losses counted and congestion events accounted for.

use quicksim_engine::{SimDuration, SimTime, PS_PER_US};

use super::ack::AckManager;
use super::ack_frequency::AckFreqSender;
use super::connection::Connection;
use super::handshake::Handshake;
use super::packet::{AckFrame, EcnCounts, Frame, SpaceId};
use super::per_space::PerSpace;
use super::rare::RareBox;
use super::recovery::{SentPacket, PACKET_THRESHOLD};
use super::stats::{count, Stats, Sum};
use super::streams::Streams;
use super::Role;
use crate::endpoint::{LossTrigger, TraceEvent};

/// Recently lost packet numbers kept to count spurious losses.
const LOST_PN_MEMORY: usize = 4096;

impl Connection {
    /// An ACK frame, with its ECN counts if it is an ACK_ECN frame. Returns true if stream data
    /// was newly acknowledged (queue space freed).
    pub(super) fn on_ack_frame(
        &mut self,
        now: SimTime,
        space: SpaceId,
        ack: &AckFrame,
        ecn: Option<&EcnCounts>,
    ) -> bool {
        count(&mut self.stats, &mut self.rare, Sum::AckFramesReceived, 1);
        let si = space.index();
        if ack.ranges.is_empty() || ack.largest() >= self.next_pn[si] {
            return false; // acknowledges a packet never sent: ignore the frame
        }
        if space == SpaceId::Handshake && self.role == Role::Client {
            self.hs.handshake_acked = true;
        }
        let mut spurious = false;
        if space == SpaceId::Data {
            // Losses are older than most acknowledged packets: ranges above the newest lost
            // packet number need no search.
            if let Some(r) = self.rare.existing() {
                let newest_lost = r.lost_pns.last().copied();
                for &(s, l) in &ack.ranges {
                    if newest_lost.is_none_or(|n| s > n) {
                        continue;
                    }
                    let hits: Vec<u64> = r.lost_pns.range(s..=l).copied().collect();
                    for pn in hits {
                        r.lost_pns.remove(&pn);
                        r.stats.spurious_losses += 1;
                        spurious = true;
                    }
                }
            }
        }
        let ack_delay = if space == SpaceId::Data {
            let exp = self.peer().map_or(self.cfg.ack_delay_exponent, |p| p.ack_delay_exponent);
            let us = ack.ack_delay.checked_shl(exp as u32).unwrap_or(u64::MAX / PS_PER_US);
            SimDuration(us.min(u64::MAX / PS_PER_US) * PS_PER_US)
        } else {
            SimDuration::ZERO
        };
        let ctx = self.timer_ctx();
        let mut freed = false;
        // What acknowledging a packet means for the connection, field by field (recovery is
        // borrowed meanwhile): see `AckedFrames`.
        let mut frames = AckedFrames {
            stats: &mut self.stats,
            rare: &mut self.rare,
            acks: &mut self.acks,
            streams: &mut self.streams,
            queued_bytes: &mut self.queued_bytes,
            hs: &mut self.hs,
            ack_freq_tx: &mut self.ack_freq_tx,
            new_max_ack_delay: None,
        };
        let out =
            self.recovery.on_ack_received(now, space, ack, ecn, ack_delay, self.app_limited, ctx, |p| {
                freed |= frames.on_packet_acked(space, p);
            });
        let new_max_ack_delay = frames.new_max_ack_delay;
        if spurious {
            // Also when nothing else was newly acknowledged (only packets declared lost).
            self.recovery.on_spurious_congestion(now);
        }
        let Some(out) = out else { return false };
        if space == SpaceId::Data && self.is_multipath() {
            self.on_path_answered();
        }
        // An acknowledged ACK_FREQUENCY frame: the peer's new max_ack_delay counts from here,
        // after this ACK's own timer update (as when the frames were handled after recovery).
        if let Some(d) = new_max_ack_delay {
            self.recovery.peer_max_ack_delay = d;
        }
        for p in out.lost {
            self.on_packet_lost(space, p);
        }
        self.on_congestion(out.congestion, out.persistent_congestion);
        freed
    }

    pub(super) fn on_congestion(&mut self, congestion: bool, persistent: bool) {
        if congestion {
            self.rare.get_mut().stats.congestion_events += 1;
            if self.cfg.allow_one_packet {
                self.allow_one = true;
            }
        }
        if persistent {
            self.rare.get_mut().stats.persistent_congestion_events += 1;
        }
    }

    pub(super) fn on_packet_lost(&mut self, space: SpaceId, p: SentPacket) {
        let largest = self.recovery.largest_acked(space);
        // Losses are detected on the path being worked on (its recovery).
        let path = self.mp().map_or(0, |mp| mp.active);
        self.trace(|| {
            // RFC 9002 §6.1: the packet threshold if enough later packets were acknowledged,
            // else the time threshold declared it lost.
            let trigger = if largest.is_some_and(|l| l >= p.pn + PACKET_THRESHOLD) {
                LossTrigger::ReorderingThreshold
            } else {
                LossTrigger::TimeThreshold
            };
            TraceEvent::PacketLost { space: space as u8, pn: p.pn, bytes: u64::from(p.size), trigger, path }
        });
        if p.in_flight {
            self.rare.get_mut().stats.packets_lost += 1;
        }
        if space == SpaceId::Data {
            let lost_pns = &mut self.rare.get_mut().lost_pns;
            lost_pns.insert(p.pn);
            while lost_pns.len() > LOST_PN_MEMORY {
                lost_pns.pop_first();
            }
        }
        for f in p.frames {
            self.requeue_frame(space, f);
        }
    }

    /// What losing frame `f` of a packet of `space` means: its content is queued again (or
    /// regenerated) if still needed (RFC 9000 §13.3).
    pub(super) fn requeue_frame(&mut self, space: SpaceId, f: Frame) {
        {
            match f {
                Frame::Stream(sf) => {
                    if let Some(s) = self.streams.send.get_mut(&sf.id) {
                        s.on_lost(sf.offset, sf.len);
                    }
                }
                Frame::Crypto(_) => {
                    if let Some(c) = self.hs.crypto(space) {
                        c.on_lost();
                    }
                }
                Frame::MaxData(_) => self.pending.max_data = true,
                Frame::MaxStreamData { id, .. } => {
                    self.rare.get_mut().pending.max_stream_data.insert(id);
                }
                Frame::HandshakeDone => self.pending.handshake_done = true,
                Frame::DataBlocked(limit) => {
                    // RFC 9000 §13.3: re-send while still blocked at that limit.
                    if self.conn_send.max == limit && self.conn_send.available() == 0 {
                        self.rare.get_mut().pending.data_blocked = Some(limit);
                    }
                }
                Frame::StreamDataBlocked { id, limit } => {
                    if let Some(s) = self.streams.send.get(&id) {
                        if s.max_stream_data == limit && s.stream_blocked() {
                            self.rare.get_mut().pending.stream_data_blocked.insert(id, limit);
                        }
                    }
                }
                Frame::AckFrequency(f) => {
                    if let Some(t) = self.ack_freq_tx.as_mut() {
                        t.on_lost(&f);
                    }
                }
                // draft §5: a lost IMMEDIATE_ACK is not re-sent (the window reopens anyway).
                Frame::PathAbandon { .. } | Frame::PathStatus { .. } => {
                    if let Some(mp) = self.mp_mut() {
                        mp.control.push(f);
                    }
                }
                Frame::PathChallenge(t) => self.on_path_challenge_lost(t),
                Frame::ImmediateAck
                | Frame::PathAck(_)
                | Frame::PathResponse(_)
                | Frame::Ping
                | Frame::Padding(_)
                | Frame::Ack(_)
                | Frame::AckEcn(_)
                | Frame::ConnectionClose { .. } => {}
            }
        }
    }
}

/// The parts of a connection that acknowledged frames act on, borrowed while recovery visits
/// the acknowledged packets in place (`Recovery::on_ack_received`).
struct AckedFrames<'a> {
    stats: &'a mut Stats,
    rare: &'a mut RareBox,
    acks: &'a mut PerSpace<AckManager>,
    streams: &'a mut Streams,
    queued_bytes: &'a mut u64,
    hs: &'a mut Handshake,
    ack_freq_tx: &'a mut Option<Box<AckFreqSender>>,
    /// The peer's max_ack_delay from an acknowledged ACK_FREQUENCY frame, applied once
    /// recovery is done with the ACK.
    new_max_ack_delay: Option<SimDuration>,
}

impl AckedFrames<'_> {
    /// Releases what packet `p` of `space` carried. True if stream data was newly
    /// acknowledged (queue space freed).
    fn on_packet_acked(&mut self, space: SpaceId, p: &SentPacket) -> bool {
        if p.in_flight {
            count(self.stats, self.rare, Sum::PacketsAcked, 1);
        }
        if let Some(largest) = p.ack_largest.get() {
            self.acks[space].on_ack_of_ack(largest);
        }
        let mut freed = false;
        for f in p.frames.iter() {
            match *f {
                Frame::Stream(sf) => {
                    if let Some(s) = self.streams.send.get_mut(&sf.id) {
                        let n = s.on_acked(sf.offset, sf.len);
                        *self.queued_bytes -= n;
                        freed |= n > 0;
                    }
                }
                Frame::Crypto(_) => {
                    if let Some(c) = self.hs.crypto(space) {
                        c.acked = true;
                        c.pending = false;
                    }
                }
                Frame::AckFrequency(ref f) => {
                    if let Some(d) = self.ack_freq_tx.as_mut().and_then(|t| t.on_acked(f)) {
                        self.new_max_ack_delay = Some(d);
                    }
                }
                _ => {}
            }
        }
        freed
    }
}
