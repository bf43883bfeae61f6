//! The transport registry's generic steps, the same for every transport: a settings table
//! checked when the scenario is parsed, written back canonically into `scenario.json`, described
//! in the JSON Schema, and made into a flow (`build`). `flows::transports!` dispatches to these
//! by kind.

use super::settings::{ConfigureCx, ExtraKey, ExtraKind, SettingsTable};
use super::transport::{Parked, Transport, TransportFlow};
use super::FlowApp;
use crate::apps::App;
use crate::cc_config::CcResolver;
use crate::schema::flows::typed;
use crate::schema::{CcCfg, TransportFlowCfg};
use crate::ScenarioError;
use quicksim_engine::RngStreams;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Map, Value};
use std::any::Any;
use std::collections::HashMap;

/// What building the transport flows keeps across flows.
pub(crate) struct BuildCx<'p> {
    pub ccs: CcResolver<'p>,
    pub rng: RngStreams,
    pub scratch: Vec<u8>,
    /// The configurations made, by transport, path MTU and own table
    /// (`Transport::SHARED_BY_SETTINGS`).
    made: HashMap<(&'static str, u64, String), Box<dyn Any>>,
}

impl<'p> BuildCx<'p> {
    pub(crate) fn new(ccs: CcResolver<'p>, rng: RngStreams) -> Self {
        BuildCx { ccs, rng, scratch: Vec::new(), made: HashMap::new() }
    }
}

/// The flow at `path` over transport `T`: its configuration from `defaults` (the scenario's
/// `[kind]` table) and the flow's own table, its application (`bytes`: a bulk transfer's size
/// as drawn). Also the connection id length of
/// an "rfc9000" QUIC flow, for a capture's headers, and the addresses of the connection's
/// further paths (`Transport::extra_paths`).
pub(crate) fn build<T: Transport>(
    t: &TransportFlowCfg,
    defaults: &Map<String, Value>,
    path: &str,
    index: usize,
    path_mtu: u64,
    bytes: Option<u64>,
    cx: &mut BuildCx,
) -> Result<(FlowApp, Option<u8>, super::transport::ExtraPaths), ScenarioError>
where
    FlowApp: From<Box<TransportFlow<T>>> + From<Box<Parked<T>>>,
    T::Packet: 'static,
{
    if !T::MULTI_STREAM {
        if let Some(n) = t.streams.filter(|&n| n != 1) {
            return Err(ScenarioError::new(
                format!("{path}.streams"),
                format!("{n}: a {} connection is one byte stream", T::NAME),
            ));
        }
    }
    // Flows with the same own table on paths of the same MTU get the same configuration: made
    // once (10 000 flows of one `[quic]` table would otherwise each merge, decode and check it:
    // +0.7 kB of peak memory per flow from the allocations alone).
    let key = T::SHARED_BY_SETTINGS.then(|| {
        let own = t.settings.as_ref().map(|s| Value::Object(s.clone()).to_string()).unwrap_or_default();
        (T::KIND, path_mtu, own)
    });
    let made = key.as_ref().and_then(|k| cx.made.get(k)).and_then(|c| c.downcast_ref::<T::Shared>()).cloned();
    let cfg = match made {
        Some(cfg) => cfg,
        None => {
            let table = SettingsTable::new(T::KIND, defaults, t.settings.as_ref(), path);
            let mut ccx = ConfigureCx { path_mtu, ccs: &mut cx.ccs, rng: &cx.rng, index };
            let cfg = T::configure(&table, &mut ccx)?;
            if let Some(k) = key {
                cx.made.insert(k, Box::new(cfg.clone()));
            }
            cfg
        }
    };
    let dcid_len = T::capture_dcid_len(&cfg);
    let paths = T::extra_paths(&cfg);
    let app = App::from_flow(t, path, T::NAME, cx.rng.stream("app", index as u64), bytes)?;
    Ok((FlowApp::transport(TransportFlow::<T>::new(app, cfg), &mut cx.scratch), dcid_len, paths))
}

/// The table without the keys the transport reads itself, each checked for its form.
fn without_extras<T: Transport>(
    table: &Map<String, Value>,
    path: &str,
) -> Result<Map<String, Value>, ScenarioError> {
    let mut t = table.clone();
    for x in T::EXTRA_KEYS {
        let Some(v) = t.remove(x.name) else { continue };
        let at = format!("{path}.{}", x.name);
        match x.kind {
            ExtraKind::Controller => {
                serde_json::from_value::<CcCfg>(v).map_err(|e| ScenarioError::new(at, e.to_string()))?;
            }
            ExtraKind::LegacyBool => {
                if !v.is_boolean() {
                    return Err(ScenarioError::new(
                        at,
                        format!("invalid type: {}, expected a boolean", crate::schema::describe(&v)),
                    ));
                }
            }
        }
    }
    Ok(t)
}

/// Checks a settings table's keys and value types (`path`: `quic`, `flows[2].quic`); what
/// depends on the path (the MTU) or on other tables is checked when the flow is built.
pub(crate) fn check<T: Transport>(table: &Map<String, Value>, path: &str) -> Result<(), ScenarioError> {
    let rest = without_extras::<T>(table, path)?;
    typed::<T::Settings>(Value::Object(rest), path).map(|_| ()).map_err(|e| {
        let extra: Vec<&str> = T::EXTRA_KEYS.iter().map(|x| x.name).collect();
        ScenarioError::new(e.path, crate::schema::flows::expected_keys(e.message, &[], &extra))
    })
}

/// The `[kind]` table `scenario.json` writes when the scenario has a flow of the kind: every
/// setting's default but those that depend on the path (`Transport::PATH_DEPENDENT`) or are
/// unset by default; None for a transport that writes none (`Transport::WRITE_DEFAULTS`).
pub(crate) fn defaults<T: Transport>() -> Option<Map<String, Value>> {
    if !T::WRITE_DEFAULTS {
        return None;
    }
    let Ok(Value::Object(mut m)) = serde_json::to_value(T::Settings::default()) else {
        unreachable!("settings serialize as a table")
    };
    m.retain(|k, v| !v.is_null() && !T::PATH_DEPENDENT.contains(&k.as_str()));
    Some(m)
}

/// A checked table in canonical form ("1000ms" is "1s", a controller in its short form when it
/// has no settings): the same keys, each value as the settings type writes it.
pub(crate) fn canonical<T: Transport>(table: &Map<String, Value>) -> Map<String, Value> {
    let rest = without_extras::<T>(table, "").expect("checked when parsed");
    let settings: T::Settings = serde_json::from_value(Value::Object(rest)).expect("checked when parsed");
    let Ok(Value::Object(all)) = serde_json::to_value(&settings) else {
        unreachable!("settings serialize as a table")
    };
    let mut out = Map::new();
    for (k, v) in table {
        let value = match T::EXTRA_KEYS.iter().find(|x| x.name == k) {
            Some(ExtraKey { kind: ExtraKind::Controller, .. }) => {
                let cc: CcCfg = serde_json::from_value(v.clone()).expect("checked when parsed");
                serde_json::to_value(cc).expect("a controller serializes")
            }
            Some(_) => v.clone(),
            None => all.get(k).cloned().unwrap_or_else(|| v.clone()),
        };
        out.insert(k.clone(), value);
    }
    out
}

/// The JSON Schema of a settings table: the settings type's, plus the extra keys.
pub(crate) fn schema<T: Transport>(gen: &mut SchemaGenerator) -> Schema {
    let mut s = T::Settings::json_schema(gen);
    let cc = gen.subschema_for::<CcCfg>();
    if let Some(props) = s.get_mut("properties").and_then(Value::as_object_mut) {
        // A path-dependent setting's default is the path's, not the type's.
        for key in T::PATH_DEPENDENT {
            if let Some(p) = props.get_mut(*key).and_then(Value::as_object_mut) {
                p.remove("default");
            }
        }
        for x in T::EXTRA_KEYS {
            let v = match x.kind {
                ExtraKind::Controller => {
                    let mut v = cc.clone().to_value();
                    v["description"] = Value::String(x.doc.into());
                    v
                }
                ExtraKind::LegacyBool => {
                    serde_json::json!({"type": "boolean", "deprecated": true, "description": x.doc})
                }
            };
            props.insert(x.name.to_string(), v);
        }
    }
    s
}
