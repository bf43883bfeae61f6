//! What flows act on while the run loop drives them: the event queue, the network, and the
//! network's observer (the output sinks, and the packet pools a drop frees a slot of). Kept
//! apart from the flows themselves so that a flow can borrow it while it is borrowed.

use crate::event::{net_sched, Queue};
use crate::output::Sinks;
use crate::payload::{Payload, PoolSet};
use quicksim_engine::{RngStreams, SimTime};
use quicksim_net::{ChanId, DropReason, Ecn, NetObserver, Network, NodeId, Packet};

/// Everything a flow acts on: the event queue, the network, the sinks and the packet pools.
/// Kept apart from the flows themselves so that a flow can borrow it while it is borrowed.
/// Generic over the pool set (`flows::Pools`, which the transport registry generates), so that
/// this module does not depend on the flows that use it (`flows::Ctx` names the concrete type).
pub(crate) struct Ctx<Pl> {
    pub q: Queue,
    pub net: Network<Payload>,
    /// The network's observer: the sinks, and the pools whose slots a drop frees.
    pub out: NetObs<Pl>,
    pub flow_names: Vec<String>,
    /// The run's random streams, for what a flow makes during the run (its connection's
    /// controller streams).
    pub rng: RngStreams,
    /// The further paths of multipath flows (path 1 onwards): (client, server) addresses, by
    /// flow. Empty in a run without such flows.
    pub paths: std::collections::BTreeMap<u32, Box<[(NodeId, NodeId)]>>,
    /// Per flow: how much later its packets enter the network (ps; `FlowSpec::extra_delay`);
    /// empty when no flow has one.
    pub extra_delay_ps: Vec<u64>,
}

impl<Pl: PoolSet> Ctx<Pl> {
    /// The (from, to) addresses of path `path` (1 or more) of flow `f` for endpoint `side`.
    #[cold]
    pub(crate) fn path_ends(&self, f: u32, path: u8, side: u8) -> (NodeId, NodeId) {
        let (c, s) = self.paths[&f][path as usize - 1];
        if side == 0 {
            (c, s)
        } else {
            (s, c)
        }
    }

    /// Puts an IP packet of `ip_bytes` from `src` to `dst` with ECN field `ecn` on the network.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send_packet(
        &mut self,
        now: SimTime,
        src: NodeId,
        dst: NodeId,
        flow: u32,
        ip_bytes: u64,
        payload: Payload,
        ecn: Ecn,
    ) {
        let mut p = self.net.packet(src, dst, flow, ip_bytes as u32, payload);
        if ecn != Ecn::NotEct {
            p.set_ecn(ecn);
        }
        match self.extra_delay_ps.get(flow as usize) {
            Some(&d) if d > 0 => self.hold(now, p, d),
            _ => self.net.send(now, p, &mut net_sched(&mut self.q), &mut self.out),
        }
    }

    /// A packet of a flow with an extra delay: sent now (its one-way delay counts from now), on
    /// the network `d` ps later (`Ev::Held`). Every packet of the flow is held as long, so
    /// they keep their order.
    #[cold]
    fn hold(&mut self, now: SimTime, p: Packet<Payload>, d: u64) {
        self.out.sent(now, p.src, &p);
        self.q.push(SimTime(now.0 + d), crate::event::Ev::Held(p));
    }
}

/// The sinks as the network's observer, plus freeing the pool slot of a dropped packet. One
/// struct owning both (not one made of two borrows per call), so the network gets one pointer.
pub(crate) struct NetObs<Pl> {
    pub rec: Sinks,
    pub pools: Pl,
}

impl<Pl: PoolSet> NetObserver<Payload> for NetObs<Pl> {
    #[inline]
    fn queue_changed(&mut self, now: SimTime, chan: ChanId, packets: usize, bytes: u64) {
        self.rec.queue_changed(now, chan, packets, bytes);
    }
    #[inline]
    fn sub_queues_changed(&mut self, now: SimTime, chan: ChanId, sub: &quicksim_net::SubQueues) {
        self.rec.sub_queues_changed(now, chan, sub);
    }
    #[inline]
    fn dropped(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>, why: DropReason) {
        if let Some((tag, _, slot)) = p.payload.as_transport() {
            self.pools.release(tag, slot);
        }
        self.rec.dropped(now, chan, p, why);
    }
    #[inline]
    fn delivered(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>, frame_bytes: u64) {
        self.rec.link_delivered(now, chan, p, frame_bytes, &self.pools);
    }
    #[inline]
    fn tx_started(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>) {
        self.rec.tx_started(now, chan, p);
    }
    #[inline]
    fn sent(&mut self, now: SimTime, node: NodeId, p: &Packet<Payload>) {
        self.rec.packet_sent(now, node, p, &self.pools);
    }
}
