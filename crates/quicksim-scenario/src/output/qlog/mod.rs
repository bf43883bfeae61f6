//! qlog output (`run.record.qlog`): one JSON-SEQ file (RFC 7464: each record starts with the
//! Record Separator 0x1E and ends with a newline) per end of each listed QUIC connection,
//! `<flow>.client.sqlog` and `<flow>.server.sqlog`, built from the transport events at the
//! endpoint boundary. Time is simulated time in ms since the start of the run.
//!
//! Events: `parameters_set` (ours, and the peer's when it takes effect), `packet_sent` /
//! `packet_received` with the frames (ACK frames with `acked_ranges`), `packet_lost` with its
//! trigger, `metrics_updated` (the sender's window, bytes in flight, RTTs; written exactly when
//! the `conn` table gets a row, so both series are the same), `congestion_state_updated`
//! (slow_start, congestion_avoidance, recovery, derived from the same samples) and
//! `data_moved` (stream bytes handed to the application). [`events::Dialect`] says how each
//! is named. The files reach the output as the rows of a `qlog` table (file name, text),
//! which the Python side writes out as files. A flow name is any string, so the `file` column
//! is a label, not a path: the Python side names each file by `quicksim._io.file_name`, the one
//! rule for names that become file names (`a/b` -> `a%2Fb`; nothing lands outside `--out`).
//!
//! A quinn flow's files hold, in a build with the `quinn-qlog` feature, quinn-proto's own qlog
//! (the `qlog` crate 0.15's JSON-SEQ, header and events as quinn writes them), passed through
//! unchanged ([`TransportEvent::Qlog`]; the dialect does not apply). Without it (the default:
//! see the feature's cost in `Cargo.toml`), the events quicksim derives from quinn's datagrams
//! and statistics: `packet_sent`/`packet_received` with the first packet's type and the length
//! (the rest is encrypted), `metrics_updated` (window, smoothed and minimum RTT from
//! `Connection::stats()`) and `data_moved`.

pub mod events;

use super::sinks::{RunInfo, Sink, TableCut, TransportEvent};
use super::{Column, Table};
use events::{ms, Dialect};
use quicksim_engine::SimTime;
use quicksim_quinn::QuinnPacket;
use quicksim_transport::quic::QuicPacket;
use quicksim_transport::{AppEvent, TraceEvent, TransportMetrics};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `run.record.qlog`: a list of QUIC flow names (qvis's dialect), or a table with the dialect.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, schemars::JsonSchema)]
#[serde(untagged)]
pub enum QlogCfg {
    Flows(Vec<String>),
    With(QlogTable),
}

/// `run.record.qlog = { flows = [...], dialect = "ietf" }`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QlogTable {
    /// The QUIC flows to write a qlog of.
    pub flows: Vec<String>,
    /// "qvis" (default: qlog 0.3, what qvis opens) or "ietf" (the current drafts).
    #[serde(default = "qvis")]
    pub dialect: Dialect,
}

fn qvis() -> Dialect {
    Dialect::Qvis
}

impl Default for QlogCfg {
    fn default() -> Self {
        QlogCfg::Flows(Vec::new())
    }
}

impl QlogCfg {
    pub fn flows(&self) -> &[String] {
        match self {
            QlogCfg::Flows(v) => v,
            QlogCfg::With(t) => &t.flows,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.flows().is_empty() && self.dialect() == Dialect::Qvis
    }
    pub fn dialect(&self) -> Dialect {
        match self {
            QlogCfg::Flows(_) => Dialect::Qvis,
            QlogCfg::With(t) => t.dialect,
        }
    }
}

/// One connection end's file being written.
struct End {
    text: String,
    /// `ack_delay_exponent` of this end (for the ACK frames it sends) and of its peer.
    exponent: [u8; 2],
    /// The congestion state last written (client only).
    state: Option<&'static str>,
    /// Multipath: the paths this end's file has a `path_assigned` event of.
    assigned: Vec<bool>,
}

/// The qlog writer of a run.
pub struct QlogSink {
    dialect: Dialect,
    /// Per flow: traced, and its two ends once they exist.
    selected: Vec<bool>,
    /// Per flow: its stack writes its own qlog (quinn with `quinn-qlog`), passed through.
    own: Vec<bool>,
    /// Per flow: a real stack whose events are derived from its datagrams and statistics
    /// (quinn without `quinn-qlog`).
    derived: Vec<bool>,
    /// Per flow: several paths (multipath QUIC): its packet events name their path.
    multipath: Vec<bool>,
    ends: Vec<Option<Box<[End; 2]>>>,
    /// Bytes of text the files may hold together (their share of the memory budget), the
    /// bytes they hold, and the time of the first record left out once they are full.
    cap_bytes: u64,
    bytes: u64,
    cut: Option<u64>,
}

const ROLES: [&str; 2] = ["client", "server"];

impl QlogSink {
    /// Traces the flows marked in `selected`.
    pub fn new(selected: Vec<bool>, dialect: Dialect) -> QlogSink {
        let ends = selected.iter().map(|_| None).collect();
        let own = vec![false; selected.len()];
        let (derived, multipath) = (own.clone(), own.clone());
        QlogSink {
            dialect,
            selected,
            own,
            derived,
            multipath,
            ends,
            cap_bytes: u64::MAX,
            bytes: 0,
            cut: None,
        }
    }

    /// The sink `run.record.qlog` asks for (none for an empty list), for flows `names` of
    /// kinds `kinds` (`multipath`: those with several paths), its files holding at most
    /// `cap_bytes` together; the error (field, message) names a flow that is not there or not
    /// QUIC.
    pub(crate) fn from_record(
        cfg: &QlogCfg,
        names: &[String],
        kinds: &[&str],
        multipath: Vec<bool>,
        cap_bytes: u64,
    ) -> Result<Vec<Box<dyn Sink>>, (&'static str, String)> {
        if cfg.flows().is_empty() {
            return Ok(Vec::new());
        }
        let mut sel = vec![false; names.len()];
        for n in cfg.flows() {
            let Some(i) = names.iter().position(|x| x == n) else {
                return Err(("run.record.qlog", format!("{n:?} is not a flow")));
            };
            if !matches!(kinds[i], "quic" | "quinn") {
                let kind = kinds[i];
                return Err((
                    "run.record.qlog",
                    format!("{n:?} is a {kind} flow; qlog is written for QUIC and quinn flows"),
                ));
            }
            sel[i] = true;
        }
        let mut sink = QlogSink::new(sel, cfg.dialect());
        sink.cap_bytes = cap_bytes;
        sink.multipath = multipath;
        let quinn: Vec<bool> = kinds.iter().map(|&k| k == "quinn").collect();
        if cfg!(feature = "quinn-qlog") {
            sink.own = quinn;
        } else {
            sink.derived = quinn;
        }
        Ok(vec![Box::new(sink)])
    }

    fn record(&mut self, now: SimTime, flow: u32, side: u8, category: &str, event: &str, data: Value) {
        self.record_on(now, flow, side, category, event, data, None);
    }

    /// `record` of an event on a path of a multipath connection (`path`): the event's `path`
    /// field (qlog main schema: the PathID the event belongs to, a string).
    #[allow(clippy::too_many_arguments)]
    fn record_on(
        &mut self,
        now: SimTime,
        flow: u32,
        side: u8,
        category: &str,
        event: &str,
        data: Value,
        path: Option<u8>,
    ) {
        if self.full(now) {
            return;
        }
        let mut rec = serde_json::json!({
            "time": ms(quicksim_engine::SimDuration(now.0)),
            "name": self.dialect.name(category, event),
            "data": data,
        });
        if let Some(p) = path {
            rec["path"] = Value::String(p.to_string());
        }
        let text = &mut self.end(flow, side).text;
        let before = text.len();
        push_record(text, &rec);
        let added = text.len() - before;
        self.bytes += added as u64;
    }

    /// The files hold their share of the memory budget: nothing more is written (whole
    /// records only, so each file stays valid JSON-SEQ), and the first time left out is noted.
    #[inline]
    fn full(&mut self, now: SimTime) -> bool {
        if self.bytes < self.cap_bytes {
            return false;
        }
        self.cut.get_or_insert(now.0);
        true
    }

    /// Flow `flow`'s end `side`, its file started on first use (the header needs no flow name:
    /// it is written at `finish`).
    fn end(&mut self, flow: u32, side: u8) -> &mut End {
        let e = self.ends[flow as usize].get_or_insert_with(|| {
            let new = || End { text: String::new(), exponent: [3, 3], state: None, assigned: Vec::new() };
            Box::new([new(), new()])
        });
        &mut e[side as usize]
    }

    fn metrics(&mut self, now: SimTime, flow: u32, side: u8, m: &TransportMetrics) {
        let data = self.dialect.metrics(m);
        self.record(now, flow, side, "recovery", "metrics_updated", data);
        // RFC 9002's states for NewReno-like controllers (qlog leaves the names to the stack).
        let state = if m.in_recovery {
            "recovery"
        } else if m.ssthresh_bytes == u64::MAX || m.cwnd_bytes < m.ssthresh_bytes {
            "slow_start"
        } else {
            "congestion_avoidance"
        };
        let old = self.end(flow, side).state.replace(state);
        if old != Some(state) {
            let mut data = serde_json::json!({"new": state});
            if let Some(o) = old {
                data["old"] = serde_json::json!(o);
            }
            self.record(now, flow, side, "recovery", "congestion_state_updated", data);
        }
    }
}

/// Appends one JSON-SEQ record.
fn push_record(out: &mut String, v: &Value) {
    out.push('\u{1e}');
    out.push_str(&v.to_string());
    out.push('\n');
}

impl Sink for QlogSink {
    fn wants_transport_events(&self) -> bool {
        true
    }

    fn traces(&self, flow: u32) -> bool {
        self.selected[flow as usize]
    }

    fn transport_event(&mut self, now: SimTime, flow: u32, side: u8, ev: TransportEvent<'_>) {
        if !self.selected[flow as usize] {
            return;
        }
        if self.own[flow as usize] {
            if let TransportEvent::Qlog(text) = ev {
                if !self.full(now) {
                    self.bytes += text.len() as u64;
                    self.end(flow, side).text.push_str(text);
                }
            }
            return;
        }
        let d = self.dialect;
        if self.derived[flow as usize] {
            match ev {
                TransportEvent::PacketSent { packet, .. } | TransportEvent::PacketReceived { packet, .. } => {
                    let Some(p) = packet.downcast_ref::<QuinnPacket>() else { return };
                    let name = if matches!(ev, TransportEvent::PacketSent { .. }) {
                        "packet_sent"
                    } else {
                        "packet_received"
                    };
                    self.record(now, flow, side, "transport", name, d.datagram(&p.0));
                    return;
                }
                // quinn exposes no ssthresh or recovery state: no congestion_state_updated.
                // Only what `Connection::stats()` gives (window, smoothed and minimum RTT).
                TransportEvent::MetricsUpdated(m) => {
                    let mut v = d.metrics(m);
                    if let Some(o) = v.as_object_mut() {
                        for k in ["bytes_in_flight", "latest_rtt", "rtt_variance", "pto_count"] {
                            o.remove(k);
                        }
                    }
                    self.record(now, flow, side, "recovery", "metrics_updated", v);
                    return;
                }
                _ => {}
            }
        }
        match ev {
            TransportEvent::PacketSent { packet, .. } | TransportEvent::PacketReceived { packet, .. } => {
                let Some(p) = packet.downcast_ref::<QuicPacket>() else { return };
                let sent = matches!(ev, TransportEvent::PacketSent { .. });
                let exp = self.end(flow, side).exponent[usize::from(!sent)];
                let name = if sent { "packet_sent" } else { "packet_received" };
                if !self.multipath[flow as usize] {
                    self.record(now, flow, side, "transport", name, d.packet(p, exp));
                    return;
                }
                // Multipath: a path's first packet at this end assigns its id (quic-events'
                // `path_assigned`), and every packet event names its path.
                let e = self.end(flow, side);
                let i = usize::from(p.path);
                if e.assigned.len() <= i {
                    e.assigned.resize(i + 1, false);
                }
                if !std::mem::replace(&mut e.assigned[i], true) {
                    let data = serde_json::json!({"path_id": p.path.to_string()});
                    self.record(now, flow, side, "connectivity", "path_assigned", data);
                }
                self.record_on(now, flow, side, "transport", name, d.packet(p, exp), Some(p.path));
            }
            TransportEvent::Trace(TraceEvent::ParametersSet { local, params }) => {
                self.end(flow, side).exponent[usize::from(!*local)] = params.ack_delay_exponent;
                self.record(now, flow, side, "transport", "parameters_set", d.parameters(*local, params));
            }
            TransportEvent::Trace(&TraceEvent::PacketLost { space, pn, bytes, trigger, path }) => {
                let data = d.lost(space, pn, bytes, trigger);
                let path = self.multipath[flow as usize].then_some(path);
                self.record_on(now, flow, side, "recovery", "packet_lost", data, path);
            }
            TransportEvent::MetricsUpdated(m) => self.metrics(now, flow, side, m),
            TransportEvent::App(AppEvent::StreamData { stream_id, offset, len }) => {
                let data = d.delivered(*stream_id, *offset, *len);
                self.record(now, flow, side, "transport", "data_moved", data);
            }
            TransportEvent::App(_) | TransportEvent::Qlog(_) => {}
        }
    }

    fn truncated_tables(&self) -> Vec<TableCut> {
        self.cut.map(|t_ps| TableCut { table: "qlog", t_ps, rows: self.bytes }).into_iter().collect()
    }

    /// The `qlog` table: one row per file (`file`, `text`), in flow order, client first.
    fn finish(&mut self, info: &RunInfo<'_>) -> Vec<(String, Table)> {
        let (mut files, mut texts) = (Vec::new(), Vec::new());
        for (f, ends) in self.ends.iter_mut().enumerate() {
            let Some(ends) = ends else { continue };
            let name = &info.flow_names[f];
            for (side, end) in ends.iter_mut().enumerate() {
                let mut text = String::new();
                // A stack's own qlog starts with its own header.
                if !self.own[f] {
                    push_record(&mut text, &self.dialect.header(name, ROLES[side]));
                }
                text.push_str(&std::mem::take(&mut end.text));
                files.push(format!("{name}.{}.sqlog", ROLES[side]));
                texts.push(text);
            }
        }
        vec![("qlog".into(), vec![("file".into(), Column::Str(files)), ("text".into(), Column::Str(texts))])]
    }
}
