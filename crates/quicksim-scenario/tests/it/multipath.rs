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
pub fn mp_bulk(secs: u64, d1: &str, d2: &str, mp: Value) -> Value {
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

/// The longest time without a delivery to the application in [t0, t1) s, from the `flows`
/// table's bins (their width).
fn longest_stall(o: &quicksim_scenario::RunOutput, t0: f64, t1: f64) -> f64 {
    let (t, d) = (super::col_f64(o, "flows", "t_s"), super::col_i64(o, "flows", "delivered_bytes"));
    let mut last = t0;
    let mut worst: f64 = 0.0;
    for (&t, &d) in t.iter().zip(d) {
        if t >= t0 && t < t1 && d > 0 {
            worst = worst.max(t - last);
            last = t;
        }
    }
    worst.max(t1 - last)
}

/// The primary path (wifi) fails at 3 s: the data in flight on it goes again on lte after its
/// PTO, so delivery stalls for at most one PTO of wifi plus one RTT of lte. Bounds: wifi's RTT
/// is 20 ms plus at most its 50-packet queue (50 x 0.82 ms = 41 ms at 10 Mbit/s), so its PTO
/// (srtt + 4 rttvar + max_ack_delay 25 ms, RFC 9002 §6.2.1) is at most 61 + 4 x 41 + 25 =
/// 250 ms; lte's RTT at most 50 + 41 = 91 ms. Nothing is lost: the transfer completes.
#[test]
fn failover_continues_on_the_other_path_within_a_pto_and_an_rtt() {
    for (mode, bound) in [("minrtt", 0.341), ("backup", 0.341)] {
        let mut sc = mp_bulk(14, "10ms", "25ms", json!({"scheduler": mode}));
        sc["run"]["record_interval"] = json!("10ms");
        sc["links"][0]["down"] = json!([{"from": "3s", "to": "14s"}]);
        sc["flows"][0]["app"] = json!("bulk");
        sc["flows"][0]["bytes"] = json!("12MB");
        let o = go(&sc, None);
        let stall = longest_stall(&o, 3.0, 4.0);
        let f = &o.totals["flows"]["q"];
        assert!(stall <= bound, "{mode}: delivery stalled {stall} s after the failure");
        assert_eq!(f["delivered_bytes"], 12_000_000, "{mode}: {f}");
        assert!(f["completion_time_s"].as_f64().unwrap() > 4.0, "{mode}: done before the failure: {f}");
        eprintln!("{mode}: longest stall after the failure {stall:.2} s (bound {bound} s)");
    }
}

#[test]
fn a_backup_path_carries_data_only_while_the_other_fails() {
    let mut sc = mp_bulk(8, "10ms", "25ms", json!({"paths": [{"src": "client.lte", "backup": true}]}));
    sc["links"][0]["down"] = json!([{"from": "5s", "to": "8s"}]);
    sc["run"]["record_interval"] = json!("100ms");
    let o = go(&sc, None);
    let (t, l, b) = (
        super::col_f64(&o, "links", "t_s"),
        super::col_str(&o, "links", "link"),
        super::col_i64(&o, "links", "bytes"),
    );
    let lte = |t0: f64, t1: f64| -> i64 {
        (0..t.len()).filter(|&i| l[i] == "lte:client.lte->r2" && t[i] >= t0 && t[i] < t1).map(|i| b[i]).sum()
    };
    // Before the failure lte carries the validation and its ACK (under 2 kB); after it, about
    // its 10 Mbit/s (3 s at 1.25 MB/s less the failover).
    assert!(lte(0.0, 5.0) < 2_000, "lte before: {}", lte(0.0, 5.0));
    assert!(lte(5.5, 8.0) > 2_500_000, "lte after: {}", lte(5.5, 8.0));
}

#[test]
fn migration_moves_a_single_path_connection_to_the_other_interface() {
    let mut sc = mp_bulk(8, "10ms", "25ms", json!({"mode": "migrate"}));
    sc["links"][0]["down"] = json!([{"from": "5s", "to": "8s"}]);
    sc["run"]["record_interval"] = json!("10ms");
    let o = go(&sc, None);
    let links = &o.totals["links"];
    let bytes = |k: &str| links[k]["bytes"].as_u64().unwrap();
    // Single path before (all on wifi at ~10 Mbit/s), then a probe of lte after wifi's first
    // PTO, its validation (one lte round trip) and the move; the controller starts over on lte.
    let stall = longest_stall(&o, 5.0, 7.0);
    assert!(stall < 0.5, "stalled {stall} s");
    assert!(bytes("lte:client.lte->r2") > 3_000_000, "lte carried {}", bytes("lte:client.lte->r2"));
    let before = super::goodput_bps(&o, "q", 1.0, 5.0);
    let after = super::goodput_bps(&o, "q", 6.0, 8.0);
    assert!(before > 9e6 && after > 9e6, "{before} {after}");
}

#[test]
fn schedulers_spread_the_data_as_they_say() {
    let run = |sched: &str| {
        let mut sc = mp_bulk(6, "10ms", "25ms", json!({"scheduler": sched}));
        sc["flows"][0]["app"] = json!("bulk");
        sc["flows"][0]["bytes"] = json!("3MB");
        let o = go(&sc, None);
        let q = o.totals["flows"]["q"]["quic"].clone();
        assert_eq!(o.totals["flows"]["q"]["delivered_bytes"], 3_000_000, "{sched}: {q}");
        let s = |p: usize| q["paths"][p]["stream_bytes_sent"].as_f64().unwrap();
        (s(0), s(1))
    };
    // Redundant: every STREAM byte on both paths (copies of what has not been acknowledged
    // yet; the slower path's copies of data the faster one got acknowledged are skipped).
    let (a, b) = run("redundant");
    assert!(a >= 3e6 && b > 0.5 * a, "redundant: {a} {b}");
    // Backup-only: path 1 carries nothing while path 0 works.
    let (a, b) = run("backup");
    assert!(a >= 3e6 && b == 0.0, "backup: {a} {b}");
    // Round robin and minRTT: both carry a share.
    for sched in ["roundrobin", "minrtt"] {
        let (a, b) = run(sched);
        assert!(a > 0.2 * (a + b) && b > 0.2 * (a + b), "{sched}: {a} {b}");
    }
}

#[test]
fn multipath_errors_name_the_field_and_the_value() {
    let mut sc = mp_bulk(1, "10ms", "25ms", json!({"scheduler": "fastest"}));
    let e = err_of(sc.clone());
    assert!(
        e.starts_with("flows[0].quic.multipath.scheduler: \"fastest\" is not a path scheduler; use one of"),
        "{e}"
    );
    sc["flows"][0]["quic"]["multipath"] = json!({"paths": [{"src": "client.5g"}]});
    assert_eq!(
        err_of(sc.clone()),
        "flows[0].quic.multipath.paths[0].src: \"client.5g\" is not an interface of \"client\"; \
         its interfaces are client.wifi, client.lte"
    );
    // A path is its pair of addresses: path 0's pair again, or an earlier path's, is refused.
    sc["flows"][0]["quic"]["multipath"] = json!({"paths": [{"src": "client.wifi"}]});
    assert_eq!(
        err_of(sc.clone()),
        "flows[0].quic.multipath.paths[0]: \"client.wifi\" -> \"server\" is path 0 already; \
         each path needs its own pair of addresses"
    );
    sc["flows"][0]["quic"]["multipath"] = json!({"paths": [{"src": "client.lte"}, {"src": "client.lte"}]});
    assert!(err_of(sc.clone())
        .starts_with("flows[0].quic.multipath.paths[1]: \"client.lte\" -> \"server\" is path 1"));
    sc["flows"][0]["quic"]["multipath"] = json!({"paths": [{"src": "r1"}]});
    assert_eq!(
        err_of(sc.clone()),
        "flows[0].quic.multipath.paths[0].src: \"r1\" is a router; paths run between hosts"
    );
    sc["flows"][0]["quic"]["multipath"] = json!({"paths": []});
    assert!(err_of(sc).starts_with("flows[0].quic.multipath.paths: 0 paths"));
}
