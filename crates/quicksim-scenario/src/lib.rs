//! quicksim-scenario: scenario files (JSON of the TOML document, with units) -> a world of
//! network, applications and transport endpoints; recorders; the run loop.

mod build;
pub mod output;
pub mod plugins;
mod record;
pub mod schema;
pub mod units;
mod world;

pub use output::{Column, RunOutput, Table};
pub use world::Stop;

use serde_json::json;
use std::fmt;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Bad input: names the field (as a path like `flows[1].dst`) and what is wrong with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: String, message: String) -> Self {
        ScenarioError { path, message }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}
impl std::error::Error for ScenarioError {}

/// FNV-1a of the scenario text, so every result carries what made it.
fn hash_str(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Check a scenario completely (schema and semantics) without running it.
pub fn validate(json: &str) -> Result<schema::Scenario, ScenarioError> {
    let sc = schema::parse(json)?;
    build::build(&sc, sc.run.seed.unwrap_or(1), &plugins::Plugins::default())?;
    Ok(sc)
}

/// Run a scenario. `seed` overrides `run.seed` (default 1). `progress(sim_time_s, events)`
/// is called every 16384 events and every 1/200 of the simulated time; returning false stops the run early (results so far are kept).
pub fn run(
    json: &str,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64, u64) -> bool,
) -> Result<RunOutput, ScenarioError> {
    run_with(json, seed, progress, &plugins::Plugins::default())
}

/// `run` with extensions registered at run time (controllers, queue disciplines, sinks that are
/// not built in: [`plugins::Plugins`]).
pub fn run_with(
    json: &str,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64, u64) -> bool,
    plugins: &plugins::Plugins,
) -> Result<RunOutput, ScenarioError> {
    run_inner(json, seed, progress, true, plugins).map(|(out, _)| out)
}

/// `run`, with quiet QUIC flows stored encoded or not (`rest`), and how often one was.
fn run_inner(
    json: &str,
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64, u64) -> bool,
    rest: bool,
    plugins: &plugins::Plugins,
) -> Result<(RunOutput, u64), ScenarioError> {
    let mut sc = schema::parse(json)?;
    let seed = seed.or(sc.run.seed).unwrap_or(1);
    let built = build::build(&sc, seed, plugins)?;
    // The parsed flows (~600 B each) are not needed once built.
    sc.flows = Vec::new();
    let mut w = world::World::new(built);
    w.rest_quiet_flows = rest;
    let wall = std::time::Instant::now();
    let stop = w.run(progress);
    let wall_s = wall.elapsed().as_secs_f64();
    let peak_rss_run_kib = peak_rss_kib();
    let rested = w.rested;
    let mut out = finish(w, &sc, json, seed, stop, wall_s);
    out.meta["peak_rss_run_kib"] = serde_json::json!(peak_rss_run_kib);
    Ok((out, rested))
}

/// The process's peak resident memory so far (`VmHWM`), in KiB; `None` where /proc is missing.
/// Read at the end of the run loop, before the outputs are built, it is the peak of the
/// simulation state (scenario, network, flows, recorders) of a run in a fresh process.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn finish(
    mut w: world::World,
    sc: &schema::Scenario,
    json: &str,
    seed: u64,
    stop: Stop,
    wall_s: f64,
) -> RunOutput {
    use world::FlowApp;
    let end = w.end;
    let end_s = end.as_secs_f64();
    // Each flow's state (connections, send queues) is dropped as soon as its totals are taken,
    // so the outputs do not add to the peak memory of the run on top of the state.
    let mut flows = serde_json::Map::new();
    let flow_states = std::mem::take(&mut w.flows);
    for (i, mut f) in flow_states.into_iter().enumerate() {
        f.app.make_live();
        let t = &w.rec.flow_totals[i];
        let mut o = json!({
            "kind": match f.spec.kind { schema::FlowKind::Udp => "udp", schema::FlowKind::Onoff => "onoff", schema::FlowKind::Quic => "quic" },
            "src": w.net.node_name(f.spec.src),
            "dst": w.net.node_name(f.spec.dst),
            "start_s": f.spec.start.as_secs_f64(),
            "stop_s": f.spec.stop.as_secs_f64(),
            "app_sent_bytes": t.app_sent_bytes,
            "wire_sent_bytes": t.wire_sent_bytes,
            "wire_recv_bytes": t.wire_recv_bytes,
            "delivered_bytes": t.delivered_bytes,
            "packets_sent": t.sent_packets,
            "packets_delivered": t.recv_packets,
            "packets_dropped": w.rec.flow_dropped[i],
            "completion_time_s": serde_json::Value::Null,
        });
        if let FlowApp::Quic(qs) = &f.app {
            if let Some(c) = qs.completion {
                o["completion_time_s"] = json!((c - f.spec.start).as_secs_f64());
            }
            if let Some(c) = &qs.conns {
                let s = c[0].stats();
                let r = c[1].stats();
                o["quic"] = json!({
                    "packets_sent": s.packets_sent,
                    "packets_acked": s.packets_acked,
                    "packets_lost": s.packets_lost,
                    "bytes_sent": s.bytes_sent,
                    "stream_bytes_sent": s.stream_bytes_sent,
                    "retransmitted_bytes": s.retransmitted_bytes,
                    "ack_frames_sent": r.ack_frames_sent,
                    "ack_only_packets_sent": r.ack_only_packets_sent,
                    "receiver_packets_sent": r.packets_sent,
                    "receiver_bytes_sent": r.bytes_sent,
                    // The ACK-policy costs: the reverse path carries only ACKs in a bulk
                    // transfer, so these are its packets and QUIC bytes (IP + UDP: +28 B each).
                    "receiver_ack_only_bytes_sent": r.ack_only_bytes_sent,
                    "receiver_ack_frame_bytes_sent": r.ack_frame_bytes_sent,
                    "ack_frames_per_data_packet": if s.packets_sent > 0 { r.ack_frames_sent as f64 / s.packets_sent as f64 } else { 0.0 },
                    "ack_packets_per_data_packet": if s.packets_sent > 0 { r.ack_only_packets_sent as f64 / s.packets_sent as f64 } else { 0.0 },
                    "ibit_packets_sent": s.ibit_packets_sent,
                    "ack_frequency_frames_sent": s.ack_frequency_frames_sent,
                    "immediate_ack_frames_sent": s.immediate_ack_frames_sent,
                    "receiver_ack_frequency_frames_applied": r.ack_frequency_frames_applied,
                    "receiver_immediate_acks_honoured": r.immediate_acks_honoured,
                    "congestion_events": s.congestion_events,
                    "established": c[0].is_established() || c[0].is_closed(),
                    "error": qs.close_error,
                });
            }
        }
        flows.insert(w.flow_names[i].clone(), o);
    }
    let rates: Vec<u64> = w.net.chans.iter().map(|c| c.cfg.rate.bits_per_s).collect();
    let tables = w.rec.tables(end, &w.flow_names, &w.net.chan_names, &rates, &w.net.names);
    let mut queues = serde_json::Map::new();
    let mut links = serde_json::Map::new();
    let mut held = 0u64;
    for (ci, c) in w.net.chans.iter().enumerate() {
        let name = &w.net.chan_names[ci];
        held += c.held_packets();
        let st = &c.stats;
        let mean = if end.0 > 0 { st.queue_packet_ps as f64 / end.0 as f64 } else { 0.0 };
        queues.insert(
            name.clone(),
            json!({
                "enqueued_packets": st.enqueued_packets,
                "dropped_packets": st.dropped_packets,
                "dropped_bytes": st.dropped_bytes,
                "max_packets": st.max_queue_packets,
                "max_bytes": st.max_queue_bytes,
                "mean_packets": mean,
                "queued_packets_at_end": c.held_packets(),
            }),
        );
        links.insert(
            name.clone(),
            json!({
                "bytes": st.delivered_frame_bytes,
                "ip_bytes": st.delivered_bytes,
                "packets": st.delivered_packets,
                "frames_serialized": st.sent_packets,
                "utilization": if end_s > 0.0 { st.delivered_frame_bytes as f64 * 8.0 / (c.cfg.rate.bits_per_s as f64 * end_s) } else { 0.0 },
            }),
        );
    }
    let events = w.q.events_processed();
    let meta = json!({
        "seed": seed,
        "duration_s": sc.run.duration.0.as_secs_f64(),
        "sim_end_s": end_s,
        "events": events,
        "wall_s": wall_s,
        "events_per_s": if wall_s > 0.0 { events as f64 / wall_s } else { 0.0 },
        "sim_s_per_wall_s": if wall_s > 0.0 { end_s / wall_s } else { 0.0 },
        "scenario_hash": hash_str(json),
        "trace_hash": format!("{:016x}", w.trace_hash),
        "version": VERSION,
        "build_profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        // Optimised with the profile pgo/quicksim.profdata (scripts/rustc-pgo sets the cfg).
        "pgo": cfg!(quicksim_pgo),
        "stopped_early": stop != Stop::Finished,
        "stop_reason": match stop { Stop::Finished => "finished", Stop::EventBudget => "event budget", Stop::Cancelled => "cancelled" },
        "record_interval_s": w.rec.bin.as_secs_f64(),
        "packets_in_network_at_end": held,
        "truncated_series": w.rec.truncated,
        "name": sc.name,
    });
    // Move the maps in: `json!` would serialize a deep copy of them first, which doubled the
    // peak memory of runs with many flows.
    let mut totals = serde_json::Map::new();
    totals.insert("flows".into(), serde_json::Value::Object(flows));
    totals.insert("queues".into(), serde_json::Value::Object(queues));
    totals.insert("links".into(), serde_json::Value::Object(links));
    RunOutput { meta, tables, totals: serde_json::Value::Object(totals) }
}

#[cfg(test)]
mod rest_tests {
    use super::*;

    /// Quiet QUIC flows stored encoded between their events (`world::IdleQuic`) give the same
    /// run as flows kept live: the same events in the same order (trace hash), tables and totals.
    /// Message flows with gaps (they rest and wake many times), over a lossy bottleneck, with
    /// the handshake, CUBIC with pacing, ACK_FREQUENCY, a bulk transfer that completes and
    /// flows that stop early.
    #[test]
    fn resting_flows_change_nothing() {
        let mut flows = Vec::new();
        for i in 0..24 {
            let mut f = serde_json::json!({
                "name": format!("m{i}"), "kind": "quic", "app": "messages",
                "size": if i % 3 == 0 { "3000B" } else { "700B" },
                "interval": if i % 2 == 0 { "200ms" } else { "1.3s" },
                "src": format!("sender{}", i % 4 + 1), "dst": format!("receiver{}", i % 4 + 1),
                "start": format!("{}ms", 13 * i),
            });
            if i % 5 == 1 {
                f["stop"] = serde_json::json!("2.5s");
            }
            if i % 4 == 2 {
                f["quic"] = serde_json::json!({"cc": "cubic", "pacing": true});
            }
            if i % 7 == 3 {
                f["quic"] = serde_json::json!({"ack_policy": "cwnd", "ack_frequency_max": 4});
            }
            flows.push(f);
        }
        flows.push(serde_json::json!({"name": "bulk", "kind": "quic", "app": "bulk", "bytes": "400kB",
            "src": "sender1", "dst": "receiver1", "start": "0.3s"}));
        let doc = serde_json::json!({
            "run": {"duration": "6s", "seed": 9, "record_interval": "0.5s"},
            "dumbbell": {
                "pairs": 4, "mtu": "1280B",
                "bottleneck": {"rate": "20Mbps", "delay": "12ms", "queue": {"packets": 40},
                               "loss": {"kind": "bernoulli", "p": 0.01}},
                "access": {"rate": "1Gbps", "delay": "1ms"}
            },
            "quic": {"handshake": true, "min_ack_delay": "1ms"},
            "flows": flows,
        });
        let json = doc.to_string();
        let go = |rest| {
            run_inner(&json, None, &mut |_, _| true, rest, &plugins::Plugins::default()).expect("runs")
        };
        let (live, none) = go(false);
        let (rested, n) = go(true);
        assert_eq!(none, 0);
        assert!(n > 100, "flows rested only {n} times");
        assert_eq!(live.meta["trace_hash"], rested.meta["trace_hash"]);
        assert_eq!(live.meta["events"], rested.meta["events"]);
        assert_eq!(live.totals, rested.totals);
        assert_eq!(format!("{:?}", live.tables), format!("{:?}", rested.tables));
        let delivered = |o: &RunOutput| o.totals["flows"]["m4"]["delivered_bytes"].as_u64().unwrap();
        assert!(delivered(&live) > 10_000, "the message flows deliver");
    }

    /// A flow whose controller was made at run time (a plugin) is never stored encoded, and
    /// runs as with the built-in controller it wraps: NewReno behind the plugin interface
    /// (one dynamic call per event) gives the same run as the registry's NewReno.
    #[test]
    fn flows_with_a_run_time_controller_stay_live() {
        use quicksim_cc::algos::newreno::{Config, NewReno};
        use quicksim_cc::{Algorithm, CongestionController, InitCtx};

        let mut plugins = plugins::Plugins::default();
        plugins
            .register_controller("newreno-plugin", |_| {
                Ok(std::sync::Arc::new(|cx: &InitCtx| {
                    Box::new(NewReno::new(&Config::default(), cx)) as Box<dyn CongestionController>
                }))
            })
            .unwrap();
        let doc = |cc: &str| {
            let flows: Vec<_> = (0..8)
                .map(|i| {
                    serde_json::json!({"name": format!("m{i}"), "kind": "quic", "app": "messages",
                        "size": "2000B", "interval": "300ms", "start": format!("{}ms", 17 * i),
                        "src": format!("sender{}", i % 2 + 1), "dst": format!("receiver{}", i % 2 + 1)})
                })
                .collect();
            serde_json::json!({
                "run": {"duration": "4s", "seed": 3},
                "dumbbell": {"pairs": 2, "bottleneck": {"rate": "10Mbps", "delay": "10ms",
                             "loss": {"kind": "bernoulli", "p": 0.02}}},
                "quic": {"cc": cc},
                "flows": flows,
            })
            .to_string()
        };
        let go = |cc| run_inner(&doc(cc), None, &mut |_, _| true, true, &plugins).expect("runs");
        let (builtin, rested) = go("newreno");
        let (plugin, rested_plugin) = go("newreno-plugin");
        assert!(rested > 50, "built-in flows rested only {rested} times");
        assert_eq!(rested_plugin, 0, "a flow with a run-time controller was encoded");
        assert_eq!(builtin.meta["trace_hash"], plugin.meta["trace_hash"]);
        assert_eq!(builtin.totals, plugin.totals);
        assert_eq!(format!("{:?}", builtin.tables), format!("{:?}", plugin.tables));
    }
}
