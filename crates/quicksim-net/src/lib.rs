//! quicksim-net: nodes, full-duplex point-to-point links with output queues and impairments,
//! and static shortest-path routing. Protocol-agnostic: a packet carries an opaque payload `P`.
//!
//! The network does not own the event loop. It asks the caller to schedule [`NetEvent`]s and
//! reports what happens (queue changes, drops, deliveries) through a [`NetObserver`], so the
//! scenario layer decides what to record and a queue can be tested without any protocol.

mod channel;
mod routing;
mod topology;

pub use channel::{Channel, ChannelConfig, ChannelStats, DropReason, Jitter, LossModel, QueueLimit};
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
#[derive(Clone, Debug)]
pub struct Packet<P> {
    pub uid: u64,
    pub src: NodeId,
    pub dst: NodeId,
    pub flow: u32,
    pub ip_bytes: u32,
    pub payload: P,
}

/// Events the network asks its driver to schedule.
#[derive(Debug)]
pub enum NetEvent<P> {
    /// The frame on this channel has finished serialization.
    TxDone(ChanId),
    /// A packet reaches the far end of the channel.
    Arrive(ChanId, Packet<P>),
    /// Scheduled impairment changes (rate schedule, link down/up).
    SetRate(ChanId, quicksim_engine::Rate),
    SetUp(ChanId, bool),
}

/// Hooks through which the network reports what happened; all default to no-ops and are
/// monomorphized, so an observer that records nothing costs nothing.
pub trait NetObserver<P> {
    /// The number of waiting packets/bytes of a channel's queue changed.
    fn queue_changed(&mut self, _now: SimTime, _chan: ChanId, _packets: usize, _bytes: u64) {}
    fn dropped(&mut self, _now: SimTime, _chan: ChanId, _pkt: &Packet<P>, _reason: DropReason) {}
    /// A frame arrived intact at the far end of `chan` (`frame_bytes` include link overhead).
    fn delivered(&mut self, _now: SimTime, _chan: ChanId, _pkt: &Packet<P>, _frame_bytes: u64) {}
    /// A node put a packet on its first link (source host only).
    fn sent(&mut self, _now: SimTime, _node: NodeId, _pkt: &Packet<P>) {}
}

/// An observer that records nothing.
pub struct NoObserver;
impl<P> NetObserver<P> for NoObserver {}
