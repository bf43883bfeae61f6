//! Building the network: links (a dumbbell's or a general topology's), each direction's
//! settings (the link's overlaid by the direction's own), queue disciplines, link models and
//! the scheduled link changes.

use super::{err, DEFAULT_ACCESS_RATE, DEFAULT_MTU};
use crate::flows::udp::UDP_IP;
use crate::link_cfg;
use crate::payload::Payload;
use crate::plugins::Plugins;
use crate::schema::*;
use crate::ScenarioError;
use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_net::model::schedule::{RateSchedule, Spikes};
use quicksim_net::model::LinkModelConfig;
use quicksim_net::qdisc::{ConfigError, ConfigSource};
use quicksim_net::{
    ChanId, ChannelConfig, Jitter, NetEvent, NetworkBuilder, NodeId, NodeKind, Qdisc, QdiscConfig,
    PPP_OVERHEAD,
};

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
pub(crate) struct LinkExtras<'a> {
    pub events: Vec<(SimTime, NetEvent<Payload>)>,
    pub qdiscs: Vec<(ChanId, Box<dyn Qdisc<Payload>>)>,
    pub traces: link_cfg::Traces,
    pub flows: &'a [FlowCfg],
}

/// A `queue` or `model` table (without `kind`) as the source of its kind's settings; errors
/// carry the field path.
struct KindTable<'a> {
    table: &'a serde_json::Value,
    path: &'a str,
}

impl ConfigSource for KindTable<'_> {
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
fn queue(
    q: Option<&QueueCfg>,
    path: &str,
    plugins: &Plugins,
    rate: quicksim_engine::Rate,
    mtu: u64,
) -> Result<QueueChoice, ScenarioError> {
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
    super::bdp::resolve(&mut rest, path, rate, mtu)?;
    let table = serde_json::Value::Object(rest);
    if let Some(cfg) = QdiscConfig::decode(kind, &KindTable { table: &table, path }) {
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

/// The link model of a `model` table at `path` on a direction of rate `rate` (None: the model
/// sets its own).
fn link_model(
    m: &ModelCfg,
    path: &str,
    rate: Option<quicksim_engine::Rate>,
    files: &mut link_cfg::Traces,
) -> Result<LinkModelConfig, ScenarioError> {
    let kind = match m.0.get("kind") {
        None => LinkModelConfig::KINDS[0],
        Some(serde_json::Value::String(k)) => k.as_str(),
        Some(other) => {
            return Err(err(format!("{path}.kind"), format!("{other} is not a name; try \"trace\"")))
        }
    };
    let mut rest = m.0.clone();
    rest.remove("kind");
    let table = serde_json::Value::Object(rest);
    LinkModelConfig::decode(kind, &KindTable { table: &table, path }, rate, files).unwrap_or_else(|| {
        Err(err(
            format!("{path}.kind"),
            format!(
                "unknown variant `{kind}`, expected one of {}",
                LinkModelConfig::KINDS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
            ),
        ))
    })
}

/// A direction's rate and link model (`d`: the direction's own table, `pick`: the path of a
/// field set in it or in the link's): the `rate` given, or a model's own (a trace's) with no
/// `rate`, `schedule` or `spikes` beside it.
fn rate_and_model(
    spec: &LinkSpec,
    d: &DirCfg,
    path: &str,
    pick: &dyn Fn(bool) -> String,
    extras: &mut LinkExtras,
) -> Result<(crate::units::RateVal, Option<LinkModelConfig>), ScenarioError> {
    let model_cfg = d.model.as_ref().or(spec.model.as_ref());
    let model_path = format!("{}.model", pick(d.model.is_some()));
    if let Some(kind) = model_cfg.and_then(ModelCfg::kind) {
        if LinkModelConfig::sets_rate(kind).is_none() {
            let kinds: Vec<String> = LinkModelConfig::KINDS.iter().map(|k| format!("`{k}`")).collect();
            return Err(err(
                format!("{model_path}.kind"),
                format!("unknown variant `{kind}`, expected one of {}", kinds.join(", ")),
            ));
        }
    }
    let rate = if let Some(kind) = model_cfg.filter(|m| m.sets_rate()).and_then(ModelCfg::kind) {
        // The model is the rate: a rate setting of the same table (or of the link, for a
        // link-level model) has nothing to apply to.
        for (field, own, shared) in [
            ("rate", d.rate.is_some(), spec.rate.is_some()),
            ("schedule", d.schedule.is_some(), spec.schedule.is_some()),
            ("spikes", d.spikes.is_some(), spec.spikes.is_some()),
        ] {
            if own || (shared && d.model.is_none()) {
                return Err(err(
                    format!("{}.{field}", pick(own)),
                    format!(
                        "does not apply to a {kind}-driven link (`model.kind = \"{kind}\"`): the {kind} sets its rate"
                    ),
                ));
            }
        }
        None
    } else {
        Some(d.rate.or(spec.rate).ok_or_else(|| {
            err(format!("{path}.rate"), "missing: every link needs a rate, e.g. \"10Mbps\"")
        })?)
    };
    let model = match model_cfg {
        None => None,
        Some(m) => Some(link_model(m, &model_path, rate.map(|r| r.0), &mut extras.traces)?),
    };
    let rate = match rate {
        Some(r) => r,
        None => crate::units::RateVal(
            model.as_ref().and_then(LinkModelConfig::own_rate).expect("a model that sets the rate has one"),
        ),
    };
    Ok((rate, model))
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
    let (rate, model) = rate_and_model(spec, &d, path, &pick, extras)?;
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
        rate.0,
        mtu,
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
        let mut periods = Vec::with_capacity(downs.len());
        for (i, dn) in downs.iter().enumerate() {
            if dn.to.0 <= dn.from.0 {
                return Err(err(format!("{}.down[{i}].to", pick(d.down.is_some())), "must be after `from`"));
            }
            periods.push((dn.from.0, dn.to.0));
        }
        for (from, to) in merged_down_periods(periods) {
            events.push((SimTime(from.0), LinkChange::Up(false)));
            events.push((SimTime(to.0), LinkChange::Up(true)));
        }
    }
    Ok(DirSettings { cfg, events, plugin_qdisc })
}

/// Down periods as the link lives them: overlapping or touching ones are one period, from the
/// first `from` to the last `to` (each period's own up would otherwise bring the link up in the
/// middle of another), in time order.
fn merged_down_periods(mut periods: Vec<(SimDuration, SimDuration)>) -> Vec<(SimDuration, SimDuration)> {
    periods.sort_by_key(|p| p.0);
    let mut merged: Vec<(SimDuration, SimDuration)> = Vec::with_capacity(periods.len());
    for (from, to) in periods {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    merged
}

#[allow(clippy::too_many_arguments)] // each is a distinct piece of the link's context
pub(super) fn add_link(
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

/// The network of the scenario's topology: a dumbbell's nodes and links, or the `nodes` and
/// `links`, with every link name used once.
pub(super) fn topology(
    sc: &Scenario,
    end: SimTime,
    plugins: &Plugins,
    extras: &mut LinkExtras,
) -> Result<NetworkBuilder, ScenarioError> {
    let mut b = NetworkBuilder::new();
    if let Some(db) = &sc.dumbbell {
        if let Some(field) = [("nodes", !sc.nodes.is_empty()), ("links", !sc.links.is_empty())]
            .into_iter()
            .find_map(|(f, given)| given.then_some(f))
        {
            return Err(err(
                field,
                "a [dumbbell] builds its own nodes and links: give either [dumbbell] or [nodes] and \
                 [[links]], not both",
            ));
        }
        dumbbell(db, &mut b, end, plugins, extras)?;
    }
    for (name, n) in &sc.nodes {
        let kind = match n.kind {
            NodeKindCfg::Host => NodeKind::Host,
            NodeKindCfg::Router => NodeKind::Router,
        };
        match &n.interfaces {
            None => {
                b.node(name, kind).map_err(|e| err(format!("nodes.{name}"), e.to_string()))?;
            }
            Some(ifs) => interfaces(&mut b, name, kind, ifs)?,
        }
    }
    for (i, l) in sc.links.iter().enumerate() {
        let path = format!("links[{i}]");
        let name = l.name.clone().ok_or_else(|| err(format!("{path}.name"), "missing"))?;
        let mut ends = [NodeId(0); 2];
        for (k, (f, v)) in [("a", &l.a), ("b", &l.b)].into_iter().enumerate() {
            let v =
                v.as_ref().ok_or_else(|| err(format!("{path}.{f}"), "missing: name the node at this end"))?;
            ends[k] = link_end(sc, &b, v).map_err(|m| err(format!("{path}.{f}"), m))?;
        }
        add_link(&mut b, l, &name, ends[0], ends[1], &path, DEFAULT_MTU, end, plugins, extras)?;
    }
    let mut link_names = std::collections::HashSet::new();
    for (i, name) in b.link_names().enumerate() {
        if !link_names.insert(name) {
            let at = i.checked_sub(sc.dumbbell.as_ref().map_or(0, |d| 1 + 2 * d.pairs as usize));
            let path = at.map_or("dumbbell".to_string(), |k| format!("links[{k}].name"));
            return Err(err(path, format!("{name:?} is used by two links")));
        }
    }
    Ok(b)
}

/// A host with several interfaces: one network node per interface, named `<host>.<interface>`
/// (its own address, so routes towards it follow that interface's links), and the host's own
/// name as an alias of the first.
fn interfaces(
    b: &mut NetworkBuilder,
    host: &str,
    kind: NodeKind,
    ifs: &[String],
) -> Result<(), ScenarioError> {
    let path = format!("nodes.{host}.interfaces");
    if kind != NodeKind::Host {
        return Err(err(path, "a router forwards between all its links: only a host has interfaces"));
    }
    if ifs.is_empty() {
        return Err(err(path, "[] is empty: list at least one interface, or leave the key out"));
    }
    let mut first = None;
    for (i, name) in ifs.iter().enumerate() {
        if name.is_empty() || name.contains('.') || name.contains(char::is_whitespace) {
            return Err(err(
                format!("{path}[{i}]"),
                format!("{name:?} is not an interface name (no dots, no spaces)"),
            ));
        }
        if ifs[..i].contains(name) {
            return Err(err(format!("{path}[{i}]"), format!("{name:?} is listed twice")));
        }
        let id = b
            .node(&format!("{host}.{name}"), kind)
            .map_err(|e| err(format!("{path}[{i}]"), e.to_string()))?;
        first.get_or_insert(id);
    }
    b.alias(host, first.expect("at least one interface"))
        .map_err(|e| err(format!("nodes.{host}"), e.to_string()))
}

/// The node at a link's end: a node, or an interface `<host>.<interface>` of a host with
/// several; a host with interfaces must be named with one of them.
fn link_end(sc: &Scenario, b: &NetworkBuilder, v: &str) -> Result<NodeId, String> {
    let listed =
        |ifs: &[String], host: &str| ifs.iter().map(|i| format!("{host}.{i}")).collect::<Vec<_>>().join(", ");
    if let Some(ifs) = sc.nodes.get(v).and_then(|n| n.interfaces.as_deref()) {
        return Err(format!("{v:?} is a host with several interfaces: name one ({})", listed(ifs, v)));
    }
    if let Some(id) = b.find(v) {
        return Ok(id);
    }
    if let Some((host, _)) = v.rsplit_once('.') {
        if let Some(ifs) = sc.nodes.get(host).and_then(|n| n.interfaces.as_deref()) {
            return Err(format!(
                "{v:?} is not an interface of {host:?}; its interfaces are {}",
                listed(ifs, host)
            ));
        }
    }
    Err(format!("{v:?} is not a node"))
}

/// A dumbbell: routers router1 and router2 joined by the bottleneck, sender i on router1's
/// side (access link access{i}) and receiver i on router2's (egress{i}).
fn dumbbell(
    db: &Dumbbell,
    b: &mut NetworkBuilder,
    end: SimTime,
    plugins: &Plugins,
    extras: &mut LinkExtras,
) -> Result<(), ScenarioError> {
    crate::budget::check_pairs(db.pairs as u64, &crate::budget::memory_limit()?)?;
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
                return Err(err(format!("dumbbell.{what}.{f}"), "is implied by the dumbbell; leave it out"));
            }
        }
    }
    let mut access = db.access.clone();
    if access.rate.is_none() && !access.model.as_ref().is_some_and(ModelCfg::sets_rate) {
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
    let node = |b: &mut NetworkBuilder, name: &str, kind| {
        b.node(name, kind).map_err(|e| err("dumbbell", e.to_string()))
    };
    let r1 = node(b, "router1", NodeKind::Router)?;
    let r2 = node(b, "router2", NodeKind::Router)?;
    add_link(b, &db.bottleneck, "bottleneck", r1, r2, "dumbbell.bottleneck", mtu, end, plugins, extras)?;
    for i in 1..=db.pairs {
        let s = node(b, &format!("sender{i}"), NodeKind::Host)?;
        let r = node(b, &format!("receiver{i}"), NodeKind::Host)?;
        let mut acc = access.clone();
        if let Some(d) = &db.access_delays {
            acc.delay = Some(d[i as usize - 1]);
        }
        add_link(b, &acc, &format!("access{i}"), s, r1, "dumbbell.access", mtu, end, plugins, extras)?;
        add_link(b, &access, &format!("egress{i}"), r2, r, "dumbbell.access", mtu, end, plugins, extras)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(ms: u64) -> SimDuration {
        SimDuration::from_millis(ms)
    }

    #[test]
    fn down_periods_that_overlap_or_touch_are_one() {
        // The audit's case: [1 s, 1.5 s] and [0.5 s, 1.2 s] keep the link down from 0.5 to 1.5 s.
        assert_eq!(merged_down_periods(vec![(s(1000), s(1500)), (s(500), s(1200))]), vec![(s(500), s(1500))]);
        assert_eq!(merged_down_periods(vec![(s(1), s(2)), (s(2), s(3))]), vec![(s(1), s(3))]);
        assert_eq!(merged_down_periods(vec![(s(1), s(9)), (s(2), s(3))]), vec![(s(1), s(9))]);
        assert_eq!(merged_down_periods(vec![(s(5), s(6)), (s(1), s(2))]), vec![(s(1), s(2)), (s(5), s(6))]);
    }
}
