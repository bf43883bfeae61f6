//! quicksim-cc: congestion control shared by every transport (QUIC now, TCP next).
//!
//! The transport does loss detection and RTT estimation; a controller only decides the window
//! (and, optionally, a pacing rate). [`api`] is the interface, [`window`] the transport's window
//! rules, [`registry`] how algorithms are listed and built, and [`algos`] the algorithms, each
//! one file registered by one line (`controllers!` in `algos/mod.rs`).

pub mod algos;
pub mod api;
pub mod coupled;
pub mod hystart;
pub mod hystart_linux;
pub mod minmax;
pub mod rate;
pub mod registry;
mod rtt;
mod spec;
#[cfg(test)]
pub(crate) mod testpath;
pub mod window;

pub use algos::{AnyController, BuiltinConfig, NAMES};
pub use api::{
    AckEvent, AckSummary, CcCtx, CcMetrics, CcState, CeChangeAck, CongestionCause, CongestionController,
    CongestionEvent, EcnResponse, InitCtx, Phase, RateSample, SentPacket,
};
pub use hystart::HyStart;
pub use rate::{AckSampler, DeliveryRate, PacketRate};
pub use registry::{Algorithm, ControllerFactory};
pub use rtt::RttEstimator;
pub use spec::CcSpec;
pub use window::{Growth, WindowRules};

/// serde `with` module for a `u64` that is usually `u64::MAX` (an unset ssthresh): encoded as
/// `value + 1` (wrapping), so the maximum takes 1 byte instead of 10 as a postcard varint.
pub mod serde_max_u64 {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        v.wrapping_add(1).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        Ok(u64::deserialize(d)?.wrapping_sub(1))
    }
}
