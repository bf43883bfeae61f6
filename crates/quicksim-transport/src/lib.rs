//! quicksim-transport: sans-IO transport state machines.
//!
//! `quic` reproduces the INET QUIC model (Völker et al., IFIP Networking 2020, and its 2026
//! merge into INET) without its known flaws. `tcp` is a TCP model (Linux-like defaults:
//! SACK, RFC 6675 recovery with PRR, RFC 6298 RTO, delayed ACKs, optional TLS) beside it.
//! Every protocol here is a state machine driven by `handle_*(now, ..)` and `poll_*(now)`;
//! it never reads a clock or touches a socket.

pub mod endpoint;
pub mod quic;
pub mod range_set;
pub mod tcp;
pub mod units;

pub use endpoint::{
    AppEvent, EcnCodepoint, EcnState, Endpoint, LossTrigger, Role, TraceEvent, TraceParams,
    TransportCounters, TransportMetrics, WirePacket,
};

pub use quic::{ConnEvent, ConnMetrics, ConnStats, Connection, HeaderProfile, QuicConfig, QuicPacket};
pub use tcp::{TcpConfig, TcpSegment, TcpStats};
