//! TLS over TCP, as byte counts: handshake flights and application-data records in the TCP
//! stream, with the records' real overheads.
//!
//! The handshake flights (numbered in stream order, both directions together):
//! - TLS 1.3 (RFC 8446 §2): 0 ClientHello → 1 server ServerHello..Finished → 2 client Finished.
//!   The client sends application data right after its Finished: one round trip after TCP's.
//! - TLS 1.2 (RFC 5246 §7.3): 0 ClientHello → 1 ServerHello, Certificate, ServerKeyExchange,
//!   ServerHelloDone → 2 ClientKeyExchange, ChangeCipherSpec, Finished → 3 server
//!   ChangeCipherSpec, Finished. The client sends data after flight 3: two round trips (no
//!   False Start, RFC 7918).
//!
//! A side is established (may send application data, `AppEvent::Established`) when it has
//! received the peer's last flight: the 1.3 client on flight 1, the 1.3 server on flight 2,
//! the 1.2 server on flight 2 (it sends flight 3 at once), the 1.2 client on flight 3.
//!
//! Application data is cut into records lazily, when TCP has room for more stream bytes: a
//! record carries min(unframed bytes, `tls_record_size`) so a saturated sender writes full 16 kB
//! records and a trickling one small records, as a TLS library over a non-blocking socket does.
//! Record overhead: 1.3 = 5 B header + 1 B content type + 16 B AEAD tag (RFC 8446 §5.2);
//! 1.2 AES-GCM = 5 B header + 8 B explicit nonce + 16 B tag (RFC 5288 §3). Application bytes
//! reach the receiving application only when their whole record has arrived (it must be
//! authenticated before it is decrypted).

use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::collections::VecDeque;

use super::config::{TcpConfig, TlsVersion};
use super::segment::{RecordMark, APP_DATA};
use crate::endpoint::Role;

/// Per-record overhead on the wire.
pub fn record_overhead(v: TlsVersion) -> u64 {
    match v {
        TlsVersion::None => 0,
        // RFC 8446 §5.2: TLSCiphertext header 5 B, inner content type 1 B, AEAD tag 16 B.
        TlsVersion::Tls13 => 5 + 1 + 16,
        // RFC 5246 §6.2.3.3 with RFC 5288 §3: header 5 B, explicit nonce 8 B, GCM tag 16 B.
        TlsVersion::Tls12 => 5 + 8 + 16,
    }
}

/// Number of handshake flights.
pub fn flight_count(v: TlsVersion) -> u8 {
    match v {
        TlsVersion::None => 0,
        TlsVersion::Tls13 => 3,
        TlsVersion::Tls12 => 4,
    }
}

/// Wire size of flight `k`.
pub fn flight_size(cfg: &TcpConfig, k: u8) -> u64 {
    match (cfg.tls, k) {
        (_, 0) => cfg.tls_client_hello,
        (_, 1) => cfg.tls_server_flight,
        (TlsVersion::Tls13, 2) => cfg.tls13_client_finished,
        (TlsVersion::Tls12, 2) => cfg.tls12_client_flight,
        (TlsVersion::Tls12, 3) => cfg.tls12_server_finished,
        _ => unreachable!("no flight {k} in {:?}", cfg.tls),
    }
}

/// Who sends flight `k`: the client the even ones.
pub fn flight_sender(k: u8) -> Role {
    if k.is_multiple_of(2) {
        Role::Client
    } else {
        Role::Server
    }
}

/// After receiving flight `k`, the flight this side sends (if any) and whether it is then
/// established.
pub fn on_flight(v: TlsVersion, k: u8) -> (Option<u8>, bool) {
    let last = flight_count(v) - 1;
    match (v, k) {
        // The 1.2 server answers flight 2 with flight 3 and is then established.
        (TlsVersion::Tls12, 2) => (Some(3), true),
        _ if k == last => (None, true),
        // The 1.3 client answers flight 1 with its Finished and is established at once.
        (TlsVersion::Tls13, 1) => (Some(2), true),
        _ => (Some(k + 1), false),
    }
}

/// Sending side: the stream's layout (flights and records) and the application bytes not yet
/// framed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TlsTx {
    /// Records (and flights) not yet wholly acknowledged, by stream offset.
    records: VecDeque<RecordMark>,
    /// Stream bytes laid out so far.
    pub stream_end: u64,
    /// Application bytes written and not yet framed.
    pub unframed: u64,
    /// Application bytes framed so far.
    pub framed: u64,
}

impl TlsTx {
    /// Appends handshake flight `k` of `bytes`.
    pub fn push_flight(&mut self, k: u8, bytes: u64) {
        let m = RecordMark { offset: self.stream_end, wire: bytes as u32, app: 0, kind: k };
        self.records.push_back(m);
        self.stream_end += bytes;
    }

    /// Lays out more application data: with TLS one record, without it everything. Returns
    /// whether the stream grew.
    pub fn frame(&mut self, cfg: &TcpConfig) -> bool {
        if self.unframed == 0 {
            return false;
        }
        if cfg.tls == TlsVersion::None {
            self.stream_end += self.unframed;
            self.framed += self.unframed;
            self.unframed = 0;
            return true;
        }
        let app = self.unframed.min(cfg.tls_record_size);
        let wire = app + record_overhead(cfg.tls);
        let m = RecordMark { offset: self.stream_end, wire: wire as u32, app: app as u32, kind: APP_DATA };
        self.records.push_back(m);
        self.stream_end += wire;
        self.unframed -= app;
        self.framed += app;
        true
    }

    /// The record headers that start in stream bytes `[a, b)`.
    pub fn marks_in(&self, a: u64, b: u64) -> SmallVec<[RecordMark; 1]> {
        let i = self.records.partition_point(|r| r.offset < a);
        self.records.range(i..).take_while(|r| r.offset < b).copied().collect()
    }

    /// Stream bytes below `off` are acknowledged.
    pub fn on_acked(&mut self, off: u64) {
        while self.records.front().is_some_and(|r| r.offset + r.wire as u64 <= off) {
            self.records.pop_front();
        }
    }
}

/// What the receiving side found in the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsItem {
    /// Handshake flight `k` complete.
    Flight(u8),
    /// An application-data record of this many application bytes, ending at stream offset
    /// `end`.
    App { app: u64, end: u64 },
}

/// Receiving side: record boundaries learnt from the headers, and the parse position.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TlsRx {
    /// Headers seen and not yet parsed, ascending offsets.
    marks: VecDeque<RecordMark>,
    /// Stream offset up to which whole records were processed.
    pub parsed: u64,
}

impl TlsRx {
    /// Record headers carried by an arriving segment (duplicates and old ones ignored).
    pub fn on_marks(&mut self, marks: &[RecordMark]) {
        for &m in marks {
            if m.offset < self.parsed {
                continue;
            }
            let i = self.marks.partition_point(|r| r.offset < m.offset);
            if self.marks.get(i).is_none_or(|r| r.offset != m.offset) {
                self.marks.insert(i, m);
            }
        }
    }

    /// The stream is in order up to `end`: processes every complete record, in order.
    pub fn advance(&mut self, end: u64, mut f: impl FnMut(TlsItem)) {
        while let Some(m) = self.marks.front().copied() {
            debug_assert!(m.offset >= self.parsed);
            let rec_end = m.offset + m.wire as u64;
            if m.offset != self.parsed || rec_end > end {
                debug_assert!(m.offset == self.parsed || m.offset >= end, "a record header was missed");
                break;
            }
            self.marks.pop_front();
            self.parsed = rec_end;
            if m.kind == APP_DATA {
                f(TlsItem::App { app: m.app as u64, end: rec_end });
            } else {
                f(TlsItem::Flight(m.kind));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flights_per_version() {
        // 1.3: the client answers the server flight with Finished and is established.
        assert_eq!(on_flight(TlsVersion::Tls13, 0), (Some(1), false));
        assert_eq!(on_flight(TlsVersion::Tls13, 1), (Some(2), true));
        assert_eq!(on_flight(TlsVersion::Tls13, 2), (None, true));
        // 1.2: two round trips; the server is established on flight 2, the client on 3.
        assert_eq!(on_flight(TlsVersion::Tls12, 0), (Some(1), false));
        assert_eq!(on_flight(TlsVersion::Tls12, 1), (Some(2), false));
        assert_eq!(on_flight(TlsVersion::Tls12, 2), (Some(3), true));
        assert_eq!(on_flight(TlsVersion::Tls12, 3), (None, true));
        assert_eq!(flight_sender(1), Role::Server);
    }

    #[test]
    fn records_are_framed_lazily_and_parsed_in_order() {
        let cfg = TcpConfig { tls: TlsVersion::Tls13, ..Default::default() };
        let mut tx = TlsTx::default();
        tx.push_flight(2, 64);
        tx.unframed = 20_000;
        assert!(tx.frame(&cfg));
        assert!(tx.frame(&cfg));
        assert!(!tx.frame(&cfg));
        // 64 + (16384 + 22) + (3616 + 22) = 20 108 stream bytes.
        assert_eq!(tx.stream_end, 20_108);
        assert_eq!(tx.framed, 20_000);
        let marks = tx.marks_in(0, 16_470);
        assert_eq!(marks.len(), 2);
        assert_eq!((marks[1].offset, marks[1].wire, marks[1].app), (64, 16_406, 16_384));

        let mut rx = TlsRx::default();
        // The second app record's header arrives first (reordering), then the others.
        rx.on_marks(&tx.marks_in(16_470, 20_108));
        rx.on_marks(&tx.marks_in(0, 1_448));
        let mut seen = vec![];
        // In order up to 16 469: the flight and the first record are complete.
        rx.advance(16_470, |i| seen.push(i));
        assert_eq!(seen, vec![TlsItem::Flight(2), TlsItem::App { app: 16_384, end: 16_470 }]);
        seen.clear();
        rx.advance(20_000, |i| seen.push(i));
        assert!(seen.is_empty());
        rx.advance(20_108, |i| seen.push(i));
        assert_eq!(seen, vec![TlsItem::App { app: 3_616, end: 20_108 }]);
        tx.on_acked(16_470);
        assert_eq!(tx.marks_in(0, u64::MAX).len(), 1);
    }

    #[test]
    fn overheads() {
        assert_eq!(record_overhead(TlsVersion::Tls13), 22);
        assert_eq!(record_overhead(TlsVersion::Tls12), 29);
        assert_eq!(record_overhead(TlsVersion::None), 0);
    }
}
