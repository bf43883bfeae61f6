//! Reading a scenario document: the parts serde's derive cannot see because they come from the
//! transport registry (`flows::transports!`): the `[kind]` tables of the transports and the
//! flows, each read by its kind's own type (`schema::flows`). Above both `schema` (the format's
//! types) and `flows` (the registry), so neither depends on the other. `reference` describes the
//! whole format (JSON Schema, Markdown) from the same types.

pub mod reference;

use crate::schema::flows::{expected_keys, typed};
use crate::schema::{
    describe, FlowCfg, FlowCommon, FlowGroup, FlowKindCfg, OnOffCfg, ProgramCfg, Scenario, TransportFlowCfg,
    UdpCfg,
};
use crate::ScenarioError;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path.into(), msg.into())
}

/// Every flow kind: the two datagram kinds, the transports of the registry and real programs.
pub fn flow_kinds() -> Vec<&'static str> {
    ["udp", "onoff"]
        .into_iter()
        .chain(crate::flows::TRANSPORT_KINDS.iter().copied())
        .chain(["program"])
        .collect()
}

/// The keys of a kind's own table (its schema's properties), for "does not apply" errors.
fn kind_keys(kind: &str) -> Vec<String> {
    let mut gen = SchemaGenerator::default();
    let schema = match kind {
        "udp" => UdpCfg::json_schema(&mut gen),
        "onoff" => OnOffCfg::json_schema(&mut gen),
        "program" => ProgramCfg::json_schema(&mut gen),
        _ => TransportFlowCfg::json_schema(&mut gen),
    };
    let mut keys: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    if crate::flows::TRANSPORT_KINDS.contains(&kind) {
        keys.push(kind.to_string());
    }
    keys
}

/// A kind's own table: an unknown key that belongs to another kind "does not apply" to this one.
fn kind_table<T: serde::de::DeserializeOwned>(
    m: Map<String, Value>,
    path: &str,
    kind: &str,
) -> Result<T, ScenarioError> {
    typed(Value::Object(m), path).map_err(|e| {
        let key = e.message.strip_prefix("unknown field `").and_then(|r| r.split('`').next());
        match key {
            Some(k) if flow_kinds().iter().any(|other| kind_keys(other).iter().any(|x| x == k)) => {
                err(e.path, format!("does not apply to a {kind} flow"))
            }
            _ => {
                let own: Vec<&str> =
                    if crate::flows::TRANSPORT_KINDS.contains(&kind) { vec![kind] } else { vec![] };
                let first = ["name", "kind", "src", "dst", "start", "stop", "count", "stagger"];
                err(e.path, expected_keys(e.message, &first, &own))
            }
        }
    })
}

/// The largest flow group: beyond it the members' names and state would outgrow any machine
/// the budget allows (a member costs ~1 kB before it runs).
pub const MAX_GROUP: u32 = 10_000_000;

/// The flow at position `pos` (`flows[pos]`) from its table, appended to `out`: one flow, or
/// a group's `count` members (`<name>-<i>`), which share one copy of the kind's table.
pub(crate) fn parse_flow(v: Value, pos: usize, out: &mut Vec<FlowCfg>) -> Result<(), ScenarioError> {
    let path = &format!("flows[{pos}]");
    let Value::Object(mut m) = v else {
        return Err(err(path, format!("invalid type: {}, expected a flow table", describe(&v))));
    };
    let kinds = flow_kinds();
    let kind = match m.remove("kind") {
        Some(Value::String(k)) => match kinds.iter().find(|&&x| x == k) {
            Some(&k) => k,
            None => {
                let list = kinds.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                return Err(err(
                    format!("{path}.kind"),
                    format!("unknown variant `{k}`, expected one of {list}"),
                ));
            }
        },
        Some(other) => {
            return Err(err(
                format!("{path}.kind"),
                format!("invalid type: {}, expected a flow kind such as \"quic\"", describe(&other)),
            ))
        }
        None => return Err(err(path, "missing field `kind`")),
    };
    let mut common = Map::new();
    for key in FlowCommon::FIELDS {
        if let Some(v) = m.remove(key) {
            common.insert(key.to_string(), v);
        }
    }
    // Check the kind's own table first: a wrong key is the likelier mistake than a missing name.
    let own = match kind {
        "udp" => FlowKindCfg::Udp(kind_table(m, path, kind)?),
        "onoff" => FlowKindCfg::Onoff(kind_table(m, path, kind)?),
        "program" => FlowKindCfg::Program(kind_table(m, path, kind)?),
        _ => {
            let settings = match m.remove(kind) {
                None => None,
                Some(Value::Object(s)) => Some(s),
                Some(other) => {
                    return Err(err(
                        format!("{path}.{kind}"),
                        format!("invalid type: {}, expected a table of {kind} settings", describe(&other)),
                    ))
                }
            };
            let mut t: TransportFlowCfg = kind_table(m, path, kind)?;
            t.kind = kind;
            if let Some(s) = &settings {
                crate::flows::check_settings(kind, s, &format!("{path}.{kind}"))?;
            }
            t.settings = settings;
            FlowKindCfg::Transport(t)
        }
    };
    let c: FlowCommon = typed(Value::Object(common), path)?;
    let kind = std::sync::Arc::new(own);
    let flow = |name: String, group| FlowCfg {
        name,
        src: c.src.clone(),
        dst: c.dst.clone(),
        start: c.start.clone(),
        stop: c.stop.clone(),
        stop_mode: c.stop_mode,
        extra_delay: c.extra_delay.clone(),
        kind: kind.clone(),
        pos,
        group,
    };
    match c.count {
        None => {
            if let Some(s) = c.stagger {
                let s = crate::units::format_duration(s.0);
                return Err(err(
                    format!("{path}.stagger"),
                    format!("\"{s}\": only a flow group (`count`) has a stagger"),
                ));
            }
            out.push(flow(c.name.clone(), None));
        }
        Some(n) if n == 0 || n > MAX_GROUP => {
            return Err(err(
                format!("{path}.count"),
                format!("{n}: a flow group has 1 to {MAX_GROUP} members"),
            ))
        }
        Some(n) => {
            let g = std::sync::Arc::new(FlowGroup { name: c.name.clone(), count: n, stagger: c.stagger });
            out.reserve(n as usize);
            for i in 0..n {
                out.push(flow(format!("{}-{i}", c.name), Some((g.clone(), i))));
            }
        }
    }
    Ok(())
}

/// The schema of a flow table: one alternative per kind.
pub(crate) fn flow_schema(gen: &mut SchemaGenerator) -> Schema {
    {
        let common = FlowCommon::json_schema(gen);
        let mut alternatives = Vec::new();
        for kind in flow_kinds() {
            let own = match kind {
                "udp" => UdpCfg::json_schema(gen),
                "onoff" => OnOffCfg::json_schema(gen),
                "program" => ProgramCfg::json_schema(gen),
                _ => TransportFlowCfg::json_schema(gen),
            };
            let mut props = Map::new();
            let mut required: Vec<Value> = vec!["kind".into()];
            for s in [&common, &own] {
                if let Some(p) = s.get("properties").and_then(Value::as_object) {
                    props.extend(p.clone());
                }
                if let Some(r) = s.get("required").and_then(Value::as_array) {
                    required.extend(r.iter().cloned());
                }
            }
            props
                .insert("kind".into(), serde_json::json!({"const": kind, "description": "The flow's kind."}));
            if crate::flows::TRANSPORT_KINDS.contains(&kind) {
                props.insert(
                    kind.to_string(),
                    serde_json::json!({
                        "$ref": format!("#/$defs/{kind}_settings"),
                        "description": format!("This flow's own {kind} settings, over the scenario's `[{kind}]` table key by key (the keys of `{kind}`)."),
                    }),
                );
            }
            let doc = own.get("description").cloned().unwrap_or(Value::Null);
            let mut alt = serde_json::json!({
                "title": kind,
                "type": "object",
                "additionalProperties": false,
                "required": required,
                "properties": props,
            });
            if !doc.is_null() {
                alt["description"] = doc;
            }
            alternatives.push(alt);
        }
        json_schema!({
            "description": "A flow: `kind` and the fields of that kind.",
            "oneOf": alternatives,
        })
    }
}

/// Parse a scenario from JSON, with errors that name the field path.
pub fn parse(json: &str) -> Result<Scenario, crate::ScenarioError> {
    let err = |path: &str, msg: String| crate::ScenarioError::new(path.to_string(), msg);
    // The flows are read one at a time into their types (`FlowsSeed`), so the document is never
    // held whole as a JSON tree: 10 000 flows would hold a second copy of themselves (~700 B
    // each) at the run's peak.
    let mut track = serde_path_to_error::Track::new();
    let mut de = serde_json::Deserializer::from_str(json);
    let top = TopSeed
        .deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track))
        .and_then(|t| de.end().map(|()| t))
        .map_err(|e| {
            let msg = e.to_string();
            // serde_json appends " at line L column C", meaningless for a dict from TOML.
            let msg = match msg.rfind(" at line ") {
                Some(i) => msg[..i].to_string(),
                None => msg,
            };
            let path = track.path().to_string();
            err(if path == "." { "" } else { &path }, msg)
        })?;
    let Top { rest: mut top, flows } = top;

    let mut transports = BTreeMap::new();
    for &kind in crate::flows::TRANSPORT_KINDS.iter() {
        match top.remove(kind) {
            None => {}
            Some(Value::Object(t)) => {
                crate::flows::check_settings(kind, &t, kind)?;
                transports.insert(kind, t);
            }
            Some(other) => {
                return Err(err(
                    kind,
                    format!("invalid type: {}, expected a table of {kind} settings", describe(&other)),
                ))
            }
        }
    }
    let mut sc: Scenario = typed(Value::Object(top), "").map_err(|e| {
        // The derive knows only its own fields: list every top-level key.
        match e.message.find(", expected one of") {
            Some(i) if e.message.starts_with("unknown field") => {
                let mut keys: Vec<String> =
                    ["name", "description", "run", "dumbbell", "nodes", "links", "flows"]
                        .iter()
                        .map(|k| k.to_string())
                        .collect();
                keys.extend(crate::flows::TRANSPORT_KINDS.iter().map(|k| k.to_string()));
                keys.extend(["sweep", "expect"].iter().map(|k| k.to_string()));
                let list = keys.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ");
                crate::ScenarioError::new(e.path, format!("{}, expected one of {list}", &e.message[..i]))
            }
            _ => e,
        }
    })?;
    sc.transports = transports;
    if let Some(flows) = flows {
        sc.flows = flows?;
    }
    Ok(sc)
}

/// The document's top level: every key but `flows` as JSON (small), the flows read by
/// `FlowsSeed`.
struct Top {
    rest: Map<String, Value>,
    flows: Option<Result<Vec<FlowCfg>, ScenarioError>>,
}

struct TopSeed;

impl<'de> DeserializeSeed<'de> for TopSeed {
    type Value = Top;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Top, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed {
    type Value = Top;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a scenario table")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Top, A::Error> {
        let mut top = Top { rest: Map::new(), flows: None };
        while let Some(key) = m.next_key::<String>()? {
            if key == "flows" {
                top.flows = Some(m.next_value_seed(FlowsSeed)?);
            } else {
                let v: Value = m.next_value()?;
                top.rest.insert(key, v);
            }
        }
        Ok(top)
    }
}

/// `flows`: each flow's table read into its kind's type as soon as it is read; the first error
/// (with its path) ends the reading.
struct FlowsSeed;

impl<'de> DeserializeSeed<'de> for FlowsSeed {
    type Value = Result<Vec<FlowCfg>, ScenarioError>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for FlowsSeed {
    type Value = Result<Vec<FlowCfg>, ScenarioError>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of flow tables")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut flows = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        let mut pos = 0;
        while let Some(v) = seq.next_element::<Value>()? {
            match parse_flow(v, pos, &mut flows) {
                Ok(()) => pos += 1,
                Err(e) => {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    return Ok(Err(e));
                }
            }
        }
        Ok(Ok(flows))
    }
}
