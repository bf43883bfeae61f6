//! The network a run reports it built (`meta.network`): each link direction's rate, overhead,
//! MTU, delay and queue, each flow's paths, base RTT and bottleneck, against hand computation
//! from the scenario's numbers, for a three-hop general topology, a trace-driven dumbbell and a
//! queue discipline registered at run time.

use super::*;
use quicksim_net::{Packet, Qdisc, QdiscCtx, Queued, Verdict};
use serde_json::json;

/// `ps` picoseconds as the seconds the summary reports.
fn s(ps: u64) -> f64 {
    ps as f64 / 1e12
}

/// h1 - r1 - r2 - h2 with a different rate on every direction, link `b` the narrowest MTU and a
/// RED queue one way and CoDel the other, link `c` 18 B of overhead.
fn three_hops() -> serde_json::Value {
    json!({
        "run": {"duration": "100ms"},
        "nodes": {"h1": {"kind": "host"}, "r1": {"kind": "router"}, "r2": {"kind": "router"}, "h2": {"kind": "host"}},
        "links": [
            {"name": "a", "a": "h1", "b": "r1", "rate": "100Mbps", "delay": "1ms", "reverse": {"rate": "50Mbps"}},
            {"name": "b", "a": "r1", "b": "r2", "rate": "20Mbps", "delay": "10ms", "mtu": "1400B",
             "queue": {"kind": "red", "packets": 50, "bytes": "60000B"},
             "reverse": {"rate": "45Mbps", "queue": {"kind": "codel", "packets": 200}}},
            {"name": "c", "a": "r2", "b": "h2", "rate": "40Mbps", "delay": "2ms", "overhead": "18B",
             "reverse": {"rate": "5Mbps"}}
        ],
        "flows": [
            {"name": "up", "kind": "udp", "src": "h1", "dst": "h2", "size": "100B", "interval": "10ms"},
            {"name": "down", "kind": "udp", "src": "h2", "dst": "h1", "size": "100B", "interval": "10ms"}
        ]
    })
}

#[test]
fn a_three_hop_topology_reports_its_links_paths_rtts_and_bottlenecks() {
    let o = go(&three_hops(), None);
    let n = &o.meta["network"];
    let droptail = json!({"kind": "droptail", "packets": 10000, "bytes": null});
    assert_eq!(
        n["links"]["a:h1->r1"],
        json!({"from": "h1", "to": "r1", "rate_bps": 100_000_000, "model": "fixed_rate", "overhead_bytes": 7,
               "mtu_bytes": 1500, "delay_s": 0.001, "queue": droptail})
    );
    assert_eq!(n["links"]["a:r1->h1"]["rate_bps"], 50_000_000);
    assert_eq!(n["links"]["b:r1->r2"]["queue"], json!({"kind": "red", "packets": 50, "bytes": 60000}));
    assert_eq!(n["links"]["b:r2->r1"]["queue"], json!({"kind": "codel", "packets": 200, "bytes": null}));
    assert_eq!(
        (n["links"]["b:r2->r1"]["mtu_bytes"].as_u64(), n["links"]["b:r2->r1"]["delay_s"].as_f64()),
        (Some(1400), Some(0.01))
    );
    assert_eq!(n["links"]["c:h2->r2"]["overhead_bytes"], 18);
    assert_eq!(n["links"].as_object().unwrap().len(), 6);

    assert_eq!(n["flows"], json!({"up": "h1->h2", "down": "h2->h1"}));
    let up = &n["routes"]["h1->h2"];
    assert_eq!(up["forward"], json!(["a:h1->r1", "b:r1->r2", "c:r2->h2"]));
    assert_eq!(up["reverse"], json!(["c:h2->r2", "b:r2->r1", "a:r1->h1"]));
    assert_eq!(up["path_mtu_bytes"], 1400);
    assert_eq!(up["bottleneck"], "b:r1->r2");
    // 1 + 10 + 2 ms each way; one 1400 B packet forward: 1407 B at 100 and 20 Mbit/s
    // (112.56 + 562.8 us), 1418 B at 40 Mbit/s (283.6 us).
    assert_eq!(up["propagation_rtt_s"], 0.026);
    assert_eq!(up["base_rtt_s"].as_f64(), Some(s(26_000_000_000 + 112_560_000 + 562_800_000 + 283_600_000)));
    // Back: 1418 B at 5 Mbit/s (2268.8 us), 1407 B at 45 Mbit/s (250.1333.. us, rounded up to
    // the picosecond as the link rounds) and 50 Mbit/s (225.12 us).
    let down = &n["routes"][n["flows"]["down"].as_str().unwrap()];
    assert_eq!(down["bottleneck"], "c:h2->r2");
    assert_eq!(
        down["base_rtt_s"].as_f64(),
        Some(s(26_000_000_000 + 2_268_800_000 + 250_133_334 + 225_120_000))
    );
    assert_eq!(
        n["bottlenecks"],
        json!([{"link": "b:r1->r2", "rate_bps": 20_000_000, "flows": ["up"]},
               {"link": "c:h2->r2", "rate_bps": 5_000_000, "flows": ["down"]}])
    );
}

#[test]
fn a_trace_link_reports_the_traces_mean_rate_rounded_as_the_core_uses_it() {
    // 4 opportunities of 1500 B per 7 ms: 48 Mbit per 7 s = 6857142.857.. bit/s, rounded to
    // 6857143 (what utilization divides by).
    let file = format!("{}/facts-trace.mm", env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(&file, "1\n1\n3\n7\n").unwrap();
    let sc = json!({
        "run": {"duration": "100ms"},
        "dumbbell": {"pairs": 1, "bottleneck": {"model": {"kind": "trace", "file": file}, "delay": "10ms"},
                     "access": {"rate": "1Gbps", "delay": "1ms"}},
        "flows": [{"name": "f", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "100B", "interval": "10ms"}]
    });
    let o = go(&sc, None);
    let n = &o.meta["network"];
    let bn = &n["links"]["bottleneck:router1->router2"];
    assert_eq!((bn["model"].as_str(), bn["rate_bps"].as_u64()), (Some("trace"), Some(6_857_143)));
    assert_eq!(
        bn["trace"],
        json!({"mean_rate_bps": 6_857_143, "period_s": 0.007, "opportunities": 4, "opportunity_bytes": 1500})
    );
    assert_eq!(n["links"]["access1:sender1->router1"]["model"], "fixed_rate");
    assert!(n["links"]["access1:sender1->router1"].get("trace").is_none());
    let f = &n["routes"][n["flows"]["f"].as_str().unwrap()];
    assert_eq!(
        f["forward"],
        json!(["access1:sender1->router1", "bottleneck:router1->router2", "egress1:router2->receiver1"])
    );
    assert_eq!(f["bottleneck"], "bottleneck:router1->router2");
    // 2 x 12 ms; 1507 B at 1 Gbit/s twice (12.056 us each) and at the mean rate
    // (12056 bits / 6857143 bit/s = 1758.166630.. us, rounded up to the picosecond).
    assert_eq!(f["base_rtt_s"].as_f64(), Some(s(24_000_000_000 + 2 * 12_056_000 + 1_758_166_631)));
    assert_eq!(
        n["bottlenecks"],
        json!([{"link": "bottleneck:router1->router2", "rate_bps": 6_857_143, "flows": ["f"]}])
    );
    // The summary's utilization divides by the same rate.
    let l = &o.totals["links"]["bottleneck:router1->router2"];
    let util = l["bytes"].as_f64().unwrap() * 8.0 / (6_857_143.0 * 0.1);
    assert_eq!(l["utilization"].as_f64(), Some(util));
}

/// A FIFO without limits, registered at run time.
struct Plain<P>(Fifo<P>);

impl<P> Qdisc<P> for Plain<P> {
    fn enqueue(&mut self, _cx: &mut QdiscCtx<'_, P>, p: Queued<P>) -> Verdict<P> {
        self.0.push(p.pkt);
        Verdict::Queued
    }
    fn dequeue(&mut self, _cx: &mut QdiscCtx<'_, P>) -> Option<Packet<P>> {
        self.0.pop()
    }
    fn len_packets(&self) -> usize {
        self.0.packets()
    }
    fn len_bytes(&self) -> u64 {
        self.0.bytes()
    }
}

#[test]
fn a_queue_discipline_registered_at_run_time_has_no_kind_or_limits_to_report() {
    let mut sc = base();
    sc["dumbbell"]["bottleneck"]["queue"] = json!({"kind": "plain"});
    let plugins = qdisc_plugins("plain", |_: &serde_json::Value| Ok(Plain(Fifo::default())));
    let o = run_plugins(&sc, &plugins).expect("runs");
    let links = &o.meta["network"]["links"];
    assert_eq!(
        links["bottleneck:router1->router2"]["queue"],
        json!({"kind": null, "packets": null, "bytes": null})
    );
    // The access links keep the default discipline.
    assert_eq!(links["access1:sender1->router1"]["queue"]["kind"], "droptail");
}
