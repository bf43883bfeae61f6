//! Flows in the scenario format. Every flow has the fields of [`FlowCommon`] and `kind`; the
//! rest is its kind's own table: UDP ([`UdpCfg`]), ON-OFF ([`OnOffCfg`]), or, for a transport of
//! the registry (`flows::transports!`: "quic", "tcp", "quinn"), the application fields of
//! [`TransportFlowCfg`] plus the transport's own settings under its kind's name (`quic = {..}`).
//! Each kind's table denies unknown keys, so a field of another kind ("a `tcp` table on a QUIC
//! flow") is an error by construction, not by a list of checks.

use super::dist::{RateDist, SizeDist, TimeDist};
use crate::units::{Bytes, Dur};
use crate::ScenarioError;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// What every flow has besides its `kind`.
#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowCommon {
    /// The flow's name (unique; outputs are keyed by it).
    pub name: String,
    /// The sending host.
    pub src: String,
    /// The receiving host.
    pub dst: String,
    /// When the flow starts sending (default 0 s): a time or a distribution, drawn once per
    /// flow from the flow's own stream (`meta.drawn` in summary.json shows the value drawn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<TimeDist>,
    /// When the flow stops (default: the end of the run; a time or a distribution, drawn once).
    /// What stopping means is `stop_mode`. A drawn stop before the drawn start ends the flow
    /// at its start: it sends nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<TimeDist>,
    /// What happens at `stop`: "send" (default) or "write". "send": the flow stops sending at
    /// `stop`: udp and onoff send no more datagrams; quic and quinn close the connection
    /// (CONNECTION_CLOSE: unsent data is dropped); tcp aborts the connection (a RST, RFC 9293
    /// §3.10.5: unsent data is dropped, the receiver tears down on the RST). "write": the
    /// application stops writing and what it wrote is still delivered: tcp sends the rest of
    /// its send buffer, then its FIN; quic closes the connection once every byte written is
    /// acknowledged (the model's streams carry no FIN bit); udp and onoff as "send"; quinn has
    /// no "write".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_mode: Option<StopMode>,
    /// A flow group: this table makes `count` flows named `<name>-0` .. `<name>-<count-1>`,
    /// each drawing its random values (start, stop, sizes) from its own stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// A group's member `i` starts `i` × `stagger` after its (drawn) `start` (default 0 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stagger: Option<Dur>,
    /// Extra one-way delay of this flow's packets (default 0 s; a time or a distribution, drawn
    /// once per flow): each packet it sends, in either direction, enters the network this much
    /// later, as over an access link of its own, so the flow's base RTT is its route's
    /// (`meta.network`, shared by the flows between two hosts) plus twice this: flows with
    /// different RTTs on one dumbbell pair. Counted in the flow's one-way delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_delay: Option<TimeDist>,
}

impl FlowCommon {
    /// The keys of a flow table that are `FlowCommon`'s (checked against its schema in a test).
    pub(crate) const FIELDS: [&'static str; 9] =
        ["name", "src", "dst", "start", "stop", "stop_mode", "count", "stagger", "extra_delay"];
}

/// What a flow's `stop` stops (`FlowCommon::stop_mode`).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StopMode {
    /// The flow stops sending: queued data is dropped (tcp: a RST).
    #[default]
    Send,
    /// The application stops writing; what it wrote is still delivered (tcp: then a FIN).
    Write,
}

impl StopMode {
    /// The name as scenario files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            StopMode::Send => "send",
            StopMode::Write => "write",
        }
    }
}

/// A flow group as written: the name its members' names derive from, the member count and
/// the members' start offsets. One per group, shared by its members.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowGroup {
    pub name: String,
    pub count: u32,
    pub stagger: Option<Dur>,
}

/// The settings of a datagram source, written once for both kinds that have them.
macro_rules! with_datagram_settings {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident: $t:ty,)* }) => {
        $(#[$m])*
        pub struct $name {
            /// Payload bytes per datagram (a size or a distribution; required).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub size: Option<SizeDist>,
            /// Time between datagrams (a duration or a distribution); or give `rate`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub interval: Option<TimeDist>,
            /// Payload bit rate, instead of `interval`: a rate, or a distribution drawn once
            /// per flow (the source then sends at that constant rate).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub rate: Option<RateDist>,
            /// The ECN field of every datagram: "not-ect" (default), "ect0" or "ect1" (an
            /// unresponsive source that claims to be L4S, RFC 9331). The source never reacts.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ecn: Option<DatagramEcn>,
            $($(#[$fm])* pub $f: $t,)*
        }
    };
}

/// The ECN codepoint a datagram source writes (CE is a router's to set, so not offered).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
pub enum DatagramEcn {
    #[serde(rename = "not-ect")]
    NotEct,
    #[serde(rename = "ect0")]
    Ect0,
    #[serde(rename = "ect1")]
    Ect1,
}

impl DatagramEcn {
    /// The network's codepoint.
    pub fn codepoint(self) -> quicksim_net::Ecn {
        match self {
            DatagramEcn::NotEct => quicksim_net::Ecn::NotEct,
            DatagramEcn::Ect0 => quicksim_net::Ecn::Ect0,
            DatagramEcn::Ect1 => quicksim_net::Ecn::Ect1,
        }
    }
}

with_datagram_settings! {
    /// `kind = "udp"`: datagrams of `size` every `interval` (or at `rate`).
    #[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct UdpCfg {}
}

with_datagram_settings! {
    /// `kind = "onoff"`: a UDP source that alternates ON periods (sending as `udp`) and silent
    /// OFF periods.
    #[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct OnOffCfg {
        /// ON period lengths (typically `{ dist = "exponential", mean = "1s" }`; required).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub on: Option<TimeDist>,
        /// OFF period lengths (required).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub off: Option<TimeDist>,
    }
}

/// The application on top of a transport flow.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QuicApp {
    /// Always keeps the send queue full.
    Saturated,
    /// `size` bytes every `interval`.
    Messages,
    /// `bytes` in total as fast as possible; records the completion time.
    Bulk,
}

/// A flow over a transport of the registry: its application (the same for every transport) and
/// the transport's own settings.
#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransportFlowCfg {
    /// The transport (the flow's `kind`): a name of `flows::transports!`.
    #[serde(skip)]
    pub kind: &'static str,
    /// The flow's own settings table (`quic = {..}`, `tcp = {..}`), over the scenario's table
    /// of the same name key by key; its keys are the transport's settings.
    #[serde(skip)]
    pub settings: Option<Map<String, Value>>,
    /// When the connection is opened (the handshake), if before `start` (when the application
    /// starts handing over data); default: at `start`. INET's `connectTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<Dur>,
    /// Saturated or bulk: hand the transport whole writes of this size while its send queue is
    /// below the limit (INET's generator with `packetInterval = 0`: the queue then holds up to
    /// limit + write_size); default: fill the queue to exactly its limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_size: Option<Bytes>,
    /// The application: "saturated" (default), "bulk" or "messages".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<QuicApp>,
    /// Messages: the message size (a size or a distribution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeDist>,
    /// Messages: the time between messages (a duration or a distribution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<TimeDist>,
    /// Bulk: the bytes to transfer (a size or a distribution, drawn once per flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<SizeDist>,
    /// Streams the application spreads its data over, round robin (default 1; a TCP connection
    /// is one stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
}

/// `kind = "program"`: real programs through the network (`run.clock = "real"`): `server` runs
/// in the destination host's network namespace from the start of the run, `client` in the
/// source's from the flow's `start`; `{src}` and `{dst}` in either are replaced with the hosts'
/// addresses. The run ends when the client exits (docs/emulation.md).
#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProgramCfg {
    /// The command run in the source host's namespace, e.g. "iperf3 -c {dst} -t 10 -J" (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The command run in the destination host's namespace, e.g. "iperf3 -s -1 -J" (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// A flow's kind and its kind's own table.
#[derive(Debug, Clone)]
pub enum FlowKindCfg {
    Udp(UdpCfg),
    Onoff(OnOffCfg),
    Transport(TransportFlowCfg),
    Program(ProgramCfg),
}

/// One flow of the scenario (`[[flows]]`), or one member of a flow group.
#[derive(Debug, Clone)]
pub struct FlowCfg {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub start: Option<TimeDist>,
    pub stop: Option<TimeDist>,
    pub stop_mode: Option<StopMode>,
    pub extra_delay: Option<TimeDist>,
    /// The kind's table, shared by the members of a group (10 000 members hold one copy).
    pub kind: Arc<FlowKindCfg>,
    /// Its position in the scenario's `flows` as written (errors name `flows[pos]`).
    pub pos: usize,
    /// The group it belongs to, and its index in it.
    pub group: Option<(Arc<FlowGroup>, u32)>,
}

impl FlowCfg {
    /// The kind as scenario files write it ("udp", "onoff", "quic", ...).
    pub fn kind_name(&self) -> &'static str {
        match &*self.kind {
            FlowKindCfg::Udp(_) => "udp",
            FlowKindCfg::Onoff(_) => "onoff",
            FlowKindCfg::Transport(t) => t.kind,
            FlowKindCfg::Program(_) => "program",
        }
    }

    /// The transport part, for a flow over a transport.
    pub fn transport(&self) -> Option<&TransportFlowCfg> {
        match &*self.kind {
            FlowKindCfg::Transport(t) => Some(t),
            _ => None,
        }
    }

    /// Whether it is written in `scenario.json` (the first member stands for its group).
    pub fn is_written(&self) -> bool {
        self.group.as_ref().is_none_or(|(_, i)| *i == 0)
    }

    /// The path of its table in errors (`flows[3]`; a group's members share their table's).
    pub fn path(&self) -> String {
        format!("flows[{}]", self.pos)
    }

    /// The flow as a table of the scenario format (absent options left out); a group's member
    /// as its group's table (the caller writes one member per group).
    pub fn to_json(&self) -> Result<Value, serde_json::Error> {
        let g = self.group.as_ref().map(|(g, _)| g);
        let common = FlowCommon {
            name: g.map_or_else(|| self.name.clone(), |g| g.name.clone()),
            src: self.src.clone(),
            dst: self.dst.clone(),
            start: self.start.clone(),
            stop: self.stop.clone(),
            stop_mode: self.stop_mode,
            count: g.map(|g| g.count),
            stagger: g.and_then(|g| g.stagger),
            extra_delay: self.extra_delay.clone(),
        };
        let mut m = match serde_json::to_value(common)? {
            Value::Object(m) => m,
            _ => unreachable!("a struct serializes as a table"),
        };
        let own = match &*self.kind {
            FlowKindCfg::Udp(u) => serde_json::to_value(u)?,
            FlowKindCfg::Onoff(o) => serde_json::to_value(o)?,
            FlowKindCfg::Program(p) => serde_json::to_value(p)?,
            FlowKindCfg::Transport(t) => {
                if let Some(s) = &t.settings {
                    m.insert(t.kind.to_string(), Value::Object(s.clone()));
                }
                serde_json::to_value(t)?
            }
        };
        if let Value::Object(own) = own {
            m.extend(own);
        }
        m.insert("kind".into(), Value::String(self.kind_name().into()));
        Ok(Value::Object(m))
    }
}

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path.into(), msg.into())
}

/// `v` deserialized as `T` with errors at `path` (the field path within `v` appended).
pub(crate) fn typed<T: serde::de::DeserializeOwned>(v: Value, path: &str) -> Result<T, ScenarioError> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let inner = e.path().to_string();
        let msg = e.inner().to_string();
        // An unknown key has no path of its own: name it from the message.
        let inner = if inner == "." || inner == "?" {
            match msg.strip_prefix("unknown field `").and_then(|r| r.split('`').next()) {
                Some(k) => k.to_string(),
                None => String::new(),
            }
        } else {
            inner
        };
        let full = match (path.is_empty(), inner.is_empty()) {
            (_, true) => path.to_string(),
            (true, false) => inner,
            (false, false) if inner.starts_with('[') => format!("{path}{inner}"),
            (false, false) => format!("{path}.{inner}"),
        };
        err(full, msg)
    })
}

/// serde's "unknown field `x`, expected one of ..." with `first` and `last` added to the list
/// (keys read outside the type serde saw); other messages as they are.
pub(crate) fn expected_keys(msg: String, first: &[&str], last: &[&str]) -> String {
    let Some(i) = msg.find(", expected") else { return msg };
    if !msg.starts_with("unknown field") {
        return msg;
    }
    let rest = &msg[i + ", expected".len()..];
    let listed: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    let all: Vec<String> =
        first.iter().chain(listed.iter()).chain(last.iter()).map(|k| format!("`{k}`")).collect();
    format!("{}, expected one of {}", &msg[..i], all.join(", "))
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

impl JsonSchema for CcCfg {
    fn schema_name() -> Cow<'static, str> {
        "Controller".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let names: Vec<&str> = quicksim_cc::NAMES.to_vec();
        json_schema!({
            "description": format!(
                "The congestion controller: a name of the registry ({}) or of a run-time plugin \
                 (\"py:module:Class\"), or a table {{ algo = \"cubic\", ...its settings }}.",
                names.join(", ")
            ),
            "anyOf": [
                {"type": "string", "examples": names},
                {"type": "object", "required": ["algo"], "properties": {"algo": {"type": "string", "examples": names}}},
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `FlowCommon::FIELDS` (the keys `format::parse_flow` takes out for `FlowCommon`) is exactly
    /// the struct's keys, as its schema lists them.
    #[test]
    fn common_fields_are_the_structs_keys() {
        let schema = FlowCommon::json_schema(&mut SchemaGenerator::default());
        let mut keys: Vec<&str> =
            schema.get("properties").and_then(Value::as_object).unwrap().keys().map(String::as_str).collect();
        let mut fields = FlowCommon::FIELDS.to_vec();
        keys.sort_unstable();
        fields.sort_unstable();
        assert_eq!(keys, fields);
    }
}
