//! quinn flows: the real quinn-proto stack (`quicksim-quinn`) as a [`Transport`] of the run
//! loop, its totals block, and its configuration from the scenario's `[quinn]` table and a
//! flow's own `quinn` table (`configure`). quinn endpoints are never parked (their state is quinn-proto's).

use super::settings::{ConfigureCx, SettingsTable};
use super::transport::Transport;
use crate::payload::Contents;
use crate::ScenarioError;
use quicksim_engine::{Rng, SimTime};
use quicksim_quinn::{QuinnConfig, QuinnEndpoint, QuinnPacket, QuinnShared, TlsKeyLog};
use quicksim_transport::{Endpoint, Role};
use serde_json::{json, Value};
use std::sync::Arc;

impl Transport for QuinnEndpoint {
    const KIND: &'static str = "quinn";
    const NAME: &'static str = "quinn";
    type Shared = Arc<QuinnShared>;
    type Settings = QuinnConfig;
    const PATH_DEPENDENT: &'static [&'static str] = &["mtu"];
    /// quinn's defaults are quinn-proto's, not written out (a later quinn-proto may move them).
    const WRITE_DEFAULTS: bool = false;

    /// The table over `QuinnConfig::default()`, the MTU of the path unless the table sets a
    /// smaller one; everything random (TLS) from the flow's "quinn" stream of the run's seed.
    fn configure(t: &SettingsTable, cx: &mut ConfigureCx) -> Result<Arc<QuinnShared>, ScenarioError> {
        let mut table = t.table.clone();
        table.entry("mtu").or_insert(json!(cx.path_mtu));
        let cfg: QuinnConfig = t.decode(table)?;
        if cfg.mtu > cx.path_mtu {
            return Err(ScenarioError::new(
                t.at("mtu"),
                format!("{} B exceeds the path MTU {} B", cfg.mtu, cx.path_mtu),
            ));
        }
        QuinnShared::new(cfg, cx.stream("quinn")).map(Arc::new).map_err(|e| t.invalid(e))
    }

    /// quinn-proto runs its own controllers: the controller streams are not used.
    fn pair(cfg: &Arc<QuinnShared>, now: SimTime, _cc_rng: [Rng; 2]) -> [QuinnEndpoint; 2] {
        let end =
            |role| QuinnEndpoint::new(role, Arc::clone(cfg), now).expect("config validated at build time");
        [end(Role::Client), end(Role::Server)]
    }

    /// quinn writes its own qlog: each end gets quinn-proto's qlog streamer from the start (it
    /// is part of the configuration the connection is made with).
    #[cfg(feature = "quinn-qlog")]
    fn pair_traced(cfg: &Arc<QuinnShared>, now: SimTime, _cc_rng: [Rng; 2]) -> [QuinnEndpoint; 2] {
        let end = |role| {
            QuinnEndpoint::with_qlog(role, Arc::clone(cfg), now).expect("config validated at build time")
        };
        [end(Role::Client), end(Role::Server)]
    }

    fn tls_keylog(cfg: &Arc<QuinnShared>) -> Option<Arc<TlsKeyLog>> {
        Some(Arc::clone(&cfg.keylog))
    }

    /// The datagram's real bytes (protected as quinn-proto sent them).
    fn contents(p: &QuinnPacket) -> Contents<'_> {
        Contents::Datagram(&p.0)
    }

    fn totals(c: &[QuinnEndpoint; 2], close_error: &Option<String>) -> Value {
        let (Some(s), r) = (c[0].stats(), c[1].stats()) else {
            return json!({ "established": false, "error": close_error });
        };
        let r = r.unwrap_or_default();
        json!({
            "packets_sent": s.path.sent_packets,
            "packets_lost": s.path.lost_packets,
            "bytes_lost": s.path.lost_bytes,
            "bytes_sent": s.udp_tx.bytes,
            "stream_frames_sent": s.frame_tx.stream,
            "congestion_events": s.path.congestion_events,
            "ack_frames_sent": r.frame_tx.acks,
            "receiver_packets_sent": r.udp_tx.datagrams,
            "receiver_bytes_sent": r.udp_tx.bytes,
            "ack_frequency_frames_sent": s.frame_tx.ack_frequency,
            "cwnd": s.path.cwnd,
            "smoothed_rtt_s": s.path.rtt.as_secs_f64(),
            "min_rtt_s": s.path.min_rtt.as_secs_f64(),
            "udp_payload": s.path.current_mtu,
            "encryption": c[0].config().encryption,
            // FNV-1a of the datagrams each end sent before its handshake completed: the TLS
            // randoms, keys and connection IDs, which follow the run's seed.
            "handshake_digest": format!("{:016x}{:016x}", c[0].handshake_digest(), c[1].handshake_digest()),
            "established": c[0].is_established() || c[0].is_closed(),
            "error": close_error,
        })
    }
}
