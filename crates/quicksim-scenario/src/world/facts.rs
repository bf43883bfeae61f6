//! What the built network is (`meta.network` of a run): each link direction's settings, each
//! flow's path both ways with its base RTT and bottleneck, and the run's bottlenecks, read from
//! the network as built, so that nothing downstream parses the scenario again for them.
//!
//! Definitions (docs/links.md, "What a run says about its network"):
//! - a direction's `rate_bps` is the rate it was built with (a trace-driven one: the trace's
//!   mean, `Trace::mean_rate`); `schedule` and `spikes` steps change it during the run;
//! - a route (`"src->dst"`, each flow's in `flows`) has the `forward` path, the directions data
//!   crosses from `src` to `dst` by the network's static routes, and `reverse`, those back (ACKs);
//! - `propagation_rtt_s` is the sum of the propagation delays of both paths; `base_rtt_s` adds
//!   the serialization of one path-MTU packet (plus each hop's overhead) at each forward hop at
//!   its `rate_bps`; no ACK serialization (its size is the transport's), no jitter, no queueing;
//! - a flow's bottleneck is the direction of its forward path with the lowest `rate_bps`; among
//!   equal rates, the one on the most flows' forward paths (where their traffic adds up), then
//!   one between two routers over one with a host at an end, then the first along the path
//!   (where a single flow's queue builds). The router rule is a convention for equal rates: a
//!   dumbbell's flows between its pairs get `bottleneck:router1->router2` unless an access link
//!   is slower, also with one pair and access links as fast as the bottleneck.

use quicksim_engine::SimDuration;
use quicksim_net::model::LinkModelConfig;
use quicksim_net::{ChanId, Network, NodeId, NodeKind};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// A flow as the facts need it: its name and end hosts.
pub(crate) struct FlowEnds<'a> {
    pub name: &'a str,
    pub src: NodeId,
    pub dst: NodeId,
}

/// `meta.network`: `links` (per direction, by channel name), `routes` (per "src->dst" pair of
/// hosts that a flow joins: paths, RTTs, bottleneck), `flows` (each flow's route) and
/// `bottlenecks` (each distinct flow bottleneck with its flows, in flow order). Routes are
/// shared: 10,000 flows over 100 host pairs are 100 routes, not 10,000 copies of their paths.
pub(crate) fn network<P>(net: &Network<P>, flows: &[FlowEnds]) -> Value {
    let mut links = Map::new();
    for (i, c) in net.chans.iter().enumerate() {
        links.insert(net.chan_names[i].clone(), link(net, i));
        debug_assert_eq!(c.id.0 as usize, i);
    }
    // Each distinct (src, dst) pair's paths once, in the order flows first use them.
    let mut index: BTreeMap<(NodeId, NodeId), usize> = BTreeMap::new();
    let mut routes: Vec<(NodeId, NodeId, Vec<ChanId>, Vec<ChanId>)> = Vec::new();
    let of_flow: Vec<usize> = flows
        .iter()
        .map(|f| {
            *index.entry((f.src, f.dst)).or_insert_with(|| {
                routes.push((f.src, f.dst, net.path(f.src, f.dst), net.path(f.dst, f.src)));
                routes.len() - 1
            })
        })
        .collect();
    // How many flows' data crosses each direction (the first tie-break of the bottleneck).
    let mut crossing = vec![0u64; net.chans.len()];
    for &r in &of_flow {
        for c in &routes[r].2 {
            crossing[c.0 as usize] += 1;
        }
    }
    let bns: Vec<Option<ChanId>> = routes.iter().map(|r| bottleneck(net, &r.2, &crossing)).collect();
    let route_name = |r: usize| format!("{}->{}", net.node_name(routes[r].0), net.node_name(routes[r].1));
    let mut per_route = Map::new();
    for (r, (_, _, fwd, rev)) in routes.iter().enumerate() {
        per_route.insert(route_name(r), route(net, fwd, rev, bns[r]));
    }
    let mut per_flow = Map::new();
    // Each bottleneck's slot in `bottlenecks`, by channel.
    let mut slot: Vec<Option<usize>> = vec![None; net.chans.len()];
    let mut bottlenecks: Vec<(ChanId, Vec<&str>)> = Vec::new();
    for (f, &r) in flows.iter().zip(&of_flow) {
        per_flow.insert(f.name.to_string(), Value::String(route_name(r)));
        let Some(b) = bns[r] else { continue };
        match slot[b.0 as usize] {
            Some(k) => bottlenecks[k].1.push(f.name),
            None => {
                slot[b.0 as usize] = Some(bottlenecks.len());
                bottlenecks.push((b, vec![f.name]));
            }
        }
    }
    let bottlenecks: Vec<Value> = bottlenecks
        .into_iter()
        .map(|(c, names)| {
            json!({
                "link": net.chan_names[c.0 as usize],
                "rate_bps": net.chans[c.0 as usize].cfg.rate.bits_per_s,
                "flows": names,
            })
        })
        .collect();
    json!({ "links": links, "routes": per_route, "flows": per_flow, "bottlenecks": bottlenecks })
}

/// The settings of direction `i` as built.
fn link<P>(net: &Network<P>, i: usize) -> Value {
    let c = &net.chans[i];
    let cfg = &c.cfg;
    let queue = match c.builtin_qdisc() {
        Some(q) => {
            let (packets, bytes) = q.capacity();
            json!({ "kind": q.kind(), "packets": packets, "bytes": bytes })
        }
        // A discipline registered at run time: the core keeps no name or limits of it.
        None => json!({ "kind": Value::Null, "packets": Value::Null, "bytes": Value::Null }),
    };
    let mut o = json!({
        "from": net.node_name(c.from),
        "to": net.node_name(c.to),
        "rate_bps": cfg.rate.bits_per_s,
        "model": "fixed_rate",
        "overhead_bytes": cfg.overhead,
        "mtu_bytes": cfg.mtu,
        "delay_s": cfg.delay.as_secs_f64(),
        "queue": queue,
    });
    if let Some(LinkModelConfig::Trace(t)) = &cfg.model {
        o["model"] = json!("trace");
        o["trace"] = json!({
            "mean_rate_bps": t.mean_rate().bits_per_s,
            "period_s": t.period_ms() as f64 / 1e3,
            "opportunities": t.ms.len(),
            "opportunity_bytes": t.opportunity_bytes,
        });
    }
    o
}

/// The bottleneck of a forward path (module doc); None for an empty path.
fn bottleneck<P>(net: &Network<P>, fwd: &[ChanId], crossing: &[u64]) -> Option<ChanId> {
    fwd.iter()
        .enumerate()
        .min_by_key(|&(pos, c)| {
            let ch = &net.chans[c.0 as usize];
            let host_end = [ch.from, ch.to].iter().any(|n| net.kinds[n.0 as usize] == NodeKind::Host);
            (ch.cfg.rate.bits_per_s, std::cmp::Reverse(crossing[c.0 as usize]), host_end, pos)
        })
        .map(|(_, c)| *c)
}

/// One route's facts (module doc).
fn route<P>(net: &Network<P>, fwd: &[ChanId], rev: &[ChanId], bn: Option<ChanId>) -> Value {
    let name = |c: &ChanId| net.chan_names[c.0 as usize].clone();
    let cfg = |c: &ChanId| &net.chans[c.0 as usize].cfg;
    let mtu = fwd.iter().map(|c| cfg(c).mtu).min();
    let propagation: u64 = fwd.iter().chain(rev).map(|c| cfg(c).delay.0).sum();
    let serialization: u64 = fwd
        .iter()
        .map(|c| {
            let frame = mtu.unwrap_or(0) as u64 + cfg(c).overhead as u64;
            cfg(c).rate.tx_time(frame).0
        })
        .sum();
    json!({
        "forward": fwd.iter().map(name).collect::<Vec<_>>(),
        "reverse": rev.iter().map(name).collect::<Vec<_>>(),
        "path_mtu_bytes": mtu,
        "propagation_rtt_s": SimDuration(propagation).as_secs_f64(),
        "base_rtt_s": SimDuration(propagation + serialization).as_secs_f64(),
        "bottleneck": bn.map(|c| name(&c)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_engine::{Rate, RngStreams};
    use quicksim_net::{ChannelConfig, NetworkBuilder};

    fn cfg(mbps: u64, delay_us: u64, mtu: u32) -> ChannelConfig {
        ChannelConfig::new(Rate::mbps(mbps), SimDuration::from_micros(delay_us), mtu)
    }

    /// The route of `flow` in the facts `v`.
    fn route_of<'a>(v: &'a Value, flow: &str) -> &'a Value {
        &v["routes"][v["flows"][flow].as_str().unwrap()]
    }

    fn flows<'a>(net: &Network<()>, pairs: &[(&'a str, &str, &str)]) -> Vec<FlowEnds<'a>> {
        pairs
            .iter()
            .map(|&(name, s, d)| FlowEnds { name, src: net.find(s).unwrap(), dst: net.find(d).unwrap() })
            .collect()
    }

    /// h1 - r1 - r2 - h2, three hops with different rates, delays and MTUs each way.
    fn three_hops() -> Network<()> {
        let mut b = NetworkBuilder::new();
        let h1 = b.node("h1", NodeKind::Host).unwrap();
        let r1 = b.node("r1", NodeKind::Router).unwrap();
        let r2 = b.node("r2", NodeKind::Router).unwrap();
        let h2 = b.node("h2", NodeKind::Host).unwrap();
        b.link("a", h1, r1, cfg(100, 1_000, 1500), cfg(50, 1_000, 1500)).unwrap();
        b.link("b", r1, r2, cfg(20, 10_000, 1400), cfg(45, 10_000, 1400)).unwrap();
        let mut slow_back = cfg(5, 2_000, 1500);
        slow_back.overhead = 18;
        b.link("c", r2, h2, cfg(40, 2_000, 1500), slow_back).unwrap();
        b.build(&RngStreams::new(1))
    }

    #[test]
    fn a_three_hop_path_its_rtts_and_bottleneck_by_hand() {
        let net = three_hops();
        let v = network(&net, &flows(&net, &[("up", "h1", "h2"), ("down", "h2", "h1")]));
        let up = &route_of(&v, "up");
        assert_eq!(up["forward"], json!(["a:h1->r1", "b:r1->r2", "c:r2->h2"]));
        assert_eq!(up["reverse"], json!(["c:h2->r2", "b:r2->r1", "a:r1->h1"]));
        assert_eq!(up["path_mtu_bytes"], 1400);
        // Delays 1 + 10 + 2 ms each way.
        assert_eq!(up["propagation_rtt_s"], 0.026);
        // One 1400 B packet + 7 B PPP per hop: 1407 B x 8 = 11256 bits at 100, 20 and 40 Mbit/s:
        // 112.56 + 562.8 + 281.4 us = 956.76 us.
        let base = SimDuration(26_000_000_000 + 112_560_000 + 562_800_000 + 281_400_000).as_secs_f64();
        assert_eq!(up["base_rtt_s"].as_f64().unwrap(), base);
        assert_eq!(up["bottleneck"], "b:r1->r2");
        // Back: 5 Mbit/s is the slowest (the host's own interface, 18 B of overhead): 1418 B
        // at 5 Mbit/s, then 1407 B at 45 and 50 Mbit/s = 2268.8 + 250.1333.. (rounded up to the
        // picosecond, as the link does) + 225.12 us.
        let down = &route_of(&v, "down");
        assert_eq!(down["bottleneck"], "c:h2->r2");
        let ser = 2_268_800_000 + 250_133_334 + 225_120_000;
        assert_eq!(down["base_rtt_s"].as_f64().unwrap(), SimDuration(26_000_000_000 + ser).as_secs_f64());
        assert_eq!(
            v["bottlenecks"],
            json!([
                {"link": "b:r1->r2", "rate_bps": 20_000_000, "flows": ["up"]},
                {"link": "c:h2->r2", "rate_bps": 5_000_000, "flows": ["down"]},
            ])
        );
        let c = &v["links"]["c:h2->r2"];
        assert_eq!(
            *c,
            json!({
                "from": "h2", "to": "r2", "rate_bps": 5_000_000, "model": "fixed_rate",
                "overhead_bytes": 18, "mtu_bytes": 1500, "delay_s": 0.002,
                "queue": {"kind": "droptail", "packets": u64::MAX, "bytes": null},
            })
        );
    }

    /// A dumbbell of two pairs (1 Gbit/s access links, bottleneck at `bn` Mbit/s).
    fn dumbbell(bn: u64, access: u64) -> Network<()> {
        let mut b = NetworkBuilder::new();
        let r1 = b.node("router1", NodeKind::Router).unwrap();
        let r2 = b.node("router2", NodeKind::Router).unwrap();
        b.link("bottleneck", r1, r2, cfg(bn, 10_000, 1500), cfg(bn, 10_000, 1500)).unwrap();
        for i in 1..=2 {
            let s = b.node(&format!("sender{i}"), NodeKind::Host).unwrap();
            let r = b.node(&format!("receiver{i}"), NodeKind::Host).unwrap();
            b.link(&format!("access{i}"), s, r1, cfg(access, 0, 1500), cfg(access, 0, 1500)).unwrap();
            b.link(&format!("egress{i}"), r2, r, cfg(access, 0, 1500), cfg(access, 0, 1500)).unwrap();
        }
        b.build(&RngStreams::new(1))
    }

    #[test]
    fn a_dumbbells_flows_share_its_bottleneck_also_at_equal_rates() {
        let pairs = [("f1", "sender1", "receiver1"), ("f2", "sender2", "receiver2")];
        for (bn, access) in [(10, 1000), (1000, 1000)] {
            let net = dumbbell(bn, access);
            let v = network(&net, &flows(&net, &pairs));
            assert_eq!(
                v["bottlenecks"],
                json!([{"link": "bottleneck:router1->router2", "rate_bps": bn * 1_000_000, "flows": ["f1", "f2"]}]),
                "bottleneck {bn} Mbit/s, access {access} Mbit/s"
            );
            // 20 ms of propagation; 1507 B at access, bottleneck, access rate.
            let ser = |mbps: u64| Rate::mbps(mbps).tx_time(1507).0;
            let base = SimDuration(20_000_000_000 + 2 * ser(access) + ser(bn)).as_secs_f64();
            assert_eq!(route_of(&v, "f2")["base_rtt_s"].as_f64().unwrap(), base);
        }
        // Flows between the same hosts share one route.
        let net = dumbbell(10, 1000);
        let v = network(&net, &flows(&net, &[pairs[0], pairs[1], ("f3", "sender1", "receiver1")]));
        assert_eq!(
            v["flows"],
            json!({"f1": "sender1->receiver1", "f2": "sender2->receiver2", "f3": "sender1->receiver1"})
        );
        assert_eq!(v["routes"].as_object().unwrap().len(), 2);
        assert_eq!(v["bottlenecks"][0]["flows"], json!(["f1", "f2", "f3"]));
        // One pair at equal rates: as many flows cross the access link as the bottleneck; the
        // one between routers wins.
        let net = dumbbell(1000, 1000);
        let v = network(&net, &flows(&net, &pairs[..1]));
        assert_eq!(route_of(&v, "f1")["bottleneck"], "bottleneck:router1->router2");
        // A slower access link is each flow's own bottleneck: the first of the two as slow
        // (access before egress), where a flow's queue builds.
        let net = dumbbell(100, 10);
        let v = network(&net, &flows(&net, &pairs));
        assert_eq!(route_of(&v, "f1")["bottleneck"], "access1:sender1->router1");
        assert_eq!(v["bottlenecks"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn a_flow_within_one_host_has_empty_paths() {
        let net = dumbbell(10, 1000);
        let v = network(&net, &flows(&net, &[("self", "sender1", "sender1")]));
        let f = &route_of(&v, "self");
        assert_eq!(f["forward"], json!([]));
        assert_eq!((f["bottleneck"].clone(), f["path_mtu_bytes"].clone()), (Value::Null, Value::Null));
        assert_eq!(f["base_rtt_s"], 0.0);
        assert_eq!(v["bottlenecks"], json!([]));
    }
}
