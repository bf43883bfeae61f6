//! QUIC flows: the INET-model QUIC connection of `quicksim-transport` as a [`Transport`] of the
//! run loop, with its totals block and its compact encoding for resting flows.

use super::settings::{ConfigureCx, ExtraKey, ExtraKind, SettingsTable, CC_KEY};
use super::transport::Transport;
use crate::flows::udp::UDP_IP;
use crate::output::{ConnCounters, ConnSample};
use crate::schema::CcCfg;
use crate::ScenarioError;
use quicksim_engine::{Rng, SimTime};
use quicksim_transport::quic::{path_sched, Connection, HeaderKind, QuicConfig, Role, DEFAULT_DCID_LEN};
use serde_json::{json, Value};
use std::sync::Arc;

impl Transport for Connection {
    const KIND: &'static str = "quic";
    const NAME: &'static str = "QUIC";
    type Shared = Arc<QuicConfig>;
    type Settings = QuicConfig;
    const EXTRA_KEYS: &'static [ExtraKey] = &[
        CC_KEY,
        ExtraKey {
            name: "exact_increase",
            doc: "NewReno's `exact_increase` (the older key: `cc = { algo = \"newreno\", exact_increase = false }` \
                  is the same); ignored by other controllers.",
            kind: ExtraKind::LegacyBool,
        },
    ];
    const PATH_DEPENDENT: &'static [&'static str] = &["max_packet_size"];
    const SHARED_BY_SETTINGS: bool = true;

    /// The table over `QuicConfig::default()`; `max_packet_size` defaults to the path MTU − 28 B
    /// and must fit it; `cc` defaults to NewReno, with the older `exact_increase` key applied to
    /// NewReno when the controller's table does not set it.
    fn configure(t: &SettingsTable, cx: &mut ConfigureCx) -> Result<Arc<QuicConfig>, ScenarioError> {
        let mut table = t.table.clone();
        let cc = table.remove("cc");
        let exact_increase = table.remove("exact_increase");
        let largest = cx.path_mtu - UDP_IP;
        let given = table.contains_key("max_packet_size");
        table.entry("max_packet_size").or_insert(json!(largest));
        let mut c: QuicConfig = t.decode(table)?;
        if given && c.max_packet_size > largest {
            return Err(ScenarioError::new(
                t.at("max_packet_size"),
                format!(
                    "{} B does not fit the path MTU {} B minus 28 B of IPv4 + UDP",
                    c.max_packet_size, cx.path_mtu
                ),
            ));
        }
        let mut cc = match cc {
            Some(v) => serde_json::from_value::<CcCfg>(v)
                .map_err(|e| ScenarioError::new(t.at("cc"), e.to_string()))?,
            None => CcCfg { algo: "newreno".into(), params: Default::default() },
        };
        if let (Some(Value::Bool(v)), "newreno") = (exact_increase, cc.algo.as_str()) {
            cc.params.entry("exact_increase").or_insert(Value::Bool(v));
        }
        c.cc = cx.ccs.resolve(cc, &t.at("cc"))?;
        if let Some(m) = &mut c.multipath {
            // A scheduler registered at run time (a Python class) where no built-in one has
            // the name.
            if path_sched::scheduler(&m.scheduler).is_none() {
                let plugins = cx.ccs.plugins;
                m.plugin = Some(plugins.scheduler(&m.scheduler).cloned().ok_or_else(|| {
                    let names: Vec<&str> =
                        path_sched::SCHEDULERS.iter().map(|s| s.0).chain(plugins.scheduler_names()).collect();
                    ScenarioError::new(
                        t.at("multipath.scheduler"),
                        format!("{:?} is not a path scheduler; use one of {names:?}", m.scheduler),
                    )
                })?);
            }
        }
        c.validate().map_err(|e| t.invalid(e))?;
        Ok(Arc::new(c))
    }

    fn capture_dcid_len(cfg: &Arc<QuicConfig>) -> Option<u8> {
        (cfg.header == HeaderKind::Rfc9000).then(|| cfg.dcid_len.unwrap_or(DEFAULT_DCID_LEN))
    }

    #[inline(always)]
    fn packet_path(p: &Self::Packet) -> u8 {
        p.path
    }

    fn extra_paths(cfg: &Arc<QuicConfig>) -> super::transport::ExtraPaths {
        cfg.multipath
            .as_ref()
            .map_or_else(Vec::new, |m| m.paths.iter().map(|p| (p.src.clone(), p.dst.clone())).collect())
    }

    fn path_samples(c: &[Connection; 2]) -> Vec<(u8, ConnSample, ConnCounters)> {
        if !c[0].is_multipath() {
            return Vec::new();
        }
        let receiver = c[1].path_metrics();
        c[0].path_metrics()
            .iter()
            .map(|m| {
                let r = receiver.get(m.path as usize);
                let sample = ConnSample {
                    cwnd: m.cwnd_bytes,
                    ssthresh: m.ssthresh_bytes,
                    inflight: m.bytes_in_flight,
                    srtt: m.smoothed_rtt,
                    latest_rtt: m.latest_rtt,
                    min_rtt: m.min_rtt,
                    rttvar: Some(m.rttvar),
                    rto: Some(m.pto),
                };
                let n = &m.counters;
                let counters = ConnCounters {
                    packets_sent: n.packets_sent,
                    packets_acked: n.packets_acked,
                    packets_lost: n.packets_lost,
                    retransmitted_bytes: n.retransmitted_bytes,
                    timeouts: n.timeouts,
                    ack_frames_sent: r.map_or(0, |r| r.counters.ack_frames_sent),
                    ce_marks: r.map_or(0, |r| r.ce_received),
                    ecn_events: m.ecn_events,
                };
                (m.path, sample, counters)
            })
            .collect()
    }

    fn contents(p: &Self::Packet) -> crate::payload::Contents<'_> {
        crate::payload::Contents::Quic(p)
    }

    fn pair(cfg: &Arc<QuicConfig>, now: SimTime, [c, s]: [Rng; 2]) -> [Connection; 2] {
        let end = |role, rng| {
            Connection::new(role, Arc::clone(cfg), now, rng).expect("config validated at build time")
        };
        [end(Role::Client, c), end(Role::Server, s)]
    }

    fn totals(c: &[Connection; 2], close_error: &Option<String>) -> serde_json::Value {
        let s = c[0].stats();
        let r = c[1].stats();
        let per_data = |n: u64| if s.packets_sent > 0 { n as f64 / s.packets_sent as f64 } else { 0.0 };
        let mut o = json!({
            "packets_sent": s.packets_sent,
            "packets_acked": s.packets_acked,
            "packets_lost": s.packets_lost,
            "bytes_sent": s.bytes_sent,
            "stream_bytes_sent": s.stream_bytes_sent,
            "retransmitted_bytes": s.retransmitted_bytes,
            // PTO expiries (RFC 9002 §6.2; anti-deadlock ones included).
            "timeouts": s.pto_count_total,
            "ack_frames_sent": r.ack_frames_sent,
            "ack_only_packets_sent": r.ack_only_packets_sent,
            "receiver_packets_sent": r.packets_sent,
            "receiver_bytes_sent": r.bytes_sent,
            // The ACK-policy costs: the reverse path carries only ACKs in a bulk
            // transfer, so these are its packets and QUIC bytes (IP + UDP: +28 B each).
            "receiver_ack_only_bytes_sent": r.ack_only_bytes_sent,
            "receiver_ack_frame_bytes_sent": r.ack_frame_bytes_sent,
            "ack_frames_per_data_packet": per_data(r.ack_frames_sent),
            "ack_packets_per_data_packet": per_data(r.ack_only_packets_sent),
            "ibit_packets_sent": s.ibit_packets_sent,
            "ack_frequency_frames_sent": s.ack_frequency_frames_sent,
            "immediate_ack_frames_sent": s.immediate_ack_frames_sent,
            "receiver_ack_frequency_frames_applied": r.ack_frequency_frames_applied,
            "receiver_immediate_acks_honoured": r.immediate_acks_honoured,
            "congestion_events": s.congestion_events,
            "established": c[0].is_established() || c[0].is_closed(),
            "error": close_error,
        });
        if c[0].is_multipath() {
            // Only for multipath flows: every other flow's totals stay as they were.
            let paths: Vec<Value> = c[0]
                .path_metrics()
                .iter()
                .map(|p| {
                    json!({
                        "path": p.path,
                        "packets_sent": p.packets_sent,
                        "bytes_sent": p.bytes_sent,
                        "stream_bytes_sent": p.stream_bytes_sent,
                        "usable": p.usable,
                        "backup": p.backup,
                        "abandoned": p.abandoned,
                        "srtt_s": p.smoothed_rtt.as_secs_f64(),
                        "min_rtt_s": p.min_rtt.as_secs_f64(),
                        "cwnd_bytes": p.cwnd_bytes,
                        "validated_s": p.validated_at.map(|t| t.as_secs_f64()),
                        "abandoned_s": p.abandoned_at.map(|t| t.as_secs_f64()),
                    })
                })
                .collect();
            o["paths"] = json!(paths);
            o["receiver_max_out_of_order_bytes"] = json!(c[1].max_out_of_order_bytes());
        }
        o
    }

    fn park(&self, out: &mut Vec<u8>) -> bool {
        self.encode(out);
        true
    }

    fn unpark<'a>(bytes: &'a [u8], cfg: &Arc<QuicConfig>) -> Result<(Connection, &'a [u8]), String> {
        Connection::decode(bytes, Arc::clone(cfg))
    }
}
