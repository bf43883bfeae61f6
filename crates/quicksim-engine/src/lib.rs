//! quicksim-engine: the discrete-event core. Time, events, randomness; no packets, no protocols.
//!
//! Time is an integer count of picoseconds (`SimTime`), so serialization at 100 Gbit/s and
//! beyond is exact; floats appear only at the Python and plotting edges.

mod calendar;
pub mod compact;
mod fifo;
mod queue;
mod rng;
mod time;
pub mod units;

pub use calendar::CalendarQueue;
pub use fifo::Fifo;
pub use queue::{EventQueue, FromLane, PastEventError, Popped};
pub use rng::{exp_portable, ln_portable, Rng, RngStreams, UniformU64};
pub use time::{Rate, SimDuration, SimTime, PS_PER_MS, PS_PER_NS, PS_PER_S, PS_PER_US};
