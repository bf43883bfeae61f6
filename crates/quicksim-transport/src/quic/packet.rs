//! Packets, frames and their wire sizes. No payload bytes exist: a frame carries only what the
//! model needs (offsets, lengths, limits) and reports its encoded size.
//!
//! Sizes follow RFC 9000 §16 (variable-length integers) and §19 (frames), as INET's
//! `Q/packet/FrameHeader.msg` does. Header sizes depend on the [`HeaderProfile`].

use crate::endpoint::EcnCodepoint;
use quicksim_engine::{SimDuration, PS_PER_US};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// Encoded size of a QUIC variable-length integer (RFC 9000 §16): 1, 2, 4 or 8 bytes.
pub fn varint_len(v: u64) -> u64 {
    if v < 64 {
        1
    } else if v < (1 << 14) {
        2
    } else if v < (1 << 30) {
        4
    } else {
        8
    }
}

/// AEAD tag length of the RFC 9000 profile (AES-GCM / ChaCha20-Poly1305, RFC 9001 §5.3).
pub const AEAD_TAG_LEN: u64 = 16;

/// Packet number space (RFC 9000 §12.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SpaceId {
    Initial = 0,
    Handshake = 1,
    Data = 2,
}

impl SpaceId {
    pub const ALL: [SpaceId; 3] = [SpaceId::Initial, SpaceId::Handshake, SpaceId::Data];
    pub fn index(self) -> usize {
        self as usize
    }
}

/// How packet headers are sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeaderProfile {
    /// INET: a fixed 13 B short header (whatever the CID and pn length), long headers of
    /// 1+4+1+DCID+1+SCID+1+1 bytes with 1 B connection ids (8 B DCID on the client's first
    /// Initials), no token field and no AEAD tag (`Q/packet/PacketHeader.msg`, report §3).
    Inet,
    /// RFC 9000 §17: short header 1 B flags + DCID + 1-4 B packet number (Appendix A.2
    /// encoding) + 16 B AEAD tag; long headers with version, both CIDs (`dcid_len` each),
    /// Initial token length (0), Length varint and the tag.
    Rfc9000 { dcid_len: u8 },
}

/// Bytes needed to encode `pn` when the peer has acknowledged up to `largest_acked`
/// (RFC 9000 Appendix A.2: twice the number of unacknowledged packets must be representable).
pub fn pn_len(pn: u64, largest_acked: Option<u64>) -> u64 {
    let num_unacked = match largest_acked {
        Some(la) => pn.saturating_sub(la).max(1),
        None => pn + 1,
    };
    // Smallest n with num_unacked <= 2^(8n - 1).
    for n in 1..4u64 {
        if num_unacked <= 1u64 << (8 * n - 1) {
            return n;
        }
    }
    4
}

impl HeaderProfile {
    /// Size of a 1-RTT (short) header, including the AEAD tag where the profile has one.
    pub fn short_header_len(&self, pn: u64, largest_acked: Option<u64>) -> u64 {
        match *self {
            HeaderProfile::Inet => 13,
            HeaderProfile::Rfc9000 { dcid_len } => {
                1 + dcid_len as u64 + pn_len(pn, largest_acked) + AEAD_TAG_LEN
            }
        }
    }

    /// Size of a long header (Initial or Handshake) for a payload of `payload_len` bytes,
    /// including the AEAD tag where the profile has one. `initial_dcid` marks a client
    /// Initial sent before the server's connection id is known (8 B random DCID, RFC 9000 §7.2).
    pub fn long_header_len(
        &self,
        space: SpaceId,
        pn: u64,
        largest_acked: Option<u64>,
        payload_len: u64,
        initial_dcid: bool,
    ) -> u64 {
        match *self {
            HeaderProfile::Inet => {
                // INET: Length always 1 B and pn length 1 B; 1 B CIDs.
                let dcid = if initial_dcid { 8 } else { 1 };
                1 + 4 + 1 + dcid + 1 + 1 + 1 + 1
            }
            HeaderProfile::Rfc9000 { dcid_len } => {
                let cid = dcid_len as u64;
                let dcid = if initial_dcid { cid.max(8) } else { cid };
                let pnl = pn_len(pn, largest_acked);
                let token = if space == SpaceId::Initial { 1 } else { 0 };
                let length = varint_len(pnl + payload_len + AEAD_TAG_LEN);
                1 + 4 + 1 + dcid + 1 + cid + token + length + pnl + AEAD_TAG_LEN
            }
        }
    }

    /// Upper bound of the long header size, used to budget frames before the payload is known.
    pub fn long_header_max(&self, space: SpaceId, pn: u64, la: Option<u64>, initial_dcid: bool) -> u64 {
        self.long_header_len(space, pn, la, 16_383, initial_dcid)
    }
}

/// Transport parameters carried in the CRYPTO frames (only those the model uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportParams {
    pub initial_max_data: u64,
    /// Used for every stream (INET has a single value for all stream types).
    pub initial_max_stream_data: u64,
    pub max_ack_delay: SimDuration,
    pub ack_delay_exponent: u8,
    /// min_ack_delay (draft-ietf-quic-ack-frequency §3): Some = this endpoint accepts
    /// ACK_FREQUENCY and IMMEDIATE_ACK frames and delays ACKs by no less than this.
    pub min_ack_delay: Option<SimDuration>,
    /// initial_max_path_id (draft-ietf-quic-multipath-21 §2.1): Some = this endpoint speaks the
    /// multipath extension and accepts paths with ids up to this value. None: absent (not
    /// counted in `encoded_len`), as in every single-path run.
    pub initial_max_path_id: Option<u32>,
}

impl TransportParams {
    /// The parameters as a trace reports them.
    pub fn traced(&self) -> crate::endpoint::TraceParams {
        crate::endpoint::TraceParams {
            initial_max_data: self.initial_max_data,
            initial_max_stream_data: self.initial_max_stream_data,
            max_ack_delay: self.max_ack_delay,
            ack_delay_exponent: self.ack_delay_exponent,
            min_ack_delay: self.min_ack_delay,
        }
    }

    /// Size of the encoded blob as INET counts it: four varints (max_data and three
    /// max_stream_data values) without ids or lengths (16 B with the 15 MB / 6 MB defaults),
    /// plus the min_ack_delay value (µs) when advertised, counted the same way.
    pub fn encoded_len(&self) -> u64 {
        let mad = self.min_ack_delay.map_or(0, |d| varint_len(d.ps() / PS_PER_US));
        let mp = self.initial_max_path_id.map_or(0, |m| varint_len(u64::from(m)));
        varint_len(self.initial_max_data) + 3 * varint_len(self.initial_max_stream_data) + mad + mp
    }
}

/// ACK_FREQUENCY frame type (draft-ietf-quic-ack-frequency §4): a 2-byte varint.
pub const ACK_FREQUENCY_TYPE: u64 = 0xaf;
/// IMMEDIATE_ACK frame type (draft-ietf-quic-ack-frequency §5): a 1-byte varint.
pub const IMMEDIATE_ACK_TYPE: u64 = 0x1f;

/// ACK_FREQUENCY (draft-ietf-quic-ack-frequency §4): the sender asks the receiver to ACK after
/// more than `ack_eliciting_threshold` ack-eliciting packets (so 1:(threshold + 1)), to delay an
/// ACK by at most `request_max_ack_delay_us`, and to ACK at once on reordering of at least
/// `reordering_threshold` packets (0 = never). Only the highest `seq` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckFrequencyFrame {
    pub seq: u64,
    pub ack_eliciting_threshold: u64,
    pub request_max_ack_delay_us: u64,
    pub reordering_threshold: u64,
}

impl AckFrequencyFrame {
    /// type (2 B) + four varints.
    pub fn size(&self) -> u64 {
        varint_len(ACK_FREQUENCY_TYPE)
            + varint_len(self.seq)
            + varint_len(self.ack_eliciting_threshold)
            + varint_len(self.request_max_ack_delay_us)
            + varint_len(self.reordering_threshold)
    }
}

/// ACK ranges of one frame. Nearly every ACK has one range (more only while a loss is being
/// repaired), so one is stored inline: building an ACK allocates nothing (the frame travels to
/// the peer, so a buffer could not be reused). One, not two: it keeps a frame at 40 B, so a
/// packet (two inline frames) stays at 112 B and is moved without a `memcpy` call.
pub type AckRanges = SmallVec<[(u64, u64); 1]>;

/// ACK frame (RFC 9000 §19.3). `ranges` are inclusive `(smallest, largest)` pairs in
/// descending order; the first one ends at `largest`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckFrame {
    pub ranges: AckRanges,
    /// Encoded ack delay: microseconds >> ack_delay_exponent.
    pub ack_delay: u64,
}

impl AckFrame {
    pub fn largest(&self) -> u64 {
        self.ranges[0].1
    }

    /// 1 + v(largest) + v(delay) + v(range count) + v(first range) + Σ (v(gap) + v(range)).
    pub fn size(&self) -> u64 {
        let (s0, l0) = self.ranges[0];
        let mut n = 1
            + varint_len(l0)
            + varint_len(self.ack_delay)
            + varint_len(self.ranges.len() as u64 - 1)
            + varint_len(l0 - s0);
        let mut prev_smallest = s0;
        for &(s, l) in &self.ranges[1..] {
            n += varint_len(prev_smallest - l - 2) + varint_len(l - s);
            prev_smallest = s;
        }
        n
    }
}

/// ACK frame type with ECN counts (RFC 9000 §19.3: 0x03; a plain ACK is 0x02). Both types
/// encode in one byte.
pub const ACK_ECN_TYPE: u64 = 0x03;

/// The ECN counts of an ACK_ECN frame (RFC 9000 §19.3.2): packets of the frame's packet number
/// space received with ECT(0), ECT(1) and CE, since the start of the connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EcnCounts {
    pub ect0: u64,
    pub ect1: u64,
    pub ce: u64,
}

impl EcnCounts {
    /// Counts a packet that arrived with `e` (Not-ECT counts nowhere, RFC 9000 §13.4.1).
    pub fn add(&mut self, e: EcnCodepoint) {
        match e {
            EcnCodepoint::NotEct => {}
            EcnCodepoint::Ect0 => self.ect0 += 1,
            EcnCodepoint::Ect1 => self.ect1 += 1,
            EcnCodepoint::Ce => self.ce += 1,
        }
    }

    /// Encoded size: three varints.
    pub fn size(&self) -> u64 {
        varint_len(self.ect0) + varint_len(self.ect1) + varint_len(self.ce)
    }
}

/// ACK frame of type 0x03: the ranges and delay of an [`AckFrame`] followed by the ECN counts
/// (RFC 9000 §19.3). Boxed inside [`Frame`], so that a plain ACK (every ACK without ECN) keeps
/// frames and packets at their size.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AckEcnFrame {
    pub ack: AckFrame,
    pub counts: EcnCounts,
}

impl AckEcnFrame {
    pub fn size(&self) -> u64 {
        self.ack.size() + self.counts.size()
    }
}

/// STREAM frame header and data range (RFC 9000 §19.8; type 0x0e: offset and length present).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamFrame {
    pub id: u64,
    pub offset: u64,
    pub len: u64,
}

impl StreamFrame {
    pub fn size(&self) -> u64 {
        stream_header_len(self.id, self.offset, self.len) + self.len
    }
}

/// 1 + v(id) + v(offset) + v(len). The type byte always counts 1 B (INET `FrameHeader.msg`).
pub fn stream_header_len(id: u64, offset: u64, len: u64) -> u64 {
    1 + varint_len(id) + varint_len(offset) + varint_len(len)
}

/// The largest stream payload (at most `data_len`) whose STREAM frame fits in `avail` bytes,
/// or None if not even one byte fits.
pub fn stream_fit(id: u64, offset: u64, avail: u64, data_len: u64) -> Option<u64> {
    let h = 1 + varint_len(id) + varint_len(offset);
    if data_len == 0 || avail < h + 2 {
        return None;
    }
    // Take the smallest length-field size whose maximal payload is representable.
    let mut best = 0;
    for s in [1u64, 2, 4, 8] {
        if avail <= h + s {
            break;
        }
        let l = avail - h - s;
        if varint_len(l) <= s {
            best = l;
            break;
        }
    }
    let l = best.min(data_len);
    (l > 0).then_some(l)
}

/// CRYPTO frame (RFC 9000 §19.6). The handshake is modelled by sizes only (as INET): `len`
/// abstract TLS bytes, plus the transport-parameter blob when `params` is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CryptoFrame {
    pub offset: u64,
    pub len: u64,
    /// Boxed: only handshake packets carry it, and inline it made every `Frame` 64 B (40 B now).
    pub params: Option<Box<TransportParams>>,
}

impl CryptoFrame {
    pub fn size(&self) -> u64 {
        let data = self.len + self.params.as_ref().map_or(0, |p| p.encoded_len());
        1 + varint_len(self.offset) + varint_len(data) + data
    }
}

/// Transport error code FLOW_CONTROL_ERROR (RFC 9000 §20.1).
pub const FLOW_CONTROL_ERROR: u64 = 0x03;
/// Transport error code NO_ERROR.
pub const NO_ERROR: u64 = 0x00;

// ----- the multipath extension's frames (draft-ietf-quic-multipath-21 §4; encoded in `mp_frames`)

/// PATH_ACK (draft-21 §4.1); PATH_ACK_ECN is `PATH_ACK_TYPE + 1`. One-byte varints.
pub const PATH_ACK_TYPE: u64 = 0x3e;
pub const PATH_ACK_ECN_TYPE: u64 = 0x3f;
/// PATH_ABANDON (§4.2), a two-byte varint.
pub const PATH_ABANDON_TYPE: u64 = 0x3e75;
/// PATH_STATUS_BACKUP and PATH_STATUS_AVAILABLE (§4.3).
pub const PATH_STATUS_BACKUP_TYPE: u64 = 0x3e76;
pub const PATH_STATUS_AVAILABLE_TYPE: u64 = 0x3e77;
/// PATH_CHALLENGE and PATH_RESPONSE (RFC 9000 §19.17, §19.18).
pub const PATH_CHALLENGE_TYPE: u64 = 0x1a;
pub const PATH_RESPONSE_TYPE: u64 = 0x1b;
/// Transport parameter initial_max_path_id (draft-21 §2.1).
pub const INITIAL_MAX_PATH_ID_PARAM: u64 = 0x3e;
/// PATH_ABANDON error codes (draft-21 §7): the application stopped using the path, and the
/// path is unusable (unanswered probes).
pub const APPLICATION_ABANDON_PATH: u64 = 0x3e75;
pub const PATH_UNSTABLE_OR_POOR: u64 = 0x3e77;

/// A PATH_ACK frame: an ACK frame's ranges and delay for the packet number space of `path`,
/// with ECN counts for PATH_ACK_ECN.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathAckFrame {
    pub path: u64,
    pub ack: AckFrame,
    pub ecn: Option<EcnCounts>,
}

impl PathAckFrame {
    /// type (1 B) + v(path) + the ACK frame's fields (its `size()` counts its own 1 B type) +
    /// the ECN counts.
    pub fn size(&self) -> u64 {
        varint_len(self.path) + self.ack.size() + self.ecn.map_or(0, |c| c.size())
    }
}

/// A QUIC frame (only the types the model implements).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Frame {
    /// PADDING bytes (one frame of arbitrary length, as INET).
    Padding(u64),
    Ping,
    Ack(AckFrame),
    /// ACK_ECN (type 0x03): an ACK with ECN counts, sent by an endpoint with ECN enabled once it
    /// has received an ECN-marked packet in the space.
    AckEcn(Box<AckEcnFrame>),
    /// Boxed: with the transport parameters a CRYPTO frame is 64 B, and every frame (and so
    /// every packet, `Frames` holds two inline) would be that large; there are a few per
    /// connection.
    Crypto(Box<CryptoFrame>),
    Stream(StreamFrame),
    MaxData(u64),
    MaxStreamData {
        id: u64,
        max: u64,
    },
    DataBlocked(u64),
    StreamDataBlocked {
        id: u64,
        limit: u64,
    },
    /// CONNECTION_CLOSE of type 0x1c (RFC 9000 §19.19) with an empty reason phrase.
    ConnectionClose {
        error_code: u64,
    },
    HandshakeDone,
    /// draft-ietf-quic-ack-frequency §4.
    AckFrequency(AckFrequencyFrame),
    /// draft-ietf-quic-ack-frequency §5: ACK the packet carrying it at once.
    ImmediateAck,
    /// PATH_ACK / PATH_ACK_ECN (draft-ietf-quic-multipath-21 §4.1): an ACK of another path's
    /// packet number space. Boxed: rare, and it keeps `Frame` at 40 B.
    PathAck(Box<PathAckFrame>),
    /// PATH_ABANDON (§4.2): the sender stops using the path.
    PathAbandon {
        path: u64,
        error_code: u64,
    },
    /// PATH_STATUS_AVAILABLE / PATH_STATUS_BACKUP (§4.3): how the sender wants the peer to use
    /// the path; only the highest `seq` of a path counts.
    PathStatus {
        path: u64,
        seq: u64,
        available: bool,
    },
    /// PATH_CHALLENGE (RFC 9000 §19.17): 8 bytes the peer echoes.
    PathChallenge(u64),
    /// PATH_RESPONSE (RFC 9000 §19.18).
    PathResponse(u64),
}

impl Frame {
    /// Encoded size in bytes.
    pub fn size(&self) -> u64 {
        match self {
            Frame::Padding(n) => *n,
            Frame::Ping | Frame::HandshakeDone => 1,
            Frame::Ack(a) => a.size(),
            Frame::AckEcn(a) => a.size(),
            Frame::Crypto(c) => c.size(),
            Frame::Stream(s) => s.size(),
            Frame::MaxData(m) | Frame::DataBlocked(m) => 1 + varint_len(*m),
            Frame::MaxStreamData { id, max } => 1 + varint_len(*id) + varint_len(*max),
            Frame::StreamDataBlocked { id, limit } => 1 + varint_len(*id) + varint_len(*limit),
            // type + error code + frame type (0) + reason length (0). INET counts 1 + v(err).
            Frame::ConnectionClose { error_code } => 1 + varint_len(*error_code) + 1 + 1,
            Frame::AckFrequency(f) => f.size(),
            Frame::ImmediateAck => varint_len(IMMEDIATE_ACK_TYPE),
            Frame::PathAck(a) => a.size(),
            Frame::PathAbandon { path, error_code } => {
                varint_len(PATH_ABANDON_TYPE) + varint_len(*path) + varint_len(*error_code)
            }
            Frame::PathStatus { path, seq, .. } => {
                varint_len(PATH_STATUS_BACKUP_TYPE) + varint_len(*path) + varint_len(*seq)
            }
            Frame::PathChallenge(_) | Frame::PathResponse(_) => 1 + 8,
        }
    }

    /// Everything but ACK, PADDING and CONNECTION_CLOSE elicits an ACK (RFC 9002 §2).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(
            self,
            Frame::Ack(_)
                | Frame::AckEcn(_)
                | Frame::PathAck(_)
                | Frame::Padding(_)
                | Frame::ConnectionClose { .. }
        )
    }

    /// Counts toward bytes in flight: everything but ACK and CONNECTION_CLOSE (RFC 9002 §2).
    pub fn is_in_flight(&self) -> bool {
        !matches!(self, Frame::Ack(_) | Frame::AckEcn(_) | Frame::PathAck(_) | Frame::ConnectionClose { .. })
    }
}

/// The frames of one packet. A data packet has a STREAM frame and often an ACK, an ACK-only
/// packet one ACK frame: two inline slots cover nearly all packets without a heap allocation.
pub type Frames = SmallVec<[Frame; 2]>;

/// One QUIC packet, carried alone in one UDP datagram through the simulated network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuicPacket {
    pub space: SpaceId,
    pub pn: u64,
    /// Header bytes including the AEAD tag where the profile has one.
    pub header_bytes: u64,
    /// The frames; not to be changed after construction (their total size is cached).
    pub frames: Frames,
    /// The Immediate-ACK bit of the IFIP 2020 paper (a reserved short-header bit).
    pub i_bit: bool,
    /// The ECN field of the IP header carrying the packet: what the sender set (RFC 9000
    /// §13.4), and on arrival what the network delivered.
    pub ecn: EcnCodepoint,
    /// The path the packet travels (draft-ietf-quic-multipath-21: the path id its connection id
    /// belongs to; in the model, a field). 0 on a single-path connection; in the byte that was
    /// padding after `ecn`, so packets keep their size.
    pub path: u8,
    /// Σ frame sizes, computed once: the sender, the network and the receiver all need the
    /// packet size, and an ACK frame's size walks its ranges.
    payload: u64,
}

impl QuicPacket {
    pub fn new(space: SpaceId, pn: u64, header_bytes: u64, frames: Frames, i_bit: bool) -> Self {
        let payload = frames.iter().map(Frame::size).sum();
        QuicPacket { space, pn, header_bytes, frames, i_bit, ecn: EcnCodepoint::NotEct, path: 0, payload }
    }

    /// As `new`, for a builder that already summed the frame sizes (`payload`).
    pub(super) fn with_payload(
        space: SpaceId,
        pn: u64,
        header_bytes: u64,
        frames: Frames,
        payload: u64,
    ) -> Self {
        debug_assert_eq!(payload, frames.iter().map(Frame::size).sum::<u64>());
        QuicPacket {
            space,
            pn,
            header_bytes,
            frames,
            i_bit: false,
            ecn: EcnCodepoint::NotEct,
            path: 0,
            payload,
        }
    }

    /// UDP payload size: the QUIC packet including its header. The simulator adds 8 B UDP
    /// and 20 B IPv4 on top.
    pub fn size_bytes(&self) -> u64 {
        self.header_bytes + self.payload
    }

    /// Frame bytes.
    pub fn payload_bytes(&self) -> u64 {
        self.payload
    }

    pub fn is_ack_eliciting(&self) -> bool {
        self.frames.iter().any(Frame::is_ack_eliciting)
    }

    pub fn is_in_flight(&self) -> bool {
        self.frames.iter().any(Frame::is_in_flight)
    }

    /// Stream payload bytes in this packet.
    pub fn stream_bytes(&self) -> u64 {
        self.frames.iter().map(|f| if let Frame::Stream(s) = f { s.len } else { 0 }).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_boundaries() {
        assert_eq!(varint_len(63), 1);
        assert_eq!(varint_len(64), 2);
        assert_eq!(varint_len(16_383), 2);
        assert_eq!(varint_len(16_384), 4);
        assert_eq!(varint_len((1 << 30) - 1), 4);
        assert_eq!(varint_len(1 << 30), 8);
    }

    /// INET report §3: MTU 1280 → 1252 B QUIC packet, 13 B header, 8 B stream header once
    /// offsets reach 16 KiB → 1231 B of stream data per full packet.
    #[test]
    fn inet_full_packet_carries_1231_bytes_at_mtu_1280() {
        let mps = 1280 - 28;
        let hdr = HeaderProfile::Inet.short_header_len(1000, Some(990));
        assert_eq!(hdr, 13);
        let avail = mps - hdr;
        assert_eq!(stream_fit(0, 16_384, avail, u64::MAX), Some(1231));
        assert_eq!(stream_fit(0, 1 << 29, avail, u64::MAX), Some(1231));
        // Smaller offsets have smaller headers (5 B below 64, 6 B below 16 KiB).
        assert_eq!(stream_fit(0, 0, avail, u64::MAX), Some(1234));
        assert_eq!(stream_fit(0, 1231, avail, u64::MAX), Some(1233));
        // 12 B header at offsets >= 1 GiB.
        assert_eq!(stream_fit(0, 1 << 30, avail, u64::MAX), Some(1227));
        let f = StreamFrame { id: 0, offset: 16_384, len: 1231 };
        assert_eq!(hdr + f.size(), 1252);
    }

    #[test]
    fn stream_fit_is_maximal_and_fits() {
        for avail in 0..300u64 {
            for off in [0u64, 100, 20_000] {
                match stream_fit(3, off, avail, u64::MAX) {
                    Some(l) => {
                        let f = StreamFrame { id: 3, offset: off, len: l };
                        assert!(f.size() <= avail);
                        let g = StreamFrame { id: 3, offset: off, len: l + 1 };
                        assert!(g.size() > avail, "avail {avail} off {off} l {l}");
                    }
                    None => assert!(StreamFrame { id: 3, offset: off, len: 1 }.size() > avail),
                }
            }
        }
    }

    #[test]
    fn ack_frame_size() {
        // largest 100, delay 5, one range 91..=100: 1 + 2 + 1 + 1 + 1
        let a = AckFrame { ranges: smallvec::smallvec![(91, 100)], ack_delay: 5 };
        assert_eq!(a.size(), 6);
        // plus a second range 10..=80: gap = 91 - 80 - 2 = 9, len 70 → 2 more + 2
        let b = AckFrame { ranges: smallvec::smallvec![(91, 100), (10, 80)], ack_delay: 5 };
        assert_eq!(b.size(), 6 + 1 + 2);
    }

    /// RFC 9000 §19.3: type 0x03 adds three varints to the ACK frame; the type byte stays 1 B.
    /// Frames stay 40 B (the ECN variant is boxed) and packets 120 B, as before ECN (the
    /// codepoint sits in the padding beside `space` and `i_bit`).
    #[test]
    fn ack_ecn_frame_size() {
        let ack = AckFrame { ranges: smallvec::smallvec![(91, 100)], ack_delay: 5 };
        let counts = EcnCounts { ect0: 70, ect1: 0, ce: 3 }; // 2 + 1 + 1
        let f = Frame::AckEcn(Box::new(AckEcnFrame { ack: ack.clone(), counts }));
        assert_eq!(f.size(), 6 + 4);
        assert!(!f.is_ack_eliciting() && !f.is_in_flight());
        let mut c = EcnCounts::default();
        for e in [EcnCodepoint::Ect0, EcnCodepoint::Ce, EcnCodepoint::NotEct, EcnCodepoint::Ect0] {
            c.add(e);
        }
        assert_eq!(c, EcnCounts { ect0: 2, ect1: 0, ce: 1 });
        let big = EcnCounts { ect0: 1 << 30, ect1: 16_384, ce: 64 };
        assert_eq!(big.size(), 8 + 4 + 2);
        assert_eq!(std::mem::size_of::<Frame>(), 40);
        assert_eq!(std::mem::size_of::<QuicPacket>(), 120);
    }

    #[test]
    fn rfc9000_packet_number_length() {
        assert_eq!(pn_len(0, None), 1);
        assert_eq!(pn_len(127, None), 1); // 128 unacked
        assert_eq!(pn_len(128, None), 2);
        assert_eq!(pn_len(0xac5c02, Some(0xabe8b3)), 2); // RFC 9000 A.2 example
        assert_eq!(pn_len(0xace8fe, Some(0xabe8b3)), 3);
        let p = HeaderProfile::Rfc9000 { dcid_len: 8 };
        assert_eq!(p.short_header_len(5, Some(3)), 1 + 8 + 1 + 16);
    }

    #[test]
    fn inet_long_headers_and_tp_blob() {
        assert_eq!(HeaderProfile::Inet.long_header_len(SpaceId::Initial, 0, None, 1100, true), 18);
        let tp = TransportParams {
            initial_max_data: 15_000_000,
            initial_max_stream_data: 6_000_000,
            max_ack_delay: SimDuration::from_millis(25),
            ack_delay_exponent: 3,
            min_ack_delay: None,
            initial_max_path_id: None,
        };
        assert_eq!(tp.encoded_len(), 16);
        let tp = TransportParams { min_ack_delay: Some(SimDuration::from_millis(1)), ..tp };
        assert_eq!(tp.encoded_len(), 16 + 2); // 1000 µs
    }

    /// draft-ietf-quic-ack-frequency §4/§5: ACK_FREQUENCY = 2 B type + 4 varints; IMMEDIATE_ACK 1 B.
    #[test]
    fn ack_frequency_frame_sizes() {
        let f = AckFrequencyFrame {
            seq: 0,
            ack_eliciting_threshold: 9,
            request_max_ack_delay_us: 25_000,
            reordering_threshold: 1,
        };
        // 2 + 1 + 1 + 4 (25 000 >= 16 384) + 1
        assert_eq!(Frame::AckFrequency(f).size(), 9);
        let g = AckFrequencyFrame { seq: 64, request_max_ack_delay_us: 1000, ..f };
        assert_eq!(g.size(), 2 + 2 + 1 + 2 + 1);
        assert_eq!(Frame::ImmediateAck.size(), 1);
        assert!(Frame::ImmediateAck.is_ack_eliciting() && Frame::ImmediateAck.is_in_flight());
        assert!(Frame::AckFrequency(f).is_ack_eliciting());
    }
}
