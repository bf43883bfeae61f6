//! A flow's `stop_mode`, end to end for every kind: "send" stops sending at `stop` (tcp: a
//! RST, nothing delivered after the data in flight), "write" stops the application and
//! delivers everything it wrote; udp and onoff are the same either way; quinn refuses
//! "write"; a bad value is one error naming the field and the value.

use super::*;
use serde_json::{json, Value};

/// One flow of `kind` over a 10 Mbit/s, 20 ms dumbbell (RTT ~42 ms), stopped at 1 s, run 8 s.
fn scenario(kind: &str, mode: Option<&str>, extra: Value) -> Value {
    let mut f = json!({"name": "f", "kind": kind, "src": "sender1", "dst": "receiver1", "stop": "1s"});
    if let Some(m) = mode {
        f["stop_mode"] = json!(m);
    }
    for (k, v) in extra.as_object().unwrap() {
        f[k] = v.clone();
    }
    json!({
        "run": {"duration": "8s"},
        "dumbbell": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "20ms"}},
        "flows": [f]
    })
}

/// Bytes delivered to the receiving application in bins from `t0` s on.
fn delivered_from(o: &RunOutput, t0: f64) -> i64 {
    let (t, d) = (col_f64(o, "flows", "t_s"), col_i64(o, "flows", "delivered_bytes"));
    t.iter().zip(d).filter(|(t, _)| **t >= t0).map(|(_, d)| d).sum()
}

fn wire_sent_from(o: &RunOutput, t0: f64) -> i64 {
    let (t, d) = (col_f64(o, "flows", "t_s"), col_i64(o, "flows", "wire_sent_bytes"));
    t.iter().zip(d).filter(|(t, _)| **t >= t0).map(|(_, d)| d).sum()
}

fn total(o: &RunOutput, key: &str) -> u64 {
    o.totals["flows"]["f"][key].as_u64().unwrap_or_else(|| panic!("{key}: {}", o.totals["flows"]["f"]))
}

#[test]
fn tcp_send_aborts_with_a_rst_and_sends_nothing_after_the_stop() {
    let o = go(&scenario("tcp", Some("send"), json!({})), None);
    let tcp = &o.totals["flows"]["f"]["tcp"];
    assert!(tcp["rsts_sent"].as_u64().unwrap() >= 1 && tcp["receiver_rsts_received"].as_u64().unwrap() >= 1);
    // From the stop on only RSTs cross the wire (40 B of IP and TCP, the abort's 52 B with
    // timestamps): one for the abort, one for each of the receiver's ACKs still arriving.
    let rsts = tcp["rsts_sent"].as_u64().unwrap() + tcp["receiver_rsts_sent"].as_u64().unwrap();
    let late = wire_sent_from(&o, 1.0);
    assert!(late as u64 <= 52 * rsts, "{late} B on the wire after the stop, {rsts} RSTs");
    // The data in flight at the stop (in the bottleneck's queue) still arrives, then nothing.
    assert_eq!(delivered_from(&o, 2.0), 0);
    assert!(total(&o, "delivered_bytes") < total(&o, "app_sent_bytes"), "unsent data was dropped");
    assert_eq!(tcp["error"], Value::Null);
}

#[test]
fn tcp_send_is_the_default() {
    let a = go(&scenario("tcp", None, json!({})), None);
    let b = go(&scenario("tcp", Some("send"), json!({})), None);
    assert_eq!(a.totals["flows"], b.totals["flows"]);
}

#[test]
fn tcp_write_delivers_everything_written_then_fins() {
    let o = go(&scenario("tcp", Some("write"), json!({})), None);
    let tcp = &o.totals["flows"]["f"]["tcp"];
    assert!(tcp.get("rsts_sent").is_none(), "{tcp}");
    // The 4 MiB send buffer (2 MB of it unsent at the stop) drains after the stop.
    assert!(delivered_from(&o, 1.5) > 2_000_000);
    assert_eq!(total(&o, "delivered_bytes"), total(&o, "app_sent_bytes"));
    assert_eq!(delivered_from(&o, 4.0), 0, "done before the end");
}

#[test]
fn quic_send_closes_at_once_and_write_closes_once_everything_is_acknowledged() {
    // A send queue larger than the window, so that data is unsent at the stop.
    let queue = json!({"quic": {"send_queue_limit": "4MB"}});
    let send = go(&scenario("quic", Some("send"), queue.clone()), None);
    assert!(wire_sent_from(&send, 1.0) < 100, "one CONNECTION_CLOSE after the stop");
    assert!(total(&send, "delivered_bytes") < total(&send, "app_sent_bytes"));
    let write = go(&scenario("quic", Some("write"), queue), None);
    assert!(wire_sent_from(&write, 1.0) > 1_000_000);
    assert_eq!(total(&write, "delivered_bytes"), total(&write, "app_sent_bytes"));
    assert_eq!(wire_sent_from(&write, 6.0), 0, "the connection closed after the last ACK");
    assert_eq!(write.totals["flows"]["f"]["quic"]["error"], Value::Null);
}

#[test]
fn datagram_kinds_stop_sending_either_way() {
    for (kind, extra) in [
        ("udp", json!({"size": "1000B", "rate": "1Mbps"})),
        ("onoff", json!({"size": "1000B", "rate": "1Mbps", "on": "300ms", "off": "200ms"})),
    ] {
        let send = go(&scenario(kind, Some("send"), extra.clone()), None);
        let write = go(&scenario(kind, Some("write"), extra), None);
        assert_eq!(send.totals["flows"], write.totals["flows"], "{kind}");
        assert_eq!(wire_sent_from(&send, 1.1), 0, "{kind}");
    }
}

#[test]
fn quinn_refuses_write_and_bad_values_name_the_field() {
    let e = err_of(scenario("quinn", Some("write"), json!({})));
    assert!(e.starts_with("flows[0].stop_mode: \"write\": quinn flows only stop sending"), "{e}");
    let e = err_of(scenario("tcp", Some("drain"), json!({})));
    assert!(e.contains("flows[0].stop_mode") && e.contains("drain") && e.contains("`send`"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
    let e = err_of(scenario("tcp", None, json!({"stop_mode": 1})));
    assert!(e.contains("flows[0].stop_mode"), "{e}");
}

/// A bulk transfer cut by its stop says so (not "connection closed before the end").
#[test]
fn a_stopped_transfer_says_it_was_stopped() {
    for mode in ["send", "write"] {
        let o = go(&scenario("tcp", Some(mode), json!({"app": "bulk", "bytes": "100MB"})), None);
        let why = o.meta["unfinished_flows"]["f"].as_str().unwrap();
        assert!(why.starts_with("stopped at 1"), "{mode}: {why}");
    }
}
