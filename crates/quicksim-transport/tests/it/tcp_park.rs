//! The TCP connection's compact encoding (`tcp/park.rs`): decoding gives the connection back bit
//! for bit (a transfer re-encoded after every event sends the same segments at the same times),
//! an idle connection encodes small, and `is_quiet` is false whenever something is going on.
//! Also `poll_transmit_into`: segments written over spent ones are the segments
//! `poll_transmit` returns.

use std::sync::Arc;

use quicksim_cc::algos::newreno::{self, NewReno};
use quicksim_cc::{Algorithm, CcSpec, CongestionController, InitCtx};
use quicksim_engine::{Rate, Rng, SimDuration, SimTime};
use quicksim_transport::tcp::{Connection, TcpConfig, TcpSegment, TcpStats, TlsVersion};
use quicksim_transport::Role;

use crate::net::{DropFn, Net};

fn ms(x: u64) -> SimDuration {
    SimDuration::from_millis(x)
}

fn pair(cfg: TcpConfig) -> (Connection, Connection) {
    let cfg = Arc::new(cfg);
    let a =
        Connection::new(Role::Client, Arc::clone(&cfg), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, cfg, SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    (a, b)
}

/// Replaces `c` by the decoding of its encoding; returns the encoded size.
fn reencode(c: &mut Connection) -> usize {
    let mut buf = Vec::new();
    c.encode(&mut buf);
    let cfg = Arc::new(c.config().clone());
    let (d, rest) = Connection::decode(&buf, cfg).expect("decodes");
    assert!(rest.is_empty(), "trailing bytes");
    *c = d;
    buf.len()
}

/// A 300 kB transfer and a reply over a lossy, reordering path, with the connections re-encoded
/// after every event (`coded`) or not. Returns the segments sent, the deliveries, both ends'
/// counters and the largest encoding seen.
#[allow(clippy::type_complexity)]
fn transfer(
    cfg: &TcpConfig,
    coded: bool,
    spent: Option<TcpSegment>,
) -> (Vec<(SimTime, usize, TcpSegment)>, [Vec<(SimTime, u64)>; 2], [TcpStats; 2], usize) {
    let (a, b) = pair(cfg.clone());
    let mut drop_rng = Rng::from_seed(7);
    let drop: DropFn<TcpSegment> = Box::new(move |_, _, _| drop_rng.range_u64(0, 1000) < 30);
    let mut n = Net::with_drop(a, b, ms(15), Some(Rate::mbps(20)), drop);
    n.spent = spent;
    let mut jit_rng = Rng::from_seed(8);
    n.jitter = Box::new(move |_, _| {
        if jit_rng.range_u64(0, 100) < 5 {
            SimDuration::from_micros(jit_rng.range_u64(0, 3_000))
        } else {
            SimDuration::ZERO
        }
    });
    let largest = std::rc::Rc::new(std::cell::Cell::new(0usize));
    if coded {
        let l = std::rc::Rc::clone(&largest);
        n.after_event = Some(Box::new(move |c: &mut Connection| l.set(l.get().max(reencode(c)))));
    }
    n.close_when_done[0] = true;
    n.write(0, 300_000);
    n.run_transfer(300_000, SimTime::from_secs(60)).expect("the transfer completes");
    n.write(1, 20_000);
    n.run_until(n.now + SimDuration::from_secs(30));
    assert_eq!(n.closed, [Some(None), Some(None)]);
    let stats = [n.eps[0].stats().clone(), n.eps[1].stats().clone()];
    (n.trace, n.deliveries, stats, largest.get())
}

#[test]
fn decoding_gives_the_connection_back_bit_for_bit() {
    let base = TcpConfig { cc: CcSpec::named("newreno").unwrap(), max_retries: 100, ..Default::default() };
    let cases = [
        ("SACK, PRR, timestamps, newreno", base.clone()),
        (
            "cubic, pacing, TLS 1.3",
            TcpConfig {
                cc: CcSpec::named("cubic").unwrap(),
                pacing: true,
                tls: TlsVersion::Tls13,
                ..base.clone()
            },
        ),
        (
            "no SACK (RFC 6582), no timestamps, ACK every segment, TLS 1.2",
            TcpConfig {
                sack: false,
                timestamps: false,
                ack_every: 1,
                tls: TlsVersion::Tls12,
                ..base.clone()
            },
        ),
        // BBR keeps its random stream in its state (probe waits), the connection keeps it until
        // the handshake makes the controller again: both are in the encoding.
        ("bbr", TcpConfig { cc: CcSpec::named("bbr").unwrap(), ..base.clone() }),
    ];
    for (name, cfg) in cases {
        let plain = transfer(&cfg, false, None);
        let coded = transfer(&cfg, true, None);
        let data = plain.0.iter().filter(|(_, d, p)| *d == 0 && p.len > 0).count();
        assert!(data > 200, "{name}: the run sends little ({data} data segments)");
        assert!(plain.2[0].retransmitted_segments > 3, "{name}: too little loss to recover from");
        println!(
            "{name}: {data} data segments, {} retransmitted, largest encoding {} B",
            plain.2[0].retransmitted_segments, coded.3
        );
        assert!(plain.0 == coded.0, "{name}: segments differ");
        assert_eq!(plain.1, coded.1, "{name}: deliveries differ");
        assert_eq!(plain.2, coded.2, "{name}: counters differ");
        // Mid-transfer state (the scoreboard, out-of-order ranges, TLS records) in a few kB.
        assert!(coded.3 > 0 && coded.3 < 16_000, "{name}: largest encoding {} B", coded.3);
    }
}

/// A segment with every field set, none as a new segment has it (SACK blocks, spilled
/// record marks, SYN options, CE): what `poll_transmit_into` must write over entirely.
fn junk_segment() -> TcpSegment {
    use quicksim_transport::tcp::{RecordMark, SynOptions, Timestamps};
    let mut s = TcpSegment::blank();
    s.seq = 999_999;
    s.ack = 777;
    s.len = 5;
    s.flags = 0xff;
    s.window = 1;
    s.ts = Some(Timestamps { val: SimTime::from_secs(9), ecr: SimTime::from_secs(8) });
    s.sack.extend([(1, 2), (3, 4), (5, 6), (7, 8)]);
    s.syn_opts = Some(SynOptions { mss: 99, wscale: Some(3), sack_permitted: true });
    let mark = RecordMark { offset: 5, wire: 6, app: 7, kind: 1 };
    s.records.extend([mark, mark, mark]);
    s.ecn = quicksim_transport::EcnCodepoint::Ce;
    s
}

/// The run loop writes each segment over a freed pool slot's old one
/// (`Endpoint::poll_transmit_into`): the same transfers as above, polled that way from a junk
/// segment, send exactly what `poll_transmit` sends.
#[test]
fn segments_written_over_spent_ones_are_the_same() {
    let base = TcpConfig { cc: CcSpec::named("newreno").unwrap(), max_retries: 100, ..Default::default() };
    for (name, cfg) in [
        (
            "SACK, PRR, timestamps, TLS 1.3, ECN",
            TcpConfig { tls: TlsVersion::Tls13, ecn: true, ..base.clone() },
        ),
        (
            "no SACK, no timestamps, TLS 1.2",
            TcpConfig { sack: false, timestamps: false, tls: TlsVersion::Tls12, ..base },
        ),
    ] {
        let plain = transfer(&cfg, false, None);
        let into = transfer(&cfg, false, Some(junk_segment()));
        let sacks = plain.0.iter().filter(|(_, _, p)| !p.sack.is_empty()).count();
        let marks = plain.0.iter().filter(|(_, _, p)| !p.records.is_empty()).count();
        println!("{name}: {} segments, {sacks} with SACK blocks, {marks} with record marks", plain.0.len());
        assert!(marks > 10, "{name}: too few record marks to check");
        // Segments with SACK blocks move them in; without SACK every segment's inline array is
        // only emptied: each path must have run.
        if cfg.sack {
            assert!(sacks > 10, "{name}: too few SACK blocks to check ({sacks})");
        } else {
            assert_eq!(sacks, 0, "{name}: SACK blocks without SACK");
        }
        assert!(plain.0 == into.0, "{name}: segments differ");
        assert_eq!(plain.1, into.1, "{name}: deliveries differ");
        assert_eq!(plain.2, into.2, "{name}: counters differ");
    }
}

/// An idle connection (handshake, 1 000 B each way, everything acknowledged, the delayed ACK
/// sent) is quiet at both ends and encodes into a few hundred bytes.
#[test]
fn an_idle_connection_is_quiet_and_encodes_small() {
    for (name, cfg) in [
        ("newreno", TcpConfig { cc: CcSpec::named("newreno").unwrap(), ..Default::default() }),
        (
            "cubic, TLS 1.3",
            TcpConfig { cc: CcSpec::named("cubic").unwrap(), tls: TlsVersion::Tls13, ..Default::default() },
        ),
    ] {
        let (a, b) = pair(cfg);
        let mut n = Net::with_drop(a, b, ms(10), Some(Rate::mbps(100)), Box::new(|_, _, _| false));
        assert!(!n.eps[0].is_quiet(), "{name}: the SYN is out");
        n.write(0, 1_000);
        n.run_until(SimTime::from_secs(1));
        n.write(1, 1_000);
        n.run_until(SimTime::from_secs(2));
        assert_eq!(n.delivered, [1_000, 1_000]);
        for side in 0..2 {
            assert!(n.eps[side].is_quiet(), "{name}: side {side} is not quiet: {:?}", n.eps[side].sender());
            let mut buf = Vec::new();
            n.eps[side].encode(&mut buf);
            println!("{name}, side {side}: {} B encoded", buf.len());
            // 170-200 B when written (newreno and cubic; the counters are most of it).
            assert!(buf.len() <= 256, "{name}, side {side}: {} B encoded", buf.len());
        }
    }
}

/// `is_quiet` is false while anything is going on: data in flight, unsent data, a hole at the
/// receiver; and for a connection whose controller was made at run time (never encodable).
#[test]
fn busy_or_unencodable_connections_are_not_quiet() {
    let cfg = TcpConfig { cc: CcSpec::named("newreno").unwrap(), ..Default::default() };
    // Drop the client's third data segment once: the server holds data out of order.
    let mut dropped = false;
    let drop: DropFn<TcpSegment> = Box::new(move |dir, _, p| {
        let hit = dir == 0 && p.len > 0 && p.seq == 1 + 2 * 1448 && !dropped;
        dropped |= hit;
        hit
    });
    let (a, b) = pair(cfg.clone());
    let mut n = Net::with_drop(a, b, ms(10), None, drop);
    n.write(0, 200_000);
    // The first flight (10 segments) left at 20 ms and arrives at 30 ms, the ACKs at 40 ms.
    n.run_until(SimTime::ZERO + SimDuration::from_micros(30_500));
    assert!(!n.eps[0].is_quiet(), "data in flight and unsent");
    assert!(n.eps[1].receiver().holds_out_of_order());
    assert!(!n.eps[1].is_quiet(), "a hole at the receiver");
    n.run_transfer(200_000, SimTime::from_secs(10)).expect("completes");
    n.run_until(n.now + SimDuration::from_secs(1));
    assert!(n.eps[0].is_quiet() && n.eps[1].is_quiet());

    let factory = Arc::new(|cx: &InitCtx| {
        Box::new(NewReno::new(&newreno::Config::default(), cx)) as Box<dyn CongestionController>
    });
    let plugin = TcpConfig { cc: CcSpec::Factory { name: "plugin".into(), factory }, ..cfg };
    let (a, b) = pair(plugin);
    let mut n = Net::with_drop(a, b, ms(10), None, Box::new(|_, _, _| false));
    n.write(0, 5_000);
    n.run_until(SimTime::from_secs(2));
    assert_eq!(n.delivered[1], 5_000);
    assert!(!n.eps[0].can_park() && !n.eps[0].is_quiet());
}
