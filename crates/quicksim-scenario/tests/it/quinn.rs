//! quinn flows (the real quinn-proto stack) in whole scenarios: goodput against the link's
//! payload rate, a bulk transfer's completion, determinism per seed (tables, trace hash and the
//! handshake's bytes), encryption off changing nothing on the wire, and the `[quinn]` table's
//! errors.

use super::*;
use serde_json::json;

/// One quinn flow over a 10 Mbit/s, 10 ms dumbbell (100-packet queue).
fn one_flow(mtu: u64, quinn: serde_json::Value, flow: serde_json::Value, secs: u64) -> serde_json::Value {
    dumbbell_flow("quinn", "q", mtu, secs, quinn, flow)
}

#[test]
fn link_bandwidth_goodput_is_the_links_payload_rate() {
    // A saturated quinn flow keeps the 10 Mbit/s bottleneck busy (quinn's CUBIC with a
    // 100-packet queue, far above the ~30 kB BDP). A full datagram is MTU - 28 B of UDP
    // payload in a frame of MTU + 7 B (PPP). Of the payload, the stream data is at most all of
    // it and at least the payload less a 1-RTT header (1 + 8 B connection ID + 4 B packet
    // number), the AEAD tag (16 B) and a STREAM frame header (type 1 + ID 1 + offset 8 +
    // length 2): MTU - 28 - 41 B. Goodput lies in 10 Mbit/s x [that, MTU - 28] / (MTU + 7);
    // 1 % below for ACK frames that share packets and the recovery after the queue overflows.
    // Above: a loss holds back the in-order delivery until its retransmission arrives, then
    // everything behind it is delivered at once, so the bytes counted in [4, 20) s may include
    // up to one queue (100 packets) that arrived before 4 s.
    for mtu in [1280u64, 1500, 9000] {
        let o = go(&one_flow(mtu, json!({}), json!({}), 20), None);
        let got = goodput_bps(&o, "q", 4.0, 20.0);
        let (lo, hi) =
            (10e6 * (mtu - 69) as f64 / (mtu + 7) as f64, 10e6 * (mtu - 28) as f64 / (mtu + 7) as f64);
        let hi = hi + (100 * (mtu - 28) * 8) as f64 / 16.0;
        assert!(got > 0.99 * lo && got <= hi, "MTU {mtu}: {got} not in [{lo}, {hi}]");
        assert_eq!(o.totals["flows"]["q"]["quinn"]["udp_payload"].as_u64(), Some(mtu - 28), "MTU {mtu}");
    }
}

#[test]
fn a_bulk_transfer_completes_after_the_handshake() {
    // 1 MB over RTT = 2 x (10 + 1 + 1) ms = 24 ms: the handshake takes one RTT before the first
    // data; the transfer itself at least 1 MB / (10 Mbit/s x 1472/1507) = 0.82 s, and quinn's
    // slow start from 14 720 B needs ~7 more RTTs before the link is full: well under 1.2 s.
    let o = go(&one_flow(1500, json!({}), json!({"app": "bulk", "bytes": "1MB"}), 5), None);
    let f = &o.totals["flows"]["q"];
    assert_eq!(f["delivered_bytes"].as_u64(), Some(1_000_000), "{f}");
    let t = f["completion_time_s"].as_f64().unwrap();
    assert!((0.82 + 0.024..1.2).contains(&t), "completion {t} s");
    assert_eq!(f["quinn"]["established"], json!(true));
    // quinn-proto exposes neither rttvar nor its PTO: those columns are NaN (not 0), the
    // smoothed RTT is there (at the end: 24 ms plus queueing).
    let (srtt, var, rto) =
        (col_f64(&o, "conn", "srtt_s"), col_f64(&o, "conn", "rttvar_s"), col_f64(&o, "conn", "rto_s"));
    assert!(!srtt.is_empty() && var.iter().chain(rto).all(|x| x.is_nan()));
    assert!(srtt.last().is_some_and(|&x| x >= 0.024), "{srtt:?}");
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another_handshake() {
    let sc = one_flow(1500, json!({}), json!({}), 3);
    let (a, b, c) = (go(&sc, Some(5)), go(&sc, Some(5)), go(&sc, Some(6)));
    let digest = |o: &RunOutput| o.totals["flows"]["q"]["quinn"]["handshake_digest"].clone();
    assert_eq!(a.meta["trace_hash"], b.meta["trace_hash"]);
    assert_eq!(super::pins::tables_hash(&a), super::pins::tables_hash(&b));
    assert_eq!(a.totals, b.totals);
    assert_ne!(digest(&a), digest(&c), "another seed, another certificate, TLS randoms and CIDs");
}

#[test]
fn without_encryption_the_wire_is_the_same_and_the_bytes_differ() {
    // The null protection keeps the AEAD tag's room: same packet sizes and times, so the same
    // events, tables and statistics; only the bytes (and the CPU time) differ. (The trace hash
    // covers the scenario's text too, which differs by the `encryption` key.)
    let on = go(&one_flow(1500, json!({}), json!({}), 3), None);
    let off = go(&one_flow(1500, json!({"encryption": false}), json!({}), 3), None);
    assert_eq!(on.meta["events"], off.meta["events"]);
    for (t, c) in [("flows", "delivered_bytes"), ("flows", "wire_sent_bytes"), ("conn", "cwnd_bytes")] {
        assert_eq!(col_i64(&on, t, c), col_i64(&off, t, c), "{t}.{c}");
    }
    let (mut a, mut b) = (on.totals["flows"]["q"].clone(), off.totals["flows"]["q"].clone());
    for x in [&mut a, &mut b] {
        x["quinn"]["encryption"] = json!(null);
        x["quinn"]["handshake_digest"] = json!(null);
    }
    assert_eq!(a, b);
    let d = |o: &RunOutput| o.totals["flows"]["q"]["quinn"]["handshake_digest"].clone();
    assert_ne!(d(&on), d(&off));
    assert_eq!(off.totals["flows"]["q"]["quinn"]["encryption"], json!(false));
}

#[test]
fn controllers_and_settings_reach_quinn() {
    // NewReno with a 2-packet initial window sends less in the first RTTs than the default
    // 14 720 B: a 100 kB transfer takes longer.
    let t = |quinn: serde_json::Value| {
        let o = go(&one_flow(1500, quinn, json!({"app": "bulk", "bytes": "100kB"}), 3), None);
        o.totals["flows"]["q"]["completion_time_s"].as_f64().unwrap()
    };
    let (small, default) =
        (t(json!({"cc": "newreno", "initial_window": "2944B"})), t(json!({"cc": "newreno"})));
    assert!(small > default + 0.024, "IW 2 packets: {small} s, default: {default} s");
    for cc in ["cubic", "bbr"] {
        assert!(t(json!({"cc": cc})) < 0.5, "{cc}");
    }
}

#[test]
fn bad_quinn_settings_are_refused_with_the_field() {
    let sc = |quinn: serde_json::Value, flow: serde_json::Value| one_flow(1500, quinn, flow, 1);
    let e = err_of(sc(json!({"cc": "vegas"}), json!({})));
    assert!(e.starts_with("quinn.cc:"), "{e}");
    let e = err_of(sc(json!({}), json!({"quinn": {"initial_window": "0B"}})));
    assert!(e.starts_with("flows[0].quinn.initial_window:"), "{e}");
    let e = err_of(sc(json!({"bogus": 1}), json!({})));
    assert!(e.starts_with("quinn.bogus:"), "{e}");
    let e = err_of(one_flow(1200, json!({}), json!({}), 1));
    assert!(e.starts_with("quinn.mtu:") && e.contains("1228"), "{e}");
    let e = err_of(sc(json!({}), json!({"quic": {"pacing": false}})));
    assert!(e.starts_with("flows[0].quic:"), "{e}");
}
