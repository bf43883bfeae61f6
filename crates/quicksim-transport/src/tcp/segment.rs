//! TCP segments as data (no payload bytes), with exact header sizes.
//!
//! Sequence numbers are unwrapped 64-bit values and both ends use ISN 0: the SYN occupies
//! sequence number 0, stream byte `o` has sequence number `o + 1`, and the FIN comes after the
//! last byte. (Wrap-around and PAWS, RFC 7323 §5, do not arise in 2^64 bytes.)
//!
//! Option layout follows Linux's `tcp_options_write`, each option aligned to 4 bytes with NOPs:
//! MSS 4 B; timestamps 12 B (NOP NOP TS, or SACK-permitted + TS on a SYN); SACK-permitted
//! alone 4 B; window scale 4 B (NOP WS); SACK 4 + 8n B (NOP NOP SACK). A SYN with every option
//! has a 40 B header (Linux's 60 B SYN with IP), a data segment with timestamps 32 B, and an
//! ACK with timestamps and three SACK blocks the full 60 B (RFC 2018 §3: 3 blocks with
//! timestamps, 4 without).

use quicksim_engine::SimTime;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use crate::endpoint::{EcnCodepoint, WirePacket};

/// TCP header without options (RFC 9293 §3.1).
pub const BASE_HEADER: u64 = 20;
/// Option space of a TCP header: data offset is 4 bits of 32-bit words (RFC 9293 §3.1).
pub const MAX_OPTIONS: u64 = 40;
/// NOP NOP TS(10): the timestamps option as every stack pads it (RFC 7323 Appendix A).
pub const TS_OPTION: u64 = 12;

/// Flag bits as on the wire (RFC 9293 §3.1).
pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
/// Reset: the sender's connection is gone (RFC 9293 §3.5.2).
pub const RST: u8 = 0x04;
pub const ACK: u8 = 0x10;
/// ECN-Echo and Congestion Window Reduced (RFC 3168 §6.1).
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

impl TcpSegment {
    /// The AE, CWR and ECE bits as one number (RFC 9768 §3.2.2: the ACE field).
    #[inline]
    pub fn ace(&self) -> u8 {
        (u8::from(self.ae) << 2) | (u8::from(self.flags & CWR != 0) << 1) | u8::from(self.flags & ECE != 0)
    }

    /// Sets AE, CWR and ECE from an ACE value.
    #[inline]
    pub fn set_ace(&mut self, ace: u8) {
        self.ae = ace & 0b100 != 0;
        self.flags = (self.flags & !(CWR | ECE))
            | if ace & 0b010 != 0 { CWR } else { 0 }
            | if ace & 1 != 0 { ECE } else { 0 };
    }
}

/// Options only a SYN or SYN-ACK carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SynOptions {
    /// Maximum segment size the sender of the SYN can receive (RFC 9293 §3.7.1).
    pub mss: u16,
    /// Window scale shift (RFC 7323 §2), if offered.
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
}

/// The timestamps option (RFC 7323 §3): our send time and the echoed peer value, in
/// picoseconds of simulated time (a real stack uses a 1 ms or 1 µs clock; the echo is exact
/// either way, so RTT samples are exact here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timestamps {
    pub val: SimTime,
    pub ecr: SimTime,
}

/// What a TLS record header inside this segment says (the 5 B header is on the wire: a
/// receiver learns record boundaries by reading it). `offset` is the stream offset of the
/// record's first byte, which lies in this segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordMark {
    pub offset: u64,
    /// Bytes of the record on the wire (header, payload, tag).
    pub wire: u32,
    /// Application bytes inside (0 for a handshake flight).
    pub app: u32,
    /// Handshake flight number (0 = ClientHello, 1 = server flight, ...), or `APP_DATA`.
    pub kind: u8,
}

/// `RecordMark::kind` of application data records.
pub const APP_DATA: u8 = u8::MAX;

/// Up to four SACK blocks `[start, end)` in sequence numbers, most recent first (RFC 2018 §4).
pub type SackBlocks = SmallVec<[(u64, u64); 4]>;

/// One TCP segment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TcpSegment {
    pub seq: u64,
    /// Cumulative acknowledgement (meaningful with the ACK flag).
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    pub flags: u8,
    /// The AE flag (RFC 9768 §3.1: bit 7 of byte 12, the historic NS bit), with CWR and ECE
    /// the ACE field once AccECN is agreed. Always false without AccECN.
    pub ae: bool,
    /// Receive window in bytes, as the peer will read it (the 16-bit field times 2^scale).
    pub window: u64,
    pub ts: Option<Timestamps>,
    pub sack: SackBlocks,
    pub syn_opts: Option<SynOptions>,
    /// TLS record headers that start in this segment.
    pub records: SmallVec<[RecordMark; 1]>,
    /// The ECN field of the IP header carrying it (RFC 3168 §5): ECT(0) on new data once ECN
    /// is agreed; on arrival what the network delivered.
    pub ecn: EcnCodepoint,
}

impl TcpSegment {
    /// An empty segment, to write one over (`Connection::poll_transmit_into`).
    pub fn blank() -> TcpSegment {
        TcpSegment {
            seq: 0,
            ack: 0,
            len: 0,
            flags: 0,
            ae: false,
            window: 0,
            ts: None,
            sack: SackBlocks::new(),
            syn_opts: None,
            records: SmallVec::new(),
            ecn: EcnCodepoint::NotEct,
        }
    }

    /// Turns a spent segment (a pool slot's old value) into a new one: `seq`, `len`, `flags`
    /// and `sack` as given, no ACK number, window, timestamps, SYN options or record marks,
    /// Not-ECT. Field by field, with the full pattern below: a field added to the segment
    /// does not compile until it is reset here too.
    #[inline]
    pub fn reset(&mut self, seq: u64, len: u32, flags: u8, sack: SackBlocks) {
        let TcpSegment {
            seq: seq_,
            ack,
            len: len_,
            flags: flags_,
            ae,
            window,
            ts,
            sack: sack_,
            syn_opts,
            records,
            ecn,
        } = self;
        *seq_ = seq;
        *ack = 0;
        *len_ = len;
        *flags_ = flags;
        *ae = false;
        *window = 0;
        *ts = None;
        // Without SACK blocks (every segment of a connection without SACK) the inline array
        // is not moved in, only emptied.
        if sack.is_empty() {
            sack_.clear();
        } else {
            *sack_ = sack;
        }
        *syn_opts = None;
        records.clear();
        *ecn = EcnCodepoint::NotEct;
    }

    pub fn is_syn(&self) -> bool {
        self.flags & SYN != 0
    }
    pub fn is_fin(&self) -> bool {
        self.flags & FIN != 0
    }
    pub fn is_rst(&self) -> bool {
        self.flags & RST != 0
    }
    pub fn has_ack(&self) -> bool {
        self.flags & ACK != 0
    }
    /// Sequence space the segment occupies: payload plus one for SYN and for FIN.
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + u64::from(self.is_syn()) + u64::from(self.is_fin())
    }
    /// First sequence number after the segment.
    pub fn end(&self) -> u64 {
        self.seq + self.seq_len()
    }

    /// TCP header with options in bytes.
    #[inline]
    pub fn header_len(&self) -> u64 {
        let ts = if self.ts.is_some() { TS_OPTION } else { 0 };
        if self.syn_opts.is_none() && self.sack.is_empty() {
            return BASE_HEADER + ts; // most segments: no SYN options, no SACK blocks
        }
        header_len(self.ts.is_some(), self.sack.len(), self.syn_opts.as_ref())
    }
}

/// TCP header length: 20 B plus the options, each padded as Linux does (module docs).
pub fn header_len(ts: bool, sack_blocks: usize, syn: Option<&SynOptions>) -> u64 {
    let mut n = BASE_HEADER;
    if ts {
        n += TS_OPTION;
    }
    if let Some(s) = syn {
        n += 4; // MSS kind 2, length 4 (RFC 9293 §3.2)
        if s.sack_permitted && !ts {
            n += 4; // NOP NOP SACK-permitted(2); with timestamps it takes the NOPs' place
        }
        if s.wscale.is_some() {
            n += 4; // NOP WS(3)
        }
    }
    if sack_blocks > 0 {
        n += sack_option_len(sack_blocks);
    }
    debug_assert!(n - BASE_HEADER <= MAX_OPTIONS);
    n
}

/// NOP NOP SACK(2 + 8n) (RFC 2018 §3).
pub fn sack_option_len(blocks: usize) -> u64 {
    4 + 8 * blocks as u64
}

/// Most SACK blocks that fit next to the other options (RFC 2018 §3).
pub fn max_sack_blocks(ts: bool) -> usize {
    if ts {
        3
    } else {
        4
    }
}

impl WirePacket for TcpSegment {
    #[inline]
    fn size_bytes(&self) -> u64 {
        self.header_len() + self.len as u64
    }
    #[inline]
    fn ecn(&self) -> EcnCodepoint {
        self.ecn
    }
    #[inline]
    fn set_ecn(&mut self, e: EcnCodepoint) {
        self.ecn = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syn(sack: bool, ws: bool) -> SynOptions {
        SynOptions { mss: 1460, wscale: ws.then_some(7), sack_permitted: sack }
    }

    #[test]
    fn header_sizes_match_linux() {
        // Linux SYN: MSS 4 + SACK_PERM/TS 12 + NOP WS 4 = 20 B of options, 40 B header.
        assert_eq!(header_len(true, 0, Some(&syn(true, true))), 40);
        // Without timestamps: MSS 4 + NOP NOP SACK_PERM 4 + NOP WS 4 = 32 B.
        assert_eq!(header_len(false, 0, Some(&syn(true, true))), 32);
        // Bare SYN with MSS only: 24 B.
        assert_eq!(header_len(false, 0, Some(&syn(false, false))), 24);
        // Data or ACK with timestamps: 32 B; without: 20 B.
        assert_eq!(header_len(true, 0, None), 32);
        assert_eq!(header_len(false, 0, None), 20);
        // SACK: 4 + 8n; three blocks with timestamps fill the 40 B option space exactly.
        assert_eq!(header_len(true, 1, None), 44);
        assert_eq!(header_len(true, 3, None), 60);
        assert_eq!(header_len(false, 4, None), 56);
    }

    #[test]
    fn size_is_header_plus_payload_and_seq_len_counts_syn_fin() {
        let s = TcpSegment {
            seq: 1,
            ack: 1,
            len: 1448,
            flags: ACK | FIN,
            ae: false,
            window: 65_535,
            ts: Some(Timestamps { val: SimTime::ZERO, ecr: SimTime::ZERO }),
            sack: SackBlocks::new(),
            syn_opts: None,
            records: SmallVec::new(),
            ecn: EcnCodepoint::NotEct,
        };
        assert_eq!(s.size_bytes(), 32 + 1448);
        assert_eq!(s.seq_len(), 1449);
        assert_eq!(s.end(), 1450);
    }
}
