//! DualPI2's L and C columns in the `queues` table, against a timeline worked out by hand, and
//! their absence from runs without a dual queue.

use super::*;
use serde_json::{json, Value};

const BOTTLENECK: &str = "bottleneck:router1->router2";

/// Two UDP sources through a DualPI2 bottleneck whose frame time is exactly 1 ms: 965 B of
/// payload is 993 B of IP (+ 8 UDP + 20 IP) and 1000 B on the wire (+ 7 PPP), 8000 bits at
/// 8 Mbit/s. "l" (ECT(1)) sends at 100.0, 100.4, ..., 101.6 ms, "c" (Not-ECT) at 100.1, 100.5,
/// ..., 101.7 ms; both cross equal access links, so they reach the bottleneck in that order
/// with those gaps. PI2's gains are 0, so p' stays 0: only the L step marks, and only C's
/// room (7 packets) drops.
fn scenario(queue: Value) -> Value {
    let udp = |name: &str, src: &str, dst: &str, ecn: &str, start: &str, stop: &str| {
        json!({"name": name, "kind": "udp", "src": src, "dst": dst, "size": "965B", "interval": "0.4ms",
               "ecn": ecn, "start": start, "stop": stop})
    };
    json!({
        "run": {"duration": "1s", "record": {"queues": ["bottleneck"]}},
        "dumbbell": {"pairs": 2, "mtu": "1500B",
                     "bottleneck": {"rate": "8Mbps", "delay": "1ms", "queue": queue},
                     "access": {"rate": "1Gbps", "delay": "10us"}},
        "flows": [udp("l", "sender1", "receiver1", "ect1", "100ms", "101.9ms"),
                  udp("c", "sender2", "receiver2", "not-ect", "100.1ms", "102ms")]
    })
}

#[test]
fn dualpi2_rows_follow_the_hand_timeline() {
    let q = json!({"kind": "dualpi2", "alpha": 0.0, "beta": 0.0, "packets": 7});
    let o = go(&scenario(q), None);
    let rows: Vec<usize> = (0..col_f64(&o, "queues", "t_s").len())
        .filter(|&i| col_str(&o, "queues", "queue")[i] == BOTTLENECK)
        .collect();
    let ints = |c: &str| rows.iter().map(|&i| col_i64(&o, "queues", c)[i]).collect::<Vec<_>>();
    let ms =
        |c: &str| rows.iter().map(|&i| (col_f64(&o, "queues", c)[i] * 1e6).round() / 1e3).collect::<Vec<_>>();
    // Relative to "l"'s first arrival (time 0): l1 finds the link idle and goes straight to
    // the wire until 1 ms. Arrivals: c1 .1, l2 .4, c2 .5, l3 .8, c3 .9; at 1 the TS-FIFO
    // serves L (C's head counts 50 ms later): l2 waited .6 ms, under the 1 ms step. l4 1.2,
    // c4 1.3, l5 1.6; c5 at 1.7 finds 7 packets and is refused (c_drops 1, no row: the length
    // did not change). At 2: l3 (1.2 ms, 3 in L: marked), 3: l4 (1.8 ms, 2 in L: marked), 4: l5
    // (2.4 ms but alone in L, at most th_len = 1: not marked), then C: c1..c4 waited 4.9, 5.5,
    // 6.1, 6.7 ms.
    let l_packets = [0, 1, 1, 2, 2, 1, 2, 2, 3, 2, 1, 0, 0, 0, 0, 0];
    let c_packets = [1, 1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 3, 2, 1, 0];
    assert_eq!(ints("l_packets"), l_packets);
    assert_eq!(ints("c_packets"), c_packets);
    let total: Vec<i64> = l_packets.iter().zip(c_packets).map(|(l, c)| l + c).collect();
    assert_eq!(ints("packets"), total);
    assert_eq!(ints("l_bytes"), l_packets.map(|n| n * 993));
    assert_eq!(ints("c_bytes"), c_packets.map(|n| n * 993));
    assert_eq!(
        ms("l_sojourn_s"),
        [0., 0., 0., 0., 0., 0.6, 0.6, 0.6, 0.6, 1.2, 1.8, 2.4, 2.4, 2.4, 2.4, 2.4]
    );
    assert_eq!(ms("c_sojourn_s"), [0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 0., 4.9, 5.5, 6.1, 6.7]);
    assert_eq!(ints("l_marks"), [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2, 2]);
    assert_eq!(ints("c_marks"), [0; 16]);
    assert_eq!(ints("l_drops"), [0; 16]);
    assert_eq!(ints("c_drops"), [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1]);
    // The queue's own totals agree: two marks, one overflow drop.
    let tq = &o.totals["queues"][BOTTLENECK];
    assert_eq!(
        (tq["ecn_marked_packets"].as_u64(), tq["overflow_dropped_packets"].as_u64()),
        (Some(2), Some(1))
    );
}

#[test]
fn only_runs_recording_a_dual_queue_have_the_columns() {
    let has = |o: &RunOutput| o.column("queues", "l_packets").is_some();
    let dual = json!({"kind": "dualpi2", "alpha": 0.0, "beta": 0.0, "packets": 7});
    let mut not_recorded = scenario(dual);
    not_recorded["run"]["record"]["queues"] = json!(["access1"]);
    assert!(!has(&go(&not_recorded, None)));
    let droptail = go(&scenario(json!({"kind": "droptail", "packets": 7})), None);
    assert!(!has(&droptail));
    let names: Vec<&str> = droptail.tables[2].1.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["t_s", "queue", "packets", "bytes"]);
}
