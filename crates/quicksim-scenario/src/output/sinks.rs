//! The sink interface and the fan-out the run loop calls: the built-in tables first (static
//! calls), then every added sink in the order it was added.

use super::record::Recorder;
use super::{ConnCounters, ConnSample, Table};
use crate::world::Payload;
use quicksim_engine::SimTime;
use quicksim_net::{ChanId, DropReason, NodeId, Packet};
use quicksim_transport::{AppEvent, TransportMetrics};

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
    /// The endpoint sent a packet of `bytes` (above IP).
    PacketSent { bytes: u64 },
    /// The endpoint was handed a packet of `bytes` (above IP).
    PacketReceived { bytes: u64 },
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
    /// The number of waiting packets/bytes of a channel's queue changed.
    fn queue_changed(&mut self, _now: SimTime, _chan: ChanId, _packets: usize, _bytes: u64) {}
    fn dropped(&mut self, _now: SimTime, _chan: ChanId, _p: &PacketInfo, _why: DropReason) {}
    /// A frame arrived intact at the far end of `chan` (`frame_bytes` include link overhead).
    fn link_delivered(&mut self, _now: SimTime, _chan: ChanId, _p: &PacketInfo, _frame_bytes: u64) {}
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

/// Every sink of a run, called in order: the built-in tables, then the added ones.
pub(crate) struct Sinks {
    pub tables: Recorder,
    extra: Vec<Box<dyn Sink>>,
    /// `extra` is not empty.
    has_extra: bool,
    /// Some sink wants transport events (checked per packet instead of asking each sink).
    pub tracing: bool,
}

/// Calls `$call` on every added sink; nothing when there is none (the usual case: one
/// predictable branch).
macro_rules! each_extra {
    ($self:ident, $s:ident => $call:expr) => {
        for $s in $self.extra.iter_mut() {
            $call;
        }
    };
}

/// Like `each_extra!`, with the packet described as a [`PacketInfo`] (built only when a sink is
/// there to see it: the built-in tables take the packet's fields directly).
macro_rules! each_extra_packet {
    ($self:ident, $p:ident, $info:ident, $s:ident => $call:expr) => {
        if !$self.extra.is_empty() {
            let $info = PacketInfo::of($p);
            for $s in $self.extra.iter_mut() {
                $call;
            }
        }
    };
}

impl Sinks {
    pub(crate) fn new(tables: Recorder, extra: Vec<Box<dyn Sink>>) -> Sinks {
        let tracing = extra.iter().any(|s| s.wants_transport_events());
        Sinks { tables, has_extra: !extra.is_empty(), extra, tracing }
    }

    #[inline]
    pub(crate) fn conn_selected(&self, flow: u32) -> bool {
        self.tables.conn_sel[flow as usize] || self.has_extra
    }

    #[inline]
    pub(crate) fn queue_changed(&mut self, now: SimTime, chan: ChanId, packets: usize, bytes: u64) {
        self.tables.queue_changed(now, chan, packets, bytes);
        each_extra!(self, s => s.queue_changed(now, chan, packets, bytes));
    }

    #[inline]
    pub(crate) fn dropped(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>, why: DropReason) {
        self.tables.on_dropped(now, chan, p.flow, p.ip_bytes, why);
        each_extra_packet!(self, p, info, s => s.dropped(now, chan, &info, why));
    }

    #[inline]
    pub(crate) fn link_delivered(
        &mut self,
        now: SimTime,
        chan: ChanId,
        p: &Packet<Payload>,
        frame_bytes: u64,
    ) {
        self.tables.on_link_delivered(now, chan, frame_bytes);
        each_extra_packet!(self, p, info, s => s.link_delivered(now, chan, &info, frame_bytes));
    }

    #[inline]
    pub(crate) fn packet_sent(&mut self, now: SimTime, node: NodeId, p: &Packet<Payload>) {
        if p.payload.forward() {
            self.tables.on_forward_packet(now, p.flow, node, p.uid(), p.ip_bytes, false);
        }
        each_extra_packet!(self, p, info, s => s.packet_sent(now, node, &info));
    }

    #[inline]
    pub(crate) fn packet_received(&mut self, now: SimTime, p: &Packet<Payload>) {
        if p.payload.forward() {
            self.tables.on_forward_packet(now, p.flow, p.dst, p.uid(), p.ip_bytes, true);
        }
        each_extra_packet!(self, p, info, s => s.packet_received(now, &info));
    }

    #[inline]
    pub(crate) fn app_sent(&mut self, now: SimTime, flow: u32, bytes: u64) {
        self.tables.app_sent(now, flow, bytes);
        each_extra!(self, s => s.app_sent(now, flow, bytes));
    }

    #[inline]
    pub(crate) fn app_delivered(&mut self, now: SimTime, flow: u32, stream: Option<u64>, bytes: u64) {
        self.tables.app_delivered(now, flow, stream, bytes);
        each_extra!(self, s => s.app_delivered(now, flow, stream, bytes));
    }

    pub(crate) fn conn_sample(&mut self, now: SimTime, flow: u32, sample: &ConnSample, c: &ConnCounters) {
        self.tables.conn_sample(now, flow, sample, c);
        each_extra!(self, s => s.conn_sample(now, flow, sample, c));
    }

    pub(crate) fn transport_event(&mut self, now: SimTime, flow: u32, side: u8, ev: TransportEvent<'_>) {
        each_extra!(self, s => s.transport_event(now, flow, side, ev));
    }

    /// The tables of every sink: the built-in ones first.
    pub(crate) fn finish(&mut self, info: &RunInfo<'_>) -> Vec<(String, Table)> {
        let mut out = self.tables.finish(info);
        each_extra!(self, s => out.extend(s.finish(info)));
        out
    }
}
