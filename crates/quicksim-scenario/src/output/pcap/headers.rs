//! The bytes of the headers a capture writes: IPv4 (RFC 791), UDP (RFC 768), TCP with its
//! options (RFC 9293, 7323, 2018) and PPP's HDLC-like framing (RFC 1662), with their checksums.
//! Nothing here knows the simulator: each function appends one header to a buffer.

use quicksim_transport::tcp::segment::{TcpSegment, ACK, SYN};

/// IP protocol numbers (IANA).
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
/// "Use for experimentation and testing" (RFC 3692): a transport without a wire encoding.
pub const PROTO_EXPERIMENTAL: u8 = 253;
/// The TTL a host gives its packets (Linux `net.ipv4.ip_default_ttl`).
pub const DEFAULT_TTL: u8 = 64;

/// The ones'-complement sum of RFC 1071 over `bytes` (odd length padded with a zero byte),
/// added to `acc`; fold and complement with [`fold`].
pub fn sum16(mut acc: u32, bytes: &[u8]) -> u32 {
    let mut chunks = bytes.chunks_exact(2);
    for c in &mut chunks {
        acc += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        acc += u32::from(*last) << 8;
    }
    acc
}

/// Folds the carries of a ones'-complement sum and complements it (RFC 1071 §4.1).
pub fn fold(mut acc: u32) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Appends a 20 B IPv4 header (no options; DF set, as Linux sets it with path MTU discovery).
#[allow(clippy::too_many_arguments)]
pub fn ipv4(
    out: &mut Vec<u8>,
    total_len: u16,
    id: u16,
    ttl: u8,
    proto: u8,
    ecn: u8,
    src: [u8; 4],
    dst: [u8; 4],
) {
    let start = out.len();
    out.extend_from_slice(&[0x45, ecn & 0b11]);
    out.extend_from_slice(&total_len.to_be_bytes());
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&[0x40, 0x00, ttl, proto, 0, 0]);
    out.extend_from_slice(&src);
    out.extend_from_slice(&dst);
    let c = fold(sum16(0, &out[start..start + 20]));
    out[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

/// Sets the ECN field of the IPv4 header at the start of `ip` to `ecn` and recomputes the
/// header checksum (a real packet a queue marked CE: RFC 3168 §5). Too short a packet is left
/// as it is.
pub fn set_ipv4_ecn(ip: &mut [u8], ecn: u8) {
    let hl = ((ip.first().copied().unwrap_or(0) & 0x0f) as usize) * 4;
    if hl < 20 || ip.len() < hl || ip[1] & 0b11 == ecn & 0b11 {
        return;
    }
    ip[1] = ip[1] & !0b11 | ecn & 0b11;
    ip[10] = 0;
    ip[11] = 0;
    let c = fold(sum16(0, &ip[..hl]));
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// The sum of the pseudo-header of RFC 768 / RFC 9293 §3.1 (addresses, protocol, length).
pub fn pseudo_sum(src: [u8; 4], dst: [u8; 4], proto: u8, len: u32) -> u32 {
    let mut acc = sum16(0, &src);
    acc = sum16(acc, &dst);
    acc + u32::from(proto) + (len >> 16) + (len & 0xffff)
}

/// Appends an 8 B UDP header; the checksum is filled in by [`finish_checksum`].
pub fn udp(out: &mut Vec<u8>, sport: u16, dport: u16, len: u16) {
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
}

/// Writes the checksum of the transport segment at `seg_start..` (its header and the written
/// part of its payload) plus `zeros` further zero bytes (which add nothing to the sum), at
/// `offset` within the segment. UDP's computed 0 is sent as 0xffff (RFC 768).
pub fn finish_checksum(out: &mut [u8], seg_start: usize, offset: usize, pseudo: u32, udp: bool) {
    let mut c = fold(sum16(pseudo, &out[seg_start..]));
    if udp && c == 0 {
        c = 0xffff;
    }
    out[seg_start + offset..seg_start + offset + 2].copy_from_slice(&c.to_be_bytes());
}

/// Appends a TCP header with its options laid out as `TcpSegment::header_len` counts them
/// (Linux's `tcp_options_write`: MSS, SACK-permitted + timestamps or NOP NOP timestamps,
/// NOP window scale, NOP NOP SACK). `shift` is the window scale in force for this direction
/// (0 on SYNs: their window is never scaled, RFC 7323 §2.2). Timestamps are written in
/// microseconds of simulated time. The checksum is left 0 for [`finish_checksum`].
pub fn tcp(out: &mut Vec<u8>, seg: &TcpSegment, sport: u16, dport: u16, shift: u8) {
    let start = out.len();
    let hlen = seg.header_len() as usize;
    out.extend_from_slice(&sport.to_be_bytes());
    out.extend_from_slice(&dport.to_be_bytes());
    out.extend_from_slice(&(seg.seq as u32).to_be_bytes());
    let ack = if seg.flags & ACK != 0 { seg.ack as u32 } else { 0 };
    out.extend_from_slice(&ack.to_be_bytes());
    // Data offset, then the AE flag (RFC 9768 §3.1, the historic NS bit) in the low bit.
    out.push((((hlen / 4) as u8) << 4) | u8::from(seg.ae));
    out.push(seg.flags);
    let shift = if seg.flags & SYN != 0 { 0 } else { shift };
    let win = (seg.window >> shift).min(0xffff) as u16;
    out.extend_from_slice(&win.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    let us = |t: quicksim_engine::SimTime| (t.0 / 1_000_000) as u32;
    let ts = |out: &mut Vec<u8>, t: &quicksim_transport::tcp::segment::Timestamps| {
        out.extend_from_slice(&[8, 10]);
        out.extend_from_slice(&us(t.val).to_be_bytes());
        out.extend_from_slice(&us(t.ecr).to_be_bytes());
    };
    if let Some(o) = &seg.syn_opts {
        out.extend_from_slice(&[2, 4]);
        out.extend_from_slice(&o.mss.to_be_bytes());
        match (&seg.ts, o.sack_permitted) {
            (Some(t), true) => {
                out.extend_from_slice(&[4, 2]);
                ts(out, t);
            }
            (Some(t), false) => {
                out.extend_from_slice(&[1, 1]);
                ts(out, t);
            }
            (None, true) => out.extend_from_slice(&[1, 1, 4, 2]),
            (None, false) => {}
        }
        if let Some(w) = o.wscale {
            out.extend_from_slice(&[1, 3, 3, w]);
        }
    } else if let Some(t) = &seg.ts {
        out.extend_from_slice(&[1, 1]);
        ts(out, t);
    }
    if !seg.sack.is_empty() {
        out.extend_from_slice(&[1, 1, 5, 2 + 8 * seg.sack.len() as u8]);
        for &(a, b) in &seg.sack {
            out.extend_from_slice(&(a as u32).to_be_bytes());
            out.extend_from_slice(&(b as u32).to_be_bytes());
        }
    }
    debug_assert_eq!(out.len() - start, hlen, "TCP header bytes differ from header_len");
}

/// PPP in HDLC-like framing (RFC 1662 §3.1) as LINKTYPE_PPP carries it: address 0xff, control
/// 0x03, protocol 0x0021 (IPv4, RFC 1332). The opening flag is not part of a pcap record.
pub const PPP_HEADER: [u8; 4] = [0xff, 0x03, 0x00, 0x21];

/// The FCS-16 lookup table of RFC 1662 appendix C.2 (reflected polynomial 0x8408).
const FCS_TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut v = i as u16;
        let mut k = 0;
        while k < 8 {
            v = if v & 1 != 0 { (v >> 1) ^ 0x8408 } else { v >> 1 };
            k += 1;
        }
        t[i] = v;
        i += 1;
    }
    t
};

/// Updates the FCS-16 of RFC 1662 (appendix C.2) with `bytes`. Start with 0xffff; the frame
/// carries the complement, low byte first.
pub fn fcs16(mut fcs: u16, bytes: &[u8]) -> u16 {
    for &b in bytes {
        fcs = (fcs >> 8) ^ FCS_TABLE[((fcs ^ u16::from(b)) & 0xff) as usize];
    }
    fcs
}

/// FCS-16 over `zeros` zero bytes, continuing from `fcs`.
pub fn fcs16_zeros(mut fcs: u16, zeros: usize) -> u16 {
    const Z: [u8; 64] = [0; 64];
    let mut left = zeros;
    while left > 0 {
        let n = left.min(Z.len());
        fcs = fcs16(fcs, &Z[..n]);
        left -= n;
    }
    fcs
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_engine::SimTime;
    use quicksim_transport::tcp::segment::{SackBlocks, SynOptions, Timestamps};
    use smallvec::SmallVec;

    #[test]
    fn ipv4_checksum_matches_the_rfc1071_example_header() {
        // The header of the Wikipedia/RFC 1071 worked example: 4500 0073 0000 4000 4011 ...
        // c0a8 0001 c0a8 00c7 has checksum 0xb861.
        let mut v = Vec::new();
        ipv4(&mut v, 0x73, 0, 0x40, 17, 0, [192, 168, 0, 1], [192, 168, 0, 199]);
        assert_eq!(&v[10..12], &[0xb8, 0x61]);
        // A header with its checksum sums to 0xffff (RFC 1071 §1).
        assert_eq!(fold(sum16(0, &v)), 0);
    }

    #[test]
    fn setting_the_ecn_field_keeps_the_header_checksum_valid() {
        let mut v = Vec::new();
        ipv4(&mut v, 1500, 7, 64, 6, 0b10, [10, 0, 0, 1], [10, 0, 0, 2]);
        set_ipv4_ecn(&mut v, 0b11);
        assert_eq!(v[1] & 0b11, 0b11);
        assert_eq!(fold(sum16(0, &v)), 0, "a valid header sums to 0xffff");
        let mut w = Vec::new();
        ipv4(&mut w, 1500, 7, 64, 6, 0b11, [10, 0, 0, 1], [10, 0, 0, 2]);
        assert_eq!(v, w);
    }

    #[test]
    fn fcs16_of_a_frame_with_its_fcs_is_the_good_value() {
        // RFC 1662 §C.2: the FCS over data plus its complement (low byte first) is 0xf0b8.
        let data = [0xff, 0x03, 0x00, 0x21, 0x45, 0x00, 0x12];
        let c = !fcs16(0xffff, &data);
        let mut all = data.to_vec();
        all.extend_from_slice(&c.to_le_bytes());
        assert_eq!(fcs16(0xffff, &all), 0xf0b8);
        assert_eq!(fcs16_zeros(0xffff, 100), fcs16(0xffff, &[0u8; 100]));
    }

    #[test]
    fn tcp_headers_have_header_len_bytes_for_every_option_mix() {
        for ts in [false, true] {
            for sack_perm in [false, true] {
                for ws in [None, Some(7)] {
                    for blocks in 0..=(if ts { 3 } else { 4 }) {
                        let syn = blocks == 0;
                        let mut sack = SackBlocks::new();
                        for b in 0..blocks {
                            sack.push((100 * b as u64 + 10, 100 * b as u64 + 20));
                        }
                        let seg = TcpSegment {
                            seq: (1u64 << 32) + 5,
                            ack: 9,
                            len: 0,
                            flags: if syn { SYN } else { ACK },
                            ae: false,
                            window: 1 << 20,
                            ts: ts.then_some(Timestamps { val: SimTime(3_000_000), ecr: SimTime(0) }),
                            sack,
                            syn_opts: syn.then_some(SynOptions {
                                mss: 1460,
                                wscale: ws,
                                sack_permitted: sack_perm,
                            }),
                            records: SmallVec::new(),
                            ecn: Default::default(),
                        };
                        let mut v = Vec::new();
                        tcp(&mut v, &seg, 1, 2, 7);
                        assert_eq!(v.len() as u64, seg.header_len());
                        assert_eq!(&v[4..8], &5u32.to_be_bytes(), "seq is taken mod 2^32");
                        let win = u16::from_be_bytes([v[14], v[15]]);
                        assert_eq!(win, if syn { 0xffff } else { (1 << 20 >> 7) as u16 });
                    }
                }
            }
        }
    }
}
