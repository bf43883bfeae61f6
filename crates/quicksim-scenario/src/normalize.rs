//! The scenario as a run sees it: the parsed document written back as JSON, with the defaults
//! filled in, so that a saved `scenario.json` reruns the same way under a later version whose
//! defaults moved, and a reader sees every value the run used.
//!
//! Filled in: everything the schema defaults (`run.record`, empty tables) and these build-time
//! defaults, each taken from the constant the build uses:
//! - `run.seed` (1) and `run.record_interval` (0.5 s);
//! - `dumbbell.mtu` (1500 B) and `dumbbell.access.rate` (1 Gbit/s, unless the access links
//!   are trace-driven); `links[].mtu` (1500 B);
//! - per link (`links[]`, `dumbbell.bottleneck`, `dumbbell.access`): `delay` (0 s), `overhead`
//!   (7 B, PPP) and `queue` (10000 packets);
//! - QUIC flows: `start` (0 s), `app` ("saturated"), `streams` (1);
//! - with any flow of a transport, the transport's `[kind]` table with every setting's default
//!   (`flows::settings::defaults`: `[quic]` from `QuicConfig::default()`, `[tcp]` from
//!   `TcpConfig::default()`; quinn's are quinn-proto's and not written), except the settings
//!   whose default is unset or depends on the path (below), and `cc`;
//! - every transport settings table, the scenario's and the flows' own, in canonical form
//!   ("1000ms" is "1s"); an empty `[quic]` table is always written, as it was before the
//!   transports' tables came from their registry, so the scenario hashes of earlier results
//!   still match.
//!
//! Left out on purpose, because their value depends on other fields and writing it down would
//! pin it when those fields are later overridden (`--set`): a flow's `stop` (the run's end) and
//! `connect` (its `start`; unset, moving `start` moves the connect time with it), the
//! `mtu` of a dumbbell's own links (`dumbbell.mtu`), a transport's path-dependent settings
//! (`Transport::PATH_DEPENDENT`: `quic.max_packet_size`, path MTU - 28 B; `tcp.mtu`), and the
//! settings unset by default (`quic.initial_window`, RFC 9002's formula of the packet size;
//! `quic.dcid_len`, only with the "rfc9000" header; the ACK-frequency fields that apply to one
//! `ack_policy` only; `tcp.mss`). `cc` is left out while its form (name or table) is being
//! reworked. Direction tables (`forward`, `reverse`) are not filled: they inherit the link's
//! values.

use crate::build::{DEFAULT_ACCESS_RATE, DEFAULT_MTU, DEFAULT_RECORD_INTERVAL};
use crate::schema::{FlowCfg, FlowKindCfg, LinkSpec, QueueCfg, Scenario};
use crate::units::{Bytes, Dur, RateVal};
use crate::ScenarioError;
use quicksim_engine::SimDuration;
use quicksim_net::PPP_OVERHEAD;
use serde_json::{Map, Value};

/// The scenario with its defaults filled in, as JSON (keys sorted; absent options left out).
pub fn normalized(sc: &Scenario) -> Result<Value, ScenarioError> {
    let mut sc = sc.clone();
    let kinds = transport_kinds(&sc.flows);
    sc.flows.retain(FlowCfg::is_written);
    sc.flows.iter_mut().for_each(fill_flow);
    fill_head(&mut sc, &kinds);
    finish(head_json(&sc))
}

/// The normalized scenario in parts, for hashing without building it whole: `part` gets the
/// scenario without its flows (`"flows": []`), then each flow, normalized as in `normalized`.
/// One flow's JSON exists at a time, so a run of 10 000 flows does not hold a second copy of
/// them while it starts (that raised the peak memory of many idle flows by 3.5 kB each).
pub fn normalized_parts(sc: &mut Scenario, mut part: impl FnMut(&Value)) -> Result<(), ScenarioError> {
    let flows = std::mem::take(&mut sc.flows);
    let kinds = transport_kinds(&flows);
    let mut head = sc.clone();
    sc.flows = flows;
    fill_head(&mut head, &kinds);
    part(&finish(head_json(&head))?);
    for f in sc.flows.iter().filter(|f| f.is_written()) {
        let mut f = f.clone();
        fill_flow(&mut f);
        part(&finish(f.to_json())?);
    }
    Ok(())
}

/// The transports the flows use.
fn transport_kinds(flows: &[FlowCfg]) -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = flows.iter().filter_map(|f| f.transport().map(|t| t.kind)).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

fn finish(v: Result<Value, serde_json::Error>) -> Result<Value, ScenarioError> {
    let mut v = v.map_err(|e| {
        ScenarioError::new(String::new(), format!("internal error writing the scenario: {e}"))
    })?;
    drop_nulls(&mut v);
    Ok(v)
}

fn fill_flow(f: &mut FlowCfg) {
    f.start.get_or_insert(crate::schema::TimeDist::Const(SimDuration::ZERO));
    if let FlowKindCfg::Transport(t) = std::sync::Arc::make_mut(&mut f.kind) {
        t.app.get_or_insert(crate::apps::DEFAULT_APP);
        t.streams.get_or_insert(crate::apps::DEFAULT_STREAMS);
        if let Some(s) = &t.settings {
            t.settings = Some(crate::flows::canonical_settings(t.kind, s));
        }
    }
}

/// Everything but the flows; `kinds` (the transports the flows use) decide the transport tables.
fn fill_head(sc: &mut Scenario, kinds: &[&'static str]) {
    sc.run.seed.get_or_insert(crate::DEFAULT_SEED);
    sc.run.record_interval.get_or_insert(Dur(DEFAULT_RECORD_INTERVAL));
    if let Some(db) = &mut sc.dumbbell {
        db.mtu.get_or_insert(Bytes(DEFAULT_MTU));
        if !db.access.model.as_ref().is_some_and(crate::schema::ModelCfg::sets_rate) {
            // A trace's rate is the trace's (a rate beside it is refused).
            db.access.rate.get_or_insert(RateVal(DEFAULT_ACCESS_RATE));
        }
        fill_link(&mut db.bottleneck);
        fill_link(&mut db.access);
    }
    for l in &mut sc.links {
        l.mtu.get_or_insert(Bytes(DEFAULT_MTU));
        fill_link(l);
    }
    for table in sc.transports.iter_mut() {
        *table.1 = crate::flows::canonical_settings(table.0, table.1);
    }
    for &kind in kinds {
        if let Some(defaults) = crate::flows::default_settings(kind) {
            let table = sc.transports.entry(kind).or_default();
            for (key, value) in defaults {
                table.entry(key).or_insert(value);
            }
        }
    }
}

/// The scenario as JSON: `Scenario::to_json` leaves out empty transport tables; the `[quic]`
/// one was always written (see the module doc).
fn head_json(sc: &Scenario) -> Result<Value, serde_json::Error> {
    let mut v = sc.to_json()?;
    v.as_object_mut().expect("a table").entry("quic").or_insert(Value::Object(Map::new()));
    Ok(v)
}

fn fill_link(l: &mut LinkSpec) {
    // Link models in their settings' canonical form, on the link and its directions.
    for m in [
        &mut l.model,
        l.forward.as_mut().map_or(&mut None, |d| &mut d.model),
        l.reverse.as_mut().map_or(&mut None, |d| &mut d.model),
    ] {
        if let Some(m) = m.as_mut() {
            *m = m.canonical();
        }
    }
    l.delay.get_or_insert(Dur(SimDuration::ZERO));
    l.overhead.get_or_insert(Bytes(PPP_OVERHEAD as u64));
    // No queue table: DropTail with INET's capacity; a table without `kind`: DropTail.
    let q = l.queue.get_or_insert_with(|| {
        let mut m = serde_json::Map::new();
        m.insert("packets".into(), quicksim_net::qdisc::droptail::DEFAULT_PACKETS.into());
        QueueCfg(m)
    });
    q.0.entry("kind").or_insert_with(|| "droptail".into());
}

/// Absent options serialize as `null`; the schema reads a missing key the same way, and TOML
/// (which has no null) can then hold the document too.
fn drop_nulls(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            m.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{SizeDist, TimeDist};

    #[test]
    fn nulls_go_but_other_values_stay() {
        let mut v = serde_json::json!({"a": null, "b": [1, {"c": null, "d": false}], "e": {"f": null}});
        drop_nulls(&mut v);
        assert_eq!(v, serde_json::json!({"b": [1, {"d": false}], "e": {}}));
    }

    #[test]
    fn distributions_write_back_as_they_are_read() {
        let s = SizeDist::Uniform(500, 1000);
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            serde_json::json!({"dist": "uniform", "min": "500B", "max": "1kB"})
        );
        let t = TimeDist::Exponential(SimDuration::from_millis(100));
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            serde_json::json!({"dist": "exponential", "mean": "100ms"})
        );
        assert_eq!(serde_json::to_value(TimeDist::Const(SimDuration::from_micros(1500))).unwrap(), "1500us");
    }
}
