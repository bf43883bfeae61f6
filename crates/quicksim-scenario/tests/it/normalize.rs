//! The normalized scenario (`validate`/`normalize`): it holds the defaults, it is a fixed point,
//! and it runs exactly as the document it came from.

use super::*;
use quicksim_scenario::{normalize, output, validate};
use serde_json::json;

/// A short QUIC + UDP dumbbell that leaves almost everything to the defaults.
fn sparse() -> serde_json::Value {
    json!({
        "run": {"duration": "2s"},
        "dumbbell": {"pairs": 2, "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"bytes": "25kB"}}},
        "flows": [
            {"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1", "start": "0.1s"},
            {"name": "u", "kind": "udp", "src": "sender2", "dst": "receiver2", "size": "1000B", "rate": "2Mbps",
             "interval": null}
        ]
    })
}

/// A custom topology with a per-direction override, distributions and a non-default QUIC table.
fn custom() -> serde_json::Value {
    json!({
        "run": {"duration": "1500ms", "seed": 3, "record_interval": "0.25s", "record": {"packets": ["b"]}},
        "nodes": {"h1": {"kind": "host"}, "r": {"kind": "router"}, "h2": {"kind": "host"}},
        "links": [
            {"name": "l1", "a": "h1", "b": "r", "rate": "100Mbps", "delay": "1ms"},
            {"name": "l2", "a": "r", "b": "h2", "rate": "8Mbps", "delay": "15ms", "mtu": "1280B",
             "reverse": {"rate": "2Mbps"}, "loss": {"kind": "periodic", "every": 50}}
        ],
        "quic": {"cc": "cubic", "pacing": true},
        "flows": [
            {"name": "b", "kind": "quic", "src": "h1", "dst": "h2", "app": "bulk", "bytes": "300kB", "streams": 2,
             "quic": {"initial_rtt": "100ms"}},
            {"name": "m", "kind": "quic", "src": "h1", "dst": "h2", "app": "messages",
             "size": {"dist": "uniform", "min": "200B", "max": "2kB"}, "interval": {"dist": "exponential", "mean": "20ms"}},
            {"name": "o", "kind": "onoff", "src": "h2", "dst": "h1", "size": "500B", "interval": "5ms",
             "on": {"dist": "exponential", "mean": "100ms"}, "off": {"dist": "constant", "value": "50ms"}}
        ]
    })
}

fn same_run(a: &RunOutput, b: &RunOutput) {
    assert_eq!(a.meta["trace_hash"], b.meta["trace_hash"]);
    assert_eq!(a.meta["events"], b.meta["events"]);
    assert_eq!(a.totals, b.totals);
    assert_eq!(format!("{:?}", a.tables), format!("{:?}", b.tables));
}

#[test]
fn the_normalized_scenario_holds_the_defaults() {
    let n = validate(&sparse().to_string()).unwrap();
    assert_eq!(n["run"]["seed"], 1);
    assert_eq!(n["run"]["record_interval"], "500ms");
    assert_eq!(n["run"]["record"]["max_samples"], 1_000_000);
    assert_eq!(n["run"]["record"]["queues"], true);
    assert_eq!(n["dumbbell"]["mtu"], "1500B");
    let access = &n["dumbbell"]["access"];
    assert_eq!(
        (&access["rate"], &access["delay"], &access["overhead"]),
        (&json!("1Gbps"), &json!("0s"), &json!("7B"))
    );
    assert_eq!(access["queue"], json!({"kind": "droptail", "packets": 10000}));
    // The user's own values stay as given, and no default is added beside them but the queue
    // discipline's kind (its settings are its own: DropTail's defaults come from its Config).
    assert_eq!(n["dumbbell"]["bottleneck"]["queue"], json!({"bytes": "25kB", "kind": "droptail"}));
    assert_eq!(n["dumbbell"]["bottleneck"]["rate"], "10Mbps");
    assert_eq!(n["flows"][0]["start"], "100ms");
    assert_eq!((&n["flows"][0]["app"], &n["flows"][0]["streams"]), (&json!("saturated"), &json!(1)));
    assert!(n["flows"][0].get("stop").is_none(), "stop follows run.duration; not pinned");
    assert!(n["flows"][1].get("app").is_none(), "QUIC-only fields stay off UDP flows");
    assert!(n["flows"][1].get("interval").is_none(), "absent options are left out, not null");
    // RFC 9002 §6.2.2 kInitialRtt and RFC 9000 §18.2 max_ack_delay, from the transport's defaults.
    assert_eq!((&n["quic"]["initial_rtt"], &n["quic"]["max_ack_delay"]), (&json!("333ms"), &json!("25ms")));
    assert_eq!((&n["quic"]["header"], &n["quic"]["ack_ratio"]), (&json!("inet"), &json!(2)));
    assert!(n["quic"].get("max_packet_size").is_none(), "depends on the path MTU");
}

#[test]
fn the_normalized_scenario_runs_bit_identically() {
    let mut tcp = sparse();
    tcp["flows"][0]["kind"] = json!("tcp");
    tcp["tcp"] = json!({"cc": "newreno", "min_rto": "1s"});
    for (name, doc) in [
        ("sparse", sparse()),
        ("custom", custom()),
        ("linksharing", pins::linksharing()),
        ("tcp", tcp.clone()),
    ] {
        let n = validate(&doc.to_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
        same_run(&go(&doc, None), &go(&n, None));
        // A fixed point: normalizing again changes nothing.
        assert_eq!(normalize(&n.to_string()).unwrap(), n, "{name}");
    }
    let n = validate(&custom().to_string()).unwrap();
    assert_eq!(n["flows"][1]["size"], json!({"dist": "uniform", "min": "200B", "max": "2kB"}));
    assert_eq!(n["flows"][2]["off"], "50ms", "a constant distribution is its value");
    assert_eq!(n["links"][1]["reverse"], json!({"rate": "2Mbps"}), "direction tables inherit, unfilled");
    assert_eq!(
        (&n["quic"]["cc"], &n["quic"]["pacing"], &n["quic"]["handshake"]),
        (&json!("cubic"), &json!(true), &json!(true))
    );
    assert_eq!(n["flows"][0]["quic"], json!({"initial_rtt": "100ms"}));
    // TCP: TcpConfig's defaults written out beside the user's values, which stay.
    let n = validate(&tcp.to_string()).unwrap();
    assert_eq!((&n["tcp"]["min_rto"], &n["tcp"]["cc"]), (&json!("1s"), &json!("newreno")));
    assert_eq!((&n["tcp"]["delack_timeout"], &n["tcp"]["sack"]), (&json!("40ms"), &json!(true)));
    assert_eq!(n["tcp"]["tls"], "none");
    assert!(n["tcp"].get("mss").is_none() && n["tcp"].get("mtu").is_none(), "from the path MTU");
}

#[test]
fn a_run_writes_the_tables_of_the_schema() {
    let o = go(&custom(), None);
    assert_eq!(output::check_schema(&o.tables), Ok(()));
    // Not vacuous: these tables have rows in this run.
    for t in ["flows", "links", "queues", "conn", "streams", "packets"] {
        assert!(!o.table(t).unwrap()[0].1.is_empty(), "{t} is empty");
    }
}

/// `meta.scenario_hash` identifies what is simulated, not how it was spelled: another unit for the
/// same quantity, a default written out, another key order, another seed or name give the same
/// hash; another value gives another.
#[test]
fn the_scenario_hash_is_that_of_the_normalized_scenario() {
    let hash = |doc: &serde_json::Value, seed: Option<u64>| go(doc, seed).meta["scenario_hash"].clone();
    let base = hash(&sparse(), None);
    let mut respelled = sparse();
    respelled["run"]["duration"] = json!("2000ms");
    respelled["dumbbell"]["bottleneck"]["delay"] = json!("0.01s");
    respelled["run"]["record_interval"] = json!("0.5s"); // the default, written out
    respelled["name"] = json!("another label");
    assert_eq!(hash(&respelled, Some(7)), base);
    let mut other = sparse();
    other["dumbbell"]["bottleneck"]["delay"] = json!("11ms");
    assert_ne!(hash(&other, None), base);
    let mut renamed = sparse();
    renamed["flows"][0]["name"] = json!("q2");
    assert_ne!(hash(&renamed, None), base, "a flow's name is in its outputs");
    let mut started = sparse();
    started["flows"][1]["start"] = json!("0s"); // the default, written out
    assert_eq!(hash(&started, None), base);
}
