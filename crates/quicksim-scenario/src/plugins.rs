//! Extensions handed to a run from outside the crate: controllers, queue disciplines and output
//! sinks registered at run time (a test's toy, a Python class), next to the built-in ones that
//! the registries in `quicksim-cc`, `quicksim-net` and `output` list statically.
//!
//! Built-in components are dispatched statically; a plugin costs a dynamic call per use, and a
//! flow that uses one is never stored compactly (it cannot be encoded).

use crate::output::SinkFactory;
use crate::payload::Payload;
use crate::ScenarioError;
use quicksim_cc::{Algorithm, CongestionController, ControllerFactory, InitCtx};
use quicksim_net::{Qdisc, QdiscConfig};
use quicksim_transport::quic::path_sched::{self, PathScheduler, SchedulerFactory};
use std::sync::Arc;

/// Turns the settings a scenario gives a plugin controller (its `cc` table without `algo`, as
/// JSON; `{}` for `cc = "name"`) into a factory of controllers. An error's path is relative to
/// the `cc` table (`""` for the table itself, `"window"` for a field).
pub type ControllerPlugin =
    dyn Fn(&serde_json::Value) -> Result<Arc<dyn ControllerFactory>, ScenarioError> + Send + Sync;

/// Makes a run-time queue discipline from its scenario table (`queue = { kind = "...", ... }`
/// without `kind`); an `Err` message is reported with the table's path.
pub type QdiscFactory = dyn Fn(&serde_json::Value) -> Result<Box<dyn Qdisc<Payload>>, String> + Send + Sync;

/// The extensions of one run. `Plugins::default()` has none: every scenario file runs with it.
#[derive(Default, Clone)]
pub struct Plugins {
    controllers: Vec<(String, Arc<ControllerPlugin>)>,
    schedulers: Vec<(String, SchedulerFactory)>,
    qdiscs: Vec<(String, Arc<QdiscFactory>)>,
    /// Output sinks added to every run made with these plugins, by name, in order (their
    /// tables come after the built-in ones).
    pub(crate) sinks: Vec<(String, Arc<dyn SinkFactory>)>,
    /// The run's output folder, where sinks that write files put them (`run.capture`).
    pub(crate) out_dir: Option<std::path::PathBuf>,
}

impl Plugins {
    /// Adds an output sink: `factory.make(number of flows)` is called once per run.
    pub fn add_sink(&mut self, name: &str, factory: impl SinkFactory + 'static) -> &mut Self {
        self.sinks.push((name.to_string(), Arc::new(factory)));
        self
    }

    /// The folder a run writes its files to (`capture.pcapng`); without one, a scenario with
    /// `run.capture` is refused.
    pub fn set_out_dir(&mut self, dir: impl Into<std::path::PathBuf>) -> &mut Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Register a queue discipline under `kind`, the name a scenario's `queue` table gives.
    /// `make` is called once per link direction that uses it. Fails if `kind` is built in or
    /// already registered.
    pub fn register_qdisc<Q, F>(&mut self, kind: &str, make: F) -> Result<(), String>
    where
        Q: Qdisc<Payload> + 'static,
        F: Fn(&serde_json::Value) -> Result<Q, String> + Send + Sync + 'static,
    {
        if QdiscConfig::KINDS.contains(&kind) || self.qdisc(kind).is_some() {
            return Err(format!("queue discipline {kind:?} is already defined"));
        }
        let boxed = move |v: &serde_json::Value| make(v).map(|q| Box::new(q) as Box<dyn Qdisc<Payload>>);
        self.qdiscs.push((kind.to_string(), Arc::new(boxed)));
        Ok(())
    }

    /// The factory registered under `kind`.
    pub(crate) fn qdisc(&self, kind: &str) -> Option<&QdiscFactory> {
        self.qdiscs.iter().find(|(k, _)| k == kind).map(|(_, f)| &**f)
    }

    /// Every queue discipline `kind` a scenario may use: built-in, then registered.
    pub(crate) fn qdisc_kinds(&self) -> Vec<&str> {
        QdiscConfig::KINDS.iter().copied().chain(self.qdiscs.iter().map(|(k, _)| k.as_str())).collect()
    }

    /// Registers a congestion controller for `cc = "name"` / `cc = { algo = "name", ... }`.
    /// Fails if `name` is a built-in controller or already registered.
    pub fn register_controller(
        &mut self,
        name: &str,
        configure: impl Fn(&serde_json::Value) -> Result<Arc<dyn ControllerFactory>, ScenarioError>
            + Send
            + Sync
            + 'static,
    ) -> Result<&mut Self, String> {
        if quicksim_cc::NAMES.contains(&name) {
            return Err(format!("controller {name:?} is built in; register a plugin under another name"));
        }
        if self.controller(name).is_some() {
            return Err(format!("controller {name:?} is registered twice"));
        }
        self.controllers.push((name.to_string(), Arc::new(configure)));
        Ok(self)
    }

    /// Registers an [`Algorithm`] (a controller type with its `NAME` and serde `Config`) as a
    /// plugin: the scenario's settings are deserialized into its `Config`, with errors naming
    /// the field.
    pub fn register_algorithm<A: Algorithm>(&mut self) -> Result<&mut Self, String> {
        self.register_controller(A::NAME, |params| {
            let mut track = serde_path_to_error::Track::new();
            let de = serde_path_to_error::Deserializer::new(params.clone(), &mut track);
            let cfg: A::Config = serde::Deserialize::deserialize(de).map_err(|e| {
                let path = track.path().to_string();
                ScenarioError::new(if path == "." { String::new() } else { path }, e.to_string())
            })?;
            Ok(Arc::new(move |cx: &InitCtx| Box::new(A::new(&cfg, cx)) as Box<dyn CongestionController>))
        })
    }

    /// The plugin controller registered as `name`.
    pub fn controller(&self, name: &str) -> Option<&ControllerPlugin> {
        self.controllers.iter().find(|(n, _)| n == name).map(|(_, p)| &**p)
    }

    /// Registers a path scheduler of multipath QUIC for `multipath.scheduler = "name"`: `make`
    /// builds one per connection end. Fails if `name` is built in or already registered.
    pub fn register_scheduler(
        &mut self,
        name: &str,
        make: impl Fn() -> Box<dyn PathScheduler> + Send + Sync + 'static,
    ) -> Result<&mut Self, String> {
        if path_sched::scheduler(name).is_some() {
            return Err(format!("path scheduler {name:?} is built in; register a plugin under another name"));
        }
        if self.scheduler(name).is_some() {
            return Err(format!("path scheduler {name:?} is registered twice"));
        }
        let f = SchedulerFactory { name: name.into(), make: Arc::new(make) };
        self.schedulers.push((name.to_string(), f));
        Ok(self)
    }

    /// The plugin path scheduler registered as `name`.
    pub fn scheduler(&self, name: &str) -> Option<&SchedulerFactory> {
        self.schedulers.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// The names of the plugin path schedulers, in registration order.
    pub fn scheduler_names(&self) -> impl Iterator<Item = &str> {
        self.schedulers.iter().map(|(n, _)| n.as_str())
    }

    /// The names of the plugin controllers, in registration order.
    pub fn controller_names(&self) -> impl Iterator<Item = &str> {
        self.controllers.iter().map(|(n, _)| n.as_str())
    }
}
