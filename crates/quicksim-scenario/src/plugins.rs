//! Extensions handed to a run from outside the crate: controllers, queue disciplines and output
//! sinks registered at run time (a test's toy, a Python class), next to the built-in ones that
//! the registries in `quicksim-cc`, `quicksim-net` and `output` list statically.
//!
//! Built-in components are dispatched statically; a plugin costs a dynamic call per use, and a
//! flow that uses one is never stored compactly (it cannot be encoded).

use crate::output::SinkFactory;
use std::sync::Arc;

/// The extensions of one run. `Plugins::default()` has none: every scenario file runs with it.
#[derive(Default, Clone)]
pub struct Plugins {
    /// Output sinks added to every run made with these plugins, by name, in order (their
    /// tables come after the built-in ones).
    pub sinks: Vec<(String, Arc<dyn SinkFactory>)>,
}

impl Plugins {
    /// Adds an output sink: `factory.make(number of flows)` is called once per run.
    pub fn add_sink(&mut self, name: &str, factory: impl SinkFactory + 'static) -> &mut Self {
        self.sinks.push((name.to_string(), Arc::new(factory)));
        self
    }
}
