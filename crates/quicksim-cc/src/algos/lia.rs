//! LIA, RFC 6356's Linked Increases, as a registry entry. On a multipath connection the
//! paths share one [`crate::coupled::Coupling`] (see there for the rule); on a single path
//! `cc = "lia"` is a coupling of one path, which is NewReno exactly (RFC 6356 goal 1, n = 1).

use serde::{Deserialize, Deserializer, Serialize};

use crate::coupled::{Flavor, OnePath, Rule};

/// LIA settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// RFC 6356 §4.1: alpha is computed as an integer scaled by `alpha_scale`, "the precision we
    /// want for computing alpha"; the RFC proposes 512. At least 1; larger keeps more digits.
    #[serde(deserialize_with = "alpha_scale")]
    pub alpha_scale: u64,
    /// The floor of a path's window in segments, in place of the transport's (QUIC: RFC 9002
    /// §7.2 kMinimumWindow = 2); see [`crate::coupled::MinWindow`]. Unset: the transport's.
    #[serde(deserialize_with = "crate::coupled::min_window_segments")]
    pub min_window_segments: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config { alpha_scale: 512, min_window_segments: None }
    }
}

/// An `alpha_scale` in [1, 2^20] (larger would risk overflow in the u128 products).
fn alpha_scale<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = u64::deserialize(d)?;
    if (1..=1 << 20).contains(&v) {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!("{v} is not in [1, 1048576]")))
    }
}

/// The coupling rule of these settings.
pub fn rule(c: &Config) -> Rule {
    Rule::Lia { alpha_scale: c.alpha_scale }
}

/// Marks the LIA registry entry.
pub struct LiaFlavor;

impl Flavor for LiaFlavor {
    const NAME: &'static str = "lia";
    type Config = Config;
    fn rule(cfg: &Config) -> Rule {
        rule(cfg)
    }
    fn min_window_segments(cfg: &Config) -> Option<u64> {
        cfg.min_window_segments
    }
}

/// LIA on one path (NewReno); multipath connections use [`crate::coupled::Coupling`].
pub type Lia = OnePath<LiaFlavor>;
