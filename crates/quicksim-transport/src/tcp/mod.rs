//! The TCP model: a sans-IO TCP (RFC 9293) with the loss recovery and timers of a current
//! Linux stack, optionally with TLS on top, driven through the same [`Endpoint`] calls as QUIC.
//!
//! Split by concern: [`config`] (every knob, Linux defaults, and `profile = "linux"` for the
//! options where Linux differs from the model's defaults: docs/tcp.md), [`segment`] (segments
//! as data with exact header sizes), [`sack`] (the retransmission queue and SACK scoreboard,
//! RFC 6675), [`sender`] (ACK processing, fast retransmit and recovery, PRR, the window in force),
//! [`receiver`] (reassembly, SACK blocks, delayed ACKs, advertised window), [`quickack`]
//! (Linux's quick-ACK mode and ACK timeout), [`rcvbuf`] (Linux's receive-window growth and
//! buffer autotuning, for the quick ACKs they grant), [`rto`] (RFC 6298, and Linux's estimator),
//! [`tls`] (handshake flights and records), and the [`Connection`] that ties them together
//! (`connection.rs`: handshake and input; `recovery.rs`: the ACK side and the timers;
//! `output.rs`: what to send; `reset.rs`: abort and RST; `park.rs`: when a connection is quiet,
//! and its compact encoding for resting flows).
//!
//! [`rack`] is RACK-TLP (RFC 8985), `loss_detection = "rack"` (profile "linux").
//!
//! Left out (a current Linux has them): D-SACK (RFC 2883) and undo of spurious
//! retransmissions, F-RTO (RFC 5682), the
//! quick-ACK mode at connection start (unless `delayed_ack = "linux"`), buffer autotuning of
//! the advertised window (the buffers are fixed at their size: `config`; `rcvbuf` follows it
//! only for its quick ACKs), AccECN (RFC 9768: ECN here is RFC 3168's one
//! signal per round trip), TIME-WAIT. An abort sends a RST (`reset.rs`).
//!
//! [`Endpoint`]: crate::Endpoint

pub mod accecn;
pub mod config;
mod connection;
mod endpoint;
mod output;
mod park;
pub mod quickack;
pub mod rack;
mod rack_steps;
pub mod rcvbuf;
pub mod receiver;
mod recovery;
mod reset;
pub mod rto;
pub mod sack;
pub mod segment;
pub mod sender;
pub mod tls;

use quicksim_cc::{AnyController, InitCtx};
use quicksim_engine::{Rng, SimTime};
use serde::{Deserialize, Serialize};

pub use config::placeholder_config;
pub use config::{DelayedAck, LossDetection, Recovery, RtoEstimator, TcpConfig, TcpProfile, TlsVersion};
pub use connection::Connection;
pub use segment::{RecordMark, SynOptions, TcpSegment, Timestamps};
pub use sender::CaState;

/// The one place a TCP connection gets its congestion controller (`smss`: the payload of a
/// full-sized segment, the controller's MDS; `rng`: its random stream), with TCP's window rules
/// (RFC 5681/6928). The controllers are quicksim-cc's, unchanged.
pub fn cc_for(cfg: &TcpConfig, smss: u64, rng: &Rng) -> Result<AnyController, String> {
    if smss == 0 {
        return Err("cc: the MSS must be positive".to_string());
    }
    // A configured initial window replaces RFC 6928's; the controller reads it only here.
    let mut rules = cfg
        .initial_window_segments()
        .map_or(sender::WINDOW_RULES, |n| sender::WINDOW_RULES.with_initial_segments(n));
    // NewReno's growth unless its own setting names one: RFC 5681's per-ACK rule, or Linux's
    // `tcp_reno_cong_avoid` under the linux profile (docs/tcp.md).
    if cfg.profile == TcpProfile::Linux {
        rules.growth = quicksim_cc::Growth::Linux;
    }
    // Linux's HyStart waits longer for an ACK train when the socket is paced.
    rules.paced = cfg.pacing;
    Ok(cfg.cc.build(&InitCtx { mds: smss, window: &rules, rng }))
}

/// Counters of one TCP connection (monotonic).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpStats {
    /// Segments sent: SYNs, data, retransmissions, probes and pure ACKs.
    pub segments_sent: u64,
    /// TCP bytes sent (headers with options plus payload; IP not included).
    pub bytes_sent: u64,
    pub segments_received: u64,
    pub bytes_received: u64,
    /// Payload bytes sent, retransmissions included.
    pub data_bytes_sent: u64,
    /// Data segments sent again, and their payload bytes.
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    /// Retransmissions sent in fast recovery.
    pub fast_retransmits: u64,
    /// Retransmission timeouts of data (SYN timeouts are `syn_retransmits`).
    pub rtos: u64,
    /// SYN or SYN-ACK sent again after a timeout.
    pub syn_retransmits: u64,
    /// Expiries of the SYN's (or SYN-ACK's) retransmission timer that sent it again (a server
    /// also resends its SYN-ACK for a repeated SYN, counted in `syn_retransmits` only).
    pub syn_timeouts: u64,
    /// Tail loss probes sent (RACK-TLP, RFC 8985 §7; new data or a retransmission).
    pub loss_probes: u64,
    /// Fast-recovery episodes with SACK (RFC 6675) and without (RFC 6582).
    pub sack_recoveries: u64,
    pub reno_recoveries: u64,
    /// Duplicate ACKs received.
    pub dup_acks: u64,
    /// Data segments newly acknowledged (cumulatively or by SACK).
    pub segments_acked: u64,
    /// Segments without payload, SYN or FIN sent to acknowledge (window probes excluded).
    pub pure_acks_sent: u64,
    /// Segments that carried an ACK that was owed (pure or piggybacked).
    pub acks_sent: u64,
    pub delack_timer_fires: u64,
    pub zero_window_probes: u64,
    /// RST segments sent (an abort's, and the answers of an aborted or reset connection to
    /// the segments still arriving) and received.
    pub rsts_sent: u64,
    pub rsts_received: u64,
    /// Application bytes delivered in order to the application.
    pub app_bytes_delivered: u64,
    /// Segments received marked CE (RFC 3168), ACKs received with ECE, and window reductions
    /// for ECE (at most one per window of data).
    pub ce_received: u64,
    pub ece_received: u64,
    pub ecn_reductions: u64,
    /// CE marks the peer reported with AccECN's ACE field (s.cep less its initial 5).
    pub ce_reported: u64,
    /// When TCP's three-way handshake completed at this end.
    pub handshake_done_at: Option<SimTime>,
    /// When the application could send (TCP and TLS handshakes done).
    pub established_at: Option<SimTime>,
    /// When the first application byte reached this end's application.
    pub first_app_byte_at: Option<SimTime>,
}
