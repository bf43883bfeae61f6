//! A calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue implementation for
//! the simulation event set problem", CACM 31(10), 1988), kept as the measured alternative to
//! the binary heap of [`EventQueue`](crate::EventQueue).
//!
//! Time is cut into buckets of `width` picoseconds laid round a "year" of `buckets.len()`
//! buckets; an event goes into bucket `(time / width) mod buckets`, each bucket sorted by (time,
//! insertion sequence). Popping scans forward from the current bucket for an event of the
//! current year. The number of buckets follows the number of events (doubling and halving) and
//! the width is re-estimated from the spacing of the earliest events at each resize, as in
//! Brown's paper. Pop order is exactly `EventQueue`'s: (time, then insertion sequence).
//!
//! `examples/queue_bench.rs` measures both on hold-model workloads; the results and why the
//! simulator keeps the heap are in docs/performance/history/round-02.md.

use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
struct Key {
    time: u64,
    seq: u64,
    slot: u32,
}

impl Key {
    #[inline]
    fn before(&self, o: &Key) -> bool {
        (self.time, self.seq) < (o.time, o.seq)
    }
}

/// Fewest buckets (a power of two, as every bucket count).
const MIN_BUCKETS: usize = 2;
/// Events sampled to estimate the bucket width at a resize.
const WIDTH_SAMPLE: usize = 25;

/// Priority queue of events by (time, insertion sequence), with a clock that only moves forward.
pub struct CalendarQueue<E> {
    /// Each bucket sorted by (time, seq) descending: its earliest event is last.
    buckets: Vec<Vec<Key>>,
    /// Bucket width in picoseconds (>= 1).
    width: u64,
    len: usize,
    /// The bucket being scanned and the end (exclusive) of its window in the current year.
    cur: usize,
    cur_top: u64,
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for CalendarQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> CalendarQueue<E> {
    pub fn new() -> Self {
        CalendarQueue {
            buckets: (0..MIN_BUCKETS).map(|_| Vec::new()).collect(),
            width: 1_000_000, // 1 us until the first resize measures the spacing
            len: 0,
            cur: 0,
            cur_top: 1_000_000,
            slots: Vec::new(),
            free: Vec::new(),
            seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    #[inline]
    fn bucket_of(&self, t: u64) -> usize {
        (t / self.width) as usize & (self.buckets.len() - 1)
    }

    #[inline]
    fn insert_key(&mut self, k: Key) {
        let b = self.bucket_of(k.time);
        let v = &mut self.buckets[b];
        // Descending order: find the first position whose key is before `k`.
        let pos = v.partition_point(|x| !x.before(&k));
        v.insert(pos, k);
    }

    /// Schedule `ev` at `at` (`at >= now()`; an earlier time panics, as `EventQueue::push`).
    pub fn push(&mut self, at: SimTime, ev: E) {
        assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(ev);
                s
            }
            None => {
                self.slots.push(Some(ev));
                (self.slots.len() - 1) as u32
            }
        };
        self.insert_key(Key { time: at.0, seq: self.seq, slot });
        self.seq += 1;
        self.len += 1;
        if self.len > 2 * self.buckets.len() {
            self.resize(self.buckets.len() * 2);
        }
    }

    /// Pop the next event and advance the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if self.len == 0 {
            return None;
        }
        let n = self.buckets.len();
        let mut found = None;
        for _ in 0..n {
            if let Some(k) = self.buckets[self.cur].last() {
                if k.time < self.cur_top {
                    found = self.buckets[self.cur].pop();
                    break;
                }
            }
            self.cur = (self.cur + 1) & (n - 1);
            self.cur_top = self.cur_top.saturating_add(self.width);
        }
        let k = match found {
            Some(k) => k,
            None => {
                // A whole year without an event: jump straight to the earliest one.
                let (b, _) = self
                    .buckets
                    .iter()
                    .enumerate()
                    .filter_map(|(i, v)| v.last().map(|k| (i, *k)))
                    .min_by(|a, b| (a.1.time, a.1.seq).cmp(&(b.1.time, b.1.seq)))
                    .expect("len > 0");
                let k = self.buckets[b].pop().expect("non-empty");
                self.cur = b;
                self.cur_top = (k.time / self.width + 1).saturating_mul(self.width);
                k
            }
        };
        self.len -= 1;
        self.now = SimTime(k.time);
        self.popped += 1;
        let ev = self.slots[k.slot as usize].take().expect("a queued slot holds its event");
        self.free.push(k.slot);
        if self.len < self.buckets.len() / 2 && self.buckets.len() > MIN_BUCKETS {
            self.resize(self.buckets.len() / 2);
        }
        Some((SimTime(k.time), ev))
    }

    /// Re-spreads all events over `n` buckets with a width re-estimated from the spacing of the
    /// earliest events (Brown: three times their mean separation, ignoring separations more than
    /// twice the mean).
    fn resize(&mut self, n: usize) {
        let mut keys: Vec<Key> = self.buckets.iter_mut().flat_map(std::mem::take).collect();
        let m = keys.len().min(WIDTH_SAMPLE);
        if m >= 2 {
            keys.select_nth_unstable_by(m - 1, |a, b| (a.time, a.seq).cmp(&(b.time, b.seq)));
            let mut sample: Vec<u64> = keys[..m].iter().map(|k| k.time).collect();
            sample.sort_unstable();
            let seps: Vec<u64> = sample.windows(2).map(|w| w[1] - w[0]).collect();
            let mean = seps.iter().sum::<u64>() / seps.len() as u64;
            let kept: Vec<u64> = seps.iter().copied().filter(|&s| s <= 2 * mean).collect();
            let mean_kept = if kept.is_empty() { mean } else { kept.iter().sum::<u64>() / kept.len() as u64 };
            self.width = (3 * mean_kept).max(1);
        }
        self.buckets = (0..n).map(|_| Vec::new()).collect();
        for k in keys {
            self.insert_key(k);
        }
        let t = self.now.0;
        self.cur = self.bucket_of(t);
        self.cur_top = (t / self.width + 1).saturating_mul(self.width);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EventQueue, Rng};

    /// Random pushes (ties, bursts, far-future events) interleaved with pops: the calendar queue
    /// pops exactly what the heap pops, through several resizes both ways.
    #[test]
    fn pops_in_the_same_order_as_the_heap() {
        let mut rng = Rng::from_seed(7);
        let mut heap = EventQueue::new();
        let mut cal = CalendarQueue::new();
        let mut id = 0u64;
        for round in 0..20_000u64 {
            let pushes = if round % 1000 < 500 { 3 } else { 1 };
            for _ in 0..pushes {
                let now = heap.now().0;
                let dt = match rng.range_u64(0, 9) {
                    0 => 0,                                   // same time: insertion order decides
                    1..=5 => rng.range_u64(1, 2_000_000),     // ~us: serializations
                    6..=7 => 10_000_000_000,                  // 10 ms: propagation, many ties
                    _ => rng.range_u64(1, 5_000_000_000_000), // up to 5 s: timers
                };
                heap.push(SimTime(now + dt), id);
                cal.push(SimTime(now + dt), id);
                id += 1;
            }
            if round % 1000 >= 300 || round % 3 == 0 {
                assert_eq!(heap.pop(), cal.pop());
            }
        }
        while let Some(x) = heap.pop() {
            assert_eq!(Some(x), cal.pop());
        }
        assert!(cal.is_empty() && cal.pop().is_none());
    }
}
