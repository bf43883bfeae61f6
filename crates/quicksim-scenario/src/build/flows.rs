//! Building the flows: the checks every flow has (names, hosts, times), then its kind's own:
//! a UDP or ON-OFF source, or a transport flow through the registry (`flows::settings`).

use super::err;
use crate::flows::registry::BuildCx;
use crate::flows::udp::{UdpFlow, UdpSpec, UDP_IP};
use crate::flows::{FlowApp, FlowRt, FlowSpec};
use crate::payload::Payload;
use crate::schema::*;
use crate::ScenarioError;
use quicksim_engine::{Rate, RngStreams, SimDuration, SimTime};
use quicksim_net::{Network, NodeId, NodeKind};

/// The flows as built, and what the outputs need of them.
pub(super) struct Flows {
    pub flows: Vec<FlowRt>,
    pub names: Vec<String>,
    /// The `rfc9000` connection id length of each QUIC flow, for a capture's headers.
    pub dcid_len: Vec<Option<u8>>,
    /// What was drawn for the flows with random values (summary.json's `meta.drawn`).
    pub drawn: serde_json::Map<String, serde_json::Value>,
    /// The further paths of multipath flows, by flow: (client, server) addresses.
    pub paths: std::collections::BTreeMap<u32, Box<[(NodeId, NodeId)]>>,
}

/// The values drawn once per flow, from the flow's own stream ("flow", keyed by its name):
/// adding, removing or reordering flows never changes another flow's draws. Drawn in this
/// order, each only if random: start, stop, bulk bytes, a datagram source's rate, the extra
/// delay (the later ones were added later: a scenario without them draws as before).
struct Draws {
    start: SimTime,
    stop: SimTime,
    bytes: Option<u64>,
    /// A udp or onoff source's rate, if it has one.
    rate: Option<Rate>,
    extra_delay: SimDuration,
    /// The random ones, for `meta.drawn`.
    shown: serde_json::Map<String, serde_json::Value>,
}

fn draw(f: &FlowCfg, end: SimTime, rng: &RngStreams) -> Result<Draws, ScenarioError> {
    let mut r = rng.stream_keyed("flow", &f.name);
    let mut shown = serde_json::Map::new();
    let mut time = |d: &Option<TimeDist>, key: &str, shown: &mut serde_json::Map<_, _>| {
        d.as_ref().map(|d| {
            let v = d.draw(&mut r);
            if !d.is_const() {
                shown.insert(format!("{key}_s"), v.as_secs_f64().into());
            }
            SimTime(v.0)
        })
    };
    let offset = match &f.group {
        Some((g, i)) => g.stagger.map_or(SimDuration::ZERO, |s| s.0.saturating_mul(*i as u64)),
        None => SimDuration::ZERO,
    };
    let start = time(&f.start, "start", &mut shown).unwrap_or(SimTime::ZERO);
    let start = SimTime(start.0.saturating_add(offset.0));
    if offset.0 != 0 {
        shown.insert("start_s".into(), start.as_secs_f64().into());
    }
    let stop = time(&f.stop, "stop", &mut shown).unwrap_or(end);
    let bytes = match f.transport().and_then(|t| t.bytes.as_ref()) {
        Some(d) if !d.is_const() => {
            // A drawn size of 0 (uniform from 0, a normal's left tail) is a transfer of 1 B.
            let v = d.draw(&mut r).max(1);
            shown.insert("bytes".into(), v.into());
            Some(v)
        }
        Some(d) => Some(d.draw(&mut r)),
        None => None,
    };
    let rate = match &*f.kind {
        FlowKindCfg::Udp(UdpCfg { rate, .. }) | FlowKindCfg::Onoff(OnOffCfg { rate, .. }) => rate.as_ref(),
        _ => None,
    };
    let rate = rate.map(|d| {
        if d.is_const() {
            return d.draw(&mut r);
        }
        // A drawn rate of 0 (an exponential's or a normal's smallest draws) is 1 bit/s.
        let v = Rate { bits_per_s: d.draw(&mut r).bits_per_s.max(1) };
        shown.insert("rate_bps".into(), v.bits_per_s.into());
        v
    });
    let extra_delay = match &f.extra_delay {
        Some(d) => {
            let v = d.draw(&mut r);
            if !d.is_const() {
                shown.insert("extra_delay_s".into(), v.as_secs_f64().into());
            }
            v
        }
        None => SimDuration::ZERO,
    };
    Ok(Draws { start, stop, bytes, rate, extra_delay, shown })
}

pub(super) fn flows(
    sc: &Scenario,
    net: &Network<Payload>,
    end: SimTime,
    cx: &mut BuildCx,
) -> Result<Flows, ScenarioError> {
    let mut out = Flows {
        flows: Vec::with_capacity(sc.flows.len()),
        names: Vec::with_capacity(sc.flows.len()),
        dcid_len: vec![None; sc.flows.len()],
        drawn: serde_json::Map::new(),
        paths: Default::default(),
    };
    let mut seen = std::collections::HashSet::new();
    for (i, f) in sc.flows.iter().enumerate() {
        let path = f.path();
        if f.name.is_empty() {
            return Err(err(format!("{path}.name"), "\"\": a flow needs a name"));
        }
        if !seen.insert(f.name.as_str()) {
            return Err(err(format!("{path}.name"), format!("{:?} is used by two flows", f.name)));
        }
        let d = draw(f, end, &cx.rng)?;
        let (spec, mtu) = endpoints_and_times(f, &d, &path, net, end)?;
        let app = match &*f.kind {
            FlowKindCfg::Udp(u) => {
                udp(&u.size, &u.interval, (&u.rate, d.rate), u.ecn, None, &path, mtu, &cx.rng, i)?
            }
            FlowKindCfg::Onoff(o) => {
                let on = o.on.clone().ok_or_else(|| {
                    err(
                        format!("{path}.on"),
                        "missing: ON period, e.g. { dist = \"exponential\", mean = \"1s\" }",
                    )
                })?;
                let off = o.off.clone().ok_or_else(|| err(format!("{path}.off"), "missing: OFF period"))?;
                udp(&o.size, &o.interval, (&o.rate, d.rate), o.ecn, Some((on, off)), &path, mtu, &cx.rng, i)?
            }
            FlowKindCfg::Program(pc) => {
                if f.extra_delay.is_some() {
                    // Its packets come from the real program through a TUN device, not from a
                    // flow of the model that could hold them.
                    return Err(err(
                        format!("{path}.extra_delay"),
                        "a program flow's packets come from a real program: give its hosts' links a delay",
                    ));
                }
                if sc.run.clock != Some(Clock::Real) {
                    return Err(err(
                        format!("{path}.kind"),
                        "\"program\" runs real programs: it needs run.clock = \"real\"",
                    ));
                }
                match pc.client.as_deref().map(str::trim) {
                    None | Some("") => return Err(err(
                        format!("{path}.client"),
                        "missing: the command run in the source's namespace, e.g. \"iperf3 -c {dst} -t 10\"",
                    )),
                    Some(_) => {}
                }
                if pc.server.as_deref().is_some_and(|s| s.trim().is_empty()) {
                    return Err(err(format!("{path}.server"), "\"\": give a command or leave it out"));
                }
                let same = sc.flows[..i]
                    .iter()
                    .position(|g| matches!(*g.kind, FlowKindCfg::Program(_)) && host_pair(g) == host_pair(f));
                if let Some(j) = same {
                    // A packet from a program is matched to its flow by its two hosts alone.
                    return Err(err(
                        format!("{path}.src"),
                        format!(
                            "flows[{j}] is a program flow between the same two hosts; one per pair of hosts"
                        ),
                    ));
                }
                FlowApp::Program
            }
            FlowKindCfg::Transport(t) => {
                let defaults = sc.transport_table(t.kind);
                let (app, dcid_len, extra) =
                    crate::flows::build_transport_flow(t, defaults, &path, i, mtu, d.bytes, cx)?;
                out.dcid_len[i] = dcid_len;
                if !extra.is_empty() {
                    let at = format!("{path}.{}.multipath.paths", t.kind);
                    out.paths.insert(i as u32, extra_paths(&extra, &spec, &at, net)?);
                }
                app
            }
        };
        if !d.shown.is_empty() {
            out.drawn.insert(f.name.clone(), serde_json::Value::Object(d.shown));
        }
        out.names.push(f.name.clone());
        out.flows.push(FlowRt { spec, app });
    }
    Ok(out)
}

/// The addresses of a flow's further paths (`at`: their field), each reachable both ways; a
/// missing one is the flow's own.
fn extra_paths(
    extra: &[(Option<String>, Option<String>)],
    spec: &FlowSpec,
    at: &str,
    net: &Network<Payload>,
) -> Result<Box<[(NodeId, NodeId)]>, ScenarioError> {
    let mut out = Vec::new();
    for (k, (s, d)) in extra.iter().enumerate() {
        let node = |field: &str, v: &Option<String>, own: NodeId| -> Result<NodeId, ScenarioError> {
            let Some(v) = v else { return Ok(own) };
            let n = net.find(v).ok_or_else(|| err(format!("{at}[{k}].{field}"), unknown_address(v, net)))?;
            if net.kinds[n.0 as usize] != NodeKind::Host {
                return Err(err(
                    format!("{at}[{k}].{field}"),
                    format!("{v:?} is a router; paths run between hosts"),
                ));
            }
            Ok(n)
        };
        let (src, dst) = (node("src", s, spec.src)?, node("dst", d, spec.dst)?);
        if src == dst || !net.reachable(src, dst) || !net.reachable(dst, src) {
            let name = |n: NodeId| net.node_name(n).to_string();
            return Err(err(
                format!("{at}[{k}]"),
                format!("{:?} is not connected to {:?}", name(dst), name(src)),
            ));
        }
        // A path is its pair of addresses (the draft's 4-tuple): a second path over the same
        // pair would be the same path.
        let same =
            std::iter::once((spec.src, spec.dst)).chain(out.iter().copied()).position(|p| p == (src, dst));
        if let Some(j) = same {
            let (a, b) = (net.node_name(src), net.node_name(dst));
            return Err(err(
                format!("{at}[{k}]"),
                format!("{a:?} -> {b:?} is path {j} already; each path needs its own pair of addresses"),
            ));
        }
        out.push((src, dst));
    }
    Ok(out.into_boxed_slice())
}

/// Why `v` names no node: for `<host>.<x>` of a host with interfaces, which ones it has.
fn unknown_address(v: &str, net: &Network<Payload>) -> String {
    if let Some((host, _)) = v.rsplit_once('.') {
        let prefix = format!("{host}.");
        let ifs: Vec<&str> = (0..net.kinds.len())
            .map(|i| net.node_name(NodeId(i as u32)))
            .filter(|n| n.starts_with(&prefix))
            .collect();
        if !ifs.is_empty() {
            return format!("{v:?} is not an interface of {host:?}; its interfaces are {}", ifs.join(", "));
        }
    }
    format!("{v:?} is not a node")
}

/// A flow's two hosts in name order (program flows are told apart by them).
fn host_pair(f: &FlowCfg) -> [&str; 2] {
    let (a, b) = (f.src.as_str(), f.dst.as_str());
    [a.min(b), a.max(b)]
}

/// A flow's hosts and times (as drawn), checked; and the MTU of its path. A constant start or
/// stop out of order is refused; drawn ones are not (a draw is not the scenario's mistake): a
/// drawn start at or after the end never runs, a drawn stop before the start is the start.
fn endpoints_and_times(
    f: &FlowCfg,
    d: &Draws,
    path: &str,
    net: &Network<Payload>,
    end: SimTime,
) -> Result<(FlowSpec, u64), ScenarioError> {
    let p = |x: &str| format!("{path}.{x}");
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
    let (start, mut stop) = (d.start, d.stop);
    let fixed = |t: &Option<TimeDist>| t.as_ref().is_none_or(TimeDist::is_const);
    let staggered = f.group.as_ref().is_some_and(|(g, _)| g.stagger.is_some());
    let (start_fixed, stop_fixed) = (fixed(&f.start) && !staggered, fixed(&f.stop));
    if !(start_fixed && stop_fixed) && stop < start {
        stop = start;
    }
    if start >= end && f.stop.is_none() && start_fixed {
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
    if stop <= start && start_fixed && stop_fixed {
        return Err(err(p("stop"), format!("{} is not after start {}", stop, start)));
    }
    let connect = match f.transport().and_then(|t| t.connect) {
        Some(d) => SimTime(d.0 .0),
        None => start,
    };
    // A fixed connect time after a drawn start: the connection opens at the start.
    let connect = if start_fixed { connect } else { connect.min(start) };
    if connect > start {
        let fmt = |t: SimTime| crate::units::format_duration(quicksim_engine::SimDuration(t.0));
        return Err(err(p("connect"), format!("{} is after start {}", fmt(connect), fmt(start))));
    }
    let stop_mode = f.stop_mode.unwrap_or_default();
    if stop_mode == StopMode::Write && f.kind_name() == "quinn" {
        // quinn's adapter cannot tell when everything written is acknowledged.
        return Err(err(
            p("stop_mode"),
            "\"write\": quinn flows only stop sending (\"send\", the default): the quinn adapter \
             cannot wait for the data written to be acknowledged",
        ));
    }
    let mtu = net.path_mtu(src, dst).expect("reachable") as u64;
    let extra_delay = d.extra_delay;
    Ok((FlowSpec { kind: f.kind_name(), src, dst, connect, start, stop, stop_mode, extra_delay }, mtu))
}

/// Shortest time between a constant-rate source's datagrams: simulated time counts whole
/// picoseconds, so the interval is rounded up to one, which changes the rate by up to 1 ps over
/// the interval; from 1 ns on that is at most 0.1 %. A faster rate (any from 1e15 bit/s, with
/// the largest datagram) was a silent error at best and, since every datagram is an event, a
/// run of ~1e11 events per simulated second whose drops filled the memory until it aborted.
const MIN_INTERVAL_PS: u64 = 1_000;

/// The datagram interval of `rate` with the smallest datagram of `size` is at least
/// `MIN_INTERVAL_PS`.
fn check_rate(rate: Rate, drawn: bool, size: &SizeDist, field: &str) -> Result<(), ScenarioError> {
    // Datagram sizes are constant or uniform (the MTU bounds them); any other form is checked
    // as its smallest possible datagram.
    let min = match *size {
        SizeDist::Const(v) => v,
        SizeDist::Uniform(a, _) => a,
        _ => 1,
    }
    .max(1);
    let gap = rate.tx_time(min);
    if gap.0 >= MIN_INTERVAL_PS {
        return Ok(());
    }
    // The fastest rate with a gap of at least 1 ns: 8 bits × min bytes per 1 ns.
    let fastest = quicksim_engine::Rate { bits_per_s: min.saturating_mul(8_000_000_000) };
    Err(err(
        field,
        format!(
            "{}{:?} sends a {min} B datagram every {} ps; simulated time counts whole picoseconds, which \
             would change the rate by more than 0.1 % (and make ~{:.0e} events per simulated second): \
             at most {:?} for {min} B datagrams",
            if drawn { "drawn " } else { "" },
            crate::units::format_rate(rate),
            gap.0,
            1e12 / gap.0.max(1) as f64,
            crate::units::format_rate(fastest)
        ),
    ))
}

/// A UDP source (`onoff`: its ON and OFF periods) at `path`, index `i`.
#[allow(clippy::too_many_arguments)] // the datagram kinds' fields, then the flow's context
fn udp(
    size: &Option<SizeDist>,
    interval: &Option<TimeDist>,
    (rate_dist, rate): (&Option<RateDist>, Option<Rate>),
    ecn: Option<crate::schema::DatagramEcn>,
    onoff: Option<(TimeDist, TimeDist)>,
    path: &str,
    mtu: u64,
    rng: &RngStreams,
    i: usize,
) -> Result<FlowApp, ScenarioError> {
    let p = |x: &str| format!("{path}.{x}");
    let size =
        size.clone().ok_or_else(|| err(p("size"), "missing: the datagram payload size, e.g. \"1000B\""))?;
    let Some(max) = size.max() else {
        return Err(err(
            p("size"),
            format!(
                "{}: a datagram's size must be bounded by the path MTU: use a size or dist = \"uniform\"",
                serde_json::to_string(&size).unwrap_or_default()
            ),
        ));
    };
    if max + UDP_IP > mtu {
        return Err(err(p("size"), format!("{max} B + 28 B of headers exceeds the path MTU {mtu} B")));
    }
    if matches!(size, SizeDist::Const(0)) {
        return Err(err(p("size"), "0 B: a datagram needs a payload"));
    }
    if rate.is_some() == interval.is_some() {
        return Err(err(p("interval"), "give exactly one of `interval` and `rate`"));
    }
    if let Some(r) = rate {
        let drawn = rate_dist.as_ref().is_some_and(|d| !d.is_const());
        check_rate(r, drawn, &size, &p("rate"))?;
    }
    if let Some(TimeDist::Const(d)) = interval {
        if d.0 == 0 {
            return Err(err(p("interval"), "0s: the interval must be > 0"));
        }
    }
    Ok(FlowApp::Udp(Box::new(UdpFlow {
        spec: UdpSpec {
            size,
            interval: interval.clone(),
            rate,
            onoff,
            ecn: ecn.map_or(quicksim_net::Ecn::NotEct, |e| e.codepoint()),
        },
        rng: rng.stream("app", i as u64),
        on: false,
        gen: 0,
    })))
}
