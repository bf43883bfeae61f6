//! The frames of the multipath extension (draft-ietf-quic-multipath-21, §4) and of path
//! validation (RFC 9000 §19.17-18): their types, sizes and wire encoding. The model carries
//! frames as values; the encoding is what a capture writes and what the unit tests check
//! against the draft's formats byte for byte.

use super::packet::{varint_len, AckFrame, Frame};
pub use super::packet::{
    PathAckFrame, APPLICATION_ABANDON_PATH, INITIAL_MAX_PATH_ID_PARAM, PATH_ABANDON_TYPE, PATH_ACK_ECN_TYPE,
    PATH_ACK_TYPE, PATH_CHALLENGE_TYPE, PATH_RESPONSE_TYPE, PATH_STATUS_AVAILABLE_TYPE,
    PATH_STATUS_BACKUP_TYPE, PATH_UNSTABLE_OR_POOR,
};

/// Appends `v` as a variable-length integer of the shortest encoding (RFC 9000 §16).
pub fn put_varint(out: &mut Vec<u8>, v: u64) {
    match varint_len(v) {
        1 => out.push(v as u8),
        2 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
        4 => out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes()),
        _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

/// Appends the fields of an ACK frame after its type (RFC 9000 §19.3): Largest Acknowledged,
/// ACK Delay, ACK Range Count, First ACK Range, then (Gap, ACK Range Length) pairs.
pub fn put_ack_fields(out: &mut Vec<u8>, a: &AckFrame) {
    let (s0, l0) = a.ranges[0];
    put_varint(out, l0);
    put_varint(out, a.ack_delay);
    put_varint(out, a.ranges.len() as u64 - 1);
    put_varint(out, l0 - s0);
    let mut prev = s0;
    for &(s, l) in &a.ranges[1..] {
        put_varint(out, prev - l - 2);
        put_varint(out, l - s);
        prev = s;
    }
}

/// Appends a path frame (PATH_ACK, PATH_ABANDON, PATH_STATUS_*, PATH_CHALLENGE,
/// PATH_RESPONSE) in its wire format; false (nothing written) for any other frame.
pub fn encode_path_frame(out: &mut Vec<u8>, f: &Frame) -> bool {
    match f {
        Frame::PathAck(a) => {
            put_varint(out, if a.ecn.is_some() { PATH_ACK_ECN_TYPE } else { PATH_ACK_TYPE });
            put_varint(out, a.path);
            put_ack_fields(out, &a.ack);
            if let Some(c) = a.ecn {
                put_varint(out, c.ect0);
                put_varint(out, c.ect1);
                put_varint(out, c.ce);
            }
        }
        Frame::PathAbandon { path, error_code } => {
            put_varint(out, PATH_ABANDON_TYPE);
            put_varint(out, *path);
            put_varint(out, *error_code);
        }
        Frame::PathStatus { path, seq, available } => {
            put_varint(out, if *available { PATH_STATUS_AVAILABLE_TYPE } else { PATH_STATUS_BACKUP_TYPE });
            put_varint(out, *path);
            put_varint(out, *seq);
        }
        Frame::PathChallenge(d) | Frame::PathResponse(d) => {
            let ty =
                if matches!(f, Frame::PathChallenge(_)) { PATH_CHALLENGE_TYPE } else { PATH_RESPONSE_TYPE };
            put_varint(out, ty);
            out.extend_from_slice(&d.to_be_bytes());
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quic::packet::EcnCounts;
    use smallvec::smallvec;

    fn enc(f: &Frame) -> Vec<u8> {
        let mut v = Vec::new();
        assert!(encode_path_frame(&mut v, f));
        assert_eq!(v.len() as u64, f.size(), "size() agrees with the encoding of {f:?}");
        v
    }

    #[test]
    fn path_ack_is_type_path_id_then_the_ack_fields() {
        // PATH_ACK { Type = 0x3e, Path Identifier = 1, Largest Acknowledged = 100,
        // ACK Delay = 25, ACK Range Count = 1, First ACK Range = 100 - 90 = 10,
        // Gap = 90 - 80 - 2 = 8, ACK Range Length = 80 - 70 = 10 }.
        let ack = AckFrame { ranges: smallvec![(90, 100), (70, 80)], ack_delay: 25 };
        let f = Frame::PathAck(Box::new(PathAckFrame { path: 1, ack, ecn: None }));
        assert_eq!(enc(&f), [0x3e, 0x01, 0x40, 0x64, 0x19, 0x01, 0x0a, 0x08, 0x0a]);
    }

    #[test]
    fn path_ack_ecn_appends_the_three_counts() {
        let ack = AckFrame { ranges: smallvec![(0, 3)], ack_delay: 0 };
        let ecn = Some(EcnCounts { ect0: 4, ect1: 0, ce: 300 });
        let f = Frame::PathAck(Box::new(PathAckFrame { path: 70, ack, ecn }));
        // path 70 takes a two-byte varint (0x4046); CE 300 = 0x412c.
        assert_eq!(enc(&f), [0x3f, 0x40, 0x46, 0x03, 0x00, 0x00, 0x03, 0x04, 0x00, 0x41, 0x2c]);
    }

    #[test]
    fn path_abandon_and_status_frames_have_two_byte_types() {
        let f = Frame::PathAbandon { path: 2, error_code: PATH_UNSTABLE_OR_POOR };
        assert_eq!(enc(&f), [0x7e, 0x75, 0x02, 0x7e, 0x77]);
        let f = Frame::PathStatus { path: 1, seq: 5, available: false };
        assert_eq!(enc(&f), [0x7e, 0x76, 0x01, 0x05]);
        let f = Frame::PathStatus { path: 1, seq: 6, available: true };
        assert_eq!(enc(&f), [0x7e, 0x77, 0x01, 0x06]);
    }

    #[test]
    fn path_challenge_and_response_carry_eight_bytes() {
        let f = Frame::PathChallenge(0x0102_0304_0506_0708);
        assert_eq!(enc(&f), [0x1a, 1, 2, 3, 4, 5, 6, 7, 8]);
        let f = Frame::PathResponse(0x0102_0304_0506_0708);
        assert_eq!(enc(&f), [0x1b, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(f.is_ack_eliciting() && f.is_in_flight());
        let a = Frame::PathAck(Box::new(PathAckFrame {
            path: 1,
            ack: AckFrame { ranges: smallvec![(0, 0)], ack_delay: 0 },
            ecn: None,
        }));
        assert!(!a.is_ack_eliciting() && !a.is_in_flight());
        assert!(!encode_path_frame(&mut Vec::new(), &Frame::Ping));
    }
}
