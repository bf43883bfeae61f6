//! quinn-proto's own qlog (`run.record.qlog` for a quinn flow in a build with the `quinn-qlog`
//! feature): `cargo test -p quicksim-scenario --release --features quinn-qlog --test it quinn_qlog`.
//! Only this file's tests are meant for that build: the feature turns on serde_json's
//! `preserve_order` program-wide, which changes the key order of the JSON totals the
//! determinism pins hash.

use super::go;
use quicksim_scenario::Column;
use serde_json::{json, Value};

/// A quinn NewReno flow over a lossy 10 Mbit/s, RTT ~24 ms dumbbell for 1 s.
fn scenario() -> Value {
    json!({
        "run": {"duration": "1s", "record": {"qlog": ["qn"]}},
        "dumbbell": {"pairs": 1,
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"packets": 30},
                                    "forward": {"loss": {"kind": "bernoulli", "p": 0.01}}}},
        "quinn": {"cc": "newreno"},
        "flows": [{"name": "qn", "kind": "quinn", "src": "sender1", "dst": "receiver1"}]
    })
}

fn texts(o: &quicksim_scenario::RunOutput) -> Vec<(String, String)> {
    let (Some(Column::Str(n)), Some(Column::Str(t))) = (o.column("qlog", "file"), o.column("qlog", "text"))
    else {
        panic!("no qlog table")
    };
    n.iter().cloned().zip(t.iter().cloned()).collect()
}

#[test]
fn quinn_writes_its_own_qlog_in_simulated_time_deterministically() {
    let o = go(&scenario(), None);
    let files = texts(&o);
    assert_eq!(files, texts(&go(&scenario(), None)), "same seed, same files");
    let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(names, ["qn.client.sqlog", "qn.server.sqlog"]);
    for (name, text) in &files {
        // JSON-SEQ (RFC 7464): a Record Separator before each JSON text, a newline after it.
        assert!(text.starts_with('\u{1e}') && text.ends_with('\n'), "{name}");
        let recs: Vec<Value> =
            text.split('\u{1e}').skip(1).map(|r| serde_json::from_str(r.trim_end()).expect("JSON")).collect();
        // quinn-proto's header (the qlog crate's, title ours), then quinn's events.
        assert_eq!(recs[0]["qlog_format"], "JSON-SEQ", "{name}");
        assert_eq!(recs[0]["title"], "quinn-proto 0.11.19 in quicksim", "{name}");
        let ev = &recs[1..];
        let times: Vec<f64> = ev.iter().map(|e| e["time"].as_f64().unwrap()).collect();
        // Milliseconds since simulated time zero (f32 in quinn's qlog crate), in order, in the run.
        assert!(times.windows(2).all(|w| w[0] <= w[1]) && times[times.len() - 1] <= 1000.0, "{name}");
        let count = |n: &str| ev.iter().filter(|e| e["name"] == n).count();
        assert!(count("transport:packet_sent") > 100 && count("transport:packet_received") > 100, "{name}");
        if name.starts_with("qn.client") {
            let m: Vec<&Value> =
                ev.iter().filter(|e| e["name"] == "recovery:metrics_updated").map(|e| &e["data"]).collect();
            let cwnd: Vec<u64> = m.iter().filter_map(|d| d["congestion_window"].as_u64()).collect();
            // RFC 9002's initial window at MTU 1500 (10 x 1472 B), NewReno's floor of 2 datagrams.
            assert_eq!(cwnd[0], 14_720);
            assert!(cwnd.iter().all(|&w| w >= 2 * 1472) && cwnd.len() > 20, "{cwnd:?}");
            // quinn-proto 0.11.19 writes RTTs in seconds: after the first sample, the smoothed RTT
            // lies between the bottleneck's 20 ms round trip and the path's ~24 ms plus the
            // 30-packet queue (36 ms) and quinn's 25 ms ACK delay.
            let srtt: Vec<f64> = m.iter().filter_map(|d| d["smoothed_rtt"].as_f64()).collect();
            assert!(srtt[1..].iter().all(|&r| (0.020..=0.086).contains(&r)), "{srtt:?}");
            let lost = count("recovery:packet_lost") as u64;
            assert_eq!(Some(lost), o.totals["flows"]["qn"]["quinn"]["packets_lost"].as_u64());
            assert!(lost > 0);
        }
    }
}
