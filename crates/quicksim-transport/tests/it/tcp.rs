//! Behaviour tests of the TCP model in the style of ns-3's TCP test suites: two connections
//! over `net::Net`, chosen segments dropped, then the sender's and receiver's state checked
//! against numbers computed by hand (in the comments).
//!
//! Unless a test says otherwise: one-way delay 10 ms (RTT 20 ms), no rate limit, MTU 1500 with
//! timestamps, so SMSS = 1500 − 40 − 12 = 1448 B and a data segment is 32 + 1448 B.

use std::sync::Arc;

use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::tcp::sack::{LOST, RETRANS, SACKED};
use quicksim_transport::tcp::{CaState, Connection, TcpConfig, TcpSegment, TlsVersion};
use quicksim_transport::{Role, WirePacket};

use crate::net::{DropFn, Net};

const SMSS: u64 = 1448;

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}
fn at_ms(x: u64) -> SimTime {
    SimTime::from_millis(x)
}

fn cfg() -> TcpConfig {
    TcpConfig { cc: quicksim_cc::CcSpec::named("newreno").unwrap(), ..Default::default() }
}

fn net(c: TcpConfig, s: TcpConfig, rate: Option<Rate>, drop: DropFn<TcpSegment>) -> Net<Connection> {
    let a = Connection::new(Role::Client, Arc::new(c), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, Arc::new(s), SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    Net::with_drop(a, b, ms(10), rate, drop)
}

/// Drops the client's data segments whose sequence numbers start data segment `i` (counting
/// from 0) the first `times` times they are sent.
fn drop_data(segs: &'static [u64], times: u32) -> DropFn<TcpSegment> {
    let mut seen = std::collections::BTreeMap::<u64, u32>::new();
    Box::new(move |dir, _, p: &TcpSegment| {
        if dir != 0 || p.len == 0 {
            return false;
        }
        let i = (p.seq - 1) / SMSS;
        if !segs.contains(&i) || !(p.seq - 1).is_multiple_of(SMSS) {
            return false;
        }
        let n = seen.entry(i).or_default();
        *n += 1;
        *n <= times
    })
}

/// (time, data segment index) of every retransmission by the client.
fn retransmissions(n: &Net<Connection>) -> Vec<(SimTime, u64)> {
    let mut first = std::collections::BTreeSet::new();
    let mut out = vec![];
    for (t, p) in n.sent_by(0) {
        if p.len > 0 && !first.insert(p.seq) {
            out.push((t, (p.seq - 1) / SMSS));
        }
    }
    out
}

fn seg_index_with(c: &Connection, mark: u8) -> Vec<u64> {
    c.sender().board.iter().filter(|s| s.has(mark)).map(|s| (s.seq - 1) / SMSS).collect()
}

#[test]
fn handshake_sizes_and_first_byte() {
    let mut n = net(cfg(), cfg(), None, Box::new(|_, _, _| false));
    n.write(0, 1000);
    n.run_until(at_ms(100));
    // SYN at 0, SYN-ACK back at 20 ms: the client is established after 1 RTT; the server when
    // the third segment (carrying the data) arrives at 30 ms.
    assert_eq!(n.established, [Some(at_ms(20)), Some(at_ms(30))]);
    assert_eq!(n.deliveries[1], vec![(at_ms(30), 1000)]);
    let syn = &n.trace[0].2;
    let syn_ack = &n.trace[1].2;
    // 20 B + MSS 4 + SACK-permitted/TS 12 + NOP WS 4 = 40 B, as Linux's SYN.
    assert_eq!((syn.size_bytes(), syn_ack.size_bytes()), (40, 40));
    // The data segment: 32 B header (timestamps) + 1000 B.
    let data = n.sent_by(0).find(|(_, p)| p.len > 0).unwrap().1;
    assert_eq!(data.size_bytes(), 1032);
    assert_eq!(n.eps[0].smss(), SMSS);
    // Handshake RTT sample 20 ms (SRTT 20, RTTVAR 10); the lone data segment's ACK is delayed
    // 40 ms and echoes its timestamp: sample 60 ms, SRTT = 7/8·20 + 1/8·60 = 25 ms, RTTVAR =
    // 3/4·10 + 1/4·40 = 17.5 ms, RTO = max(200 ms, 25 + 70) = 200 ms.
    let m = n.eps[0].metrics();
    assert_eq!(
        (m.smoothed_rtt, m.rttvar, m.latest_rtt),
        (ms(25), Some(SimDuration::from_micros(17_500)), ms(60))
    );
    assert_eq!((n.eps[0].rto_value(), m.rto), (ms(200), Some(ms(200))));
}

#[test]
fn syn_loss_retransmits_after_one_second() {
    for ts in [true, false] {
        let c = TcpConfig { timestamps: ts, ..cfg() };
        let s = TcpConfig { timestamps: ts, ..cfg() };
        let mut n = net(c, s, None, Box::new(|dir, i, _| dir == 0 && i == 0));
        n.run_until(at_ms(1100));
        // SYN at 0 lost, again at 1 s (RFC 6298 §2.1), SYN-ACK back 1 RTT later.
        assert_eq!(n.established[0], Some(at_ms(1020)), "ts {ts}");
        assert_eq!(n.eps[0].stats().syn_retransmits, 1);
        if ts {
            // The SYN-ACK echoes the second SYN's timestamp: a valid 20 ms sample.
            assert_eq!(n.eps[0].rto_value(), ms(200));
        } else {
            // Karn: no sample from a retransmitted SYN; RFC 6298 §5.7: RTO 3 s.
            assert_eq!(n.eps[0].metrics().smoothed_rtt, SimDuration::ZERO);
            assert_eq!(n.eps[0].rto_value(), ms(3000));
        }
    }
}

#[test]
fn fast_retransmit_after_three_duplicate_acks() {
    // ack_every = 1 so each segment gets its own ACK.
    let c = TcpConfig { ack_every: 1, prr: false, ..cfg() };
    let mut n = net(c.clone(), c, None, drop_data(&[2], 1));
    n.write(0, 200 * SMSS);
    // t = 20 ms: established, IW = 10 segments (min(10·1448, max(14720, 2·1448)) = 14 480 B).
    // Segment 2 lost. t = 30 ms: the server ACKs 0 and 1, then a duplicate ACK (with SACK) for
    // each of 3..9. t = 40 ms: the ACKs of 0 and 1 and the SACKs of 3 and 4 grow cwnd in slow
    // start to 14 segments (20 272 B) and send 10..17; the third duplicate (SACK of 5) marks 2
    // lost (3 SACKed segments above it) and starts recovery.
    n.run_until(at_ms(40));
    let c0 = &n.eps[0];
    assert_eq!(c0.sender().state, CaState::Recovery);
    assert_eq!(retransmissions(&n), vec![(at_ms(40), 2)]);
    assert_eq!(c0.stats().sack_recoveries, 1);
    // ssthresh = cwnd / 2 = 20 272 / 2 = 10 136 B (the controller's rule).
    assert_eq!(c0.metrics().ssthresh_bytes, 10_136);
    assert_eq!(c0.sender().recovery_point, 1 + 18 * SMSS);
    // The third duplicate ACK triggered it: dupacks counted until recovery = 3.
    assert_eq!(c0.sender().dupacks, 3);
    // t = 60 ms: the ACK of the retransmission covers the recovery point (segment 18):
    // recovery ends with cwnd = ssthresh, and this ACK grows it once (TCP's per-ACK rule, RFC
    // 5681 §3.1; the retransmission left at the instant the recovery started, which counts as
    // after it): 10 136 + ⌊1448² / 10 136⌋ = 10 342.
    n.run_until(at_ms(60));
    let c0 = &n.eps[0];
    assert_eq!(c0.sender().state, CaState::Open);
    assert_eq!(c0.metrics().cwnd_bytes, 10_342);
    let done = n.run_transfer(200 * SMSS, SimTime::from_secs(10)).unwrap();
    assert!(done < SimTime::from_secs(1));
    let st = n.eps[0].stats();
    assert_eq!((st.fast_retransmits, st.retransmitted_segments, st.rtos), (1, 1, 0));
}

#[test]
fn rfc6675_scoreboard_and_retransmission_order() {
    // Segments 2, 4 and 6 of the initial window lost, pure RFC 6675 (no PRR).
    let c = TcpConfig { ack_every: 1, prr: false, ..cfg() };
    let mut n = net(c.clone(), c, None, drop_data(&[2, 4, 6], 1));
    n.write(0, 100 * SMSS);
    // t = 40 ms, after the seven ACKs of t = 30 ms: the ACKs of 0, 1 and the SACKs of 3, 5
    // grow cwnd to 14 segments and send 10..17; SACKed 3, 5, 7, 8, 9; IsLost (3 SACKed
    // segments above) marks 2 (3, 5, 7 above), 4 (5, 7, 8) and 6 (7, 8, 9). Recovery starts
    // at the SACK of 7: ssthresh = cwnd = 20 272 / 2 = 10 136 B = 7 segments. Only 2 is
    // retransmitted: pipe = 16 outstanding − 5 SACKed − 3 lost + 1 retransmitted = 9 segments.
    n.run_until(at_ms(40));
    let c0 = &n.eps[0];
    assert_eq!(seg_index_with(c0, SACKED), vec![3, 5, 7, 8, 9]);
    assert_eq!(seg_index_with(c0, LOST), vec![2, 4, 6]);
    assert_eq!(seg_index_with(c0, RETRANS), vec![2]);
    assert_eq!(c0.sender().board.pipe(), 9 * SMSS);
    // t = 60 ms: the SACKs of 10..17 bring pipe to 6 segments, below cwnd, and NextSeg rule 1
    // picks the lost segments in order: 4, then 6, before any new data.
    n.run_until(at_ms(60));
    assert_eq!(retransmissions(&n), vec![(at_ms(40), 2), (at_ms(60), 4), (at_ms(60), 6)]);
    n.run_transfer(100 * SMSS, SimTime::from_secs(10)).unwrap();
    let st = n.eps[0].stats();
    assert_eq!((st.sack_recoveries, st.rtos, st.retransmitted_segments), (1, 0, 3));

    // With PRR the same three segments go out, once each, in one recovery.
    let c = TcpConfig { ack_every: 1, prr: true, ..cfg() };
    let mut n = net(c.clone(), c, None, drop_data(&[2, 4, 6], 1));
    n.write(0, 100 * SMSS);
    n.run_transfer(100 * SMSS, SimTime::from_secs(10)).unwrap();
    let order: Vec<u64> = retransmissions(&n).into_iter().map(|r| r.1).collect();
    assert_eq!(order, vec![2, 4, 6]);
    let st = n.eps[0].stats();
    assert_eq!((st.sack_recoveries, st.rtos), (1, 0));
}

#[test]
fn newreno_partial_acks_without_sack() {
    let c = TcpConfig { ack_every: 1, sack: false, ..cfg() };
    let mut n = net(c.clone(), c, None, drop_data(&[2, 5], 1));
    n.write(0, 100 * SMSS);
    // t = 40 ms: ACKs of 0, 1 (cwnd 17 376 B, sends 10..13), duplicates 1 and 2 send 14 and
    // 15 (limited transmit, RFC 3042), duplicate 3 starts recovery: ssthresh 8688, retransmit 2.
    n.run_until(at_ms(40));
    assert_eq!(n.eps[0].sender().state, CaState::Recovery);
    assert_eq!(n.eps[0].metrics().ssthresh_bytes, 8688);
    assert_eq!(n.eps[0].sender().recovery_point, 1 + 16 * SMSS);
    // t = 60 ms: the retransmission of 2 is acknowledged up to the hole at 5: a partial ACK
    // (RFC 6582): 5 is retransmitted at once, no timeout, still in recovery.
    n.run_until(at_ms(60));
    assert_eq!(retransmissions(&n), vec![(at_ms(40), 2), (at_ms(60), 5)]);
    assert_eq!(n.eps[0].sender().state, CaState::Recovery);
    assert_eq!(n.eps[0].sender().snd_una, 1 + 5 * SMSS);
    // t = 80 ms: the ACK of 5 covers the recovery point: one reduction for both losses.
    n.run_until(at_ms(80));
    assert_eq!(n.eps[0].sender().state, CaState::Open);
    assert_eq!(n.eps[0].metrics().ssthresh_bytes, 8688);
    n.run_transfer(100 * SMSS, SimTime::from_secs(10)).unwrap();
    let st = n.eps[0].stats();
    assert_eq!((st.reno_recoveries, st.sack_recoveries, st.fast_retransmits, st.rtos), (1, 0, 2, 0));
}

#[test]
fn rto_backoff_and_karns_rule() {
    // No timestamps, so Karn's rule decides the samples. SMSS = 1460 B.
    let c = TcpConfig { timestamps: false, ack_every: 1, ..cfg() };
    let drop: DropFn<TcpSegment> = {
        let mut sent = 0;
        Box::new(move |dir, _, p: &TcpSegment| {
            if dir == 0 && p.len > 0 {
                sent += 1;
                return sent <= 2; // the segment and its first retransmission
            }
            false
        })
    };
    let mut n = net(c.clone(), c, None, drop);
    n.write(0, 1000);
    // Handshake sample 20 ms: RTO 200 ms. Data at 20 ms lost; RTO at 220 ms (lost again),
    // backoff → 400 ms, fires at 620 ms; backoff → 800 ms.
    n.run_until(at_ms(221));
    let m = n.eps[0].metrics();
    // RTO: loss window of one segment and ssthresh = max(FlightSize/2, 2·SMSS)
    // = max(1000/2, 2920) = 2920 (RFC 5681 §3.1 eq. 4: one 1000 B segment was in flight).
    assert_eq!((m.cwnd_bytes, m.ssthresh_bytes), (1460, 2920));
    assert_eq!(n.eps[0].rto_deadline(), Some(at_ms(620)));
    n.run_until(at_ms(630));
    assert_eq!(retransmissions_any(&n), vec![at_ms(220), at_ms(620)]);
    assert_eq!(n.eps[0].stats().rtos, 2);
    // t = 640 ms: the ACK of the retransmission. Karn: no sample (it would say 620 ms), and
    // the backed-off RTO stays: 200 ms · 4 = 800 ms.
    n.run_until(at_ms(640));
    assert_eq!(n.deliveries[1], vec![(at_ms(630), 1000)]);
    assert_eq!(n.eps[0].metrics().latest_rtt, ms(20));
    assert_eq!(n.eps[0].rto().backoff, 2);
    assert_eq!(n.eps[0].rto_value(), ms(800));
    // New data at 640 ms, never retransmitted: its ACK at 660 ms is a valid 20 ms sample,
    // which ends the backoff (SRTT 20, RTTVAR 3/4·10 = 7.5 → RTO max(200, 50) = 200 ms).
    n.write(0, 1000);
    n.run_until(at_ms(660));
    assert_eq!(n.eps[0].rto().backoff, 0);
    assert_eq!(n.eps[0].rto_value(), ms(200));
    assert_eq!(n.eps[0].metrics().rttvar, Some(SimDuration::from_micros(7500)));
}

/// Times of client data segments sent again (same sequence number).
fn retransmissions_any(n: &Net<Connection>) -> Vec<SimTime> {
    let mut first = std::collections::BTreeSet::new();
    n.sent_by(0).filter(|(_, p)| p.len > 0 && !first.insert(p.seq)).map(|(t, _)| t).collect()
}

#[test]
fn rtt_from_timestamps_across_retransmissions() {
    // As above with timestamps: the ACK of the retransmission echoes the retransmission's
    // TSval (RFC 7323 §4), so it is a valid 20 ms sample and the backoff ends at once.
    let c = TcpConfig { ack_every: 1, ..cfg() };
    let drop: DropFn<TcpSegment> = {
        let mut sent = 0;
        Box::new(move |dir, _, p: &TcpSegment| {
            if dir == 0 && p.len > 0 {
                sent += 1;
                return sent <= 2;
            }
            false
        })
    };
    let mut n = net(c.clone(), c, None, drop);
    n.write(0, 1000);
    n.run_until(at_ms(640));
    assert_eq!(n.eps[0].stats().rtos, 2);
    let m = n.eps[0].metrics();
    assert_eq!(m.latest_rtt, ms(20));
    // Two 20 ms samples: SRTT 20, RTTVAR 10 → 7.5 ms; backoff 0, RTO 200 ms.
    assert_eq!((m.smoothed_rtt, m.rttvar, m.pto_count), (ms(20), Some(SimDuration::from_micros(7500)), 0));
    assert_eq!(n.eps[0].rto_value(), ms(200));
}

#[test]
fn delayed_ack_timer_and_every_second_segment() {
    // One segment: the server holds its ACK for 40 ms (t = 30 → 70 ms).
    let mut n = net(cfg(), cfg(), None, Box::new(|_, _, _| false));
    n.write(0, 1000);
    n.run_until(at_ms(200));
    let acks: Vec<SimTime> =
        n.sent_by(1).filter(|(_, p)| p.len == 0 && !p.is_syn()).map(|(t, _)| t).collect();
    assert_eq!(acks, vec![at_ms(70)]);
    assert_eq!(n.eps[1].stats().delack_timer_fires, 1);
    // The echoed timestamp is the segment's: the sample includes the delay, 80 − 20 = 60 ms.
    assert_eq!(n.eps[0].metrics().latest_rtt, ms(60));

    // Two segments: ACK at once on the second (t = 30 ms), no timer.
    let mut n = net(cfg(), cfg(), None, Box::new(|_, _, _| false));
    n.write(0, 2 * SMSS);
    n.run_until(at_ms(200));
    let acks: Vec<SimTime> =
        n.sent_by(1).filter(|(_, p)| p.len == 0 && !p.is_syn()).map(|(t, _)| t).collect();
    assert_eq!(acks, vec![at_ms(30)]);
    assert_eq!(n.eps[1].stats().delack_timer_fires, 0);

    // ack_every = 1: every segment at once.
    let c = TcpConfig { ack_every: 1, ..cfg() };
    let mut n = net(c.clone(), c, None, Box::new(|_, _, _| false));
    n.write(0, 3 * SMSS);
    n.run_until(at_ms(200));
    assert_eq!(n.eps[1].stats().pure_acks_sent, 3);
}

#[test]
fn immediate_acks_on_reordering() {
    let mut n = net(cfg(), cfg(), None, Box::new(|_, _, _| false));
    // Data segment 1 (the client's fourth segment: SYN, then data 0, 1, ...) 5 ms late.
    n.jitter = Box::new(|dir, i| if dir == 0 && i == 2 { ms(5) } else { SimDuration::ZERO });
    n.write(0, 4 * SMSS);
    n.run_until(at_ms(200));
    // t = 30: segment 0 starts the timer; 2 is out of order → ACK at once (acks 0, SACKs 2);
    // 3 → ACK at once; t = 35: 1 fills the hole → ACK at once. The timer never fires.
    let acks: Vec<(SimTime, u64, usize)> = n
        .sent_by(1)
        .filter(|(_, p)| p.len == 0 && !p.is_syn())
        .map(|(t, p)| (t, p.ack, p.sack.len()))
        .collect();
    assert_eq!(acks, vec![(at_ms(30), 1 + SMSS, 1), (at_ms(30), 1 + SMSS, 1), (at_ms(35), 1 + 4 * SMSS, 0)]);
    assert_eq!(n.eps[1].stats().delack_timer_fires, 0);
    // The second ACK reports one block [2, 4) (segments 2 and 3 merged).
    let second = n.sent_by(1).filter(|(_, p)| p.len == 0 && !p.is_syn()).nth(1).unwrap().1;
    assert_eq!(second.sack[0], (1 + 2 * SMSS, 1 + 4 * SMSS));
    assert_eq!(second.size_bytes(), 32 + 12);
}

#[test]
fn zero_window_persist_and_slow_reader() {
    // The server reads only when told; its buffer holds exactly 4 segments.
    let s = TcpConfig { manual_read: true, recv_buffer: 4 * SMSS, ack_every: 2, ..cfg() };
    let mut n = net(cfg(), s, None, Box::new(|_, _, _| false));
    n.write(0, 10 * SMSS);
    // t = 20: 4 segments fill the 5792 B window. t = 30: ACKs after 2 (window 2896) and 4
    // (window 0). t = 40: nothing in flight, window 0: persist timer = RTO = 200 ms.
    n.run_until(at_ms(41));
    assert_eq!(n.eps[0].persist_deadline(), Some(at_ms(240)));
    // Probes at 240 and 240 + 400 = 640 ms (backoff doubles), each answered with window 0.
    n.run_until(at_ms(999));
    let probes: Vec<SimTime> =
        n.sent_by(0).filter(|(_, p)| p.len == 0 && p.seq == 4 * SMSS).map(|(t, _)| t).collect();
    assert_eq!(probes, vec![at_ms(240), at_ms(640)]);
    assert_eq!(n.eps[0].stats().zero_window_probes, 2);
    assert_eq!(n.eps[0].stats().rtos, 0);
    let answers: Vec<u64> = n.sent_by(1).filter(|(t, _)| *t > at_ms(200)).map(|(_, p)| p.window).collect();
    assert_eq!(answers, vec![0, 0]);
    assert_eq!(n.delivered[1], 0);
    // t = 1 s: the application reads everything: a window update (0 → 5792 B) goes at once,
    // and the transfer resumes.
    n.now = SimTime::from_secs(1);
    assert_eq!(n.eps[1].read(n.now, u64::MAX), 4 * SMSS);
    n.flush();
    let update = n.sent_by(1).last().unwrap();
    assert_eq!((update.0, update.1.window), (SimTime::from_secs(1), 4 * SMSS));
    for step in 1..=20 {
        n.run_until(SimTime::from_secs(1) + ms(50 * step));
        let t = n.now;
        n.eps[1].read(t, u64::MAX);
        n.flush();
    }
    assert_eq!(n.delivered[1], 10 * SMSS);
    assert_eq!(n.eps[0].persist_deadline(), None);
}

/// 10 Mbit/s: 0.8 µs per byte on the wire (IP included).
fn ser_us(bytes: u64) -> f64 {
    bytes as f64 * 0.8
}

#[test]
fn tls_handshake_round_trips() {
    let rate = Some(Rate::mbps(10));
    let run = |tls: TlsVersion| {
        let c = TcpConfig { tls, ..cfg() };
        let mut n = net(c.clone(), c, rate, Box::new(|_, _, _| false));
        n.write(0, 1000);
        n.run_until(at_ms(500));
        assert_eq!(n.delivered[1], 1000);
        n
    };
    // Hand computation, times in µs (10 ms one way; wire sizes with 20 B of IP):
    // SYN 60 B: 48 → server 10 048; SYN-ACK 60 B → client 20 096 (1 RTT + 2·48 µs).
    let tcp_done = 20_000.0 + 2.0 * ser_us(60);
    // No TLS: data 1000 + 32 + 20 = 1052 B → server at 20 096 + 841.6 + 10 000.
    let n = run(TlsVersion::None);
    let want = tcp_done + ser_us(1052) + 10_000.0;
    assert_eq!(n.eps[1].stats().first_app_byte_at, Some(at_us_f(want)));

    // TLS 1.3: ClientHello 517 + 32 + 20 = 569 B → server at 20 096 + 455.2 + 10 000 =
    // 30 551.2; server flight 4500 B = 1448 · 3 + 156: IP packets 1500, 1500, 1500, 208 →
    // 3766.4 µs, last at the client at 44 317.6 (client established); Finished 64 B + record
    // 1000 + 22 B = 1086 B in one 1138 B packet → server at 44 317.6 + 910.4 + 10 000.
    let ch = tcp_done + ser_us(569) + 10_000.0;
    let sflight = ch + ser_us(3 * 1500 + 208) + 10_000.0;
    let n = run(TlsVersion::Tls13);
    assert_eq!(n.established[0], Some(at_us_f(sflight)));
    let want13 = sflight + ser_us(64 + 1022 + 52) + 10_000.0;
    assert_eq!(n.eps[1].stats().first_app_byte_at, Some(at_us_f(want13)));
    assert_eq!(n.established[1], Some(at_us_f(want13)));
    // About 2.5 RTT + serialization, against 1.5 RTT without TLS.
    assert!((want13 - 55_228.0).abs() < 1e-6);

    // TLS 1.2: after the server flight, the client's 93 B flight (145 B packet) → server at
    // 44 317.6 + 116 + 10 000; the server's 51 B CCS + Finished (103 B) → client at + 82.4 +
    // 10 000 (client established); data record 1000 + 29 B → 1081 B packet → server.
    let n = run(TlsVersion::Tls12);
    let f2 = sflight + ser_us(145) + 10_000.0;
    let f3 = f2 + ser_us(103) + 10_000.0;
    assert_eq!(n.established[1], Some(at_us_f(f2)));
    assert_eq!(n.established[0], Some(at_us_f(f3)));
    let want12 = f3 + ser_us(1029 + 52) + 10_000.0;
    assert_eq!(n.eps[1].stats().first_app_byte_at, Some(at_us_f(want12)));
    assert!((want12 - 75_380.8).abs() < 1e-6);
}

/// A time given in (fractional) µs, exact to the picosecond for the values used here.
fn at_us_f(us: f64) -> SimTime {
    SimTime((us * 1e6).round() as u64)
}

#[test]
fn goodput_is_rate_times_mss_over_packet() {
    // Bulk transfer over 10 Mbit/s with an unbounded queue: once the window exceeds the BDP
    // the link never idles, so goodput = rate · SMSS / (SMSS + 32 B TCP + 20 B IP).
    for mtu in [1280u64, 1500, 9000] {
        let c = TcpConfig { mtu, ..cfg() };
        let mut n = net(c.clone(), c, Some(Rate::mbps(10)), Box::new(|_, _, _| false));
        n.write(0, 8_000_000);
        n.run_until(SimTime::from_secs(2));
        let d0 = n.delivered[1];
        n.run_until(SimTime::from_secs(5));
        let goodput = (n.delivered[1] - d0) as f64 / 3.0;
        let smss = (mtu - 52) as f64;
        let theory = 10e6 / 8.0 * smss / mtu as f64;
        // Deliveries come in segment quanta: allow one segment per measured interval's ends.
        assert!((goodput / theory - 1.0).abs() < 0.005, "mtu {mtu}: {goodput} vs {theory}");
    }
}

#[test]
fn close_exchanges_fins() {
    let mut n = net(cfg(), cfg(), None, Box::new(|_, _, _| false));
    n.close_when_done[0] = true;
    n.write(0, 3 * SMSS);
    n.run_until(SimTime::from_secs(2));
    assert_eq!(n.delivered[1], 3 * SMSS);
    assert_eq!(n.closed, [Some(None), Some(None)]);
    assert!(n.eps[0].is_closed() && n.eps[1].is_closed());
    assert_eq!(n.eps[0].poll_timeout(), None);
}

#[test]
fn config_from_a_tcp_table() {
    let c: TcpConfig =
        serde_json::from_str(r#"{"min_rto": "1s", "tls": "1.3", "recv_buffer": "1MiB"}"#).unwrap();
    assert_eq!(c.min_rto, SimDuration::from_secs(1));
    assert_eq!(c.tls, TlsVersion::Tls13);
    assert_eq!(c.recv_buffer, 1 << 20);
    assert_eq!(c.delack_timeout, ms(40)); // untouched fields keep their defaults
    let e = serde_json::from_str::<TcpConfig>(r#"{"min_rt0": "1s"}"#).unwrap_err().to_string();
    assert!(e.contains("unknown field `min_rt0`"), "{e}");
    let e = serde_json::from_str::<TcpConfig>(r#"{"delack_timeout": "40"}"#).unwrap_err().to_string();
    assert!(e.contains("needs a unit"), "{e}");
}

/// A whole write is taken in full while the send buffer is below its size and refused once it
/// is full (the buffer may pass its size by up to one write); `write` takes only what fits.
#[test]
fn whole_writes_may_pass_the_send_buffer() {
    let c = TcpConfig { send_buffer: 100_000, ..cfg() };
    let mut a =
        Connection::new(Role::Client, Arc::new(c.clone()), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let mut b = Connection::new(Role::Client, Arc::new(c), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    assert_eq!(
        (a.write_whole(SimTime::ZERO, 30_000), a.write_whole(SimTime::ZERO, 100_000)),
        (30_000, 100_000)
    );
    assert_eq!((a.queued_bytes(), a.send_space()), (130_000, 0));
    assert_eq!(a.write_whole(SimTime::ZERO, 100_000), 0, "full: refused");
    assert_eq!((b.write(SimTime::ZERO, 30_000), b.write(SimTime::ZERO, 100_000)), (30_000, 70_000));
    assert_eq!(b.queued_bytes(), 100_000);
}
