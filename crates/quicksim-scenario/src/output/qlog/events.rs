//! qlog event bodies in the two dialects: the `0.3` form qvis reads (`transport:` / `recovery:`
//! names, draft-02 era fields) and draft-ietf-quic-qlog-main-schema-13 with quic-events-12
//! (`quic:` names). Only field names and event names differ; the values are the same.

use quicksim_engine::SimDuration;
use quicksim_transport::quic::packet::AckFrame;
use quicksim_transport::quic::{Frame, QuicPacket, SpaceId};
use quicksim_transport::{LossTrigger, TraceParams, TransportMetrics};
use serde_json::{json, Value};

/// Which qlog a file follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// `qlog_version` "0.3", JSON-SEQ, `transport:` / `recovery:` event names: what qvis opens.
    Qvis,
    /// draft-ietf-quic-qlog-main-schema-13 (`file_schema`, `serialization_format`) and
    /// draft-ietf-quic-qlog-quic-events-12 (`quic:` event names, schema `...:quic-12`).
    Ietf,
}

impl Dialect {
    /// The event's full name: `category` is the 0.3 category (`transport`, `recovery`).
    pub fn name(self, category: &str, event: &str) -> String {
        match self {
            Dialect::Qvis => format!("{category}:{event}"),
            Dialect::Ietf => match event {
                // quic-events-12 renamed these two.
                "metrics_updated" => "quic:recovery_metrics_updated".into(),
                "data_moved" => "quic:stream_data_moved".into(),
                e => format!("quic:{e}"),
            },
        }
    }

    /// The file's first record (JSON-SEQ header) for endpoint `role` of flow `flow`.
    pub fn header(self, flow: &str, role: &str) -> Value {
        let title = format!("quicksim flow {flow}, {role}");
        let description = "simulated time: `time` is in ms since the start of the simulation";
        let vantage = json!({"type": role, "name": format!("quicksim:{flow}:{role}")});
        match self {
            Dialect::Qvis => json!({
                "qlog_version": "0.3",
                "qlog_format": "JSON-SEQ",
                "title": title,
                "description": description,
                "trace": {
                    "vantage_point": vantage,
                    "common_fields": {
                        "ODCID": flow,
                        "protocol_type": ["QUIC"],
                        "time_format": "relative",
                        "reference_time": 0,
                    },
                },
            }),
            Dialect::Ietf => json!({
                "file_schema": "urn:ietf:params:qlog:file:sequential",
                "serialization_format": "application/qlog+json-seq",
                "title": title,
                "description": description,
                "trace": {
                    "vantage_point": vantage,
                    "common_fields": {
                        "group_id": flow,
                        "time_format": "relative_to_epoch",
                        // A simulator's clock: monotonic, its epoch the start of the run.
                        "reference_time": {"clock_type": "monotonic", "epoch": "unknown"},
                    },
                    "event_schemas": ["urn:ietf:params:qlog:events:quic-12"],
                },
            }),
        }
    }

    /// `parameters_set`: the 0.3 form says who set them in `owner`, quic-events-12 in
    /// `initiator`. One value for every stream type (the model has one).
    pub fn parameters(self, local: bool, p: &TraceParams) -> Value {
        let who = if local { "local" } else { "remote" };
        let mut v = json!({
            "initial_max_data": p.initial_max_data,
            "initial_max_stream_data_bidi_local": p.initial_max_stream_data,
            "initial_max_stream_data_bidi_remote": p.initial_max_stream_data,
            "initial_max_stream_data_uni": p.initial_max_stream_data,
            "max_ack_delay": ms(p.max_ack_delay),
            "ack_delay_exponent": p.ack_delay_exponent,
        });
        v[if self == Dialect::Qvis { "owner" } else { "initiator" }] = json!(who);
        if let Some(m) = p.min_ack_delay {
            v["min_ack_delay"] = json!(ms(m));
        }
        v
    }

    /// `packet_sent` / `packet_received`: header (type, number), `raw.length` (the UDP
    /// payload: the whole QUIC packet) and the frames. `ack_delay_exponent` is the sender's.
    pub fn packet(self, p: &QuicPacket, ack_delay_exponent: u8) -> Value {
        let frames: Vec<Value> = p.frames.iter().map(|f| frame(f, ack_delay_exponent)).collect();
        json!({
            "header": {"packet_type": packet_type(p.space), "packet_number": p.pn},
            "raw": {"length": p.size_bytes(), "payload_length": p.payload_bytes()},
            "frames": frames,
        })
    }

    /// `packet_sent` / `packet_received` of a real stack's datagram (quinn): only what is
    /// readable without its keys: the first packet's type from the unprotected first byte
    /// (RFC 9000 §17: the header form bit, a long header's type bits) and the datagram's length.
    pub fn datagram(self, d: &[u8]) -> Value {
        let t = match d.first() {
            Some(b) if b & 0x80 == 0 => "1RTT",
            Some(b) => ["initial", "0RTT", "handshake", "retry"][usize::from(b >> 4 & 3)],
            None => "unknown",
        };
        json!({"header": {"packet_type": t}, "raw": {"length": d.len()}})
    }

    /// `packet_lost` with its trigger.
    pub fn lost(self, space: u8, pn: u64, bytes: u64, trigger: LossTrigger) -> Value {
        let space = match space {
            0 => SpaceId::Initial,
            1 => SpaceId::Handshake,
            _ => SpaceId::Data,
        };
        let trigger = match trigger {
            LossTrigger::ReorderingThreshold => "reordering_threshold",
            LossTrigger::TimeThreshold => "time_threshold",
        };
        json!({
            "header": {"packet_type": packet_type(space), "packet_number": pn},
            "raw": {"length": bytes},
            "trigger": trigger,
        })
    }

    /// `metrics_updated`: the congestion window is `cwnd` in 0.3 (qvis reads `cwnd`, then
    /// `congestion_window`), `congestion_window` in quic-events-12. Without congestion control
    /// the window (u64::MAX) and an unset ssthresh are left out.
    pub fn metrics(self, m: &TransportMetrics) -> Value {
        let mut v = json!({
            "bytes_in_flight": m.bytes_in_flight,
            "min_rtt": ms(m.min_rtt),
            "smoothed_rtt": ms(m.smoothed_rtt),
            "latest_rtt": ms(m.latest_rtt),
            "rtt_variance": m.rttvar.map(ms),
            "pto_count": m.pto_count,
        });
        if m.cwnd_bytes != u64::MAX {
            v[if self == Dialect::Qvis { "cwnd" } else { "congestion_window" }] = json!(m.cwnd_bytes);
        }
        if m.ssthresh_bytes != u64::MAX {
            v["ssthresh"] = json!(m.ssthresh_bytes);
        }
        v
    }

    /// Stream bytes handed to the application (`data_moved` in 0.3, `stream_data_moved` in
    /// quic-events-12).
    pub fn delivered(self, stream_id: u64, offset: u64, len: u64) -> Value {
        let mut v =
            json!({"stream_id": stream_id, "offset": offset, "from": "transport", "to": "application"});
        match self {
            Dialect::Qvis => v["length"] = json!(len),
            Dialect::Ietf => v["raw"] = json!({"length": len}),
        }
        v
    }
}

/// Milliseconds, as qlog's time and RTT fields want them.
pub fn ms(d: SimDuration) -> f64 {
    d.ps() as f64 * 1e-9
}

fn packet_type(s: SpaceId) -> &'static str {
    match s {
        SpaceId::Initial => "initial",
        SpaceId::Handshake => "handshake",
        SpaceId::Data => "1RTT",
    }
}

/// An ACK frame as qlog writes it: ranges as [smallest, largest], in ascending order (the
/// frame holds them descending); the ECN counts are added by the caller for ACK_ECN.
fn ack(a: &AckFrame, ack_delay_exponent: u8) -> Value {
    let ranges: Vec<Value> =
        a.ranges.iter().rev().map(|&(s, l)| if s == l { json!([s]) } else { json!([s, l]) }).collect();
    let delay_us = a.ack_delay << ack_delay_exponent;
    json!({"frame_type": "ack", "ack_delay": delay_us as f64 / 1e3, "acked_ranges": ranges})
}

/// A frame as qlog writes it (the same in both dialects).
fn frame(f: &Frame, ack_delay_exponent: u8) -> Value {
    match f {
        Frame::Padding(n) => json!({"frame_type": "padding", "length": n}),
        Frame::Ping => json!({"frame_type": "ping"}),
        Frame::Ack(a) => ack(a, ack_delay_exponent),
        Frame::AckEcn(e) => {
            let mut v = ack(&e.ack, ack_delay_exponent);
            v["ect0"] = json!(e.counts.ect0);
            v["ect1"] = json!(e.counts.ect1);
            v["ce"] = json!(e.counts.ce);
            v
        }
        Frame::Crypto(c) => json!({"frame_type": "crypto", "offset": c.offset, "length": c.len}),
        Frame::Stream(s) => {
            json!({"frame_type": "stream", "stream_id": s.id, "offset": s.offset, "length": s.len, "fin": false})
        }
        Frame::MaxData(m) => json!({"frame_type": "max_data", "maximum": m}),
        Frame::MaxStreamData { id, max } => {
            json!({"frame_type": "max_stream_data", "stream_id": id, "maximum": max})
        }
        Frame::DataBlocked(l) => json!({"frame_type": "data_blocked", "limit": l}),
        Frame::StreamDataBlocked { id, limit } => {
            json!({"frame_type": "stream_data_blocked", "stream_id": id, "limit": limit})
        }
        Frame::ConnectionClose { error_code } => {
            json!({"frame_type": "connection_close", "error_space": "transport", "error_code": error_code})
        }
        Frame::HandshakeDone => json!({"frame_type": "handshake_done"}),
        Frame::AckFrequency(a) => json!({
            "frame_type": "ack_frequency",
            "sequence_number": a.seq,
            "ack_eliciting_threshold": a.ack_eliciting_threshold,
            "request_max_ack_delay": a.request_max_ack_delay_us as f64 / 1e3,
            "reordering_threshold": a.reordering_threshold,
        }),
        Frame::ImmediateAck => json!({"frame_type": "immediate_ack"}),
        // qlog's QUIC events define path_challenge and path_response; the multipath frames
        // take the draft's names (draft-ietf-quic-multipath-21 §4), with its field names.
        Frame::PathAck(p) => {
            let mut v = ack(&p.ack, ack_delay_exponent);
            v["frame_type"] = json!("path_ack");
            v["path_id"] = json!(p.path);
            if let Some(c) = p.ecn {
                v["ect0"] = json!(c.ect0);
                v["ect1"] = json!(c.ect1);
                v["ce"] = json!(c.ce);
            }
            v
        }
        Frame::PathAbandon { path, error_code } => {
            json!({"frame_type": "path_abandon", "path_id": path, "error_code": error_code})
        }
        Frame::PathStatus { path, seq, available } => json!({
            "frame_type": if *available { "path_status_available" } else { "path_status_backup" },
            "path_id": path,
            "path_status_sequence_number": seq,
        }),
        Frame::PathChallenge(d) => json!({"frame_type": "path_challenge", "data": format!("{d:016x}")}),
        Frame::PathResponse(d) => json!({"frame_type": "path_response", "data": format!("{d:016x}")}),
    }
}
