//! Nodes, links and the packet path through them.

use crate::channel::{Channel, ChannelConfig, ChannelRngs};
use crate::routing::RoutingTable;
use crate::{ChanId, DropReason, NetEvent, NetObserver, NetSched, NodeId, Packet};
use quicksim_engine::{RngStreams, SimTime};
use std::collections::HashMap;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologyError {
    DuplicateNode(String),
    UnknownNode(String),
    SelfLoop(String),
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyError::DuplicateNode(n) => write!(f, "node {n:?} is defined twice"),
            TopologyError::UnknownNode(n) => write!(f, "unknown node {n:?}"),
            TopologyError::SelfLoop(n) => write!(f, "link from node {n:?} to itself"),
        }
    }
}
impl std::error::Error for TopologyError {}

/// Builds a [`Network`]: add nodes, then links (each link is two channels, a->b and b->a).
pub struct NetworkBuilder {
    names: Vec<String>,
    kinds: Vec<NodeKind>,
    links: Vec<(String, NodeId, NodeId, ChannelConfig, ChannelConfig)>,
    /// Name -> id, for lookups only (never iterated, so its order cannot leak into results).
    index: HashMap<String, NodeId>,
}

impl Default for NetworkBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl NetworkBuilder {
    pub fn new() -> Self {
        NetworkBuilder { names: Vec::new(), kinds: Vec::new(), links: Vec::new(), index: HashMap::new() }
    }
    pub fn node(&mut self, name: &str, kind: NodeKind) -> Result<NodeId, TopologyError> {
        if self.index.contains_key(name) {
            return Err(TopologyError::DuplicateNode(name.into()));
        }
        let id = NodeId(self.names.len() as u32);
        self.names.push(name.into());
        self.kinds.push(kind);
        self.index.insert(name.into(), id);
        Ok(id)
    }
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }
    /// A second name for an existing node (a host with several interfaces answers to its own
    /// name with its first interface's address); `find` then resolves it, links never see it.
    pub fn alias(&mut self, name: &str, to: NodeId) -> Result<(), TopologyError> {
        if self.index.contains_key(name) {
            return Err(TopologyError::DuplicateNode(name.into()));
        }
        self.index.insert(name.into(), to);
        Ok(())
    }
    /// Adjacency lists (neighbour, channel) in link declaration order, and which nodes forward.
    fn graph(&self) -> (Vec<Vec<(NodeId, ChanId)>>, Vec<bool>) {
        let mut adj = vec![Vec::new(); self.names.len()];
        for (i, (_, a, b, _, _)) in self.links.iter().enumerate() {
            adj[a.0 as usize].push((*b, ChanId(2 * i as u32)));
            adj[b.0 as usize].push((*a, ChanId(2 * i as u32 + 1)));
        }
        (adj, self.kinds.iter().map(|k| *k == NodeKind::Router).collect())
    }
    /// Names of the links added so far, in order.
    pub fn link_names(&self) -> impl Iterator<Item = &str> {
        self.links.iter().map(|l| l.0.as_str())
    }
    pub fn node_count(&self) -> usize {
        self.names.len()
    }
    /// Bytes the routing table of this topology will take (before building it).
    pub fn routing_bytes(&self) -> u64 {
        let (adj, forwards) = self.graph();
        RoutingTable::estimate_bytes(&adj, &forwards)
    }
    /// A full-duplex link; returns the ids of the a->b and b->a channels.
    pub fn link(
        &mut self,
        name: &str,
        a: NodeId,
        b: NodeId,
        ab: ChannelConfig,
        ba: ChannelConfig,
    ) -> Result<(ChanId, ChanId), TopologyError> {
        if a == b {
            return Err(TopologyError::SelfLoop(self.names[a.0 as usize].clone()));
        }
        let i = self.links.len() as u32;
        self.links.push((name.into(), a, b, ab, ba));
        Ok((ChanId(2 * i), ChanId(2 * i + 1)))
    }

    /// Freeze the topology; each channel gets its own RNG streams (see [`ChannelRngs`]).
    pub fn build<P>(self, rng: &RngStreams) -> Network<P> {
        let mut chans = Vec::with_capacity(self.links.len() * 2);
        let mut chan_names = Vec::with_capacity(self.links.len() * 2);
        let (adj, forwards) = self.graph();
        for (name, a, b, ab, ba) in self.links {
            for (from, to, cfg) in [(a, b, ab), (b, a, ba)] {
                let id = ChanId(chans.len() as u32);
                chan_names
                    .push(format!("{}:{}->{}", name, self.names[from.0 as usize], self.names[to.0 as usize]));
                chans.push(Channel::new(id, from, to, cfg, ChannelRngs::derive(rng, id.0)));
            }
        }
        let routes = RoutingTable::compute(&adj, &forwards);
        let index = self.index;
        Network { names: self.names, kinds: self.kinds, chans, chan_names, routes, index, next_uid: 0 }
    }
}

/// The frozen network: nodes, channels, routes.
pub struct Network<P> {
    pub names: Vec<String>,
    pub kinds: Vec<NodeKind>,
    pub chans: Vec<Channel<P>>,
    /// "link:from->to" per channel.
    pub chan_names: Vec<String>,
    pub routes: RoutingTable,
    index: HashMap<String, NodeId>,
    next_uid: u64,
}

impl<P> Network<P> {
    pub fn node_name(&self, n: NodeId) -> &str {
        &self.names[n.0 as usize]
    }
    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }
    pub fn reachable(&self, from: NodeId, to: NodeId) -> bool {
        from == to || self.routes.next_hop(from, to).is_some()
    }
    /// Path MTU from `from` to `to` (minimum link MTU along the route).
    pub fn path_mtu(&self, from: NodeId, to: NodeId) -> Option<u32> {
        let mut at = from;
        let mut mtu = u32::MAX;
        while at != to {
            let c = self.routes.next_hop(at, to)?;
            let ch = &self.chans[c.0 as usize];
            mtu = mtu.min(ch.cfg.mtu);
            at = ch.to;
        }
        Some(mtu)
    }
    /// Channels on the route from `from` to `to`.
    pub fn path(&self, from: NodeId, to: NodeId) -> Vec<ChanId> {
        let mut at = from;
        let mut v = Vec::new();
        while at != to {
            match self.routes.next_hop(at, to) {
                Some(c) => {
                    v.push(c);
                    at = self.chans[c.0 as usize].to;
                }
                None => break,
            }
        }
        v
    }
    /// Make a new packet with a fresh uid.
    pub fn packet(&mut self, src: NodeId, dst: NodeId, flow: u32, ip_bytes: u32, payload: P) -> Packet<P> {
        self.next_uid += 1;
        Packet::new(self.next_uid, src, dst, flow, ip_bytes, payload)
    }

    /// A host sends a packet: route it onto the first channel. Inlined into its one caller per
    /// transport, as the code it came from was.
    #[inline]
    pub fn send<S, O>(&mut self, now: SimTime, p: Packet<P>, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        obs.sent(now, p.src, &p);
        self.forward(now, p.src, p, sched, obs);
    }

    /// Puts packet `p` on the network at its source now, its sending already reported to the
    /// observer (`sent`) earlier: a flow whose packets enter the network later than they are
    /// sent (an extra delay of its own).
    pub fn inject<S, O>(&mut self, now: SimTime, p: Packet<P>, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        self.forward(now, p.src, p, sched, obs);
    }

    /// Not inlined: a host's send and a router's forward share one copy of the channel's
    /// enqueue path (the driver passes one scheduling type to both), which was inlined at both
    /// and, with the transports' paths, overflowed the instruction cache (callgrind, scale3:
    /// 15.9 M -> 10.3 M I1 misses, +0.4 % instructions).
    #[inline(never)]
    fn forward<S, O>(&mut self, now: SimTime, at: NodeId, p: Packet<P>, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        match self.routes.next_hop(at, p.dst) {
            Some(c) => self.chans[c.0 as usize].enqueue(now, p, sched, obs),
            // The scenario validator rejects flows between unconnected nodes, so this only
            // happens for packets addressed by a transport to a wrong node: count nothing.
            None => debug_assert!(false, "no route from {:?} to {:?}", at, p.dst),
        }
    }

    /// The end of a serialization on channel `c` (`NetEvent::TxDone`, `NetEvent::TxEnd`), on a
    /// path of its own for the run loop: nothing is delivered.
    #[inline]
    pub fn tx_done<S, O>(&mut self, now: SimTime, c: ChanId, sched: &mut S, obs: &mut O)
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        self.chans[c.0 as usize].tx_done(now, sched, obs);
    }

    /// Packet `p` reaches the far end of channel `c` (`NetEvent::Arrive`; a driver whose queue
    /// keeps arrivals apart calls it directly): returned if it reached its destination host,
    /// else forwarded by the router there. Always inlined: as a call (the run loop's lane path
    /// made it one) each of a packet's six or so arrivals paid ~17 instructions of prologue and
    /// epilogue around ~55 of work; `forward`, the larger part, stays out of line.
    #[inline(always)]
    pub fn arrive<S, O>(
        &mut self,
        now: SimTime,
        c: ChanId,
        p: Packet<P>,
        sched: &mut S,
        obs: &mut O,
    ) -> Option<Packet<P>>
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        let ch = &mut self.chans[c.0 as usize];
        ch.arrived(now, &p, obs);
        let to = ch.to;
        if to == p.dst {
            Some(p)
        } else if self.kinds[to.0 as usize] == NodeKind::Router {
            self.forward(now, to, p, sched, obs);
            None
        } else {
            // A host that is not the destination does not forward.
            obs.dropped(now, c, &p, DropReason::Down);
            None
        }
    }

    /// Handle a network event; returns a packet that reached its destination host.
    pub fn handle<S, O>(
        &mut self,
        now: SimTime,
        ev: NetEvent<P>,
        sched: &mut S,
        obs: &mut O,
    ) -> Option<Packet<P>>
    where
        S: NetSched<P>,
        O: NetObserver<P>,
    {
        match ev {
            NetEvent::TxDone(c) | NetEvent::TxEnd(c) => {
                self.tx_done(now, c, sched, obs);
                None
            }
            NetEvent::Arrive(c, p) => self.arrive(now, c, p, sched, obs),
            NetEvent::SetRate(c, r) => {
                self.chans[c.0 as usize].set_rate(r);
                None
            }
            NetEvent::SetUp(c, up) => {
                self.chans[c.0 as usize].set_up(now, up, sched, obs);
                None
            }
            NetEvent::QdiscTimer(c) => {
                self.chans[c.0 as usize].qdisc_timer(now, sched, obs);
                None
            }
        }
    }

    /// Close time integrals at the end of the run.
    pub fn finish(&mut self, now: SimTime) {
        for c in &mut self.chans {
            c.finish(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::droptail;
    use crate::{LossModel, NoObserver, QdiscConfig};
    use quicksim_engine::{EventQueue, Rate, SimDuration};

    /// Drive the network until the queue is empty; returns (arrival time, uid) of delivered packets.
    fn drain(net: &mut Network<()>, q: &mut EventQueue<NetEvent<()>>) -> Vec<(SimTime, u64)> {
        let mut out = Vec::new();
        while let Some((now, ev)) = q.pop() {
            let mut pending = Vec::new();
            let got = net.handle(now, ev, &mut |t, e| pending.push((t, e)), &mut NoObserver);
            for (t, e) in pending {
                q.push(t, e);
            }
            if let Some(p) = got {
                out.push((now, p.uid()));
            }
        }
        out
    }

    /// A router and a host joined by one link of `cfg`; channel 0 is the router's output.
    fn one_link(cfg: ChannelConfig) -> (Network<()>, NodeId, NodeId) {
        let mut b = NetworkBuilder::new();
        let r1 = b.node("r1", NodeKind::Router).unwrap();
        let d = b.node("d", NodeKind::Host).unwrap();
        b.link("bn", r1, d, cfg.clone(), cfg).unwrap();
        (b.build(&RngStreams::new(1)), r1, d)
    }

    /// Offers a new packet of `ip_bytes` from `from` to `to` straight to channel 0 at time 0.
    fn offer(
        net: &mut Network<()>,
        q: &mut EventQueue<NetEvent<()>>,
        from: NodeId,
        to: NodeId,
        ip_bytes: u32,
    ) {
        let p = net.packet(from, to, 0, ip_bytes, ());
        let mut pending = Vec::new();
        net.chans[0].enqueue(SimTime::ZERO, p, &mut |t, e| pending.push((t, e)), &mut NoObserver);
        for (t, e) in pending {
            q.push(t, e);
        }
    }

    fn dumbbell(bneck: ChannelConfig) -> (Network<()>, NodeId, NodeId) {
        let mut b = NetworkBuilder::new();
        let s = b.node("s", NodeKind::Host).unwrap();
        let r1 = b.node("r1", NodeKind::Router).unwrap();
        let r2 = b.node("r2", NodeKind::Router).unwrap();
        let d = b.node("d", NodeKind::Host).unwrap();
        let acc = ChannelConfig::new(Rate::gbps(1), SimDuration::from_micros(5), 1500);
        b.link("a1", s, r1, acc.clone(), acc.clone()).unwrap();
        b.link("bn", r1, r2, bneck.clone(), bneck).unwrap();
        b.link("a2", r2, d, acc.clone(), acc).unwrap();
        (b.build(&RngStreams::new(1)), s, d)
    }

    #[test]
    fn one_packet_end_to_end_delay_is_exact() {
        let bn = ChannelConfig::new(Rate::mbps(100), SimDuration::from_millis(1), 1500);
        let (mut net, s, d) = dumbbell(bn);
        let mut q = EventQueue::new();
        let p = net.packet(s, d, 0, 1280, ());
        let mut pending = Vec::new();
        net.send(SimTime::ZERO, p, &mut |t, e| pending.push((t, e)), &mut NoObserver);
        for (t, e) in pending {
            q.push(t, e);
        }
        let got = drain(&mut net, &mut q);
        // 1287 B frames: 2 x (10.296 us + 5 us) on the 1 Gbit/s access links,
        // 102.96 us + 1 ms on the bottleneck.
        let expect = 2 * (10_296_000 + 5_000_000) + 102_960_000 + 1_000_000_000u64;
        assert_eq!(got, vec![(SimTime(expect), 1)]);
    }

    #[test]
    fn a_rate_change_applies_to_the_next_frame_of_the_same_size() {
        // The channel remembers the serialization time of the last frame size; a rate change
        // must not reuse it. Three 1000 B packets (1007 B frames) back to back at 10 Mbit/s,
        // the rate set to 1 Mbit/s while the first is on the wire: the first keeps 805.6 us,
        // the next two take 8.056 ms each.
        let (mut net, r1, d) = one_link(ChannelConfig::new(Rate::mbps(10), SimDuration::ZERO, 1500));
        let mut q = EventQueue::new();
        for i in 0..3 {
            offer(&mut net, &mut q, r1, d, 1000);
            if i == 0 {
                net.chans[0].set_rate(Rate::mbps(1));
            }
        }
        let got: Vec<u64> = drain(&mut net, &mut q).into_iter().map(|(t, _)| t.0).collect();
        let (fast, slow) = (805_600_000u64, 8_056_000_000u64);
        assert_eq!(got, vec![fast, fast + slow, fast + 2 * slow]);
        assert_eq!(net.chans[0].rate(), Rate::mbps(1));
    }

    #[test]
    fn droptail_counts_waiting_packets_only() {
        let mut bn = ChannelConfig::new(Rate::mbps(10), SimDuration::ZERO, 1500);
        bn.qdisc = QdiscConfig::DropTail(droptail::Config { packets: Some(3), bytes: None });
        let (mut net, r1, d) = one_link(bn);
        let mut q = EventQueue::new();
        // 10 packets at once into the router's output: 1 in transmission + 3 waiting, 6 dropped.
        for _ in 0..10 {
            offer(&mut net, &mut q, r1, d, 1000);
        }
        assert_eq!(net.chans[0].stats.dropped_packets, 6);
        let got = drain(&mut net, &mut q);
        assert_eq!(got.len(), 4);
        // back-to-back 1007 B frames at 10 Mbit/s: 805.6 us apart
        assert_eq!(got[3].0, SimTime(4 * 805_600_000));
    }

    #[test]
    fn periodic_loss_drops_one_after_every_n() {
        let mut bn = ChannelConfig::new(Rate::gbps(1), SimDuration::ZERO, 1500);
        bn.loss = LossModel::Periodic { every: 4, first: 4 };
        let (mut net, r1, d) = one_link(bn);
        let mut q = EventQueue::new();
        for _ in 0..20 {
            offer(&mut net, &mut q, r1, d, 100);
        }
        let got: Vec<u64> = drain(&mut net, &mut q).into_iter().map(|x| x.1).collect();
        // 4 delivered, 1 lost: uids 5, 10, 15, 20 are lost.
        let expect: Vec<u64> = (1..=20).filter(|u| u % 5 != 0).collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn periodic_loss_starts_after_first() {
        // first = 1: uid 2 is lost, then one after every 4 delivered (7, 12, 17); first = 0:
        // the very first frame is lost (1, 6, 11, 16).
        for (first, lost) in [(1, [2, 7, 12, 17]), (0, [1, 6, 11, 16])] {
            let mut bn = ChannelConfig::new(Rate::gbps(1), SimDuration::ZERO, 1500);
            bn.loss = LossModel::Periodic { every: 4, first };
            let (mut net, r1, d) = one_link(bn);
            let mut q = EventQueue::new();
            for _ in 0..20 {
                offer(&mut net, &mut q, r1, d, 100);
            }
            let got: Vec<u64> = drain(&mut net, &mut q).into_iter().map(|x| x.1).collect();
            let expect: Vec<u64> = (1..=20).filter(|u| !lost.contains(u)).collect();
            assert_eq!(got, expect, "first = {first}");
        }
    }

    /// A gate: holds every packet until `open_at`, asking for a timer then; once open, a FIFO.
    struct Gate {
        open_at: SimTime,
        open: bool,
        q: std::collections::VecDeque<Packet<()>>,
    }
    impl crate::Qdisc<()> for Gate {
        fn enqueue(&mut self, _cx: &mut crate::QdiscCtx<'_, ()>, p: crate::Queued<()>) -> crate::Verdict<()> {
            self.q.push_back(p.pkt);
            crate::Verdict::Queued
        }
        fn dequeue(&mut self, _cx: &mut crate::QdiscCtx<'_, ()>) -> Option<Packet<()>> {
            if self.open {
                self.q.pop_front()
            } else {
                None
            }
        }
        fn len_packets(&self) -> usize {
            self.q.len()
        }
        fn len_bytes(&self) -> u64 {
            self.q.iter().map(|p| p.ip_bytes as u64).sum()
        }
        fn next_timer(&self) -> Option<SimTime> {
            (!self.open && !self.q.is_empty()).then_some(self.open_at)
        }
        fn on_timer(&mut self, cx: &mut crate::QdiscCtx<'_, ()>) {
            assert_eq!(cx.now, self.open_at);
            self.open = true;
        }
    }

    #[test]
    fn a_qdisc_timer_is_scheduled_once_and_restarts_the_link() {
        // Three 1000 B packets at t = 0 on an idle 10 Mbit/s link: the first bypasses the
        // queue (805.6 us), the other two wait behind the gate until its timer at 5 ms, then
        // go back to back.
        let (mut net, r1, d) = one_link(ChannelConfig::new(Rate::mbps(10), SimDuration::ZERO, 1500));
        let open_at = SimTime::from_millis(5);
        net.chans[0].set_qdisc(crate::AnyQdisc::Dyn(Box::new(Gate {
            open_at,
            open: false,
            q: Default::default(),
        })));
        let mut q = EventQueue::new();
        for _ in 0..3 {
            offer(&mut net, &mut q, r1, d, 1000);
        }
        // One timer event although the discipline was asked twice (after each enqueue).
        let (mut got, mut timers) = (Vec::new(), 0);
        while let Some((now, ev)) = q.pop() {
            timers += matches!(ev, NetEvent::QdiscTimer(_)) as u32;
            let mut pending = Vec::new();
            if net.handle(now, ev, &mut |t, e| pending.push((t, e)), &mut NoObserver).is_some() {
                got.push(now.0);
            }
            pending.into_iter().for_each(|(t, e)| q.push(t, e));
        }
        assert_eq!(timers, 1);
        let tx = 805_600_000u64;
        assert_eq!(got, vec![tx, open_at.0 + tx, open_at.0 + 2 * tx]);
    }

    #[test]
    fn routes_do_not_cross_hosts() {
        let mut b = NetworkBuilder::new();
        let h1 = b.node("h1", NodeKind::Host).unwrap();
        let h2 = b.node("h2", NodeKind::Host).unwrap();
        let h3 = b.node("h3", NodeKind::Host).unwrap();
        let c = ChannelConfig::new(Rate::gbps(1), SimDuration::ZERO, 1500);
        b.link("l1", h1, h2, c.clone(), c.clone()).unwrap();
        b.link("l2", h2, h3, c.clone(), c).unwrap();
        let net: Network<()> = b.build(&RngStreams::new(1));
        assert!(net.reachable(h1, h2));
        assert!(!net.reachable(h1, h3));
    }
}
