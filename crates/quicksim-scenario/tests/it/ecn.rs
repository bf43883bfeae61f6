//! ECN end to end: a long-lived QUIC or TCP flow through a bottleneck whose queue marks CE
//! (ECN-capable packets) or drops (the others) once it holds K packets, DCTCP's step marking,
//! registered at run time (no built-in discipline marks yet). With ECN on, the flow sees marks
//! and no drops; with ECN off the same queue drops instead; the steady-state goodput of the
//! two agrees within 2 %.

use super::*;
use quicksim_net::{DropReason, Packet, Qdisc, QdiscCtx, Queued, Verdict};
use quicksim_scenario::plugins::Plugins;
use serde_json::json;

/// FIFO of at most `limit` packets that marks (or, for a Not-ECT packet, drops) every packet
/// offered while it holds `k` or more.
struct StepMark<P> {
    k: usize,
    limit: usize,
    q: Fifo<P>,
}

impl<P> Qdisc<P> for StepMark<P> {
    fn enqueue(&mut self, cx: &mut QdiscCtx<'_, P>, p: Queued<P>) -> Verdict<P> {
        let mut pkt = p.pkt;
        if self.q.packets() >= self.limit {
            return Verdict::Dropped(pkt, DropReason::Overflow);
        }
        if self.q.packets() >= self.k && !cx.mark(&mut pkt) {
            return Verdict::Dropped(pkt, DropReason::Aqm);
        }
        self.q.push(pkt);
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
    fn uses_timers(&self) -> bool {
        false
    }
}

fn plugins() -> Plugins {
    qdisc_plugins("stepmark", |cfg: &serde_json::Value| {
        let n = |k: &str| cfg.get(k).and_then(|v| v.as_u64()).ok_or(format!("`{k}` (packets) is missing"));
        Ok(StepMark { k: n("k")? as usize, limit: n("limit")? as usize, q: Fifo::default() })
    })
}

const BOTTLENECK: &str = "bottleneck:router1->router2";
/// Steady state: from 5 s (slow start and the first reductions are over) to the end at 20 s.
const T0: f64 = 5.0;

/// One saturating `kind` flow over 10 Mbit/s, 10 ms one way (RTT 20 ms, BDP 25 kB, about 17
/// full packets); marking threshold K = 40 packets (above the BDP, so a halved window still
/// keeps the link busy), hard limit 1000.
fn run_flow(kind: &str, ecn: bool) -> RunOutput {
    let sc = json!({
        "run": {"duration": "20s"},
        "dumbbell": {"pairs": 1, "mtu": "1500B",
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms",
                                    "queue": {"kind": "stepmark", "k": 40, "limit": 1000}},
                     "access": {"rate": "1Gbps", "delay": "0s"}},
        "quic": {"ecn": ecn},
        "tcp": {"ecn": ecn},
        "flows": [{"name": "f", "kind": kind, "src": "sender1", "dst": "receiver1"}]
    });
    run_plugins(&sc, &plugins()).unwrap_or_else(|e| panic!("scenario failed: {e}"))
}

/// Delivered payload bits per second over [T0, end) from the `flows` table's bins.
fn goodput(o: &RunOutput) -> f64 {
    let t = col_f64(o, "flows", "t_s");
    let d = col_i64(o, "flows", "delivered_bytes");
    let bytes: i64 = t.iter().zip(d).filter(|(t, _)| **t >= T0).map(|(_, d)| *d).sum();
    bytes as f64 * 8.0 / (20.0 - T0)
}

/// Drops of the flow's packets after T0.
fn drops_after_t0(o: &RunOutput) -> usize {
    col_f64(o, "drops", "t_s").iter().filter(|t| **t >= T0).count()
}

fn check(kind: &str, payload_per_frame: f64) {
    let (marked, dropped) = (run_flow(kind, true), run_flow(kind, false));
    let q = |o: &RunOutput, k: &str| o.totals["queues"][BOTTLENECK][k].as_u64().unwrap();
    // With ECN: marks and not one drop, at steady state or before.
    assert!(q(&marked, "ecn_marked_packets") > 100, "{}", marked.totals["queues"]);
    assert_eq!(q(&marked, "dropped_packets"), 0);
    assert_eq!(drops_after_t0(&marked), 0);
    let e = &marked.totals["flows"]["f"][kind]["ecn"];
    assert_eq!(e["state"], "capable", "{e}");
    // Every mark the queue made reached the receiver and was counted once.
    assert_eq!(e["ce_marks"].as_u64(), Some(q(&marked, "ecn_marked_packets")), "{e}");
    let events = e["ecn_congestion_events"].as_u64().unwrap();
    assert!(events > 10 && events < e["ce_marks"].as_u64().unwrap(), "{e}");
    // The conn table's last row carries the same counts.
    assert_eq!(col_i64(&marked, "conn", "ecn_events").last().copied(), Some(events as i64));
    // Without ECN the same queue drops instead (and marks nothing).
    assert_eq!(q(&dropped, "ecn_marked_packets"), 0);
    assert!(drops_after_t0(&dropped) > 0);
    assert!(dropped.totals["flows"]["f"][kind].get("ecn").is_none());
    // Both keep the link busy: goodput near 10 Mbit/s times payload per frame on the wire.
    let (gm, gd) = (goodput(&marked), goodput(&dropped));
    let ideal = 10e6 * payload_per_frame;
    println!(
        "{kind}: goodput with marks {gm:.0} b/s, with drops {gd:.0} b/s ({:+.3} %), ideal {ideal:.0}",
        (gm / gd - 1.0) * 100.0
    );
    assert!((gm / gd - 1.0).abs() < 0.02, "{gm} vs {gd}");
    // (0.1 % above: the bins in the window may hold a packet that arrived just before it.)
    assert!(gm > 0.97 * ideal && gm < 1.001 * ideal, "{gm} vs {ideal}");
}

/// QUIC: 1472 B packets (MTU − 28) with a 13 B header and an 8 B STREAM header carry 1451 B
/// of payload in a 1507 B frame (IP + UDP + 7 B PPP).
#[test]
fn quic_marks_instead_of_drops_at_the_same_goodput() {
    check("quic", 1451.0 / 1507.0);
}

/// TCP: 1448 B of payload (MSS 1460 − 12 B timestamps) in a 1507 B frame (20 B IP, 32 B TCP
/// header, 7 B PPP).
#[test]
fn tcp_marks_instead_of_drops_at_the_same_goodput() {
    check("tcp", 1448.0 / 1507.0);
}
