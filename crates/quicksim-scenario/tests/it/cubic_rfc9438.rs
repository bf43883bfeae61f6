//! Golden end-to-end test from RFC 9438 §5.1, Tables 1 and 2: one CUBIC flow (and one NewReno
//! flow) under a deterministic drop every 1/p packets, with a queue that never drops, at RTT
//! 0.1 s and 0.01 s, over QUIC and over TCP. The time-weighted mean congestion window in
//! segments must be within 10 % of the RFC's table (CUBIC) and of 1.2/√p (NewReno, RFC 3649).
//!
//! The expected values are the RFC's printed constants; the RFC computes them from its fluid
//! model (§5: AVG_W_cubic = (C (3 + beta) / (4 (1 - beta)))^(1/4) (RTT/p)^(3/4), or Reno's
//! 1.2/√p where that is larger). The 10 % tolerance is issue 14's. The closed forms leave out
//! what the algorithm does besides: the one-RTT recovery hold, whole packets at small windows,
//! the larger of the cubic curve and W_est at every instant (not the larger of their means)
//! and fast convergence where the two regions meet; measured, the cells differ from the table
//! by -7.2 % (CUBIC, p = 1e-2) to +4.5 % (CUBIC, RTT 0.01 s, p = 1e-6), and from a fluid model
//! of those rules by less than 0.3 % for p <= 1e-4 (see `docs/reproductions/cubic-rfc9438/`).
//!
//! Which cells run by default: the cost of a cell is the number of packets it sends, about
//! 14/p (3 warm-up and 10 measured loss epochs of 1/p packets each, plus slow start). p = 1e-2
//! to 1e-4 send at most 1.4e5 packets per run, and their 24 runs take about 3 s in release mode;
//! p = 1e-5 (1.4e6 packets per run, 8 runs) adds about 7.5 s of CPU, split over two tests that run
//! in parallel. All of these run in `cargo test`. p = 1e-6 (1.4e7 packets per run, 8 runs) is
//! `#[ignore]`d: it takes about 80 s of CPU (measured: 90 s for p = 1e-5 and 1e-6 together), too
//! much to add to every `cargo test`; run it with
//! `cargo test -p quicksim-scenario --release --test it cubic_rfc9438 -- --ignored --nocapture`.
//! `quicksim reproduce cubic-rfc9438` (full mode) runs every cell through Python, beside a fluid
//! model of the window rules that explains each cell's difference from the table, and
//! `docs/reproductions/cubic-rfc9438/` holds its report.

use super::*;
use serde_json::json;

/// RFC 9438 §5.1 Table 1 (RTT 0.1 s) and Table 2 (RTT 0.01 s): CUBIC's mean window in segments
/// for p = 1e-2, 1e-3, 1e-4, 1e-5, 1e-6 (C = 0.4, beta_cubic = 0.7).
const TABLE_1_RTT_100MS: [f64; 5] = [12.0, 38.0, 187.0, 1054.0, 5926.0];
const TABLE_2_RTT_10MS: [f64; 5] = [12.0, 38.0, 120.0, 379.0, 1200.0];
const LOSS_RATES: [f64; 5] = [1e-2, 1e-3, 1e-4, 1e-5, 1e-6];
/// Issue 14's tolerance on every cell: |measured / expected - 1| <= 10 %.
const TOLERANCE: f64 = 0.10;
/// Loss epochs of warm-up after the first drop, and loss epochs measured after them.
const WARMUP_EPOCHS: usize = 3;
const EPOCHS: usize = 10;
const MTU: u64 = 1280;
/// The initial window in segments (QUIC: RFC 9002's 10 x 1252 B <= 14 720 B; TCP: RFC 6928).
const INITIAL_WINDOW: u64 = 10;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Transport {
    Quic,
    Tcp,
}

impl Transport {
    /// The segment the window is counted in: QUIC's max_packet_size at MTU 1280 (1280 - 20 IP -
    /// 8 UDP = 1252 B); TCP's SMSS (1280 - 20 IP - 20 TCP - 12 timestamps = 1228 B).
    fn segment(self) -> f64 {
        match self {
            Transport::Quic => 1252.0,
            Transport::Tcp => 1228.0,
        }
    }
}

/// The expected mean window (segments): the RFC's table for CUBIC, 1.2/√p for NewReno.
fn expected(algo: &str, rtt_s: f64, i: usize) -> f64 {
    match algo {
        "cubic" if rtt_s == 0.1 => TABLE_1_RTT_100MS[i],
        "cubic" => TABLE_2_RTT_10MS[i],
        _ => 1.2 / LOSS_RATES[i].sqrt(),
    }
}

/// The fluid model's mean window (segments): the larger of AVG_W_cubic and 1.2/√p for CUBIC
/// (what the RFC's table computes), 1.2/√p for NewReno. Used only to size the run (first drop
/// and duration), never as an expected value.
fn fluid_mean(algo: &str, rtt_s: f64, p: f64) -> f64 {
    let reno = 1.2 / p.sqrt();
    let cubic = (0.4_f64 * 3.7 / (4.0 * 0.3)).powf(0.25) * (rtt_s / p).powf(0.75);
    if algo == "newreno" {
        reno
    } else {
        cubic.max(reno)
    }
}

/// The fluid model's window at a loss (segments): W_max = 4 avg / (3 + beta) on the cubic curve,
/// 2 avg / (1 + beta) on an AIMD sawtooth (beta 0.5 for NewReno, 0.7 for CUBIC's Reno-friendly
/// region).
fn fluid_peak(algo: &str, rtt_s: f64, p: f64) -> f64 {
    let reno = 1.2 / p.sqrt();
    let avg = fluid_mean(algo, rtt_s, p);
    match algo {
        "newreno" => 2.0 * avg / 1.5,
        _ if avg > reno => 4.0 * avg / 3.7,
        _ => 2.0 * avg / 1.7,
    }
}

/// One flow over `scenarios/mathis.toml`'s path (100 Gbit/s links: the rate never limits; the
/// largest window, ~6 400 segments at RTT 0.1 s, needs ~0.7 Gbit/s), a queue of 10^7 packets
/// that never drops, every packet acked, and a send buffer far above the largest window. The
/// first drop comes after W_max - IW packets: slow start adds a segment per ACK until the loss
/// is detected, so it reduces at about the fluid model's W_max, the operating point. Near W_max
/// the cubic curve is flat, so a W_max off the fixed point stays off it for hundreds of epochs
/// (started at W_max + 12 segments, RTT 0.1 s, p = 1e-4 measures +4.8 % and is still +3.7 %
/// after 80 epochs), and a slow-start overshoot would be measured instead of the steady state
/// the table describes.
fn scenario(algo: &str, rtt_s: f64, p: f64, transport: Transport) -> serde_json::Value {
    let every = (1.0 / p).round() as u64 - 1;
    let peak = fluid_peak(algo, rtt_s, p);
    let first = (peak.round() as u64).saturating_sub(INITIAL_WINDOW).clamp(1, every);
    // Fluid-model time between losses: 1/p packets at the mean window per RTT.
    let epoch_s = rtt_s / (p * fluid_mean(algo, rtt_s, p));
    let duration_s = 1.0 + (EPOCHS + WARMUP_EPOCHS + 1) as f64 * epoch_s;
    let cap = format!("{}B", (8.0 * peak * transport.segment()) as u64 + 4_000_000);
    let mut sc = json!({
        "run": {"duration": format!("{duration_s:.3}s"), "seed": 1,
                "record": {"flows": false, "links": false, "queues": false, "conn": true,
                           // A grid of RTT/100 samples the step-function window without a row per ACK.
                           "conn_interval": format!("{}us", (rtt_s * 1e4).round() as u64)}},
        "dumbbell": {"pairs": 1, "mtu": format!("{MTU}B"),
                     "access": {"rate": "1000Gbps", "delay": "0s"},
                     "bottleneck": {"rate": "100Gbps", "delay": format!("{}us", (rtt_s * 5e5).round() as u64),
                                    "queue": {"packets": 10_000_000},
                                    "forward": {"loss": {"kind": "periodic", "every": every, "first": first}}}},
        "flows": [{"name": "f", "kind": "quic", "src": "sender1", "dst": "receiver1"}]
    });
    match transport {
        Transport::Quic => {
            sc["quic"] = json!({
                "handshake": false, "cc": algo, "exact_increase": true, "ack_ratio": 1,
                "bundle_ack": false, "initial_max_data": "4294967295B",
                "initial_max_stream_data": "4294967295B", "send_queue_limit": cap,
                "send_queue_low_water": 0.8
            });
        }
        Transport::Tcp => {
            sc["flows"][0]["kind"] = json!("tcp");
            sc["tcp"] = json!({"cc": algo, "ack_every": 1, "send_buffer": cap, "recv_buffer": cap});
        }
    }
    sc
}

/// Time-weighted mean cwnd (segments) from the loss that ends the warm-up to the last loss,
/// over whole loss epochs, and the number of epochs measured.
fn mean_cwnd(o: &RunOutput, transport: Transport) -> (f64, usize) {
    let (t, w) = (col_f64(o, "conn", "t_s"), col_i64(o, "conn", "cwnd_bytes"));
    let (dt, why) = (col_f64(o, "drops", "t_s"), col_str(o, "drops", "reason"));
    let mut losses: Vec<f64> = dt.iter().zip(why).filter(|(_, r)| *r == "loss").map(|(t, _)| *t).collect();
    losses.sort_by(f64::total_cmp);
    assert!(losses.len() >= WARMUP_EPOCHS + 3, "only {} losses", losses.len());
    let (t0, t1) = (losses[WARMUP_EPOCHS], losses[losses.len() - 1]);
    let end = o.meta["sim_end_s"].as_f64().unwrap();
    let mut area = 0.0;
    for i in 0..t.len() {
        let next = t.get(i + 1).copied().unwrap_or(end);
        let (lo, hi) = (t[i].clamp(t0, t1), next.clamp(t0, t1));
        area += w[i] as f64 / transport.segment() * (hi - lo);
    }
    (area / (t1 - t0), losses.len() - 1 - WARMUP_EPOCHS)
}

/// Runs CUBIC and NewReno at the cells `ps` (indices into LOSS_RATES) of both tables and asserts
/// each against its expected value; prints every cell's error (see with --nocapture).
fn check_cells(transport: Transport, ps: &[usize]) {
    let mut failures = Vec::new();
    for rtt_s in [0.1, 0.01] {
        for &i in ps {
            for algo in ["cubic", "newreno"] {
                let o = go(&scenario(algo, rtt_s, LOSS_RATES[i], transport), None);
                let (mean, epochs) = mean_cwnd(&o, transport);
                let want = expected(algo, rtt_s, i);
                let err = mean / want - 1.0;
                let line = format!(
                    "{transport:?} {algo:7} rtt={rtt_s}s p={:e}: mean cwnd {mean:.1} segments over {epochs} \
                     epochs, expected {want:.1}, error {:+.2} %",
                    LOSS_RATES[i],
                    err * 100.0
                );
                println!("{line}");
                assert!(epochs >= EPOCHS - 1, "{line}: too few loss epochs measured");
                if err.abs() > TOLERANCE {
                    failures.push(line);
                }
            }
        }
    }
    assert!(failures.is_empty(), "cells outside {} %:\n{}", TOLERANCE * 100.0, failures.join("\n"));
}

#[test]
fn quic_mean_window_matches_rfc9438_tables_p_1e2_to_1e4() {
    check_cells(Transport::Quic, &[0, 1, 2]);
}

#[test]
fn tcp_mean_window_matches_rfc9438_tables_p_1e2_to_1e4() {
    check_cells(Transport::Tcp, &[0, 1, 2]);
}

#[test]
fn quic_mean_window_matches_rfc9438_tables_p_1e5() {
    check_cells(Transport::Quic, &[3]);
}

#[test]
fn tcp_mean_window_matches_rfc9438_tables_p_1e5() {
    check_cells(Transport::Tcp, &[3]);
}

#[test]
#[ignore = "p = 1e-6: 1.4e7 packets per run, about 40 s of CPU per transport (see the module doc)"]
fn quic_mean_window_matches_rfc9438_tables_p_1e6() {
    check_cells(Transport::Quic, &[4]);
}

#[test]
#[ignore = "p = 1e-6: 1.4e7 packets per run, about 40 s of CPU per transport (see the module doc)"]
fn tcp_mean_window_matches_rfc9438_tables_p_1e6() {
    check_cells(Transport::Tcp, &[4]);
}
