//! TCP flows: the TCP model of `quicksim-transport` (optionally with TLS on top) as a
//! [`Transport`] of the run loop, its totals block, its compact encoding for resting flows, and
//! its configuration from the scenario's `[tcp]` table and a flow's own `tcp` table (`configure`).

use super::settings::{ConfigureCx, ExtraKey, SettingsTable, CC_KEY};
use super::transport::Transport;
use crate::schema::CcCfg;
use crate::ScenarioError;
use quicksim_engine::{Rng, SimTime};
use quicksim_transport::tcp::config::linux_cc;
use quicksim_transport::tcp::{Connection, TcpConfig, TcpProfile};
use quicksim_transport::Role;
use serde_json::{json, Value};
use std::sync::Arc;

impl Transport for Connection {
    const KIND: &'static str = "tcp";
    const NAME: &'static str = "TCP";
    type Shared = Arc<TcpConfig>;
    type Settings = TcpConfig;
    const EXTRA_KEYS: &'static [ExtraKey] = &[CC_KEY];
    const PATH_DEPENDENT: &'static [&'static str] = &["mtu"];
    const MULTI_STREAM: bool = false;
    const SHARED_BY_SETTINGS: bool = true;
    /// The FIN follows the data in the send buffer.
    const CLOSE_DELIVERS: bool = true;

    /// The table over `TcpConfig::default()`, the MTU of the path unless the table sets one,
    /// `cc` resolved like QUIC's (default CUBIC, Linux's; with `profile = "linux"`, CUBIC as
    /// Linux runs it: `linux_cc`).
    fn configure(t: &SettingsTable, cx: &mut ConfigureCx) -> Result<Arc<TcpConfig>, ScenarioError> {
        let mut table = t.table.clone();
        let cc = table.remove("cc");
        table.entry("mtu").or_insert(json!(cx.path_mtu));
        let mut cfg: TcpConfig = t.decode(table)?;
        if let Some(cc) = cc {
            let cc: CcCfg =
                serde_json::from_value(cc).map_err(|e| ScenarioError::new(t.at("cc"), e.to_string()))?;
            cfg.cc = cx.ccs.resolve(cc, &t.at("cc"))?;
        } else if cfg.profile == TcpProfile::Linux {
            // The profile's controller when the tables name none (an explicit `cc` wins).
            cfg.cc = linux_cc();
        }
        cfg.validate().map_err(|e| t.invalid(e))?;
        Ok(Arc::new(cfg))
    }

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
        let mut o = json!({
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
        });
        // Only for connections that were reset (a stop with `stop_mode = "send"`), so that the
        // totals of every other flow stay as they were.
        // Only with RACK-TLP's probes (`loss_detection = "rack"`), as the resets below.
        if s.loss_probes > 0 {
            o["loss_probes"] = json!(s.loss_probes);
        }
        if s.rsts_sent + r.rsts_received > 0 {
            o["rsts_sent"] = json!(s.rsts_sent);
            o["receiver_rsts_received"] = json!(r.rsts_received);
            o["receiver_rsts_sent"] = json!(r.rsts_sent);
        }
        o
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
