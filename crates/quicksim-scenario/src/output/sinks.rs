//! The sink interface: what an output is told (the `Sink` hooks) and what it is given to name
//! things (`PacketInfo`, `RunInfo`, `TransportEvent`).

use super::Table;
use crate::payload::{Contents, Payload};
use quicksim_engine::SimDuration;
use quicksim_engine::SimTime;
use quicksim_net::{ChanId, DropReason, NodeId, Packet};
use quicksim_transport::{AppEvent, TraceEvent, TransportMetrics};

/// Cumulative counters attached to each congestion-state sample (they change with every
/// packet, so they do not trigger a sample themselves).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnCounters {
    pub packets_sent: u64,
    pub packets_acked: u64,
    pub packets_lost: u64,
    pub retransmitted_bytes: u64,
    /// Expiries of the sender's retransmission timer (QUIC: PTOs; TCP: RTOs of SYN and data).
    pub timeouts: u64,
    /// ACK frames the receiving end has sent.
    pub ack_frames_sent: u64,
    /// Packets the receiving end got marked CE (ECN), and the congestion events the sender
    /// took from the marks (at most one per round trip).
    pub ce_marks: u64,
    pub ecn_events: u64,
}

/// One sample of a sender's congestion state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConnSample {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub inflight: u64,
    pub srtt: SimDuration,
    pub latest_rtt: SimDuration,
    pub min_rtt: SimDuration,
    /// None where the stack does not expose them (quinn).
    pub rttvar: Option<SimDuration>,
    /// The retransmission timeout with its backoff (QUIC: the PTO period).
    pub rto: Option<SimDuration>,
}

/// A table that stopped growing at its share of the memory budget (`meta.truncated_tables`):
/// its name, the time of the first row it did not record, and the rows it holds (bytes of
/// text for qlog).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableCut {
    pub table: &'static str,
    pub t_ps: u64,
    pub rows: u64,
}

/// A packet as sinks see it.
#[derive(Clone, Copy, Debug)]
pub struct PacketInfo {
    /// Network-wide packet id.
    pub uid: u64,
    pub src: NodeId,
    pub dst: NodeId,
    pub flow: u32,
    /// IP datagram bytes (headers included).
    pub ip_bytes: u32,
    /// In the flow's forward (data) direction.
    pub forward: bool,
    /// The ECN field of the IP header (RFC 3168 §5: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
}

impl PacketInfo {
    #[inline(always)]
    pub(crate) fn of(p: &Packet<Payload>) -> PacketInfo {
        PacketInfo {
            uid: p.uid(),
            src: p.src,
            dst: p.dst,
            flow: p.flow,
            ip_bytes: p.ip_bytes,
            forward: p.payload.forward(),
            ecn: p.ecn() as u8,
        }
    }
}

/// What a sink may need to name things when it builds its tables.
pub struct RunInfo<'a> {
    pub end: SimTime,
    pub flow_names: &'a [String],
    pub chan_names: &'a [String],
    pub node_names: &'a [String],
    pub chan_rate_bps: &'a [u64],
}

/// A transport event at the boundary between an endpoint and the run loop (the vocabulary a
/// qlog writer follows: `packet_sent`, `packet_received`, `metrics_updated`, application events).
#[derive(Clone, Copy, Debug)]
pub enum TransportEvent<'a> {
    /// The endpoint sent a packet of `bytes` (above IP); `packet` is the transport's packet
    /// (`quicksim_transport::QuicPacket`, `TcpSegment`: downcast it).
    PacketSent { bytes: u64, packet: &'a dyn std::any::Any },
    /// The endpoint was handed a packet of `bytes` (above IP).
    PacketReceived { bytes: u64, packet: &'a dyn std::any::Any },
    /// What the endpoint reports while traced (`Sink::traces`): parameters, losses.
    Trace(&'a TraceEvent),
    /// JSON-SEQ qlog records the stack wrote itself (quinn-proto's own qlog), in its order.
    Qlog(&'a str),
    /// The sender's sampled state changed (as recorded in the `conn` table).
    MetricsUpdated(&'a TransportMetrics),
    /// An event for the application.
    App(&'a AppEvent),
}

/// An output: hooks default to doing nothing, so a sink implements only what it records.
pub trait Sink {
    /// Whether `transport_event` should be called (it costs a check per packet when no sink
    /// wants it).
    fn wants_transport_events(&self) -> bool {
        false
    }
    /// Whether flow `flow`'s endpoints should report [`TransportEvent::Trace`] events (asked
    /// once per connection; tracing keeps the flow from resting encoded).
    fn traces(&self, _flow: u32) -> bool {
        false
    }
    /// The number of waiting packets/bytes of a channel's queue changed.
    fn queue_changed(&mut self, _now: SimTime, _chan: ChanId, _packets: usize, _bytes: u64) {}
    fn dropped(&mut self, _now: SimTime, _chan: ChanId, _p: &PacketInfo, _why: DropReason) {}
    /// A frame arrived intact at the far end of `chan` (`frame_bytes` include link overhead).
    fn link_delivered(&mut self, _now: SimTime, _chan: ChanId, _p: &PacketInfo, _frame_bytes: u64) {}
    /// Whether `link_frame` should be called (it costs a look into the packet pools per frame
    /// when some sink wants it, nothing otherwise).
    fn wants_contents(&self) -> bool {
        false
    }
    /// `link_delivered` with the transport packet the frame carries (only for sinks that
    /// `wants_contents`; called after `link_delivered`).
    fn link_frame(
        &mut self,
        _now: SimTime,
        _chan: ChanId,
        _p: &PacketInfo,
        _frame_bytes: u64,
        _c: Contents<'_>,
    ) {
    }
    /// A host put a packet on its first link.
    fn packet_sent(&mut self, _now: SimTime, _node: NodeId, _p: &PacketInfo) {}
    /// A packet reached its destination host.
    fn packet_received(&mut self, _now: SimTime, _p: &PacketInfo) {}
    /// Flow `flow`'s application handed `bytes` to its transport (or to UDP).
    fn app_sent(&mut self, _now: SimTime, _flow: u32, _bytes: u64) {}
    /// `bytes` were delivered in order to flow `flow`'s receiving application on `stream`
    /// (UDP: stream None).
    fn app_delivered(&mut self, _now: SimTime, _flow: u32, _stream: Option<u64>, _bytes: u64) {}
    /// A change of a recorded sender's state (`run.record.conn`).
    fn conn_sample(&mut self, _now: SimTime, _flow: u32, _s: &ConnSample, _c: &ConnCounters) {}
    /// An event of endpoint `side` (0: client, 1: server) of flow `flow`.
    fn transport_event(&mut self, _now: SimTime, _flow: u32, _side: u8, _ev: TransportEvent<'_>) {}
    /// The tables of this sink that stopped growing at their share of the memory budget.
    fn truncated_tables(&self) -> Vec<TableCut> {
        Vec::new()
    }
    /// The run is over: the tables this sink adds to the output.
    fn finish(&mut self, _info: &RunInfo<'_>) -> Vec<(String, Table)> {
        Vec::new()
    }
}

/// Makes a sink for a run with `nflows` flows (`Plugins::add_sink`, or the built-in list).
pub trait SinkFactory: Send + Sync {
    fn make(&self, nflows: usize) -> Box<dyn Sink>;
}

impl<F: Fn(usize) -> Box<dyn Sink> + Send + Sync> SinkFactory for F {
    fn make(&self, nflows: usize) -> Box<dyn Sink> {
        self(nflows)
    }
}
