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
//! - with any QUIC flow, the top-level `[quic]` table from `QuicConfig::default()`, except the
//!   fields below; with any TCP flow, the `[tcp]` table from `TcpConfig::default()` (but `mtu`,
//!   `mss` and `cc`).
//!
//! Left out on purpose, because their value depends on other fields and writing it down would
//! pin it when those fields are later overridden (`--set`): a flow's `stop` (the run's end) and
//! `connect` (its `start`; unset, moving `start` moves the connect time with it), the
//! `mtu` of a dumbbell's own links (`dumbbell.mtu`), `quic.max_packet_size` (path MTU - 28 B),
//! `quic.initial_window` (RFC 9002's formula of the packet size), `quic.dcid_len` (only with the "rfc9000" header) and the ACK-frequency fields that apply to
//! one `ack_policy` only (setting them for another is an error). `quic.cc` is left out while its
//! form (name or table) is being reworked. Direction tables (`forward`, `reverse`) are not
//! filled: they inherit the link's values.

use crate::build::{DEFAULT_ACCESS_RATE, DEFAULT_MTU, DEFAULT_RECORD_INTERVAL};
use crate::schema::{FlowCfg, FlowKind, LinkSpec, QueueCfg, QuicCfg, Scenario, SizeDist, TimeDist};
use crate::units::{format_bytes, format_duration, Bytes, Dur, RateVal};
use crate::ScenarioError;
use quicksim_engine::SimDuration;
use quicksim_net::PPP_OVERHEAD;
use quicksim_transport::quic::{AckFreqPolicy, HeaderProfile, QuicConfig};
use quicksim_transport::tcp::TcpConfig;
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A constant is its quantity ("1000B"); a distribution is the table it was read from.
impl Serialize for SizeDist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            SizeDist::Const(v) => s.serialize_str(&format_bytes(v)),
            SizeDist::Uniform(a, b) => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("dist", "uniform")?;
                m.serialize_entry("min", &format_bytes(a))?;
                m.serialize_entry("max", &format_bytes(b))?;
                m.end()
            }
        }
    }
}

impl Serialize for TimeDist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            TimeDist::Const(v) => s.serialize_str(&format_duration(v)),
            TimeDist::Uniform(a, b) => {
                let mut m = s.serialize_map(Some(3))?;
                m.serialize_entry("dist", "uniform")?;
                m.serialize_entry("min", &format_duration(a))?;
                m.serialize_entry("max", &format_duration(b))?;
                m.end()
            }
            TimeDist::Exponential(mean) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("dist", "exponential")?;
                m.serialize_entry("mean", &format_duration(mean))?;
                m.end()
            }
        }
    }
}

/// The scenario with its defaults filled in, as JSON (keys sorted; absent options left out).
pub fn normalized(sc: &Scenario) -> Result<serde_json::Value, ScenarioError> {
    let mut sc = sc.clone();
    fill_defaults(&mut sc);
    to_json(&sc)
}

/// The normalized scenario in parts, for hashing without building it whole: `part` gets the
/// scenario without its flows (`"flows": []`), then each flow, normalized as in `normalized`.
/// One flow's JSON exists at a time, so a run of 10 000 flows does not hold a second copy of
/// them while it starts (that raised the peak memory of many idle flows by 3.5 kB each).
pub fn normalized_parts(
    sc: &mut Scenario,
    mut part: impl FnMut(&serde_json::Value),
) -> Result<(), ScenarioError> {
    let flows = std::mem::take(&mut sc.flows);
    let kinds =
        (flows.iter().any(|f| f.kind == FlowKind::Quic), flows.iter().any(|f| f.kind == FlowKind::Tcp));
    let mut head = sc.clone();
    sc.flows = flows;
    fill_head(&mut head, kinds);
    part(&to_json(&head)?);
    for f in &sc.flows {
        let mut f = f.clone();
        fill_flow(&mut f);
        part(&to_json(&f)?);
    }
    Ok(())
}

fn to_json<T: Serialize>(x: &T) -> Result<serde_json::Value, ScenarioError> {
    let mut v = serde_json::to_value(x).map_err(|e| {
        ScenarioError::new(String::new(), format!("internal error writing the scenario: {e}"))
    })?;
    drop_nulls(&mut v);
    Ok(v)
}

fn fill_flow(f: &mut FlowCfg) {
    f.start.get_or_insert(Dur(SimDuration::ZERO));
    if matches!(f.kind, FlowKind::Quic | FlowKind::Tcp | FlowKind::Quinn) {
        f.app.get_or_insert(crate::apps::DEFAULT_APP);
        f.streams.get_or_insert(crate::apps::DEFAULT_STREAMS);
    }
}

fn fill_defaults(sc: &mut Scenario) {
    let kinds =
        (sc.flows.iter().any(|f| f.kind == FlowKind::Quic), sc.flows.iter().any(|f| f.kind == FlowKind::Tcp));
    sc.flows.iter_mut().for_each(fill_flow);
    fill_head(sc, kinds);
}

/// Everything but the flows; `(any QUIC flow, any TCP flow)` decide the transport tables.
fn fill_head(sc: &mut Scenario, (any_quic, any_tcp): (bool, bool)) {
    sc.run.seed.get_or_insert(crate::DEFAULT_SEED);
    sc.run.record_interval.get_or_insert(Dur(DEFAULT_RECORD_INTERVAL));
    if let Some(db) = &mut sc.dumbbell {
        db.mtu.get_or_insert(Bytes(DEFAULT_MTU));
        if !crate::link_cfg::is_trace(db.access.model.as_ref()) {
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
    if any_quic {
        sc.quic = quic_defaults().overlay(&sc.quic);
    }
    if any_tcp {
        for (key, value) in tcp_defaults() {
            sc.tcp.entry(key).or_insert(value);
        }
    }
}

/// `TcpConfig::default()` as the `[tcp]` table's keys, every field but `mtu` (the path's),
/// `mss` (from the MTU) and `cc` (left open, as QUIC's). A flow's own `tcp` table still
/// overrides these key by key, as it does the user's `[tcp]` values.
fn tcp_defaults() -> serde_json::Map<String, serde_json::Value> {
    use serde_json::json;
    let c = TcpConfig::default();
    let dur = |d: SimDuration| json!(format_duration(d));
    let pairs = [
        ("timestamps", json!(c.timestamps)),
        ("window_scaling", json!(c.window_scaling)),
        ("ecn", json!(c.ecn)),
        ("sack", json!(c.sack)),
        ("prr", json!(c.prr)),
        ("dupthresh", json!(c.dupthresh)),
        ("initial_rto", dur(c.initial_rto)),
        ("min_rto", dur(c.min_rto)),
        ("max_rto", dur(c.max_rto)),
        ("clock_granularity", dur(c.clock_granularity)),
        ("syn_retries", json!(c.syn_retries)),
        ("max_retries", json!(c.max_retries)),
        ("delack_timeout", dur(c.delack_timeout)),
        ("ack_every", json!(c.ack_every)),
        ("recv_buffer", json!(c.recv_buffer)),
        ("send_buffer", json!(c.send_buffer)),
        ("send_buffer_low_water", json!(c.send_buffer_low_water)),
        ("nagle", json!(c.nagle)),
        ("pacing", json!(c.pacing)),
        ("manual_read", json!(c.manual_read)),
        ("tls", json!(c.tls)),
        ("tls_record_size", json!(c.tls_record_size)),
        ("tls_client_hello", json!(c.tls_client_hello)),
        ("tls_server_flight", json!(c.tls_server_flight)),
        ("tls13_client_finished", json!(c.tls13_client_finished)),
        ("tls12_client_flight", json!(c.tls12_client_flight)),
        ("tls12_server_finished", json!(c.tls12_server_finished)),
    ];
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn fill_link(l: &mut LinkSpec) {
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

/// The transport's defaults in the schema's terms (see the module doc for the fields left out).
fn quic_defaults() -> QuicCfg {
    let c = QuicConfig::default();
    QuicCfg {
        header: Some(
            match c.header {
                HeaderProfile::Inet => "inet",
                HeaderProfile::Rfc9000 { .. } => "rfc9000",
            }
            .to_string(),
        ),
        handshake: Some(c.handshake),
        // Part of the controller's settings (`cc = { algo = "newreno", exact_increase = .. }`),
        // left open with `cc` (see the module doc).
        exact_increase: None,
        partial_window: Some(c.partial_window),
        pacing: Some(c.pacing),
        initial_rtt: Some(Dur(c.initial_rtt)),
        max_ack_delay: Some(Dur(c.max_ack_delay)),
        ack_ratio: Some(c.ack_ratio),
        ibit: Some(c.ibit),
        ack_policy: Some(
            match c.ack_policy {
                AckFreqPolicy::Receiver => "receiver",
                AckFreqPolicy::Fixed { .. } => "fixed",
                AckFreqPolicy::Cwnd { .. } => "cwnd",
            }
            .to_string(),
        ),
        ack_frequency_reordering: Some(c.ack_frequency_reordering),
        immediate_ack_on_block: Some(c.immediate_ack_on_block),
        bundle_ack: Some(c.bundle_ack),
        ecn: Some(c.ecn),
        max_ack_ranges: Some(c.max_ack_ranges as u64),
        initial_max_data: Some(Bytes(c.initial_max_data)),
        initial_max_stream_data: Some(Bytes(c.initial_max_stream_data)),
        max_data_threshold: Some(c.max_data_threshold),
        max_stream_data_threshold: Some(c.max_stream_data_threshold),
        send_queue_limit: Some(Bytes(c.send_queue_limit)),
        send_queue_low_water: Some(c.send_queue_low_water),
        round_consumed_data: Some(c.round_consumed_data),
        ..QuicCfg::default()
    }
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
