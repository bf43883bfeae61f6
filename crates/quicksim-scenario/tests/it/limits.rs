//! Hostile but well-formed scenarios: what cannot fit in memory is refused before anything is
//! allocated, with one error naming the field to change; ambiguous topologies are refused.

use super::{base, err_of};
use quicksim_scenario::{run, validate};
use serde_json::json;
use std::time::Instant;

#[test]
fn one_picosecond_bins_are_refused_at_once() {
    let mut sc = base();
    sc["run"]["record_interval"] = json!("1ps");
    let t = Instant::now();
    let e = err_of(sc);
    assert!(e.starts_with("run.record_interval: \"1ps\" on a 1s run makes 1000000000000 bins"), "{e}");
    assert!(t.elapsed().as_secs_f64() < 1.0);
}

#[test]
fn ten_nanosecond_bins_on_a_second_are_refused() {
    // 1e8 bins × (1 flow + 3 links × 2 directions): over 100 GB of tables.
    let mut sc = base();
    sc["run"]["record_interval"] = json!("10ns");
    let t = Instant::now();
    let e = err_of(sc.clone());
    assert!(
        e.starts_with("run.record_interval: \"10ns\" on a 1s run makes 100000000 bins × 7 series"),
        "{e}"
    );
    assert!(e.contains("use a record_interval of at least"), "{e}");
    assert!(t.elapsed().as_secs_f64() < 1.0);
    // validate refuses it too (it builds the world the same way).
    assert!(validate(&sc.to_string()).is_err());
    // Recording nothing per bin makes the same interval harmless.
    sc["run"]["record"] = json!({"flows": false, "links": false});
    run(&sc.to_string(), None, &mut |_, _| true).unwrap();
}

#[test]
fn duplicate_link_names_are_refused() {
    let sc = json!({
        "run": {"duration": "1s"},
        "nodes": {"a": {"kind": "host"}, "r": {"kind": "router"}, "b": {"kind": "host"}},
        "links": [
            {"name": "l", "a": "a", "b": "r", "rate": "1Mbps"},
            {"name": "l", "a": "r", "b": "b", "rate": "1Mbps"}
        ],
        "flows": [{"name": "f", "kind": "udp", "src": "a", "dst": "b", "size": "100B", "interval": "10ms"}]
    });
    assert_eq!(err_of(sc), "links[1].name: \"l\" is used by two links");
}

#[test]
fn dumbbell_with_links_is_refused() {
    let mut sc = base();
    sc["nodes"] = json!({"x": {"kind": "host"}});
    sc["links"] = json!([{"name": "extra", "a": "x", "b": "router1", "rate": "1Mbps"}]);
    assert!(err_of(sc).starts_with("nodes: a [dumbbell] builds its own nodes and links"));
    let mut sc = base();
    sc["links"] = json!([{"name": "extra", "a": "sender1", "b": "router2", "rate": "1Mbps"}]);
    assert!(err_of(sc).starts_with("links: a [dumbbell] builds its own nodes and links"));
}

#[test]
fn empty_flow_name_is_refused() {
    let mut sc = base();
    sc["flows"][0]["name"] = json!("");
    assert_eq!(err_of(sc), "flows[0].name: \"\": a flow needs a name");
}

#[test]
fn too_small_mtu_is_reported_against_the_mtu_field() {
    let mut sc = base();
    sc["dumbbell"]["mtu"] = json!("28B");
    assert_eq!(err_of(sc), "dumbbell.mtu: 28 B is smaller than the IPv4 + UDP headers (28 B)");
}

#[test]
fn ten_thousand_pairs_build_in_linear_memory_and_time() {
    // The routing table was dense over node pairs (1.6 GB here); it is now a few entries per node.
    let mut sc = base();
    sc["dumbbell"]["pairs"] = json!(10_000);
    sc["run"]["duration"] = json!("100ms");
    let t = Instant::now();
    validate(&sc.to_string()).unwrap();
    assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
}

#[test]
fn flow_starting_after_the_end_names_start() {
    let mut sc = base();
    sc["flows"][0]["start"] = json!("2s");
    assert_eq!(err_of(sc), "flows[0].start: \"2s\" is not before the end of the run (run.duration = \"1s\")");
}

fn bulk(rate: &str, duration: &str) -> serde_json::Value {
    json!({
        "run": {"duration": duration},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": rate, "delay": "10ms"}},
        "flows": [{"name": "b", "kind": "quic", "app": "bulk", "bytes": "1MB", "src": "sender1", "dst": "receiver1"}]
    })
}

fn unfinished(sc: &serde_json::Value) -> String {
    let o = quicksim_scenario::run(&sc.to_string(), None, &mut |_, _| true).unwrap();
    assert!(o.totals["flows"]["b"].get("unfinished").is_none(), "the flow's totals stay as pinned");
    o.meta["unfinished_flows"]["b"].as_str().unwrap_or("").to_string()
}

#[test]
fn an_unfinished_transfer_says_why() {
    // 1 MB over 1 Mbit/s takes 8 s: after 2 s it is still sending.
    let u = unfinished(&bulk("1Mbps", "2s"));
    assert!(u.starts_with("still sending at the end of the run ("), "{u}");
    // 1 kbit/s: the handshake's padded 1200 B packets take ~10 s each way.
    let u = unfinished(&bulk("1kbps", "5s"));
    assert!(u.starts_with("connection never established"), "{u}");
    // A finished transfer has no reason.
    let o = quicksim_scenario::run(&bulk("10Mbps", "5s").to_string(), None, &mut |_, _| true).unwrap();
    assert!(o.meta.get("unfinished_flows").is_none());
    assert!(o.totals["flows"]["b"]["completion_time_s"].is_f64());
}
