//! Coupled congestion control on a multipath QUIC connection (RFC 6356 goals 1 and 2): a
//! two-path connection and a single-path NewReno flow through one shared bottleneck.

use super::go;
use serde_json::{json, Value};

/// examples/multipath-shared-bottleneck.toml, `secs` long: a two-path connection (client.wifi,
/// client.lte, disjoint 100 Mbit/s access links) whose paths both cross one 10 Mbit/s
/// bottleneck (queue one BDP, 30 packets), and a single-path QUIC NewReno flow (RFC 9002
/// Appendix B.5 increase, the coupled controllers' per-path base) through the same bottleneck.
/// Every path's round trip is 30 ms. `cc` is the multipath connection's controller.
fn shared_bottleneck(cc: &str, secs: u64) -> Value {
    let link = |name: &str, a: &str, b: &str, rate: &str, delay: &str| json!({"name": name, "a": a, "b": b, "rate": rate, "delay": delay});
    json!({
        "run": {"duration": format!("{secs}s"), "seed": 1, "record_interval": "0.5s"},
        "nodes": {
            "client": {"kind": "host", "interfaces": ["wifi", "lte"]},
            "single": {"kind": "host"}, "server": {"kind": "host"}, "server2": {"kind": "host"},
            "r1": {"kind": "router"}, "r2": {"kind": "router"},
            "rb": {"kind": "router"}, "rs": {"kind": "router"}
        },
        "links": [
            link("wifi", "client.wifi", "r1", "100Mbps", "5ms"),
            link("lte", "client.lte", "r2", "100Mbps", "5ms"),
            link("join1", "r1", "rb", "1Gbps", "0ms"),
            link("join2", "r2", "rb", "1Gbps", "0ms"),
            link("single", "single", "rb", "100Mbps", "5ms"),
            {"name": "bottleneck", "a": "rb", "b": "rs", "rate": "10Mbps", "delay": "10ms",
             "queue": {"packets": 30}},
            link("srv", "rs", "server", "1Gbps", "0ms"),
            link("srv2", "rs", "server2", "1Gbps", "0ms")
        ],
        "quic": {"initial_max_data": "4294967295B", "initial_max_stream_data": "4294967295B"},
        "flows": [
            {"name": "mp", "kind": "quic", "src": "client.wifi", "dst": "server",
             "quic": {"cc": cc, "multipath": {"paths": [{"src": "client.lte"}]}}},
            {"name": "single", "kind": "quic", "src": "single", "dst": "server2",
             "quic": {"cc": {"algo": "newreno", "exact_increase": false}}}
        ]
    })
}

/// Goodput of the multipath connection over the single-path flow's, from 5 s to the end.
fn ratio(cc: &str, secs: u64) -> f64 {
    let o = go(&shared_bottleneck(cc, secs), None);
    let t1 = secs as f64;
    let mp = super::goodput_bps(&o, "mp", 5.0, t1);
    let single = super::goodput_bps(&o, "single", 5.0, t1);
    let r = mp / single;
    eprintln!("{cc}: multipath {mp:.0} bit/s, single {single:.0} bit/s, ratio {r:.3}");
    r
}

#[test]
fn coupled_paths_take_one_share_of_a_shared_bottleneck() {
    let secs = 60;
    let uncoupled = ratio("newreno", secs);
    let lia = ratio("lia", secs);
    let olia = ratio("olia", secs);
    let balia = ratio("balia", secs);
    eprintln!("ratios: uncoupled {uncoupled:.3} lia {lia:.3} olia {olia:.3} balia {balia:.3}");
}
