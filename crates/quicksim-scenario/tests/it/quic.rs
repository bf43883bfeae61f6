//! QUIC flows through the whole simulator: recording and applications.

use super::*;
use serde_json::json;

fn dumbbell(flow: serde_json::Value, duration: &str) -> serde_json::Value {
    json!({
        "run": {"duration": duration},
        "dumbbell": {"pairs": 1, "mtu": "1280B",
                     "bottleneck": {"rate": "20Mbps", "delay": "5ms", "queue": {"packets": 30}},
                     "access": {"rate": "1Gbps"}},
        "quic": {"handshake": true},
        "flows": [flow]
    })
}

#[test]
fn round_robin_streams_share_the_goodput_and_add_up() {
    let o = go(
        &dumbbell(
            json!({"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1", "streams": 3}),
            "6s",
        ),
        None,
    );
    let sid = col_i64(&o, "streams", "stream");
    let by = col_i64(&o, "streams", "delivered_bytes");
    let total: i64 = by.iter().sum();
    assert_eq!(total as u64, o.totals["flows"]["q"]["delivered_bytes"].as_u64().unwrap());
    let mut per = std::collections::BTreeMap::new();
    for (s, b) in sid.iter().zip(by) {
        *per.entry(*s).or_insert(0i64) += b;
    }
    assert_eq!(per.len(), 3, "{per:?}");
    // Round robin over always-backlogged streams: equal thirds, within 2 % (the last round
    // of the run may be unfinished).
    for b in per.values() {
        assert!((*b as f64 / (total as f64 / 3.0) - 1.0).abs() < 0.02, "{per:?}");
    }
}

#[test]
fn bulk_transfer_records_its_completion_time() {
    // 2 MB over 20 Mbit/s: at least 2e6 * 8 / 20e6 = 0.8 s plus the handshake (1 RTT of ~10 ms);
    // slow start and losses make it longer, but not more than twice.
    let o = go(
        &dumbbell(
            json!({"name": "b", "kind": "quic", "src": "sender1", "dst": "receiver1", "app": "bulk", "bytes": "2MB", "start": "1s"}),
            "5s",
        ),
        None,
    );
    let f = &o.totals["flows"]["b"];
    assert_eq!(f["delivered_bytes"].as_u64().unwrap(), 2_000_000);
    let ct = f["completion_time_s"].as_f64().unwrap();
    let floor = 2e6 * 8.0 / 20e6 * (1287.0 / 1231.0) + 0.010;
    assert!(ct > floor && ct < 2.0 * floor, "completion {ct} s, floor {floor} s");
}

#[test]
fn conn_samples_carry_monotone_counters() {
    let o =
        go(&dumbbell(json!({"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"}), "3s"), None);
    let sent = col_i64(&o, "conn", "packets_sent");
    let lost = col_i64(&o, "conn", "packets_lost");
    assert!(sent.len() > 100);
    assert!(sent.windows(2).all(|w| w[0] <= w[1]) && lost.windows(2).all(|w| w[0] <= w[1]));
    assert!(*sent.last().unwrap() as u64 <= o.totals["flows"]["q"]["quic"]["packets_sent"].as_u64().unwrap());
}

/// Trace hash of a saturated QUIC flow over the lossy dumbbell with `quic` as the QUIC defaults.
fn trace_with(quic: serde_json::Value, flow_quic: Option<serde_json::Value>) -> String {
    let mut flow = json!({"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"});
    if let Some(q) = flow_quic {
        flow["quic"] = q;
    }
    let mut sc = dumbbell(flow, "3s");
    sc["dumbbell"]["bottleneck"]["loss"] = json!({"kind": "bernoulli", "p": 0.01});
    sc["quic"] = quic;
    go(&sc, None).meta["trace_hash"].as_str().unwrap().to_string()
}

/// NewReno's `exact_increase` is the same setting under its old key and in the `cc` table; the
/// table wins over the old key; a flow's `cc` replaces the defaults' table; CUBIC's own
/// parameters reach the controller.
#[test]
fn congestion_control_settings_reach_the_controller() {
    let exact = trace_with(json!({"cc": "newreno"}), None);
    let approx = trace_with(json!({"cc": "newreno", "exact_increase": false}), None);
    assert_ne!(exact, approx, "exact_increase changes nothing");
    assert_eq!(approx, trace_with(json!({"cc": {"algo": "newreno", "exact_increase": false}}), None));
    assert_eq!(
        approx,
        trace_with(json!({"cc": {"algo": "newreno", "exact_increase": false}, "exact_increase": true}), None)
    );
    assert_eq!(exact, trace_with(json!({"cc": {"algo": "newreno"}}), None));
    let cubic = trace_with(json!({"cc": "cubic"}), None);
    assert_eq!(cubic, trace_with(json!({"cc": {"algo": "cubic", "beta": 0.7, "c": 0.4}}), None));
    assert_eq!(cubic, trace_with(json!({"cc": "newreno"}), Some(json!({"cc": {"algo": "cubic"}}))));
    assert_ne!(cubic, trace_with(json!({"cc": {"algo": "cubic", "beta": 0.5}}), None));
    assert_ne!(cubic, trace_with(json!({"cc": {"algo": "cubic", "c": 4}}), None));
}

/// The first time the flows table shows a positive value of `column` for the (only) flow.
fn first_bin_with(o: &RunOutput, column: &str) -> f64 {
    let t = col_f64(o, "flows", "t_s");
    let v = col_i64(o, "flows", column);
    t.iter().zip(v).find(|(_, v)| **v > 0).map(|(t, _)| *t).expect("some bytes")
}

/// `connect` before `start` (INET's connectTime): the handshake runs at the connect time and
/// the first data leaves at the start, arriving one path delay later (5 ms propagation +
/// 0.51 ms for a 1287 B frame at 20 Mbit/s + 2 x 10 us of access links: bin 1.005 s of 1 ms).
/// Without it the handshake's round trip (>= 10 ms) comes first: nothing before 1.015 s.
#[test]
fn a_connect_time_opens_the_connection_before_the_data_starts() {
    let run = |connect: Option<&str>| {
        let mut f = json!({"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1", "start": "1s"});
        if let Some(c) = connect {
            f["connect"] = json!(c);
        }
        let mut sc = dumbbell(f, "1.1s");
        sc["run"]["record_interval"] = json!("1ms");
        go(&sc, None)
    };
    let early = run(Some("0s"));
    assert!(first_bin_with(&early, "wire_sent_bytes") < 0.001, "the handshake runs at 0 s");
    assert!((first_bin_with(&early, "delivered_bytes") - 1.005).abs() < 1e-9);
    let at_start = run(None);
    assert!((first_bin_with(&at_start, "wire_sent_bytes") - 1.0).abs() < 1e-9);
    assert!(first_bin_with(&at_start, "delivered_bytes") >= 1.015);
    // `connect` equal to `start` is the default, to the bit.
    assert_eq!(run(Some("1s")).meta["trace_hash"], at_start.meta["trace_hash"]);
}
