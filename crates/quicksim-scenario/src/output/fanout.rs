//! The fan-out the run loop calls: the built-in tables first (static calls), then every added
//! sink in the order it was added (dynamic calls, only when there is one).

use super::delay::DelayStats;
use super::pcap::Capture;
use super::record::Recorder;
use super::sinks::{ConnCounters, ConnSample, PacketInfo, RunInfo, Sink, TableCut, TransportEvent};
use super::Table;
use crate::payload::{Payload, PoolSet};
use quicksim_engine::SimTime;
use quicksim_net::{ChanId, DropReason, NodeId, Packet, SubQueues};

/// Every sink of a run, called in order: the built-in tables, then the added ones.
pub(crate) struct Sinks {
    pub tables: Recorder,
    /// The delay statistics (`run.record.delays`), added to the built-in tables and totals.
    pub delays: DelayStats,
    extra: Vec<Box<dyn Sink>>,
    /// `extra` is not empty.
    has_extra: bool,
    /// Some sink wants transport events (checked per packet instead of asking each sink).
    pub tracing: bool,
    /// The packet capture (`run.capture`), called statically.
    pub capture: Option<Box<Capture>>,
    /// The capture or an added sink wants the contents of delivered frames.
    contents: bool,
    /// What a table that stops growing says: its share of the memory budget and the limit
    /// (`budget::Growth`, set by `build`).
    pub budget_note: String,
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
    pub(crate) fn new(
        tables: Recorder,
        delays: DelayStats,
        extra: Vec<Box<dyn Sink>>,
        capture: Option<Box<Capture>>,
    ) -> Sinks {
        let tracing = extra.iter().any(|s| s.wants_transport_events());
        let contents = capture.is_some() || extra.iter().any(|s| s.wants_contents());
        let budget_note = String::new();
        Sinks { tables, delays, has_extra: !extra.is_empty(), extra, tracing, capture, contents, budget_note }
    }

    /// Some sink wants flow `flow`'s endpoints traced.
    pub(crate) fn traces(&self, flow: u32) -> bool {
        self.tracing && self.extra.iter().any(|s| s.traces(flow))
    }

    #[inline]
    pub(crate) fn conn_selected(&self, flow: u32) -> bool {
        self.tables.conn_sel[flow as usize] || self.has_extra
    }

    #[inline(always)]
    pub(crate) fn queue_changed(&mut self, now: SimTime, chan: ChanId, packets: usize, bytes: u64) {
        if self.tables.records_queues() {
            self.tables.queue_changed(now, chan, packets, bytes);
        }
        each_extra!(self, s => s.queue_changed(now, chan, packets, bytes));
    }

    /// The sub-queues of a dual-queue discipline, right after its `queue_changed` (built-in
    /// `queues` table only).
    #[inline]
    pub(crate) fn sub_queues_changed(&mut self, now: SimTime, chan: ChanId, sub: &SubQueues) {
        if self.tables.records_queues() {
            self.tables.sub_queues_changed(now, chan, sub);
        }
    }

    #[inline]
    pub(crate) fn dropped(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>, why: DropReason) {
        self.tables.on_dropped(now, chan, p.flow, p.ip_bytes, why);
        if self.delays.on {
            self.delays.dropped(p.uid(), p.payload.forward());
        }
        each_extra_packet!(self, p, info, s => s.dropped(now, chan, &info, why));
    }

    #[inline]
    pub(crate) fn link_delivered<Pl: PoolSet>(
        &mut self,
        now: SimTime,
        chan: ChanId,
        p: &Packet<Payload>,
        frame_bytes: u64,
        pools: &Pl,
    ) {
        self.tables.on_link_delivered(now, chan, frame_bytes);
        // The flag first: the packet's payload word (its direction) is read only when delay
        // statistics follow packets. Read as an argument, it was loaded on every hop right
        // after the packet was written to the stack, a store-forwarding stall (perf: ~2 % of
        // scale-100x1g's cycles at this one load).
        if self.delays.on {
            self.delays.link_delivered(now, p.uid(), p.payload.forward());
        }
        each_extra_packet!(self, p, info, s => s.link_delivered(now, chan, &info, frame_bytes));
        if self.contents {
            self.link_frame(now, chan, p, frame_bytes, pools);
        }
    }

    /// The frame with its contents, for the capture and the sinks that want them (out of the
    /// run loop's inlined path: a run without them pays one test of a flag per frame).
    #[inline(never)]
    fn link_frame<Pl: PoolSet>(
        &mut self,
        now: SimTime,
        chan: ChanId,
        p: &Packet<Payload>,
        frame_bytes: u64,
        pools: &Pl,
    ) {
        let info = PacketInfo::of(p);
        let c = pools.contents(&p.payload);
        if let Some(cap) = &mut self.capture {
            cap.link_frame(now, chan, &info, frame_bytes, c);
        }
        for s in self.extra.iter_mut().filter(|s| s.wants_contents()) {
            s.link_frame(now, chan, &info, frame_bytes, c);
        }
    }

    /// `chan` starts serializing `p` (only the delay statistics want it).
    #[inline]
    pub(crate) fn tx_started(&mut self, now: SimTime, chan: ChanId, p: &Packet<Payload>) {
        if self.delays.on {
            self.delays.tx_started(now, chan.0, p.uid(), p.payload.forward());
        }
    }

    #[inline]
    pub(crate) fn packet_sent<Pl: PoolSet>(
        &mut self,
        now: SimTime,
        node: NodeId,
        p: &Packet<Payload>,
        pools: &Pl,
    ) {
        if self.delays.on {
            self.delays.sent(now, p.uid(), p.flow, p.payload.forward());
        }
        if p.payload.forward() {
            self.tables.on_forward_packet(now, p.flow, node, p.uid(), p.ip_bytes, false);
            if self.tables.paths.is_some() {
                self.path_packet(now, p, pools, false);
            }
        }
        each_extra_packet!(self, p, info, s => s.packet_sent(now, node, &info));
    }

    /// A packet held by its flow's extra delay enters the network now: its wait in a queue
    /// counts from here, not from its sending (which its one-way delay counts from).
    #[cold]
    pub(crate) fn packet_released(&mut self, now: SimTime, p: &Packet<Payload>) {
        if self.delays.on {
            self.delays.link_delivered(now, p.uid(), p.payload.forward());
        }
    }

    /// Always inlined: `World::deliver` keeps it inline now that the real-time loop calls it too.
    #[inline(always)]
    pub(crate) fn packet_received<Pl: PoolSet>(&mut self, now: SimTime, p: &Packet<Payload>, pools: &Pl) {
        if self.delays.on {
            self.delays.received(now, p.uid(), p.flow, p.payload.forward());
        }
        if p.payload.forward() {
            self.tables.on_forward_packet(now, p.flow, p.dst, p.uid(), p.ip_bytes, true);
            if self.tables.paths.is_some() {
                self.path_packet(now, p, pools, true);
            }
        }
        each_extra_packet!(self, p, info, s => s.packet_received(now, &info));
    }

    /// A forward packet in a run with multipath flows: counted on its path if its flow is one
    /// (the path is the QUIC packet's, read from the pool it travels in).
    #[cold]
    #[inline(never)]
    fn path_packet<Pl: PoolSet>(&mut self, now: SimTime, p: &Packet<Payload>, pools: &Pl, recv: bool) {
        if !self.tables.paths.as_ref().is_some_and(|pr| pr.is_multipath(p.flow)) {
            return;
        }
        if let crate::payload::Contents::Quic(q) = pools.contents(&p.payload) {
            self.tables.on_path_packet(now, p.flow, q.path, p.ip_bytes, recv);
        }
    }

    /// A sample of one path's state of a multipath flow (the `conn` table's per-path rows;
    /// added sinks see the connection's samples only).
    pub(crate) fn path_sample(
        &mut self,
        now: SimTime,
        flow: u32,
        path: u8,
        s: &ConnSample,
        c: &ConnCounters,
    ) {
        self.tables.path_sample(now, flow, path, s, c);
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

    /// The tables that stopped growing at their share of the memory budget, in every sink.
    pub(crate) fn truncated_tables(&self) -> Vec<TableCut> {
        let mut out = self.tables.truncated_tables();
        for s in &self.extra {
            out.extend(s.truncated_tables());
        }
        out
    }

    /// The tables of every sink: the built-in ones first.
    pub(crate) fn finish(&mut self, info: &RunInfo<'_>) -> Vec<(String, Table)> {
        let mut out = self.tables.finish(info);
        let nbins = info.end.0.div_ceil(self.tables.bin.0.max(1)) as usize;
        self.delays.add_columns(&mut out, nbins, self.tables.flows_on, &self.tables.link_sel);
        self.tables.add_path_rows(&mut out, nbins);
        self.tables.add_sub_queue_columns(&mut out);
        // The tables are what `output::TABLES` (and so the Python side) says they are.
        debug_assert_eq!(super::check_schema(&out), Ok(()));
        each_extra!(self, s => out.extend(s.finish(info)));
        out
    }
}
