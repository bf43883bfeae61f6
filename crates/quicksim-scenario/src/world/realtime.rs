//! The run loop paced by the wall clock (`run.clock = "real"`, docs/emulation.md): the same
//! events handled in the same order as `World::run`, each when its time has come on a monotonic
//! clock, and real IPv4 packets from outside (a [`Wire`]: `quicksim-emu`'s TUN devices) entering
//! the network at their host at the current time, virtual time being the wall time elapsed
//! since the start. A loop of its own, so a virtual-time run pays nothing for it.
//!
//! The exception to quicksim's determinism: when a packet arrives depends on the programs and
//! the machine. The loop measures how late it handles each event and writes each packet out
//! (wall time minus virtual time), so every result says how far it can be trusted.

use super::{trace_step, Stop, World};
use crate::build::Built;
use crate::event::{arrive_code, sched_net, Ev, Queue};
use crate::output::pcap::headers::set_ipv4_ecn;
use crate::payload::Payload;
use crate::schema::{Clock, FlowKindCfg, Scenario};
use crate::ScenarioError;
use quicksim_engine::{Popped, SimTime};
use quicksim_net::NetEvent;
use quicksim_net::{ChanId, Ecn, NodeId, Packet};
use std::time::{Duration, Instant};

/// Where real packets come from and go to: one interface per emulated host (its index in the
/// run's host list).
pub trait Wire {
    /// Waits until `deadline` or until packets can be read, whichever comes first, and hands
    /// each packet read to `got(host, bytes)`. Returns at once when the deadline has passed.
    fn wait(&mut self, deadline: Instant, got: &mut dyn FnMut(usize, &[u8])) -> std::io::Result<()>;
    /// Writes an IPv4 packet out at host `host`.
    fn send(&mut self, host: usize, packet: &[u8]) -> std::io::Result<()>;
    /// How the loop's thread is scheduled, for the totals ("fifo", "normal").
    fn scheduling(&self) -> &'static str {
        "normal"
    }
}

/// Lateness beyond which the loop says that it falls behind (at most once per second).
const BEHIND: Duration = Duration::from_millis(10);
/// How often `progress` is called, in wall time.
const PROGRESS_EVERY: Duration = Duration::from_millis(20);

/// Counts of lateness in 1 µs bins up to 100 ms, and beyond; the maximum exactly.
pub(crate) struct Lateness {
    bins: Vec<u64>,
    over: u64,
    n: u64,
    max_ns: u64,
}

impl Lateness {
    const BINS: usize = 100_000;

    fn new() -> Lateness {
        Lateness { bins: vec![0; Self::BINS], over: 0, n: 0, max_ns: 0 }
    }

    #[inline]
    fn add(&mut self, late_ns: u64) {
        self.n += 1;
        self.max_ns = self.max_ns.max(late_ns);
        match self.bins.get_mut((late_ns / 1000) as usize) {
            Some(b) => *b += 1,
            None => self.over += 1,
        }
    }

    /// The `q` quantile in µs (the upper edge of its bin; None beyond 100 ms or without samples).
    fn quantile_us(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, b) in self.bins.iter().enumerate() {
            seen += b;
            if seen >= rank {
                return Some((i + 1) as f64);
            }
        }
        None
    }

    fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.n,
            "p50_us": self.quantile_us(0.5),
            "p99_us": self.quantile_us(0.99),
            "max_us": self.max_ns as f64 / 1000.0,
            "over_100ms": self.over,
        })
    }
}

/// What the loop measured and counted (`totals.realtime`).
pub(crate) struct RealStats {
    /// Events: handled minus due.
    pub events: Lateness,
    /// Packets written out to a host: written minus arrived.
    pub deliveries: Lateness,
    pub injected: u64,
    /// Read packets that are not IPv4 to another emulated host of a program flow (e.g. IPv6).
    pub ignored: u64,
    pub write_errors: u64,
    pub behind_warnings: u64,
}

/// The real-time side of a world: which node each wire host is, and which flow a packet
/// between two hosts belongs to.
pub(crate) struct RealTime<'a> {
    wire: &'a mut dyn Wire,
    /// Node of each wire host.
    hosts: Vec<NodeId>,
    /// Wire host of each node (None: not emulated).
    host_of: Vec<Option<usize>>,
    /// Program flows: (source, destination, flow index).
    pairs: Vec<(NodeId, NodeId, u32)>,
    t0: Instant,
    pub(crate) stats: RealStats,
    /// Why the wire failed, if it did (the run stops).
    pub(crate) error: Option<String>,
}

impl<'a> RealTime<'a> {
    /// `hosts`: the nodes of the wire's interfaces, in order.
    pub(crate) fn new(w: &World, wire: &'a mut dyn Wire, hosts: Vec<NodeId>) -> RealTime<'a> {
        let mut host_of = vec![None; w.cx.net.names.len()];
        for (i, n) in hosts.iter().enumerate() {
            host_of[n.0 as usize] = Some(i);
        }
        let pairs = (w.flows.iter().enumerate())
            .filter(|(_, f)| f.spec.kind == "program")
            .map(|(i, f)| (f.spec.src, f.spec.dst, i as u32))
            .collect();
        RealTime {
            wire,
            hosts,
            host_of,
            pairs,
            t0: Instant::now(),
            stats: RealStats {
                events: Lateness::new(),
                deliveries: Lateness::new(),
                injected: 0,
                ignored: 0,
                write_errors: 0,
                behind_warnings: 0,
            },
            error: None,
        }
    }

    #[inline]
    fn elapsed(&self) -> SimTime {
        SimTime(self.t0.elapsed().as_nanos() as u64 * 1000)
    }

    #[inline]
    fn wall_of(&self, t: SimTime) -> Instant {
        self.t0 + Duration::from_nanos(t.0 / 1000)
    }

    /// The totals' `realtime` block.
    pub(crate) fn summary(&self) -> serde_json::Value {
        let s = &self.stats;
        serde_json::json!({
            "clock": "real",
            "scheduling": self.wire.scheduling(),
            "event_lateness": s.events.summary(),
            "delivery_lateness": s.deliveries.summary(),
            "packets_in": s.injected,
            "packets_out": s.deliveries.n,
            "packets_ignored": s.ignored,
            "write_errors": s.write_errors,
            "behind_warnings": s.behind_warnings,
        })
    }

    /// The node of IPv4 address 10.a.b.c (`output::pcap`'s plan: node n is n + 1).
    fn node_of_addr(&self, a: [u8; 4]) -> Option<NodeId> {
        if a[0] != 10 {
            return None;
        }
        let v = (a[1] as u32) << 16 | (a[2] as u32) << 8 | a[3] as u32;
        let n = v.checked_sub(1)?;
        self.host_of.get(n as usize)?.map(|_| NodeId(n))
    }
}

/// The IPv4 address of node `n` (`output::pcap`'s plan: 10.0.0.1 for the first node).
fn addr_str(n: NodeId) -> String {
    let v = n.0 + 1;
    format!("10.{}.{}.{}", (v >> 16) as u8, (v >> 8) as u8, v as u8)
}

/// `crate::emulation_plan`: the hosts that get an interface (ends of program flows, in node
/// order) with address and MTU (the smallest path MTU of their flows), and the program flows.
pub(crate) fn plan(sc: &Scenario, b: &Built) -> Result<serde_json::Value, ScenarioError> {
    let net = &b.net;
    let mut mtu: Vec<Option<u64>> = vec![None; net.names.len()];
    let mut flows = Vec::new();
    for (i, (f, cfg)) in b.flows.iter().zip(&sc.flows).enumerate() {
        let FlowKindCfg::Program(pc) = &*cfg.kind else { continue };
        let (src, dst) = (f.spec.src, f.spec.dst);
        let m = net.path_mtu(src, dst).expect("checked: reachable") as u64;
        for n in [src, dst] {
            let e = &mut mtu[n.0 as usize];
            *e = Some(e.map_or(m, |x| x.min(m)));
        }
        let fill = |cmd: &str| cmd.replace("{src}", &addr_str(src)).replace("{dst}", &addr_str(dst));
        flows.push(serde_json::json!({
            "index": i,
            "name": b.flow_names[i],
            "src": net.node_name(src),
            "dst": net.node_name(dst),
            "client": fill(pc.client.as_deref().unwrap_or_default()),
            "server": pc.server.as_deref().map(fill),
            "start_s": f.spec.start.as_secs_f64(),
            "stop_s": f.spec.stop.as_secs_f64(),
        }));
    }
    let hosts: Vec<serde_json::Value> = (mtu.iter().enumerate())
        .filter_map(|(n, m)| {
            let id = NodeId(n as u32);
            m.map(|m| serde_json::json!({"name": net.node_name(id), "address": addr_str(id), "mtu": m}))
        })
        .collect();
    if hosts.len() > 254 * 256 {
        return Err(ScenarioError::new("flows".into(), "too many hosts with programs for 10.0.0.0/8".into()));
    }
    Ok(serde_json::json!({
        "clock": if sc.run.clock == Some(Clock::Real) { "real" } else { "virtual" },
        "duration_s": SimTime(sc.run.duration.0 .0).as_secs_f64(),
        "hosts": hosts,
        "flows": flows,
    }))
}

/// The network's scheduling callback for this loop: a closure type of its own, so the
/// network's generic paths it calls (`arrive`, `handle`, `send`) are separate copies from
/// `World::run`'s. A second caller of the same copy cost the virtual-time loop its inlining
/// (an internal function called once is inlined whatever its size).
#[inline(always)]
fn rt_sched(q: &mut Queue) -> impl FnMut(SimTime, NetEvent<Payload>) + '_ {
    move |t, e| sched_net(q, t, e)
}

impl World {
    /// Runs in real time over `rt`'s wire until the end time, or until `progress(sim_s, events)`
    /// (called every 20 ms of wall time) returns false. `warn` gets one line when the loop
    /// falls behind by more than 10 ms (at most once per second).
    pub(crate) fn run_real(
        &mut self,
        rt: &mut RealTime<'_>,
        progress: &mut dyn FnMut(f64, u64) -> bool,
        warn: &mut dyn FnMut(&str),
    ) -> Stop {
        let mut stop = Stop::Finished;
        let mut next_progress = Instant::now();
        let mut last_warning: Option<Instant> = None;
        let mut worst = Duration::ZERO;
        rt.t0 = Instant::now();
        // Packets read in the last wait, with the time they were read at.
        let mut read: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut read_at = SimTime::ZERO;
        loop {
            // What was read enters at the time it was read, after the events before it (the
            // wait may have overslept an event a little).
            if !read.is_empty() {
                stop = self.handle_due(rt, read_at, &mut worst);
                let now = read_at.max(self.cx.q.now());
                for (h, bytes) in read.drain(..) {
                    self.inject(rt, now, h, &bytes);
                }
            }
            let wall = rt.elapsed();
            if stop == Stop::Finished {
                stop = self.handle_due(rt, SimTime((wall.0 + 1).min(self.end.0)), &mut worst);
            }
            if stop != Stop::Finished || wall >= self.end {
                break;
            }
            let now_i = Instant::now();
            if worst > BEHIND && last_warning.is_none_or(|l| now_i - l >= Duration::from_secs(1)) {
                last_warning = Some(now_i);
                rt.stats.behind_warnings += 1;
                warn(&format!(
                    "real time: the loop fell {:.1} ms behind the clock at t = {:.3} s (the machine cannot keep up)",
                    worst.as_secs_f64() * 1e3,
                    wall.as_secs_f64()
                ));
                worst = Duration::ZERO;
            }
            if now_i >= next_progress {
                next_progress = now_i + PROGRESS_EVERY;
                if !progress(wall.as_secs_f64(), self.cx.q.events_processed()) {
                    stop = Stop::Cancelled;
                    break;
                }
            }
            let next = self.cx.q.peek_time().unwrap_or(self.end).min(self.end);
            let deadline = rt.wall_of(next).min(next_progress);
            if let Err(e) = rt.wire.wait(deadline, &mut |h, b| read.push((h, b.to_vec()))) {
                rt.error = Some(format!("reading the programs' interfaces failed: {e}"));
                stop = Stop::Cancelled;
                break;
            }
            read_at = rt.elapsed().min(self.end);
        }
        let end =
            if stop == Stop::Finished { self.end } else { self.cx.q.now().max(rt.elapsed()).min(self.end) };
        self.cx.net.finish(end);
        self.end = end;
        progress(end.as_secs_f64(), self.cx.q.events_processed());
        stop
    }

    /// Handles the events before `due`, measuring how late each is; stops at the event budget.
    fn handle_due(&mut self, rt: &mut RealTime<'_>, due: SimTime, worst: &mut Duration) -> Stop {
        // Peek, then pop: `EventQueue::pop_before` keeps a single call site (`World::run`), so
        // the compiler still inlines it there (a second one made it an out-of-line call: +5 %
        // instructions in the virtual-time loop, measured with callgrind).
        while self.cx.q.peek_time().is_some_and(|t| t < due) {
            let Some((t, popped)) = self.cx.q.pop_split() else { break };
            let late = rt.elapsed().0.saturating_sub(t.0) / 1000;
            rt.stats.events.add(late);
            *worst = (*worst).max(Duration::from_nanos(late));
            self.handle_real(rt, t, popped);
            if self.max_events.is_some_and(|m| self.cx.q.events_processed() >= m) {
                return Stop::EventBudget;
            }
        }
        Stop::Finished
    }

    /// A packet read at host `h` enters the network there.
    fn inject(&mut self, rt: &mut RealTime<'_>, now: SimTime, h: usize, bytes: &[u8]) {
        if bytes.len() < 20 || bytes[0] >> 4 != 4 {
            rt.stats.ignored += 1;
            return;
        }
        let src = rt.hosts[h];
        let dst_addr = [bytes[16], bytes[17], bytes[18], bytes[19]];
        let Some(dst) = rt.node_of_addr(dst_addr) else {
            rt.stats.ignored += 1;
            return;
        };
        let Some(&(fsrc, _, f)) =
            rt.pairs.iter().find(|(a, b, _)| (*a, *b) == (src, dst) || (*b, *a) == (src, dst))
        else {
            rt.stats.ignored += 1;
            return;
        };
        rt.stats.injected += 1;
        let ip_len = u16::from_be_bytes([bytes[2], bytes[3]]) as usize;
        let ip_len = ip_len.clamp(20, bytes.len());
        let forward = src == fsrc;
        let cx = &mut self.cx;
        let pool = &mut cx.out.pools.raw;
        let slot = match pool.vacant() {
            Some(s) => {
                let v = &mut pool.slots[s as usize];
                v.clear();
                v.extend_from_slice(&bytes[..ip_len]);
                s
            }
            None => pool.put(bytes[..ip_len].to_vec()),
        };
        if forward {
            let header = ((bytes[0] & 0x0f) as u64) * 4;
            cx.out.rec.app_sent(now, f, (ip_len as u64).saturating_sub(header));
        }
        let mut p = cx.net.packet(src, dst, f, ip_len as u32, Payload::raw(forward, slot));
        let ecn = match bytes[1] & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        };
        if ecn != Ecn::NotEct {
            p.set_ecn(ecn);
        }
        cx.net.send(now, p, &mut rt_sched(&mut cx.q), &mut cx.out);
    }

    /// One event, as `World::run` handles it, with a program's packet written out where it
    /// reaches its host.
    fn handle_real(
        &mut self,
        rt: &mut RealTime<'_>,
        now: SimTime,
        popped: Popped<crate::event::Ev, Packet<Payload>>,
    ) {
        match popped {
            Popped::Event(ev) => {
                self.trace_hash = trace_step(self.trace_hash, now, ev.code());
                // Not through `World::handle`, which `World::run` inlines as its only caller.
                match ev {
                    Ev::Net(ne) => {
                        let cx = &mut self.cx;
                        let got = cx.net.handle(now, ne, &mut rt_sched(&mut cx.q), &mut cx.out);
                        if let Some(p) = got {
                            self.deliver_real(rt, now, p);
                        }
                    }
                    Ev::FlowStart(_) | Ev::FlowConnect(_) | Ev::FlowStop(_) => self.lifecycle(now, ev),
                    ev => self.flow_event(now, ev),
                }
            }
            Popped::Lane(c, p) => {
                let c = ChanId(c);
                self.trace_hash = trace_step(self.trace_hash, now, arrive_code(c, p.uid()));
                let cx = &mut self.cx;
                let got = cx.net.arrive(now, c, p, &mut rt_sched(&mut cx.q), &mut cx.out);
                if let Some(p) = got {
                    self.deliver_real(rt, now, p);
                }
            }
            Popped::Small(code) => self.small(now, code),
        }
    }

    /// A packet reached its destination host: a program's goes out on the wire there.
    fn deliver_real(&mut self, rt: &mut RealTime<'_>, now: SimTime, p: Packet<Payload>) {
        let Some((Payload::RAW_TAG, forward, slot)) = p.payload.as_transport() else {
            return self.deliver(now, p);
        };
        let cx = &mut self.cx;
        cx.out.rec.packet_received(now, &p, &cx.out.pools);
        let bytes = &mut cx.out.pools.raw.slots[slot as usize];
        set_ipv4_ecn(bytes, p.ecn() as u8);
        if forward {
            let header = ((bytes[0] & 0x0f) as u64) * 4;
            cx.out.rec.app_delivered(now, p.flow, None, (bytes.len() as u64).saturating_sub(header));
        }
        match rt.host_of[p.dst.0 as usize] {
            Some(h) => {
                if rt.wire.send(h, bytes).is_err() {
                    rt.stats.write_errors += 1;
                }
                let late = rt.elapsed().0.saturating_sub(now.0) / 1000;
                rt.stats.deliveries.add(late);
            }
            None => rt.stats.ignored += 1,
        }
        cx.out.pools.raw.release(slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::pcap::headers::{fold, ipv4, sum16};

    /// A wire that hands over its packets at the first wait and then sleeps; it records what
    /// is written out and when.
    struct FakeWire {
        to_read: Vec<(usize, Vec<u8>)>,
        sent: Vec<(Instant, usize, Vec<u8>)>,
    }

    impl Wire for FakeWire {
        fn wait(&mut self, deadline: Instant, got: &mut dyn FnMut(usize, &[u8])) -> std::io::Result<()> {
            if self.to_read.is_empty() {
                std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
            }
            for (h, b) in self.to_read.drain(..) {
                got(h, &b);
            }
            Ok(())
        }
        fn send(&mut self, host: usize, packet: &[u8]) -> std::io::Result<()> {
            self.sent.push((Instant::now(), host, packet.to_vec()));
            Ok(())
        }
    }

    /// 20 ECT(0) datagrams of 1500 B from h1 into a 1 Mbit/s CoDel queue with ECN (target
    /// 1 ms, interval 5 ms) towards h2: all come out at h2, in order, with their own bytes;
    /// the queue marks some CE, written into the header with a valid checksum; none comes out
    /// before its serialization (12 ms a packet) and the 2 ms of propagation.
    #[test]
    fn real_packets_cross_the_model_and_keep_their_ce_marks() {
        let json = serde_json::json!({
            "run": {"duration": "0.4s", "clock": "real"},
            "nodes": {"h1": {"kind": "host"}, "r": {"kind": "router"}, "h2": {"kind": "host"}},
            "links": [
                {"name": "a", "a": "h1", "b": "r", "rate": "1Gbps", "delay": "1ms"},
                {"name": "b", "a": "r", "b": "h2", "rate": "1Mbps", "delay": "1ms",
                 "queue": {"kind": "codel", "target": "1ms", "interval": "5ms", "ecn": true}},
            ],
            "flows": [{"name": "p", "kind": "program", "src": "h1", "dst": "h2", "client": "true"}],
        })
        .to_string();
        let plan = crate::emulation_plan(&json).unwrap();
        let (h1, h2) = (&plan["hosts"][0], &plan["hosts"][1]);
        assert_eq!((h1["name"].as_str(), h2["name"].as_str()), (Some("h1"), Some("h2")));
        let addr = |v: &serde_json::Value| -> [u8; 4] {
            let p: Vec<u8> = v["address"].as_str().unwrap().split('.').map(|x| x.parse().unwrap()).collect();
            [p[0], p[1], p[2], p[3]]
        };
        let packets: Vec<Vec<u8>> = (0..20u16)
            .map(|i| {
                let mut b = Vec::new();
                ipv4(&mut b, 1500, i, 64, 17, 0b10, addr(h1), addr(h2));
                b.resize(1500, i as u8);
                b
            })
            .collect();
        let mut wire =
            FakeWire { to_read: packets.iter().map(|p| (0, p.clone())).collect(), sent: Vec::new() };
        let start = Instant::now();
        let hosts = ["h1".to_string(), "h2".to_string()];
        let out = crate::run_real(
            &json,
            None,
            &Default::default(),
            &mut wire,
            &hosts,
            &mut |_, _| true,
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(wire.sent.len(), 20);
        let mut marked = 0;
        for (i, ((at, host, got), want)) in wire.sent.iter().zip(&packets).enumerate() {
            assert_eq!(*host, 1);
            assert!(*at - start >= Duration::from_millis(12 * (i as u64 + 1) + 2), "packet {i} early");
            assert_eq!(fold(sum16(0, &got[..20])), 0, "packet {i}: header checksum");
            assert_eq!((&got[..1], &got[2..10], &got[12..]), (&want[..1], &want[2..10], &want[12..]));
            match got[1] & 0b11 {
                0b11 => marked += 1,
                0b10 => {}
                other => panic!("packet {i}: codepoint {other:#b}"),
            }
        }
        assert!(marked > 0, "CoDel marked none");
        let rt = &out.totals["realtime"];
        assert_eq!((rt["packets_in"].as_u64(), rt["packets_out"].as_u64()), (Some(20), Some(20)));
        assert_eq!(out.meta["clock"], "real");
        assert_eq!(out.totals["flows"]["p"]["packets_delivered"], 20);
    }

    #[test]
    fn lateness_quantiles_are_the_bins_upper_edges() {
        let mut l = Lateness::new();
        for us in 0..100u64 {
            l.add(us * 1000 + 500);
        }
        assert_eq!(l.quantile_us(0.5), Some(50.0));
        assert_eq!(l.quantile_us(0.99), Some(99.0));
        assert_eq!(l.quantile_us(1.0), Some(100.0));
        l.add(200_000_000_000);
        assert_eq!(l.over, 1);
        assert_eq!(l.max_ns, 200_000_000_000);
        assert_eq!(Lateness::new().quantile_us(0.5), None);
    }
}
