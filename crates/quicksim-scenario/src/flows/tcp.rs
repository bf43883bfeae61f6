//! TCP flows: the TCP model of `quicksim-transport` (optionally with TLS on top) as a
//! [`Transport`] of the run loop, its totals block, its compact encoding for resting flows, and
//! its configuration from the scenario's `[tcp]` table and a flow's own `tcp` table.

use super::transport::Transport;
use crate::cc_config::CcResolver;
use crate::schema::CcCfg;
use crate::ScenarioError;
use quicksim_engine::{Rng, SimTime};
use quicksim_transport::tcp::{Connection, TcpConfig};
use quicksim_transport::Role;
use serde_json::{json, Map, Value};
use std::sync::Arc;

impl Transport for Connection {
    const KIND: &'static str = "tcp";
    type Shared = Arc<TcpConfig>;

    fn contents(p: &Self::Packet) -> crate::payload::Contents<'_> {
        crate::payload::Contents::Tcp(p)
    }

    fn pair(cfg: &Arc<TcpConfig>, now: SimTime, [c, s]: [Rng; 2]) -> [Connection; 2] {
        let end = |role, rng| {
            Connection::new(role, Arc::clone(cfg), now, rng).expect("config validated at build time")
        };
        [end(Role::Client, c), end(Role::Server, s)]
    }

    fn totals(c: &[Connection; 2], close_error: &Option<String>) -> Value {
        let (s, r) = (c[0].stats(), c[1].stats());
        let secs = |t: Option<SimTime>| t.map(|t| t.as_secs_f64());
        json!({
            "segments_sent": s.segments_sent,
            "bytes_sent": s.bytes_sent,
            "data_bytes_sent": s.data_bytes_sent,
            "retransmitted_segments": s.retransmitted_segments,
            "retransmitted_bytes": s.retransmitted_bytes,
            "fast_retransmits": s.fast_retransmits,
            "rtos": s.rtos,
            "syn_retransmits": s.syn_retransmits,
            // Every retransmission-timer expiry, SYN's and data's: QUIC's totals have the same key.
            "timeouts": s.rtos + s.syn_timeouts,
            "sack_recoveries": s.sack_recoveries,
            "reno_recoveries": s.reno_recoveries,
            "dup_acks_received": s.dup_acks,
            "receiver_segments_sent": r.segments_sent,
            "receiver_bytes_sent": r.bytes_sent,
            "receiver_pure_acks_sent": r.pure_acks_sent,
            "receiver_delayed_ack_timeouts": r.delack_timer_fires,
            "zero_window_probes": s.zero_window_probes,
            "established_at_s": secs(s.established_at),
            // When the receiving application got its first byte (after TCP's and TLS's
            // handshakes): the time to first byte of the seeds' QUIC-vs-TCP comparisons.
            "first_app_byte_at_s": secs(r.first_app_byte_at),
            "established": c[0].is_established() || c[0].is_closed(),
            "error": close_error,
        })
    }

    /// A quiet connection whose controller is a plugin stays live (`Connection::can_park`).
    fn park(&self, out: &mut Vec<u8>) -> bool {
        if !self.can_park() {
            return false;
        }
        self.encode(out);
        true
    }

    fn unpark<'a>(bytes: &'a [u8], cfg: &Arc<TcpConfig>) -> Result<(Connection, &'a [u8]), String> {
        Connection::decode(bytes, Arc::clone(cfg))
    }
}

/// The configuration of a TCP flow at `path` (`flows[i]`): the scenario's `[tcp]` table with
/// the flow's `tcp` table over it key by key, `cc` resolved like QUIC's, the MTU of the path
/// unless the table sets one. Errors name the field (`tcp.min_rto`, `flows[2].tcp.sack`).
pub(crate) fn config(
    defaults: &Map<String, Value>,
    own: Option<&Map<String, Value>>,
    path_mtu: u64,
    path: &str,
    ccs: &mut CcResolver,
) -> Result<TcpConfig, ScenarioError> {
    let mut table = defaults.clone();
    // Where each key came from, for errors.
    let at = |key: &str| match own {
        Some(o) if o.contains_key(key) => format!("{path}.tcp.{key}"),
        _ => format!("tcp.{key}"),
    };
    if let Some(o) = own {
        table.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let cc = table.remove("cc");
    table.entry("mtu").or_insert(json!(path_mtu));
    let mut track = serde_path_to_error::Track::new();
    let de = serde_path_to_error::Deserializer::new(Value::Object(table), &mut track);
    let mut cfg: TcpConfig = serde::Deserialize::deserialize(de).map_err(|e| {
        let field = track.path().to_string();
        let key = field.split('.').next().unwrap_or("");
        // serde_path_to_error has no path for an unknown key: name it from the message.
        let key = if key.is_empty() || key == "?" {
            e.to_string().split('`').nth(1).unwrap_or("").to_string()
        } else {
            key.to_string()
        };
        ScenarioError::new(at(&key), e.to_string())
    })?;
    if let Some(cc) = cc {
        let cc: CcCfg =
            serde_json::from_value(cc).map_err(|e| ScenarioError::new(at("cc"), e.to_string()))?;
        cfg.cc = ccs.resolve(cc, &at("cc"))?;
    }
    cfg.validate().map_err(|e| {
        // `validate` starts its message with the field's name.
        let key = e.split(':').next().unwrap_or("").to_string();
        ScenarioError::new(at(&key), e.split_once(": ").map_or(e.clone(), |(_, m)| m.to_string()))
    })?;
    Ok(cfg)
}
