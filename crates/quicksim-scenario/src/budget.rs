//! The pre-run allocation estimate: what a scenario will hold in memory (routing table, links,
//! flows, and the zero-filled per-bin tables: bins × series), checked against the memory this
//! machine has before anything is allocated, so that a scenario that cannot fit is refused with
//! one error naming the field to change instead of aborting the process on a failed allocation.
//!
//! The limit is `QUICKSIM_MEMORY_LIMIT` (a size, e.g. "8GB") if set, else the memory the system
//! reports available (`MemAvailable` of `/proc/meminfo`), else 16 GB.

use crate::schema::Scenario;
use crate::units::{format_duration, parse_bytes};
use crate::ScenarioError;
use quicksim_engine::{SimDuration, SimTime};
use quicksim_net::NetworkBuilder;

/// Bytes per row of the per-bin tables, as the core builds them (a time, the series name's
/// string, the counters) and as the Python side holds them again (Arrow and pandas): measured
/// sizes rounded up, times 3 for the copies alive at once while the results are handed over.
const FLOW_ROW: u64 = 3 * 112;
const LINK_ROW: u64 = 3 * 80;
const STREAM_ROW: u64 = 3 * 80;
/// A link direction at rest (queue, counters, name) and a flow before it sends (both ends'
/// state, application, names): generous upper bounds of what they hold at the start.
const CHANNEL: u64 = 1024;
const FLOW: u64 = 16 * 1024;
const NODE: u64 = 128;

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
    /// Field to name when the topology is what does not fit.
    pub topology_field: &'static str,
}

impl Estimate {
    fn tables(&self) -> u64 {
        let rows = |s: u64, b: u64| s.saturating_mul(self.bins).saturating_mul(b);
        rows(self.flow_series, FLOW_ROW)
            .saturating_add(rows(self.stream_series, STREAM_ROW))
            .saturating_add(rows(self.link_series, LINK_ROW))
    }
    fn topology(&self) -> u64 {
        self.routing.saturating_add(self.nodes * NODE).saturating_add(self.channels * CHANNEL)
    }
    fn flow_state(&self) -> u64 {
        self.flows * FLOW
    }

    /// Refuse the scenario if it cannot fit in `limit` bytes, naming the biggest cause.
    pub fn check(&self, limit: u64) -> Result<(), ScenarioError> {
        let (tables, topo, flows) = (self.tables(), self.topology(), self.flow_state());
        let total = tables.saturating_add(topo).saturating_add(flows);
        if total <= limit {
            return Ok(());
        }
        let need = format!("needs about {} of memory, more than the {} available", gb(total), gb(limit));
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

fn gb(b: u64) -> String {
    if b >= 1_000_000_000_000_000 {
        format!("{:.1e} B", b as f64)
    } else if b >= 100_000_000 {
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
pub(crate) fn check_pairs(pairs: u64, limit: u64) -> Result<(), ScenarioError> {
    let need = pairs.saturating_mul(2 * NODE + 4 * CHANNEL);
    if need > limit {
        return Err(ScenarioError::new(
            "dumbbell.pairs".into(),
            format!("{pairs}: the network needs about {}, more than the {} available", gb(need), gb(limit)),
        ));
    }
    Ok(())
}

/// The memory limit: `QUICKSIM_MEMORY_LIMIT`, else the system's available memory, else 16 GB.
pub(crate) fn memory_limit() -> Result<u64, ScenarioError> {
    if let Ok(v) = std::env::var("QUICKSIM_MEMORY_LIMIT") {
        return parse_bytes(v.trim())
            .map_err(|e| ScenarioError::new("QUICKSIM_MEMORY_LIMIT".into(), format!("{v:?}: {e}")));
    }
    Ok(available().unwrap_or(16_000_000_000))
}

fn available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
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
    let e = Estimate {
        run: SimDuration(end.0),
        bin,
        bins,
        flow_series: if rc.flows { sc.flows.len() as u64 } else { 0 },
        stream_series,
        link_series,
        routing: b.routing_bytes(),
        nodes: b.node_count() as u64,
        channels,
        flows: sc.flows.len() as u64,
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

#[cfg(test)]
mod tests {
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
            topology_field: "dumbbell.pairs",
        }
    }

    #[test]
    fn fine_bins_are_refused_naming_record_interval() {
        // 10 ns on 1 s: 1e8 bins × 7 series, tens of GB.
        let e = est(10_000).check(8_000_000_000).unwrap_err();
        assert_eq!(e.path, "run.record_interval");
        assert!(e.message.contains("100000000 bins × 7 series"), "{}", e.message);
        // 1 ps: 1e12 bins; the arithmetic saturates instead of overflowing.
        assert_eq!(est(1).check(8_000_000_000).unwrap_err().path, "run.record_interval");
        // The suggested interval fits.
        assert!(est(500_000_000_000).check(8_000_000_000).is_ok());
    }

    #[test]
    fn suggested_interval_fits() {
        let e = est(10_000).check(8_000_000_000).unwrap_err();
        let s = e.message.split("at least \"").nth(1).unwrap().split('"').next().unwrap();
        let bin = crate::units::parse_duration(s).unwrap();
        assert!(est(bin.0).check(8_000_000_000).is_ok(), "{s}");
    }
}
