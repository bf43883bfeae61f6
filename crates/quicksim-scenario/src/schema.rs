//! The scenario schema: one source of truth for TOML files, the Python API and the CLI
//! (all three hand this crate the same JSON document). Unknown keys are errors.

use crate::units::{Bytes, Dur, RateVal};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub run: RunCfg,
    #[serde(default)]
    pub dumbbell: Option<Dumbbell>,
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeCfg>,
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    #[serde(default)]
    pub flows: Vec<FlowCfg>,
    /// Defaults for every QUIC flow (a flow's own `quic` table overrides field by field).
    #[serde(default)]
    pub quic: QuicCfg,
    /// Defaults for every TCP flow (`quicksim_transport::tcp::TcpConfig`'s fields, plus `cc`); a
    /// flow's own `tcp` table overrides key by key.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub tcp: serde_json::Map<String, serde_json::Value>,
    /// Defaults for every quinn flow (`quicksim_quinn::QuinnConfig`'s fields); a flow's own
    /// `quinn` table overrides key by key.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub quinn: serde_json::Map<String, serde_json::Value>,
    /// Parameter-study plan; read by the Python sweep tooling, ignored by a single run.
    #[serde(default)]
    pub sweep: Option<serde_json::Value>,
    /// Expected results for validations; read by the Python tooling, ignored by a run.
    #[serde(default)]
    pub expect: Option<serde_json::Value>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    pub duration: Dur,
    #[serde(default)]
    pub seed: Option<u64>,
    /// Bin width of the per-flow and per-link byte counters (default 0.5 s, as the showcase).
    #[serde(default)]
    pub record_interval: Option<Dur>,
    /// Stop after this many events (a safety budget).
    #[serde(default)]
    pub max_events: Option<u64>,
    #[serde(default)]
    pub record: RecordCfg,
    /// Packet capture (`capture.pcapng` in the output folder): `output::pcap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureCfg>,
}

/// `run.capture`: which link directions and flows go into `capture.pcapng`, and how.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CaptureCfg {
    /// Links by name (both directions of each); every link if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<String>>,
    /// Flows by name; every flow if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<Vec<String>>,
    /// Bytes kept of each frame (default 65535, tcpdump's classic); the original length is
    /// always recorded.
    #[serde(default = "default_snaplen")]
    pub snaplen: u32,
    /// `"raw"` (LINKTYPE_RAW: the IPv4 packet) or `"ppp"` (LINKTYPE_PPP: HDLC-like framing).
    #[serde(default = "default_linktype")]
    pub linktype: String,
}

fn default_snaplen() -> u32 {
    65_535
}
fn default_linktype() -> String {
    "raw".into()
}

/// `true`, `false`, or a list of names.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum Select {
    All(bool),
    Names(Vec<String>),
}

impl Select {
    pub fn includes(&self, name: &str) -> bool {
        match self {
            Select::All(b) => *b,
            Select::Names(v) => v.iter().any(|n| n == name),
        }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RecordCfg {
    /// Per-flow byte counters per bin.
    #[serde(default = "yes")]
    pub flows: bool,
    /// Queue length on every change: true = every router output, or a list of link names.
    #[serde(default = "all")]
    pub queues: Select,
    /// Every drop (time, queue, flow, bytes, reason).
    #[serde(default = "yes")]
    pub drops: bool,
    /// Bytes delivered per link direction per bin: true, false or link names.
    #[serde(default = "all")]
    pub links: Select,
    /// Congestion state of QUIC senders on change: true, false or flow names.
    #[serde(default = "all")]
    pub conn: Select,
    /// Per-packet trace (send at the source, receive at the destination) for these flows.
    #[serde(default)]
    pub packets: Vec<String>,
    /// One-way and queueing delay statistics (mean, p50/p95/p99 per flow and per recorded
    /// queue, per bin in `flows` and `links`): true, false (the default: they cost ~4 % of the
    /// run's instructions on the bench's linksharing and ~250 B per idle flow) or flow names.
    #[serde(default = "none", skip_serializing_if = "is_none")]
    pub delays: Select,
    /// qlog files of these QUIC flows (`[names]`, or `{ flows = [...], dialect = "ietf" }`).
    #[serde(default, skip_serializing_if = "crate::output::qlog::QlogCfg::is_empty")]
    pub qlog: crate::output::qlog::QlogCfg,
    /// Cap on samples per recorded series, so long runs stay light.
    #[serde(default = "default_max_samples")]
    pub max_samples: u64,
    /// Record the `conn` state on a grid of this step instead of on every change: a row at
    /// grid time g holds the state in force at g, and a row is written only when the state
    /// changed since the previous grid point (read as a step function, it is the exact state
    /// sampled every step). For long runs whose windows change on every ACK.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conn_interval: Option<Dur>,
}

fn yes() -> bool {
    true
}
fn all() -> Select {
    Select::All(true)
}
fn none() -> Select {
    Select::All(false)
}
fn is_none(s: &Select) -> bool {
    *s == Select::All(false)
}
fn default_max_samples() -> u64 {
    1_000_000
}

impl Default for RecordCfg {
    fn default() -> Self {
        RecordCfg {
            flows: true,
            queues: all(),
            drops: true,
            links: all(),
            conn: all(),
            packets: Vec::new(),
            delays: none(),
            qlog: Default::default(),
            max_samples: default_max_samples(),
            conn_interval: None,
        }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKindCfg {
    Host,
    Router,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    pub kind: NodeKindCfg,
}

/// An output queue: `{ kind = "droptail", packets = 100, bytes = "150kB" }`. `kind` names a
/// queue discipline (default "droptail"); the other fields are that discipline's own settings,
/// checked by it when the network is built (`quicksim_net::qdisc`).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct QueueCfg(pub serde_json::Map<String, serde_json::Value>);

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
pub enum LossCfg {
    None,
    /// Independent loss with probability p.
    Bernoulli {
        p: f64,
    },
    /// Exactly 1 dropped after every `every` delivered (or give `p`: every = 1/p - 1... see docs).
    /// The first one after `first` delivered (0 to `every`; default `every`).
    Periodic {
        every: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first: Option<u64>,
    },
    /// Bursty loss, the two-state Gilbert-Elliott channel (netem's `loss gemodel p r 1-h 1-k`):
    /// Good -> Bad with probability `p` per packet, Bad -> Good with `r`; a packet is lost with
    /// `loss_good` (default 0) in Good and `loss_bad` (default 1) in Bad.
    #[serde(rename = "gilbert_elliott", alias = "gemodel")]
    GilbertElliott {
        p: f64,
        r: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loss_good: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loss_bad: Option<f64>,
    },
}

/// What decides a link direction's serialization times (`quicksim_net::model`).
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "snake_case")]
pub enum ModelCfg {
    /// The default: `rate`, changed by `schedule` and `spikes`.
    FixedRate {},
    /// A mahimahi `mm-link` trace: one line per delivery opportunity, in ms, repeating.
    Trace {
        /// The trace file; a relative path is relative to the scenario file (the Python front
        /// end resolves it), or to the working directory for a scenario given as a dict.
        file: String,
        /// Bytes one opportunity carries (default 1500 B, the format's; mm-link's code: 1504 B).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opportunity: Option<Bytes>,
    },
}

/// Drop exactly these packets (0-based: 0 is the first packet) among those the link direction
/// would deliver, counting every packet or only `flow`'s: ns-3's `ReceiveListErrorModel`.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct DropCfg {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    pub packets: Vec<u64>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct JitterCfg {
    /// Extra delay uniform in [0, max].
    pub max: Dur,
    /// Allow reordering (netem-like); false keeps FIFO order.
    #[serde(default)]
    pub reorder: bool,
}

/// "Spikes": the rate drops to `fraction` of nominal for `duration` every `period`.
#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SpikesCfg {
    pub period: Dur,
    pub duration: Dur,
    pub fraction: f64,
    #[serde(default)]
    pub start: Option<Dur>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    pub at: Dur,
    pub rate: RateVal,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct DownCfg {
    pub from: Dur,
    pub to: Dur,
}

/// Settings of one direction of a link; link-level values apply to both directions,
/// `forward` (a->b) and `reverse` (b->a) override them.
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct DirCfg {
    #[serde(default)]
    pub rate: Option<RateVal>,
    #[serde(default)]
    pub delay: Option<Dur>,
    #[serde(default)]
    pub queue: Option<QueueCfg>,
    #[serde(default)]
    pub loss: Option<LossCfg>,
    #[serde(default)]
    pub jitter: Option<JitterCfg>,
    /// Most packets the direction holds in all, propagating ones included (netem's `limit`).
    #[serde(default)]
    pub hold_limit: Option<u64>,
    #[serde(default)]
    pub schedule: Option<Vec<RateStep>>,
    #[serde(default)]
    pub spikes: Option<SpikesCfg>,
    #[serde(default)]
    pub down: Option<Vec<DownCfg>>,
    /// The link model (default: fixed rate); a trace replaces `rate`, `schedule` and `spikes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelCfg>,
    /// Packets dropped by number, per direction (ns-3's `ReceiveListErrorModel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<Vec<DropCfg>>,
}

/// A link. In `links` it needs `name`, `a` and `b`; in `dumbbell` those are implied.
/// (One struct rather than `#[serde(flatten)]`, which serde cannot combine with
/// `deny_unknown_fields`.)
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub a: Option<String>,
    #[serde(default)]
    pub b: Option<String>,
    #[serde(default)]
    pub rate: Option<RateVal>,
    #[serde(default)]
    pub delay: Option<Dur>,
    #[serde(default)]
    pub mtu: Option<Bytes>,
    /// Per-frame link-layer overhead (default 7 B, INET's PPP).
    #[serde(default)]
    pub overhead: Option<Bytes>,
    #[serde(default)]
    pub queue: Option<QueueCfg>,
    #[serde(default)]
    pub loss: Option<LossCfg>,
    #[serde(default)]
    pub jitter: Option<JitterCfg>,
    /// Most packets the direction holds in all, propagating ones included (netem's `limit`).
    #[serde(default)]
    pub hold_limit: Option<u64>,
    #[serde(default)]
    pub schedule: Option<Vec<RateStep>>,
    #[serde(default)]
    pub spikes: Option<SpikesCfg>,
    #[serde(default)]
    pub down: Option<Vec<DownCfg>>,
    /// The link model (default: fixed rate); a trace replaces `rate`, `schedule` and `spikes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelCfg>,
    /// Packets dropped by number, per direction (ns-3's `ReceiveListErrorModel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop: Option<Vec<DropCfg>>,
    #[serde(default)]
    pub forward: Option<DirCfg>,
    #[serde(default)]
    pub reverse: Option<DirCfg>,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// Number of sender/receiver pairs: hosts sender1..N, receiver1..N, routers router1, router2.
    pub pairs: u32,
    pub bottleneck: LinkSpec,
    /// Access links (default 1 Gbit/s, no delay, as the INET showcase).
    #[serde(default)]
    pub access: LinkSpec,
    /// Per-pair one-way delay of the sender's access link (asymmetric RTTs).
    #[serde(default)]
    pub access_delays: Option<Vec<Dur>>,
    /// MTU of every link unless a link sets its own (default 1500 B).
    #[serde(default)]
    pub mtu: Option<Bytes>,
}

/// A constant size, or a distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeDist {
    Const(u64),
    Uniform(u64, u64),
}

impl SizeDist {
    /// Always the same size (nothing random to draw).
    pub fn is_const(&self) -> bool {
        matches!(self, SizeDist::Const(_))
    }
}

/// A constant time, or a distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum TimeDist {
    Const(quicksim_engine::SimDuration),
    Uniform(quicksim_engine::SimDuration, quicksim_engine::SimDuration),
    Exponential(quicksim_engine::SimDuration),
}

impl TimeDist {
    /// Always the same time (nothing random to draw).
    pub fn is_const(&self) -> bool {
        matches!(self, TimeDist::Const(_))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DistTable {
    dist: String,
    #[serde(default)]
    value: Option<serde_json::Value>,
    #[serde(default)]
    min: Option<serde_json::Value>,
    #[serde(default)]
    max: Option<serde_json::Value>,
    #[serde(default)]
    mean: Option<serde_json::Value>,
}

/// Parses one field of a distribution table (value, min, max, mean) into a quantity.
type FieldParser<'a, T> = &'a dyn Fn(&Option<serde_json::Value>, &str) -> Result<T, String>;

fn field_str(v: &Option<serde_json::Value>, name: &str, dist: &str) -> Result<String, String> {
    match v {
        Some(serde_json::Value::String(s)) => Ok(s.clone()),
        Some(other) => Ok(other.to_string()),
        None => Err(format!("distribution {dist:?} needs `{name}`")),
    }
}

macro_rules! dist_de {
    ($ty:ident, $parse:path, $constv:expr, $build:expr, $what:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!(
                            "a ",
                            $what,
                            " with a unit, or a table like { dist = \"uniform\", min = ..., max = ... }"
                        ))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map($constv).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<$ty, A::Error> {
                        let t = DistTable::deserialize(de::value::MapAccessDeserializer::new(m))?;
                        let f = |v: &Option<serde_json::Value>, n: &str| {
                            field_str(v, n, &t.dist).and_then(|s| $parse(&s))
                        };
                        $build(&t, &f).map_err(<A::Error as de::Error>::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

dist_de!(
    SizeDist,
    crate::units::parse_bytes,
    SizeDist::Const,
    |t: &DistTable, f: FieldParser<u64>| -> Result<SizeDist, String> {
        match t.dist.as_str() {
            "constant" => Ok(SizeDist::Const(f(&t.value, "value")?)),
            "uniform" => {
                let (a, b) = (f(&t.min, "min")?, f(&t.max, "max")?);
                if a > b {
                    return Err(format!("uniform min {a} B is larger than max {b} B"));
                }
                Ok(SizeDist::Uniform(a, b))
            }
            other => Err(format!("{other:?} is not a size distribution; use \"constant\" or \"uniform\"")),
        }
    },
    "size"
);

dist_de!(
    TimeDist,
    crate::units::parse_duration,
    TimeDist::Const,
    |t: &DistTable, f: FieldParser<quicksim_engine::SimDuration>| -> Result<TimeDist, String> {
        match t.dist.as_str() {
            "constant" => Ok(TimeDist::Const(f(&t.value, "value")?)),
            "uniform" => {
                let (a, b) = (f(&t.min, "min")?, f(&t.max, "max")?);
                if a > b {
                    return Err(format!("uniform min {a} is larger than max {b}"));
                }
                Ok(TimeDist::Uniform(a, b))
            }
            "exponential" => Ok(TimeDist::Exponential(f(&t.mean, "mean")?)),
            other => Err(format!(
                "{other:?} is not a time distribution; use \"constant\", \"uniform\" or \"exponential\""
            )),
        }
    },
    "duration"
);

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FlowKind {
    Udp,
    Onoff,
    Quic,
    Tcp,
    /// The real quinn-proto QUIC stack (`quicksim-quinn`).
    Quinn,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum QuicApp {
    /// Always keeps the send queue full.
    Saturated,
    /// `message_size` bytes every `interval`.
    Messages,
    /// `bytes` in total as fast as possible; records the completion time.
    Bulk,
}

#[derive(Serialize, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    pub name: String,
    pub kind: FlowKind,
    pub src: String,
    pub dst: String,
    #[serde(default)]
    pub start: Option<Dur>,
    #[serde(default)]
    pub stop: Option<Dur>,
    /// QUIC/TCP: when the connection is opened (the handshake), if before `start` (when the
    /// application starts handing over data); unset: at `start`. INET's `connectTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Dur>,
    /// QUIC/TCP saturated or bulk: hand the transport whole writes of this size while its send
    /// queue is below the limit (INET's generator with `packetInterval = 0`: the queue then holds
    /// up to limit + write_size); unset: fill the queue to exactly its limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_size: Option<Bytes>,
    /// UDP/ON-OFF: payload size per datagram. QUIC messages: message size.
    #[serde(default)]
    pub size: Option<SizeDist>,
    /// UDP/ON-OFF: time between datagrams; QUIC messages: time between messages.
    #[serde(default)]
    pub interval: Option<TimeDist>,
    /// UDP/ON-OFF: constant payload bit rate (instead of `interval`).
    #[serde(default)]
    pub rate: Option<RateVal>,
    /// ON-OFF: ON and OFF period lengths (typically exponential).
    #[serde(default)]
    pub on: Option<TimeDist>,
    #[serde(default)]
    pub off: Option<TimeDist>,
    /// QUIC application.
    #[serde(default)]
    pub app: Option<QuicApp>,
    /// QUIC bulk: total bytes.
    #[serde(default)]
    pub bytes: Option<Bytes>,
    /// QUIC: number of streams the application spreads data over (round robin).
    #[serde(default)]
    pub streams: Option<u32>,
    #[serde(default)]
    pub quic: Option<QuicCfg>,
    /// TCP: this flow's settings over the scenario's `[tcp]` table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<serde_json::Map<String, serde_json::Value>>,
    /// quinn: this flow's settings over the scenario's `[quinn]` table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quinn: Option<serde_json::Map<String, serde_json::Value>>,
}

/// QUIC options; `None` = the default (INET model values unless noted in the docs).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct QuicCfg {
    /// "inet" (13 B short header, no AEAD tag) or "rfc9000".
    pub header: Option<String>,
    pub dcid_len: Option<u8>,
    /// Do the 1-RTT handshake (false: start established, as the 2020 paper's model).
    pub handshake: Option<bool>,
    /// The congestion controller: `"cubic"`, or a table with its settings
    /// `{ algo = "cubic", beta = 0.7 }` (a flow's `cc` replaces the whole table).
    pub cc: Option<CcCfg>,
    /// NewReno's `exact_increase` (the older key; `cc = { algo = "newreno", exact_increase =
    /// false }` is the same). Ignored by other controllers.
    pub exact_increase: Option<bool>,
    pub partial_window: Option<bool>,
    pub pacing: Option<bool>,
    pub initial_rtt: Option<Dur>,
    pub max_ack_delay: Option<Dur>,
    pub ack_ratio: Option<u64>,
    pub ibit: Option<bool>,
    /// draft-ietf-quic-ack-frequency min_ack_delay, e.g. "1ms": accept ACK_FREQUENCY and
    /// IMMEDIATE_ACK (default: extension off).
    pub min_ack_delay: Option<Dur>,
    /// Who sets the ACK rate: "receiver" (default: `ack_ratio`), "fixed" (ACK_FREQUENCY with
    /// `ack_frequency_threshold`) or "cwnd" (cwnd/4 packets per ACK, at most `ack_frequency_max`).
    pub ack_policy: Option<String>,
    /// Ack-Eliciting Threshold of the "fixed" policy: an ACK after more than N packets (1:(N+1)).
    pub ack_frequency_threshold: Option<u64>,
    /// Cap of the "cwnd" policy in packets per ACK (default 10).
    pub ack_frequency_max: Option<u64>,
    /// Requested Max Ack Delay (default: the peer's max_ack_delay).
    pub ack_frequency_max_ack_delay: Option<Dur>,
    /// Reordering Threshold (default 1 = RFC 9000 behaviour; 0 = ignore reordering).
    pub ack_frequency_reordering: Option<u64>,
    /// IMMEDIATE_ACK in the last packet before the congestion window blocks.
    pub immediate_ack_on_block: Option<bool>,
    pub bundle_ack: Option<bool>,
    /// ECN (RFC 9000 §13.4, RFC 9002 §7.1): ECT(0) on data packets, ECN counts in ACK_ECN
    /// frames, validation, a CE mark as a congestion event once per round trip. Default false.
    pub ecn: Option<bool>,
    pub max_ack_ranges: Option<u64>,
    pub initial_max_data: Option<Bytes>,
    pub initial_max_stream_data: Option<Bytes>,
    pub max_data_threshold: Option<f64>,
    pub max_stream_data_threshold: Option<f64>,
    pub send_queue_limit: Option<Bytes>,
    pub send_queue_low_water: Option<f64>,
    /// INET's roundConsumedDataValue: extend the credit by (window - threshold) when the
    /// consumption since the last update is below the threshold, so updates keep pace with
    /// bursts (the flow-control validation needs it).
    pub round_consumed_data: Option<bool>,
    /// Largest QUIC packet; default path MTU - 28 (1252 B at MTU 1280).
    pub max_packet_size: Option<Bytes>,
    /// Initial congestion window in packets; default RFC 9002 §7.2's formula.
    pub initial_window: Option<u64>,
}

/// `cc = "name"` or `cc = { algo = "name", ...settings }`: a controller's registry name and its
/// settings, checked when the flows are built (against the built-in algorithms, then the run's
/// plugins), where each algorithm deserializes its own settings.
#[derive(Debug, Clone, PartialEq)]
pub struct CcCfg {
    pub algo: String,
    /// The table without `algo` (empty for the short form).
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// Written back in the short form when there are no settings, else as the table.
impl Serialize for CcCfg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.params.is_empty() {
            return s.serialize_str(&self.algo);
        }
        let mut m = self.params.clone();
        m.insert("algo".into(), serde_json::Value::String(self.algo.clone()));
        m.serialize(s)
    }
}

impl<'de> Deserialize<'de> for CcCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CcCfg;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a controller name like \"cubic\", or a table like { algo = \"cubic\", beta = 0.7 }",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CcCfg, E> {
                Ok(CcCfg { algo: s.to_string(), params: serde_json::Map::new() })
            }
            fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<CcCfg, A::Error> {
                let mut params = serde_json::Map::deserialize(de::value::MapAccessDeserializer::new(m))?;
                match params.remove("algo") {
                    Some(serde_json::Value::String(algo)) => Ok(CcCfg { algo, params }),
                    Some(other) => Err(de::Error::custom(format!(
                        "`algo` must be a controller name like \"cubic\", not {other}"
                    ))),
                    None => {
                        Err(de::Error::custom("missing field `algo` (the controller's name, e.g. \"cubic\")"))
                    }
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl QuicCfg {
    /// Field-by-field overlay: values set in `over` win.
    pub fn overlay(&self, over: &QuicCfg) -> QuicCfg {
        macro_rules! pick {
            ($($f:ident),*) => { QuicCfg { $($f: over.$f.clone().or_else(|| self.$f.clone())),* } };
        }
        pick!(
            header,
            dcid_len,
            handshake,
            cc,
            exact_increase,
            partial_window,
            pacing,
            initial_rtt,
            max_ack_delay,
            ack_ratio,
            ibit,
            min_ack_delay,
            ack_policy,
            ack_frequency_threshold,
            ack_frequency_max,
            ack_frequency_max_ack_delay,
            ack_frequency_reordering,
            immediate_ack_on_block,
            bundle_ack,
            ecn,
            max_ack_ranges,
            initial_max_data,
            initial_max_stream_data,
            max_data_threshold,
            max_stream_data_threshold,
            send_queue_limit,
            send_queue_low_water,
            round_consumed_data,
            max_packet_size,
            initial_window
        )
    }
}

/// Parse a scenario from JSON, with errors that name the field path.
pub fn parse(json: &str) -> Result<Scenario, crate::ScenarioError> {
    let de = &mut serde_json::Deserializer::from_str(json);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let msg = e.inner().to_string();
        // serde_json appends " at line L column C", meaningless for a dict from TOML.
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        crate::ScenarioError::new(if path == "." { String::new() } else { path }, msg)
    })
}
