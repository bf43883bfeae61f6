//! A set of disjoint half-open `u64` ranges, used for packet numbers (QUIC ACK ranges), stream
//! byte offsets (send and reassembly queues) and TCP sequence numbers (SACK scoreboard,
//! out-of-order queue).
//!
//! Kept as a sorted ring buffer rather than an ordered map: the sets hold few ranges (gaps from
//! loss), nearly every change happens at one of the ends (a packet number above the largest,
//! the next stream bytes, the oldest range dropped), and an empty set allocates nothing.
//! Lookups are binary searches; an insertion in the middle shifts the shorter side.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Disjoint, non-adjacent half-open ranges `[start, end)`, ascending.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RangeSet {
    v: VecDeque<(u64, u64)>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    /// Most sets hold one or two ranges: the first insert reserves one slot, not VecDeque's
    /// default four (later growth doubles as usual).
    #[inline]
    fn reserve_first(&mut self) {
        if self.v.capacity() == 0 {
            self.v.reserve_exact(1);
        }
    }

    /// Index of the first range starting above `x`.
    fn after(&self, x: u64) -> usize {
        // Fast path: most lookups are at or past the last range.
        match self.v.back() {
            Some(&(s, _)) if s <= x => self.v.len(),
            _ => self.v.partition_point(|&(s, _)| s <= x),
        }
    }

    /// Replaces the ranges `lo..hi` with `pieces`.
    fn splice(&mut self, lo: usize, hi: usize, pieces: &[(u64, u64)]) {
        let n = hi - lo;
        let k = pieces.len();
        for (i, &p) in pieces.iter().take(n).enumerate() {
            self.v[lo + i] = p;
        }
        if k > n {
            self.reserve_first();
            for (i, &p) in pieces[n..].iter().enumerate() {
                self.v.insert(lo + n + i, p);
            }
        } else if n > k {
            self.v.drain(lo + k..hi);
        }
    }

    /// Adds `[start, end)`; returns how many values were not in the set before.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        // Fast path, the common case (next packet number, next stream bytes): the new range
        // starts at or after the start of the last range.
        match self.v.back_mut() {
            None => {
                self.reserve_first();
                self.v.push_back((start, end));
                return end - start;
            }
            Some(last) if last.0 <= start => {
                if start > last.1 {
                    self.v.push_back((start, end));
                    return end - start;
                }
                // Overlaps or touches the last range: extend it.
                let added = end.saturating_sub(last.1);
                last.1 = last.1.max(end);
                return added;
            }
            Some(_) => {}
        }
        let mut s = start;
        let mut e = end;
        let mut covered = 0;
        let i = self.after(start);
        let mut lo = i;
        if i > 0 {
            let (ps, pe) = self.v[i - 1];
            if pe >= start {
                if pe >= end {
                    return 0;
                }
                covered += pe - start;
                s = ps;
                lo = i - 1;
            }
        }
        let mut hi = i;
        while let Some(&(a, b)) = self.v.get(hi) {
            if a > e {
                break;
            }
            if a < end {
                covered += b.min(end) - a;
            }
            e = e.max(b);
            hi += 1;
        }
        self.splice(lo, hi, &[(s, e)]);
        (end - start) - covered
    }

    /// Removes `[start, end)` from the set.
    pub fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        // Fast path, the common case (sent or acknowledged bytes taken from the front): nothing
        // below the first range is removed and the first range survives, so no later range is
        // touched either.
        if let Some(first) = self.v.front_mut() {
            if start <= first.0 && end < first.1 {
                first.0 = first.0.max(end);
                return;
            }
        }
        // Ranges overlapping [start, end) are those starting below `end` and ending above `start`.
        let hi = self.v.partition_point(|&(a, _)| a < end);
        let mut lo = hi;
        while lo > 0 && self.v[lo - 1].1 > start {
            lo -= 1;
        }
        if lo == hi {
            return;
        }
        let (first_s, _) = self.v[lo];
        let (_, last_e) = self.v[hi - 1];
        let mut pieces = [(0, 0); 2];
        let mut k = 0;
        if first_s < start {
            pieces[k] = (first_s, start);
            k += 1;
        }
        if last_e > end {
            pieces[k] = (end, last_e);
            k += 1;
        }
        self.splice(lo, hi, &pieces[..k]);
    }

    /// Removes every value below `x`.
    pub fn remove_below(&mut self, x: u64) {
        if x > 0 {
            self.remove(0, x);
        }
    }

    pub fn contains(&self, x: u64) -> bool {
        self.range_containing(x).is_some()
    }

    /// The range that contains `x`, if any.
    pub fn range_containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.after(x);
        (i > 0).then(|| self.v[i - 1]).filter(|&(_, e)| e > x)
    }

    /// Lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.v.front().copied()
    }

    /// Highest range.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.v.back().copied()
    }

    /// Removes and returns the lowest range.
    pub fn pop_first(&mut self) -> Option<(u64, u64)> {
        self.v.pop_front()
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.v.iter().copied()
    }

    /// Total number of values in the set.
    pub fn total(&self) -> u64 {
        self.v.iter().map(|(s, e)| e - s).sum()
    }

    /// Number of values of `[start, end)` that are in the set.
    pub fn count_in(&self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let mut n = 0;
        for &(a, b) in self.v.range(..self.v.partition_point(|&(a, _)| a < end)).rev() {
            if b <= start {
                break;
            }
            n += b.min(end) - a.max(start);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn insert_merges_and_counts_new_values() {
        let mut r = RangeSet::new();
        assert_eq!(r.insert(10, 20), 10);
        assert_eq!(r.insert(30, 40), 10);
        assert_eq!(r.insert(15, 35), 10);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(10, 40)]);
        assert_eq!(r.insert(40, 41), 1); // adjacent merges
        assert_eq!(r.len(), 1);
        assert_eq!(r.insert(12, 13), 0);
    }

    #[test]
    fn remove_splits() {
        let mut r = RangeSet::new();
        r.insert(0, 100);
        r.remove(10, 20);
        r.remove(50, 60);
        assert_eq!(r.iter().collect::<Vec<_>>(), vec![(0, 10), (20, 50), (60, 100)]);
        assert!(!r.contains(15));
        assert!(r.contains(20));
        assert_eq!(r.count_in(5, 65), 5 + 30 + 5);
        r.remove_below(30);
        assert_eq!(r.first(), Some((30, 50)));
    }

    proptest! {
        #[test]
        fn matches_a_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u64..200, 0u64..30), 1..60)) {
            let mut r = RangeSet::new();
            let mut m = BTreeSet::new();
            for (ins, s, l) in ops {
                if ins {
                    let before = m.len();
                    for x in s..s + l { m.insert(x); }
                    prop_assert_eq!(r.insert(s, s + l), (m.len() - before) as u64);
                } else {
                    for x in s..s + l { m.remove(&x); }
                    r.remove(s, s + l);
                }
                prop_assert_eq!(r.total(), m.len() as u64);
                let ranges: Vec<_> = r.iter().collect();
                for w in ranges.windows(2) { prop_assert!(w[0].1 < w[1].0); }
                for x in 0..240 { prop_assert_eq!(r.contains(x), m.contains(&x)); }
            }
        }
    }
}
