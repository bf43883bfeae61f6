//! Hosts with several interfaces (each its own address and links) and multipath QUIC over them.

use super::{err_of, go};
use serde_json::{json, Value};

/// A client with interfaces `wifi` and `lte`, each on its own access link to its own router,
/// both routers joined to the server's router: two disjoint paths (docs/multipath.md).
pub fn two_paths(rate: &str, d1: &str, d2: &str) -> Value {
    json!({
        "run": {"duration": "2s"},
        "nodes": {
            "client": {"kind": "host", "interfaces": ["wifi", "lte"]},
            "server": {"kind": "host"},
            "r1": {"kind": "router"}, "r2": {"kind": "router"}, "rs": {"kind": "router"}
        },
        "links": [
            {"name": "wifi", "a": "client.wifi", "b": "r1", "rate": rate, "delay": d1},
            {"name": "lte", "a": "client.lte", "b": "r2", "rate": rate, "delay": d2},
            {"name": "core1", "a": "r1", "b": "rs", "rate": "1Gbps"},
            {"name": "core2", "a": "r2", "b": "rs", "rate": "1Gbps"},
            {"name": "srv", "a": "rs", "b": "server", "rate": "1Gbps"}
        ],
        "flows": []
    })
}

fn udp(name: &str, src: &str) -> Value {
    json!({"name": name, "kind": "udp", "src": src, "dst": "server", "size": "1000B", "interval": "10ms"})
}

#[test]
fn each_interface_sends_on_its_own_link_and_the_host_name_is_the_first() {
    let mut sc = two_paths("10Mbps", "10ms", "30ms");
    sc["flows"] = json!([udp("a", "client.wifi"), udp("b", "client.lte"), udp("c", "client")]);
    let o = go(&sc, None);
    let links = &o.totals["links"];
    let pk = |k: &str| links[k]["packets"].as_u64().unwrap();
    // One datagram per 10 ms and flow, counted where it arrives before the end (2 s): a
    // datagram crosses wifi in 0.8056 + 10 ms (199 of a's and of c's, the host's name standing
    // for its first interface) and lte in 30.8 ms (197 of b's). Each flow uses its own access
    // link only: the two core links carry exactly what their access links delivered.
    assert_eq!(pk("wifi:client.wifi->r1"), 2 * 199);
    assert_eq!(pk("lte:client.lte->r2"), 197);
    assert_eq!(pk("core1:r1->rs"), 2 * 199);
    assert_eq!(pk("core2:r2->rs"), 197);
}

#[test]
fn interface_errors_name_the_field_and_the_value() {
    let mut sc = two_paths("10Mbps", "10ms", "30ms");
    sc["links"][0]["a"] = json!("client");
    assert_eq!(
        err_of(sc),
        "links[0].a: \"client\" is a host with several interfaces: name one (client.wifi, client.lte)"
    );
    let mut sc = two_paths("10Mbps", "10ms", "30ms");
    sc["links"][1]["a"] = json!("client.5g");
    assert_eq!(
        err_of(sc),
        "links[1].a: \"client.5g\" is not an interface of \"client\"; its interfaces are client.wifi, client.lte"
    );
    let mut sc = two_paths("10Mbps", "10ms", "30ms");
    sc["nodes"]["client"]["interfaces"] = json!(["wifi", "lte", "wifi"]);
    assert_eq!(err_of(sc), "nodes.client.interfaces[2]: \"wifi\" is listed twice");
    let mut sc = two_paths("10Mbps", "10ms", "30ms");
    sc["nodes"]["r1"]["interfaces"] = json!(["a"]);
    assert_eq!(
        err_of(sc),
        "nodes.r1.interfaces: a router forwards between all its links: only a host has interfaces"
    );
    let mut sc = two_paths("10Mbps", "10ms", "30ms");
    sc["nodes"]["client"]["interfaces"] = json!(["wi.fi"]);
    assert_eq!(
        err_of(sc),
        "nodes.client.interfaces[0]: \"wi.fi\" is not an interface name (no dots, no spaces)"
    );
}

#[test]
fn a_link_down_stops_only_its_interface() {
    let mut sc = two_paths("10Mbps", "10ms", "30ms");
    sc["links"][0]["down"] = json!([{"from": "1s", "to": "3s"}]);
    sc["flows"] = json!([udp("a", "client.wifi"), udp("b", "client.lte")]);
    let o = go(&sc, None);
    let d = |f: &str| o.totals["flows"][f]["delivered_bytes"].as_u64().unwrap_or(0);
    let b = |f: &str| o.totals["flows"][f].clone();
    assert!(d("a") < d("b"), "{} {}", b("a"), b("b"));
}

/// A bulk QUIC flow from the client to the server over both interfaces (path 0 on wifi,
/// path 1 on lte), with `mp` as the `multipath` table over `{ paths = [{ src = "client.lte" }] }`.
fn mp_bulk(secs: u64, d1: &str, d2: &str, mp: Value) -> Value {
    let mut sc = two_paths("10Mbps", d1, d2);
    sc["run"]["duration"] = json!(format!("{secs}s"));
    sc["links"][0]["queue"] = json!({"packets": 50});
    sc["links"][1]["queue"] = json!({"packets": 50});
    let mut m = json!({"paths": [{"src": "client.lte"}]});
    for (k, v) in mp.as_object().unwrap() {
        m[k] = v.clone();
    }
    sc["flows"] = json!([{"name": "q", "kind": "quic", "src": "client", "dst": "server",
                          "quic": {"multipath": m}}]);
    sc
}

#[test]
fn two_paths_aggregate_their_rates() {
    let o = go(&mp_bulk(10, "10ms", "25ms", json!({})), None);
    let g = super::goodput_bps(&o, "q", 3.0, 10.0);
    let links = &o.totals["links"];
    let b = |k: &str| links[k]["bytes"].as_u64().unwrap();
    eprintln!("goodput {g} wifi {} lte {}", b("wifi:client.wifi->r1"), b("lte:client.lte->r2"));
    eprintln!("{}", o.totals["flows"]["q"]);
    assert!(g > 0.95 * 20e6, "goodput {g}");
}
