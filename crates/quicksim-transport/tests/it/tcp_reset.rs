//! Aborting a TCP connection (RFC 9293 §3.10.5): the aborting end sends a RST and nothing else,
//! the peer accepts it at RCV.NXT and tears down (RFC 5961 §3: a RST elsewhere in the window is
//! challenged, and the aborted end answers the challenge ACK with a RST at the number it
//! acknowledges). RTT 20 ms, 10 Mbit/s, a 64 KiB receive window so little is in flight.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use quicksim_engine::{Rate, SimDuration, SimTime};
use quicksim_transport::tcp::segment::{ACK, RST};
use quicksim_transport::tcp::{Connection, TcpConfig, TcpSegment};
use quicksim_transport::Role;

use crate::net::{DropFn, Net};

fn net(drop: DropFn<TcpSegment>) -> Net<Connection> {
    let c = TcpConfig {
        cc: quicksim_cc::CcSpec::named("newreno").unwrap(),
        recv_buffer: 64 << 10,
        ..Default::default()
    };
    let a =
        Connection::new(Role::Client, Arc::new(c.clone()), SimTime::ZERO, crate::harness::cc_rng(0)).unwrap();
    let b = Connection::new(Role::Server, Arc::new(c), SimTime::ZERO, crate::harness::cc_rng(1)).unwrap();
    Net::with_drop(a, b, SimDuration::from_millis(10), Some(Rate::mbps(10)), drop)
}

/// Aborts the client at `at`, in the middle of an 8 MB transfer, and runs to 3 s.
fn abort_at(n: &mut Net<Connection>, at: SimTime) {
    n.write(0, 8_000_000);
    n.run_until(at);
    n.to_write[0] = 0;
    let now = n.now;
    n.eps[0].abort(now);
    n.flush();
    n.run_until(SimTime::from_secs(3));
}

#[test]
fn abort_sends_a_rst_and_the_peer_tears_down() {
    let mut n = net(Box::new(|_, _, _| false));
    let at = SimTime::from_secs(1);
    let snd_nxt = {
        n.write(0, 8_000_000);
        n.run_until(at);
        n.eps[0].sender().snd_nxt
    };
    n.to_write[0] = 0;
    n.eps[0].abort(at);
    n.flush();
    n.run_until(SimTime::from_secs(3));
    // After the abort the client sends RSTs only: first its own (RST+ACK at SND.NXT).
    let after: Vec<&TcpSegment> = n.sent_by(0).filter(|(t, _)| *t >= at).map(|(_, p)| p).collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|p| p.is_rst() && p.len == 0), "{after:?}");
    assert_eq!((after[0].flags, after[0].seq), (RST | ACK, snd_nxt));
    // The others answer the server's ACKs that were in flight (RFC 9293 §3.10.7.1); every
    // one reaches the server, whose connection is gone by then (RSTs are never answered).
    let rx = n.eps[1].stats();
    assert!(after.len() > 1);
    assert!(after[1..].iter().all(|p| p.flags == RST));
    assert_eq!(rx.rsts_received, after.len() as u64);
    assert_eq!(rx.rsts_sent, 0);
    assert_eq!(n.eps[0].stats().rsts_sent, after.len() as u64);
    assert!(n.eps[0].is_closed() && n.eps[1].is_closed());
    assert_eq!(n.closed, [Some(None), Some(None)]);
    assert_eq!((n.eps[0].poll_timeout(), n.eps[1].poll_timeout()), (None, None));
    assert!(n.eps[0].is_quiet() && n.eps[1].is_quiet());
    // Nothing was delivered after the data in flight at the abort (64 KiB: 53 ms at 10 Mbit/s).
    let last = n.deliveries[1].last().unwrap().0;
    assert!(last < at + SimDuration::from_millis(80), "last delivery at {last}");
    assert_eq!(n.delivered[1], snd_nxt - 1);
    assert!(n.delivered[1] < 8_000_000);
    // The server, reset, stopped sending too: its last segment is before the RST reached it.
    let server_last = n.sent_by(1).map(|(t, _)| t).last().unwrap();
    assert!(server_last < at + SimDuration::from_millis(80), "server sent at {server_last}");
}

/// Data segments lost just before the abort: the RST (at SND.NXT) is beyond the receiver's
/// RCV.NXT, inside its window, so it gets a challenge ACK; the aborted client answers that ACK
/// with a RST at the number it acknowledges, which the server accepts.
#[test]
fn a_rst_past_a_hole_is_challenged_then_accepted() {
    let cut = Rc::new(Cell::new(false));
    let c2 = Rc::clone(&cut);
    let mut n = net(Box::new(move |dir, _, p: &TcpSegment| dir == 0 && p.len > 0 && c2.get()));
    n.write(0, 8_000_000);
    n.run_until(SimTime::from_secs(1));
    cut.set(true);
    let at = SimTime::from_secs(1) + SimDuration::from_millis(5);
    abort_at(&mut n, at);
    let first = n.sent_by(0).find(|(t, p)| *t >= at && p.is_rst()).unwrap().1.seq;
    let rx_end = n.delivered[1] + 1;
    assert!(first > rx_end, "the first RST {first} lies past the hole at {rx_end}");
    // The challenge ACK acknowledges RCV.NXT; the client's answering RST carries that number.
    let answer = n.sent_by(0).filter(|(_, p)| p.is_rst() && p.seq == rx_end).count();
    assert!(answer >= 1);
    assert!(n.eps[1].is_closed(), "the server tore down");
    assert!(n.eps[1].stats().rsts_received >= 2);
}

/// A graceful close after an abort, or a second abort, changes nothing; an abort before the
/// handshake completes sends nothing, and the server's SYN-ACK is answered with a RST that
/// resets it.
#[test]
fn abort_before_the_handshake_sends_no_rst() {
    let mut n = net(Box::new(|_, _, _| false));
    n.flush(); // the SYN is out
    let now = n.now;
    n.eps[0].abort(now);
    n.eps[0].abort(now);
    n.eps[0].close(now);
    n.flush();
    n.run_until(SimTime::from_secs(1));
    let client: Vec<&TcpSegment> = n.sent_by(0).map(|(_, p)| p).collect();
    assert!(client[0].is_syn() && !client[0].is_rst());
    // The SYN-ACK (acknowledging 1) finds no connection: RST with sequence number 1.
    assert!(client[1..].iter().all(|p| p.is_rst() && !p.has_ack() && p.seq == 1), "{client:?}");
    assert!(n.eps[1].is_closed());
    assert_eq!(n.closed, [Some(None), Some(None)]);
}
