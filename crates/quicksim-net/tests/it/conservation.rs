//! Property: whatever the packets, queue limits, hold limits, loss (Bernoulli, periodic,
//! Gilbert-Elliott, drop lists), jitter and link model (fixed rate or a trace), every channel
//! accounts for every packet it was offered (offered = delivered + dropped + held), never holds
//! more than its hold limit, time never goes back, and without reordering a path delivers in
//! sending order.

use proptest::prelude::*;
use quicksim_engine::{EventQueue, Rate, RngStreams, SimDuration, SimTime};
use quicksim_net::model::{trace, LinkModelConfig};
use quicksim_net::qdisc::droptail;
use quicksim_net::{
    ChanId, ChannelConfig, DropList, DropReason, GilbertElliott, Jitter, LossModel, NetEvent, NetObserver,
    Network, NetworkBuilder, NodeKind, Packet, QdiscConfig,
};

/// Counts drops per channel as the observer sees them.
struct Drops(Vec<u64>);
impl NetObserver<()> for Drops {
    fn dropped(&mut self, _now: SimTime, chan: ChanId, _p: &Packet<()>, _why: DropReason) {
        self.0[chan.0 as usize] += 1;
    }
}

#[derive(Debug, Clone)]
struct Case {
    /// (gap before sending in us, IP bytes) per packet.
    packets: Vec<(u64, u32)>,
    limit_packets: Option<u64>,
    limit_bytes: Option<u64>,
    loss: LossModel,
    jitter: Option<Jitter>,
    hold_limit: Option<u64>,
    bottleneck_mbps: u64,
    seed: u64,
    trace: Option<trace::Config>,
    /// The bottleneck's drop list (every packet).
    drop_list: Vec<u64>,
}

fn case() -> impl Strategy<Value = Case> {
    let loss = prop_oneof![
        Just(LossModel::None),
        (0.0..0.5f64).prop_map(LossModel::Bernoulli),
        (1u64..6, 0u64..6).prop_map(|(every, first)| LossModel::Periodic { every, first: first.min(every) }),
        (0.0..1.0f64, 0.0..1.0f64, 0.0..0.2f64, 0.0..1.0f64).prop_map(|(p, r, loss_good, loss_bad)| {
            LossModel::GilbertElliott(GilbertElliott { p, r, loss_good, loss_bad })
        }),
    ];
    // A trace of 1..20 opportunities at 0..5 ms apart (the last above 0), 500..2000 B each.
    let trace = proptest::option::of((proptest::collection::vec(0u32..5, 1..20), 500u64..2000).prop_map(
        |(gaps, opportunity_bytes)| {
            let mut t = 0;
            let mut ms: Vec<u32> = gaps
                .iter()
                .map(|g| {
                    t += g;
                    t
                })
                .collect();
            *ms.last_mut().unwrap() += 1;
            trace::Config { ms: ms.into(), opportunity_bytes }
        },
    ));
    let drops = proptest::collection::vec(0u64..300, 0..10);
    let jitter = proptest::option::of(
        (0u64..3000, any::<bool>())
            .prop_map(|(us, reorder)| Jitter { max: SimDuration::from_micros(us), reorder }),
    );
    (
        proptest::collection::vec((0u64..400, 28u32..=1500), 1..300),
        proptest::option::of(1u64..20),
        proptest::option::of(1500u64..20_000),
        loss,
        jitter,
        proptest::option::of(1u64..30),
        1u64..50,
        any::<u64>(),
        trace,
        drops,
    )
        .prop_map(
            |(
                packets,
                limit_packets,
                limit_bytes,
                loss,
                jitter,
                hold_limit,
                bottleneck_mbps,
                seed,
                trace,
                drops,
            )| Case {
                packets,
                limit_packets,
                limit_bytes,
                loss,
                jitter,
                hold_limit,
                bottleneck_mbps,
                seed,
                trace,
                drop_list: {
                    let mut d = drops;
                    d.sort_unstable();
                    d.dedup();
                    d
                },
            },
        )
}

/// s -> r1 -> r2 -> d; the r1 -> r2 bottleneck has the case's queue, loss and jitter.
fn network(c: &Case) -> Network<()> {
    let mut b = NetworkBuilder::new();
    let s = b.node("s", NodeKind::Host).unwrap();
    let r1 = b.node("r1", NodeKind::Router).unwrap();
    let r2 = b.node("r2", NodeKind::Router).unwrap();
    let d = b.node("d", NodeKind::Host).unwrap();
    let acc = ChannelConfig::new(Rate::mbps(100), SimDuration::from_micros(50), 1500);
    let mut bn = ChannelConfig::new(Rate::mbps(c.bottleneck_mbps), SimDuration::from_millis(2), 1500);
    bn.qdisc = QdiscConfig::DropTail(droptail::Config {
        packets: c.limit_packets,
        bytes: c.limit_bytes.map(quicksim_engine::units::Bytes),
    });
    bn.loss = c.loss.clone();
    bn.jitter = c.jitter;
    bn.hold_limit = c.hold_limit;
    bn.model = c.trace.clone().map(LinkModelConfig::Trace);
    bn.drop_lists = vec![DropList { flow: None, packets: c.drop_list.clone() }];
    b.link("a", s, r1, acc.clone(), acc.clone()).unwrap();
    b.link("bn", r1, r2, bn.clone(), bn).unwrap();
    b.link("e", r2, d, acc.clone(), acc).unwrap();
    b.build(&RngStreams::new(c.seed))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_packet_is_accounted_for(c in case()) {
        let mut net = network(&c);
        let (s, d) = (net.find("s").unwrap(), net.find("d").unwrap());
        let nch = net.chans.len();
        let mut drops = Drops(vec![0; nch]);
        let mut q: EventQueue<Option<NetEvent<()>>> = EventQueue::new();
        // `None` events are sends by the host.
        let mut t = SimTime::ZERO;
        for &(gap, _) in &c.packets {
            t += SimDuration::from_micros(gap);
            q.push(t, None);
        }
        let mut sizes = c.packets.iter().map(|p| p.1);
        let (mut last, mut delivered) = (SimTime::ZERO, Vec::new());
        while let Some((now, ev)) = q.pop() {
            prop_assert!(now >= last, "time went back: {now} after {last}");
            last = now;
            let mut pending = Vec::new();
            let mut sched = |at: SimTime, e| pending.push((at, e));
            match ev {
                None => {
                    let p = net.packet(s, d, 0, sizes.next().unwrap(), ());
                    net.send(now, p, &mut sched, &mut drops);
                }
                Some(e) => {
                    if let Some(p) = net.handle(now, e, &mut sched, &mut drops) {
                        delivered.push(p.uid());
                    }
                }
            }
            for (at, e) in pending {
                prop_assert!(at >= now, "scheduled in the past");
                q.push(at, Some(e));
            }
            // Every channel, at every step: offered = delivered + dropped + held. No packet
            // exceeds the MTU and no link goes down, so every offer is counted as enqueued.
            for (i, ch) in net.chans.iter().enumerate() {
                let st = &ch.stats;
                prop_assert_eq!(st.enqueued_packets, st.delivered_packets + st.dropped_packets + ch.held_packets(),
                    "channel {}", i);
                prop_assert_eq!(st.dropped_packets, drops.0[i]);
                prop_assert!(ch.held_packets() <= ch.cfg.hold_limit.unwrap_or(u64::MAX), "channel {} over its hold limit", i);
            }
        }
        // At the end nothing is held, and the path's hops chain: what a hop delivered is what
        // the next one was offered.
        let path = net.path(s, d);
        let n = c.packets.len() as u64;
        prop_assert_eq!(net.chans[path[0].0 as usize].stats.enqueued_packets, n);
        for w in path.windows(2) {
            let (a, b) = (&net.chans[w[0].0 as usize], &net.chans[w[1].0 as usize]);
            prop_assert_eq!(a.stats.delivered_packets, b.stats.enqueued_packets);
        }
        let lost: u64 = net.chans.iter().map(|ch| ch.stats.dropped_packets).sum();
        prop_assert_eq!(delivered.len() as u64 + lost, n);
        prop_assert!(net.chans.iter().all(|ch| ch.held_packets() == 0 && ch.queue_len() == 0));
        // FIFO links keep the sending order (uids are 1, 2, ... in sending order).
        if !c.jitter.is_some_and(|j| j.reorder) {
            prop_assert!(delivered.windows(2).all(|w| w[0] < w[1]), "reordered: {:?}", delivered);
        }
    }
}
