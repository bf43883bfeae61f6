//! The `conn` table's retransmission-timeout columns (`rttvar_s`, `rto_s`, `timeouts`) against
//! hand computation from the same rows: TCP's RTO (RFC 6298 §2.3: max(min_rto, SRTT + max(G,
//! 4·RTTVAR)), doubled at each expiry (§5.5), restarted with the doubled value (§5.6) and back to
//! the formula after a new RTT sample (Karn's rule); QUIC's PTO period (RFC 9002 §6.2.1:
//! (smoothed_rtt + max(4·rttvar, kGranularity) + max_ack_delay) · 2^pto_count). A forward
//! outage of the bottleneck forces the expiries.

use super::*;
use serde_json::json;

/// One saturated flow of `kind` over a 10 Mbit/s, 10 ms dumbbell whose forward bottleneck is
/// down from 1 s to 2 s: every packet sent in that second is lost, so the sender's timer
/// expires again and again until the link is back.
fn outage(kind: &str, transport: serde_json::Value) -> serde_json::Value {
    json!({
        "run": {"duration": "4s", "record": {"conn": true}},
        "dumbbell": {"pairs": 1, "mtu": "1500B",
                     "bottleneck": {"rate": "10Mbps", "delay": "10ms", "queue": {"packets": 50},
                                    "forward": {"down": [{"from": "1s", "to": "2s"}]}},
                     "access": {"rate": "1Gbps", "delay": "1ms"}},
        kind: transport,
        "flows": [{"name": "f", "kind": kind, "src": "sender1", "dst": "receiver1"}]
    })
}

/// The `conn` rows of the run as (t_s, srtt_s, rttvar_s, rto_s, timeouts).
fn rows(o: &RunOutput) -> Vec<(f64, f64, f64, f64, i64)> {
    let (t, srtt, var, rto) = (
        col_f64(o, "conn", "t_s"),
        col_f64(o, "conn", "srtt_s"),
        col_f64(o, "conn", "rttvar_s"),
        col_f64(o, "conn", "rto_s"),
    );
    let n = col_i64(o, "conn", "timeouts");
    (0..t.len()).map(|i| (t[i], srtt[i], var[i], rto[i], n[i])).collect()
}

/// `x` and `y` equal up to the columns' rounding: durations are integer picoseconds turned into
/// f64 seconds, so two computations of the same value differ by at most a few ulps; 1e-12 s (one
/// picosecond) is far below any step of the timers (milliseconds).
fn same(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-12
}

#[test]
fn tcp_rto_column_doubles_per_expiry_and_returns_to_the_formula_after_a_sample() {
    // min_rto 10 ms (not Linux's 200 ms floor) so that RFC 6298's SRTT + max(G, 4·RTTVAR)
    // (G = 1 ms, the default clock granularity) is what the rows show. A 45 kB receive buffer
    // bounds the flight to 1.5 BDP (10 Mbit/s x 24 ms = 30 kB): the queue (50 packets) never
    // overflows, so the outage's expiries are the only ones. No delayed ACKs: after the outage,
    // with a window of one or two segments, a 40 ms delayed ACK would outlast an RTO of ~40 ms
    // (RTTVAR has decayed to nothing on this constant-RTT path) and expire it once more.
    let tcp = json!({"min_rto": "10ms", "recv_buffer": "45000B", "ack_every": 1});
    let o = go(&outage("tcp", tcp), None);
    let rows = rows(&o);
    let base = |srtt: f64, var: f64| (srtt + (4.0 * var).max(0.001)).max(0.010);
    let expiries: Vec<usize> = (1..rows.len()).filter(|&i| rows[i].4 > rows[i - 1].4).collect();
    // The outage lasts 1 s; an RTO of some 30-60 ms doubling each time expires 4 to 6 times in
    // it (30+60+120+240+480 ms), and once more, with the link back, only if the backoff outlasts it.
    assert!((4..=7).contains(&expiries.len()), "{} expiries: {expiries:?}", expiries.len());
    let t = &o.totals["flows"]["f"]["tcp"];
    assert_eq!(t["timeouts"].as_i64(), Some(rows.last().unwrap().4), "{t}");
    assert_eq!(t["timeouts"], t["rtos"], "no SYN timed out: {t}");
    // Before the outage: every row after the first RTT sample has RTO = the formula.
    let first_sample = rows.iter().position(|r| r.1 > 0.0).unwrap();
    for r in &rows[first_sample..expiries[0]] {
        assert!(same(r.3, base(r.1, r.2)), "before the outage: {r:?} vs {}", base(r.1, r.2));
    }
    // Each expiry (the k-th consecutive one) doubles it: RTO = formula · 2^k, with SRTT and
    // RTTVAR frozen (no sample while everything is lost, Karn's rule).
    let (srtt0, var0) = (rows[expiries[0] - 1].1, rows[expiries[0] - 1].2);
    for (k, &i) in expiries.iter().enumerate() {
        let r = rows[i];
        assert_eq!(r.4, k as i64 + 1, "{r:?}");
        assert_eq!((r.1, r.2), (srtt0, var0), "a sample during the outage: {r:?}");
        let want = base(srtt0, var0) * f64::from(1u32 << (k + 1));
        assert!(same(r.3, want), "expiry {}: {r:?}, want {want}", k + 1);
        // RFC 6298 §5.6: the timer restarts with the doubled value, so the next expiry comes
        // exactly that long after this one.
        if let Some(&j) = expiries.get(k + 1) {
            assert!((rows[j].0 - r.0 - r.3).abs() < 1e-9, "expiry {} at {} s, {r:?}", k + 2, rows[j].0);
        }
    }
    // All in the outage but the last: the first after the link is back (its retransmission
    // gets through and ends the backoff).
    let at: Vec<f64> = expiries.iter().map(|&i| rows[i].0).collect();
    assert!(at[0] > 1.0 && at[at.len() - 2] < 2.0 && at[at.len() - 1] > 2.0, "expiries at {at:?} s");
    // After the link is back, the retransmission's ACK is a new sample (the timestamp echo
    // disambiguates it): the backoff is gone and RTO = the formula of the new SRTT, RTTVAR.
    let last = *expiries.last().unwrap();
    let back = (last + 1..rows.len()).find(|&i| (rows[i].1, rows[i].2) != (srtt0, var0)).unwrap();
    assert!(rows[back].3 < rows[last].3 / 2.0, "no return from the backoff: {:?}", rows[back]);
    for r in &rows[back..] {
        assert!(same(r.3, base(r.1, r.2)), "after the outage: {r:?} vs {}", base(r.1, r.2));
    }
}

#[test]
fn quic_pto_column_is_the_rfc9002_period_of_the_same_row() {
    // Without the handshake the connection is confirmed from the start, so every PTO is
    // application data's and includes the peer's max_ack_delay (25 ms by default).
    let o = go(&outage("quic", json!({"handshake": false})), None);
    let rows = rows(&o);
    let period = |srtt: f64, var: f64| srtt + (4.0 * var).max(0.001) + 0.025;
    let (mut expiries, mut run, mut max_run) = (0, 0, 0);
    for (i, r) in rows.iter().enumerate() {
        // rto_s = period · 2^pto_count, pto_count the PTOs since the last ACK: 0 (ratio 1) in
        // every row without expiries since the last ACK, then one more per expiry.
        let ratio = r.3 / period(r.1, r.2);
        let k = ratio.log2().round();
        assert!(k >= 0.0 && (ratio / k.exp2() - 1.0).abs() < 1e-9, "{r:?}: ratio {ratio}");
        if i > 0 && r.4 > rows[i - 1].4 {
            expiries += 1;
            run += 1;
            assert_eq!(k, f64::from(run), "expiry {run} in a row: {r:?}");
            assert_eq!((r.1, r.2), (rows[i - 1].1, rows[i - 1].2), "a sample at a PTO: {r:?}");
        } else if k == 0.0 {
            run = 0;
        } else {
            assert_eq!(k, f64::from(run), "{r:?}");
        }
        max_run = max_run.max(run);
    }
    // Several PTOs in a row in the 1 s outage (a period of ~100 ms doubling: 100+200+400 ms).
    assert!((3..=6).contains(&max_run), "{max_run} PTO expiries in a row");
    let q = &o.totals["flows"]["f"]["quic"];
    assert_eq!(q["timeouts"].as_i64(), Some(rows.last().unwrap().4), "{q}");
    assert_eq!(q["timeouts"].as_i64(), Some(expiries), "{q}");
}
