//! Link models: what decides how long a frame occupies the link (its serialization time).
//! A link serializes at a rate that changes only at scheduled steps ([`fixed_rate`], the
//! default), or by the delivery opportunities of a mahimahi trace ([`trace`], a scenario's
//! `model = { kind = "trace", file = ... }`); a new model is one more file here plus one line
//! in the `link_models!` registry below.
//!
//! The registry generates [`LinkModelConfig`] (the settings of every built-in model) and
//! [`AnyLinkModel`] (static dispatch, plus one `Dyn` variant for a model supplied at run time).

pub mod fixed_rate;
pub mod schedule;
pub mod trace;

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
