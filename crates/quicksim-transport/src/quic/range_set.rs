//! A set of disjoint half-open `u64` ranges, used for packet numbers (ACK ranges) and stream
//! byte offsets (send and reassembly queues). Ordered (BTreeMap), so iteration is deterministic.

use std::collections::BTreeMap;

/// Disjoint, non-adjacent half-open ranges `[start, end)`, keyed by start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    map: BTreeMap<u64, u64>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of disjoint ranges.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Adds `[start, end)`; returns how many values were not in the set before.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let (orig_s, orig_e) = (start, end);
        let mut s = start;
        let mut e = end;
        let mut covered = 0;
        if let Some((&ps, &pe)) = self.map.range(..=s).next_back() {
            if pe >= s {
                if pe >= e {
                    return 0;
                }
                covered += pe - orig_s;
                s = ps;
                self.map.remove(&ps);
            }
        }
        while let Some((&a, &b)) = self.map.range(s..=e).next() {
            self.map.remove(&a);
            if a < orig_e {
                covered += b.min(orig_e) - a;
            }
            if b > e {
                e = b;
            }
        }
        self.map.insert(s, e);
        (orig_e - orig_s) - covered
    }

    /// Removes `[start, end)` from the set.
    pub fn remove(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let hits: Vec<(u64, u64)> =
            self.map.range(..end).rev().take_while(|(_, &b)| b > start).map(|(&a, &b)| (a, b)).collect();
        for (a, b) in hits {
            self.map.remove(&a);
            if a < start {
                self.map.insert(a, start);
            }
            if b > end {
                self.map.insert(end, b);
            }
        }
    }

    /// Removes every value below `x`.
    pub fn remove_below(&mut self, x: u64) {
        if x > 0 {
            self.remove(0, x);
        }
    }

    pub fn contains(&self, x: u64) -> bool {
        self.map.range(..=x).next_back().is_some_and(|(_, &e)| e > x)
    }

    /// The range that contains `x`, if any.
    pub fn range_containing(&self, x: u64) -> Option<(u64, u64)> {
        self.map.range(..=x).next_back().filter(|(_, &e)| e > x).map(|(&s, &e)| (s, e))
    }

    /// Lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.map.iter().next().map(|(&s, &e)| (s, e))
    }

    /// Highest range.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.map.iter().next_back().map(|(&s, &e)| (s, e))
    }

    /// Removes and returns the lowest range.
    pub fn pop_first(&mut self) -> Option<(u64, u64)> {
        self.map.pop_first()
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
        self.map.iter().map(|(&s, &e)| (s, e))
    }

    /// Total number of values in the set.
    pub fn total(&self) -> u64 {
        self.map.iter().map(|(s, e)| e - s).sum()
    }

    /// Number of values of `[start, end)` that are in the set.
    pub fn count_in(&self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        let mut n = 0;
        for (&a, &b) in self.map.range(..end).rev() {
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
