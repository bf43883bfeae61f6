//! `Opt<T>`, the 8-byte `Option` of connection state: moved to `quicksim_engine::compact`, shared
//! with the simulator's resting flows; re-exported here for the QUIC modules.

pub use quicksim_engine::compact::{Niche, Opt};
