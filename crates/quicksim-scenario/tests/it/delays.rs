//! The delay statistics (`output/delay.rs`) against what the recorded queue lengths say.

use super::{col_f64, col_i64, col_str, go};
use serde_json::json;

/// The buffer-sizing scenario (seed 002): one QUIC flow through a 100 Mbit/s bottleneck with a
/// 22-packet DropTail queue, shortened to 3 s.
fn buffer_sizing() -> serde_json::Value {
    json!({
        "run": {"duration": "3s", "seed": 1, "record_interval": "0.1s", "record": {"queues": ["bottleneck"], "links": ["bottleneck"], "delays": true}},
        "dumbbell": {"pairs": 1, "mtu": "1280B",
                     "bottleneck": {"rate": "100Mbps", "delay": "1ms", "queue": {"packets": 22}},
                     "access": {"rate": "1000Gbps", "delay": "0s"}},
        "quic": {"handshake": false, "ack_ratio": 1, "bundle_ack": true,
                 "initial_max_data": "4294967295B", "initial_max_stream_data": "4294967295B",
                 "send_queue_limit": "500kB", "send_queue_low_water": 0.8},
        "flows": [{"name": "quic", "kind": "quic", "src": "sender1", "dst": "receiver1", "start": "0.2s"}]
    })
}

/// Exact p-quantile of `v` as the sketch defines its rank: the element at index
/// floor(p x (n - 1)) of the sorted samples.
fn quantile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[(p * (v.len() - 1) as f64) as usize]
}

/// The p95 queueing delay of the bottleneck queue, recomputed from the `queues` table alone.
/// The queue is FIFO and the table has a row for every change of its length: a row one packet
/// longer than the one before is a packet that had to wait (the link was busy), a row one
/// shorter is the head packet starting its transmission. So the k-th increase and the k-th
/// decrease are the same packet, and its wait is the time between them. A packet that found
/// the link idle starts at once without a row: its wait is 0, and their number is every packet
/// the link started (the frames it serialized) minus
/// the packets that waited. The statistics' p95 must be within 2 % of this exact value: the
/// sketch's quantiles are within 1 % (its relative accuracy), and the ranks agree exactly.
#[test]
fn p95_queueing_delay_matches_the_recorded_queue_lengths() {
    let o = go(&buffer_sizing(), None);
    let q = "bottleneck:router1->router2";
    let (t, names, len) =
        (col_f64(&o, "queues", "t_s"), col_str(&o, "queues", "queue"), col_i64(&o, "queues", "packets"));
    let (mut arrivals, mut waits) = (Vec::new(), Vec::new());
    let mut prev = 0;
    let mut head = 0;
    for i in (0..t.len()).filter(|&i| names[i] == q) {
        match len[i] - prev {
            1 => arrivals.push(t[i]),
            -1 => {
                waits.push(t[i] - arrivals[head]);
                head += 1;
            }
            d => panic!("queue length jumped by {d} at {}", t[i]),
        }
        prev = len[i];
    }
    // (A frame still in transmission at the end is not counted: one rank in ~30 000.)
    let started = o.totals["links"][q]["frames_serialized"].as_u64().unwrap() as usize;
    assert!(waits.len() > 10_000 && started > waits.len(), "{} waits of {started} packets", waits.len());
    let idle = started - waits.len();
    waits.extend(std::iter::repeat_n(0.0, idle));
    let want = quantile(&mut waits, 0.95);
    // The queue holds up to 22 packets of 1280 B at 100 Mbit/s (102.4 µs each).
    assert!(want > 0.5e-3 && want < 22.0 * 102.4e-6, "p95 {want}");
    let got = o.totals["queues"][q]["queueing_p95_s"].as_f64().unwrap();
    assert!((got - want).abs() <= 0.02 * want, "queue p95 {got} vs {want} from the queue lengths");
    // The flow's packets cross only this queue (the 1000 Gbit/s access links queue for
    // nanoseconds): its queueing p95 is the same within the same bound.
    let f = &o.totals["flows"]["quic"];
    let flow_q = f["queueing_p95_s"].as_f64().unwrap();
    assert!((flow_q - want).abs() <= 0.02 * want, "flow queueing p95 {flow_q} vs {want}");
    // One-way delay = queueing + 1 ms propagation + 102.4 µs serialization at the bottleneck
    // (+ picoseconds at 1000 Gbit/s): its p95 is the queueing p95 plus that, within the bound.
    let owd = f["owd_p95_s"].as_f64().unwrap();
    let base = 1e-3 + 1280.0 * 8.0 / 100e6;
    assert!((owd - (want + base)).abs() <= 0.02 * (want + base), "owd p95 {owd} vs {}", want + base);
    // The mean is exact (a sum, not a sketch), up to the frame in transmission at the end,
    // which the statistics count and this count does not: one wait of at most 22 packet times
    // among n, so the means differ by at most 2.3 ms / n.
    let mean: f64 = waits.iter().sum::<f64>() / waits.len() as f64;
    let got_mean = o.totals["queues"][q]["queueing_mean_s"].as_f64().unwrap();
    let bound = 22.0 * 102.4e-6 / waits.len() as f64;
    assert!((got_mean - mean).abs() <= bound, "mean {got_mean} vs {mean}");
}

/// Per-bin columns: one value per flow and bin, NaN before the flow starts; the bins' p95
/// stays within the run's range; `delays = false` switches everything off and a wrong flow
/// name is refused naming the field.
#[test]
fn per_bin_columns_and_selection() {
    let o = go(&buffer_sizing(), None);
    let p95 = col_f64(&o, "flows", "owd_p95_s");
    let t = col_f64(&o, "flows", "t_s");
    assert_eq!(p95.len(), t.len());
    assert!(p95[0].is_nan() && p95[1].is_nan(), "no delivery before the flow starts at 0.2 s");
    assert!(p95[2..].iter().all(|&x| x > 1.1e-3 && x < 1.2e-3 + 22.0 * 102.4e-6), "{p95:?}");
    let lq = col_f64(&o, "links", "queueing_p95_s");
    assert!(lq.iter().any(|x| x.is_finite()));

    let mut sc = buffer_sizing();
    sc["run"]["record"]["delays"] = json!(false);
    let off = go(&sc, None);
    assert!(off.totals["flows"]["quic"].get("owd_p95_s").is_none());
    assert!(col_f64(&off, "flows", "owd_p95_s").iter().all(|x| x.is_nan()));
    assert_eq!(off.meta["trace_hash"], o.meta["trace_hash"], "statistics never change the run");

    sc["run"]["record"]["delays"] = json!(["nope"]);
    let e = super::err_of(sc);
    assert!(e.contains("run.record.delays") && e.contains("nope"), "{e}");
}
