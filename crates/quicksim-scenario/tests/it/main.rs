//! Integration tests of whole scenarios against hand computation from their numbers.

mod cubic_rfc9438;
mod determinism;
mod determinism_quic;
mod errors;
mod fuzz;
mod limits;
mod normalize;
mod quic;
mod tcp;
mod toy_cc;
mod toy_qdisc;
mod toy_sink;
mod udp;

use quicksim_scenario::{run, Column, RunOutput};

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
pub fn col_str<'a>(o: &'a RunOutput, t: &str, c: &str) -> &'a [String] {
    match o.column(t, c) {
        Some(Column::Str(v)) => v,
        other => panic!("{t}.{c} is not a str column: {other:?}"),
    }
}
