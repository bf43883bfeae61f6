//! The scenario schema: one source of truth for TOML files, the Python API and the CLI
//! (all three hand this crate the same JSON document), for the JSON Schema `quicksim schema`
//! writes and for `docs/scenario-reference.md` (`reference`). Unknown keys are errors.
//!
//! `net` holds the links, `flows` the flows (each kind's own table), `dist` the quantities that
//! may be random; a transport's settings (`[quic]`, `[tcp]`, `[quinn]`) are its own
//! configuration type (`quicksim_transport::QuicConfig`, ...), found through the transport
//! registry (`flows::transports!`).

pub mod dist;
pub mod flows;
pub mod net;

pub use dist::{Dist, Quantity, RateDist, SizeDist, TimeDist};
pub use flows::{
    CcCfg, DatagramEcn, FlowCfg, FlowCommon, FlowGroup, FlowKindCfg, OnOffCfg, ProgramCfg, QuicApp, StopMode,
    TransportFlowCfg, UdpCfg,
};
pub use net::{
    DirCfg, DownCfg, DropCfg, Dumbbell, JitterCfg, LinkSpec, LossCfg, ModelCfg, QueueCfg, RateStep, SpikesCfg,
};

use crate::units::Dur;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A scenario. `flows` and the transports' tables are read by `parse` (each kind through its
/// own type) rather than by serde's derive, which sees the rest.
#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A label for the scenario (outputs and plots show it).
    #[serde(default)]
    pub name: Option<String>,
    /// What the scenario is for.
    #[serde(default)]
    pub description: Option<String>,
    /// How long the run lasts, its seed and what it records.
    pub run: RunCfg,
    /// A dumbbell topology: `pairs` sender/receiver hosts on either side of one bottleneck link.
    #[serde(default)]
    pub dumbbell: Option<Dumbbell>,
    /// A general topology's nodes by name (with `links`).
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeCfg>,
    /// A general topology's links.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// The flows (`[[flows]]`); each kind has its own fields.
    #[serde(skip)]
    pub flows: Vec<FlowCfg>,
    /// Defaults for every flow of a transport, by the transport's kind (`[quic]`, `[tcp]`,
    /// `[quinn]`): the transport's settings; a flow's own table of the same name overrides them
    /// key by key.
    #[serde(skip)]
    pub transports: BTreeMap<&'static str, Map<String, Value>>,
    /// Parameter-study plan; read by the Python sweep tooling, ignored by a single run.
    #[serde(default)]
    pub sweep: Option<serde_json::Value>,
    /// Expected results for validations; read by the Python tooling, ignored by a run.
    #[serde(default)]
    pub expect: Option<serde_json::Value>,
}

impl Scenario {
    /// The defaults table of transport `kind` (empty if the scenario has none).
    pub fn transport_table(&self, kind: &str) -> &Map<String, Value> {
        static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        self.transports.get(kind).unwrap_or(&EMPTY)
    }

    /// The scenario as a document of the format (flows and transport tables included; absent
    /// options left out by the caller, `normalize`).
    pub fn to_json(&self) -> Result<Value, serde_json::Error> {
        let mut v = serde_json::to_value(self)?;
        let top = v.as_object_mut().expect("a struct serializes as a table");
        for (kind, table) in &self.transports {
            if !table.is_empty() {
                top.insert(kind.to_string(), Value::Object(table.clone()));
            }
        }
        let flows = self
            .flows
            .iter()
            .filter(|f| f.is_written())
            .map(FlowCfg::to_json)
            .collect::<Result<Vec<_>, _>>()?;
        top.insert("flows".into(), Value::Array(flows));
        Ok(v)
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    /// Simulated time the run lasts.
    pub duration: Dur,
    /// The master seed of every random stream (default 1; `--seed` overrides it).
    #[serde(default)]
    pub seed: Option<u64>,
    /// Bin width of the per-flow and per-link byte counters (default 0.5 s, as the showcase).
    #[serde(default)]
    pub record_interval: Option<Dur>,
    /// Stop after this many events (a safety budget).
    #[serde(default)]
    pub max_events: Option<u64>,
    /// What the run records (the tables and their series).
    #[serde(default)]
    pub record: RecordCfg,
    /// Packet capture (`capture.pcapng` in the output folder): `output::pcap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capture: Option<CaptureCfg>,
    /// "virtual" (default: as fast as the machine can, deterministic) or "real": paced by the
    /// wall clock, so real programs (`kind = "program"` flows) can send through the network
    /// (docs/emulation.md; needs root). A real-time run is not reproducible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
}

/// `run.clock`: what paces the run.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Clock {
    /// Simulated time, as fast as the machine can: deterministic.
    Virtual,
    /// The wall clock: an event is handled when its time has come (docs/emulation.md).
    Real,
}

/// `run.capture`: which link directions and flows go into `capture.pcapng`, and how.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, JsonSchema)]
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
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, JsonSchema)]
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

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordCfg {
    /// Per-flow byte counters per bin.
    #[serde(default = "yes")]
    pub flows: bool,
    /// Queue length on every change: true = every router output, or a list of link names. A
    /// DualPI2 queue adds its L and C queues' lengths, last sojourns, marks and drops
    /// (`l_packets` ... `c_drops`; docs/queue-disciplines.md).
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

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NodeKindCfg {
    Host,
    Router,
}

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeCfg {
    /// "host" (runs flows) or "router" (forwards; its output queues are recorded).
    pub kind: NodeKindCfg,
    /// A host's network interfaces, each with its own address and links: `["wifi", "lte"]`
    /// makes the link endpoints `"<host>.wifi"` and `"<host>.lte"`; the host's own name stands
    /// for its first interface (docs/multipath.md). Default: one interface, the host's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interfaces: Option<Vec<String>>,
}

/// A value's kind and a short view of it, for type errors.
pub(crate) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => format!("number `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "table".into(),
    }
}
