//! The queue disciplines (RED, CoDel, FQ-CoDel, PIE) against their papers' and RFCs' stated
//! behaviour, with TCP flows through a 10 Mbit/s, 100 ms RTT dumbbell.

use super::*;
use serde_json::{json, Value};

const BOTTLENECK: &str = "bottleneck:router1->router2";

/// `pairs` sender/receiver pairs over a 10 Mbit/s bottleneck with `queue`; RTT 2 x (48 + 1 + 1)
/// ms = 100 ms plus serialization.
fn dumbbell(pairs: u32, queue: Value, flows: Value, duration: &str, record: Value) -> Value {
    json!({
        "run": {"duration": duration, "record": record},
        "dumbbell": {"pairs": pairs,
                     "bottleneck": {"rate": "10Mbps", "delay": "48ms", "queue": queue},
                     "access": {"rate": "1Gbps", "delay": "1ms"}},
        "flows": flows
    })
}

fn bulk(name: &str, pair: u32) -> Value {
    json!({"name": name, "kind": "tcp", "src": format!("sender{pair}"), "dst": format!("receiver{pair}")})
}

/// Mean sojourn time (s) and utilization of the bottleneck from the summary.
fn delay_util(o: &RunOutput) -> (f64, f64) {
    let q = &o.totals["queues"][BOTTLENECK];
    let l = &o.totals["links"][BOTTLENECK];
    (q["mean_sojourn_s"].as_f64().unwrap(), l["utilization"].as_f64().unwrap())
}

#[test]
fn print_numbers() {
    for q in [
        json!({"packets": 1000}),
        json!({"kind": "codel", "packets": 1000}),
        json!({"kind": "pie", "packets": 1000}),
        json!({"kind": "red", "packets": 1000, "min_th": 20, "max_th": 60, "max_p": 0.1}),
        json!({"kind": "fq_codel", "packets": 1000}),
    ] {
        let o = go(&dumbbell(1, q.clone(), json!([bulk("a", 1)]), "30s", json!({})), None);
        let (d, u) = delay_util(&o);
        println!("{q}: delay {d} util {u} {}", o.totals["queues"][BOTTLENECK]);
    }
}
