//! Link models: what decides how long a frame occupies the link (its serialization time).
//! A link serializes at a rate that changes only at scheduled steps ([`fixed_rate`], the
//! default), or by the delivery opportunities of a mahimahi trace ([`trace`], a scenario's
//! `model = { kind = "trace", file = ... }`); a new model is one more file here plus one line
//! in the `link_models!` registry below.
//!
//! The registry declares the models' modules and generates [`LinkModelConfig`] (the
//! configuration of every built-in model, with what a scenario needs of it: the `kind` names, each
//! model's settings read and checked (`ModelSettings`), their JSON Schema) and [`AnyLinkModel`]
//! (static dispatch, plus one `Dyn` variant for a model supplied at run time).

pub mod schedule;

use crate::qdisc::{ConfigError, ConfigSource};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::any::Any;
use std::sync::Arc;

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
    /// Whether `tx_time` depends on the frame size alone until the next `set_rate` (a fixed
    /// rate: yes; a trace: no). The channel then remembers the time of the last frame size and
    /// asks the model only when the size or the rate changes (see [`Serializer`]).
    fn size_only(&self) -> bool {
        false
    }
}

/// A channel's link model with the serialization time of the last frame size remembered, for
/// a model that says its time depends on the size alone ([`LinkModel::size_only`]): most frames
/// on a link have the size of the one before (full-size data, same-size ACKs), so the
/// per-packet path neither dispatches to the model nor divides (a 64-bit division costs 14-40
/// cycles, see docs/performance/history/perf-cpu-notes.md, round 3).
#[derive(Debug)]
pub struct Serializer {
    model: AnyLinkModel,
    /// (frame bytes, serialization time) of the last frame; `NO_MEMO` bytes when there is none.
    memo: (u64, SimDuration),
    size_only: bool,
}

/// No frame has this size.
const NO_MEMO: u64 = u64::MAX;

impl Serializer {
    pub fn new(model: AnyLinkModel) -> Self {
        let size_only = model.size_only();
        Serializer { model, memo: (NO_MEMO, SimDuration::ZERO), size_only }
    }
    /// [`LinkModel::tx_time`], from the memo when the frame has the last frame's size.
    #[inline(always)]
    pub fn tx_time(&mut self, now: SimTime, frame_bytes: u64) -> SimDuration {
        if self.memo.0 == frame_bytes {
            return self.memo.1;
        }
        self.ask(now, frame_bytes)
    }
    /// `tx_time` from the model: a call, so that the per-hop code inlined into the run loop
    /// carries the memo test, not every link model's code.
    #[inline(never)]
    fn ask(&mut self, now: SimTime, frame_bytes: u64) -> SimDuration {
        let t = self.model.tx_time(now, frame_bytes);
        if self.size_only {
            self.memo = (frame_bytes, t);
        }
        t
    }
    pub fn rate(&self) -> Rate {
        self.model.rate()
    }
    pub fn set_rate(&mut self, rate: Rate) {
        self.model.set_rate(rate);
        // The memo holds a time at the old rate.
        self.memo.0 = NO_MEMO;
    }
}

/// Generates [`LinkModelConfig`] and [`AnyLinkModel`] from `module::Type` entries; each
/// module has a `Config` and `Type: LinkModel` with `Type::new(&Config)`.
/// Files a model's settings name (a trace), each read and made once per build however many
/// links use it; the caller decides how (the scenario crate bounds the size and names the file in
/// its errors).
pub trait FileSource {
    /// What `make` built from the text of the file at `path` (earlier: the same value).
    fn load(&mut self, path: &str, make: &MakeFromText) -> Result<Loaded, String>;
}

/// What a model made of a file, shared by every link that names the file.
pub type Loaded = Arc<dyn Any + Send + Sync>;
/// Makes it from the file's text; a failure is a one-line reason.
pub type MakeFromText = dyn Fn(&str) -> Result<Loaded, String>;

/// A link model's settings as a scenario writes them (`model = { kind = "<KIND>", .. }` on a
/// link or a link direction): serde reads and writes them, their JSON Schema documents them (a
/// doc comment per field), `config` makes the model's configuration of them.
pub trait ModelSettings: DeserializeOwned + Serialize + schemars::JsonSchema {
    /// The `kind` a scenario writes.
    const KIND: &'static str;
    /// The model sets the link's rate itself (a trace): a link with it needs no `rate`, and a
    /// `rate`, `schedule` or `spikes` beside it is refused.
    const SETS_RATE: bool = false;
    type Config;
    /// The configuration, on a direction of rate `rate` (None for a model that sets its own).
    fn config(&self, rate: Option<Rate>, files: &mut dyn FileSource) -> Result<Self::Config, ConfigError>;
    /// The rate a model that sets its own reports at the start (a trace's mean rate).
    fn own_rate(_cfg: &Self::Config) -> Option<Rate> {
        None
    }
}

macro_rules! link_models {
    ($($m:ident :: $t:ident),* $(,)?) => {
        $(pub mod $m;)*

        impl LinkModelConfig {
            /// The `kind` names of the built-in models; the first is the default (a link without
            /// `model`).
            pub const KINDS: &'static [&'static str] = &[$(<$m::Settings as ModelSettings>::KIND),*];

            /// Whether model `kind` sets the link's rate itself; None for a kind not built in.
            pub fn sets_rate(kind: &str) -> Option<bool> {
                $( if kind == <$m::Settings as ModelSettings>::KIND { return Some(<$m::Settings as ModelSettings>::SETS_RATE); } )*
                None
            }

            /// Decode and check the settings of `kind` into its configuration, on a direction of
            /// rate `rate`; None for a kind not built in.
            pub fn decode<S: ConfigSource>(
                kind: &str,
                src: &S,
                rate: Option<Rate>,
                files: &mut dyn FileSource,
            ) -> Option<Result<LinkModelConfig, S::Error>> {
                $(
                    if kind == <$m::Settings as ModelSettings>::KIND {
                        return Some(src.decode::<$m::Settings>().and_then(|s| {
                            s.config(rate, files).map(LinkModelConfig::$t).map_err(|e| src.invalid(e))
                        }));
                    }
                )*
                None
            }

            /// A checked settings table of `kind` (without `kind`) as its settings type writes
            /// it back (canonical units); None for a kind not built in or a table it refuses.
            pub fn canonical(kind: &str, table: &serde_json::Value) -> Option<serde_json::Value> {
                $(
                    if kind == <$m::Settings as ModelSettings>::KIND {
                        let s: $m::Settings = serde_json::from_value(table.clone()).ok()?;
                        return serde_json::to_value(s).ok();
                    }
                )*
                None
            }

            /// The JSON Schema of each built-in model's settings, by `kind`.
            pub fn schemas(gen: &mut schemars::SchemaGenerator) -> Vec<(&'static str, schemars::Schema)> {
                vec![$((<$m::Settings as ModelSettings>::KIND, <$m::Settings as schemars::JsonSchema>::json_schema(gen)),)*]
            }

            /// The rate the model reports at the start if it sets its own (a trace's mean).
            pub fn own_rate(&self) -> Option<Rate> {
                match self {
                    $(LinkModelConfig::$t(c) => <$m::Settings as ModelSettings>::own_rate(c),)*
                }
            }
        }

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
            fn size_only(&self) -> bool {
                match self {
                    $(AnyLinkModel::$t(m) => m.size_only(),)*
                    AnyLinkModel::Dyn(m) => m.size_only(),
                }
            }
        }
    };
}

// The registry: one line per built-in link model.
link_models! {
    fixed_rate::FixedRate,
    trace::Trace,
}

impl std::fmt::Debug for AnyLinkModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyLinkModel({:?})", self.rate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memo_of_a_fixed_rate_is_cleared_by_a_rate_change() {
        let mut m = Serializer::new(AnyLinkModel::new(&LinkModelConfig::FixedRate(fixed_rate::Config {
            rate: Rate::mbps(10),
        })));
        // 1007 B frame: 805.6 us at 10 Mbit/s, 8.056 ms at 1 Mbit/s.
        assert_eq!(m.tx_time(SimTime::ZERO, 1007), SimDuration(805_600_000));
        assert_eq!(m.tx_time(SimTime::ZERO, 1007), SimDuration(805_600_000));
        m.set_rate(Rate::mbps(1));
        assert_eq!(m.tx_time(SimTime::ZERO, 1007), SimDuration(8_056_000_000));
        assert_eq!(m.rate(), Rate::mbps(1));
        assert_eq!(m.tx_time(SimTime::ZERO, 0), SimDuration::ZERO);
        assert_eq!(m.tx_time(SimTime::ZERO, 1007), SimDuration(8_056_000_000));
    }

    /// A model whose time depends on when the frame starts: 1 ns per byte before t = 1 us,
    /// 2 ns after.
    struct Slows;
    impl LinkModel for Slows {
        fn tx_time(&mut self, now: SimTime, frame_bytes: u64) -> SimDuration {
            let ns = if now < SimTime(1_000_000) { 1 } else { 2 };
            SimDuration(frame_bytes * ns * 1000)
        }
        fn rate(&self) -> Rate {
            Rate::gbps(8)
        }
        fn set_rate(&mut self, _rate: Rate) {}
    }

    #[test]
    fn a_model_not_size_only_is_asked_for_every_frame() {
        let mut m = Serializer::new(AnyLinkModel::Dyn(Box::new(Slows)));
        assert_eq!(m.tx_time(SimTime::ZERO, 100), SimDuration(100_000));
        // Same size, later: a memo would answer 100 ns.
        assert_eq!(m.tx_time(SimTime(2_000_000), 100), SimDuration(200_000));
    }
}
