//! quicksim-transport: sans-IO transport state machines.
//!
//! `quic` reproduces the INET QUIC model (Völker et al., IFIP Networking 2020, and its 2026
//! merge into INET) without its known flaws. A TCP model will live next to it in `tcp`.
//! Every protocol here is a state machine driven by `handle_*(now, ..)` and `poll_*(now)`;
//! it never reads a clock or touches a socket.

pub mod endpoint;
pub mod quic;

pub use endpoint::{AppEvent, Endpoint, TransportCounters, TransportMetrics, WirePacket};

pub use quic::{ConnEvent, ConnMetrics, ConnStats, Connection, HeaderProfile, QuicConfig, QuicPacket, Role};
