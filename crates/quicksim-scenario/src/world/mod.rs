//! The run loop: one single-threaded world of network, flows and output sinks, driven by one
//! event queue. It knows no protocol: flows are reached through `flows::FlowApp` (UDP sources
//! and the registered transports), outputs through `output::Sinks`.
//!
//! # The order of actions within one event
//!
//! Events pop in (time, insertion) order (`quicksim_engine::EventQueue`). Each is handled to the
//! end before the next one pops, in this order:
//!
//! 1. The event enters the run's trace hash (kind, time and fields: `Ev::code`).
//! 2. A network event is handed to the network, which may report to the sinks (queue change,
//!    drop, link delivery) and schedule further network events (a frame's arrival at the far
//!    end is scheduled when its serialization starts; an end of transmission only where packets
//!    wait behind the frame or it is lost, popping first among the events of its time: see
//!    `quicksim_net`'s `transmitter.rs`); a packet that reaches its destination host is
//!    delivered: the sinks see it (`packet_received`), then a UDP datagram's payload counts as
//!    delivered, while a transport packet goes to its endpoint (step 3).
//! 3. A flow event (start, stop, timer, message, packet) wakes the flow if it was resting, then
//!    the flow acts: a transport endpoint handles the input (`handle_packet` / `handle_timeout`),
//!    then the endpoint is *pumped*: `poll_transmit` until None (each packet is sent into the
//!    network at once, in order), then `poll_event` until None (deliveries are counted; an
//!    `Established` or `SendQueueLow` of the client refills the application's data and the pump
//!    repeats), then `poll_timeout` (a timer event is queued if earlier than the one pending), then
//!    the sender's state is sampled for the `conn` table if it changed.
//! 4. The flow rests (is stored encoded) if it is quiet and its transport can encode it.
//! 5. Every 16384 events or 1/200 of the run, progress is reported; the run stops at its end
//!    time (events at exactly the end are not processed), its event budget or when cancelled.

mod facts;
pub(crate) mod realtime;
pub(crate) mod totals;

use crate::build::Built;
use crate::ctx::NetObs;
use crate::event::{arrive_code, net_sched, small_event, small_tx_done, Ev};
use crate::flows::{Ctx, FlowApp, FlowRt, Pools};
use crate::payload::Payload;
use quicksim_engine::{EventQueue, Popped, SimTime};
use quicksim_net::{ChanId, NetEvent, Packet};

pub struct World {
    pub(crate) cx: Ctx,
    pub(crate) flows: Vec<FlowRt>,
    pub(crate) end: SimTime,
    pub(crate) max_events: Option<u64>,
    pub(crate) trace_hash: u64,
    /// Store quiet flows encoded (`rest`); off only to test that it changes nothing.
    pub(crate) rest_quiet_flows: bool,
    /// How often a flow was stored encoded.
    pub(crate) rested: u64,
    /// The encoding buffer of `rest`.
    scratch: Vec<u8>,
    /// What was drawn once per flow, for `meta.drawn`.
    pub(crate) drawn: serde_json::Map<String, serde_json::Value>,
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Finished,
    EventBudget,
    Cancelled,
}

impl World {
    pub(crate) fn new(b: Built) -> World {
        let mut w = World {
            cx: Ctx {
                q: EventQueue::new(),
                net: b.net,
                out: NetObs { rec: b.rec, pools: Pools::default() },
                flow_names: b.flow_names,
                rng: b.rng,
                paths: b.paths,
                extra_delay_ps: if b.flows.iter().any(|f| f.spec.extra_delay.0 > 0) {
                    b.flows.iter().map(|f| f.spec.extra_delay.0).collect()
                } else {
                    Vec::new()
                },
            },
            flows: b.flows,
            end: b.end,
            max_events: b.max_events,
            trace_hash: 0xcbf2_9ce4_8422_2325,
            rest_quiet_flows: true,
            rested: 0,
            scratch: Vec::new(),
            drawn: b.drawn,
        };
        w.cx.out.rec.tables.set_horizon(w.end);
        for (i, f) in w.flows.iter().enumerate() {
            if f.spec.connect < f.spec.start && f.spec.connect < w.end {
                w.cx.q.push(f.spec.connect, Ev::FlowConnect(i as u32));
            }
            if f.spec.start < w.end {
                w.cx.q.push(f.spec.start, Ev::FlowStart(i as u32));
            }
            if f.spec.stop < w.end {
                w.cx.q.push(f.spec.stop, Ev::FlowStop(i as u32));
            }
        }
        for (t, ev) in b.link_events {
            if let NetEvent::SetUp(c, _) = ev {
                w.cx.net.chans[c.0 as usize].may_go_down();
            }
            w.cx.q.push(t, Ev::Net(ev));
        }
        w
    }

    /// Run until the end time (events at exactly the end time are not processed: a run covers
    /// [0, duration)), the event budget, or until `progress` returns false. Never inlined, so
    /// profilers can measure the run loop alone (`valgrind --toggle-collect='*World::run*'`).
    #[inline(never)]
    pub fn run(&mut self, progress: &mut dyn FnMut(f64, u64) -> bool) -> Stop {
        let mut stop = Stop::Finished;
        // Report every 16384 events or every 1/200 of the run's simulated time, whichever
        // comes first, so short runs report too.
        let step_t = (self.end.0 / 200).max(1);
        let mut next_progress = 1u64 << 14;
        let mut next_progress_t = step_t;
        while let Some((now, popped)) = self.cx.q.pop_before(self.end) {
            // An event with a body is handled where it was popped; a small one (an end of
            // transmission, a flow's timer or message) in a function of its own. Merged into
            // one `Result` before a common match, the popped event went through a stack
            // temporary at an odd offset, copied in pieces, and each read of it waited for the
            // stores before it (perf: ~10 % of scale-100x1g's time on three loads).
            match popped {
                Popped::Event(ev) => {
                    self.trace_hash = trace_step(self.trace_hash, now, ev.code());
                    self.handle(now, ev);
                }
                Popped::Lane(c, p) => {
                    let c = ChanId(c);
                    self.trace_hash = trace_step(self.trace_hash, now, arrive_code(c, p.uid()));
                    let cx = &mut self.cx;
                    let got = cx.net.arrive(now, c, p, &mut net_sched(&mut cx.q), &mut cx.out);
                    if let Some(p) = got {
                        self.deliver(now, p);
                    }
                }
                Popped::Small(code) => self.small(now, code),
            }
            let n = self.cx.q.events_processed();
            if self.max_events.is_some_and(|m| n >= m) {
                stop = Stop::EventBudget;
                break;
            }
            if n >= next_progress || now.0 >= next_progress_t {
                next_progress = n + (1 << 14);
                next_progress_t = now.0 + step_t;
                if !progress(now.as_secs_f64(), n) {
                    stop = Stop::Cancelled;
                    break;
                }
            }
        }
        let end = if stop == Stop::Finished { self.end } else { self.cx.q.now() };
        self.cx.net.finish(end);
        self.end = end;
        progress(end.as_secs_f64(), self.cx.q.events_processed());
        stop
    }

    /// A small event (`EventQueue::push_small`): an end of transmission goes straight to its
    /// channel; a flow's timer or message is rebuilt as its event.
    #[inline(never)]
    fn small(&mut self, now: SimTime, code: u32) {
        match small_tx_done(code) {
            Some((c, hash_code)) => {
                self.trace_hash = trace_step(self.trace_hash, now, hash_code);
                let cx = &mut self.cx;
                cx.net.tx_done(now, c, &mut net_sched(&mut cx.q), &mut cx.out);
            }
            None => {
                let ev = small_event(code);
                self.trace_hash = trace_step(self.trace_hash, now, ev.code());
                self.flow_event(now, ev);
            }
        }
    }

    fn handle(&mut self, now: SimTime, ev: Ev) {
        let cx = &mut self.cx;
        match ev {
            Ev::Net(ne) => {
                let q = &mut cx.q;
                let got = cx.net.handle(now, ne, &mut net_sched(q), &mut cx.out);
                if let Some(p) = got {
                    self.deliver(now, p);
                }
            }
            Ev::FlowStart(_) | Ev::FlowConnect(_) | Ev::FlowStop(_) => self.lifecycle(now, ev),
            _ => self.flow_event(now, ev),
        }
    }

    /// A flow's timer, message or UDP send: one copy for events popped with a body and for
    /// small ones (`small`).
    #[inline(never)]
    fn flow_event(&mut self, now: SimTime, ev: Ev) {
        let cx = &mut self.cx;
        match ev {
            Ev::UdpSend(f, g) => {
                let fl = &mut self.flows[f as usize];
                if let FlowApp::Udp(u) = &mut fl.app {
                    u.send(cx, now, f, &fl.spec, g);
                }
            }
            Ev::OnOffToggle(f) => {
                let fl = &mut self.flows[f as usize];
                if let FlowApp::Udp(u) = &mut fl.app {
                    u.toggle(cx, now, f, &fl.spec);
                }
            }
            Ev::FlowTimer(f, side) => {
                let fl = &mut self.flows[f as usize];
                fl.app.make_live();
                fl.app.on_timer(cx, now, f, &fl.spec, side);
                self.rest(f);
            }
            Ev::AppMessage(f) => {
                let fl = &mut self.flows[f as usize];
                fl.app.make_live();
                fl.app.on_message(cx, now, f, &fl.spec);
                self.rest(f);
            }
            Ev::Held(p) => {
                cx.out.rec.packet_released(now, &p);
                cx.net.inject(now, p, &mut net_sched(&mut cx.q), &mut cx.out);
            }
            _ => unreachable!("not a flow's timer, message or UDP event: {ev:?}"),
        }
    }

    /// A flow's connect, start or stop: once per flow, and what they inline (making a
    /// connection's endpoints, some of them kilobytes large) would give `handle`, which every
    /// event calls, a stack frame of several pages to probe on each call. Kept out of it.
    #[cold]
    #[inline(never)]
    fn lifecycle(&mut self, now: SimTime, ev: Ev) {
        let cx = &mut self.cx;
        match ev {
            Ev::FlowStart(f) => {
                let fl = &mut self.flows[f as usize];
                fl.app.make_live();
                fl.app.start(cx, now, f, &fl.spec);
                self.rest(f);
            }
            Ev::FlowConnect(f) => {
                let fl = &mut self.flows[f as usize];
                fl.app.make_live();
                fl.app.connect(cx, now, f, &fl.spec);
                self.rest(f);
            }
            Ev::FlowStop(f) => {
                let fl = &mut self.flows[f as usize];
                fl.app.make_live();
                fl.app.stop(cx, now, f, &fl.spec);
                self.rest(f);
            }
            _ => unreachable!("not a flow's connect, start or stop: {ev:?}"),
        }
    }

    /// Stores flow `f` encoded if nothing is going on in it (`FlowApp::rest`).
    #[inline]
    fn rest(&mut self, f: u32) {
        if self.rest_quiet_flows && self.flows[f as usize].app.rest(&mut self.scratch) {
            self.rested += 1;
        }
    }

    /// A packet reached its destination host.
    fn deliver(&mut self, now: SimTime, p: Packet<Payload>) {
        let f = p.flow;
        let cx = &mut self.cx;
        cx.out.rec.packet_received(now, &p, &cx.out.pools);
        match p.payload.as_transport() {
            None => {
                let payload = p.ip_bytes as u64 - crate::flows::udp::UDP_IP;
                cx.out.rec.app_delivered(now, f, None, payload);
            }
            Some((_, to_server, slot)) => {
                let side = if to_server { 1u8 } else { 0u8 };
                let fl = &mut self.flows[f as usize];
                fl.app.make_live();
                fl.app.on_packet(cx, now, f, &fl.spec, side, slot, p.ecn());
                self.rest(f);
            }
        }
    }
}

/// The run's trace hash after an event of `code` at `now` (FNV-style).
#[inline(always)]
fn trace_step(h: u64, now: SimTime, code: u64) -> u64 {
    (h ^ now.0 ^ code.rotate_left(29)).wrapping_mul(0x100_0000_01b3)
}
