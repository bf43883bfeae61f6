//! qlog files (`run.record.qlog`): each dialect has what its reader needs, the congestion
//! window in the qlog is the `conn` table's, and a flow that is not QUIC is refused.

use super::{col_f64, col_i64, col_str, err_of, go};
use quicksim_scenario::{Column, RunOutput};
use serde_json::{json, Value};

/// One QUIC flow with the handshake over a lossy 20 Mbit/s bottleneck, and a TCP flow beside it.
fn scenario(qlog: Value) -> Value {
    json!({
        "run": {"duration": "2s", "seed": 4, "record": {"qlog": qlog}},
        "dumbbell": {"pairs": 2, "mtu": "1280B",
                     "bottleneck": {"rate": "20Mbps", "delay": "10ms", "queue": {"packets": 30},
                                    "forward": {"loss": {"kind": "bernoulli", "p": 0.01}}}},
        "quic": {"handshake": true},
        "flows": [
            {"name": "q", "kind": "quic", "src": "sender1", "dst": "receiver1"},
            {"name": "t", "kind": "tcp", "src": "sender2", "dst": "receiver2"}
        ]
    })
}

/// The files of the `qlog` table: (name, records), each record parsed from its JSON-SEQ text
/// (RFC 7464: a Record Separator before each JSON text, a newline after it).
fn files(o: &RunOutput) -> Vec<(String, Vec<Value>)> {
    let (Some(Column::Str(names)), Some(Column::Str(texts))) =
        (o.column("qlog", "file"), o.column("qlog", "text"))
    else {
        panic!("no qlog table")
    };
    names
        .iter()
        .zip(texts)
        .map(|(n, t)| {
            assert!(t.starts_with('\u{1e}') && t.ends_with('\n'), "{n}: not JSON-SEQ");
            let recs = t
                .split('\u{1e}')
                .skip(1)
                .map(|r| serde_json::from_str(r.trim_end()).expect("JSON"))
                .collect();
            (n.clone(), recs)
        })
        .collect()
}

fn events<'a>(recs: &'a [Value], name: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    recs[1..].iter().filter(move |e| e["name"] == name)
}

/// What qvis needs (its loader and congestion graph, quiclog/qvis `QlogLoader`,
/// `CongestionGraphD3Renderer.parseQlog`): `qlog_version` "0.3" with `qlog_format` "JSON-SEQ"
/// and a `trace` in the header; `transport:packet_sent` / `packet_received` with
/// `raw.length`, `header.packet_type`, `header.packet_number` and ACK frames with
/// `acked_ranges`; `recovery:packet_lost` with the header; `recovery:metrics_updated` with
/// `cwnd`, `bytes_in_flight` and the RTTs; `transport:parameters_set` with `owner`.
#[test]
fn qvis_dialect_has_what_qvis_reads_and_the_conn_table_cwnd() {
    let o = go(&scenario(json!(["q"])), None);
    let fs = files(&o);
    assert_eq!(fs.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["q.client.sqlog", "q.server.sqlog"]);
    for (name, recs) in &fs {
        let h = &recs[0];
        assert_eq!(
            (h["qlog_version"].as_str(), h["qlog_format"].as_str()),
            (Some("0.3"), Some("JSON-SEQ")),
            "{name}"
        );
        assert!(h["trace"]["common_fields"]["reference_time"].is_number());
        let mut last = -1.0;
        for e in &recs[1..] {
            let t = e["time"].as_f64().expect("time in ms");
            assert!(t >= last, "{name}: time goes back");
            last = t;
        }
        for dir in ["transport:packet_sent", "transport:packet_received"] {
            let mut n = 0;
            for e in events(recs, dir) {
                let d = &e["data"];
                assert!(d["raw"]["length"].as_u64().is_some_and(|l| l > 0));
                assert!(d["header"]["packet_number"].is_u64() && d["header"]["packet_type"].is_string());
                n += 1;
            }
            assert!(n > 100, "{name}: {n} {dir}");
        }
        let params: Vec<_> = events(recs, "transport:parameters_set").collect();
        assert_eq!(
            params.iter().map(|e| e["data"]["owner"].as_str().unwrap()).collect::<Vec<_>>(),
            ["local", "remote"]
        );
    }
    let client = &fs[0].1;
    // The server's ACKs acknowledge ranges of the client's packet numbers.
    let acked = events(&fs[0].1, "transport:packet_received")
        .flat_map(|e| e["data"]["frames"].as_array().unwrap().iter())
        .filter(|f| f["frame_type"] == "ack")
        .inspect(|f| assert!(f["acked_ranges"][0].as_array().is_some_and(|r| !r.is_empty())))
        .count();
    assert!(acked > 50, "{acked} ACK frames");
    // 1 % loss: losses with a header and a trigger, as many as the transport counted.
    let lost: Vec<_> = events(client, "recovery:packet_lost").collect();
    for e in &lost {
        assert!(e["data"]["header"]["packet_number"].is_u64());
        assert!(["reordering_threshold", "time_threshold"].contains(&e["data"]["trigger"].as_str().unwrap()));
    }
    assert_eq!(lost.len() as u64, o.totals["flows"]["q"]["quic"]["packets_lost"].as_u64().unwrap());
    assert!(!lost.is_empty());
    let states: Vec<_> = events(client, "recovery:congestion_state_updated")
        .map(|e| e["data"]["new"].as_str().unwrap())
        .collect();
    assert_eq!(states[0], "slow_start");
    assert!(states.contains(&"recovery") && states.contains(&"congestion_avoidance"), "{states:?}");
    assert!(events(&fs[1].1, "transport:data_moved").count() > 100);

    // The cwnd series is the conn table's, row for row: same times (ms vs s) and values.
    let m: Vec<_> = events(client, "recovery:metrics_updated").collect();
    for e in &m {
        for k in ["cwnd", "bytes_in_flight", "min_rtt", "smoothed_rtt", "latest_rtt"] {
            assert!(e["data"][k].is_number(), "metrics_updated without {k}");
        }
    }
    let rows: Vec<usize> =
        (0..col_str(&o, "conn", "flow").len()).filter(|&i| col_str(&o, "conn", "flow")[i] == "q").collect();
    let (cw, t) = (col_i64(&o, "conn", "cwnd_bytes"), col_f64(&o, "conn", "t_s"));
    assert_eq!(m.len(), rows.len());
    for (e, &i) in m.iter().zip(&rows) {
        assert_eq!(e["data"]["cwnd"].as_i64().unwrap(), cw[i]);
        assert!((e["time"].as_f64().unwrap() * 1e-3 - t[i]).abs() < 1e-12);
    }
    // Tracing never changes the run.
    let plain = go(&scenario(json!([])), None);
    assert_eq!(plain.meta["trace_hash"], o.meta["trace_hash"]);
    assert!(plain.table("qlog").is_none());
}

/// draft-ietf-quic-qlog-main-schema-13 / quic-events-12: `file_schema` and
/// `serialization_format` in the header, a trace with `event_schemas` naming quic-12 and a
/// monotonic reference time; `quic:` event names (`quic:recovery_metrics_updated` with
/// `congestion_window`), `initiator` in `quic:parameters_set`.
#[test]
fn ietf_dialect_follows_the_drafts() {
    let o = go(&scenario(json!({"flows": ["q"], "dialect": "ietf"})), None);
    let fs = files(&o);
    let client = &fs[0].1;
    let h = &client[0];
    assert_eq!(h["file_schema"], "urn:ietf:params:qlog:file:sequential");
    assert_eq!(h["serialization_format"], "application/qlog+json-seq");
    assert!(h.get("qlog_version").is_none());
    assert_eq!(h["trace"]["event_schemas"], json!(["urn:ietf:params:qlog:events:quic-12"]));
    assert_eq!(h["trace"]["common_fields"]["reference_time"]["clock_type"], "monotonic");
    for e in &client[1..] {
        assert!(e["name"].as_str().unwrap().starts_with("quic:"), "{}", e["name"]);
    }
    assert!(events(client, "quic:packet_sent").count() > 100);
    assert!(events(client, "quic:packet_lost").count() > 0);
    let m = events(client, "quic:recovery_metrics_updated").next().expect("metrics");
    assert!(m["data"]["congestion_window"].is_u64() && m["data"].get("cwnd").is_none());
    let p = events(client, "quic:parameters_set").next().unwrap();
    assert_eq!(p["data"]["initiator"], "local");
    assert!(events(&fs[1].1, "quic:stream_data_moved").count() > 100);
}

#[test]
fn a_flow_that_is_not_quic_is_refused() {
    let e = err_of(scenario(json!(["t"])));
    assert!(e.contains("run.record.qlog") && e.contains("\"t\" is a tcp flow"), "{e}");
    assert!(!e.contains('\n'));
    let e = err_of(scenario(json!(["nope"])));
    assert!(e.contains("run.record.qlog") && e.contains("\"nope\" is not a flow"), "{e}");
    let e = err_of(scenario(json!({"flows": ["q"], "dialect": "draft-99"})));
    assert!(e.contains("run.record.qlog"), "{e}");
}
