//! UDP sources over dumbbells, checked against hand computations: delays to the picosecond,
//! bottleneck goodput, loss counts, jitter order, link down/up and rate spikes.

use super::*;
use serde_json::json;

fn cbr(
    rate: &str,
    queue: serde_json::Value,
    bottleneck_extra: serde_json::Value,
    duration: &str,
) -> serde_json::Value {
    let mut bn = json!({"rate": "10Mbps", "delay": "10ms", "queue": queue});
    if let (Some(b), Some(x)) = (bn.as_object_mut(), bottleneck_extra.as_object()) {
        for (k, v) in x {
            b.insert(k.clone(), v.clone());
        }
    }
    json!({
        "run": {"duration": duration, "record": {"packets": ["cbr"]}},
        "dumbbell": {"pairs": 1, "mtu": "1500B", "bottleneck": bn, "access": {"rate": "1Gbps", "delay": "1ms"}},
        "flows": [{"name": "cbr", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1472B", "rate": rate}]
    })
}

#[test]
fn single_packet_delay_is_sum_of_serialization_and_propagation() {
    // One 1000 B datagram: IP 1028 B, frame 1035 B.
    let sc = json!({
        "run": {"duration": "1s", "record": {"packets": ["one"]}},
        "dumbbell": {"pairs": 1, "mtu": "1500B",
                     "bottleneck": {"rate": "100Mbps", "delay": "1ms"},
                     "access": {"rate": "1Gbps", "delay": "5us"}},
        "flows": [{"name": "one", "kind": "udp", "src": "sender1", "dst": "receiver1",
                   "size": "1000B", "interval": "10s", "start": "0.1s"}]
    });
    let o = go(&sc, None);
    let t = col_i64(&o, "packets", "t_ps");
    let ev = col_str(&o, "packets", "event");
    assert_eq!(ev, &["send".to_string(), "recv".to_string()]);
    // access 1 Gbit/s: 1035*8/1e9 s = 8.28 us (x2), bottleneck 100 Mbit/s: 82.8 us,
    // propagation 5 us + 1 ms + 5 us.
    let expect = 2 * 8_280_000 + 82_800_000 + 2 * 5_000_000 + 1_000_000_000i64;
    assert_eq!(t[1] - t[0], expect);
    assert_eq!(t[0], 100_000_000_000);
}

#[test]
fn cbr_overload_delivers_bottleneck_rate_times_payload_fraction() {
    let o = go(&cbr("12Mbps", json!({"packets": 50}), json!({}), "20s"), None);
    let t = col_f64(&o, "flows", "t_s");
    let d = col_i64(&o, "flows", "delivered_bytes");
    // Steady state: from 5 s to 20 s (the queue fills within the first second).
    let bytes: i64 = t.iter().zip(d).filter(|(t, _)| **t >= 5.0).map(|(_, d)| *d).sum();
    let got = bytes as f64 * 8.0 / 15.0;
    // 1472 B payload in a 1507 B frame (1472 + 8 + 20 + 7).
    let expect = 10e6 * 1472.0 / 1507.0;
    assert!((got / expect - 1.0).abs() < 0.001, "got {got}, expect {expect}");

    // The bottleneck queue sits at its capacity (50 packets) after it fills.
    let qt = col_f64(&o, "queues", "t_s");
    let qn = col_i64(&o, "queues", "packets");
    let qname = col_str(&o, "queues", "queue");
    let late: Vec<i64> = qt
        .iter()
        .zip(qn)
        .zip(qname)
        .filter(|((t, _), q)| **t > 5.0 && q.starts_with("bottleneck:router1"))
        .map(|((_, n), _)| *n)
        .collect();
    assert!(!late.is_empty());
    assert!(late.iter().all(|&n| (49..=50).contains(&n)), "queue left capacity: {:?}", &late[..10]);

    // Packets balance exactly: sent = delivered + dropped + still held by the network.
    let f = &o.totals["flows"]["cbr"];
    let sent = f["packets_sent"].as_u64().unwrap();
    let deliv = f["packets_delivered"].as_u64().unwrap();
    let drop = f["packets_dropped"].as_u64().unwrap();
    let held = o.meta["packets_in_network_at_end"].as_u64().unwrap();
    assert!(drop > 0);
    assert_eq!(sent, deliv + drop + held, "sent {sent} delivered {deliv} dropped {drop} held {held}");
}

#[test]
fn periodic_loss_drops_exactly_every_nth() {
    let o = go(
        &cbr(
            "5Mbps",
            json!({"packets": 100}),
            json!({"forward": {"loss": {"kind": "periodic", "every": 9}}}),
            "5s",
        ),
        None,
    );
    let drop = o.totals["flows"]["cbr"]["packets_dropped"].as_u64().unwrap();
    let ser = o.totals["links"]["bottleneck:router1->router2"]["frames_serialized"].as_u64().unwrap();
    // Of the frames serialized on the bottleneck, exactly every 10th is lost.
    assert!(drop > 100);
    assert_eq!(drop, ser / 10, "serialized {ser} dropped {drop}");
    let reasons = col_str(&o, "drops", "reason");
    assert!(reasons.iter().all(|r| r == "loss"));
}

#[test]
fn bernoulli_loss_within_three_sigma() {
    let p = 0.01;
    let o = go(
        &cbr(
            "9Mbps",
            json!({"packets": 1000}),
            json!({"forward": {"loss": {"kind": "bernoulli", "p": p}}}),
            "60s",
        ),
        Some(3),
    );
    let f = &o.totals["flows"]["cbr"];
    let sent = f["packets_sent"].as_u64().unwrap() as f64;
    let drop = f["packets_dropped"].as_u64().unwrap() as f64;
    let n = sent;
    let sigma = (n * p * (1.0 - p)).sqrt();
    assert!(
        (drop - n * p).abs() < 3.0 * sigma,
        "dropped {drop} of {n}, expected {} +- {}",
        n * p,
        3.0 * sigma
    );
}

#[test]
fn same_seed_same_results_different_seed_differs() {
    let sc = json!({
        "run": {"duration": "5s"},
        "dumbbell": {"pairs": 2, "bottleneck": {"rate": "10Mbps", "delay": "5ms", "queue": {"packets": 20},
                      "jitter": {"max": "1ms"}},
                     "access": {"rate": "100Mbps"}},
        "flows": [
            {"name": "a", "kind": "udp", "src": "sender1", "dst": "receiver1",
             "size": {"dist": "uniform", "min": "100B", "max": "1400B"}, "interval": {"dist": "exponential", "mean": "1ms"}},
            {"name": "b", "kind": "onoff", "src": "sender2", "dst": "receiver2", "size": "1000B", "rate": "8Mbps",
             "on": {"dist": "exponential", "mean": "200ms"}, "off": {"dist": "exponential", "mean": "300ms"}}
        ]
    });
    let a = go(&sc, Some(5));
    let b = go(&sc, Some(5));
    let c = go(&sc, Some(6));
    // Compared as text: an empty bin's delay statistics are NaN, which is never == itself.
    let text = |o: &quicksim_scenario::output::RunOutput| format!("{:?}", o.tables);
    assert_eq!(text(&a), text(&b));
    assert_eq!(a.meta["trace_hash"], b.meta["trace_hash"]);
    assert_ne!(a.meta["trace_hash"], c.meta["trace_hash"]);
    assert_ne!(text(&a), text(&c));
}

#[test]
fn spikes_reduce_the_rate() {
    // Rate drops to 10 % for 200 ms every second: a saturating CBR gets about
    // 0.8 x 10 + 0.2 x 1 = 8.2 Mbit/s x payload fraction.
    let o = go(
        &cbr(
            "12Mbps",
            json!({"packets": 50}),
            json!({"forward": {"spikes": {"period": "1s", "duration": "200ms", "fraction": 0.1}}}),
            "20s",
        ),
        None,
    );
    let t = col_f64(&o, "flows", "t_s");
    let d = col_i64(&o, "flows", "delivered_bytes");
    let bytes: i64 = t.iter().zip(d).filter(|(t, _)| **t >= 5.0).map(|(_, d)| *d).sum();
    let got = bytes as f64 * 8.0 / 15.0;
    let expect = 8.2e6 * 1472.0 / 1507.0;
    // Tolerance 1 %: frame boundaries straddle the rate changes.
    assert!((got / expect - 1.0).abs() < 0.01, "got {got}, expect {expect}");
}

#[test]
fn link_down_drops_and_recovers() {
    let o = go(
        &cbr(
            "5Mbps",
            json!({"packets": 1000}),
            json!({"forward": {"down": [{"from": "2s", "to": "3s"}]}}),
            "5s",
        ),
        None,
    );
    let t = col_f64(&o, "flows", "t_s");
    let d = col_i64(&o, "flows", "delivered_bytes");
    // Bins 2.0-2.5 and 2.5-3.0 start after the last pre-outage frames arrive (10 ms later).
    for (ti, di) in t.iter().zip(d) {
        if *ti >= 2.0 && *ti < 3.0 && *ti > 2.01 {
            assert_eq!(*di, 0, "delivery at {ti} while the link was down");
        }
        if *ti >= 3.5 {
            assert!(*di > 0, "no delivery at {ti} after the link came back");
        }
    }
    let reasons = col_str(&o, "drops", "reason");
    assert!(reasons.iter().all(|r| r == "down"));
    // 1 s of 5 Mbit/s of 1472 B payloads: about 425 datagrams lost to the outage.
    assert!((reasons.len() as i64 - 425).abs() <= 2, "{}", reasons.len());
}

#[test]
fn jitter_keeps_fifo_order_unless_reordering_is_allowed() {
    let sc = |reorder: bool| {
        json!({
            "run": {"duration": "2s", "record": {"packets": ["j"]}},
            "dumbbell": {"pairs": 1, "bottleneck": {"rate": "100Mbps", "delay": "5ms",
                          "jitter": {"max": "4ms", "reorder": reorder}},
                         "access": {"rate": "1Gbps"}},
            "flows": [{"name": "j", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "500B", "rate": "20Mbps"}]
        })
    };
    for (reorder, expect_reordered) in [(false, false), (true, true)] {
        let o = go(&sc(reorder), None);
        let ev = col_str(&o, "packets", "event");
        let uid = col_i64(&o, "packets", "uid");
        // Receptions in arrival order; a packet sent later (larger uid) arriving before an
        // earlier one is a reordering.
        let recv: Vec<i64> = uid.iter().zip(ev).filter(|(_, e)| *e == "recv").map(|(u, _)| *u).collect();
        assert!(recv.len() > 5000);
        let inversions = recv.windows(2).filter(|w| w[1] < w[0]).count();
        assert_eq!(inversions > 0, expect_reordered, "reorder={reorder}: {inversions} inversions");
    }
}

#[test]
fn hold_limit_bounds_the_packets_in_the_delay_line() {
    // netem's `limit`: at most 100 packets held by the 1 Gbit/s, 10 ms direction, propagating
    // ones included. A 1000 B datagram (IP 1028 B, frame 1035 B) is held for its serialization
    // (8.28 us) plus 10 ms, so the direction carries at most 100 packets per 10.00828 ms, and at
    // least 100 per (10.00828 ms + one sending interval): a freed place waits for the next
    // datagram, at most 80 us (100 Mbit/s of 1000 B payloads) later.
    let sc = |hold: Option<u64>| {
        let mut bn = json!({"rate": "1Gbps", "delay": "10ms"});
        if let Some(n) = hold {
            bn["hold_limit"] = json!(n);
        }
        json!({
            "run": {"duration": "10s"},
            "dumbbell": {"pairs": 1, "mtu": "1500B", "bottleneck": bn, "access": {"rate": "10Gbps", "delay": "0s"}},
            "flows": [{"name": "cbr", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1000B", "rate": "100Mbps"}]
        })
    };
    let per_s = |o: &RunOutput| {
        let t = col_f64(o, "flows", "t_s");
        let d = col_i64(o, "flows", "delivered_bytes");
        let bytes: i64 = t.iter().zip(d).filter(|(t, _)| **t >= 2.0).map(|(_, d)| *d).sum();
        bytes as f64 / 1000.0 / 8.0
    };
    let held = 10e-3 + 8.28e-6;
    let o = go(&sc(Some(100)), None);
    let got = per_s(&o);
    let (lo, hi) = (100.0 / (held + 80e-6), 100.0 / held);
    assert!(lo <= got && got <= hi, "{got} packets/s, expected [{lo}, {hi}]");
    let reasons = col_str(&o, "drops", "reason");
    assert!(!reasons.is_empty() && reasons.iter().all(|r| r == "overflow"));
    // Without the limit the direction carries all 12 500 datagrams per second.
    let free = go(&sc(None), None);
    assert!((per_s(&free) - 12_500.0).abs() < 1.0, "{}", per_s(&free));
    assert!(col_str(&free, "drops", "reason").is_empty());
}
