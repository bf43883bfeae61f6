//! quicksim-scenario: scenario files (JSON of the TOML document, with units) -> a world of
//! network, flows (applications over transports) and output sinks; the run loop.
//!
//! `schema` (the file format) -> `build` (checks and construction) -> `world` (the run loop,
//! over `flows` and `apps`) -> `output` (sinks, tables, totals). `plugins` carries run-time
//! extensions. `docs/architecture.md` has the whole picture.

mod apps;
mod budget;
mod build;
mod cc_config;
mod ctx;
mod event;
mod flows;
pub mod format;
mod link_cfg;
pub mod normalize;
pub mod output;
mod payload;
pub mod plugins;
pub mod schema;
pub mod units;
mod world;

pub use output::{table_schema, Column, ColumnType, RunOutput, Table};
pub use payload::Payload;
pub use world::realtime::Wire;
pub use world::Stop;

use std::fmt;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The master seed of a run that gives none (neither `run.seed` nor the caller).
pub const DEFAULT_SEED: u64 = 1;

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
    /// One line: control characters a scenario's keys or values may carry (a key with a newline)
    /// are written escaped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let one_line = |s: &str| -> String {
            if s.chars().any(char::is_control) {
                s.chars()
                    .map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() })
                    .collect()
            } else {
                s.to_string()
            }
        };
        if self.path.is_empty() {
            write!(f, "{}", one_line(&self.message))
        } else {
            write!(f, "{}: {}", one_line(&self.path), one_line(&self.message))
        }
    }
}
impl std::error::Error for ScenarioError {}

/// FNV-1a, fed in pieces.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

impl std::io::Write for Fnv {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.feed(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The scenario's identity, so every result carries what made it: FNV-1a of the normalized
/// scenario (defaults filled in, every quantity in its canonical unit, keys sorted; written
/// flow by flow, `normalize::normalized_parts`) without `run.seed` (the seed is recorded beside
/// it) and the label `name`. So `"1s"` and `"1000ms"`, a default written out or left implicit,
/// and tables in another order give the same hash; any change to what is simulated gives
/// another.
fn scenario_hash(sc: &mut schema::Scenario) -> Result<String, ScenarioError> {
    let mut h = Fnv::new();
    let mut first = true;
    normalize::normalized_parts(sc, |part| {
        // Writing a Value into a hasher cannot fail; a separator keeps the parts apart.
        if std::mem::take(&mut first) {
            // The scenario without its flows: its label and seed are not what is simulated.
            let mut head = part.clone();
            if let Some(top) = head.as_object_mut() {
                top.remove("name");
                if let Some(run) = top.get_mut("run").and_then(|r| r.as_object_mut()) {
                    run.remove("seed");
                    // What is written, not what is simulated: a capture changes no result.
                    run.remove("capture");
                }
            }
            let _ = serde_json::to_writer(&mut h, &head);
        } else {
            let _ = serde_json::to_writer(&mut h, part);
        }
        h.feed(b"\n");
    })?;
    Ok(format!("{:016x}", h.0))
}

/// Check a scenario completely (schema and semantics) without running it; returns it
/// normalized (defaults filled in; the `normalize` module says which).
pub fn validate(json: &str) -> Result<serde_json::Value, ScenarioError> {
    validate_with(json, &plugins::Plugins::default())
}

/// `validate` with extensions registered at run time (a scenario naming a plugin controller).
pub fn validate_with(json: &str, plugins: &plugins::Plugins) -> Result<serde_json::Value, ScenarioError> {
    let sc = format::parse(json)?;
    build::build(&sc, sc.run.seed.unwrap_or(DEFAULT_SEED), plugins)?;
    normalize::normalized(&sc)
}

/// The scenario with its defaults filled in, checking only the schema (no build): for a
/// scenario that was already checked, e.g. by running it.
pub fn normalize(json: &str) -> Result<serde_json::Value, ScenarioError> {
    normalize::normalized(&format::parse(json)?)
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
    run_driven(json, seed, rest, plugins, &mut |w| Ok((w.run(progress), None)))
}

/// Builds the scenario, hands the world to `drive` (the run loop, virtual or real time: it
/// returns why the run stopped and a `realtime` block for the totals) and makes the output.
#[allow(clippy::type_complexity)]
fn run_driven(
    json: &str,
    seed: Option<u64>,
    rest: bool,
    plugins: &plugins::Plugins,
    drive: &mut dyn FnMut(&mut world::World) -> Result<(Stop, Option<serde_json::Value>), ScenarioError>,
) -> Result<(RunOutput, u64), ScenarioError> {
    let mut sc = format::parse(json)?;
    let seed = seed.or(sc.run.seed).unwrap_or(DEFAULT_SEED);
    if sc.run.capture.is_some() && plugins.out_dir.is_none() {
        return Err(ScenarioError::new(
            "run.capture".into(),
            "a capture is written to a file: give the run an output folder (--out DIR, quicksim.run(..., out=DIR))"
                .into(),
        ));
    }
    let built = build::build(&sc, seed, plugins)?;
    let hash = scenario_hash(&mut sc)?;
    // The parsed flows (~600 B each) are not needed once built.
    sc.flows = Vec::new();
    let mut w = world::World::new(built);
    w.rest_quiet_flows = rest;
    let wall = std::time::Instant::now();
    let (stop, realtime) = drive(&mut w)?;
    let wall_s = wall.elapsed().as_secs_f64();
    let peak_rss_run_kib = peak_rss_kib();
    let rested = w.rested;
    let capture = match w.cx.out.rec.capture.as_mut() {
        Some(c) => Some(c.close().map_err(|e| ScenarioError::new("run.capture".into(), e))?),
        None => None,
    };
    let mut out = world::totals::finish(w, &sc, hash, seed, stop, wall_s);
    if let Some(c) = capture {
        out.totals["capture"] = c;
    }
    if let Some(r) = realtime {
        out.totals["realtime"] = r;
        out.meta["clock"] = serde_json::json!("real");
    }
    out.meta["peak_rss_run_kib"] = serde_json::json!(peak_rss_run_kib);
    Ok((out, rested))
}

/// What a real-time run (`run.clock = "real"`) needs set up before it starts, from the checked
/// scenario: the hosts that get an interface (the ends of its program flows; name, IPv4
/// address, MTU) and the program flows (commands with `{src}`/`{dst}` replaced, start, stop).
pub fn emulation_plan(json: &str) -> Result<serde_json::Value, ScenarioError> {
    let sc = format::parse(json)?;
    let built = build::build(&sc, sc.run.seed.unwrap_or(DEFAULT_SEED), &plugins::Plugins::default())?;
    world::realtime::plan(&sc, &built)
}

/// Runs a scenario with `run.clock = "real"` in real time: `wire` carries the packets of
/// `hosts` (node names, in the wire's order: `emulation_plan`'s). `progress` is called every
/// 20 ms of wall time; `warn` gets a line when the loop falls behind. The totals get a
/// `realtime` block (lateness quantiles, packet counts).
pub fn run_real(
    json: &str,
    seed: Option<u64>,
    plugins: &plugins::Plugins,
    wire: &mut dyn Wire,
    hosts: &[String],
    progress: &mut dyn FnMut(f64, u64) -> bool,
    warn: &mut dyn FnMut(&str),
) -> Result<RunOutput, ScenarioError> {
    let sc = format::parse(json)?;
    if sc.run.clock != Some(schema::Clock::Real) {
        return Err(ScenarioError::new(
            "run.clock".into(),
            "a real-time run needs run.clock = \"real\"".into(),
        ));
    }
    let mut drive = |w: &mut world::World| {
        let nodes = (hosts.iter())
            .map(|h| {
                w.cx.net
                    .find(h)
                    .ok_or_else(|| ScenarioError::new("hosts".into(), format!("{h:?} is not a node")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut rt = world::realtime::RealTime::new(w, &mut *wire, nodes);
        let stop = w.run_real(&mut rt, progress, warn);
        if let Some(e) = rt.error.take() {
            return Err(ScenarioError::new("emulation".into(), e));
        }
        Ok((stop, Some(rt.summary())))
    };
    run_driven(json, seed, true, plugins, &mut drive).map(|(out, _)| out)
}

/// The process's peak resident memory so far (`VmHWM`), in KiB; `None` where /proc is missing.
/// Read at the end of the run loop, before the outputs are built, it is the peak of the
/// simulation state (scenario, network, flows, recorders) of a run in a fresh process.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
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

    /// The same for TCP flows (`tcp/park.rs`): message flows with gaps over a lossy
    /// bottleneck, the three-way handshake, TLS 1.3 and 1.2, SACK on and off, delayed ACKs and
    /// ACK every segment, CUBIC with pacing, a bulk transfer that completes and flows that stop
    /// early; the same trace hash, events, totals and tables with and without resting.
    #[test]
    fn resting_tcp_flows_change_nothing() {
        let mut flows = Vec::new();
        for i in 0..24 {
            let mut f = serde_json::json!({
                "name": format!("m{i}"), "kind": "tcp", "app": "messages",
                "size": if i % 3 == 0 { "3000B" } else { "700B" },
                "interval": if i % 2 == 0 { "200ms" } else { "1.3s" },
                "src": format!("sender{}", i % 4 + 1), "dst": format!("receiver{}", i % 4 + 1),
                "start": format!("{}ms", 13 * i),
            });
            if i % 5 == 1 {
                f["stop"] = serde_json::json!("2.5s");
            }
            let mut tcp = serde_json::Map::new();
            if i % 4 == 2 {
                tcp.insert("cc".into(), serde_json::json!("cubic"));
                tcp.insert("pacing".into(), serde_json::json!(true));
            }
            if i % 3 == 1 {
                tcp.insert("sack".into(), serde_json::json!(false));
            }
            if i % 7 == 3 {
                tcp.insert("ack_every".into(), serde_json::json!(1));
            }
            match i % 6 {
                0 => tcp.insert("tls".into(), serde_json::json!("1.3")),
                5 => tcp.insert("tls".into(), serde_json::json!("1.2")),
                _ => None,
            };
            if !tcp.is_empty() {
                f["tcp"] = serde_json::Value::Object(tcp);
            }
            flows.push(f);
        }
        flows.push(serde_json::json!({"name": "bulk", "kind": "tcp", "app": "bulk", "bytes": "400kB",
            "src": "sender1", "dst": "receiver1", "start": "0.3s", "tcp": {"tls": "1.3"}}));
        let doc = serde_json::json!({
            "run": {"duration": "6s", "seed": 9, "record_interval": "0.5s"},
            "dumbbell": {
                "pairs": 4, "mtu": "1280B",
                "bottleneck": {"rate": "20Mbps", "delay": "12ms", "queue": {"packets": 40},
                               "loss": {"kind": "bernoulli", "p": 0.02}},
                "access": {"rate": "1Gbps", "delay": "1ms"}
            },
            "tcp": {"cc": "newreno"},
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
        let flow = |o: &RunOutput, f: &str, k: &str| o.totals["flows"][f][k].clone();
        assert!(flow(&live, "m4", "delivered_bytes").as_u64().unwrap() > 10_000, "the message flows deliver");
        assert!(flow(&live, "bulk", "completion_time_s").as_f64().is_some(), "the bulk completes");
        let retx: u64 = (0..24)
            .map(|i| flow(&live, &format!("m{i}"), "tcp")["retransmitted_segments"].as_u64().unwrap())
            .sum();
        println!("TCP flows rested {n} times; {retx} retransmissions; trace {}", live.meta["trace_hash"]);
        assert!(retx > 5, "the loss made only {retx} retransmissions");
    }

    /// A flow whose controller was made at run time (a plugin) is never stored encoded, and
    /// runs as with the built-in controller it wraps: NewReno behind the plugin interface
    /// (one dynamic call per event) gives the same run as the registry's NewReno. QUIC and TCP.
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
        let doc = |kind: &str, cc: &str| {
            let flows: Vec<_> = (0..8)
                .map(|i| {
                    serde_json::json!({"name": format!("m{i}"), "kind": kind, "app": "messages",
                        "size": "2000B", "interval": "300ms", "start": format!("{}ms", 17 * i),
                        "src": format!("sender{}", i % 2 + 1), "dst": format!("receiver{}", i % 2 + 1)})
                })
                .collect();
            serde_json::json!({
                "run": {"duration": "4s", "seed": 3},
                "dumbbell": {"pairs": 2, "bottleneck": {"rate": "10Mbps", "delay": "10ms",
                             "loss": {"kind": "bernoulli", "p": 0.02}}},
                kind: {"cc": cc},
                "flows": flows,
            })
            .to_string()
        };
        for kind in ["quic", "tcp"] {
            let go = |cc| run_inner(&doc(kind, cc), None, &mut |_, _| true, true, &plugins).expect("runs");
            let (builtin, rested) = go("newreno");
            let (plugin, rested_plugin) = go("newreno-plugin");
            assert!(rested > 50, "{kind}: built-in flows rested only {rested} times");
            assert_eq!(rested_plugin, 0, "{kind}: a flow with a run-time controller was encoded");
            assert_eq!(builtin.meta["trace_hash"], plugin.meta["trace_hash"]);
            assert_eq!(builtin.totals, plugin.totals);
            assert_eq!(format!("{:?}", builtin.tables), format!("{:?}", plugin.tables));
        }
    }
}

#[cfg(test)]
mod totals_tests {
    /// A flow's totals in `summary.json` are the same whether the `flows` table is recorded
    /// (then they are the sums of the flow's bins) or not (then counted apart): message flows
    /// with random and constant sizes and intervals, a bulk transfer and a UDP source, over a
    /// lossy bottleneck; the trace hashes are equal too.
    #[test]
    fn flow_totals_do_not_depend_on_the_flows_table() {
        let mut flows = Vec::new();
        for i in 0..6 {
            flows.push(serde_json::json!({
                "name": format!("m{i}"), "kind": "quic", "app": "messages",
                "size": if i % 2 == 0 { serde_json::json!("1200B") }
                        else { serde_json::json!({"dist": "uniform", "min": "500B", "max": "3000B"}) },
                "interval": if i % 3 == 0 { serde_json::json!("150ms") }
                            else { serde_json::json!({"dist": "exponential", "mean": "300ms"}) },
                "src": format!("sender{}", i % 2 + 1), "dst": format!("receiver{}", i % 2 + 1),
                "start": format!("{}ms", 17 * i),
            }));
        }
        flows.push(serde_json::json!({"name": "bulk", "kind": "quic", "app": "bulk", "bytes": "300kB",
            "src": "sender1", "dst": "receiver1", "start": "0.2s"}));
        flows.push(serde_json::json!({"name": "u", "kind": "udp", "rate": "2Mbps", "size": "1000B",
            "src": "sender2", "dst": "receiver2", "start": "0.1s", "stop": "2s"}));
        let run = |record_flows: bool| {
            let doc = serde_json::json!({
                "run": {"duration": "3s", "seed": 4, "record_interval": "0.25s",
                        "record": {"flows": record_flows}},
                "dumbbell": {
                    "pairs": 2, "mtu": "1280B",
                    "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"packets": 30},
                                   "loss": {"kind": "bernoulli", "p": 0.01}},
                    "access": {"rate": "1Gbps", "delay": "1ms"}
                },
                "flows": flows,
            });
            super::run(&doc.to_string(), None, &mut |_, _| true).expect("runs")
        };
        let (on, off) = (run(true), run(false));
        assert_eq!(on.meta["trace_hash"], off.meta["trace_hash"]);
        assert_eq!(on.totals["flows"], off.totals["flows"]);
        let m1 = &on.totals["flows"]["m1"];
        assert!(m1["delivered_bytes"].as_u64().unwrap() > 2_000, "{m1}");
    }
}
