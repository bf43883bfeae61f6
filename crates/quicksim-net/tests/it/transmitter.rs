//! The transmitter's event economy (`transmitter.rs`): a frame's arrival is scheduled when its
//! serialization starts, and an end of transmission is an event only where packets wait behind
//! the frame or the frame is lost; a direction that may go down decides each frame's fate at its
//! end. Times are checked exactly against the serialization and propagation arithmetic.

use quicksim_engine::{EventQueue, Rate, RngStreams, SimDuration, SimTime};
use quicksim_net::{
    ChanId, ChannelConfig, DropReason, LossModel, NetEvent, NetObserver, Network, NetworkBuilder, NodeId,
    NodeKind, Packet,
};

/// 1000 B packets: 1007 B frames (PPP) take 805.6 us at 10 Mbit/s.
const TX_1000B_10M: u64 = 805_600_000;

/// Drops as (time, channel, reason).
#[derive(Default)]
struct Drops(Vec<(SimTime, u32, DropReason)>);
impl NetObserver<()> for Drops {
    fn dropped(&mut self, now: SimTime, chan: ChanId, _p: &Packet<()>, why: DropReason) {
        self.0.push((now, chan.0, why));
    }
}

/// What a run of the network did: deliveries (time, uid) and events by kind.
#[derive(Default, Debug)]
struct Run {
    delivered: Vec<(SimTime, u64)>,
    arrivals: u32,
    tx_ends: u32,
    tx_dones: u32,
}

/// Pops events before `until`, handing them to the network.
fn drive(net: &mut Network<()>, q: &mut EventQueue<NetEvent<()>>, obs: &mut Drops, until: SimTime) -> Run {
    let mut r = Run::default();
    while q.peek_time().is_some_and(|t| t < until) {
        let (now, ev) = q.pop().unwrap();
        match ev {
            NetEvent::Arrive(..) => r.arrivals += 1,
            NetEvent::TxEnd(_) => r.tx_ends += 1,
            NetEvent::TxDone(_) => r.tx_dones += 1,
            _ => {}
        }
        let mut pending = Vec::new();
        if let Some(p) = net.handle(now, ev, &mut |t, e| pending.push((t, e)), obs) {
            r.delivered.push((now, p.uid()));
        }
        pending.into_iter().for_each(|(t, e)| q.push(t, e));
    }
    r
}

/// A router and a host joined by one link of `cfg`; channel 0 is the router's output.
fn one_link(cfg: ChannelConfig) -> (Network<()>, NodeId, NodeId) {
    let mut b = NetworkBuilder::new();
    let r = b.node("r", NodeKind::Router).unwrap();
    let d = b.node("d", NodeKind::Host).unwrap();
    b.link("l", r, d, cfg.clone(), cfg).unwrap();
    (b.build(&RngStreams::new(1)), r, d)
}

/// Offers packets of 1000 B from `r` to `d` into channel 0 at `now`.
fn offer(net: &mut Network<()>, q: &mut EventQueue<NetEvent<()>>, obs: &mut Drops, now: SimTime, n: usize) {
    let (r, d) = (net.find("r").unwrap(), net.find("d").unwrap());
    for _ in 0..n {
        let p = net.packet(r, d, 0, 1000, ());
        let mut pending = Vec::new();
        net.chans[0].enqueue(now, p, &mut |t, e| pending.push((t, e)), obs);
        pending.into_iter().for_each(|(t, e)| q.push(t, e));
    }
}

#[test]
fn a_frame_on_idle_links_costs_one_event_per_hop() {
    // s -> r1 -> r2 -> d, every link idle: three arrivals and nothing else, at the exact time
    // (1287 B frames: 2 x (10.296 us + 5 us) on the 1 Gbit/s access links, 102.96 us + 1 ms on
    // the 100 Mbit/s bottleneck).
    let mut b = NetworkBuilder::new();
    let s = b.node("s", NodeKind::Host).unwrap();
    let r1 = b.node("r1", NodeKind::Router).unwrap();
    let r2 = b.node("r2", NodeKind::Router).unwrap();
    let d = b.node("d", NodeKind::Host).unwrap();
    let acc = ChannelConfig::new(Rate::gbps(1), SimDuration::from_micros(5), 1500);
    let bn = ChannelConfig::new(Rate::mbps(100), SimDuration::from_millis(1), 1500);
    b.link("a1", s, r1, acc.clone(), acc.clone()).unwrap();
    b.link("bn", r1, r2, bn.clone(), bn).unwrap();
    b.link("a2", r2, d, acc.clone(), acc).unwrap();
    let mut net: Network<()> = b.build(&RngStreams::new(1));
    let (mut q, mut obs) = (EventQueue::new(), Drops::default());
    let p = net.packet(s, d, 0, 1280, ());
    let mut pending = Vec::new();
    net.send(SimTime::ZERO, p, &mut |t, e| pending.push((t, e)), &mut obs);
    pending.into_iter().for_each(|(t, e)| q.push(t, e));
    let r = drive(&mut net, &mut q, &mut obs, SimTime(u64::MAX));
    let expect = 2 * (10_296_000 + 5_000_000) + 102_960_000 + 1_000_000_000u64;
    assert_eq!(r.delivered, vec![(SimTime(expect), 1)]);
    assert_eq!((r.arrivals, r.tx_ends, r.tx_dones), (3, 0, 0));
    assert!(net.chans.iter().all(|c| c.stats.sent_packets == c.stats.delivered_packets));
}

#[test]
fn waiting_packets_wake_the_link_once_each_and_keep_their_times() {
    // Four 1000 B packets at once on an idle 10 Mbit/s, 1 ms link: back to back, the k-th
    // arriving at k x 805.6 us + 1 ms; one end of transmission per packet that waited (three),
    // never two pending on the link at once.
    let (mut net, _, _) = one_link(ChannelConfig::new(Rate::mbps(10), SimDuration::from_millis(1), 1500));
    let (mut q, mut obs) = (EventQueue::new(), Drops::default());
    offer(&mut net, &mut q, &mut obs, SimTime::ZERO, 4);
    let mut ends_pending = 0;
    let mut delivered = Vec::new();
    let mut ends = 0;
    while let Some((now, ev)) = q.pop() {
        if matches!(ev, NetEvent::TxEnd(_)) {
            ends_pending -= 1;
            ends += 1;
        }
        let mut pending = Vec::new();
        if let Some(p) = net.handle(now, ev, &mut |t, e| pending.push((t, e)), &mut obs) {
            delivered.push(now.0);
            assert_eq!(p.uid(), delivered.len() as u64);
        }
        for (t, e) in pending {
            ends_pending += matches!(e, NetEvent::TxEnd(_)) as i32;
            q.push(t, e);
        }
        assert!(ends_pending <= 1, "{ends_pending} ends of transmission pending on one link");
    }
    let want: Vec<u64> = (1..=4).map(|k| k * TX_1000B_10M + 1_000_000_000).collect();
    assert_eq!((delivered, ends), (want, 3));
    assert_eq!(net.chans[0].stats.sent_packets, 4);
    assert_eq!(net.chans[0].stats.max_queue_packets, 3);
}

#[test]
fn a_lost_frame_is_dropped_when_its_serialization_ends() {
    // The first frame is lost (periodic loss, first = 0): its drop is reported at 805.6 us, the
    // end of its serialization, it is held until then, and the second frame starts only then.
    let mut cfg = ChannelConfig::new(Rate::mbps(10), SimDuration::ZERO, 1500);
    cfg.loss = LossModel::Periodic { every: 10, first: 0 };
    let (mut net, _, _) = one_link(cfg);
    let (mut q, mut obs) = (EventQueue::new(), Drops::default());
    offer(&mut net, &mut q, &mut obs, SimTime::ZERO, 2);
    assert_eq!(net.chans[0].held_packets(), 2);
    assert!(obs.0.is_empty());
    let r = drive(&mut net, &mut q, &mut obs, SimTime(u64::MAX));
    assert_eq!(obs.0, vec![(SimTime(TX_1000B_10M), 0, DropReason::Loss)]);
    assert_eq!(r.delivered, vec![(SimTime(2 * TX_1000B_10M), 2)]);
    assert_eq!(net.chans[0].stats.sent_packets, 2);
    assert_eq!(net.chans[0].held_packets(), 0);
}

#[test]
fn a_link_that_may_go_down_decides_at_the_end_of_each_frame() {
    // Down from 400 us while the first frame is on the wire, up again at 1 ms: the frame is lost
    // (Down) at its end, 805.6 us; the second waited and starts at 1 ms, when the link is up.
    // A third frame on the wire across a down period that ends before the frame does survives.
    let (mut net, _, _) = one_link(ChannelConfig::new(Rate::mbps(10), SimDuration::ZERO, 1500));
    net.chans[0].may_go_down();
    let (mut q, mut obs) = (EventQueue::new(), Drops::default());
    offer(&mut net, &mut q, &mut obs, SimTime::ZERO, 2);
    q.push(SimTime(400_000_000), NetEvent::SetUp(ChanId(0), false));
    q.push(SimTime(1_000_000_000), NetEvent::SetUp(ChanId(0), true));
    let t3 = SimTime(3_000_000_000);
    q.push(t3 + SimDuration(100_000_000), NetEvent::SetUp(ChanId(0), false));
    q.push(t3 + SimDuration(200_000_000), NetEvent::SetUp(ChanId(0), true));
    let r = drive(&mut net, &mut q, &mut obs, t3);
    offer(&mut net, &mut q, &mut obs, t3, 1);
    let r3 = drive(&mut net, &mut q, &mut obs, SimTime(u64::MAX));
    assert_eq!(obs.0, vec![(SimTime(TX_1000B_10M), 0, DropReason::Down)]);
    assert_eq!(r.delivered, vec![(SimTime(1_000_000_000 + TX_1000B_10M), 2)]);
    assert_eq!(r3.delivered, vec![(t3 + SimDuration(TX_1000B_10M), 3)]);
    // One end of transmission per frame on such a link.
    assert_eq!(r.tx_dones + r3.tx_dones, 3);
}

#[test]
#[should_panic(expected = "may_go_down")]
fn a_link_goes_down_only_if_told_it_may() {
    let (mut net, _, _) = one_link(ChannelConfig::new(Rate::mbps(10), SimDuration::ZERO, 1500));
    let (mut q, mut obs) = (EventQueue::new(), Drops::default());
    q.push(SimTime(1), NetEvent::SetUp(ChanId(0), false));
    drive(&mut net, &mut q, &mut obs, SimTime(u64::MAX));
}

#[test]
fn a_frame_on_the_wire_at_the_end_is_not_counted_as_serialized() {
    // Two frames back to back, the run ends at 1 ms: the first was serialized (805.6 us), the
    // second is on the wire (until 1611.2 us) and held; ending exactly at a frame's end, that
    // frame is not counted either (events at the end time are not processed).
    for (end, serialized) in [(1_000_000_000u64, 1u64), (TX_1000B_10M, 0), (2 * TX_1000B_10M + 1, 2)] {
        let (mut net, _, _) = one_link(ChannelConfig::new(Rate::mbps(10), SimDuration::ZERO, 1500));
        let (mut q, mut obs) = (EventQueue::new(), Drops::default());
        offer(&mut net, &mut q, &mut obs, SimTime::ZERO, 2);
        drive(&mut net, &mut q, &mut obs, SimTime(end));
        net.finish(SimTime(end));
        let st = &net.chans[0].stats;
        assert_eq!(st.sent_packets, serialized, "end {end}");
        assert_eq!(st.enqueued_packets, st.delivered_packets + net.chans[0].held_packets(), "end {end}");
    }
}
