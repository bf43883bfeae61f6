//! What a run writes about the paths of a multipath connection: per-path rows in the `flows`
//! and `conn` tables, the path of each packet in qlog, and path schedulers registered at run time.

use super::go;
use super::multipath::mp_bulk;
use quicksim_scenario::plugins::Plugins;
use quicksim_scenario::{run_with, RunOutput};
use quicksim_transport::quic::path_sched::{MinRtt, PathScheduler, PathView};
use serde_json::{json, Value};

/// The rows of `table` whose `path` is `path` (-1: the whole connection), as row indexes.
fn rows_of(o: &RunOutput, table: &str, path: i64) -> Vec<usize> {
    let p = super::col_i64(o, table, "path");
    (0..p.len()).filter(|&i| p[i] == path).collect()
}

/// A two-path run: the `flows` table gets one row per path and bin beside the connection's,
/// and what the paths put on the network sums to the connection's, bin by bin; the `conn`
/// table gets each path's own window, RTT and counters.
#[test]
fn per_path_rows_sum_to_the_connection() {
    let mut sc = mp_bulk(4, "10ms", "25ms", json!({}));
    sc["run"]["record_interval"] = json!("100ms");
    let o = go(&sc, None);
    let (conn, p0, p1) = (rows_of(&o, "flows", -1), rows_of(&o, "flows", 0), rows_of(&o, "flows", 1));
    assert_eq!((conn.len(), p0.len(), p1.len()), (40, 40, 40));
    let t = super::col_f64(&o, "flows", "t_s");
    for col in ["wire_sent_bytes", "sent_packets", "wire_recv_bytes", "recv_packets"] {
        let v = super::col_i64(&o, "flows", col);
        for k in 0..40 {
            assert_eq!((t[conn[k]], t[p0[k]]), (t[p1[k]], t[p1[k]]), "bin {k}");
            assert_eq!(v[p0[k]] + v[p1[k]], v[conn[k]], "{col}, bin {k}");
        }
        let sum = |rows: &[usize]| rows.iter().map(|&i| v[i]).sum::<i64>();
        // Both paths carry a large share of the aggregate (10 Mbit/s each).
        assert!(sum(&p0) > sum(&conn) / 4 && sum(&p1) > sum(&conn) / 4, "{col}: {} {}", sum(&p0), sum(&p1));
    }
    // The application's bytes are the connection's: 0 on the path rows.
    let d = super::col_i64(&o, "flows", "delivered_bytes");
    assert!(p0.iter().chain(&p1).all(|&i| d[i] == 0));
    // conn: each path's RTT is its own: the minimum is the path's 20 or 50 ms of propagation
    // plus a packet's serialization (1 ms at 10 Mbit/s) and the ACK's way back.
    let min_rtt = super::col_f64(&o, "conn", "min_rtt_s");
    let last = |p: i64| *rows_of(&o, "conn", p).last().expect("rows of the path");
    assert!((0.02..0.025).contains(&min_rtt[last(0)]), "path 0 min RTT {}", min_rtt[last(0)]);
    assert!((0.05..0.055).contains(&min_rtt[last(1)]), "path 1 min RTT {}", min_rtt[last(1)]);
    // Per-path packet counts grow and together make the connection's (the last rows of the
    // paths and of the connection are taken at different pumps: within a few packets).
    let sent = super::col_i64(&o, "conn", "packets_sent");
    let total = o.totals["flows"]["q"]["quic"]["packets_sent"].as_i64().unwrap();
    let paths = sent[last(0)] + sent[last(1)];
    assert!(paths <= total && paths > total - 50, "paths {paths} of {total}");
}

#[test]
fn single_path_runs_have_no_path_column() {
    let mut sc = mp_bulk(1, "10ms", "25ms", json!({}));
    sc["flows"][0]["quic"] = json!({});
    let o = go(&sc, None);
    assert!(o.column("flows", "path").is_none() && o.column("conn", "path").is_none());
}

/// Path 0 (wifi) fails at 2 s and is abandoned after its PTOs: from then on its rows show
/// nothing sent, while path 1 carries the transfer.
#[test]
fn an_abandoned_path_carries_nothing_after_its_abandon() {
    let mut sc = mp_bulk(6, "10ms", "25ms", json!({}));
    sc["run"]["record_interval"] = json!("50ms");
    sc["links"][0]["down"] = json!([{"from": "2s", "to": "6s"}]);
    let o = go(&sc, None);
    let abandoned = o.totals["flows"]["q"]["quic"]["paths"][0]["abandoned_s"].as_f64().expect("abandoned");
    assert!((2.0..3.0).contains(&abandoned), "abandoned at {abandoned}");
    let (t, v) = (super::col_f64(&o, "flows", "t_s"), super::col_i64(&o, "flows", "sent_packets"));
    let sent = |p: i64, t0: f64, t1: f64| -> i64 {
        rows_of(&o, "flows", p).into_iter().filter(|&i| t[i] >= t0 && t[i] < t1).map(|i| v[i]).sum()
    };
    assert!(sent(0, 0.0, 2.0) > 500, "path 0 before the failure: {}", sent(0, 0.0, 2.0));
    assert_eq!(sent(0, abandoned + 0.05, 6.0), 0, "path 0 after its abandon at {abandoned}");
    assert!(sent(1, abandoned, 6.0) > 1000, "path 1 after: {}", sent(1, abandoned, 6.0));
    // conn: path 0's packet count stops where it was abandoned.
    let (ct, cs) = (super::col_f64(&o, "conn", "t_s"), super::col_i64(&o, "conn", "packets_sent"));
    let p0 = rows_of(&o, "conn", 0);
    let at_abandon = p0.iter().filter(|&&i| ct[i] <= abandoned).map(|&i| cs[i]).max().unwrap();
    assert!(p0.iter().all(|&i| cs[i] <= at_abandon), "path 0 sent after its abandon");
}

/// qlog of a two-path connection: each packet event and each loss names its path (the event's
/// `path`), and each end's first packet on a path is preceded by the path's `path_assigned`.
#[test]
fn qlog_names_the_path_of_every_packet() {
    let mut sc = mp_bulk(1, "10ms", "25ms", json!({}));
    sc["run"]["record"] = json!({"qlog": {"flows": ["q"], "dialect": "ietf"}});
    // A 5-packet queue on lte: slow start overflows it, so path 1 loses packets.
    sc["links"][1]["queue"] = json!({"packets": 5});
    let o = go(&sc, None);
    let Some(quicksim_scenario::Column::Str(texts)) = o.column("qlog", "text") else { panic!("no qlog") };
    let mut lost_on_lte = 0;
    for text in texts {
        let recs: Vec<Value> =
            text.split('\u{1e}').skip(2).map(|r| serde_json::from_str(r.trim_end()).expect("JSON")).collect();
        let assigned: Vec<&Value> = recs.iter().filter(|e| e["name"] == "quic:path_assigned").collect();
        assert_eq!(
            assigned.iter().map(|e| e["data"]["path_id"].clone()).collect::<Vec<_>>(),
            [json!("0"), json!("1")]
        );
        let packets: Vec<&Value> = recs
            .iter()
            .filter(|e| e["name"] == "quic:packet_sent" || e["name"] == "quic:packet_received")
            .collect();
        assert!(packets.iter().all(|e| e["path"] == "0" || e["path"] == "1"));
        assert!(packets.iter().filter(|e| e["path"] == "1").count() > 50);
        let lost: Vec<&Value> = recs.iter().filter(|e| e["name"] == "quic:packet_lost").collect();
        assert!(lost.iter().all(|e| e["path"] == "0" || e["path"] == "1"));
        lost_on_lte += lost.iter().filter(|e| e["path"] == "1").count();
    }
    assert!(lost_on_lte > 0, "no loss on lte");
    // A single-path flow's events have no `path`.
    sc["flows"][0]["quic"] = json!({});
    let o = go(&sc, None);
    let Some(quicksim_scenario::Column::Str(texts)) = o.column("qlog", "text") else { panic!("no qlog") };
    assert!(texts.iter().all(|t| !t.contains("\"path\"") && !t.contains("path_assigned")));
}

/// minRTT under another name, handed to the run as a plugin.
#[derive(Debug)]
struct Mine(MinRtt);
impl PathScheduler for Mine {
    fn name(&self) -> &'static str {
        "mine"
    }
    fn order(&mut self, paths: &[PathView], out: &mut Vec<u8>) {
        self.0.order(paths, out)
    }
}

#[test]
fn a_registered_scheduler_runs_as_the_built_in_one_does() {
    let mut plugins = Plugins::default();
    plugins.register_scheduler("mine", || Box::new(Mine(MinRtt))).unwrap();
    let run = |name: &str| {
        let sc = mp_bulk(2, "10ms", "25ms", json!({"scheduler": name}));
        run_with(&sc.to_string(), None, &mut |_, _| true, &plugins).map_err(|e| e.to_string())
    };
    let (a, b) = (run("minrtt").unwrap(), run("mine").unwrap());
    assert_eq!(a.meta["trace_hash"], b.meta["trace_hash"]);
    assert_eq!(a.totals, b.totals);
    let e = run("fastest").unwrap_err();
    assert_eq!(
        e,
        "flows[0].quic.multipath.scheduler: \"fastest\" is not a path scheduler; use one of \
         [\"minrtt\", \"roundrobin\", \"redundant\", \"backup\", \"mine\"]"
    );
    assert!(plugins.clone().register_scheduler("minrtt", || Box::new(MinRtt)).is_err());
}
