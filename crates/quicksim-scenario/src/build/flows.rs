//! Building the flows: the checks every flow has (names, hosts, times), then its kind's own:
//! a UDP or ON-OFF source, or a transport flow through the registry (`flows::settings`).

use super::err;
use crate::flows::registry::BuildCx;
use crate::flows::udp::{UdpFlow, UdpSpec, UDP_IP};
use crate::flows::{FlowApp, FlowRt, FlowSpec};
use crate::payload::Payload;
use crate::schema::*;
use crate::ScenarioError;
use quicksim_engine::{RngStreams, SimDuration, SimTime};
use quicksim_net::{Network, NodeId, NodeKind};

/// The flows as built, and what the outputs need of them.
pub(super) struct Flows {
    pub flows: Vec<FlowRt>,
    pub names: Vec<String>,
    /// The `rfc9000` connection id length of each QUIC flow, for a capture's headers.
    pub dcid_len: Vec<Option<u8>>,
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
    };
    let mut seen = std::collections::HashSet::new();
    for (i, f) in sc.flows.iter().enumerate() {
        let path = format!("flows[{i}]");
        if f.name.is_empty() {
            return Err(err(format!("{path}.name"), "\"\": a flow needs a name"));
        }
        if !seen.insert(f.name.as_str()) {
            return Err(err(format!("{path}.name"), format!("{:?} is used by two flows", f.name)));
        }
        let (spec, mtu) = endpoints_and_times(f, &path, net, end)?;
        let app = match &f.kind {
            FlowKindCfg::Udp(u) => udp(&u.size, &u.interval, &u.rate, u.ecn, None, &path, mtu, &cx.rng, i)?,
            FlowKindCfg::Onoff(o) => {
                let on = o.on.clone().ok_or_else(|| {
                    err(
                        format!("{path}.on"),
                        "missing: ON period, e.g. { dist = \"exponential\", mean = \"1s\" }",
                    )
                })?;
                let off = o.off.clone().ok_or_else(|| err(format!("{path}.off"), "missing: OFF period"))?;
                udp(&o.size, &o.interval, &o.rate, o.ecn, Some((on, off)), &path, mtu, &cx.rng, i)?
            }
            FlowKindCfg::Transport(t) => {
                let defaults = sc.transport_table(t.kind);
                let (app, dcid_len) = crate::flows::build_transport_flow(t, defaults, &path, i, mtu, cx)?;
                out.dcid_len[i] = dcid_len;
                app
            }
        };
        out.names.push(f.name.clone());
        out.flows.push(FlowRt { spec, app });
    }
    Ok(out)
}

/// A flow's hosts and times, checked; and the MTU of its path.
fn endpoints_and_times(
    f: &FlowCfg,
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
    let connect = match f.transport().and_then(|t| t.connect) {
        Some(d) => SimTime(d.0 .0),
        None => start,
    };
    if connect > start {
        let fmt = |t: SimTime| crate::units::format_duration(quicksim_engine::SimDuration(t.0));
        return Err(err(p("connect"), format!("{} is after start {}", fmt(connect), fmt(start))));
    }
    let mtu = net.path_mtu(src, dst).expect("reachable") as u64;
    Ok((FlowSpec { kind: f.kind_name(), src, dst, connect, start, stop }, mtu))
}

/// A UDP source (`onoff`: its ON and OFF periods) at `path`, index `i`.
#[allow(clippy::too_many_arguments)] // the datagram kinds' fields, then the flow's context
fn udp(
    size: &Option<SizeDist>,
    interval: &Option<TimeDist>,
    rate: &Option<crate::units::RateVal>,
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
    let max = match size {
        SizeDist::Const(v) => v,
        SizeDist::Uniform(_, b) => b,
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
    if let Some(TimeDist::Const(d)) = interval {
        if d.0 == 0 {
            return Err(err(p("interval"), "0s: the interval must be > 0"));
        }
    }
    Ok(FlowApp::Udp(Box::new(UdpFlow {
        spec: UdpSpec {
            size,
            interval: interval.clone(),
            rate: rate.map(|r| r.0),
            onoff,
            ecn: ecn.map_or(quicksim_net::Ecn::NotEct, |e| e.codepoint()),
        },
        rng: rng.stream("app", i as u64),
        on: false,
        gen: 0,
    })))
}
