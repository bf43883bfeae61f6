//! The sent packets of one packet number space, by packet number.
//!
//! Packet numbers are handed out densely and in increasing order (RFC 9000 §12.3), so a ring
//! buffer indexed by `pn - base` replaces an ordered map: sending appends, and ACKs and loss
//! detection remove from the old end or in place (the hole stays as `None` until the old end
//! catches up). Iteration is in ascending packet-number order, as a `BTreeMap` would give.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

use quicksim_engine::SimTime;

use super::niche::Opt;
use super::packet::Frame;

/// The frames recovery keeps of a sent packet (those whose ack or loss matters). Nearly always
/// one STREAM frame, sometimes none or a few, so the first is stored inline and only the rest
/// would need the heap: no allocation per data packet. The rest is boxed (8 B instead of a
/// 24-byte `Vec`): it is nearly always absent, and every byte of a `SentPacket` is moved into
/// the ring when the packet is sent.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptFrames {
    first: Option<Frame>,
    // The box is the point: one pointer inline instead of the `Vec`'s three words.
    #[allow(clippy::box_collection)]
    rest: Option<Box<Vec<Frame>>>,
}

impl KeptFrames {
    pub fn push(&mut self, f: Frame) {
        if self.first.is_none() {
            self.first = Some(f);
        } else {
            self.rest.get_or_insert_default().push(f);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Frame> {
        self.first.iter().chain(self.rest.iter().flat_map(|r| r.iter()))
    }
}

impl FromIterator<Frame> for KeptFrames {
    fn from_iter<I: IntoIterator<Item = Frame>>(iter: I) -> Self {
        let mut k = KeptFrames::default();
        iter.into_iter().for_each(|f| k.push(f));
        k
    }
}

impl IntoIterator for KeptFrames {
    type Item = Frame;
    type IntoIter = std::iter::Chain<std::option::IntoIter<Frame>, std::vec::IntoIter<Frame>>;
    fn into_iter(self) -> Self::IntoIter {
        self.first.into_iter().chain(self.rest.map_or_else(Vec::new, |r| *r))
    }
}

/// An ACK-only packet as kept: not in flight, no frames to track, so only what its ack (the
/// ack-of-ack), its loss or its pruning reads. 32 B instead of a `SentPacket` slot (104 B when
/// written, 80 B now): a receiver keeps its
/// ACK-only packets for 5 s (`OLD_NON_IN_FLIGHT`), and in a mostly idle flow they were most of
/// the ring.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct AckOnly {
    pn: u64,
    time_sent: SimTime,
    ack_largest: Opt<u64>,
    size: u32,
}

impl AckOnly {
    /// The compact form of `p`, if it is an ACK-only packet.
    fn of(p: &SentPacket) -> Option<AckOnly> {
        let plain = !p.in_flight && !p.ack_eliciting && p.frames.is_empty();
        plain.then_some(AckOnly {
            pn: p.pn,
            time_sent: p.time_sent,
            ack_largest: p.ack_largest,
            size: p.size,
        })
    }

    fn packet(self) -> SentPacket {
        SentPacket {
            pn: self.pn,
            time_sent: self.time_sent,
            size: self.size,
            ack_eliciting: false,
            in_flight: false,
            ect: false,
            frames: KeptFrames::default(),
            ack_largest: self.ack_largest,
        }
    }
}

/// Sent packets keyed by packet number: ACK-only ones in a compact queue, the others in a
/// ring whose first and last slots are always occupied. Every visit goes through both in
/// ascending packet-number order, as one ordered map would.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SentPackets {
    slots: VecDeque<Option<SentPacket>>,
    /// Packet number of `slots[0]`.
    base: u64,
    /// ACK-only packets, ascending packet numbers.
    acks: VecDeque<AckOnly>,
}

/// Makes room for `need` elements in `q`, growing by doubling from exactly `need` (VecDeque's
/// own growth starts at four): a mostly idle connection holds one or two packets, and four
/// 104-byte slots (80 B now) per endpoint were ~15 % of an idle flow's memory.
fn reserve_doubling<T>(q: &mut VecDeque<T>, need: usize) {
    let cap = q.capacity();
    if need > cap {
        let new_cap = if cap == 0 { need } else { need.max(2 * cap) };
        q.reserve_exact(new_cap - q.len());
    }
}

impl SentPackets {
    /// Number of packets held (counted: for tests and bounds only).
    pub fn len(&self) -> usize {
        self.slots.iter().flatten().count() + self.acks.len()
    }

    /// Adds a packet whose number is above every number held (a gap, e.g. a CONNECTION_CLOSE
    /// that was never registered or an ACK-only packet, leaves empty slots in the ring).
    pub fn insert(&mut self, p: SentPacket) {
        if let Some(a) = AckOnly::of(&p) {
            debug_assert!(self.acks.back().is_none_or(|b| b.pn < a.pn), "packet numbers increase");
            let need = self.acks.len() + 1;
            reserve_doubling(&mut self.acks, need);
            self.acks.push_back(a);
            return;
        }
        if self.slots.is_empty() {
            self.base = p.pn;
        }
        let idx = p.pn.checked_sub(self.base).expect("packet numbers increase") as usize;
        debug_assert!(idx >= self.slots.len(), "packet number {} sent twice or out of order", p.pn);
        reserve_doubling(&mut self.slots, idx + 1);
        while self.slots.len() < idx {
            self.slots.push_back(None);
        }
        self.slots.push_back(Some(p));
    }

    /// Slot indices of the packet numbers in `[lo, hi]` that lie within the buffer.
    fn span(&self, lo: u64, hi: u64) -> std::ops::Range<usize> {
        let end = self.base + self.slots.len() as u64; // one past the last slot
        let lo = lo.max(self.base);
        let hi = hi.saturating_add(1).min(end);
        if lo >= hi {
            return 0..0;
        }
        (lo - self.base) as usize..(hi - self.base) as usize
    }

    /// Indices in `acks` of the packet numbers in `[lo, hi]`.
    #[inline]
    fn ack_span(&self, lo: u64, hi: u64) -> std::ops::Range<usize> {
        if self.acks.is_empty() {
            return 0..0;
        }
        // The queue holds the ACK-only packets of a round trip or so, and an ACK range or a
        // loss-detection pass (from 0) mostly covers none or one of the oldest: a short walk
        // from the front before a binary search.
        const WALK: usize = 4;
        let q = &self.acks;
        let n = q.len();
        let mut start = 0;
        while start < n && q[start].pn < lo {
            start += 1;
            if start == WALK {
                start = q.partition_point(|a| a.pn < lo);
                break;
            }
        }
        let mut end = start;
        while end < n && q[end].pn <= hi {
            end += 1;
            if end - start == WALK {
                end = q.partition_point(|a| a.pn <= hi);
                break;
            }
        }
        start..end
    }

    /// The packet numbered `pn`, if held and not ACK-only.
    #[inline]
    pub fn get_tracked(&self, pn: u64) -> Option<&SentPacket> {
        let i = pn.checked_sub(self.base)?;
        self.slots.get(usize::try_from(i).ok()?)?.as_ref()
    }

    /// Shows every packet numbered in `[lo, hi]` to `f`, ascending, leaving them in place.
    pub fn visit_range<F: FnMut(&SentPacket)>(&self, lo: u64, hi: u64, mut f: F) {
        let slots = &self.slots;
        let show = |i: usize, f: &mut F| {
            if let Some(p) = &slots[i] {
                f(p);
            }
        };
        merge(self.base, self.span(lo, hi), &self.acks, self.ack_span(lo, hi), &mut f, show);
    }

    /// Removes every packet numbered in `[lo, hi]`, showing each to `f` in ascending order
    /// first. By reference: a packet is dropped where it lies, not moved out (an ACK removes
    /// every packet it acknowledges this way).
    #[inline]
    pub fn drain_range(&mut self, lo: u64, hi: u64, mut f: impl FnMut(&SentPacket)) {
        let acks = self.ack_span(lo, hi);
        if !acks.is_empty() {
            // ACK-only packets in the range (rare on a data sender): `f` is called through a
            // reference there, so that its one direct call below can be inlined.
            return self.drain_range_mixed(lo, hi, acks, &mut f);
        }
        for i in self.span(lo, hi) {
            let slot = &mut self.slots[i];
            if let Some(p) = slot {
                f(p);
                *slot = None;
            }
        }
        self.trim();
    }

    /// `drain_range` when the ACK-only packets `acks` (indices) lie in `[lo, hi]`.
    fn drain_range_mixed(
        &mut self,
        lo: u64,
        hi: u64,
        acks: std::ops::Range<usize>,
        f: &mut dyn FnMut(&SentPacket),
    ) {
        let span = self.span(lo, hi);
        let slots = &mut self.slots;
        let take = |i: usize, f: &mut (dyn FnMut(&SentPacket) + '_)| {
            let slot = &mut slots[i];
            if let Some(p) = slot {
                f(p);
                *slot = None;
            }
        };
        merge(self.base, span, &self.acks, acks.clone(), f, take);
        self.acks.drain(acks);
        self.trim();
    }

    /// The lowest packet number held that is not ACK-only, if any.
    #[inline]
    pub fn first_tracked_pn(&self) -> Option<u64> {
        (!self.slots.is_empty()).then_some(self.base)
    }

    /// The lowest packet number held, if any.
    #[inline]
    pub fn first_pn(&self) -> Option<u64> {
        let ring = (!self.slots.is_empty()).then_some(self.base);
        match (ring, self.acks.front()) {
            (Some(r), Some(a)) => Some(r.min(a.pn)),
            (r, a) => r.or(a.map(|a| a.pn)),
        }
    }

    /// Visits the packets numbered in `[lo, hi]` in ascending order: those matching `pred` are
    /// removed and passed to `take`, the others are shown to `keep`.
    pub fn drain_if(
        &mut self,
        lo: u64,
        hi: u64,
        pred: impl Fn(&SentPacket) -> bool,
        mut take: impl FnMut(SentPacket),
        mut keep: impl FnMut(&SentPacket),
    ) {
        // An empty span when no ACK-only packet is in the range (nearly always on a data
        // sender): then the ACK-only visits below do nothing.
        let acks = self.ack_span(lo, hi);
        let end = acks.end;
        // The ACK-only packets kept are moved down to index `w` over the taken ones.
        let (mut j, mut w) = (acks.start, acks.start);
        macro_rules! visit_ack {
            () => {{
                let a = self.acks[j];
                let p = a.packet();
                if pred(&p) {
                    take(p);
                } else {
                    keep(&p);
                    self.acks[w] = a;
                    w += 1;
                }
                j += 1;
            }};
        }
        for i in self.span(lo, hi) {
            let pn = self.base + i as u64;
            while j < end && self.acks[j].pn < pn {
                visit_ack!();
            }
            let slot = &mut self.slots[i];
            match slot {
                Some(p) if pred(p) => {
                    take(slot.take().expect("occupied"));
                }
                Some(p) => keep(p),
                None => {}
            }
        }
        while j < end {
            visit_ack!();
        }
        if w < end {
            self.acks.drain(w..end);
        }
        self.trim();
    }

    /// The packets that are in flight or carry frames (all but the ACK-only ones), ascending.
    pub fn iter_tracked(&self) -> impl Iterator<Item = &SentPacket> {
        self.slots.iter().flatten()
    }

    /// The highest-numbered packet of the ring (not ACK-only).
    pub fn last_mut(&mut self) -> Option<&mut SentPacket> {
        self.slots.back_mut().and_then(Option::as_mut)
    }

    /// Removes packets lowest number first while `old` holds for them.
    pub fn pop_while(&mut self, old: impl Fn(&SentPacket) -> bool) {
        loop {
            let ring = self.slots.front().and_then(Option::as_ref);
            match (ring, self.acks.front()) {
                (Some(p), a) if a.is_none_or(|a| p.pn < a.pn) => {
                    if !old(p) {
                        break;
                    }
                    self.slots.pop_front();
                    self.base += 1;
                    self.trim();
                }
                (_, Some(a)) => {
                    if !old(&a.packet()) {
                        break;
                    }
                    self.acks.pop_front();
                    self.trim();
                }
                (_, None) => break,
            }
        }
    }

    /// Restores the invariant that both ends of the ring hold a packet; frees the buffers once
    /// they are empty, so an idle connection keeps no stale capacity.
    fn trim(&mut self) {
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        while let Some(None) = self.slots.back() {
            self.slots.pop_back();
        }
        if self.slots.is_empty() && self.slots.capacity() > 0 {
            // An application-limited flow empties the buffer after each burst: one allocation
            // per burst is cheap, and a mostly idle connection then holds no ring at all.
            self.slots = VecDeque::new();
        }
        if self.acks.is_empty() && self.acks.capacity() > 0 {
            self.acks = VecDeque::new();
        }
    }
}

/// What recovery remembers about a sent packet.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SentPacket {
    pub pn: u64,
    pub time_sent: SimTime,
    /// QUIC packet size (header + frames): what counts in flight. u32, as `max_packet_size` is
    /// at most 65 527 B (it shares a word with the flags below).
    pub size: u32,
    pub ack_eliciting: bool,
    pub in_flight: bool,
    /// Sent with ECT(0) (`ecn.rs`): what ECN validation compares the peer's counts with.
    pub ect: bool,
    /// Frames whose ack or loss matters (no PADDING, no ACK: see `ack_largest`).
    pub frames: KeptFrames,
    /// Largest acknowledged of the ACK frame this packet carried (for ack-of-ack).
    pub ack_largest: Opt<u64>,
}

/// The walk `visit_range` and `drain_range_mixed` share: the ring's slots `span` (packet
/// numbers from `base`) merged in packet-number order with the ACK-only packets `ack_span` of
/// `acks`; an ACK-only packet goes to `f`, a slot to `slot` (which shows it to `f`, and may take
/// it).
#[inline(always)]
fn merge<F: FnMut(&SentPacket) + ?Sized>(
    base: u64,
    span: std::ops::Range<usize>,
    acks: &VecDeque<AckOnly>,
    ack_span: std::ops::Range<usize>,
    f: &mut F,
    mut slot: impl FnMut(usize, &mut F),
) {
    let mut j = ack_span.start;
    for i in span {
        let pn = base + i as u64;
        while j < ack_span.end && acks[j].pn < pn {
            f(&acks[j].packet());
            j += 1;
        }
        slot(i, f);
    }
    for a in acks.range(j..ack_span.end) {
        f(&a.packet());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quicksim_engine::SimTime;

    fn pkt(pn: u64) -> SentPacket {
        SentPacket {
            pn,
            time_sent: SimTime::ZERO,
            size: 100,
            ack_eliciting: true,
            in_flight: true,
            ect: false,
            frames: Default::default(),
            ack_largest: Default::default(),
        }
    }

    #[test]
    fn behaves_like_an_ordered_map() {
        let mut s = SentPackets::default();
        for pn in [3, 4, 5, 7, 8, 9] {
            s.insert(pkt(pn)); // 6 is a gap
        }
        assert_eq!(s.len(), 6);
        let mut got = Vec::new();
        s.drain_range(4, 7, |p| got.push(p.pn));
        assert_eq!(got, [4, 5, 7]);
        assert_eq!(s.iter_tracked().map(|p| p.pn).collect::<Vec<_>>(), [3, 8, 9]);
        let (mut taken, mut kept) = (Vec::new(), Vec::new());
        s.drain_if(0, 8, |p| p.pn == 3, |p| taken.push(p.pn), |p| kept.push(p.pn));
        assert_eq!((taken, kept), (vec![3], vec![8]));
        s.insert(pkt(10));
        s.drain_range(10, 10, |_| {});
        s.insert(pkt(11));
        assert_eq!(s.iter_tracked().map(|p| p.pn).collect::<Vec<_>>(), [8, 9, 11]);
        s.pop_while(|p| p.pn < 9);
        assert_eq!(s.iter_tracked().next().map(|p| p.pn), Some(9));
        s.drain_range(0, 100, |_| {});
        assert!(s.len() == 0 && s.iter_tracked().next().is_none());
        s.insert(pkt(20));
        s.drain_if(0, 19, |_| true, |_| panic!("below the buffer"), |_| {});
        assert_eq!(s.len(), 1);
    }

    fn ack_only(pn: u64, t: u64) -> SentPacket {
        SentPacket { ack_eliciting: false, in_flight: false, time_sent: SimTime(t), ..pkt(pn) }
    }

    /// ACK-only packets are kept apart, but every visit sees all packets in number order.
    #[test]
    fn ack_only_packets_interleave() {
        let mut s = SentPackets::default();
        for pn in 0..12 {
            s.insert(if pn % 3 == 0 { pkt(pn) } else { ack_only(pn, pn) });
        }
        assert_eq!((s.len(), s.acks.len()), (12, 8));
        assert_eq!(s.iter_tracked().map(|p| p.pn).collect::<Vec<_>>(), [0, 3, 6, 9]);
        let mut got = Vec::new();
        s.drain_range(2, 6, |p| got.push((p.pn, p.in_flight)));
        assert_eq!(got, [(2, false), (3, true), (4, false), (5, false), (6, true)]);
        let (mut taken, mut kept) = (Vec::new(), Vec::new());
        s.drain_if(0, 10, |p| p.pn % 2 == 1, |p| taken.push(p.pn), |p| kept.push(p.pn));
        assert_eq!((taken, kept), (vec![1, 7, 9], vec![0, 8, 10]));
        // Left: 0 (ring), 8, 10, 11 (ACK-only). Pruning stops at the first packet kept.
        s.pop_while(|p| !p.in_flight);
        assert_eq!(s.len(), 4);
        s.drain_range(0, 0, |_| {});
        s.pop_while(|p| !p.in_flight && p.time_sent < SimTime(11));
        assert_eq!(s.len(), 1);
        let mut rest = Vec::new();
        s.drain_range(0, 100, |p| rest.push(p.pn));
        assert_eq!(rest, [11]);
        assert_eq!(s.acks.capacity(), 0);
    }

    /// Visiting leaves the packets in place; a sub-range of `drain_if` touches nothing outside it.
    #[test]
    fn visits_and_sub_ranges() {
        let mut s = SentPackets::default();
        for pn in 2..10 {
            s.insert(if pn % 4 == 0 { ack_only(pn, pn) } else { pkt(pn) });
        }
        assert_eq!(s.first_pn(), Some(2));
        assert_eq!(s.get_tracked(3).map(|p| p.pn), Some(3));
        assert!(s.get_tracked(4).is_none() && s.get_tracked(1).is_none() && s.get_tracked(10).is_none());
        let mut seen = Vec::new();
        s.visit_range(3, 8, |p| seen.push(p.pn));
        assert_eq!(seen, [3, 4, 5, 6, 7, 8]);
        assert_eq!(s.len(), 8);
        let (mut taken, mut kept) = (Vec::new(), Vec::new());
        s.drain_if(4, 6, |p| p.pn != 5, |p| taken.push(p.pn), |p| kept.push(p.pn));
        assert_eq!((taken, kept), (vec![4, 6], vec![5]));
        let mut rest = Vec::new();
        s.drain_range(0, 100, |p| rest.push(p.pn));
        assert_eq!(rest, [2, 3, 5, 7, 8, 9]);
        assert_eq!(s.first_pn(), None);
    }

    #[test]
    fn kept_frames_keep_order() {
        let fs = [Frame::Ping, Frame::MaxData(5), Frame::HandshakeDone];
        let k: KeptFrames = fs.iter().cloned().collect();
        assert_eq!(k.iter().cloned().collect::<Vec<_>>(), fs);
        assert_eq!(k.into_iter().collect::<Vec<_>>(), fs);
        assert!(KeptFrames::default().is_empty());
    }
}

#[cfg(test)]
mod size {
    /// What a sent packet costs in the ring (it was 152 B with the delivery-rate record inline,
    /// whose moves were `memcpy` calls): pn, send time, size and flags, one frame inline, the
    /// boxed rest, the ACK frame's largest.
    #[test]
    fn sent_packet_is_80_bytes() {
        assert_eq!(std::mem::size_of::<Option<super::SentPacket>>(), 80);
    }
}
