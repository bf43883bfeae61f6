//! The coupled multipath controllers (`lia`, `olia`, `balia`) on a single-path flow: a coupling
//! of one path, which RFC 6356's goal 1 with n = 1 says must be NewReno. The whole run, every
//! recorded table and total, is that of NewReno with the RFC 9002 Appendix B.5 increase.

use super::{col_i64, dumbbell_flow, go};
use quicksim_scenario::Column;
use serde_json::json;

#[test]
fn coupled_controllers_on_one_path_run_exactly_as_newreno() {
    // Two flows on a 100-packet queue at 10 Mbit/s: the queue overflows, so the comparison
    // covers slow start, recovery periods and congestion avoidance.
    let sc = |cc: serde_json::Value| {
        let mut s =
            dumbbell_flow("quic", "q", 1280, 20, json!({"handshake": false, "cc": cc.clone()}), json!({}));
        s["dumbbell"]["pairs"] = json!(2);
        s["flows"] = json!([
            {"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"},
            {"name": "r", "kind": "quic", "src": "sender2", "dst": "receiver2", "start": "0.5s"}
        ]);
        s
    };
    let want = go(&sc(json!({"algo": "newreno", "exact_increase": false})), None);
    let lost = col_i64(&want, "conn", "packets_lost");
    assert!(lost.iter().any(|&n| n > 0), "no loss: the test would prove little");
    for name in ["lia", "olia", "balia"] {
        let got = go(&sc(json!(name)), None);
        assert_eq!(got.totals, want.totals, "{name}");
        assert_eq!(got.tables.len(), want.tables.len());
        for ((tn, t), (_, u)) in got.tables.iter().zip(&want.tables) {
            assert_eq!(t.len(), u.len(), "{name}: {tn}");
            for ((cn, c), (_, d)) in t.iter().zip(u) {
                assert!(same(c, d), "{name}: {tn}.{cn} differs from NewReno's");
            }
        }
    }
}

/// Equal columns, floats compared bit for bit (a NaN, as an empty bin's mean, equals itself).
fn same(a: &Column, b: &Column) -> bool {
    match (a, b) {
        (Column::F64(x), Column::F64(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        _ => a == b,
    }
}
