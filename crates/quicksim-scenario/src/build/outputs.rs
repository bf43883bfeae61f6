//! The run's outputs as the scenario selects them (`run.record`, `run.capture`): the built-in
//! tables' selections, the delay statistics, the qlog writer, the packet capture and the sinks
//! added at run time, checked against the network and flows `build` made.

use crate::budget::{Growing, Growth};
use crate::flows::FlowRt;
use crate::output::delay::DelayStats;
use crate::output::pcap::{Capture, FlowInfo};
use crate::output::qlog::QlogSink;
use crate::output::record::{Recorder, RowCaps};
use crate::output::Sinks;
use crate::payload::Payload;
use crate::plugins::Plugins;
use crate::schema::*;
use crate::ScenarioError;
use quicksim_engine::SimDuration;
use quicksim_net::{Network, NodeKind};

fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(path.into(), msg.into())
}

/// The sinks of a run over `net` and `flows` (named `names`; `dcid_len` of the QUIC flows with
/// RFC 9000 headers, for the capture), with counters binned every `bin` and the growing tables
/// capped at their shares of `growth`.
#[allow(clippy::too_many_arguments)] // what the outputs are chosen from, then the run's context
pub(crate) fn sinks(
    sc: &Scenario,
    net: &Network<Payload>,
    flows: &[FlowRt],
    names: &[String],
    dcid_len: &[Option<u8>],
    bin: SimDuration,
    growth: &Growth,
    plugins: &Plugins,
    paths: &std::collections::BTreeMap<u32, Box<[(quicksim_net::NodeId, quicksim_net::NodeId)]>>,
) -> Result<Sinks, ScenarioError> {
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
    if rc.conn_interval.is_some_and(|d| d.0 == SimDuration::ZERO) {
        return Err(err("run.record.conn_interval", "0s: the grid step must be positive"));
    }
    let mut rec = Recorder::new(
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
    rec.set_conn_interval(rc.conn_interval.map(|d| d.0));
    // Per-path rows for the multipath flows (flow, number of paths).
    rec.record_paths(paths.iter().map(|(&f, p)| (f, p.len() as u8 + 1)).collect());
    // The `queues` table's L and C columns, if a recorded queue is a DualPI2.
    rec.record_sub_queues(&net.chans.iter().map(|c| c.has_sub_queues()).collect::<Vec<_>>());
    rec.caps = RowCaps {
        drops: growth.rows(Growing::Drops),
        queues: growth.rows(Growing::Queues),
        conn: growth.rows(Growing::Conn),
        packets: growth.rows(Growing::Packets),
    };
    let delays = DelayStats::from_record(rc, names, &rec).map_err(|(f, m)| err(f, m))?;
    let kinds: Vec<&str> = flows.iter().map(|f| f.spec.kind).collect();
    let multipath = (0..flows.len() as u32).map(|f| paths.contains_key(&f)).collect();
    let mut extra =
        QlogSink::from_record(&rc.qlog, names, &kinds, multipath, growth.rows(Growing::Qlog) as u64)
            .map_err(|(f, m)| err(f, m))?;
    extra.extend(plugins.sinks.iter().map(|(_, s)| s.make(flows.len())));
    let capture = match &sc.run.capture {
        None => None,
        Some(c) => {
            let infos: Vec<_> = flows
                .iter()
                .zip(names)
                .zip(dcid_len)
                .map(|((f, name), &dcid_len)| FlowInfo {
                    name,
                    kind: f.spec.kind,
                    src: f.spec.src,
                    dst: f.spec.dst,
                    dcid_len,
                    tls_keylog: f.app.tls_keylog(),
                })
                .collect();
            Capture::new(c, plugins.out_dir.as_deref(), net, &infos)?.map(Box::new)
        }
    };
    let mut sinks = Sinks::new(rec, delays, extra, capture);
    sinks.budget_note = growth.note();
    Ok(sinks)
}
