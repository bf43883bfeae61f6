//! Link models: what decides how long a frame occupies the link (its serialization time).
//! Today's links serialize at a rate that changes only at scheduled steps ([`fixed_rate`]); a
//! trace-driven link (Mahimahi's delivery opportunities) answers the same question from its
//! trace, and is one more file here plus one line in the `link_models!` registry below.
//!
//! The registry generates [`LinkModelConfig`] (the settings of every built-in model) and
//! [`AnyLinkModel`] (static dispatch, plus one `Dyn` variant for a model supplied at run time).

pub mod fixed_rate;
pub mod schedule;

use quicksim_engine::{Rate, SimDuration, SimTime};

/// How long frames take on a link.
pub trait LinkModel {
    /// Serialization time of a frame of `frame_bytes` (link overhead included) that starts
    /// `now`.
    fn tx_time(&mut self, now: SimTime, frame_bytes: u64) -> SimDuration;
    /// The nominal rate now (reported as the link's rate, used for utilization).
    fn rate(&self) -> Rate;
    /// A scheduled rate change ([`crate::NetEvent::SetRate`]); applies from the next frame, the
    /// frame on the wire keeps the time it started with.
    fn set_rate(&mut self, rate: Rate);
}

/// Generates [`LinkModelConfig`] and [`AnyLinkModel`] from `module::Type` entries; each
/// module has a `Config` and `Type: LinkModel` with `Type::new(&Config)`.
macro_rules! link_models {
    ($($m:ident :: $t:ident),* $(,)?) => {
        /// The settings of a built-in link model.
        #[derive(Clone, Debug, PartialEq)]
        pub enum LinkModelConfig {
            $($t($m::Config),)*
        }

        /// A channel's link model: a built-in one, dispatched statically, or one supplied at
        /// run time behind a box.
        pub enum AnyLinkModel {
            $($t($m::$t),)*
            Dyn(Box<dyn LinkModel>),
        }

        impl AnyLinkModel {
            pub fn new(cfg: &LinkModelConfig) -> Self {
                match cfg {
                    $(LinkModelConfig::$t(c) => AnyLinkModel::$t($m::$t::new(c)),)*
                }
            }
        }

        impl LinkModel for AnyLinkModel {
            #[inline]
            fn tx_time(&mut self, now: SimTime, frame_bytes: u64) -> SimDuration {
                match self {
                    $(AnyLinkModel::$t(m) => m.tx_time(now, frame_bytes),)*
                    AnyLinkModel::Dyn(m) => m.tx_time(now, frame_bytes),
                }
            }
            #[inline]
            fn rate(&self) -> Rate {
                match self {
                    $(AnyLinkModel::$t(m) => m.rate(),)*
                    AnyLinkModel::Dyn(m) => m.rate(),
                }
            }
            fn set_rate(&mut self, rate: Rate) {
                match self {
                    $(AnyLinkModel::$t(m) => m.set_rate(rate),)*
                    AnyLinkModel::Dyn(m) => m.set_rate(rate),
                }
            }
        }
    };
}

// The registry: one line per built-in link model.
link_models! {
    fixed_rate::FixedRate,
}

impl std::fmt::Debug for AnyLinkModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyLinkModel({:?})", self.rate())
    }
}
