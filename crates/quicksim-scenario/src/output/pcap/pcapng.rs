//! The pcapng file format (draft-ietf-opsawg-pcapng): a Section Header Block, one Interface
//! Description Block per captured link direction (nanosecond timestamps, `if_tsresol` = 9),
//! then one Enhanced Packet Block per frame, and Decryption Secrets Blocks (§4.7) where a
//! connection's TLS secrets become known. Little-endian, written through a `BufWriter`.

use std::io::{self, Write};

/// LINKTYPE_RAW: the record is an IPv4 or IPv6 packet (tcpdump.org link-layer header types).
pub const LINKTYPE_RAW: u16 = 101;
/// LINKTYPE_PPP: PPP (RFC 1661), in HDLC-like framing (RFC 1662) when it starts with ff 03.
pub const LINKTYPE_PPP: u16 = 9;

const SHB: u32 = 0x0a0d_0d0a;
const IDB: u32 = 0x0000_0001;
const EPB: u32 = 0x0000_0006;
const DSB: u32 = 0x0000_000a;
/// Secrets Type of a Decryption Secrets Block holding NSS key-log lines ("TLSK").
pub const SECRETS_TLS_KEYLOG: u32 = 0x544c_534b;
const BYTE_ORDER_MAGIC: u32 = 0x1a2b_3c4d;

/// Option codes (pcapng §4.2, §4.1).
const OPT_ENDOFOPT: u16 = 0;
const OPT_COMMENT: u16 = 1;
const SHB_USERAPPL: u16 = 4;
const IF_NAME: u16 = 2;
const IF_DESCRIPTION: u16 = 3;
const IF_TSRESOL: u16 = 9;

fn pad4(n: usize) -> usize {
    (4 - n % 4) % 4
}

/// Bytes of an option with a value of `len` bytes (code, length, value, padding).
fn opt_len(len: usize) -> usize {
    4 + len + pad4(len)
}

fn put_opt(b: &mut Vec<u8>, code: u16, value: &[u8]) {
    b.extend_from_slice(&code.to_le_bytes());
    b.extend_from_slice(&(value.len() as u16).to_le_bytes());
    b.extend_from_slice(value);
    b.resize(b.len() + pad4(value.len()), 0);
}

/// Writes blocks to `W`; the caller names interfaces in the order it adds them (0, 1, ...).
pub struct Writer<W: Write> {
    w: W,
    /// Scratch for building a block's fixed part.
    buf: Vec<u8>,
}

const ZEROS: [u8; 4096] = [0; 4096];

impl<W: Write> Writer<W> {
    /// Starts a section: the Section Header Block naming the application.
    pub fn new(w: W, app: &str, comment: &str) -> io::Result<Self> {
        let mut s = Writer { w, buf: Vec::with_capacity(256) };
        let b = &mut s.buf;
        let opts = opt_len(app.len()) + opt_len(comment.len()) + 4;
        let total = (28 + opts) as u32;
        b.extend_from_slice(&SHB.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&BYTE_ORDER_MAGIC.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes()); // version 1.0
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes()); // section length not given
        put_opt(b, OPT_COMMENT, comment.as_bytes());
        put_opt(b, SHB_USERAPPL, app.as_bytes());
        put_opt(b, OPT_ENDOFOPT, &[]);
        b.extend_from_slice(&total.to_le_bytes());
        s.w.write_all(&s.buf)?;
        Ok(s)
    }

    /// An Interface Description Block: link type, snap length, name, description, and
    /// timestamps in nanoseconds.
    pub fn interface(&mut self, linktype: u16, snaplen: u32, name: &str, descr: &str) -> io::Result<()> {
        let b = &mut self.buf;
        b.clear();
        let opts = opt_len(name.len()) + opt_len(descr.len()) + opt_len(1) + 4;
        let total = (20 + opts) as u32;
        b.extend_from_slice(&IDB.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&linktype.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&snaplen.to_le_bytes());
        put_opt(b, IF_NAME, name.as_bytes());
        put_opt(b, IF_DESCRIPTION, descr.as_bytes());
        put_opt(b, IF_TSRESOL, &[9]);
        put_opt(b, OPT_ENDOFOPT, &[]);
        b.extend_from_slice(&total.to_le_bytes());
        self.w.write_all(b)
    }

    /// An Enhanced Packet Block of interface `iface` at `ts_ns`: the frame is `head` followed
    /// by `zeros` zero bytes and then `tail` (`orig_len` in all), of which the first
    /// `captured` bytes are recorded.
    pub fn packet(
        &mut self,
        iface: u32,
        ts_ns: u64,
        head: &[u8],
        zeros: usize,
        tail: &[u8],
        captured: usize,
    ) -> io::Result<()> {
        let orig = head.len() + zeros + tail.len();
        debug_assert!(captured <= orig);
        let total = (32 + captured + pad4(captured)) as u32;
        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(&EPB.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&iface.to_le_bytes());
        b.extend_from_slice(&((ts_ns >> 32) as u32).to_le_bytes());
        b.extend_from_slice(&(ts_ns as u32).to_le_bytes());
        b.extend_from_slice(&(captured as u32).to_le_bytes());
        b.extend_from_slice(&(orig as u32).to_le_bytes());
        self.w.write_all(b)?;
        let h = head.len().min(captured);
        self.w.write_all(&head[..h])?;
        let mut z = zeros.min(captured - h);
        while z > 0 {
            let n = z.min(ZEROS.len());
            self.w.write_all(&ZEROS[..n])?;
            z -= n;
        }
        let t = captured - h - zeros.min(captured - h);
        self.w.write_all(&tail[..t])?;
        self.w.write_all(&ZEROS[..pad4(captured)])?;
        self.w.write_all(&total.to_le_bytes())
    }

    /// A Decryption Secrets Block of type `kind` (e.g. [`SECRETS_TLS_KEYLOG`]) holding `data`;
    /// it applies to the packets after it.
    pub fn secrets(&mut self, kind: u32, data: &[u8]) -> io::Result<()> {
        let total = (20 + data.len() + pad4(data.len())) as u32;
        let b = &mut self.buf;
        b.clear();
        b.extend_from_slice(&DSB.to_le_bytes());
        b.extend_from_slice(&total.to_le_bytes());
        b.extend_from_slice(&kind.to_le_bytes());
        b.extend_from_slice(&(data.len() as u32).to_le_bytes());
        b.extend_from_slice(data);
        b.resize(b.len() + pad4(data.len()), 0);
        b.extend_from_slice(&total.to_le_bytes());
        self.w.write_all(b)
    }

    /// Flushes and hands back the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush()?;
        Ok(self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u32_at(b: &[u8], i: usize) -> u32 {
        u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
    }

    #[test]
    fn blocks_are_4_byte_aligned_and_their_lengths_agree() {
        let mut w = Writer::new(Vec::new(), "quicksim", "a test").unwrap();
        w.interface(LINKTYPE_RAW, 100, "l:a->b", "x").unwrap();
        w.packet(0, (5 << 32) + 7, &[1, 2, 3], 200, &[9, 9], 101).unwrap();
        w.secrets(SECRETS_TLS_KEYLOG, b"L 00 11\n").unwrap();
        let b = w.finish().unwrap();
        let mut i = 0;
        let mut kinds = Vec::new();
        while i < b.len() {
            let total = u32_at(&b, i + 4) as usize;
            assert_eq!(total % 4, 0);
            assert_eq!(u32_at(&b, i + total - 4) as usize, total, "trailing length");
            kinds.push(u32_at(&b, i));
            i += total;
        }
        assert_eq!(i, b.len());
        assert_eq!(kinds, [SHB, IDB, EPB, DSB]);
        let dsb = b.len() - 28;
        assert_eq!((u32_at(&b, dsb + 8), u32_at(&b, dsb + 12)), (SECRETS_TLS_KEYLOG, 8), "type, length");
        assert_eq!(&b[dsb + 16..dsb + 24], b"L 00 11\n");
        let epb = dsb - (32 + 104);
        assert_eq!((u32_at(&b, epb + 12), u32_at(&b, epb + 16)), (5, 7), "timestamp high, low");
        assert_eq!((u32_at(&b, epb + 20), u32_at(&b, epb + 24)), (101, 205), "captured, original");
        assert_eq!(&b[epb + 28..epb + 31], &[1, 2, 3]);
    }
}
