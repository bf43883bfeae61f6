//! A congestion controller defined entirely in this file and handed to a run through `Plugins`:
//! the proof that adding a controller takes one file plus one registration line
//! (`plugins.register_algorithm::<FixedWindow>()`; a built-in one would instead add
//! `fixed::FixedWindow` to the `controllers!` line of `quicksim-cc/src/algos/mod.rs`).

use quicksim_cc::{
    AckEvent, Algorithm, CcCtx, CcMetrics, CcState, CongestionController, CongestionEvent, InitCtx,
};
use quicksim_scenario::plugins::Plugins;
use quicksim_scenario::{run_with, RunOutput};
use serde::Deserialize;
use serde_json::json;

/// `cc = { algo = "fixed", packets = N }`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FixedConfig {
    /// The window in maximum-size packets.
    packets: u64,
}

impl Default for FixedConfig {
    fn default() -> Self {
        FixedConfig { packets: 10 }
    }
}

/// A window of a fixed number of packets, whatever happens.
struct FixedWindow {
    cwnd: u64,
}

impl Algorithm for FixedWindow {
    const NAME: &'static str = "fixed";
    type Config = FixedConfig;
    fn new(cfg: &FixedConfig, cx: &InitCtx) -> Self {
        FixedWindow { cwnd: cfg.packets * cx.mds }
    }
}

impl CongestionController for FixedWindow {
    fn on_ack(&mut self, _cx: &mut CcCtx, _ack: &AckEvent) {}
    fn on_congestion_event(&mut self, _cx: &mut CcCtx, _ev: &CongestionEvent) {}
    fn cwnd_bytes(&self) -> u64 {
        self.cwnd
    }
    fn metrics(&self) -> CcMetrics {
        CcMetrics { cwnd_bytes: self.cwnd, ssthresh_bytes: u64::MAX, state: CcState::CongestionAvoidance }
    }
}

fn plugins() -> Plugins {
    let mut plugins = Plugins::default();
    plugins.register_algorithm::<FixedWindow>().expect("a new name");
    plugins
}

/// One saturated QUIC flow (no handshake) over a 20 Mbit/s bottleneck with 20 ms one-way delay.
fn scenario(cc: serde_json::Value) -> serde_json::Value {
    json!({
        "run": {"duration": "10s"},
        "dumbbell": {"pairs": 1, "mtu": "1280B",
                     "bottleneck": {"rate": "20Mbps", "delay": "20ms", "queue": {"packets": 100}},
                     "access": {"rate": "1Gbps"}},
        "quic": {"handshake": false, "cc": cc},
        "flows": [{"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"}]
    })
}

fn run(sc: &serde_json::Value) -> Result<RunOutput, String> {
    run_with(&sc.to_string(), None, &mut |_, _| true, &plugins()).map_err(|e| e.to_string())
}

/// A fixed window W over a path with round-trip time T and no loss delivers W per T, as long as
/// W/T is below the link rate. Here W = 8 packets of 1252 B carrying 1231 B of stream data each
/// (13 B header, 8 B of STREAM frame header with a 4-byte offset), and 9 848 B · 8 / 41 ms =
/// 1.92 Mbit/s is far below 20 Mbit/s. The receiver acks every second packet at once
/// (ack_ratio 2), so each pair of packets is clocked out by its ACK: T = 2 · 20 ms + 2 · 514.8 µs
/// (the pair serialized on the bottleneck, 1287 B frames at 20 Mbit/s) + 2 · 10.3 µs (1 Gbit/s
/// access links) + the ACK's ~25 µs of serialization: 41.075 ms.
///
/// Tolerance 0.5 %: the run ends mid-cycle, so the delivered total is off by up to one pair of
/// packets (2 462 B of ~2.4 MB, 0.1 %), and the first data arrive 20.5 ms after the start
/// (0.2 % of 10 s, subtracted below); the remainder covers the ACK size estimate.
#[test]
fn a_fixed_window_delivers_one_window_per_round_trip() {
    let o = run(&scenario(json!({"algo": "fixed", "packets": 8}))).unwrap();
    let delivered = o.totals["flows"]["q"]["delivered_bytes"].as_f64().unwrap();
    let t = 0.040 + 2.0 * 1287.0 * 8.0 / 20e6 + 2.0 * 1287.0 * 8.0 / 1e9 + 25e-6;
    let expected = 8.0 * 1231.0 / t; // bytes per second
    let measured = delivered / (10.0 - 0.0205);
    println!("goodput {:.0} B/s, hand computation {expected:.0} B/s", measured);
    assert!((measured / expected - 1.0).abs() < 0.005, "{measured} vs {expected}");
    // Twice the window, twice the goodput: each pair is still clocked by its own ACK, as the
    // 8 pairs keep the bottleneck busy only 8 ms of every 41 ms.
    let o = run(&scenario(json!({"algo": "fixed", "packets": 16}))).unwrap();
    let doubled = o.totals["flows"]["q"]["delivered_bytes"].as_f64().unwrap() / (10.0 - 0.0205);
    assert!((doubled / (2.0 * expected) - 1.0).abs() < 0.005, "{doubled} vs {}", 2.0 * expected);
    // The window never moves: the recorded cwnd is 8 packets throughout.
    let o = run(&scenario(json!({"algo": "fixed", "packets": 8}))).unwrap();
    let cwnd = super::col_i64(&o, "conn", "cwnd_bytes");
    assert!(!cwnd.is_empty() && cwnd.iter().all(|&c| c == 8 * 1252), "{cwnd:?}");
}

#[test]
fn plugin_settings_are_checked_and_names_listed() {
    let e = run(&scenario(json!({"algo": "fixed", "pakets": 8}))).unwrap_err();
    assert!(e.starts_with("quic.cc.pakets: unknown field `pakets`, expected `packets`"), "{e}");
    let e = run(&scenario(json!("fixd"))).unwrap_err();
    assert_eq!(e, "quic.cc: \"fixd\" is not a congestion controller; use one of [\"none\", \"newreno\", \"cubic\", \"bbr1\", \"bbr\", \"dctcp\", \"prague\", \"lia\", \"olia\", \"balia\", \"fixed\"]");
    // The short form takes the defaults.
    let o = run(&scenario(json!("fixed"))).unwrap();
    assert_eq!(super::col_i64(&o, "conn", "cwnd_bytes")[0], 10 * 1252);
    // A plugin cannot take a built-in name or one already registered.
    let mut p = plugins();
    assert!(p.register_algorithm::<FixedWindow>().is_err());
    let e = p.register_controller("cubic", |_| unreachable!()).err().unwrap();
    assert!(e.contains("built in"), "{e}");
}
