//! Extensions handed to a run from outside the crate: controllers, queue disciplines and output
//! sinks registered at run time (a test's toy, a Python class), next to the built-in ones that
//! the registries in `quicksim-cc`, `quicksim-net` and `output` list statically.
//!
//! Built-in components are dispatched statically; a plugin costs a dynamic call per use, and a
//! flow that uses one is never stored compactly (it cannot be encoded).

/// The extensions of one run. `Plugins::default()` has none: every scenario file runs with it.
#[derive(Default)]
pub struct Plugins {}
