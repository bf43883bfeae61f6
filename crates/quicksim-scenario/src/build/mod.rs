//! Schema -> world: semantic validation (with the field path in every error) and construction
//! of the network (`links`), the flows (`flows`) and the outputs (`outputs`), in that order.

mod bdp;
mod flows;
mod links;
pub(crate) mod outputs;

use crate::cc_config::CcResolver;
use crate::flows::registry::BuildCx;
use crate::flows::FlowRt;
use crate::output::Sinks;
use crate::payload::Payload;
use crate::plugins::Plugins;
use crate::schema::*;
use crate::ScenarioError;
use links::LinkExtras;
use quicksim_engine::{Rate, RngStreams, SimDuration, SimTime};
use quicksim_net::{AnyQdisc, NetEvent, Network};

pub(crate) const DEFAULT_MTU: u64 = 1500;
/// Bin width of the per-flow and per-link counters: 0.5 s, as the INET showcase.
pub(crate) const DEFAULT_RECORD_INTERVAL: SimDuration = SimDuration(500_000_000_000);
/// A dumbbell's access links: 1 Gbit/s, as the INET showcase.
pub(crate) const DEFAULT_ACCESS_RATE: Rate = Rate { bits_per_s: 1_000_000_000 };

pub(super) fn err(path: impl Into<String>, msg: impl Into<String>) -> ScenarioError {
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
    /// What was drawn once per flow (start, stop, bytes), by flow, for `meta.drawn`.
    pub drawn: serde_json::Map<String, serde_json::Value>,
    /// The further paths of multipath flows (`Ctx::paths`).
    pub paths: std::collections::BTreeMap<u32, Box<[(quicksim_net::NodeId, quicksim_net::NodeId)]>>,
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
    let mut extras =
        LinkExtras { events: Vec::new(), qdiscs: Vec::new(), traces: Default::default(), flows: &sc.flows };
    let b = links::topology(sc, end, plugins, &mut extras)?;
    let growth = crate::budget::estimate(sc, &b, end, bin)?.check(&crate::budget::memory_limit()?)?;
    let mut net: Network<Payload> = b.build(&rng);
    for (c, q) in extras.qdiscs {
        net.chans[c.0 as usize].set_qdisc(AnyQdisc::Dyn(q));
    }
    if net.names.is_empty() {
        return Err(err("", "the scenario has no nodes: give a [dumbbell] or [nodes] and [[links]]"));
    }
    let mut cx = BuildCx::new(CcResolver { plugins, done: Vec::new() }, rng);
    let built = flows::flows(sc, &net, end, &mut cx)?;
    let (names, dcid_len) = (&built.names, &built.dcid_len);
    let rec = outputs::sinks(sc, &net, &built.flows, names, dcid_len, bin, &growth, plugins, &built.paths)?;
    Ok(Built {
        net,
        flows: built.flows,
        rec,
        end,
        max_events: sc.run.max_events,
        link_events: extras.events,
        flow_names: built.names,
        rng: cx.rng,
        drawn: built.drawn,
        paths: built.paths,
    })
}
