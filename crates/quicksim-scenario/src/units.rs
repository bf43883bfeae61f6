//! Quantities with units ("10Mbps", "10ms", "25kB"): the parsers live in `quicksim-engine` so
//! that the network's queue disciplines and link models can read their own settings with the
//! same units; re-exported here, where the scenario schema and the Python glue use them.

pub use quicksim_engine::units::*;
