//! BALIA, the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang, Low, IEEE/ACM ToN
//! 2016; draft-walid-mptcp-congestion-control), as a registry entry. On a multipath connection the paths share one
//! [`crate::coupled::Coupling`] (see there for the rule); on a single path `cc = "balia"` is a
//! coupling of one path, which is NewReno exactly.

use serde::{Deserialize, Serialize};

use crate::coupled::{Flavor, OnePath, Rule};

/// Balia has no settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {}

/// Marks the Balia registry entry.
pub struct BaliaFlavor;

impl Flavor for BaliaFlavor {
    const NAME: &'static str = "balia";
    type Config = Config;
    fn rule(_: &Config) -> Rule {
        Rule::Balia
    }
}

/// Balia on one path (NewReno); multipath connections use [`crate::coupled::Coupling`].
pub type Balia = OnePath<BaliaFlavor>;
