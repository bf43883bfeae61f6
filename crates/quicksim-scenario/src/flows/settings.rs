//! What a transport's `configure` works with: the scenario's `[kind]` table of defaults with a
//! flow's own `kind` table over it key by key (`SettingsTable`, whose errors name where a key came
//! from: `quic.ack_ratio` or `flows[2].quic.ack_ratio`), the flow's context (`ConfigureCx`), and
//! the keys a transport reads itself (`ExtraKey`). The registry's generic steps are in
//! `registry`.

use crate::cc_config::CcResolver;
use crate::schema::flows::typed;
use crate::ScenarioError;
use quicksim_engine::{Rng, RngStreams};
use serde_json::{Map, Value};

/// A key of a settings table that the transport reads itself, not through `Settings`' serde.
pub(crate) struct ExtraKey {
    pub name: &'static str,
    /// One line for the reference.
    pub doc: &'static str,
    pub kind: ExtraKind,
}

pub(crate) enum ExtraKind {
    /// A controller of quicksim's registry or a plugin (`cc = "cubic"`, `cc = { algo = .. }`),
    /// resolved by the scenario (`CcResolver`).
    Controller,
    /// A boolean kept for older scenarios.
    LegacyBool,
}

/// `cc`, as QUIC and TCP read it.
pub(crate) const CC_KEY: ExtraKey = ExtraKey {
    name: "cc",
    doc:
        "The congestion controller: \"cubic\", or a table { algo = \"cubic\", beta = 0.7 } with its settings.",
    kind: ExtraKind::Controller,
};

/// One flow's merged settings table and where each key came from.
pub(crate) struct SettingsTable<'a> {
    pub table: Map<String, Value>,
    own: Option<&'a Map<String, Value>>,
    kind: &'static str,
    flow_path: &'a str,
}

impl<'a> SettingsTable<'a> {
    pub(crate) fn new(
        kind: &'static str,
        defaults: &Map<String, Value>,
        own: Option<&'a Map<String, Value>>,
        flow_path: &'a str,
    ) -> Self {
        let mut table = defaults.clone();
        if let Some(o) = own {
            table.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        SettingsTable { table, own, kind, flow_path }
    }

    /// The path of `key` in errors: the flow's own table if it sets the key, else the
    /// scenario's.
    pub(crate) fn at(&self, key: &str) -> String {
        match self.own {
            // A nested key (`multipath.scheduler`) belongs to the table that sets its first part.
            Some(o) if o.contains_key(key.split('.').next().unwrap_or(key)) => {
                format!("{}.{}.{key}", self.flow_path, self.kind)
            }
            _ => format!("{}.{key}", self.kind),
        }
    }

    /// The table (its extra keys taken out) as the transport's settings type.
    pub(crate) fn decode<T: serde::de::DeserializeOwned>(
        &self,
        table: Map<String, Value>,
    ) -> Result<T, ScenarioError> {
        typed::<T>(Value::Object(table), "").map_err(|e| {
            let key = e.path.split(['.', '[']).next().unwrap_or("").to_string();
            ScenarioError::new(self.at(&key), e.message)
        })
    }

    /// A `validate` error ("field: message") at the field's path.
    pub(crate) fn invalid(&self, e: String) -> ScenarioError {
        match e.split_once(": ") {
            Some((key, msg)) if !key.contains(' ') => ScenarioError::new(self.at(key), msg.to_string()),
            _ => ScenarioError::new(format!("{}.{}", self.flow_path, self.kind), e),
        }
    }
}

/// What configuring a flow's transport may use besides its table.
pub(crate) struct ConfigureCx<'a, 'p> {
    /// The IP MTU of the flow's path.
    pub path_mtu: u64,
    pub ccs: &'a mut CcResolver<'p>,
    pub(super) rng: &'a RngStreams,
    /// The flow's index (its random streams are numbered by it).
    pub(super) index: usize,
}

impl ConfigureCx<'_, '_> {
    /// The flow's random stream `name` ("quinn", ...), from the run's seed.
    pub(crate) fn stream(&self, name: &str) -> Rng {
        self.rng.stream(name, self.index as u64)
    }
}
