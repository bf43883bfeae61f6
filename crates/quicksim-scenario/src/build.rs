//! Schema -> world: semantic validation (with the field path in every error) and construction
//! of the network, applications and recorders.

use crate::apps::App;
use crate::cc_config::CcResolver;
use crate::flows::transport::TransportFlow;
use crate::flows::udp::{UdpFlow, UdpSpec, UDP_IP};
use crate::flows::{FlowApp, FlowRt, FlowSpec};
use crate::link_cfg;
use crate::output::Sinks;
use crate::outputs;
use crate::payload::Payload;
use crate::plugins::Plugins;
use crate::schema::*;
use crate::ScenarioError;
use quicksim_engine::{Rate, RngStreams, SimDuration, SimTime};
use quicksim_net::model::schedule::{RateSchedule, Spikes};
use quicksim_net::model::LinkModelConfig;
use quicksim_net::qdisc::{ConfigError, ConfigSource};
use quicksim_net::{
    AnyQdisc, ChanId, ChannelConfig, Jitter, NetEvent, Network, NetworkBuilder, NodeId, NodeKind, Qdisc,
    QdiscConfig, PPP_OVERHEAD,
};
use quicksim_quinn::QuinnEndpoint;
use quicksim_transport::quic::{AckFreqPolicy, Connection, HeaderProfile, QuicConfig};
use quicksim_transport::tcp::{Connection as TcpConnection, TcpConfig};
use std::sync::Arc;

pub(crate) const DEFAULT_MTU: u64 = 1500;
/// Bin width of the per-flow and per-link counters: 0.5 s, as the INET showcase.
pub(crate) const DEFAULT_RECORD_INTERVAL: SimDuration = SimDuration(500_000_000_000);
/// A dumbbell's access links: 1 Gbit/s, as the INET showcase.
pub(crate) const DEFAULT_ACCESS_RATE: Rate = Rate { bits_per_s: 1_000_000_000 };

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path.into(), msg.into())
}

pub(crate) struct Built {
    pub net: Network<Payload>,
    pub flows: Vec<FlowRt>,
    pub rec: Sinks,
    pub end: SimTime,
    pub max_events: Option<u64>,
    pub link_events: Vec<(SimTime, NetEvent<Payload>)>,
    pub flow_names: Vec<String>,
    /// The run's random streams, for what flows make during the run (controller streams).
    pub rng: RngStreams,
}

/// A scheduled change of one link direction.
enum LinkChange {
    Rate(Rate),
    Up(bool),
}

struct DirSettings {
    cfg: ChannelConfig,
    events: Vec<(SimTime, LinkChange)>,
    /// A queue discipline registered at run time, in place of `cfg.qdisc`.
    plugin_qdisc: Option<Box<dyn Qdisc<Payload>>>,
}

/// What the links add to the world besides the network: the scheduled link changes, and the
/// run-time queue disciplines to install once the network is built; and what building them
/// needs: the trace files read so far, the flows (drop lists name them).
struct LinkExtras<'a> {
    events: Vec<(SimTime, NetEvent<Payload>)>,
    qdiscs: Vec<(ChanId, Box<dyn Qdisc<Payload>>)>,
    traces: link_cfg::Traces,
    flows: &'a [FlowCfg],
}

/// A `queue` table (without `kind`) as the source of a discipline's settings; errors carry
/// the field path.
struct QueueTable<'a> {
    table: &'a serde_json::Value,
    path: &'a str,
}

impl ConfigSource for QueueTable<'_> {
    type Error = ScenarioError;
    fn decode<C: serde::de::DeserializeOwned>(&self) -> Result<C, ScenarioError> {
        serde_path_to_error::deserialize(self.table).map_err(|e| {
            let inner = e.path().to_string();
            let path = if inner == "." { self.path.to_string() } else { format!("{}.{inner}", self.path) };
            err(path, e.inner().to_string())
        })
    }
    fn invalid(&self, e: ConfigError) -> ScenarioError {
        let path =
            if e.field.is_empty() { self.path.to_string() } else { format!("{}.{}", self.path, e.field) };
        err(path, e.message)
    }
}

/// A built-in discipline's settings, and the discipline itself when it is registered at run
/// time instead (the settings are then unused).
type QueueChoice = (QdiscConfig, Option<Box<dyn Qdisc<Payload>>>);

/// The queue discipline of a `queue` table: built in (`kind` absent means "droptail"), or
/// registered at run time. No table: DropTail with INET's 10000 packets.
fn queue(q: Option<&QueueCfg>, path: &str, plugins: &Plugins) -> Result<QueueChoice, ScenarioError> {
    let Some(QueueCfg(map)) = q else { return Ok((QdiscConfig::default(), None)) };
    let kind = match map.get("kind") {
        None => "droptail",
        Some(serde_json::Value::String(k)) => k.as_str(),
        Some(other) => {
            return Err(err(format!("{path}.kind"), format!("{other} is not a name; try \"droptail\"")))
        }
    };
    let mut rest = map.clone();
    rest.remove("kind");
    let table = serde_json::Value::Object(rest);
    if let Some(cfg) = QdiscConfig::decode(kind, &QueueTable { table: &table, path }) {
        return Ok((cfg?, None));
    }
    match plugins.qdisc(kind) {
        Some(make) => {
            let q = make(&table).map_err(|m| err(path.to_string(), m))?;
            Ok((QdiscConfig::default(), Some(q)))
        }
        None => Err(err(
            format!("{path}.kind"),
            format!("{kind:?} is not a queue discipline; use one of {:?}", plugins.qdisc_kinds()),
        )),
    }
}

/// The settings of one direction: link-level values overlaid by the direction's own.
#[allow(clippy::too_many_arguments)] // each is a distinct piece of the link's context
fn direction(
    spec: &LinkSpec,
    dir: &Option<DirCfg>,
    path: &str,
    dirname: &str,
    default_mtu: u64,
    end: SimTime,
    plugins: &Plugins,
    extras: &mut LinkExtras,
) -> Result<DirSettings, ScenarioError> {
    let d = dir.clone().unwrap_or_default();
    let dpath = format!("{path}.{dirname}");
    let pick = |own: bool| if own { dpath.clone() } else { path.to_string() };
    let model = link_cfg::link_model(
        d.model.as_ref().or(spec.model.as_ref()),
        &format!("{}.model", pick(d.model.is_some())),
        &mut extras.traces,
    )?;
    let rate = match &model {
        Some(LinkModelConfig::Trace(t)) => {
            // The trace is the rate: a rate setting of the same table (or of the link, for a
            // link-level trace) has nothing to apply to.
            for (field, own, shared) in [
                ("rate", d.rate.is_some(), spec.rate.is_some()),
                ("schedule", d.schedule.is_some(), spec.schedule.is_some()),
                ("spikes", d.spikes.is_some(), spec.spikes.is_some()),
            ] {
                if own || (shared && d.model.is_none()) {
                    return Err(err(
                        format!("{}.{field}", pick(own)),
                        "does not apply to a trace-driven link (`model.kind = \"trace\"`): the trace sets its rate",
                    ));
                }
            }
            crate::units::RateVal(t.mean_rate())
        }
        _ => d.rate.or(spec.rate).ok_or_else(|| {
            err(format!("{path}.rate"), "missing: every link needs a rate, e.g. \"10Mbps\"")
        })?,
    };
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
    let (qdisc, plugin_qdisc) = queue(
        d.queue.as_ref().or(spec.queue.as_ref()),
        &format!("{}.queue", pick(d.queue.is_some())),
        plugins,
    )?;
    let loss = link_cfg::loss_model(
        if d.loss.is_some() { &d.loss } else { &spec.loss },
        &format!("{}.loss", pick(d.loss.is_some())),
    )?;
    let jitter =
        d.jitter.as_ref().or(spec.jitter.as_ref()).map(|j| Jitter { max: j.max.0, reorder: j.reorder });
    let mut cfg = ChannelConfig::new(rate.0, delay, mtu as u32);
    cfg.overhead = overhead as u32;
    cfg.qdisc = qdisc;
    cfg.loss = loss;
    cfg.jitter = jitter;
    cfg.model = model;
    if let Some(lists) = d.drop.as_ref().or(spec.drop.as_ref()) {
        cfg.drop_lists =
            link_cfg::drop_lists(lists, &format!("{}.drop", pick(d.drop.is_some())), extras.flows)?;
    }
    if let Some(n) = d.hold_limit.or(spec.hold_limit) {
        if n == 0 {
            return Err(err(
                format!("{}.hold_limit", pick(d.hold_limit.is_some())),
                "0 must be at least 1 (packets)",
            ));
        }
        cfg.hold_limit = Some(n);
    }

    // Rate steps first, then down/up changes: the order they are queued in, which breaks ties
    // between changes at the same time.
    let mut steps = RateSchedule::default();
    let schedule = d.schedule.as_ref().or(spec.schedule.as_ref());
    if let Some(s) = schedule {
        for st in s {
            steps.step(SimTime(st.at.0 .0), st.rate.0);
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
        let spikes = Spikes {
            period: sp.period.0,
            duration: sp.duration.0,
            fraction: sp.fraction,
            start: sp.start.map(|s| s.0),
        };
        steps.spikes(rate.0, &spikes, end);
    }
    let mut events: Vec<_> = steps.steps.into_iter().map(|(t, r)| (t, LinkChange::Rate(r))).collect();
    if let Some(downs) = d.down.as_ref().or(spec.down.as_ref()) {
        for (i, dn) in downs.iter().enumerate() {
            if dn.to.0 <= dn.from.0 {
                return Err(err(format!("{}.down[{i}].to", pick(d.down.is_some())), "must be after `from`"));
            }
            events.push((SimTime(dn.from.0 .0), LinkChange::Up(false)));
            events.push((SimTime(dn.to.0 .0), LinkChange::Up(true)));
        }
    }
    Ok(DirSettings { cfg, events, plugin_qdisc })
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
    plugins: &Plugins,
    extras: &mut LinkExtras,
) -> Result<(), ScenarioError> {
    let ab = direction(spec, &spec.forward, path, "forward", default_mtu, end, plugins, extras)?;
    let ba = direction(spec, &spec.reverse, path, "reverse", default_mtu, end, plugins, extras)?;
    let (cab, cba) = b.link(name, a, bn, ab.cfg, ba.cfg).map_err(|e| err(path.to_string(), e.to_string()))?;
    for (c, evs, q) in [(cab, ab.events, ab.plugin_qdisc), (cba, ba.events, ba.plugin_qdisc)] {
        for (t, change) in evs {
            let ev = match change {
                LinkChange::Rate(r) => NetEvent::SetRate(c, r),
                LinkChange::Up(up) => NetEvent::SetUp(c, up),
            };
            extras.events.push((t, ev));
        }
        if let Some(q) = q {
            extras.qdiscs.push((c, q));
        }
    }
    Ok(())
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
    set!(handshake, partial_window, pacing, ibit, bundle_ack, ecn, round_consumed_data);
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
    if let Some(v) = q.initial_window {
        if v == 0 {
            return Err(err(p("initial_window"), "0 packets: the initial window is at least 1 packet"));
        }
        c.initial_window = Some(v);
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
    let bin = sc.run.record_interval.map(|d| d.0).unwrap_or(DEFAULT_RECORD_INTERVAL);
    if bin.0 == 0 {
        return Err(err("run.record_interval", "must be > 0"));
    }
    let rng = RngStreams::new(seed);
    let mut b = NetworkBuilder::new();
    let mut extras =
        LinkExtras { events: Vec::new(), qdiscs: Vec::new(), traces: Default::default(), flows: &sc.flows };

    if let Some(db) = &sc.dumbbell {
        for (field, given) in [("nodes", !sc.nodes.is_empty()), ("links", !sc.links.is_empty())] {
            if given {
                return Err(err(
                    field,
                    "a [dumbbell] builds its own nodes and links: give either [dumbbell] or [nodes] and \
                     [[links]], not both",
                ));
            }
        }
        crate::budget::check_pairs(db.pairs as u64, crate::budget::memory_limit()?)?;
        if db.pairs == 0 {
            return Err(err("dumbbell.pairs", "0: a dumbbell needs at least 1 pair"));
        }
        let mtu = db.mtu.map(|m| m.0).unwrap_or(DEFAULT_MTU);
        if mtu <= UDP_IP || mtu > u32::MAX as u64 {
            let why =
                if mtu <= UDP_IP { "is smaller than the IPv4 + UDP headers (28 B)" } else { "is too large" };
            return Err(err("dumbbell.mtu", format!("{mtu} B {why}")));
        }
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
        if access.rate.is_none() && !crate::link_cfg::is_trace(access.model.as_ref()) {
            access.rate = Some(crate::units::RateVal(DEFAULT_ACCESS_RATE));
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
            plugins,
            &mut extras,
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
                plugins,
                &mut extras,
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
                plugins,
                &mut extras,
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
        add_link(&mut b, l, &name, ends[0], ends[1], &path, DEFAULT_MTU, end, plugins, &mut extras)?;
    }
    let mut link_names = std::collections::HashSet::new();
    for (i, name) in b.link_names().enumerate() {
        if !link_names.insert(name) {
            let at = i.checked_sub(sc.dumbbell.as_ref().map_or(0, |d| 1 + 2 * d.pairs as usize));
            let path = at.map_or("dumbbell".to_string(), |k| format!("links[{k}].name"));
            return Err(err(path, format!("{name:?} is used by two links")));
        }
    }
    crate::budget::estimate(sc, &b, end, bin)?.check(crate::budget::memory_limit()?)?;
    let mut net: Network<Payload> = b.build(&rng);
    for (c, q) in extras.qdiscs {
        net.chans[c.0 as usize].set_qdisc(AnyQdisc::Dyn(q));
    }
    if net.names.is_empty() {
        return Err(err("", "the scenario has no nodes: give a [dumbbell] or [nodes] and [[links]]"));
    }

    // Flows.
    let mut flows = Vec::with_capacity(sc.flows.len());
    let mut names: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut scratch = Vec::new();
    let mut shared_cfgs: Vec<Arc<QuicConfig>> = Vec::new();
    let mut shared_tcp: Vec<Arc<TcpConfig>> = Vec::new();
    let mut ccs = CcResolver { plugins, done: Vec::new() };
    // The `rfc9000` connection id length of each QUIC flow, for a capture's headers.
    let mut dcid_len: Vec<Option<u8>> = vec![None; sc.flows.len()];
    for (i, f) in sc.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        let p = |x: &str| format!("{path}.{x}");
        if f.name.is_empty() {
            return Err(err(p("name"), "\"\": a flow needs a name"));
        }
        if !seen.insert(f.name.as_str()) {
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
        if start >= end && f.stop.is_none() {
            // With no stop of its own the flow would stop at the end, before it starts: say that
            // the start is the problem. (With a later stop it is accepted and never runs, so a
            // scenario can be cut short with run.duration.)
            let (s, e) = (
                crate::units::format_duration(SimDuration(start.0)),
                crate::units::format_duration(SimDuration(end.0)),
            );
            return Err(err(
                p("start"),
                format!("\"{s}\" is not before the end of the run (run.duration = \"{e}\")"),
            ));
        }
        if stop <= start {
            return Err(err(p("stop"), format!("{} is not after start {}", stop, start)));
        }
        let connect = f.connect.map_or(start, |d| SimTime(d.0 .0));
        if connect > start {
            let fmt = |t: SimTime| crate::units::format_duration(quicksim_engine::SimDuration(t.0));
            return Err(err(p("connect"), format!("{} is after start {}", fmt(connect), fmt(start))));
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
                forbid("connect", f.connect.is_some(), kind)?;
                forbid("write_size", f.write_size.is_some(), kind)?;
                forbid("quic", f.quic.is_some(), kind)?;
                forbid("tcp", f.tcp.is_some(), kind)?;
                forbid("quinn", f.quinn.is_some(), kind)?;
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
                FlowApp::Udp(Box::new(UdpFlow {
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
                forbid("tcp", f.tcp.is_some(), "quic")?;
                forbid("quinn", f.quinn.is_some(), "quic")?;
                let qc = sc.quic.overlay(f.quic.as_ref().unwrap_or(&QuicCfg::default()));
                let qpath = if f.quic.is_some() { p("quic") } else { "quic".to_string() };
                let cfg = quic_config(&qc, mtu, &qpath, &mut ccs)?;
                if let HeaderProfile::Rfc9000 { dcid_len: d } = cfg.header {
                    dcid_len[i] = Some(d);
                }
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
                let app = App::from_flow(f, &path, "QUIC", rng.stream("app", i as u64))?;
                FlowApp::transport(TransportFlow::<Connection>::new(app, cfg), &mut scratch)
            }
            FlowKind::Tcp => {
                forbid("rate", f.rate.is_some(), "tcp")?;
                forbid("on", f.on.is_some(), "tcp")?;
                forbid("off", f.off.is_some(), "tcp")?;
                forbid("quic", f.quic.is_some(), "tcp")?;
                forbid("quinn", f.quinn.is_some(), "tcp")?;
                if let Some(n) = f.streams.filter(|&n| n != 1) {
                    return Err(err(p("streams"), format!("{n}: a TCP connection is one byte stream")));
                }
                let cfg = crate::flows::tcp::config(&sc.tcp, f.tcp.as_ref(), mtu, &path, &mut ccs)?;
                let cfg = match shared_tcp.iter().rev().take(8).find(|c| ***c == cfg) {
                    Some(c) => Arc::clone(c),
                    None => {
                        shared_tcp.push(Arc::new(cfg));
                        Arc::clone(shared_tcp.last().expect("just pushed"))
                    }
                };
                let app = App::from_flow(f, &path, "TCP", rng.stream("app", i as u64))?;
                FlowApp::transport(TransportFlow::<TcpConnection>::new(app, cfg), &mut scratch)
            }
            FlowKind::Quinn => {
                forbid("rate", f.rate.is_some(), "quinn")?;
                forbid("on", f.on.is_some(), "quinn")?;
                forbid("off", f.off.is_some(), "quinn")?;
                forbid("quic", f.quic.is_some(), "quinn")?;
                forbid("tcp", f.tcp.is_some(), "quinn")?;
                let qrng = rng.stream("quinn", i as u64);
                let cfg = crate::flows::quinn::config(&sc.quinn, f.quinn.as_ref(), mtu, &path, qrng)?;
                let app = App::from_flow(f, &path, "quinn", rng.stream("app", i as u64))?;
                FlowApp::transport(TransportFlow::<QuinnEndpoint>::new(app, Arc::new(cfg)), &mut scratch)
            }
        };
        names.push(f.name.clone());
        let kind = match f.kind {
            FlowKind::Udp => "udp",
            FlowKind::Onoff => "onoff",
            FlowKind::Quic => "quic",
            FlowKind::Tcp => "tcp",
            FlowKind::Quinn => "quinn",
        };
        flows.push(FlowRt { spec: FlowSpec { kind, src, dst, connect, start, stop }, app });
    }

    let rec = outputs::sinks(sc, &net, &flows, &names, &dcid_len, bin, plugins)?;
    Ok(Built {
        net,
        flows,
        rec,
        end,
        max_events: sc.run.max_events,
        link_events: extras.events,
        flow_names: names,
        rng,
    })
}
