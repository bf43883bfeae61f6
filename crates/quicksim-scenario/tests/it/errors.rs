//! Bad scenarios: every error names the field path and the value, and nothing panics.

use super::{base, err_of};
use serde_json::json;

#[test]
fn unknown_key() {
    let mut sc = base();
    sc["dumbbell"]["bottleneck"]["rte"] = json!("1Mbps");
    let e = err_of(sc);
    assert!(e.starts_with("dumbbell.bottleneck.rte: unknown field `rte`, expected one of"), "{e}");
}

#[test]
fn misspelled_unit() {
    let mut sc = base();
    sc["dumbbell"]["bottleneck"]["rate"] = json!("10 Mbs");
    let e = err_of(sc);
    assert_eq!(e, "dumbbell.bottleneck.rate: \"10 Mbs\" is not a rate; try \"10Mbps\" (units: bps, kbps, Mbps, Gbps, Tbps)");
}

#[test]
fn negative_rate() {
    let mut sc = base();
    sc["dumbbell"]["bottleneck"]["rate"] = json!("-10Mbps");
    assert!(err_of(sc).starts_with("dumbbell.bottleneck.rate: \"-10Mbps\" is negative"));
}

#[test]
fn unconnected_flow() {
    let sc = json!({
        "run": {"duration": "1s"},
        "nodes": {"a": {"kind": "host"}, "b": {"kind": "host"}, "c": {"kind": "host"}},
        "links": [{"name": "l", "a": "a", "b": "b", "rate": "1Mbps"}],
        "flows": [{"name": "f", "kind": "udp", "src": "a", "dst": "c", "size": "100B", "interval": "10ms"}]
    });
    assert_eq!(err_of(sc), "flows[0].dst: \"c\" is not connected to \"a\"");
}

#[test]
fn mtu_smaller_than_headers() {
    let mut sc = base();
    sc["dumbbell"]["mtu"] = json!("20B");
    assert!(err_of(sc).starts_with("dumbbell.mtu: 20 B is smaller than the IPv4 + UDP headers"));
}

#[test]
fn zero_queue() {
    let mut sc = base();
    sc["dumbbell"]["bottleneck"]["queue"] = json!({"packets": 0});
    assert!(err_of(sc).starts_with("dumbbell.bottleneck.queue.packets: 0"));
}

#[test]
fn datagram_larger_than_mtu() {
    let mut sc = base();
    sc["flows"][0]["size"] = json!("1500B");
    assert!(err_of(sc).starts_with("flows[0].size: 1500 B + 28 B of headers exceeds the path MTU 1500 B"));
}

#[test]
fn queue_kinds_and_their_settings() {
    let mut sc = base();
    sc["dumbbell"]["bottleneck"]["queue"] = json!({"kind": "fifo"});
    assert_eq!(
        err_of(sc.clone()),
        "dumbbell.bottleneck.queue.kind: \"fifo\" is not a queue discipline; use one of [\"droptail\", \"red\", \"codel\", \"fq_codel\", \"pie\", \"dualpi2\", \"step\"]"
    );
    sc["dumbbell"]["bottleneck"]["queue"] = json!({"kind": "droptail", "bytes": "0B"});
    assert!(err_of(sc.clone()).starts_with("dumbbell.bottleneck.queue.bytes: \"0B\""));
    sc["dumbbell"]["bottleneck"]["queue"] = json!({"kind": "droptail", "bytes": "10 kilobytes"});
    assert!(err_of(sc.clone()).starts_with("dumbbell.bottleneck.queue.bytes: \"10 kilobytes\" is not a size"));
    sc["dumbbell"]["bottleneck"]["queue"] = json!({"kind": "droptail", "packts": 5});
    let e = err_of(sc.clone());
    assert!(e.starts_with("dumbbell.bottleneck.queue.packts: unknown field `packts`"), "{e}");
    sc["dumbbell"]["bottleneck"]["forward"] = json!({"queue": {"kind": 3}});
    assert!(err_of(sc).starts_with("dumbbell.bottleneck.forward.queue.kind: 3 is not a name"));
}

/// `base()` with its flow turned into a QUIC flow and `quic` as the scenario's QUIC defaults.
fn quic_with(quic: serde_json::Value) -> serde_json::Value {
    let mut sc = base();
    sc["flows"] = json!([{"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"}]);
    sc["quic"] = quic;
    sc
}

#[test]
fn congestion_control_settings() {
    // A misspelled setting names the field of the algorithm's own configuration.
    let e = err_of(quic_with(json!({"cc": {"algo": "cubic", "bta": 0.7}})));
    assert!(e.starts_with("quic.cc.bta: unknown field `bta`, expected one of"), "{e}");
    // A bad value names the field and the value.
    let e = err_of(quic_with(json!({"cc": {"algo": "cubic", "beta": 1.5}})));
    assert!(e.starts_with("quic.cc.beta: 1.5 is not in (0, 1)"), "{e}");
    let e = err_of(quic_with(json!({"cc": {"algo": "newreno", "exact_increase": "yes"}})));
    assert!(e.starts_with("quic.cc.exact_increase: invalid type: string \"yes\", expected a boolean"), "{e}");
    // Settings of another algorithm are unknown fields.
    let e = err_of(quic_with(json!({"cc": {"algo": "none", "beta": 0.5}})));
    assert!(e.starts_with("quic.cc.beta: unknown field `beta`"), "{e}");
    // A table needs the controller's name.
    let e = err_of(quic_with(json!({"cc": {"beta": 0.5}})));
    assert!(e.starts_with("quic.cc: missing field `algo`"), "{e}");
    let e = err_of(quic_with(json!({"cc": {"algo": 3}})));
    assert!(e.starts_with("quic.cc: `algo` must be a controller name"), "{e}");
    // An unknown name lists the registered ones.
    let e = err_of(quic_with(json!({"cc": "vegas"})));
    assert_eq!(
        e,
        "quic.cc: \"vegas\" is not a congestion controller; use one of [\"none\", \"newreno\", \"cubic\", \"bbr1\", \"bbr\", \"dctcp\", \"prague\", \"lia\", \"olia\", \"balia\"]"
    );
    // A flow's own table is reported with its path.
    let mut sc = quic_with(json!({}));
    sc["flows"][0]["quic"] = json!({"cc": {"algo": "cubic", "c": -1}});
    let e = err_of(sc);
    assert!(e.starts_with("flows[0].quic.cc.c: -1 is not in [1e-6, 1000]"), "{e}");
}

#[test]
fn connect_and_write_size_name_their_field() {
    let quic = |extra: serde_json::Value| {
        let mut sc = base();
        let mut f =
            json!({"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1", "start": "0.5s"});
        f.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        sc["flows"] = json!([f]);
        err_of(sc)
    };
    assert_eq!(quic(json!({"connect": "0.6s"})), "flows[0].connect: 600ms is after start 500ms");
    assert_eq!(quic(json!({"write_size": "0B"})), "flows[0].write_size: 0 B: a write needs bytes");
    let e = quic(json!({"app": "messages", "size": "1kB", "interval": "1ms", "write_size": "1kB"}));
    assert!(e.starts_with("flows[0].write_size: does not apply to app = \"messages\""), "{e}");
    for field in ["connect", "write_size"] {
        let mut sc = base();
        sc["flows"][0][field] = json!(if field == "connect" { "0s" } else { "1kB" });
        assert_eq!(err_of(sc), format!("flows[0].{field}: does not apply to a udp flow"));
    }
}
