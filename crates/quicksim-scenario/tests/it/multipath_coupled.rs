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
    // Each flow starts at a uniform time in the first round trip (its own random stream), so
    // that the seeds differ in the flows' phase at the drop-tail queue.
    let start = json!({"dist": "uniform", "min": "0s", "max": "30ms"});
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
            {"name": "mp", "kind": "quic", "src": "client.wifi", "dst": "server", "start": start,
             "quic": {"cc": cc, "multipath": {"paths": [{"src": "client.lte"}]}}},
            {"name": "single", "kind": "quic", "src": "single", "dst": "server2", "start": start,
             "quic": {"cc": {"algo": "newreno", "exact_increase": false}}}
        ]
    })
}

/// Goodput of the multipath connection over the single-path flow's, from 5 s to the end.
fn ratio(cc: &str, secs: u64, seed: u64) -> f64 {
    let o = go(&shared_bottleneck(cc, secs), Some(seed));
    let t1 = secs as f64;
    let mp = super::goodput_bps(&o, "mp", 5.0, t1);
    let single = super::goodput_bps(&o, "single", 5.0, t1);
    let r = mp / single;
    eprintln!("{cc} seed {seed}: multipath {mp:.0} bit/s, single {single:.0} bit/s, ratio {r:.3}");
    r
}

/// The mean ratio over seeds 1 to 5.
fn mean_ratio(cc: &str, secs: u64) -> f64 {
    (1..=5).map(|seed| ratio(cc, secs, seed)).sum::<f64>() / 5.0
}

/// RFC 6356 goals 1 and 2 with equal RTTs: the fluid model (docs/multipath-coupled.md) gives the
/// multipath/single goodput ratio 2.0 uncoupled and 1.0 for every coupled rule. Measured (mean
/// of seeds 1-5, 60 s, goodput from 5 s): uncoupled 2.315, lia 1.050, olia 0.952, balia 1.039;
/// single seeds spread 0.85-1.10 (olia), 1.00-1.10 (lia), 0.93-1.29 (balia), 2.17-2.44
/// (uncoupled): drop-tail phase effects decide which flow a full queue drops, and the start
/// times (the seed) set the phase. Bands on the means: coupled 0.85-1.2, which holds the toy
/// model's excess of LIA (1.11, the two windows fluctuating apart; crates/quicksim-cc/src/
/// coupled/toy.rs) plus the spread of a mean of five runs; uncoupled 1.8-2.6 (the measured
/// excess over 2 comes with the same drop-tail queue: three NewReno windows in one 30-packet
/// queue, the single flow losing more often than its share; not analysed further). And the
/// coupling must halve the multipath connection's share: each coupled ratio below 0.6 times
/// the uncoupled one.
#[test]
fn coupled_paths_take_one_share_of_a_shared_bottleneck() {
    let secs = 60;
    let uncoupled = mean_ratio("newreno", secs);
    let lia = mean_ratio("lia", secs);
    let olia = mean_ratio("olia", secs);
    let balia = mean_ratio("balia", secs);
    eprintln!("ratios: uncoupled {uncoupled:.3} lia {lia:.3} olia {olia:.3} balia {balia:.3}");
    assert!((1.8..=2.6).contains(&uncoupled), "uncoupled ratio {uncoupled}");
    for (cc, r) in [("lia", lia), ("olia", olia), ("balia", balia)] {
        assert!((0.85..=1.2).contains(&r), "{cc} ratio {r}");
        assert!(r < 0.6 * uncoupled, "{cc} ratio {r} against uncoupled {uncoupled}");
    }
}
