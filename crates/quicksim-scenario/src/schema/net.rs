//! The network part of the scenario format: links (`[[links]]`, a dumbbell's `bottleneck` and
//! `access`), their directions, queues, loss, jitter, rate changes and link models.

use crate::units::{Bytes, Dur, RateVal};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An output queue: `{ kind = "droptail", packets = 100, bytes = "150kB" }`. `kind` names a
/// queue discipline (default "droptail"); the other fields are that discipline's own settings,
/// checked by it when the network is built (`quicksim_net::qdisc`).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct QueueCfg(pub serde_json::Map<String, serde_json::Value>);

/// A queue table's schema: one alternative per queue discipline of the registry, each with its
/// own settings (`quicksim_net::qdisc::QdiscConfig::schemas`).
impl JsonSchema for QueueCfg {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Queue".into()
    }
    fn json_schema(gen: &mut schemars::SchemaGenerator) -> schemars::Schema {
        queue_schema(gen)
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "lowercase")]
pub enum LossCfg {
    None,
    /// Independent loss with probability p.
    Bernoulli {
        /// Loss probability per packet, in [0, 1].
        p: f64,
    },
    /// Exactly 1 dropped after every `every` delivered (or give `p`: every = 1/p - 1... see docs).
    /// The first one after `first` delivered (0 to `every`; default `every`).
    Periodic {
        /// Packets delivered between two losses.
        every: u64,
        /// Packets delivered before the first loss (0 to `every`; default `every`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first: Option<u64>,
    },
    /// Bursty loss, the two-state Gilbert-Elliott channel (netem's `loss gemodel p r 1-h 1-k`):
    /// Good -> Bad with probability `p` per packet, Bad -> Good with `r`; a packet is lost with
    /// `loss_good` (default 0) in Good and `loss_bad` (default 1) in Bad.
    #[serde(rename = "gilbert_elliott", alias = "gemodel")]
    GilbertElliott {
        /// Good -> Bad transition probability per packet.
        p: f64,
        /// Bad -> Good transition probability per packet.
        r: f64,
        /// Loss probability in the Good state (default 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loss_good: Option<f64>,
        /// Loss probability in the Bad state (default 1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        loss_bad: Option<f64>,
    },
}

/// What decides a link direction's serialization times: `{ kind = "<model>", ..its settings }`,
/// a model of `quicksim_net::model`'s registry (default "fixed_rate", the direction's `rate`).
#[derive(Serialize, Deserialize, Debug, Clone, Default)]
pub struct ModelCfg(pub serde_json::Map<String, serde_json::Value>);

impl ModelCfg {
    /// The model's `kind` as written (None: missing or not a string).
    pub fn kind(&self) -> Option<&str> {
        self.0.get("kind").and_then(serde_json::Value::as_str)
    }

    /// Whether the model sets the link's rate itself (a trace).
    pub fn sets_rate(&self) -> bool {
        self.kind().and_then(quicksim_net::model::LinkModelConfig::sets_rate).unwrap_or(false)
    }

    /// The table as its model's settings type writes it back (canonical units); as it is if
    /// the model refuses it (the build then says why).
    pub fn canonical(&self) -> ModelCfg {
        let Some(kind) = self.kind() else { return self.clone() };
        let mut rest = self.0.clone();
        rest.remove("kind");
        match quicksim_net::model::LinkModelConfig::canonical(kind, &Value::Object(rest)) {
            Some(Value::Object(mut m)) => {
                m.insert("kind".into(), Value::String(kind.into()));
                ModelCfg(m)
            }
            _ => self.clone(),
        }
    }
}

/// A model table's schema: one alternative per link model of the registry.
impl JsonSchema for ModelCfg {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Model".into()
    }
    fn json_schema(gen: &mut SchemaGenerator) -> Schema {
        let alternatives: Vec<Value> = quicksim_net::model::LinkModelConfig::schemas(gen)
            .into_iter()
            .map(|(kind, s)| {
                let mut s = s.to_value();
                s["title"] = Value::String(kind.to_string());
                let obj = s.as_object_mut().expect("a table");
                let props = obj.entry("properties").or_insert(Value::Object(Default::default()));
                props["kind"] = serde_json::json!({"const": kind});
                obj.entry("required")
                    .or_insert(Value::Array(vec![]))
                    .as_array_mut()
                    .expect("a list")
                    .push("kind".into());
                obj.insert("type".into(), "object".into());
                s
            })
            .collect();
        schemars::json_schema!({
            "description": "The link model: `kind` names it (default \"fixed_rate\"); the other keys are its settings.",
            "oneOf": alternatives,
        })
    }
}

/// Drop exactly these packets (0-based: 0 is the first packet) among those the link direction
/// would deliver, counting every packet or only `flow`'s: ns-3's `ReceiveListErrorModel`.
#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropCfg {
    /// Count only this flow's packets (default: every packet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<String>,
    /// 0-based numbers of the packets to drop.
    pub packets: Vec<u64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JitterCfg {
    /// Extra delay uniform in [0, max].
    pub max: Dur,
    /// Allow reordering (netem-like); false keeps FIFO order.
    #[serde(default)]
    pub reorder: bool,
}

/// "Spikes": the rate drops to `fraction` of nominal for `duration` every `period`.
#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpikesCfg {
    /// Time from one drop's start to the next.
    pub period: Dur,
    /// How long each drop lasts (shorter than `period`).
    pub duration: Dur,
    /// The rate during a drop, as a fraction of the nominal rate, in (0, 1].
    pub fraction: f64,
    /// When the first drop starts (default: one `period` in).
    #[serde(default)]
    pub start: Option<Dur>,
}

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateStep {
    /// When the new rate applies.
    pub at: Dur,
    /// The new rate.
    pub rate: RateVal,
}

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownCfg {
    /// When the link goes down.
    pub from: Dur,
    /// When it comes back up (after `from`).
    pub to: Dur,
}

/// The settings of a link direction, written once: `DirCfg` (a `forward`/`reverse` table) has
/// exactly these fields, `LinkSpec` these plus the link's own (`name`, `a`, `b`, `mtu`,
/// `overhead`, the two direction tables). One macro rather than `#[serde(flatten)]`, which serde
/// cannot combine with `deny_unknown_fields`.
macro_rules! with_direction_settings {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident: $t:ty,)* }) => {
        $(#[$m])*
        pub struct $name {
            $($(#[$fm])* pub $f: $t,)*
            /// Transmission rate, e.g. "10Mbps" (required unless a trace `model` sets it).
            #[serde(default)]
            pub rate: Option<RateVal>,
            /// One-way propagation delay (default 0 s).
            #[serde(default)]
            pub delay: Option<Dur>,
            /// The output queue: `{ kind = "droptail", packets = 100 }` and the discipline's own
            /// settings (default DropTail with 10000 packets, INET's).
            #[serde(default)]
            pub queue: Option<QueueCfg>,
            /// Random loss on the wire: `{ kind = "bernoulli", p = 0.01 }`, "periodic" or
            /// "gilbert_elliott".
            #[serde(default)]
            pub loss: Option<LossCfg>,
            /// Extra delay uniform in [0, max] per packet: `{ max = "1ms", reorder = false }`.
            #[serde(default)]
            pub jitter: Option<JitterCfg>,
            /// Most packets the direction holds in all, propagating ones included (netem's `limit`).
            #[serde(default)]
            pub hold_limit: Option<u64>,
            /// Rate changes at given times: `[{ at = "10s", rate = "5Mbps" }]`.
            #[serde(default)]
            pub schedule: Option<Vec<RateStep>>,
            /// Periodic rate drops: `{ period = "1s", duration = "100ms", fraction = 0.1 }`.
            #[serde(default)]
            pub spikes: Option<SpikesCfg>,
            /// Periods the link is down (drops everything): `[{ from = "5s", to = "6s" }]`.
            #[serde(default)]
            pub down: Option<Vec<DownCfg>>,
            /// The link model (default: fixed rate); a trace replaces `rate`, `schedule` and `spikes`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub model: Option<ModelCfg>,
            /// Packets dropped by number, per direction (ns-3's `ReceiveListErrorModel`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub drop: Option<Vec<DropCfg>>,
        }
    };
}

with_direction_settings! {
    /// Settings of one direction of a link; link-level values apply to both directions,
    /// `forward` (a->b) and `reverse` (b->a) override them.
    #[derive(Serialize, Deserialize, Debug, Clone, Default, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct DirCfg {}
}

with_direction_settings! {
    /// A link. In `links` it needs `name`, `a` and `b`; in `dumbbell` those are implied.
    #[derive(Serialize, Deserialize, Debug, Clone, Default, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct LinkSpec {
        /// The link's name (required in `links`; outputs name its directions "name:a->b").
        #[serde(default)]
        pub name: Option<String>,
        /// The node at one end (required in `links`).
        #[serde(default)]
        pub a: Option<String>,
        /// The node at the other end (required in `links`).
        #[serde(default)]
        pub b: Option<String>,
        /// Largest IP packet (default 1500 B).
        #[serde(default)]
        pub mtu: Option<Bytes>,
        /// Per-frame link-layer overhead (default 7 B, INET's PPP).
        #[serde(default)]
        pub overhead: Option<Bytes>,
        /// Settings of the a->b direction over the link's.
        #[serde(default)]
        pub forward: Option<DirCfg>,
        /// Settings of the b->a direction over the link's.
        #[serde(default)]
        pub reverse: Option<DirCfg>,
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    /// Number of sender/receiver pairs: hosts sender1..N, receiver1..N, routers router1, router2.
    pub pairs: u32,
    /// The bottleneck link, router1 -> router2 (`rate` required).
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

/// The `queue` table: one alternative per built-in queue discipline (`kind` and its settings),
/// or a discipline registered at run time (any `kind` with its own settings).
fn queue_schema(gen: &mut SchemaGenerator) -> Schema {
    let mut alternatives: Vec<Value> = quicksim_net::qdisc::QdiscConfig::schemas(gen)
        .into_iter()
        .map(|(kind, s)| {
            let mut s = s.to_value();
            s["title"] = Value::String(kind.to_string());
            if let Some(props) = s.get_mut("properties").and_then(Value::as_object_mut) {
                let mut kind_doc = serde_json::json!({"const": kind});
                if kind == "droptail" {
                    kind_doc["description"] = "The discipline (\"droptail\" when left out).".into();
                }
                props.insert("kind".into(), kind_doc);
                // A limit may be given in bandwidth-delay products (`build/bdp.rs`).
                for key in ["packets", "bytes"] {
                    if let Some(p) = props.get_mut(key) {
                        let doc = p.get("description").and_then(Value::as_str).unwrap_or_default().to_string();
                        let mut plain = p.clone();
                        if let Some(o) = plain.as_object_mut() {
                            o.remove("description");
                        }
                        *p = serde_json::json!({
                            "description": format!("{doc} Or in bandwidth-delay products of this link direction's rate: {{ bdp = 1.5, rtt = \"100ms\" }} (rounded up; packets: the bytes over the MTU, at least 1)."),
                            "anyOf": [plain, {
                                "type": "object", "additionalProperties": false, "required": ["bdp", "rtt"],
                                "properties": {
                                    "bdp": {"type": "number", "exclusiveMinimum": 0, "description": "How many bandwidth-delay products."},
                                    "rtt": {"type": "string", "description": "The round-trip time the product is of, e.g. \"100ms\"."},
                                },
                            }],
                        });
                    }
                }
            }
            if kind != "droptail" {
                let req =
                    s.as_object_mut().expect("a table").entry("required").or_insert(Value::Array(vec![]));
                req.as_array_mut().expect("a list").push("kind".into());
            }
            s
        })
        .collect();
    alternatives.push(serde_json::json!({
        "title": "plugin",
        "description": "A queue discipline registered at run time (`Plugins::add_qdisc`, or from Python): its own settings.",
        "type": "object",
        "required": ["kind"],
        "properties": {"kind": {"type": "string", "description": "The name the discipline was registered with."}},
    }));
    schemars::json_schema!({
        "description": "An output queue: `kind` names a queue discipline (default \"droptail\"); the other keys are its settings.",
        "anyOf": alternatives,
    })
}
