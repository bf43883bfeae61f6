//! BBR in whole scenarios (the runs of both BBRs over TCP and QUIC are pinned in `pins.txt`:
//! `bbr1_*`, `bbr_*`, from `one_flow`). `bbr` (draft-ietf-ccwg-bbr) under random loss: what its
//! two loss responses take, on a small and a 10x larger BDP (the mechanism, with the model and
//! the sweep: `docs/reproductions/bbr/report.md`).

use super::*;
use serde_json::json;

/// One saturating flow of `kind` with controller `cc` over `mbps` / 40 ms RTT, a queue of
/// `queue` packets, Bernoulli loss `p` on the data direction.
pub(crate) fn one_flow(kind: &str, cc: &str, mbps: u64, p: f64, queue: u64, secs: u64) -> serde_json::Value {
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

/// Goodput of the one flow over [5 s, end] as a share of what the link carries as payload
/// (1448 of every 1500 bytes).
fn utilization(o: &RunOutput, mbps: u64, secs: u64) -> f64 {
    let (t, d) = (col_f64(o, "flows", "t_s"), col_i64(o, "flows", "delivered_bytes"));
    let bytes: i64 = t.iter().zip(d).filter(|(t, _)| **t >= 5.0 - 1e-9).map(|(_, d)| *d).sum();
    bytes as f64 * 8.0 / (secs - 5) as f64 / (mbps as f64 * 1e6 * 1448.0 / 1500.0)
}

fn bbr_util(cc: serde_json::Value, mbps: u64, p: f64, secs: u64) -> f64 {
    // A 3-BDP queue, as bbr-loss.toml's 100 packets at 10 Mbit/s.
    let mut sc = one_flow("tcp", "bbr", mbps, p, 10 * mbps, secs);
    sc["tcp"]["cc"] = cc;
    utilization(&go(&sc, None), mbps, secs)
}

/// The point (10 Mbit/s, 40 ms, 1 % loss, 3-BDP queue): draft-ietf-ccwg-bbr keeps less
/// than 90 % (measured 0.805; `bbr1` 0.967), and the two loss responses the draft specifies
/// are what it loses: with the lower-bound cut made negligible (beta 0.999, §5.5.10.3) and the
/// 2 % threshold out of reach (loss_thresh 0.5, §5.5.10.2) it keeps its loss-free 0.947 less
/// 3 points (measured 0.931). Each alone recovers about half (0.878, 0.862; the reproduction).
#[test]
fn bbr_at_one_percent_loss_loses_what_its_two_loss_responses_take() {
    let draft = bbr_util(json!("bbr"), 10, 0.01, 60);
    assert!((0.78..0.9).contains(&draft), "bbr at 1 %: {draft}");
    let neither = bbr_util(json!({"algo": "bbr", "beta": 0.999, "loss_thresh": 0.5}), 10, 0.01, 60);
    assert!(neither >= 0.947 - 0.03, "both responses off: {neither}");
}

/// A larger BDP does not help: at 100 Mbit/s (345 packets a round) one loss is 0.3 % of a
/// round, far below the 2 % threshold, which never triggers at 0.1 % (the run is the same with
/// it out of reach); but the lower bounds are cut once per lossy round until the next probe
/// (every 63 rounds or 2-3 s), and 0.1 % loss gives the same losses per round (pW = 0.34) and
/// the same total cut per cycle (D = 0.16) as 1 % at 10 Mbit/s: the same utilization (0.792
/// and 0.805 measured, within 6 %). With the cut made negligible the loss-free 0.944 comes
/// back (0.936), and at 1 % the 100 Mbit/s path keeps less than the 10 Mbit/s one (0.662).
#[test]
fn bbr_on_a_larger_bdp_loses_as_much_at_the_same_losses_per_round() {
    let small = bbr_util(json!("bbr"), 10, 0.01, 60);
    let big = bbr_util(json!("bbr"), 100, 0.001, 40);
    assert!((big / small - 1.0).abs() <= 0.06, "100 Mbit/s at 0.1 %: {big}, 10 Mbit/s at 1 %: {small}");
    assert_eq!(big, bbr_util(json!({"algo": "bbr", "loss_thresh": 0.5}), 100, 0.001, 40));
    let no_lo = bbr_util(json!({"algo": "bbr", "beta": 0.999}), 100, 0.001, 40);
    assert!(no_lo >= 0.944 - 0.02, "lower bounds off: {no_lo}");
    let big_1 = bbr_util(json!("bbr"), 100, 0.01, 40);
    assert!(big_1 <= small, "100 Mbit/s at 1 %: {big_1}");
}
