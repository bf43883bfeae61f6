//! A queue discipline defined in this file and registered at run time: the proof that adding
//! one takes one file and one registration line (`plugins.register_qdisc`, here through the
//! tests' `qdisc_plugins`; the packets are held in the tests' `Fifo`, `support.rs`). The toy is
//! a FIFO that, at every `every`-th packet offered, drops the packet at its head (a head drop,
//! reported through the context) before accepting the new one.

use super::*;
use quicksim_net::{DropReason, Packet, Qdisc, QdiscCtx, Queued, Verdict};
use quicksim_scenario::plugins::Plugins;
use serde_json::json;

struct HeadDropEvery<P> {
    every: u64,
    offered: u64,
    q: Fifo<P>,
}

impl<P> Qdisc<P> for HeadDropEvery<P> {
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, p: Queued<P>) -> Verdict<P> {
        self.offered += 1;
        if self.offered == self.every {
            self.offered = 0;
            match self.q.pop() {
                Some(head) => cx.drop_packet(head, DropReason::Aqm),
                None => return Verdict::Dropped(p.pkt, DropReason::Aqm),
            }
        }
        self.q.push(p.pkt);
        Verdict::Queued
    }
    fn dequeue(&mut self, _cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        self.q.pop()
    }
    fn len_packets(&self) -> usize {
        self.q.packets()
    }
    fn len_bytes(&self) -> u64 {
        self.q.bytes()
    }
}

fn plugins() -> Plugins {
    qdisc_plugins("headdrop", |cfg: &serde_json::Value| {
        let every = cfg.get("every").and_then(|v| v.as_u64()).ok_or("`every` (a packet count) is missing")?;
        Ok(HeadDropEvery { every, offered: 0, q: Fifo::default() })
    })
}

/// 1000 datagrams of 1000 B (1028 B IP, 1035 B frames), one every 100 us from t = 0, into a
/// 10 Mbit/s bottleneck (828 us per frame) with the toy queue.
fn scenario(queue: serde_json::Value) -> serde_json::Value {
    json!({
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 1, "mtu": "1500B",
                     "bottleneck": {"rate": "10Mbps", "delay": "1ms", "queue": queue},
                     "access": {"rate": "1Gbps", "delay": "0s"}},
        "flows": [{"name": "cbr", "kind": "udp", "src": "sender1", "dst": "receiver1",
                   "size": "1000B", "interval": "100us", "stop": "99.95ms"}]
    })
}

fn run_toy(queue: serde_json::Value) -> Result<RunOutput, quicksim_scenario::ScenarioError> {
    run_plugins(&scenario(queue), &plugins())
}

#[test]
fn a_run_time_queue_discipline_drops_exactly_what_it_says() {
    let o = run_toy(json!({"kind": "headdrop", "every": 10})).expect("runs");
    // The first datagram finds the bottleneck idle and goes straight to the wire; the other
    // 999 arrive every 100 us while a frame takes 828 us, so each is offered to the queue,
    // which holds packets from the second offer on: floor(999 / 10) = 99 head drops.
    let f = &o.totals["flows"]["cbr"];
    assert_eq!(f["packets_sent"], 1000);
    assert_eq!(f["packets_dropped"], 99);
    assert_eq!(f["packets_delivered"], 901);
    let q = &o.totals["queues"]["bottleneck:router1->router2"];
    // `enqueued_packets` counts every packet the interface took, the one that bypassed too.
    assert_eq!((q["enqueued_packets"].as_u64(), q["dropped_packets"].as_u64()), (Some(1000), Some(99)));
    let reasons = col_str(&o, "drops", "reason");
    assert_eq!(reasons.len(), 99);
    assert!(reasons.iter().all(|r| r == "aqm"), "{reasons:?}");
    // The 10th offer is datagram 11, sent at 1 ms, at the router 8.28 us later (1035 B at
    // 1 Gbit/s): the queue then holds datagrams 3..10 (frame 2 is on the wire), and 3 goes.
    let t = col_f64(&o, "drops", "t_s");
    assert!((t[0] - 0.001_008_28).abs() < 1e-12, "first drop at {}", t[0]);
}

#[test]
fn a_run_time_discipline_s_errors_and_unknown_kinds_name_the_field() {
    let e = run_toy(json!({"kind": "headdrop"})).unwrap_err().to_string();
    assert_eq!(e, "dumbbell.bottleneck.queue: `every` (a packet count) is missing");
    let e = run_toy(json!({"kind": "codle"})).unwrap_err().to_string();
    assert_eq!(
        e,
        "dumbbell.bottleneck.queue.kind: \"codle\" is not a queue discipline; use one of [\"droptail\", \"red\", \"codel\", \"fq_codel\", \"pie\", \"dualpi2\", \"step\", \"headdrop\"]"
    );
    let mut p = plugins();
    assert!(p
        .register_qdisc("droptail", |_: &serde_json::Value| Err::<HeadDropEvery<_>, _>("".into()))
        .is_err());
}
