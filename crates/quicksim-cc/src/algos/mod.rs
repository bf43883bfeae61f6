//! The built-in congestion control algorithms, one file each.
//!
//! Adding one: write `algos/<module>.rs` (a `Config` with its defaults, the state, the
//! [`CongestionController`](crate::CongestionController) and
//! [`Algorithm`](crate::registry::Algorithm) impls, unit tests), then add `<module>::<Type>` to
//! the line below. The registry tests (`registry.rs`) then build and exercise it, and scenarios
//! can name it: `cc = { algo = "<NAME>", ... }`.

mod bbr_common;

crate::registry::controllers! { none::NoCc, newreno::NewReno, cubic::Cubic, bbr1::Bbr1, bbr::Bbr, dctcp::Dctcp, prague::Prague, lia::Lia, olia::Olia, balia::Balia }
