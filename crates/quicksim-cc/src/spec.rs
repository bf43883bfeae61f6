//! What a transport configuration holds to make its controller (`CcSpec`: a built-in algorithm
//! with its settings, or a run-time factory), and the methods every `AnyController` has beside
//! the generated dispatch (a controller made by a factory, whether it can be encoded).

use std::fmt;
use std::sync::Arc;

use crate::algos::{AnyController, BuiltinConfig, NAMES};
use crate::registry::{ControllerFactory, DynController};
use crate::{CongestionController, InitCtx};

impl AnyController {
    /// A run-time controller (dispatched dynamically, never encoded).
    pub fn from_dyn(name: Arc<str>, cc: Box<dyn CongestionController>) -> AnyController {
        AnyController::Dyn(Box::new(DynController { name, cc }))
    }

    /// Whether the controller can be encoded with an idle connection (serde): true for the
    /// built-in algorithms, false for a run-time one.
    #[inline]
    pub fn can_park(&self) -> bool {
        !matches!(self, AnyController::Dyn(_))
    }
}

impl fmt::Debug for AnyController {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(cwnd {})", self.name(), self.cwnd_bytes())
    }
}

/// Which controller a connection uses, and its settings: what a transport configuration holds.
#[derive(Clone)]
pub enum CcSpec {
    Builtin(BuiltinConfig),
    /// Made at run time by a factory registered under `name`.
    Factory {
        name: Arc<str>,
        factory: Arc<dyn ControllerFactory>,
    },
}

impl CcSpec {
    /// The built-in algorithm `name` with its default configuration.
    pub fn named(name: &str) -> Result<CcSpec, String> {
        BuiltinConfig::default_for(name).map(CcSpec::Builtin).ok_or_else(|| {
            format!("congestion control {name:?} is unknown; valid names are: {}", NAMES.join(", "))
        })
    }

    /// The registry name.
    pub fn name(&self) -> &str {
        match self {
            CcSpec::Builtin(c) => c.name(),
            CcSpec::Factory { name, .. } => name,
        }
    }

    /// A fresh controller.
    pub fn build(&self, cx: &InitCtx) -> AnyController {
        match self {
            CcSpec::Builtin(c) => c.build(cx),
            CcSpec::Factory { name, factory } => AnyController::from_dyn(Arc::clone(name), factory.build(cx)),
        }
    }
}

impl Default for CcSpec {
    /// INET's default: NewReno with byte counting.
    fn default() -> Self {
        CcSpec::named("newreno").expect("newreno is registered")
    }
}

impl PartialEq for CcSpec {
    /// Built-in: same algorithm and settings. Factory: the same factory object.
    fn eq(&self, other: &CcSpec) -> bool {
        match (self, other) {
            (CcSpec::Builtin(a), CcSpec::Builtin(b)) => a == b,
            (CcSpec::Factory { name: a, factory: f }, CcSpec::Factory { name: b, factory: g }) => {
                a == b && Arc::ptr_eq(f, g)
            }
            _ => false,
        }
    }
}

impl fmt::Debug for CcSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CcSpec::Builtin(c) => c.fmt(f),
            CcSpec::Factory { name, .. } => write!(f, "Factory({name:?})"),
        }
    }
}
