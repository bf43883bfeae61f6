//! Loss and link models in whole scenarios (issue 16): trace-driven links deliver exactly their
//! trace's opportunities, drop lists drop exactly the listed packets (UDP, and TCP retransmits
//! exactly those), Gilbert-Elliott loss draws the link's loss stream frame by frame; and the
//! errors of bad link-model settings.

use super::*;
use quicksim_engine::RngStreams;
use quicksim_net::GilbertElliott;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};

/// A bundled trace (python/quicksim/scenarios/traces, made by scripts/make_traces.py).
fn bundled(name: &str) -> String {
    format!("{}/../../python/quicksim/scenarios/traces/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn trace_ms(name: &str) -> Vec<u64> {
    std::fs::read_to_string(bundled(name)).unwrap().lines().map(|l| l.trim().parse().unwrap()).collect()
}

/// Opportunity times (ms) of a repeating trace up to `end_ms` (exclusive).
fn opportunities(ms: &[u64], end_ms: u64) -> Vec<u64> {
    let period = *ms.last().unwrap();
    (0..)
        .map(|k| k * period)
        .take_while(|&b| b < end_ms)
        .flat_map(|b| ms.iter().map(move |&t| b + t))
        .filter(|&t| t < end_ms)
        .collect()
}

/// One UDP flow of `payload` bytes at 30 Mbit/s (more than the trace's 20 Mbit/s peak) into a
/// bottleneck driven by `trace` without propagation delay, links recorded per 100 ms.
fn saturated_trace(trace: &str, payload: u64, overhead: &str, duration: &str) -> serde_json::Value {
    json!({
        "run": {"duration": duration, "record_interval": "100ms", "record": {"links": ["bottleneck"]}},
        "dumbbell": {"pairs": 1,
                     "bottleneck": {"model": {"kind": "trace", "file": bundled(trace)}, "overhead": overhead,
                                    "queue": {"packets": 1000}},
                     "access": {"rate": "1Gbps"}},
        "flows": [{"name": "u", "kind": "udp", "src": "sender1", "dst": "receiver1",
                   "size": format!("{payload}B"), "rate": "30Mbps"}]
    })
}

/// Frame bytes delivered by the bottleneck's forward direction per 100 ms bin.
fn bottleneck_bins(o: &RunOutput) -> BTreeMap<u64, i64> {
    let (t, l, b) = (col_f64(o, "links", "t_s"), col_str(o, "links", "link"), col_i64(o, "links", "bytes"));
    let mut bins = BTreeMap::new();
    for i in 0..t.len() {
        if l[i] == "bottleneck:router1->router2" {
            *bins.entry((t[i] * 10.0).round() as u64).or_insert(0) += b[i];
        }
    }
    bins
}

#[test]
fn a_saturated_trace_link_delivers_exactly_its_opportunities_per_100ms() {
    // 1472 B of payload + 28 B of headers, no link overhead: every frame is one 1500 B
    // opportunity. The queue never empties (30 Mbit/s offered), so every opportunity carries one
    // frame, delivered at the opportunity's time (no propagation delay): bin k of the links
    // table holds 1500 B per opportunity in [100k, 100k + 100) ms. Two periods of the square
    // wave (20 Mbit/s for 1.5 s, 2 Mbit/s for 1.5 s) and a bit: 6.5 s.
    let o = go(&saturated_trace("square-20-2mbps.mm", 1472, "0B", "6.5s"), None);
    let bins = bottleneck_bins(&o);
    let opps = opportunities(&trace_ms("square-20-2mbps.mm"), 6500);
    for k in 0..65u64 {
        let n = opps.iter().filter(|&&t| t / 100 == k).count() as i64;
        assert_eq!(bins.get(&k).copied().unwrap_or(0), n * 1500, "bin {k} ({} ms)", k * 100);
    }
    // 166 or 167 opportunities per 100 ms at 20 Mbit/s (5/3 per ms), 16 or 17 at 2 Mbit/s.
    assert_eq!((bins[&3], bins[&20]), (167 * 1500, 16 * 1500));
    // Utilization is against the trace's mean rate, 2750 x 1500 B per 3 s = 11 Mbit/s (above 1:
    // the last 0.5 s are at 20 Mbit/s).
    let util = o.totals["links"]["bottleneck:router1->router2"]["utilization"].as_f64().unwrap();
    let expect = opps.len() as f64 * 1500.0 * 8.0 / (11e6 * 6.5);
    assert!((util - expect).abs() < 1e-12, "utilization {util}, expected {expect}");
}

#[test]
fn small_frames_share_opportunities_and_spill_into_the_next() {
    // 507 B frames (472 + 28 + 7 of PPP): an opportunity carries two and 486 B of a third, whose
    // other 21 B go in the next. Saturated, no byte is wasted: the frame bytes delivered by the
    // end of each bin are the opportunities' bytes up to then, less the part of a frame not yet
    // complete (0 to 506 B).
    let o = go(&saturated_trace("cellular-walk.mm", 472, "7B", "3s"), None);
    let bins = bottleneck_bins(&o);
    let opps = opportunities(&trace_ms("cellular-walk.mm"), 3000);
    let (mut delivered, mut capacity) = (0i64, 0i64);
    for k in 0..30u64 {
        delivered += bins.get(&k).copied().unwrap_or(0);
        capacity += 1500 * opps.iter().filter(|&&t| t / 100 == k).count() as i64;
        assert!(
            (0..507).contains(&(capacity - delivered)),
            "by {} ms: {delivered} of {capacity}",
            (k + 1) * 100
        );
    }
}

/// (send uids, received uids) of `flow` in the packet trace.
fn sent_and_received(o: &RunOutput, flow: &str, src: &str, dst: &str) -> (Vec<i64>, BTreeSet<i64>) {
    let (f, n, u, e) = (
        col_str(o, "packets", "flow"),
        col_str(o, "packets", "node"),
        col_i64(o, "packets", "uid"),
        col_str(o, "packets", "event"),
    );
    let mut sent = Vec::new();
    let mut recv = BTreeSet::new();
    for i in 0..f.len() {
        if f[i] == flow && n[i] == src && e[i] == "send" {
            sent.push(u[i]);
        }
        if f[i] == flow && n[i] == dst && e[i] == "recv" {
            recv.insert(u[i]);
        }
    }
    (sent, recv)
}

#[test]
fn drop_lists_drop_exactly_the_listed_packets() {
    // Flows a (from 0 ms) and b (from 5 ms) every 10 ms: the bottleneck sees a0 b0 a1 b1 ...
    // a's list drops a's packets 0, 3, 4 and 99 (0-based, a's own count); the list of every
    // packet drops its 11th (0-based), which is b5 (a packet of a dropped by a's list still
    // counts: each list counts what the link would deliver).
    let flow = |name: &str, start: &str, src: &str| json!({"name": name, "kind": "udp", "src": src, "dst": "receiver1", "size": "100B", "interval": "10ms", "start": start});
    let sc = json!({
        "run": {"duration": "0.999s", "record": {"packets": ["a", "b"]}},
        "nodes": {"s1": {"kind": "host"}, "s2": {"kind": "host"}, "r": {"kind": "router"}, "receiver1": {"kind": "host"}},
        "links": [
            {"name": "a1", "a": "s1", "b": "r", "rate": "1Gbps"},
            {"name": "a2", "a": "s2", "b": "r", "rate": "1Gbps"},
            {"name": "bn", "a": "r", "b": "receiver1", "rate": "10Mbps", "delay": "1ms",
             "forward": {"drop": [{"flow": "a", "packets": [99, 4, 3, 0]}, {"packets": [11]}]}}
        ],
        "flows": [flow("a", "0s", "s1"), flow("b", "5ms", "s2")]
    });
    let o = go(&sc, None);
    for (name, src, listed) in [("a", "s1", vec![0, 3, 4, 99]), ("b", "s2", vec![5])] {
        let (sent, recv) = sent_and_received(&o, name, src, "receiver1");
        assert_eq!(sent.len(), 100, "{name}");
        let lost: Vec<usize> = (0..sent.len()).filter(|&i| !recv.contains(&sent[i])).collect();
        assert_eq!(lost, listed, "{name}");
    }
    let reasons = col_str(&o, "drops", "reason");
    assert_eq!(reasons.len(), 5);
    assert!(reasons.iter().all(|r| r == "listed"), "{reasons:?}");
}

#[test]
fn a_tcp_flow_retransmits_exactly_the_listed_segments() {
    // 300 kB over a 10 Mbit/s, 10 ms path with room for every packet (no overflow): the
    // bottleneck's forward direction carries only the flow's packets, in the order it sends them
    // (SYN = 0, the handshake's ACK = 1, data from 2). Dropping its packets 30, 31 and 120 loses
    // exactly the 31st, 32nd and 121st packets the sender put on the wire, and TCP retransmits
    // three segments, each once, and delivers everything.
    let sc = json!({
        "run": {"duration": "10s", "record": {"packets": ["t"]}},
        "dumbbell": {"pairs": 1,
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"packets": 1000},
                                    "forward": {"drop": [{"flow": "t", "packets": [30, 31, 120]}]}},
                     "access": {"rate": "1Gbps", "delay": "1ms"}},
        "flows": [{"name": "t", "kind": "tcp", "src": "sender1", "dst": "receiver1", "app": "bulk", "bytes": "300kB"}]
    });
    let o = go(&sc, None);
    let (sent, recv) = sent_and_received(&o, "t", "sender1", "receiver1");
    let lost: Vec<usize> = (0..sent.len()).filter(|&i| !recv.contains(&sent[i])).collect();
    assert_eq!(lost, vec![30, 31, 120]);
    let t = &o.totals["flows"]["t"];
    assert_eq!(t["delivered_bytes"].as_u64(), Some(300_000));
    assert_eq!(t["tcp"]["retransmitted_segments"].as_u64(), Some(3), "{}", t["tcp"]);
    assert_eq!(t["tcp"]["rtos"].as_u64(), Some(0), "{}", t["tcp"]);
    let reasons = col_str(&o, "drops", "reason");
    assert_eq!(reasons, &["listed", "listed", "listed"]);
}

#[test]
fn gilbert_elliott_loss_draws_the_links_loss_stream_frame_by_frame() {
    // 20 000 datagrams through a bottleneck with Gilbert-Elliott loss: exactly the frames the
    // model loses, drawing from the stream ("link", 0) of the run's seed (channel 0 is the
    // bottleneck's forward direction), are the ones missing at the receiver.
    let ge = GilbertElliott { p: 0.05, r: 0.25, loss_good: 0.01, loss_bad: 0.8 };
    let sc = json!({
        "run": {"duration": "2.01s", "seed": 7, "record": {"packets": ["u"]}},
        "dumbbell": {"pairs": 1,
                     "bottleneck": {"rate": "100Mbps", "loss": {"kind": "gilbert_elliott", "p": 0.05, "r": 0.25, "loss_good": 0.01, "loss_bad": 0.8}},
                     "access": {"rate": "1Gbps"}},
        "flows": [{"name": "u", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "100B", "interval": "100us"}]
    });
    let o = go(&sc, None);
    // The first 20 000 (sent by 2 s; the last ones may still be on their way at the end).
    let (sent, recv) = sent_and_received(&o, "u", "sender1", "receiver1");
    let sent = &sent[..20_000];
    let mut rng = RngStreams::new(7).stream("link", 0);
    let mut bad = false;
    let expect: Vec<usize> = (0..sent.len()).filter(|_| ge.lost(&mut bad, &mut rng)).collect();
    let lost: Vec<usize> = (0..sent.len()).filter(|&i| !recv.contains(&sent[i])).collect();
    assert_eq!(lost, expect);
    // netem's spelling is accepted, with netem's defaults (loss_good 0, loss_bad 1).
    let mut sc = sc.clone();
    sc["dumbbell"]["bottleneck"]["loss"] = json!({"kind": "gemodel", "p": 0.05, "r": 0.25});
    let (sent, recv) = sent_and_received(&go(&sc, None), "u", "sender1", "receiver1");
    let sent = &sent[..20_000];
    let ge = GilbertElliott { p: 0.05, r: 0.25, loss_good: 0.0, loss_bad: 1.0 };
    let (mut rng, mut bad) = (RngStreams::new(7).stream("link", 0), false);
    let expect: Vec<usize> = (0..sent.len()).filter(|_| ge.lost(&mut bad, &mut rng)).collect();
    assert_eq!((0..sent.len()).filter(|&i| !recv.contains(&sent[i])).collect::<Vec<_>>(), expect);
}

#[test]
fn bad_link_model_settings_are_refused_naming_the_field() {
    let with = |bn: serde_json::Value| {
        let mut sc = base();
        sc["dumbbell"]["bottleneck"] = bn;
        err_of(sc)
    };
    let tr = |f: &str| json!({"kind": "trace", "file": f});
    let e = with(json!({"rate": "10Mbps", "model": tr(&bundled("constant-12mbps.mm"))}));
    assert!(e.starts_with("dumbbell.bottleneck.rate: does not apply to a trace-driven link"), "{e}");
    let e = with(
        json!({"model": tr(&bundled("constant-12mbps.mm")), "spikes": {"period": "1s", "duration": "1ms", "fraction": 0.5}}),
    );
    assert!(e.starts_with("dumbbell.bottleneck.spikes: does not apply"), "{e}");
    let e = with(json!({"model": tr("/nonexistent/x.mm")}));
    assert!(
        e.starts_with("dumbbell.bottleneck.model.file: \"/nonexistent/x.mm\": cannot read the trace"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("quicksim-links-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.mm");
    std::fs::write(&bad, "1\n2\n2\nx3\n").unwrap();
    let e = with(json!({"model": tr(bad.to_str().unwrap())}));
    assert!(e.contains("bad.mm\": line 4: \"x3\" is not a time in whole milliseconds"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    std::fs::write(&bad, "3\n2\n").unwrap();
    let e = with(json!({"model": tr(bad.to_str().unwrap())}));
    assert!(e.contains("line 2: 2 ms is before the line above (3 ms)"), "{e}");
    let e = with(json!({"model": tr(dir.to_str().unwrap())}));
    assert!(e.ends_with("is not a file"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
    let e =
        with(json!({"model": {"kind": "trace", "file": bundled("constant-12mbps.mm"), "opportunity": "0B"}}));
    assert!(e.starts_with("dumbbell.bottleneck.model.opportunity: 0 B"), "{e}");
    let e = with(json!({"model": {"kind": "wavy"}}));
    assert!(e.starts_with("dumbbell.bottleneck.model"), "{e}");
    // A direction's own trace leaves the link's rate to the other direction.
    let mut sc = base();
    sc["dumbbell"]["bottleneck"]["forward"] = json!({"model": tr(&bundled("constant-12mbps.mm"))});
    let o = go(&sc, None);
    // Utilization is against the trace's mean rate, 12 Mbit/s.
    let l = &o.totals["links"]["bottleneck:router1->router2"];
    let bytes = l["bytes"].as_f64().unwrap();
    assert!(bytes > 0.0);
    assert!((l["utilization"].as_f64().unwrap() - bytes * 8.0 / 12e6).abs() < 1e-12, "{l}");

    let e = with(json!({"rate": "1Mbps", "loss": {"kind": "gilbert_elliott", "p": 0.1, "r": 1.5}}));
    assert_eq!(e, "dumbbell.bottleneck.loss.r: 1.5 is not a probability in [0, 1]");
    let e = with(json!({"rate": "1Mbps", "loss": {"kind": "gilbert_elliott", "p": 0.1}}));
    assert!(e.starts_with("dumbbell.bottleneck.loss: missing field `r`"), "{e}");
    let e = with(json!({"rate": "1Mbps", "drop": [{"flow": "nobody", "packets": [1]}]}));
    assert_eq!(e, "dumbbell.bottleneck.drop[0].flow: \"nobody\" is not a flow");
    let e = with(json!({"rate": "1Mbps", "reverse": {"drop": [{"packets": [1, 2, 1]}]}}));
    assert_eq!(e, "dumbbell.bottleneck.reverse.drop[0].packets: 1 is listed twice");
}

/// UDP flows both ways over a trace-driven bottleneck with a drop list forward and
/// Gilbert-Elliott loss backward: every new path of the channel at once. UDP only, so that
/// QUIC's own changes do not move its pins (`pins.txt`, `link_models`).
pub(crate) fn everything() -> serde_json::Value {
    json!({
        "run": {"duration": "2s", "seed": 5},
        "dumbbell": {"pairs": 2,
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"packets": 100},
                                    "forward": {"model": {"kind": "trace", "file": bundled("cellular-walk.mm"), "opportunity": "1504B"},
                                                "drop": [{"flow": "u", "packets": [40, 41]}, {"packets": [100]}]},
                                    "reverse": {"loss": {"kind": "gilbert_elliott", "p": 0.02, "r": 0.5, "loss_bad": 0.5}}}},
        "flows": [{"name": "u", "kind": "udp", "src": "sender1", "dst": "receiver1", "size": "1200B", "rate": "12Mbps"},
                  {"name": "r", "kind": "udp", "src": "sender2", "dst": "receiver2",
                   "size": {"dist": "uniform", "min": "100B", "max": "1400B"}, "interval": {"dist": "exponential", "mean": "2ms"}},
                  {"name": "back", "kind": "udp", "src": "receiver1", "dst": "sender1", "size": "200B", "rate": "2Mbps"}]
    })
}

#[test]
fn the_new_models_are_deterministic_and_survive_normalization() {
    let a = go(&everything(), None);
    let b = go(&everything(), None);
    let hash = |o: &RunOutput| o.meta["trace_hash"].as_str().unwrap().to_string();
    assert_eq!(hash(&a), hash(&b));
    // The normalized scenario (what scenario.json holds) runs the same.
    let sc = quicksim_scenario::format::parse(&everything().to_string()).unwrap();
    let norm = quicksim_scenario::normalize::normalized(&sc).unwrap();
    assert_eq!(norm["dumbbell"]["bottleneck"]["forward"]["model"]["opportunity"], "1504B");
    assert_eq!(hash(&go(&norm, None)), hash(&a));
    // Every new path ran: listed drops (3) forward, Gilbert-Elliott losses backward, and the
    // trace's queue overflowed (12 Mbit/s and more into a ~9 Mbit/s trace).
    let reasons = col_str(&a, "drops", "reason");
    assert_eq!(reasons.iter().filter(|r| *r == "listed").count(), 3);
    assert!(reasons.iter().any(|r| r == "loss") && reasons.iter().any(|r| r == "overflow"));
}

/// Overlapping `down` periods keep the link down over their union: a 2 Mbit/s CBR flow through
/// a link down over [1 s, 1.5 s] and [0.5 s, 1.2 s] gets nothing from 0.5 s to 1.5 s (the audit
/// found it carrying traffic from 1.2 to 1.5 s), and its loss is exactly that second of sends.
#[test]
fn overlapping_down_periods_keep_the_link_down_over_their_union() {
    let sc = json!({
        "run": {"duration": "3s", "record_interval": "100ms"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "1ms",
            "down": [{"from": "1s", "to": "1.5s"}, {"from": "0.5s", "to": "1.2s"}]}},
        "flows": [{"name": "cbr", "kind": "udp", "src": "sender1", "dst": "receiver1",
                   "size": "1000B", "interval": "10ms"}],
    });
    let o = go(&sc, None);
    let f = &o.totals["flows"]["cbr"];
    let (sent, deliv) = (f["packets_sent"].as_u64().unwrap(), f["packets_delivered"].as_u64().unwrap());
    // 300 sends at 0, 10, ..., 2990 ms; those reaching the link in [0.5 s, 1.5 s) are lost: 100
    // (the access link adds 8 us, the send at exactly 0.5 s arrives after the link went down, the
    // one at 1.5 s after it came up).
    assert_eq!(sent, 300);
    let held = o.meta["packets_in_network_at_end"].as_u64().unwrap();
    assert_eq!(sent - deliv - held, 100, "{f}");
}
