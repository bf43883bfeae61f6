//! A QUIC packet's bytes as a capture writes them: the RFC 9000 §17 header of the `rfc9000`
//! header profile and the frames as the model counts them (RFC 9000 §19, variable-length
//! integers of §16), then a 16 B AEAD tag of zeros. The model has no payload bytes and does
//! not encrypt: STREAM and CRYPTO data and the tag are zeros, and header protection is absent,
//! so the bytes are what a decrypted packet would look like, in the clear.

use quicksim_transport::quic::packet::{varint_len, AckFrame, AEAD_TAG_LEN, IMMEDIATE_ACK_TYPE};
use quicksim_transport::quic::{Frame, QuicPacket, SpaceId};

/// QUIC version 1 (RFC 9000 §15).
const VERSION_1: u32 = 1;

/// Appends `v` as a variable-length integer of the shortest encoding (RFC 9000 §16).
pub fn varint(out: &mut Vec<u8>, v: u64) {
    match varint_len(v) {
        1 => out.push(v as u8),
        2 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        4 => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Appends an ACK frame of type `ty` (RFC 9000 §19.3) without ECN counts.
fn ack(out: &mut Vec<u8>, ty: u8, a: &AckFrame) {
    let (s0, l0) = a.ranges[0];
    out.push(ty);
    varint(out, l0);
    varint(out, a.ack_delay);
    varint(out, a.ranges.len() as u64 - 1);
    varint(out, l0 - s0);
    let mut prev = s0;
    for &(s, l) in &a.ranges[1..] {
        varint(out, prev - l - 2);
        varint(out, l - s);
        prev = s;
    }
}

/// Appends one frame; STREAM and CRYPTO data and PADDING are counted in `zeros` instead of
/// written when they end the packet's written part (see [`packet`]). Returns the zero bytes
/// the frame carries after its written part.
fn frame(out: &mut Vec<u8>, f: &Frame) -> u64 {
    match f {
        Frame::Padding(n) => return *n,
        Frame::Ping => out.push(0x01),
        Frame::Ack(a) => ack(out, 0x02, a),
        Frame::AckEcn(e) => {
            // Type 0x03: the ACK frame followed by the ECT(0), ECT(1) and CE counts (§19.3.2).
            ack(out, 0x03, &e.ack);
            varint(out, e.counts.ect0);
            varint(out, e.counts.ect1);
            varint(out, e.counts.ce);
        }
        Frame::Crypto(c) => {
            let data = c.len + c.params.as_ref().map_or(0, |p| p.encoded_len());
            out.push(0x06);
            varint(out, c.offset);
            varint(out, data);
            return data;
        }
        Frame::Stream(s) => {
            // Type 0x0e: OFF and LEN bits set, no FIN (RFC 9000 §19.8).
            out.push(0x0e);
            varint(out, s.id);
            varint(out, s.offset);
            varint(out, s.len);
            return s.len;
        }
        Frame::MaxData(m) => {
            out.push(0x10);
            varint(out, *m);
        }
        Frame::MaxStreamData { id, max } => {
            out.push(0x11);
            varint(out, *id);
            varint(out, *max);
        }
        Frame::DataBlocked(m) => {
            out.push(0x14);
            varint(out, *m);
        }
        Frame::StreamDataBlocked { id, limit } => {
            out.push(0x15);
            varint(out, *id);
            varint(out, *limit);
        }
        Frame::ConnectionClose { error_code } => {
            out.push(0x1c);
            varint(out, *error_code);
            out.extend_from_slice(&[0, 0]); // frame type, reason phrase length
        }
        Frame::HandshakeDone => out.push(0x1e),
        Frame::AckFrequency(a) => {
            varint(out, quicksim_transport::quic::packet::ACK_FREQUENCY_TYPE);
            varint(out, a.seq);
            varint(out, a.ack_eliciting_threshold);
            varint(out, a.request_max_ack_delay_us);
            varint(out, a.reordering_threshold);
        }
        Frame::ImmediateAck => varint(out, IMMEDIATE_ACK_TYPE),
        // draft-ietf-quic-multipath-21 §4 and RFC 9000 §19.17-18: one encoder, the transport's.
        Frame::PathAck(_)
        | Frame::PathAbandon { .. }
        | Frame::PathStatus { .. }
        | Frame::PathChallenge(_)
        | Frame::PathResponse(_) => {
            quicksim_transport::quic::mp_frames::encode_path_frame(out, f);
        }
    }
    0
}

/// A connection id of `len` bytes naming the flow and the end that chose it.
fn cid(out: &mut Vec<u8>, len: usize, flow: u32, end: u8) {
    let mut id = [0u8; 20];
    id[0] = 0xc0 | end;
    id[1..5].copy_from_slice(&flow.to_be_bytes());
    out.extend_from_slice(&id[..len.min(20)]);
}

/// The header layout that gives `p.header_bytes` under the `rfc9000` profile with connection
/// ids of `dcid_len`: (destination id length, packet number length). None if no layout does
/// (a packet of the `inet` profile).
fn layout(p: &QuicPacket, dcid_len: u8) -> Option<(u64, u64)> {
    let cid = u64::from(dcid_len);
    let h = p.header_bytes;
    if p.space == SpaceId::Data {
        let pnl = h.checked_sub(1 + cid + AEAD_TAG_LEN)?;
        return (1..=4).contains(&pnl).then_some((cid, pnl));
    }
    let token = u64::from(p.space == SpaceId::Initial);
    for dcid in [cid, cid.max(8)] {
        for pnl in 1..=4 {
            let length = varint_len(pnl + p.payload_bytes() + AEAD_TAG_LEN);
            if 1 + 4 + 1 + dcid + 1 + cid + token + length + pnl + AEAD_TAG_LEN == h {
                return Some((dcid, pnl));
            }
        }
    }
    None
}

/// Appends packet `p` of flow `flow` sent by end `from` (0 client, 1 server): the written bytes
/// (header and frame headers) go to `out`; the returned count of zero bytes follows them in
/// the frame (the last frame's data, padding and the AEAD tag are zeros, which a checksum
/// or FCS over them handles without writing them). The written part plus the zeros is
/// exactly `p.size_bytes()` bytes. `dcid_len` is the `rfc9000` profile's; for other profiles
/// the header is zeros of its modelled size.
pub fn packet(out: &mut Vec<u8>, p: &QuicPacket, flow: u32, from: u8, dcid_len: Option<u8>) -> u64 {
    let start = out.len();
    let mut tag = 0;
    match dcid_len.and_then(|d| layout(p, d).map(|l| (d, l))) {
        Some((d, (dcid, pnl))) => {
            let to = 1 - from;
            let pn = p.pn.to_be_bytes();
            if p.space == SpaceId::Data {
                out.push(0x40 | (pnl as u8 - 1));
                cid(out, dcid as usize, flow, to);
            } else {
                let ty = if p.space == SpaceId::Initial { 0 } else { 2 };
                out.push(0xc0 | ty << 4 | (pnl as u8 - 1));
                out.extend_from_slice(&VERSION_1.to_be_bytes());
                out.push(dcid as u8);
                cid(out, dcid as usize, flow, to);
                out.push(d);
                cid(out, d as usize, flow, from);
                if p.space == SpaceId::Initial {
                    out.push(0); // token length
                }
                varint(out, pnl + p.payload_bytes() + AEAD_TAG_LEN);
            }
            out.extend_from_slice(&pn[8 - pnl as usize..]);
            tag = AEAD_TAG_LEN;
        }
        None => out.resize(start + p.header_bytes as usize, 0),
    }
    // Frames: the zeros a frame carries are written unless it is the last frame.
    let mut zeros = 0;
    let n = p.frames.len();
    for (i, f) in p.frames.iter().enumerate() {
        let z = frame(out, f);
        if i + 1 < n {
            out.resize(out.len() + z as usize, 0);
        } else {
            zeros = z;
        }
    }
    let written = (out.len() - start) as u64;
    debug_assert_eq!(written + zeros + tag, p.size_bytes(), "QUIC packet bytes differ from its size");
    // Keep the frame's length exact even if the model's count and the encoding ever disagree.
    p.size_bytes().saturating_sub(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_transport::quic::packet::Frames;
    use quicksim_transport::quic::packet::{AckFrame, HeaderProfile, StreamFrame};
    use smallvec::smallvec;

    #[test]
    fn varints_have_the_lengths_the_model_counts() {
        for v in [0u64, 63, 64, 16_383, 16_384, (1 << 30) - 1, 1 << 30, (1 << 62) - 1] {
            let mut o = Vec::new();
            varint(&mut o, v);
            assert_eq!(o.len() as u64, varint_len(v), "{v}");
        }
        let mut o = Vec::new();
        varint(&mut o, 15_293);
        assert_eq!(o, [0x7b, 0xbd], "RFC 9000 §A.1's 2-byte example");
    }

    #[test]
    fn packets_are_as_long_as_the_model_counts_them() {
        let profile = HeaderProfile::Rfc9000 { dcid_len: 8 };
        let ack = Frame::Ack(AckFrame { ranges: smallvec![(90, 100), (10, 80), (0, 5)], ack_delay: 300 });
        let stream = Frame::Stream(StreamFrame { id: 0, offset: 1 << 20, len: 1200 });
        let frames: Frames = smallvec![ack, stream];
        for (space, pn, la) in [(SpaceId::Data, 70_000, Some(2)), (SpaceId::Data, 5, Some(4))] {
            let h = profile.short_header_len(pn, la);
            let p = QuicPacket::new(space, pn, h, frames.clone(), false);
            let mut o = Vec::new();
            let z = packet(&mut o, &p, 3, 0, Some(8));
            assert_eq!(o.len() as u64 + z, p.size_bytes());
            assert_eq!(o[0] & 0xc0, 0x40, "short header with the fixed bit");
        }
        for space in [SpaceId::Initial, SpaceId::Handshake] {
            let fr: Frames = smallvec![Frame::Ping, Frame::Padding(1000)];
            let payload: u64 = fr.iter().map(Frame::size).sum();
            let h = profile.long_header_len(space, 0, None, payload, space == SpaceId::Initial);
            let p = QuicPacket::new(space, 0, h, fr, false);
            let mut o = Vec::new();
            let z = packet(&mut o, &p, 3, 0, Some(8));
            assert_eq!(o.len() as u64 + z, p.size_bytes());
            assert_eq!(&o[1..5], &[0, 0, 0, 1], "version 1");
        }
        // An inet-profile packet: a header of zeros of its modelled size.
        let p = QuicPacket::new(SpaceId::Data, 1, 13, smallvec![Frame::Ping], false);
        let mut o = Vec::new();
        let z = packet(&mut o, &p, 0, 0, None);
        assert_eq!((o.len() as u64, z), (14, 0), "13 B header and a PING");
    }
}
