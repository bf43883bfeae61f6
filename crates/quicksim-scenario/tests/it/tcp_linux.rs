//! `profile = "linux"` in whole scenarios: it reaches the connections from the `[tcp]` table and
//! from a flow's own table, an explicit setting wins over it, bad values are named, and on a
//! dumbbell it changes what Linux changes (the RTO floor on the variance term, HyStart), checked
//! against hand computations from the `conn` rows.

use super::*;
use serde_json::json;

/// One saturated TCP flow over a 10 Mbit/s dumbbell with a 50 ms base RTT (bottleneck 24 ms,
/// access 0.5 ms each way) and a DropTail queue of one BDP (10 Mbit/s x 50 ms = 62.5 kB: 41
/// frames of 1507 B), for `secs` seconds.
fn dumbbell(tcp: serde_json::Value, flow_tcp: Option<serde_json::Value>, secs: u64) -> serde_json::Value {
    let mut f = json!({"name": "f", "kind": "tcp", "src": "sender1", "dst": "receiver1"});
    if let Some(t) = flow_tcp {
        f["tcp"] = t;
    }
    json!({
        "run": {"duration": format!("{secs}s"), "record": {"conn": true}},
        "dumbbell": {"pairs": 1, "mtu": "1500B",
                     "bottleneck": {"rate": "10Mbps", "delay": "24ms", "queue": {"packets": 41}},
                     "access": {"rate": "1Gbps", "delay": "500us"}},
        "tcp": tcp,
        "flows": [f]
    })
}

/// (srtt_s, rttvar_s, rto_s) of the `conn` rows after the first RTT sample.
fn rto_rows(o: &RunOutput) -> Vec<(f64, f64, f64)> {
    let (srtt, var, rto) =
        (col_f64(o, "conn", "srtt_s"), col_f64(o, "conn", "rttvar_s"), col_f64(o, "conn", "rto_s"));
    let n = col_i64(o, "conn", "timeouts");
    (0..srtt.len()).filter(|&i| srtt[i] > 0.0 && n[i] == 0).map(|i| (srtt[i], var[i], rto[i])).collect()
}

#[test]
fn the_profile_puts_the_rto_floor_on_the_variance_term() {
    // Linux (`__tcp_set_rto`): RTO = SRTT + rttvar with rttvar ≥ rto_min (200 ms), so every
    // row has RTO ≥ SRTT + 200 ms (≈ 250 ms and more here). The default (RFC 6298) row is
    // max(200 ms, SRTT + max(1 ms, 4·RTTVAR)), which on this path falls to 200 ms at times.
    let linux = go(&dumbbell(json!({"profile": "linux"}), None, 10), None);
    let rows = rto_rows(&linux);
    assert!(rows.len() > 10);
    for &(srtt, _, rto) in &rows {
        assert!(rto >= srtt + 0.2 - 1e-12, "linux row: srtt {srtt}, rto {rto}");
    }
    let model = go(&dumbbell(json!({}), None, 10), None);
    for &(srtt, var, rto) in &rto_rows(&model) {
        let want = (srtt + (4.0 * var).max(0.001)).max(0.2);
        assert!((rto - want).abs() < 1e-12, "default row: srtt {srtt}, rttvar {var}, rto {rto}");
    }
    // From a flow's own table too, and an explicit setting beside the profile wins.
    let own = go(&dumbbell(json!({}), Some(json!({"profile": "linux"})), 10), None);
    assert_eq!(rto_rows(&own), rows);
    let off = go(&dumbbell(json!({"profile": "linux", "rto_estimator": "rfc6298"}), None, 10), None);
    assert!(rto_rows(&off).iter().all(|&(s, v, r)| (r - (s + (4.0 * v).max(0.001)).max(0.2)).abs() < 1e-12));
}

#[test]
fn bad_profile_values_are_named() {
    let e = err_of(dumbbell(json!({"profile": "linus"}), None, 1));
    assert!(e.contains("tcp.profile") && e.contains("linus"), "{e}");
    let e = err_of(dumbbell(json!({}), Some(json!({"delayed_ack": "sometimes"})), 1));
    assert!(e.contains("flows[0].tcp.delayed_ack") && e.contains("sometimes"), "{e}");
    let e = err_of(dumbbell(json!({"recovery": "prr"}), None, 1));
    assert!(e.contains("tcp.recovery") && e.contains("prr"), "{e}");
    let e =
        err_of(dumbbell(json!({"cc": {"algo": "cubic", "hystart": true, "hystart_linux": true}}), None, 1));
    assert!(e.contains("tcp.cc") && e.contains("choose one"), "{e}");
}

/// Prints the totals of both models on the dumbbell (cargo test -- --nocapture), for docs/tcp.md.
#[test]
fn default_and_linux_on_the_dumbbell() {
    for tcp in [json!({}), json!({"profile": "linux"})] {
        let o = go(&dumbbell(tcp.clone(), None, 30), None);
        let t = &o.totals["flows"]["f"];
        let g = goodput_bps(&o, "f", 0.0, 30.0);
        println!(
            "{tcp}: goodput {:.3} Mbit/s, retransmitted {}, rtos {}, recoveries {}, receiver ACKs {}",
            g / 1e6,
            t["tcp"]["retransmitted_segments"],
            t["tcp"]["rtos"],
            t["tcp"]["sack_recoveries"],
            t["tcp"]["receiver_pure_acks_sent"],
        );
        // Both keep the link busy: 10 Mbit/s x 1448 / 1507 = 9.61 Mbit/s of payload at most.
        assert!(g > 0.9 * 9.61e6 && g < 9.61e6, "{tcp}: {g}");
    }
}
