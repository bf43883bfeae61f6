//! The memory budget: what a scenario will hold in memory, checked against the memory this
//! process may really allocate (`limits`: the smallest of MemAvailable, RLIMIT_AS, the cgroup's
//! limit and `QUICKSIM_MEMORY_LIMIT`), so that nothing a scenario asks for aborts the process
//! on a failed allocation.
//!
//! Before the run, the allocation that is known then (routing table, links, flows, the
//! zero-filled per-bin tables: bins × series, the delay statistics' bins, the capture's
//! buffer, the packet trace of constant-rate sources) is estimated; what cannot fit is refused
//! with one error naming the field to change and the limit that binds. What is left is shared
//! equally by the tables that grow with the run's events (`drops`, `queues`, `conn`,
//! `packets`, qlog text): each stops growing at its share, as a row count compared per row
//! (never a system call in the run loop), and the run goes on. Stopping the table rather than
//! the run keeps every total exact (the counters in summary.json do not live in those tables)
//! and every other table whole; `meta.truncated_tables` says which table was cut, at what time
//! and why.

mod limits;

use crate::schema::{FlowKindCfg, Scenario, SizeDist};
use crate::units::format_duration;
use crate::ScenarioError;
pub(crate) use limits::{memory_limit, Limit};
use quicksim_engine::{SimDuration, SimTime};
use quicksim_net::NetworkBuilder;

/// Bytes per row of the per-bin tables, as the core builds them (a time, the series name's
/// string, the counters) and as the Python side holds them again (Arrow and pandas): measured
/// sizes rounded up, times 3 for the copies alive at once while the results are handed over.
const FLOW_ROW: u64 = 3 * 112;
const LINK_ROW: u64 = 3 * 80;
const STREAM_ROW: u64 = 3 * 80;
/// The delay statistics' columns of a flow's and a link's bin (6 and 3 numbers, and the
/// sketch's counts while the bin is open), times 3 as above.
const DELAY_FLOW_ROW: u64 = 3 * 64;
const DELAY_LINK_ROW: u64 = 3 * 40;
/// The capture's write buffer (`output::pcap`); the file grows on disk, not in memory.
const CAPTURE_BUFFER: u64 = 1 << 20;
/// A link direction at rest (queue, counters, name) and a flow before it sends (both ends'
/// state, application, names): generous upper bounds of what they hold at the start.
const CHANNEL: u64 = 1024;
const FLOW: u64 = 16 * 1024;
const NODE: u64 = 128;

/// The tables that grow with the run's events, and the peak bytes one row costs: the core's
/// columns with a vector's doubling (2×), the output columns built from them, and the Python
/// side's copies while it converts and writes them (measured: 16.6 M drop rows peaked at
/// 3.4 GB, ~205 B a row, through `quicksim run` with its plots; rounded up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growing {
    Drops,
    Queues,
    Conn,
    Packets,
    /// qlog text, counted in bytes (a "row" is a byte).
    Qlog,
}

impl Growing {
    /// Peak bytes per row (qlog: per byte of text: the core's string, the table's, Python's).
    pub fn row_bytes(self) -> u64 {
        match self {
            Growing::Drops => 256,
            Growing::Queues => 192,
            Growing::Conn => 640,
            Growing::Packets => 256,
            Growing::Qlog => 3,
        }
    }
}

/// What is left of the budget for the growing tables once the run's known allocation is
/// counted, and how it is shared.
#[derive(Clone, Debug)]
pub struct Growth {
    pub limit: Limit,
    /// Bytes left for the growing tables.
    pub left: u64,
    /// How many growing tables the run records (each gets `left / tables`).
    pub tables: u64,
}

impl Growth {
    /// Bytes each growing table may take.
    pub fn share(&self) -> u64 {
        self.left / self.tables.max(1)
    }
    /// Rows table `t` may hold.
    pub fn rows(&self, t: Growing) -> usize {
        (self.share() / t.row_bytes()).min(usize::MAX as u64) as usize
    }
    /// What a table that stops growing reached, for `meta.truncated_tables`' "why".
    pub fn note(&self) -> String {
        format!(
            "its share of the memory budget, {} ({} tables that grow share the {} left of the {})",
            gb(self.share()),
            self.tables,
            gb(self.left),
            self.limit.describe()
        )
    }
}

/// What a scenario asks to allocate, by cause.
pub(crate) struct Estimate {
    pub run: SimDuration,
    pub bin: SimDuration,
    pub bins: u64,
    /// Series of the per-bin tables: flows, streams, link directions.
    pub flow_series: u64,
    pub stream_series: u64,
    pub link_series: u64,
    pub routing: u64,
    pub nodes: u64,
    pub channels: u64,
    pub flows: u64,
    /// Series of the delay statistics' bins (flows, link directions), 0 without them.
    pub delay_flow_series: u64,
    pub delay_link_series: u64,
    pub capture: bool,
    /// Growing tables the run records (`Growing`), and the rows the packet trace will hold
    /// for certain: the sends of its constant-rate UDP sources.
    pub growing: u64,
    pub traced_sends: u64,
    /// Field to name when the topology is what does not fit.
    pub topology_field: &'static str,
}

impl Estimate {
    fn tables(&self) -> u64 {
        let rows = |s: u64, b: u64| s.saturating_mul(self.bins).saturating_mul(b);
        rows(self.flow_series, FLOW_ROW)
            .saturating_add(rows(self.stream_series, STREAM_ROW))
            .saturating_add(rows(self.link_series, LINK_ROW))
            .saturating_add(rows(self.delay_flow_series, DELAY_FLOW_ROW))
            .saturating_add(rows(self.delay_link_series, DELAY_LINK_ROW))
            .saturating_add(if self.capture { CAPTURE_BUFFER } else { 0 })
    }
    fn topology(&self) -> u64 {
        self.routing.saturating_add(self.nodes * NODE).saturating_add(self.channels * CHANNEL)
    }
    fn flow_state(&self) -> u64 {
        self.flows * FLOW
    }

    /// Refuse the scenario if it cannot fit in `limit`, naming the biggest cause and the limit;
    /// else what is left for the tables that grow during the run.
    pub fn check(&self, limit: &Limit) -> Result<Growth, ScenarioError> {
        let (tables, topo, flows) = (self.tables(), self.topology(), self.flow_state());
        let total = tables.saturating_add(topo).saturating_add(flows);
        if total <= limit.bytes {
            let growth = Growth { limit: *limit, left: limit.bytes - total, tables: self.growing };
            let trace = self.traced_sends.saturating_mul(Growing::Packets.row_bytes());
            if trace > growth.share() {
                return Err(ScenarioError::new(
                    "run.record.packets".into(),
                    format!(
                        "the traced constant-rate flows send about {} packets: their trace needs about {}, \
                         more than its share {} of the {}",
                        self.traced_sends,
                        gb(trace),
                        gb(growth.share()),
                        limit.describe()
                    ),
                ));
            }
            return Ok(growth);
        }
        let need = format!("needs about {} of memory, more than the {}", gb(total), limit.describe());
        let limit = limit.bytes;
        let (field, msg) = if tables >= topo && tables >= flows {
            let series = self.flow_series + self.stream_series + self.link_series;
            // The coarsest bin at which the tables alone would take half the limit.
            let per_bin = tables / self.bins.max(1);
            let max_bins = (limit / 2 / per_bin.max(1)).max(1);
            let min_bin = SimDuration(round_up_125(self.run.0.div_ceil(max_bins)));
            (
                "run.record_interval",
                format!(
                    "\"{}\" on a {} run makes {} bins × {} series: the tables {need}; use a record_interval \
                     of at least \"{}\", or record fewer series (run.record.flows, run.record.links)",
                    format_duration(self.bin),
                    format_duration(self.run),
                    self.bins,
                    series,
                    format_duration(min_bin)
                ),
            )
        } else if topo >= flows {
            (
                self.topology_field,
                format!("{} nodes and {} link directions: the network {need}", self.nodes, self.channels),
            )
        } else {
            ("flows", format!("{} flows {need}", self.flows))
        };
        Err(ScenarioError::new(field.into(), msg))
    }
}

pub(crate) fn gb(b: u64) -> String {
    if b >= 1_000_000_000_000_000 {
        format!("{:.1e} B", b as f64)
    } else if b >= 1_000_000_000 {
        format!("{:.1} GB", b as f64 / 1e9)
    } else {
        format!("{:.1} MB", b as f64 / 1e6)
    }
}

/// The smallest 1, 2 or 5 × 10^k ps not below `ps`: a bin width a user would write.
fn round_up_125(ps: u64) -> u64 {
    let mut p = 1u64;
    loop {
        for m in [1, 2, 5] {
            if p.saturating_mul(m) >= ps {
                return p.saturating_mul(m);
            }
        }
        p = p.saturating_mul(10);
    }
}

/// Refuse a dumbbell whose nodes and links alone cannot fit, before they are created.
pub(crate) fn check_pairs(pairs: u64, limit: &Limit) -> Result<(), ScenarioError> {
    let need = pairs.saturating_mul(2 * NODE + 4 * CHANNEL);
    if need > limit.bytes {
        return Err(ScenarioError::new(
            "dumbbell.pairs".into(),
            format!("{pairs}: the network needs about {}, more than the {}", gb(need), limit.describe()),
        ));
    }
    Ok(())
}

/// What the scenario will allocate, from the topology being built and the recording settings.
pub(crate) fn estimate(
    sc: &Scenario,
    b: &NetworkBuilder,
    end: SimTime,
    bin: SimDuration,
) -> Result<Estimate, ScenarioError> {
    let rc = &sc.run.record;
    let bins = end.0.div_ceil(bin.0);
    let channels = 2 * b.link_names().count() as u64;
    let link_series = 2 * b.link_names().filter(|n| rc.links.includes(n)).count() as u64;
    let stream_series = sc
        .flows
        .iter()
        .filter(|f| f.kind_name() == "quic")
        .filter_map(|f| f.transport())
        .map(|t| t.streams.unwrap_or(1) as u64)
        .sum::<u64>();
    let flow_series = if rc.flows { sc.flows.len() as u64 } else { 0 };
    let delays_on = rc.delays != crate::schema::Select::All(false);
    let is_transport = |f: &&crate::schema::FlowCfg| matches!(*f.kind, FlowKindCfg::Transport(_));
    let growing = [
        rc.drops,
        rc.queues != crate::schema::Select::All(false),
        sc.flows.iter().filter(is_transport).any(|f| rc.conn.includes(&f.name)),
        !rc.packets.is_empty(),
        !rc.qlog.flows().is_empty(),
    ];
    let e = Estimate {
        run: SimDuration(end.0),
        bin,
        bins,
        flow_series,
        stream_series,
        link_series,
        routing: b.routing_bytes(),
        nodes: b.node_count() as u64,
        channels,
        flows: sc.flows.len() as u64,
        delay_flow_series: if delays_on && rc.flows {
            sc.flows.iter().filter(|f| rc.delays.includes(&f.name)).count() as u64
        } else {
            0
        },
        delay_link_series: if delays_on { link_series } else { 0 },
        capture: sc.run.capture.is_some(),
        growing: growing.iter().filter(|&&g| g).count() as u64,
        traced_sends: sc.flows.iter().filter(|f| rc.packets.contains(&f.name)).map(|f| sends(f, end)).sum(),
        topology_field: if sc.dumbbell.is_some() { "dumbbell.pairs" } else { "links" },
    };
    if bins > u32::MAX as u64 {
        // Bin indices are 32-bit: refuse even when nothing per bin is recorded.
        return Err(ScenarioError::new(
            "run.record_interval".into(),
            format!(
                "\"{}\" on a {} run makes {bins} bins, more than 2^32",
                crate::units::format_duration(bin),
                crate::units::format_duration(e.run)
            ),
        ));
    }
    Ok(e)
}

/// Datagrams a constant-rate UDP source of constant size sends before `end` (a drawn rate
/// counts as its largest; 0 for any other flow: what they send is not known before the run).
fn sends(f: &crate::schema::FlowCfg, end: SimTime) -> u64 {
    let FlowKindCfg::Udp(u) = &*f.kind else { return 0 };
    let (Some(r), Some(SizeDist::Const(size))) = (u.rate.as_ref().and_then(|d| d.max()), &u.size) else {
        return 0;
    };
    // A drawn start or stop counts as the longest activity it allows: start 0, stop at the end.
    let fixed = |d: &Option<crate::schema::TimeDist>| match d {
        Some(crate::schema::Dist::Const(t)) => Some(t.0),
        _ => None,
    };
    let start = fixed(&f.start).unwrap_or(0);
    let stop = fixed(&f.stop).unwrap_or(end.0).min(end.0);
    let active = stop.saturating_sub(start) as u128;
    let per_datagram = (*size as u128 * 8 * 1_000_000_000_000).max(1);
    (active * r.bits_per_s as u128 / per_datagram).min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::limits::Source;
    use super::*;

    fn est(bin_ps: u64) -> Estimate {
        Estimate {
            run: SimDuration(1_000_000_000_000),
            bin: SimDuration(bin_ps),
            bins: 1_000_000_000_000u64.div_ceil(bin_ps),
            flow_series: 1,
            stream_series: 0,
            link_series: 6,
            routing: 1000,
            nodes: 6,
            channels: 6,
            flows: 1,
            delay_flow_series: 0,
            delay_link_series: 0,
            capture: false,
            growing: 2,
            traced_sends: 0,
            topology_field: "dumbbell.pairs",
        }
    }

    fn lim(bytes: u64) -> Limit {
        Limit { bytes, source: Source::Env }
    }

    #[test]
    fn fine_bins_are_refused_naming_record_interval() {
        // 10 ns on 1 s: 1e8 bins × 7 series, tens of GB.
        let e = est(10_000).check(&lim(8_000_000_000)).unwrap_err();
        assert_eq!(e.path, "run.record_interval");
        assert!(e.message.contains("100000000 bins × 7 series"), "{}", e.message);
        // 1 ps: 1e12 bins; the arithmetic saturates instead of overflowing.
        assert_eq!(est(1).check(&lim(8_000_000_000)).unwrap_err().path, "run.record_interval");
        // The suggested interval fits.
        assert!(est(500_000_000_000).check(&lim(8_000_000_000)).is_ok());
    }

    #[test]
    fn suggested_interval_fits() {
        let e = est(10_000).check(&lim(8_000_000_000)).unwrap_err();
        let s = e.message.split("at least \"").nth(1).unwrap().split('"').next().unwrap();
        let bin = crate::units::parse_duration(s).unwrap();
        assert!(est(bin.0).check(&lim(8_000_000_000)).is_ok(), "{s}");
    }
}
