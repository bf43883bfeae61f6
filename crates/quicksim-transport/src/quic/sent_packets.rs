//! The sent packets of one packet number space, by packet number.
//!
//! Packet numbers are handed out densely and in increasing order (RFC 9000 §12.3), so a ring
//! buffer indexed by `pn - base` replaces an ordered map: sending appends, and ACKs and loss
//! detection remove from the old end or in place (the hole stays as `None` until the old end
//! catches up). Iteration is in ascending packet-number order, as a `BTreeMap` would give.

use std::collections::VecDeque;

use super::packet::Frame;
use super::recovery::SentPacket;

/// The frames recovery keeps of a sent packet (those whose ack or loss matters). Nearly always
/// one STREAM frame, sometimes none or a few, so the first is stored inline and only the rest
/// would need the heap: no allocation per data packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeptFrames {
    first: Option<Frame>,
    rest: Vec<Frame>,
}

impl KeptFrames {
    pub fn push(&mut self, f: Frame) {
        if self.first.is_none() {
            self.first = Some(f);
        } else {
            self.rest.push(f);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Frame> {
        self.first.iter().chain(&self.rest)
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
        self.first.into_iter().chain(self.rest)
    }
}

/// Sent packets keyed by packet number; the first and last slots are always occupied.
#[derive(Debug, Default)]
pub struct SentPackets {
    slots: VecDeque<Option<SentPacket>>,
    /// Packet number of `slots[0]`.
    base: u64,
    len: usize,
}

impl SentPackets {
    /// Number of packets held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Adds a packet whose number is above every number held (a gap, e.g. a CONNECTION_CLOSE
    /// that was never registered, leaves empty slots).
    pub fn insert(&mut self, p: SentPacket) {
        if self.slots.is_empty() {
            self.base = p.pn;
        }
        let idx = p.pn.checked_sub(self.base).expect("packet numbers increase") as usize;
        debug_assert!(idx >= self.slots.len(), "packet number {} sent twice or out of order", p.pn);
        // Grow by doubling from one slot (VecDeque's own growth starts at four): a mostly idle
        // connection holds one or two packets (its last ACKs, kept for INET's 5 s), and four
        // 112-byte slots per endpoint were ~15 % of an idle flow's memory.
        let (need, cap) = (idx + 1, self.slots.capacity());
        if need > cap {
            let new_cap = if cap == 0 { need } else { need.max(2 * cap) };
            self.slots.reserve_exact(new_cap - self.slots.len());
        }
        while self.slots.len() < idx {
            self.slots.push_back(None);
        }
        self.slots.push_back(Some(p));
        self.len += 1;
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

    /// Removes every packet numbered in `[lo, hi]`, passing each to `f` in ascending order.
    pub fn drain_range(&mut self, lo: u64, hi: u64, mut f: impl FnMut(SentPacket)) {
        for i in self.span(lo, hi) {
            if let Some(p) = self.slots[i].take() {
                self.len -= 1;
                f(p);
            }
        }
        self.trim();
    }

    /// Visits the packets numbered at most `hi` in ascending order: those matching `pred` are
    /// removed and passed to `take`, the others are shown to `keep`.
    pub fn drain_if(
        &mut self,
        hi: u64,
        pred: impl Fn(&SentPacket) -> bool,
        mut take: impl FnMut(SentPacket),
        mut keep: impl FnMut(&SentPacket),
    ) {
        for i in self.span(0, hi) {
            let slot = &mut self.slots[i];
            match slot {
                Some(p) if pred(p) => {
                    take(slot.take().expect("occupied"));
                    self.len -= 1;
                }
                Some(p) => keep(p),
                None => {}
            }
        }
        self.trim();
    }

    /// All packets, ascending.
    pub fn iter(&self) -> impl Iterator<Item = &SentPacket> {
        self.slots.iter().flatten()
    }

    /// The highest-numbered packet.
    pub fn last_mut(&mut self) -> Option<&mut SentPacket> {
        self.slots.back_mut().and_then(Option::as_mut)
    }

    /// The lowest-numbered packet.
    pub fn first(&self) -> Option<&SentPacket> {
        self.slots.front().and_then(Option::as_ref)
    }

    /// Removes the lowest-numbered packet.
    pub fn pop_first(&mut self) -> Option<SentPacket> {
        let p = self.slots.pop_front()??;
        self.base += 1;
        self.len -= 1;
        self.trim();
        Some(p)
    }

    /// Restores the invariant that both ends hold a packet; frees the buffer once it is empty,
    /// so an idle connection keeps no ring of stale capacity.
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
        assert_eq!(s.iter().map(|p| p.pn).collect::<Vec<_>>(), [3, 8, 9]);
        let (mut taken, mut kept) = (Vec::new(), Vec::new());
        s.drain_if(8, |p| p.pn == 3, |p| taken.push(p.pn), |p| kept.push(p.pn));
        assert_eq!((taken, kept), (vec![3], vec![8]));
        s.insert(pkt(10));
        s.drain_range(10, 10, |_| {});
        s.insert(pkt(11));
        assert_eq!(s.iter().map(|p| p.pn).collect::<Vec<_>>(), [8, 9, 11]);
        assert_eq!(s.pop_first().map(|p| p.pn), Some(8));
        assert_eq!(s.first().map(|p| p.pn), Some(9));
        s.drain_range(0, 100, |_| {});
        assert!(s.len() == 0 && s.first().is_none());
        s.insert(pkt(20));
        s.drain_if(19, |_| true, |_| panic!("below the buffer"), |_| {});
        assert_eq!(s.len(), 1);
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
