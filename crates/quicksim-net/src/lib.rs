//! quicksim-net: nodes, full-duplex point-to-point links with output queues and impairments,
//! and static shortest-path routing. Protocol-agnostic: a packet carries an opaque payload `P`.
//!
//! The network does not own the event loop. It asks the caller to schedule [`NetEvent`]s and
//! reports what happens (queue changes, drops, deliveries) through a [`NetObserver`], so the
//! scenario layer decides what to record and a queue can be tested without any protocol.

mod channel;
pub mod loss;
pub mod model;
pub mod qdisc;
mod routing;
mod topology;
mod transmitter;

pub use channel::{Channel, ChannelConfig, ChannelRngs, ChannelStats, DropReason, Jitter, LossModel};
pub use loss::{DropList, GilbertElliott};
pub use qdisc::{AnyQdisc, Qdisc, QdiscConfig, QdiscCtx, QueueLen, Queued, SubQueue, SubQueues, Verdict};
pub use routing::RoutingTable;
pub use topology::{Network, NetworkBuilder, NodeKind, TopologyError};

use quicksim_engine::SimTime;

/// IPv4 header bytes accounted in every packet.
pub const IPV4_HEADER: u32 = 20;
/// UDP header bytes.
pub const UDP_HEADER: u32 = 8;
/// Default per-frame link-layer overhead: INET's PPP header (5 B) plus trailer (2 B).
pub const PPP_OVERHEAD: u32 = 7;

/// Index of a node in the network's arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);
/// One direction of a full-duplex link (an interface's output side).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChanId(pub u32);

/// An IP packet in flight. `ip_bytes` is the IP datagram size (headers included); the
/// link adds its per-frame overhead when serializing.
///
/// The ECN codepoint shares a word with the uid (its top two bits): a field of its own would
/// pad the packet from 32 to 40 B, and packets travel by value through the event queue.
#[derive(Clone, Debug)]
pub struct Packet<P> {
    /// uid in bits 0..62, [`Ecn`] codepoint in bits 62..64.
    uid_ecn: u64,
    pub src: NodeId,
    pub dst: NodeId,
    pub flow: u32,
    pub ip_bytes: u32,
    pub payload: P,
}

const ECN_SHIFT: u32 = 62;
const UID_MASK: u64 = (1 << ECN_SHIFT) - 1;

impl<P> Packet<P> {
    /// A Not-ECT packet; `uid` must be below 2^62.
    pub fn new(uid: u64, src: NodeId, dst: NodeId, flow: u32, ip_bytes: u32, payload: P) -> Self {
        debug_assert!(uid <= UID_MASK, "packet uid {uid} does not fit 62 bits");
        Packet { uid_ecn: uid, src, dst, flow, ip_bytes, payload }
    }
    /// The network-wide unique id (1, 2, ... in creation order).
    #[inline]
    pub fn uid(&self) -> u64 {
        self.uid_ecn & UID_MASK
    }
    /// The ECN field of the IP header.
    #[inline]
    pub fn ecn(&self) -> Ecn {
        Ecn::from_bits((self.uid_ecn >> ECN_SHIFT) as u8)
    }
    #[inline]
    pub fn set_ecn(&mut self, e: Ecn) {
        self.uid_ecn = self.uid_ecn & UID_MASK | (e as u64) << ECN_SHIFT;
    }
}

/// The ECN codepoint of an IP packet (RFC 3168 section 5: the two ECN bits of the IP header),
/// with the codepoint's value as discriminant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    /// 00: the sender does not support ECN; an AQM must drop instead of marking.
    #[default]
    NotEct = 0b00,
    /// 01: ECN-capable transport, ECT(1) (L4S, RFC 9331).
    Ect1 = 0b01,
    /// 10: ECN-capable transport, ECT(0).
    Ect0 = 0b10,
    /// 11: Congestion Experienced, set by a router instead of dropping.
    Ce = 0b11,
}

impl Ecn {
    fn from_bits(b: u8) -> Ecn {
        match b & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
    /// ECT(0), ECT(1) or CE: a router may mark it instead of dropping (RFC 3168 section 5).
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// Events the network asks its driver to schedule.
///
/// The tag is a whole word (`repr(u64)`) so that the fields after it start 8-aligned: with a
/// 1-byte tag LLVM moved an event as the tag plus a 39-byte block at odd offsets, and reading
/// such a block back from the stack right after writing it in aligned pieces cannot be forwarded
/// from the stores (perf: ~10 % of scale-100x1g's cycles on a few loads in the run loop).
#[derive(Debug)]
#[repr(u64)]
pub enum NetEvent<P> {
    /// The frame on this channel has finished serialization (a channel that may go down: its
    /// fate is decided now). Ordered as scheduled, at the frame's start.
    TxDone(ChanId),
    /// The frame on this channel has finished serialization and the channel asked to hear it
    /// (packets wait, or the frame is lost; see `transmitter.rs`). Ordered before every other
    /// event at its time: the transmitter is free from the instant its frame ends.
    TxEnd(ChanId),
    /// A packet reaches the far end of the channel.
    Arrive(ChanId, Packet<P>),
    /// Scheduled impairment changes (rate schedule, link down/up).
    SetRate(ChanId, quicksim_engine::Rate),
    SetUp(ChanId, bool),
    /// The channel's queue discipline asked for a timer at this time ([`Qdisc::next_timer`]).
    QdiscTimer(ChanId),
}

/// Where the network's events go: its driver's event queue. A trait rather than a bare
/// `FnMut` so that a driver can mark its `sched` `#[inline(always)]`: whether a closure's body
/// is inlined is LLVM's choice, and the run loop's was not (a call of ~26 instructions of its
/// own per scheduled event, 2.9 M of them in a 3 s, 400-flow run of buffer-sizing-sqrt-n;
/// callgrind). Inlined, each call site keeps only the arm of the event it schedules. Every
/// `FnMut(SimTime, NetEvent<P>)` is one, so tests and other drivers pass closures.
pub trait NetSched<P> {
    fn sched(&mut self, at: SimTime, ev: NetEvent<P>);
}

impl<P, F: FnMut(SimTime, NetEvent<P>)> NetSched<P> for F {
    #[inline(always)]
    fn sched(&mut self, at: SimTime, ev: NetEvent<P>) {
        self(at, ev)
    }
}

/// Hooks through which the network reports what happened; all default to no-ops and are
/// monomorphized, so an observer that records nothing costs nothing.
pub trait NetObserver<P> {
    /// The number of waiting packets/bytes of a channel's queue changed.
    fn queue_changed(&mut self, _now: SimTime, _chan: ChanId, _packets: usize, _bytes: u64) {}
    /// Right after `queue_changed` of a channel whose discipline has sub-queues (DualPI2): their
    /// state.
    fn sub_queues_changed(&mut self, _now: SimTime, _chan: ChanId, _sub: &SubQueues) {}
    fn dropped(&mut self, _now: SimTime, _chan: ChanId, _pkt: &Packet<P>, _reason: DropReason) {}
    /// A queue discipline set Congestion Experienced on a packet instead of dropping it.
    fn ecn_marked(&mut self, _now: SimTime, _chan: ChanId, _pkt: &Packet<P>) {}
    /// A frame arrived intact at the far end of `chan` (`frame_bytes` include link overhead).
    fn delivered(&mut self, _now: SimTime, _chan: ChanId, _pkt: &Packet<P>, _frame_bytes: u64) {}
    /// A node put a packet on its first link (source host only).
    fn sent(&mut self, _now: SimTime, _node: NodeId, _pkt: &Packet<P>) {}
    /// `chan` starts serializing `pkt` (it leaves the queue, or found the link idle): the
    /// packet's wait in this queue ends now (the delay statistics' queueing delay).
    fn tx_started(&mut self, _now: SimTime, _chan: ChanId, _pkt: &Packet<P>) {}
}

/// An observer that records nothing.
pub struct NoObserver;
impl<P> NetObserver<P> for NoObserver {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_32_bytes_and_ecn_does_not_touch_the_uid() {
        // uid 8 + src 4 + dst 4 + flow 4 + ip_bytes 4 + payload 8: no padding (it was 32 B
        // before the ECN field, and a separate u8 would make it 40).
        assert_eq!(std::mem::size_of::<Packet<u64>>(), 32);
        let mut p = Packet::new(UID_MASK, NodeId(1), NodeId(2), 3, 1500, 0u64);
        assert_eq!(p.ecn(), Ecn::NotEct);
        for e in [Ecn::Ect0, Ecn::Ect1, Ecn::Ce, Ecn::NotEct] {
            p.set_ecn(e);
            assert_eq!((p.ecn(), p.uid()), (e, UID_MASK));
        }
        assert!(Ecn::Ect1.is_ect() && Ecn::Ce.is_ect() && !Ecn::NotEct.is_ect());
    }
}
