//! The real quinn-proto QUIC stack (pinned `=0.11.19`) as a quicksim transport: each end of a
//! `kind = "quinn"` flow is a quinn-proto endpoint driven in simulated time through
//! quicksim's `Endpoint` trait, with TLS 1.3 from rustls (ring) whose randomness, keys and
//! certificate come from the run's seed, or a null packet protection (`encryption = false`).
//! Its own crate so that `quicksim-transport` stays free of quinn, rustls and ring.

mod config;
mod endpoint;
mod tls;

pub use config::{QuinnCc, QuinnConfig, QuinnShared, UDP_IP};
pub use endpoint::{QuinnEndpoint, QuinnPacket};
pub use tls::TlsKeyLog;
