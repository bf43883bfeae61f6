//! BBR in whole scenarios. `bbr1`'s results are pinned (trace hash and event count, TCP and
//! QUIC, with random loss and a queue that overflows, so recovery, ProbeBW and ProbeRTT all
//! run): refactoring the controllers must not move them. `bbr` (draft-ietf-ccwg-bbr) under
//! random loss: the utilization its loss response predicts (see `docs/reproductions/bbr`).

use super::*;
use serde_json::json;

/// One saturating flow of `kind` with controller `cc` over `mbps` / 40 ms RTT, a queue of
/// `queue` packets, Bernoulli loss `p` on the data direction.
fn one_flow(kind: &str, cc: &str, mbps: u64, p: f64, queue: u64, secs: u64) -> serde_json::Value {
    json!({
        "run": {"duration": format!("{secs}s"), "seed": 1, "record_interval": "0.5s",
                "record": {"queues": false, "links": false, "drops": false}},
        "dumbbell": {
            "pairs": 1, "mtu": "1500B",
            "bottleneck": {"rate": format!("{mbps}Mbps"), "delay": "20ms", "queue": {"packets": queue},
                           "forward": {"loss": {"kind": "bernoulli", "p": p}}},
            "access": {"rate": "1Gbps", "delay": "0s", "queue": {"packets": 100000}}
        },
        "tcp": {"cc": cc, "mss": 1460, "sack": true, "timestamps": true, "ack_every": 1, "min_rto": "200ms",
                "recv_buffer": 6291456, "send_buffer": 4194304, "send_buffer_low_water": 1.0},
        "quic": {"cc": cc, "handshake": false, "initial_max_data": "4294967295B",
                 "initial_max_stream_data": "4294967295B", "send_queue_limit": "2MB"},
        "flows": [{"name": "f", "kind": kind, "src": "sender1", "dst": "receiver1"}]
    })
}

fn pin(o: &RunOutput) -> (String, u64) {
    (o.meta["trace_hash"].as_str().unwrap().to_string(), o.meta["events"].as_u64().unwrap())
}

/// Pinned before `bbr1` and `bbr` began sharing code (the recovery bookkeeping, pacing and
/// metrics, `algos/bbr_common.rs`): 12 s, so two ProbeRTTs (10 s after Startup's last RTprop)
/// fall inside; 1 % loss and a 30-packet queue (< 1 BDP), so recoveries and overflows too.
#[test]
fn bbr1_results_are_pinned() {
    let got: Vec<(String, u64)> =
        ["tcp", "quic"].iter().map(|k| pin(&go(&one_flow(k, "bbr1", 10, 0.01, 30, 12), None))).collect();
    let got: Vec<(&str, u64)> = got.iter().map(|(h, e)| (h.as_str(), *e)).collect();
    assert_eq!(got, vec![("14855639cb8ba13e", 123268), ("ab4b072c80f1e2ef", 97607)], "bbr1 results changed");
}
