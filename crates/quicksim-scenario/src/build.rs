//! Schema -> world: semantic validation (with the field path in every error) and construction
//! of the network, applications and recorders.

use crate::plugins::Plugins;
use crate::record::Recorder;
use crate::schema::*;
use crate::world::{FlowApp, FlowRt, Payload, QuicState, UdpState};
use crate::ScenarioError;
use quicksim_cc::{BuiltinConfig, CcSpec};
use quicksim_engine::{Rate, RngStreams, SimDuration, SimTime};
use quicksim_net::{
    ChannelConfig, Jitter, LossModel, NetEvent, Network, NetworkBuilder, NodeId, NodeKind, QueueLimit,
    IPV4_HEADER, PPP_OVERHEAD, UDP_HEADER,
};
use quicksim_transport::quic::niche::Opt;
use quicksim_transport::quic::{AckFreqPolicy, HeaderProfile, QuicConfig};
use std::sync::Arc;

/// Default output queue: INET's PppInterface DropTailQueue packetCapacity (10000 packets).
pub const DEFAULT_QUEUE_PACKETS: u64 = 10_000;
const DEFAULT_MTU: u64 = 1500;
const UDP_IP: u64 = (IPV4_HEADER + UDP_HEADER) as u64;

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path.into(), msg.into())
}

#[derive(Clone, Debug)]
pub struct UdpSpec {
    pub size: SizeDist,
    pub interval: Option<TimeDist>,
    pub rate: Option<Rate>,
    pub onoff: Option<(TimeDist, TimeDist)>,
}

/// A flow's endpoints and times (its name is in `World::flow_names`).
#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub kind: FlowKind,
    pub src: NodeId,
    pub dst: NodeId,
    pub start: SimTime,
    pub stop: SimTime,
}

pub(crate) struct Built {
    pub net: Network<Payload>,
    pub flows: Vec<FlowRt>,
    pub rec: Recorder,
    pub end: SimTime,
    pub max_events: Option<u64>,
    pub link_events: Vec<(SimTime, NetEvent<Payload>)>,
    pub flow_names: Vec<String>,
}

/// A scheduled change of one link direction.
enum LinkChange {
    Rate(Rate),
    Up(bool),
}

struct DirSettings {
    cfg: ChannelConfig,
    events: Vec<(SimTime, LinkChange)>,
}

fn queue_limit(q: &Option<QueueCfg>, path: &str) -> Result<QueueLimit, ScenarioError> {
    match q {
        None => Ok(QueueLimit { packets: Some(DEFAULT_QUEUE_PACKETS), bytes: None }),
        Some(q) => {
            if q.packets == Some(0) {
                return Err(err(
                    format!("{path}.packets"),
                    "0: a queue must hold at least 1 packet (leave it out for the default of 10000)",
                ));
            }
            if q.bytes.map(|b| b.0) == Some(0) {
                return Err(err(format!("{path}.bytes"), "\"0B\": a queue must hold at least one packet"));
            }
            if q.packets.is_none() && q.bytes.is_none() {
                return Err(err(path.to_string(), "give `packets`, `bytes` or both"));
            }
            Ok(QueueLimit { packets: q.packets, bytes: q.bytes.map(|b| b.0) })
        }
    }
}

fn loss_model(l: &Option<LossCfg>, path: &str) -> Result<LossModel, ScenarioError> {
    Ok(match l {
        None | Some(LossCfg::None) => LossModel::None,
        Some(LossCfg::Bernoulli { p }) => {
            if !(0.0..=1.0).contains(p) || p.is_nan() {
                return Err(err(format!("{path}.p"), format!("{p} is not a probability in [0, 1]")));
            }
            LossModel::Bernoulli(*p)
        }
        Some(LossCfg::Periodic { every }) => {
            if *every == 0 {
                return Err(err(
                    format!("{path}.every"),
                    "0: at least 1 packet must be delivered between losses",
                ));
            }
            LossModel::Periodic { every: *every }
        }
    })
}

/// The settings of one direction: link-level values overlaid by the direction's own.
fn direction(
    spec: &LinkSpec,
    dir: &Option<DirCfg>,
    path: &str,
    dirname: &str,
    default_mtu: u64,
    end: SimTime,
) -> Result<DirSettings, ScenarioError> {
    let d = dir.clone().unwrap_or_default();
    let dpath = format!("{path}.{dirname}");
    let pick = |own: bool| if own { dpath.clone() } else { path.to_string() };
    let rate = d
        .rate
        .or(spec.rate)
        .ok_or_else(|| err(format!("{path}.rate"), "missing: every link needs a rate, e.g. \"10Mbps\""))?;
    let delay = d.delay.or(spec.delay).map(|x| x.0).unwrap_or(SimDuration::ZERO);
    let mtu = spec.mtu.map(|m| m.0).unwrap_or(default_mtu);
    if mtu <= UDP_IP {
        return Err(err(
            format!("{path}.mtu"),
            format!("{mtu} B is smaller than the IPv4 + UDP headers (28 B)"),
        ));
    }
    if mtu > u32::MAX as u64 {
        return Err(err(format!("{path}.mtu"), format!("{mtu} B is too large")));
    }
    let overhead = spec.overhead.map(|o| o.0).unwrap_or(PPP_OVERHEAD as u64);
    let queue = queue_limit(
        if d.queue.is_some() { &d.queue } else { &spec.queue },
        &format!("{}.queue", pick(d.queue.is_some())),
    )?;
    let loss = loss_model(
        if d.loss.is_some() { &d.loss } else { &spec.loss },
        &format!("{}.loss", pick(d.loss.is_some())),
    )?;
    let jitter =
        d.jitter.as_ref().or(spec.jitter.as_ref()).map(|j| Jitter { max: j.max.0, reorder: j.reorder });
    let mut cfg = ChannelConfig::new(rate.0, delay, mtu as u32);
    cfg.overhead = overhead as u32;
    cfg.queue = queue;
    cfg.loss = loss;
    cfg.jitter = jitter;

    let mut events = Vec::new();
    let schedule = d.schedule.as_ref().or(spec.schedule.as_ref());
    if let Some(s) = schedule {
        for st in s {
            events.push((SimTime(st.at.0 .0), LinkChange::Rate(st.rate.0)));
        }
    }
    if let Some(sp) = d.spikes.as_ref().or(spec.spikes.as_ref()) {
        let sp_path = format!("{}.spikes", pick(d.spikes.is_some()));
        if !(sp.fraction > 0.0 && sp.fraction <= 1.0) {
            return Err(err(format!("{sp_path}.fraction"), format!("{} must be in (0, 1]", sp.fraction)));
        }
        if sp.period.0 .0 == 0 || sp.duration.0 >= sp.period.0 {
            return Err(err(format!("{sp_path}.duration"), "must be shorter than `period` (and period > 0)"));
        }
        let low = Rate::bps(((rate.0.bits_per_s as f64) * sp.fraction).round().max(1.0) as u64);
        let mut t = sp.start.map(|s| s.0 .0).unwrap_or(sp.period.0 .0);
        while t <= end.0 {
            events.push((SimTime(t), LinkChange::Rate(low)));
            events.push((SimTime(t + sp.duration.0 .0), LinkChange::Rate(rate.0)));
            t += sp.period.0 .0;
        }
    }
    if let Some(downs) = d.down.as_ref().or(spec.down.as_ref()) {
        for (i, dn) in downs.iter().enumerate() {
            if dn.to.0 <= dn.from.0 {
                return Err(err(format!("{}.down[{i}].to", pick(d.down.is_some())), "must be after `from`"));
            }
            events.push((SimTime(dn.from.0 .0), LinkChange::Up(false)));
            events.push((SimTime(dn.to.0 .0), LinkChange::Up(true)));
        }
    }
    Ok(DirSettings { cfg, events })
}

#[allow(clippy::too_many_arguments)] // each is a distinct piece of the link's context
fn add_link(
    b: &mut NetworkBuilder,
    spec: &LinkSpec,
    name: &str,
    a: NodeId,
    bn: NodeId,
    path: &str,
    default_mtu: u64,
    end: SimTime,
    events: &mut Vec<(SimTime, NetEvent<Payload>)>,
) -> Result<(), ScenarioError> {
    let ab = direction(spec, &spec.forward, path, "forward", default_mtu, end)?;
    let ba = direction(spec, &spec.reverse, path, "reverse", default_mtu, end)?;
    let (cab, cba) = b.link(name, a, bn, ab.cfg, ba.cfg).map_err(|e| err(path.to_string(), e.to_string()))?;
    for (c, evs) in [(cab, ab.events), (cba, ba.events)] {
        for (t, change) in evs {
            let ev = match change {
                LinkChange::Rate(r) => NetEvent::SetRate(c, r),
                LinkChange::Up(up) => NetEvent::SetUp(c, up),
            };
            events.push((t, ev));
        }
    }
    Ok(())
}

/// Resolves `cc` settings into controller specs: the built-in algorithms first, then the run's
/// plugins. Remembers what it resolved, so flows with the same settings share one spec (and a
/// plugin's factory is made once).
struct CcResolver<'a> {
    plugins: &'a Plugins,
    done: Vec<(CcCfg, CcSpec)>,
}

impl CcResolver<'_> {
    /// The controller of `q` (path `{path}.cc` in errors): its `cc` (default NewReno), with
    /// the older `exact_increase` key applied to NewReno when the table does not set it.
    fn spec(&mut self, q: &QuicCfg, path: &str) -> Result<CcSpec, ScenarioError> {
        let mut cc =
            q.cc.clone().unwrap_or_else(|| CcCfg { algo: "newreno".into(), params: Default::default() });
        if let (Some(v), "newreno") = (q.exact_increase, cc.algo.as_str()) {
            cc.params.entry("exact_increase").or_insert(serde_json::Value::Bool(v));
        }
        if let Some((_, spec)) = self.done.iter().find(|(c, _)| *c == cc) {
            return Ok(spec.clone());
        }
        let path = format!("{path}.cc");
        let at =
            |sub: &str| if sub.is_empty() || sub == "." { path.clone() } else { format!("{path}.{sub}") };
        let params = serde_json::Value::Object(cc.params.clone());
        let mut track = serde_path_to_error::Track::new();
        let de = serde_path_to_error::Deserializer::new(params.clone(), &mut track);
        let spec = match BuiltinConfig::parse(&cc.algo, de) {
            Ok(Some(c)) => CcSpec::Builtin(c),
            Err(e) => return Err(err(at(&track.path().to_string()), e.to_string())),
            Ok(None) => match self.plugins.controller(&cc.algo) {
                Some(plugin) => {
                    let factory = plugin(&params).map_err(|e| err(at(&e.path), e.message))?;
                    CcSpec::Factory { name: cc.algo.as_str().into(), factory }
                }
                None => {
                    let names: Vec<&str> =
                        quicksim_cc::NAMES.iter().copied().chain(self.plugins.controller_names()).collect();
                    return Err(err(
                        path,
                        format!("{:?} is not a congestion controller; use one of {names:?}", cc.algo),
                    ));
                }
            },
        };
        self.done.push((cc, spec.clone()));
        Ok(spec)
    }
}

fn quic_config(
    q: &QuicCfg,
    path_mtu: u64,
    path: &str,
    ccs: &mut CcResolver,
) -> Result<QuicConfig, ScenarioError> {
    let mut c = QuicConfig::default();
    let p = |f: &str| format!("{path}.{f}");
    if let Some(h) = &q.header {
        c.header = match h.as_str() {
            "inet" => HeaderProfile::Inet,
            "rfc9000" => HeaderProfile::Rfc9000 { dcid_len: q.dcid_len.unwrap_or(8) },
            other => {
                return Err(err(
                    p("header"),
                    format!("{other:?} is not a header profile; use \"inet\" or \"rfc9000\""),
                ))
            }
        };
    }
    c.max_packet_size = path_mtu - UDP_IP;
    if let Some(m) = q.max_packet_size {
        if m.0 > path_mtu - UDP_IP {
            return Err(err(
                p("max_packet_size"),
                format!("{} B does not fit the path MTU {} B minus 28 B of IPv4 + UDP", m.0, path_mtu),
            ));
        }
        c.max_packet_size = m.0;
    }
    macro_rules! set {
        ($($f:ident),*) => { $( if let Some(v) = q.$f.clone() { c.$f = v.into(); } )* };
    }
    set!(handshake, partial_window, pacing, ibit, bundle_ack, round_consumed_data);
    c.cc = ccs.spec(q, path)?;
    if let Some(v) = q.min_ack_delay {
        c.min_ack_delay = Some(v.0);
    }
    if let Some(v) = q.ack_frequency_max_ack_delay {
        c.ack_frequency_max_ack_delay = Some(v.0);
    }
    if let Some(v) = q.ack_frequency_reordering {
        c.ack_frequency_reordering = v;
    }
    if let Some(v) = q.immediate_ack_on_block {
        c.immediate_ack_on_block = v;
    }
    let policy = q.ack_policy.as_deref().unwrap_or("receiver");
    c.ack_policy = match policy {
        "receiver" => AckFreqPolicy::Receiver,
        "fixed" => match q.ack_frequency_threshold {
            Some(threshold) => AckFreqPolicy::Fixed { threshold },
            None => {
                return Err(err(
                    p("ack_frequency_threshold"),
                    "is required with ack_policy = \"fixed\" (an ACK after more than N packets)",
                ))
            }
        },
        "cwnd" => {
            let max = q.ack_frequency_max.unwrap_or(10);
            if max == 0 {
                return Err(err(p("ack_frequency_max"), "0: at least 1 packet per ACK"));
            }
            AckFreqPolicy::Cwnd { max }
        }
        other => {
            return Err(err(
                p("ack_policy"),
                format!("{other:?} is not an ACK policy; use \"receiver\", \"fixed\" or \"cwnd\""),
            ))
        }
    };
    if q.ack_frequency_threshold.is_some() && policy != "fixed" {
        return Err(err(
            p("ack_frequency_threshold"),
            format!("only applies to ack_policy = \"fixed\", not {policy:?}"),
        ));
    }
    if q.ack_frequency_max.is_some() && policy != "cwnd" {
        return Err(err(
            p("ack_frequency_max"),
            format!("only applies to ack_policy = \"cwnd\", not {policy:?}"),
        ));
    }
    if (policy != "receiver" || c.immediate_ack_on_block) && c.min_ack_delay.is_none() {
        return Err(err(p("min_ack_delay"), format!("is required with ack_policy = {policy:?}{}: the peer must advertise it to accept ACK_FREQUENCY / IMMEDIATE_ACK (try \"1ms\")", if c.immediate_ack_on_block { " / immediate_ack_on_block" } else { "" })));
    }
    if let Some(v) = q.initial_rtt {
        c.initial_rtt = v.0;
    }
    if let Some(v) = q.max_ack_delay {
        c.max_ack_delay = v.0;
    }
    if let Some(v) = q.ack_ratio {
        if v == 0 {
            return Err(err(p("ack_ratio"), "0: acknowledge at least every 1 packet"));
        }
        c.ack_ratio = v;
    }
    if let Some(v) = q.max_ack_ranges {
        c.max_ack_ranges = v as usize;
    }
    if let Some(v) = q.initial_max_data {
        c.initial_max_data = v.0;
    }
    if let Some(v) = q.initial_max_stream_data {
        c.initial_max_stream_data = v.0;
    }
    for (name, v, dst) in [
        ("max_data_threshold", q.max_data_threshold, &mut c.max_data_threshold),
        ("max_stream_data_threshold", q.max_stream_data_threshold, &mut c.max_stream_data_threshold),
        ("send_queue_low_water", q.send_queue_low_water, &mut c.send_queue_low_water),
    ] {
        if let Some(v) = v {
            if !(0.0..=1.0).contains(&v) {
                return Err(err(p(name), format!("{v} must be a fraction in [0, 1]")));
            }
            *dst = v;
        }
    }
    if let Some(v) = q.send_queue_limit {
        c.send_queue_limit = v.0;
    }
    c.validate().map_err(|e| err(path.to_string(), e))?;
    Ok(c)
}

pub(crate) fn build(sc: &Scenario, seed: u64, plugins: &Plugins) -> Result<Built, ScenarioError> {
    let end = SimTime(sc.run.duration.0 .0);
    if end.0 == 0 {
        return Err(err("run.duration", "\"0s\": a run must last longer than 0 s"));
    }
    let bin = sc.run.record_interval.map(|d| d.0).unwrap_or(SimDuration::from_millis(500));
    if bin.0 == 0 {
        return Err(err("run.record_interval", "must be > 0"));
    }
    let rng = RngStreams::new(seed);
    let mut b = NetworkBuilder::new();
    let mut link_events = Vec::new();

    if let Some(db) = &sc.dumbbell {
        if db.pairs == 0 {
            return Err(err("dumbbell.pairs", "0: a dumbbell needs at least 1 pair"));
        }
        let mtu = db.mtu.map(|m| m.0).unwrap_or(DEFAULT_MTU);
        for (name, what) in [(&db.bottleneck, "bottleneck"), (&db.access, "access")] {
            for (f, v) in [("name", &name.name), ("a", &name.a), ("b", &name.b)] {
                if v.is_some() {
                    return Err(err(
                        format!("dumbbell.{what}.{f}"),
                        "is implied by the dumbbell; leave it out",
                    ));
                }
            }
        }
        let mut access = db.access.clone();
        if access.rate.is_none() {
            access.rate = Some(crate::units::RateVal(Rate::gbps(1)));
        }
        if let Some(d) = &db.access_delays {
            if d.len() != db.pairs as usize {
                return Err(err(
                    "dumbbell.access_delays",
                    format!("has {} entries for {} pairs", d.len(), db.pairs),
                ));
            }
        }
        let r1 = b.node("router1", NodeKind::Router).map_err(|e| err("dumbbell", e.to_string()))?;
        let r2 = b.node("router2", NodeKind::Router).map_err(|e| err("dumbbell", e.to_string()))?;
        add_link(
            &mut b,
            &db.bottleneck,
            "bottleneck",
            r1,
            r2,
            "dumbbell.bottleneck",
            mtu,
            end,
            &mut link_events,
        )?;
        for i in 1..=db.pairs {
            let s =
                b.node(&format!("sender{i}"), NodeKind::Host).map_err(|e| err("dumbbell", e.to_string()))?;
            let r = b
                .node(&format!("receiver{i}"), NodeKind::Host)
                .map_err(|e| err("dumbbell", e.to_string()))?;
            let mut acc = access.clone();
            if let Some(d) = &db.access_delays {
                acc.delay = Some(d[i as usize - 1]);
            }
            add_link(
                &mut b,
                &acc,
                &format!("access{i}"),
                s,
                r1,
                "dumbbell.access",
                mtu,
                end,
                &mut link_events,
            )?;
            add_link(
                &mut b,
                &access,
                &format!("egress{i}"),
                r2,
                r,
                "dumbbell.access",
                mtu,
                end,
                &mut link_events,
            )?;
        }
    }
    for (name, n) in &sc.nodes {
        let kind = match n.kind {
            NodeKindCfg::Host => NodeKind::Host,
            NodeKindCfg::Router => NodeKind::Router,
        };
        b.node(name, kind).map_err(|e| err(format!("nodes.{name}"), e.to_string()))?;
    }
    for (i, l) in sc.links.iter().enumerate() {
        let path = format!("links[{i}]");
        let name = l.name.clone().ok_or_else(|| err(format!("{path}.name"), "missing"))?;
        let mut ends = [NodeId(0); 2];
        for (k, (f, v)) in [("a", &l.a), ("b", &l.b)].into_iter().enumerate() {
            let v =
                v.as_ref().ok_or_else(|| err(format!("{path}.{f}"), "missing: name the node at this end"))?;
            ends[k] = b.find(v).ok_or_else(|| err(format!("{path}.{f}"), format!("{v:?} is not a node")))?;
        }
        add_link(&mut b, l, &name, ends[0], ends[1], &path, DEFAULT_MTU, end, &mut link_events)?;
    }
    let net: Network<Payload> = b.build(&rng);
    if net.names.is_empty() {
        return Err(err("", "the scenario has no nodes: give a [dumbbell] or [nodes] and [[links]]"));
    }

    // Flows.
    let mut flows = Vec::with_capacity(sc.flows.len());
    let mut names: Vec<String> = Vec::new();
    let mut scratch = Vec::new();
    let mut shared_cfgs: Vec<Arc<QuicConfig>> = Vec::new();
    let mut ccs = CcResolver { plugins, done: Vec::new() };
    for (i, f) in sc.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        let p = |x: &str| format!("{path}.{x}");
        if names.contains(&f.name) {
            return Err(err(p("name"), format!("{:?} is used by two flows", f.name)));
        }
        let node = |field: &str, v: &str| -> Result<NodeId, ScenarioError> {
            let n = net.find(v).ok_or_else(|| err(p(field), format!("{v:?} is not a node")))?;
            if net.kinds[n.0 as usize] != NodeKind::Host {
                return Err(err(p(field), format!("{v:?} is a router; flows run between hosts")));
            }
            Ok(n)
        };
        let src = node("src", &f.src)?;
        let dst = node("dst", &f.dst)?;
        if src == dst {
            return Err(err(p("dst"), format!("{:?} is also the source", f.dst)));
        }
        if !net.reachable(src, dst) || !net.reachable(dst, src) {
            return Err(err(p("dst"), format!("{:?} is not connected to {:?}", f.dst, f.src)));
        }
        let start = f.start.map(|d| SimTime(d.0 .0)).unwrap_or(SimTime::ZERO);
        let stop = f.stop.map(|d| SimTime(d.0 .0)).unwrap_or(end);
        if stop <= start {
            return Err(err(p("stop"), format!("{} is not after start {}", stop, start)));
        }
        let mtu = net.path_mtu(src, dst).expect("reachable") as u64;
        let forbid = |field: &str, set: bool, kind: &str| -> Result<(), ScenarioError> {
            if set {
                Err(err(p(field), format!("does not apply to a {kind} flow")))
            } else {
                Ok(())
            }
        };
        let app = match f.kind {
            FlowKind::Udp | FlowKind::Onoff => {
                let kind = if f.kind == FlowKind::Udp { "udp" } else { "onoff" };
                forbid("app", f.app.is_some(), kind)?;
                forbid("bytes", f.bytes.is_some(), kind)?;
                forbid("streams", f.streams.is_some(), kind)?;
                forbid("quic", f.quic.is_some(), kind)?;
                let size = f
                    .size
                    .clone()
                    .ok_or_else(|| err(p("size"), "missing: the datagram payload size, e.g. \"1000B\""))?;
                let max = match size {
                    SizeDist::Const(v) => v,
                    SizeDist::Uniform(_, b) => b,
                };
                if max + UDP_IP > mtu {
                    return Err(err(
                        p("size"),
                        format!("{max} B + 28 B of headers exceeds the path MTU {mtu} B"),
                    ));
                }
                if matches!(size, SizeDist::Const(0)) {
                    return Err(err(p("size"), "0 B: a datagram needs a payload"));
                }
                if f.rate.is_some() == f.interval.is_some() {
                    return Err(err(p("interval"), "give exactly one of `interval` and `rate`"));
                }
                if let Some(TimeDist::Const(d)) = &f.interval {
                    if d.0 == 0 {
                        return Err(err(p("interval"), "0s: the interval must be > 0"));
                    }
                }
                let onoff = if f.kind == FlowKind::Onoff {
                    let on = f.on.clone().ok_or_else(|| {
                        err(p("on"), "missing: ON period, e.g. { dist = \"exponential\", mean = \"1s\" }")
                    })?;
                    let off = f.off.clone().ok_or_else(|| err(p("off"), "missing: OFF period"))?;
                    Some((on, off))
                } else {
                    forbid("on", f.on.is_some(), kind)?;
                    forbid("off", f.off.is_some(), kind)?;
                    None
                };
                FlowApp::Udp(Box::new(UdpState {
                    spec: UdpSpec { size, interval: f.interval.clone(), rate: f.rate.map(|r| r.0), onoff },
                    rng: rng.stream("app", i as u64),
                    on: false,
                    gen: 0,
                }))
            }
            FlowKind::Quic => {
                forbid("rate", f.rate.is_some(), "quic")?;
                forbid("on", f.on.is_some(), "quic")?;
                forbid("off", f.off.is_some(), "quic")?;
                let qc = sc.quic.overlay(f.quic.as_ref().unwrap_or(&QuicCfg::default()));
                let qpath = if f.quic.is_some() { p("quic") } else { "quic".to_string() };
                let cfg = quic_config(&qc, mtu, &qpath, &mut ccs)?;
                // Flows with the same settings share one read-only config (a flow's two
                // endpoints always do): 288 B per connection otherwise. Checking the last few
                // distinct configs finds the usual case (one [quic] section) without a search
                // that grows with the number of flows.
                let cfg = match shared_cfgs.iter().rev().take(8).find(|c| ***c == cfg) {
                    Some(c) => Arc::clone(c),
                    None => {
                        shared_cfgs.push(Arc::new(cfg));
                        Arc::clone(shared_cfgs.last().expect("just pushed"))
                    }
                };
                let app = f.app.unwrap_or(QuicApp::Saturated);
                let message = match app {
                    QuicApp::Messages => {
                        let s = f
                            .size
                            .clone()
                            .ok_or_else(|| err(p("size"), "missing: message size for app = \"messages\""))?;
                        let iv = f.interval.clone().ok_or_else(|| {
                            err(p("interval"), "missing: message interval for app = \"messages\"")
                        })?;
                        Some((s, iv))
                    }
                    _ => {
                        forbid("size", f.size.is_some(), "saturated/bulk QUIC")?;
                        forbid("interval", f.interval.is_some(), "saturated/bulk QUIC")?;
                        None
                    }
                };
                let bulk = match (app, f.bytes) {
                    (QuicApp::Bulk, Some(b)) if b.0 > 0 => b.0,
                    (QuicApp::Bulk, _) => {
                        return Err(err(
                            p("bytes"),
                            "missing or 0: a bulk transfer needs `bytes`, e.g. \"10MB\"",
                        ))
                    }
                    (_, Some(_)) => return Err(err(p("bytes"), "only applies to app = \"bulk\"")),
                    _ => 0,
                };
                let streams = f.streams.unwrap_or(1);
                if streams == 0 {
                    return Err(err(p("streams"), "0: at least 1 stream"));
                }
                // Stored encoded until the flow starts (~60 B instead of a ~1.7 kB live state).
                FlowApp::quic_idle(
                    QuicState {
                        app,
                        conns: None,
                        timers: [Opt::NONE, Opt::NONE],
                        streams,
                        next_stream: 0,
                        bulk_left: bulk,
                        bulk_total: bulk,
                        delivered: 0,
                        completion: None,
                        message,
                        rng: rng.stream("app", i as u64),
                        active: false,
                        last: None,
                        close_error: None,
                        cfg,
                    },
                    &mut scratch,
                )
            }
        };
        names.push(f.name.clone());
        flows.push(FlowRt { spec: FlowSpec { kind: f.kind, src, dst, start, stop }, app });
    }

    let rc = &sc.run.record;
    let nch = net.chans.len();
    let link_name = |c: usize| net.chan_names[c].split(':').next().unwrap_or("").to_string();
    let link_sel: Vec<bool> = (0..nch).map(|c| rc.links.includes(&link_name(c))).collect();
    let queue_sel: Vec<bool> = (0..nch)
        .map(|c| match &rc.queues {
            Select::All(b) => *b && net.kinds[net.chans[c].from.0 as usize] == NodeKind::Router,
            Select::Names(v) => v.contains(&link_name(c)),
        })
        .collect();
    for (field, sel) in [("queues", &rc.queues), ("links", &rc.links)] {
        if let Select::Names(v) = sel {
            for n in v {
                if !(0..nch).any(|c| &link_name(c) == n) {
                    return Err(err(format!("run.record.{field}"), format!("{n:?} is not a link")));
                }
            }
        }
    }
    let conn_sel: Vec<bool> = names.iter().map(|n| rc.conn.includes(n)).collect();
    for n in &rc.packets {
        if !names.contains(n) {
            return Err(err("run.record.packets", format!("{n:?} is not a flow")));
        }
    }
    let trace_sel: Vec<bool> = names.iter().map(|n| rc.packets.contains(n)).collect();
    let rec = Recorder::new(
        bin,
        flows.len(),
        rc.flows,
        link_sel,
        queue_sel,
        rc.drops,
        conn_sel,
        trace_sel,
        rc.max_samples,
    );
    Ok(Built { net, flows, rec, end, max_events: sc.run.max_events, link_events, flow_names: names })
}
