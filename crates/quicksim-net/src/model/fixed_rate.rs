//! A link that serializes at one rate, changed only by scheduled steps (`NetEvent::SetRate`:
//! a scenario's `schedule` and `spikes`, see [`super::schedule`]): INET's `DatarateChannel`.

use super::{FileSource, LinkModel, ModelSettings};
use crate::qdisc::ConfigError;
use quicksim_engine::{Rate, SimDuration, SimTime};
use serde::{Deserialize, Serialize};

/// `model = { kind = "fixed_rate" }`, the default: the direction's `rate`, changed by its
/// `schedule` and `spikes`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {}

impl ModelSettings for Settings {
    const KIND: &'static str = "fixed_rate";
    type Config = Config;
    fn config(&self, rate: Option<Rate>, _files: &mut dyn FileSource) -> Result<Config, ConfigError> {
        let rate = rate.ok_or_else(|| ConfigError::new("", "a fixed-rate link needs a `rate`"))?;
        Ok(Config { rate })
    }
}

/// The rate at the start of the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub rate: Rate,
}

/// The time of a frame depends on its size alone until the next rate change, so the channel
/// remembers the last one ([`super::Serializer`]) and asks only when the size changes.
#[derive(Debug)]
pub struct FixedRate {
    rate: Rate,
}

impl FixedRate {
    pub fn new(cfg: &Config) -> Self {
        FixedRate { rate: cfg.rate }
    }
}

impl LinkModel for FixedRate {
    #[inline]
    fn tx_time(&mut self, _now: SimTime, frame_bytes: u64) -> SimDuration {
        self.rate.tx_time(frame_bytes)
    }
    #[inline]
    fn rate(&self) -> Rate {
        self.rate
    }
    fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
    }
    fn size_only(&self) -> bool {
        true
    }
}
