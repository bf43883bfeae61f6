//! Integration tests of whole scenarios against hand computation from their numbers.

mod aqm;
mod bbr;
mod capture;
mod coupled;
mod cubic_rfc9438;
mod delays;
mod ecn;
mod errors;
mod facts;
mod fuzz;
mod l4s;
mod limits;
mod links;
mod multipath;
mod multipath_coupled;
mod multipath_outputs;
mod normalize;
mod pins;
mod qlog;
mod quic;
mod quinn;
#[cfg(feature = "quinn-qlog")]
mod quinn_qlog;
mod randvars;
mod registries;
mod rto;
mod stop_mode;
mod sub_queues;
mod support;
mod tcp;
mod tcp_linux;
mod toy_cc;
mod toy_qdisc;
mod toy_sink;
mod udp;

use quicksim_scenario::{run, Column, RunOutput};
pub use support::*;

/// The error a scenario must be refused with (panics if it runs).
pub fn err_of(sc: serde_json::Value) -> String {
    match run(&sc.to_string(), None, &mut |_, _| true) {
        Ok(_) => panic!("scenario was accepted: {sc}"),
        Err(e) => e.to_string(),
    }
}

/// A valid one-pair dumbbell with one UDP flow, for tests that break one field of it.
pub fn base() -> serde_json::Value {
    serde_json::json!({
        "run": {"duration": "1s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
        "flows": [{"name": "f", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "100B", "interval": "10ms"}]
    })
}

pub fn go(json: &serde_json::Value, seed: Option<u64>) -> RunOutput {
    run(&json.to_string(), seed, &mut |_, _| true).unwrap_or_else(|e| panic!("scenario failed: {e}"))
}

pub fn col_i64<'a>(o: &'a RunOutput, t: &str, c: &str) -> &'a [i64] {
    match o.column(t, c) {
        Some(Column::I64(v)) => v,
        other => panic!("{t}.{c} is not an i64 column: {other:?}"),
    }
}
pub fn col_f64<'a>(o: &'a RunOutput, t: &str, c: &str) -> &'a [f64] {
    match o.column(t, c) {
        Some(Column::F64(v)) => v,
        other => panic!("{t}.{c} is not an f64 column: {other:?}"),
    }
}
/// A string column's rows (plain or dictionary-encoded).
pub fn col_str(o: &RunOutput, t: &str, c: &str) -> Vec<String> {
    match o.column(t, c).and_then(Column::strings) {
        Some(v) => v.into_iter().map(String::from).collect(),
        None => panic!("{t}.{c} is not a str column: {:?}", o.column(t, c)),
    }
}
