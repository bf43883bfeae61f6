//! The controller interface: the trait, the contexts and the event structs a transport hands
//! to it (ns-3 `TcpCongestionOps`, quinn `congestion::Controller`, s2n-quic's congestion
//! controller). The transport detects losses and estimates the RTT; the controller decides.
//! Events are structs so fields can be added without touching every algorithm.

use quicksim_engine::{Rate, Rng, SimDuration, SimTime};
use serde::{Deserialize, Serialize};

use crate::{RttEstimator, WindowRules};

/// What a controller is built with.
#[derive(Clone, Copy, Debug)]
pub struct InitCtx<'a> {
    /// Maximum datagram size in bytes (QUIC: max QUIC packet size; TCP: SMSS). Positive.
    pub mds: u64,
    /// The transport's window rules (initial window, minimum, loss window).
    pub window: &'a WindowRules,
    /// The controller's own random stream, derived from the run's seed (in a scenario: the
    /// flow's `"cc"` stream, one per endpoint). A controller that draws keeps a clone in its
    /// state (`rng: cx.rng.clone()`) and draws only from it, so its numbers never depend on
    /// another component's and a parked (encoded) connection resumes the stream exactly. One
    /// that never draws ignores it and pays nothing.
    pub rng: &'a Rng,
}

/// The transport's state at a call, for the controller to read.
#[derive(Clone, Copy, Debug)]
pub struct CcCtx<'a> {
    pub now: SimTime,
    /// Maximum datagram size in bytes (may change during a connection, as in INET).
    pub mds: u64,
    pub rtt: &'a RttEstimator,
    /// Bytes in flight after the event was accounted for: a sent packet added, an acked or lost
    /// one removed. For a TCP retransmission timeout (after which nothing counts as in flight):
    /// the bytes in flight (RFC 6675 pipe) just before it, what ns-3 sets ssthresh from.
    pub bytes_in_flight: u64,
    /// The transport's window rules (RFC 9002 for QUIC, RFC 5681/6928 for TCP).
    pub window: &'a WindowRules,
}

/// A packet that was just sent and counts toward bytes in flight.
#[derive(Clone, Copy, Debug)]
pub struct SentPacket {
    /// Bytes counted in flight (QUIC: packet size without UDP/IP; TCP: segment size).
    pub bytes: u64,
    /// The sender had nothing more to send after this packet (application-limited).
    pub app_limited: bool,
}

/// One newly acknowledged in-flight packet. Transports call `on_ack` once per packet, in
/// ascending packet-number order, then `on_ack_end` once for the whole ACK.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    /// When the acknowledged packet was sent (used for the recovery period check).
    pub sent_time: SimTime,
    pub bytes: u64,
    /// The sender was application-limited (cwnd not the constraint) when the ACK arrived.
    pub app_limited: bool,
}

/// The end of one ACK (QUIC: an ACK frame; TCP: a segment with a new cumulative ACK or SACK
/// blocks), after its packets were passed to `on_ack` one by one: for algorithms that act once
/// per ACK (byte counting with ABC, BBR's model update; ns-3 `PktsAcked`, quinn `on_end_acks`).
#[derive(Clone, Copy, Debug)]
pub struct AckSummary {
    /// In-flight bytes and packets this ACK newly acknowledged (at least one packet).
    pub acked_bytes: u64,
    pub acked_packets: u64,
    /// Send time of the newest of them.
    pub largest_acked_sent_time: SimTime,
    /// As in [`AckEvent::app_limited`].
    pub app_limited: bool,
    /// The delivery-rate sample of this ACK (QUIC and TCP keep the per-packet delivery state:
    /// [`crate::rate`]). None when the ACK gives no valid sample (draft-cheng §3.3).
    pub rate: Option<RateSample>,
    /// Packets the network newly marked CE that this ACK reports (QUIC: the increase of the
    /// ACK_ECN frame's CE count; TCP: of the AccECN CE packet counter). Filled only for a
    /// controller whose [`CongestionController::ecn_response`] is [`EcnResponse::Scalable`],
    /// else 0: a classic controller gets CE as a [`CongestionCause::Ecn`] event instead.
    pub ce_packets: u64,
}

/// How a controller takes ECN-CE feedback; the transport asks once, when ECN is enabled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnResponse {
    /// RFC 3168 §6.1.2 / RFC 9002 §7.1: new CE marks are one [`CongestionCause::Ecn`] event at
    /// most once per round trip, handled as a loss; packets carry ECT(0).
    #[default]
    Classic,
    /// The controller counts the marks itself from [`AckSummary::ce_packets`] (DCTCP, RFC 8257;
    /// Prague): no `Ecn` events. `ect1`: packets carry ECT(1), the L4S identifier (RFC 9331
    /// §4), else ECT(0) (RFC 8257's data-centre DCTCP). TCP needs Accurate ECN feedback for
    /// the counts; over a peer that negotiated only RFC 3168 ECN it falls back to `Classic`.
    Scalable { ect1: bool },
}

/// How a TCP receiver running a controller acknowledges a change of CE state (the receiving
/// end's controller decides, as Linux's DCTCP module does through `cwnd_event`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CeChangeAck {
    /// One ACK at once, covering the changing segment with any delayed before it (RFC 9768
    /// §3.2.2.5.1's change-triggered ACK).
    #[default]
    Together,
    /// RFC 8257 §3.2's two ACKs: the delayed ACK of the segments before the change first, with
    /// their CE state, then one for the changing segment at once (Linux
    /// `dctcp_ece_ack_update`). No ACK then mixes marked and unmarked segments, so a sender
    /// that ends CWR on one never takes an older segment's mark for a newer one's.
    Apart,
    /// As `Apart`, but the changing segment waits for the delayed ACK (ns-3.44
    /// `TcpDctcp::CeState0to1` and `CeState1to0` send only the first ACK).
    ApartDelayed,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation §3; ns-3
/// `TcpRateOps::TcpRateSample`), taken when an ACK arrives from the state the newest acked
/// packet recorded when it was sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over `interval` (rs.delivered).
    pub delivered: u64,
    /// The connection's delivered count when the sampled packet was sent (P.delivered).
    pub prior_delivered: u64,
    /// When that count was last updated before the packet was sent (P.delivered_time).
    pub delivered_time: SimTime,
    /// Send time of the first packet of the flight the sampled packet belongs to
    /// (P.first_sent_time).
    pub first_sent_time: SimTime,
    /// The sender was application-limited when the packet was sent: the rate underestimates
    /// the path (rs.is_app_limited).
    pub is_app_limited: bool,
    /// max(send interval, ACK interval) of the sample (rs.interval).
    pub interval: SimDuration,
    /// delivered / interval.
    pub rate: Rate,
    /// Bytes in flight when the sampled packet was sent, itself included (BBR's P.tx_in_flight).
    pub tx_in_flight: u64,
    /// Bytes declared lost between the sampled packet's send and this ACK (BBR's rs.lost).
    pub lost: u64,
    /// Bytes declared lost since the previous sample was taken (BBR's rs.newly_lost).
    pub newly_lost: u64,
}

/// What caused a congestion event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionCause {
    /// Packets were declared lost (RFC 9002 §6.1; RFC 5681 fast retransmit).
    Loss,
    /// An ACK reported new ECN-CE marks (RFC 9002 §7.1 / Appendix B.7; RFC 3168 §6.1.2). The
    /// controller reacts as to a loss.
    Ecn,
    /// The retransmission timer expired (TCP, RFC 6298 §5). `lost_bytes` is the flight size
    /// when it fired (RFC 5681 §3.1 FlightSize); the window collapses to the loss window.
    Rto,
    /// A loss that also established persistent congestion (RFC 9002 §7.6): a loss reaction,
    /// then the window collapses to the loss window and the recovery period is forgotten.
    PersistentCongestion,
}

/// Loss, an ECN-CE mark or a timeout, reported once per ACK / timer.
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    pub cause: CongestionCause,
    /// Send time of the packet that signalled it: the largest lost one, or the largest acked
    /// one for ECN (a signal about a packet sent before the current recovery period started
    /// does not start a new one, RFC 9002 §7.3.2).
    pub sent_time: SimTime,
    /// Bytes declared lost (0 for ECN).
    pub lost_bytes: u64,
}

/// The congestion state a controller reports, for traces and for algorithms that act on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CcState {
    #[default]
    SlowStart,
    CongestionAvoidance,
    /// Between a congestion event and the first ACK of a packet sent after it (RFC 9002 §7.3.2).
    Recovery,
    /// The latest ACK found the sender application-limited: the window does not grow (RFC 9002
    /// §7.8).
    AppLimited,
}

/// What a window-based controller stores to report its [`CcState`] (slow start and congestion
/// avoidance follow from cwnd and ssthresh). One byte, encoded as one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    Open,
    /// Set by a congestion event, cleared by the first ACK of a packet sent after recovery
    /// started (RFC 9002 §7.3.2 exit condition).
    Recovery,
    /// The latest ACK found the sender application-limited.
    AppLimited,
}

impl Phase {
    /// The state of a window `cwnd` with slow-start threshold `ssthresh` in this phase.
    pub fn state(self, cwnd: u64, ssthresh: u64) -> CcState {
        match self {
            Phase::Recovery => CcState::Recovery,
            Phase::AppLimited => CcState::AppLimited,
            Phase::Open if cwnd < ssthresh => CcState::SlowStart,
            Phase::Open => CcState::CongestionAvoidance,
        }
    }
}

/// What a controller exposes for recording (columns of the `conn` table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcMetrics {
    pub cwnd_bytes: u64,
    /// `u64::MAX` while unset (slow start without a loss yet).
    pub ssthresh_bytes: u64,
    pub state: CcState,
}

impl CcMetrics {
    /// In a recovery period (the `in_recovery` column).
    pub fn in_recovery(&self) -> bool {
        self.state == CcState::Recovery
    }
}

/// A congestion controller. Built-in algorithms also implement [`crate::Algorithm`] and are
/// listed in the registry (`algos/mod.rs`); one made at run time (a plugin) implements only this.
pub trait CongestionController: Send {
    fn on_packet_sent(&mut self, _cx: &mut CcCtx, _p: &SentPacket) {}
    /// One newly acknowledged in-flight packet.
    fn on_ack(&mut self, cx: &mut CcCtx, ack: &AckEvent);
    /// The end of an ACK that acknowledged in-flight packets (after their `on_ack` calls).
    fn on_ack_end(&mut self, _cx: &mut CcCtx, _ack: &AckSummary) {}
    fn on_congestion_event(&mut self, cx: &mut CcCtx, ev: &CongestionEvent);
    /// An ACK acknowledged a packet declared lost earlier: the loss, and perhaps the congestion
    /// event it caused, was spurious (RFC 9438 §4.9 undo, Linux `undo_cwnd`). Default: ignore.
    fn on_spurious_congestion(&mut self, _cx: &mut CcCtx) {}
    /// Current congestion window in bytes (`u64::MAX` = unlimited).
    fn cwnd_bytes(&self) -> u64;
    /// The controller sets the window itself during loss recovery too (BBR: packet
    /// conservation, Linux `tcp_cong_control` with `cong_control`). A transport that applies its
    /// own recovery window (TCP's PRR, RFC 6582 inflation) then uses `cwnd_bytes` instead and
    /// keeps calling `on_ack`/`on_ack_end` during recovery. Default false.
    fn owns_recovery_window(&self) -> bool {
        false
    }
    /// Pacing rate, when the algorithm paces (drives the pacer, not only logs).
    fn pacing_rate(&self, _cx: &CcCtx) -> Option<Rate> {
        None
    }
    /// The controller reads [`AckSummary::rate`]. A transport may skip the per-packet
    /// delivery-rate bookkeeping (and pass `rate: None`) for one that does not: NewReno and
    /// CUBIC never look at it. Default true, so a new or run-time controller gets its samples.
    fn wants_rate_samples(&self) -> bool {
        true
    }
    /// How the controller takes CE marks (read once, when the transport enables ECN).
    /// Default [`EcnResponse::Classic`].
    fn ecn_response(&self) -> EcnResponse {
        EcnResponse::Classic
    }
    /// A scalable controller's reduction on CE marks (its window falling in `on_ack_end`) is
    /// spread over the next round trip by a TCP transport with PRR, as Linux does for DCTCP:
    /// `tcp_enter_cwr` takes the controller's ssthresh and `tcp_cwnd_reduction` (RFC 6937)
    /// brings cwnd down to it ACK by ACK in the CWR state; ns-3's `TcpSocketBase::EnterCwr` the
    /// same. Default false: the window applies at once (Prague, whose Linux `cong_control` sets
    /// cwnd itself; QUIC, which has no CWR state).
    fn spreads_ecn_reduction(&self) -> bool {
        false
    }
    /// How this end, receiving, acknowledges a change of CE state under Accurate ECN. Default
    /// [`CeChangeAck::Together`]; DCTCP [`CeChangeAck::Apart`].
    fn ce_change_ack(&self) -> CeChangeAck {
        CeChangeAck::Together
    }
    fn metrics(&self) -> CcMetrics;
}
