//! TCP flows in whole scenarios, against hand computations from the scenario's numbers: the
//! link-bandwidth goodput at several MTUs, a bulk transfer's completion time, TLS's extra round
//! trips to the first byte, the `[tcp]` table's settings and errors, and QUIC beside TCP.

use super::*;
use serde_json::json;

/// One TCP flow over a 10 Mbit/s, 10 ms dumbbell whose queue never empties after slow start.
fn one_flow(mtu: u64, tcp: serde_json::Value, flow: serde_json::Value) -> serde_json::Value {
    dumbbell_flow("tcp", "t", mtu, 20, tcp, flow)
}

#[test]
fn link_bandwidth_goodput_is_rate_times_payload_over_frame() {
    // A saturated sender keeps the bottleneck busy once its window exceeds the BDP (10 Mbit/s x
    // ~24 ms = 30 kB; the 100-packet queue is far above it, so NewReno's halving never drains
    // it). Each full segment carries MSS = MTU - 20 (IP) - 20 (TCP) - 12 (timestamps) bytes of
    // payload in a frame of MTU + 7 B (PPP), so goodput = 10 Mbit/s x (MTU - 52) / (MTU + 7).
    for mtu in [576u64, 1280, 1500, 9000] {
        let o = go(&one_flow(mtu, json!({"cc": "newreno"}), json!({})), None);
        let want = 10e6 * (mtu - 52) as f64 / (mtu + 7) as f64;
        let got = goodput_bps(&o, "t", 5.0, 20.0);
        assert!((got / want - 1.0).abs() < 0.005, "MTU {mtu}: {got} vs {want}");
    }
}

#[test]
fn a_bulk_transfer_completes_and_reports_its_first_byte() {
    // 1 MB with TLS 1.3 (RTT = 2 x (10 + 1 + 1) ms = 24 ms plus serialization). The client's
    // first data leaves after TCP's handshake (1 RTT) and TLS's (1 more RTT, the server's ~4.5 kB
    // flight taking ~3.6 ms at 10 Mbit/s): ~52 ms. The receiving application gets bytes only
    // when a whole TLS record has arrived, and a saturated sender writes 16 kB records: 16 406 B
    // on the wire, more than the initial window (10 x 1448 B = 14 480 B). The first flight
    // reaches the server at ~52 + 12 + 11.6 ms; the record's last two segments leave on the
    // first ACKs (~78 ms at the client) and arrive ~91-95 ms.
    let sc = one_flow(1500, json!({"tls": "1.3"}), json!({"app": "bulk", "bytes": "1MB"}));
    let o = go(&sc, None);
    let t = &o.totals["flows"]["t"];
    assert_eq!(t["delivered_bytes"].as_u64(), Some(1_000_000));
    let first = t["tcp"]["first_app_byte_at_s"].as_f64().unwrap();
    assert!((0.088..0.098).contains(&first), "first app byte at {first} s");
    let done = t["completion_time_s"].as_f64().unwrap();
    // 1 MB at 10 Mbit/s is 0.8 s on the wire; slow start adds a few RTTs.
    assert!((0.85..1.3).contains(&done), "completion {done} s");
    assert_eq!(t["kind"], "tcp");
    assert!(t["tcp"]["established"].as_bool().unwrap());
}

#[test]
fn tcp_settings_come_from_the_tables_and_errors_name_them() {
    // A flow's own table wins over [tcp]; cc tables reach the controller.
    let sc = one_flow(
        1500,
        json!({"cc": {"algo": "cubic", "beta": 0.8}, "sack": false}),
        json!({"tcp": {"sack": true}}),
    );
    go(&sc, None);
    let e = |tcp: serde_json::Value, flow: serde_json::Value| {
        quicksim_scenario::run(&one_flow(1500, tcp, flow).to_string(), None, &mut |_, _| true)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(e(json!({"min_rto": "fast"}), json!({})).split(':').next(), Some("tcp.min_rto"));
    let msg = e(json!({}), json!({"tcp": {"sakc": true}}));
    assert!(msg.starts_with("flows[0].tcp.sakc: unknown field"), "{msg}");
    let msg = e(json!({"cc": "vegas"}), json!({}));
    assert!(msg.starts_with("tcp.cc: \"vegas\" is not a congestion controller"), "{msg}");
    let msg = e(json!({"mss": 1461}), json!({}));
    assert!(msg.starts_with("tcp.mss: 1461 B does not fit the MTU of 1500 B"), "{msg}");
    let msg = e(json!({}), json!({"streams": 2}));
    assert!(msg.starts_with("flows[0].streams: 2: a TCP connection is one byte stream"), "{msg}");
}

#[test]
fn quic_and_tcp_share_a_bottleneck_and_every_byte_is_counted() {
    let sc = json!({
        "run": {"duration": "10s", "seed": 4},
        "dumbbell": {"pairs": 2, "mtu": "1500B",
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"packets": 40},
                                    "loss": {"kind": "bernoulli", "p": 0.001}},
                     "access": {"rate": "1Gbps", "delay": "1ms"}},
        "quic": {"cc": "cubic"},
        "tcp": {"cc": "cubic"},
        "flows": [
            {"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"},
            {"name": "t", "kind": "tcp", "src": "sender2", "dst": "receiver2"}
        ]
    });
    let o = go(&sc, None);
    let total = goodput_bps(&o, "q", 2.0, 10.0) + goodput_bps(&o, "t", 2.0, 10.0);
    // Together they fill the link (less the headers, ~4 %, and the losses' recoveries).
    assert!(total > 0.85 * 10e6 && total < 10e6, "{total}");
    assert!(goodput_bps(&o, "t", 2.0, 10.0) > 2e6 && goodput_bps(&o, "q", 2.0, 10.0) > 2e6);
    // Same seed, same run; a TCP flow's totals are deterministic too.
    let again = go(&sc, None);
    assert_eq!(o.meta["trace_hash"], again.meta["trace_hash"]);
    assert_eq!(o.totals, again.totals);
}
