//! OLIA, the Opportunistic Linked Increases Algorithm (Khalili, Gast, Popovic, Le Boudec,
//! CoNEXT 2012; IEEE/ACM ToN 2013), as a registry entry. On a multipath connection the paths share one
//! [`crate::coupled::Coupling`] (see there for the rule); on a single path `cc = "olia"` is a
//! coupling of one path, which is NewReno exactly.

use serde::{Deserialize, Serialize};

use crate::coupled::{Flavor, OnePath, Rule};

/// OLIA settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The floor of a path's window in segments, in place of the transport's (QUIC: RFC 9002
    /// §7.2 kMinimumWindow = 2); see [`crate::coupled::MinWindow`]. Unset: the transport's.
    #[serde(deserialize_with = "crate::coupled::min_window_segments")]
    pub min_window_segments: Option<u64>,
}

/// Marks the Olia registry entry.
pub struct OliaFlavor;

impl Flavor for OliaFlavor {
    const NAME: &'static str = "olia";
    type Config = Config;
    fn rule(_: &Config) -> Rule {
        Rule::Olia
    }
    fn min_window_segments(cfg: &Config) -> Option<u64> {
        cfg.min_window_segments
    }
}

/// Olia on one path (NewReno); multipath connections use [`crate::coupled::Coupling`].
pub type Olia = OnePath<OliaFlavor>;
