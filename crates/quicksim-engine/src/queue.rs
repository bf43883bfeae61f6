//! The future event list: a binary heap ordered by (time, insertion sequence), so events at the
//! same time pop in the order they were scheduled (ns-3's `EventKey.m_uid`).
//!
//! The heap holds only 24-byte keys (time, sequence, slot); the event bodies sit in a slab
//! (`Vec<Option<E>>` with a free list) and never move while the heap sifts. With the world's
//! events (~100 B: an `Arrive` carries the whole packet) the heap of whole entries spent most of
//! its time copying them; see docs/performance/history/round-01.md for the measurement against the
//! alternatives (round-02.md there for the calendar queue).
//! Events in FIFO lanes (`push_lane`) and small events (`push_small`, a code in the key itself)
//! need no slab slot at all. Timers (`push_small_timer`) have a heap of their own, so that the
//! many that wait (most are superseded before they fire) do not deepen the heap every packet's
//! events pass through.

use crate::fifo::Fifo;
use crate::time::SimTime;

/// `Key::slot` with this bit set names a lane (the key is that lane's head), else a slab slot.
const LANE_BIT: u32 = 1 << 31;
/// `Key::slot` with this bit set (and not `LANE_BIT`) is a small event: the rest of the field is
/// its code and it has no body (see `push_small`).
const SMALL_BIT: u32 = 1 << 30;
/// `Key::slot` with both bits: the key stands for the top of the timer heap (`push_small_timer`).
const TIMER_REP: u32 = LANE_BIT | SMALL_BIT;
/// In a key of the timer heap, above its 32-bit slot: the main heap holds its representative.
const HAS_REP: u64 = 1 << 32;
/// The first insertion sequence number of ordinary events: the numbers below are
/// `push_small_first`'s, which order an event before every other one at its time.
const FIRST_SEQ: u64 = 1 << 62;

#[derive(Clone, Copy)]
struct Key {
    time: SimTime,
    seq: u64,
    /// A u32 stored as u64 on purpose: with a u32 the key has 4 bytes of padding, the heap's
    /// sift (`ptr::read` of the key just written) loads them together with the slot as one
    /// 8-byte word after a 4-byte store, and that load cannot be forwarded from the store: a
    /// stall on every push (perf: ~14 % of the linksharing cycles at the two sift entries).
    slot: u64,
}

impl Key {
    /// (time, seq) as one number, the heap's order: one branch-free 128-bit compare instead
    /// of a compare of times and, on ties, of sequence numbers.
    #[inline(always)]
    fn rank(&self) -> u128 {
        (self.time.0 as u128) << 64 | self.seq as u128
    }
}

/// A popped event (`EventQueue::pop_split`): a small event's code (`push_small`), an event
/// with a body, or a lane's item with its lane (`push_lane`).
#[derive(Debug)]
pub enum Popped<E, L = E> {
    Small(u32),
    Event(E),
    Lane(u32, L),
}

/// The event a lane's item stands for: a lane stores what its events carry (a link direction's
/// lane: the arriving packet, its channel being the lane), smaller than the whole event and
/// moved without the event's enum around it. `EventQueue::pop` and an item that cannot keep its
/// lane's order (`push_lane`) make the whole event of it.
pub trait FromLane<L> {
    fn from_lane(lane: u32, item: L) -> Self;
}

/// A queue whose lanes hold whole events (`EventQueue<E>`).
impl<E> FromLane<E> for E {
    #[inline(always)]
    fn from_lane(_lane: u32, item: E) -> E {
        item
    }
}

/// Scheduling an event before the current time is a bug in the caller, never a silent clamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PastEventError {
    pub now: SimTime,
    pub at: SimTime,
}

impl std::fmt::Display for PastEventError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "event scheduled at {} before the current time {}", self.at, self.now)
    }
}
impl std::error::Error for PastEventError {}

/// Min-heap of keys by (time, seq), smallest at index 0, in place of
/// `std::collections::BinaryHeap`: replacing its top (`*peek_mut() = k`, the hole-filling push
/// below) wrote the key to the root and sifted it in an out-of-line `PeekMut` drop that read
/// it back in wider words than it was written with, a store-to-load forwarding stall on most
/// pushes (perf: ~4 % of the linksharing cycles on one instruction). Here the new key arrives
/// as three scalars, stays in registers while it sifts, and is written once where it lands.
/// Keys are unique (seq), so the pop order is the same as with any correct heap.
struct KeyHeap {
    v: Vec<Key>,
}

impl KeyHeap {
    fn with_capacity(n: usize) -> Self {
        KeyHeap { v: Vec::with_capacity(n) }
    }

    #[inline]
    fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    fn peek(&self) -> Option<&Key> {
        self.v.first()
    }

    /// The key comes as its three words: a `Key` argument is passed through memory, and
    /// reading it back right after the caller wrote it stalls (as `BinaryHeap` did).
    #[inline]
    fn push(&mut self, time: SimTime, seq: u64, slot: u64) {
        let k = Key { time, seq, slot };
        let r = k.rank();
        let mut pos = self.v.len();
        self.v.push(k);
        let v = &mut self.v[..];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = v[parent];
            if p.rank() <= r {
                break;
            }
            v[pos] = p;
            pos = parent;
        }
        v[pos] = k;
    }

    /// Replaces the smallest key with (time, seq, slot) (the heap is not empty).
    #[inline]
    fn replace_top(&mut self, time: SimTime, seq: u64, slot: u64) {
        let k = Key { time, seq, slot };
        let r = k.rank();
        let v = &mut self.v[..];
        let end = v.len();
        let mut pos = 0;
        let mut child = 1;
        while child + 1 < end {
            // The smaller child (keys are unique: no ties).
            child += (v[child + 1].rank() < v[child].rank()) as usize;
            let c = v[child];
            if r <= c.rank() {
                break;
            }
            v[pos] = c;
            pos = child;
            child = 2 * pos + 1;
        }
        if child + 1 == end {
            let c = v[child];
            if c.rank() < r {
                v[pos] = c;
                pos = child;
            }
        }
        v[pos] = k;
    }

    /// Removes the smallest key: the hole at the root goes down to a leaf along the smaller
    /// children (one compare per level), then the last key fills it and rises (std's
    /// `sift_down_to_bottom`: the last key nearly always belongs near the bottom). Always
    /// inlined, as `fill_hole`, its only caller, is.
    #[inline(always)]
    fn pop(&mut self) {
        let Some(last) = self.v.pop() else { return };
        let v = &mut self.v[..];
        let end = v.len();
        if end == 0 {
            return;
        }
        let mut pos = 0;
        let mut child = 1;
        while child + 1 < end {
            child += (v[child + 1].rank() < v[child].rank()) as usize;
            v[pos] = v[child];
            pos = child;
            child = 2 * pos + 1;
        }
        if child + 1 == end {
            v[pos] = v[child];
            pos = child;
        }
        // The same sift-up as in `push`, written out on purpose: one shared `#[inline(always)]`
        // helper took 2 % fewer instructions but made the linksharing run loop 1.5x slower in
        // wall time (0.023 -> 0.035 s, medians of 15 interleaved runs): measure before merging.
        let r = last.rank();
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = v[parent];
            if p.rank() <= r {
                break;
            }
            v[pos] = p;
            pos = parent;
        }
        v[pos] = last;
    }
}

/// Priority queue of events with a clock that only moves forward. `L`: what a lane holds
/// (`push_lane`, `FromLane`); by default whole events.
pub struct EventQueue<E, L = E> {
    heap: KeyHeap,
    /// The keys of `push_small_timer` events. Its top always has a representative in `heap`, a
    /// copy of its key with slot `TIMER_REP` (marked `HAS_REP` here), and so does every timer
    /// key that was the timer heap's top at some moment and has not popped: a timer pushed
    /// below the current top gets one at once, the next top when its predecessor pops. A
    /// representative therefore pops exactly when its timer is the earliest event, and the
    /// order is that of one heap. On scale-100x1g (100 QUIC flows) ~270 of the ~276 pending
    /// keys are flow timers (each endpoint's re-armed timer leaves its earlier ones pending):
    /// in one heap every arrival and end of transmission sifted through ~8 levels of them.
    timers: KeyHeap,
    /// Event bodies by slot; `None` = free (its index is on `free`).
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    /// FIFO lanes: events whose times never decrease within the lane (arrivals on one link
    /// direction). Only each lane's head is in the heap, so the heap stays as small as the
    /// number of lanes plus the other pending events.
    lanes: Vec<Fifo<(SimTime, u64, L)>>,
    /// The heap's top key is stale: the event it named was popped, and the key is left in place
    /// so that the next push can overwrite it and sift down once (a handler nearly always
    /// schedules something), instead of a pop (sift to the bottom and back up) plus a push.
    hole: bool,
    seq: u64,
    /// The next sequence number of `push_small_first` (below `FIRST_SEQ`).
    first_seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E, L> Default for EventQueue<E, L> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E, L> EventQueue<E, L> {
    pub fn new() -> Self {
        EventQueue {
            heap: KeyHeap::with_capacity(1024),
            timers: KeyHeap::with_capacity(1024),
            slots: Vec::with_capacity(1024),
            free: Vec::with_capacity(1024),
            lanes: Vec::new(),
            hole: false,
            seq: FIRST_SEQ,
            first_seq: 0,
            now: SimTime::ZERO,
            popped: 0,
        }
    }
    /// Current simulated time: the time of the last popped event.
    pub fn now(&self) -> SimTime {
        self.now
    }
    /// Number of events popped so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }
    pub fn len(&self) -> usize {
        self.heap.len() - self.hole as usize
            + self.timers.v.iter().filter(|k| k.slot & HAS_REP == 0).count()
            + self.lanes.iter().map(|l| l.len().saturating_sub(1)).sum::<usize>()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Put a key into the heap, into the hole at the top if there is one. Always inlined: as
    /// a call, the caller stored the key to the stack in 8-byte pieces and the callee loaded
    /// it in 16-byte pieces, a failed store-to-load forwarding stall on every push (a tenth
    /// of the run loop's cycles in `perf`).
    #[inline(always)]
    fn heap_push(&mut self, k: Key) {
        if self.hole {
            self.hole = false;
            self.heap.replace_top(k.time, k.seq, k.slot);
        } else {
            self.heap.push(k.time, k.seq, k.slot);
        }
    }
    /// Remove the stale top key, if any. Always inlined: the run loop's `pop_before` must not
    /// turn into a call when another caller (the real-time loop's `peek_time`) appears.
    #[inline(always)]
    fn fill_hole(&mut self) {
        if self.hole {
            self.hole = false;
            self.heap.pop();
        }
    }
    /// Schedule `ev` at `at` in FIFO lane `lane` (`at >= now()`, as `push`). The order of events
    /// is exactly that of `push` (time, then insertion sequence); a lane only saves heap work
    /// when the caller's events in that lane come in time order, as the arrivals on a link
    /// without reordering do. An event earlier than the lane's last one goes to the heap.
    #[inline(always)]
    pub fn push_lane(&mut self, lane: u32, at: SimTime, ev: L)
    where
        E: FromLane<L>,
    {
        assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        assert!(lane < SMALL_BIT, "lane {lane} beyond the lane range");
        let li = lane as usize;
        if li >= self.lanes.len() {
            self.lanes.resize_with(li + 1, Fifo::new);
        }
        let seq = self.seq;
        let l = &mut self.lanes[li];
        match l.back() {
            None => {
                l.push_back((at, seq, ev));
                self.heap_push(Key { time: at, seq, slot: (LANE_BIT | lane) as u64 });
            }
            Some(&(last, _, _)) if at >= last => l.push_back((at, seq, ev)),
            Some(_) => return self.push_unchecked(at, E::from_lane(lane, ev)),
        }
        self.seq += 1;
    }
    /// Schedule a small event, one the caller can rebuild from a code below 2^30 (a link's
    /// end of transmission: its channel number), at `at` (`>= now()`, as `push`). It lives in
    /// the heap key alone: no slab slot is written or freed, and the caller's event is not copied
    /// through memory (passing a whole event to `push` and reading it back cost a
    /// store-forwarding stall per push). `pop_with` rebuilds it; the order is that of `push`.
    #[inline]
    pub fn push_small(&mut self, at: SimTime, code: u32) {
        assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        assert!(code < SMALL_BIT, "small event code {code} too large");
        self.heap_push(Key { time: at, seq: self.seq, slot: (SMALL_BIT | code) as u64 });
        self.seq += 1;
    }
    /// Schedule a small event (as `push_small`) in the timer heap: for events that are often
    /// scheduled far ahead and superseded before they fire (a transport's timer). The order is
    /// that of `push` all the same; only the heap work differs.
    #[inline]
    pub fn push_small_timer(&mut self, at: SimTime, code: u32) {
        assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        assert!(code < SMALL_BIT, "small event code {code} too large");
        let seq = self.seq;
        self.seq += 1;
        let r = (at.0 as u128) << 64 | seq as u128;
        if self.timers.peek().is_none_or(|t| r < t.rank()) {
            self.timers.push(at, seq, HAS_REP | (SMALL_BIT | code) as u64);
            self.heap_push(Key { time: at, seq, slot: TIMER_REP as u64 });
        } else {
            self.timers.push(at, seq, (SMALL_BIT | code) as u64);
        }
    }
    /// Schedule a small event (as `push_small`) that pops before every other event at its time;
    /// among themselves such events pop in the order they were pushed (their sequence numbers
    /// count from 0, below those of all other events).
    #[inline]
    pub fn push_small_first(&mut self, at: SimTime, code: u32) {
        assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        assert!(code < SMALL_BIT, "small event code {code} too large");
        debug_assert!(self.first_seq < FIRST_SEQ);
        self.heap_push(Key { time: at, seq: self.first_seq, slot: (SMALL_BIT | code) as u64 });
        self.first_seq += 1;
    }
    /// Schedule `ev` at `at`; `at` must not be before `now()`.
    pub fn schedule(&mut self, at: SimTime, ev: E) -> Result<(), PastEventError> {
        if at < self.now {
            return Err(PastEventError { now: self.now, at });
        }
        self.push_unchecked(at, ev);
        Ok(())
    }
    /// Schedule where the caller guarantees `at >= now()` (a broken guarantee panics).
    #[inline]
    pub fn push(&mut self, at: SimTime, ev: E) {
        assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        self.push_unchecked(at, ev);
    }
    #[inline]
    fn push_unchecked(&mut self, at: SimTime, ev: E) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(ev);
                s
            }
            None => {
                self.slots.push(Some(ev));
                let s = (self.slots.len() - 1) as u32;
                assert!(s < SMALL_BIT, "too many pending events");
                s
            }
        };
        self.heap_push(Key { time: at, seq: self.seq, slot: slot as u64 });
        self.seq += 1;
    }
    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.fill_hole();
        self.heap.peek().map(|e| e.time)
    }
    /// Pop the next event and advance the clock to its time. For a queue without small events.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)>
    where
        E: FromLane<L>,
    {
        self.pop_with(|c| panic!("small event {c} popped without pop_with"))
    }
    /// Pop the next event and advance the clock to its time; `small` rebuilds a small event
    /// from its code (`push_small`).
    #[inline]
    pub fn pop_with(&mut self, small: impl FnOnce(u32) -> E) -> Option<(SimTime, E)>
    where
        E: FromLane<L>,
    {
        self.pop_split().map(|(t, p)| match p {
            Popped::Event(ev) => (t, ev),
            Popped::Small(code) => (t, small(code)),
            Popped::Lane(lane, item) => (t, E::from_lane(lane, item)),
        })
    }
    /// Pop the next event and advance the clock to its time, a small event as its code: the
    /// caller can handle a kind of small event on a path of its own instead of rebuilding the
    /// full event and merging it with the others (see `World::run`).
    #[inline]
    pub fn pop_split(&mut self) -> Option<(SimTime, Popped<E, L>)> {
        self.fill_hole();
        let k = *self.heap.peek()?;
        Some(self.pop_top(k))
    }
    /// `pop_split` if the next event is before `end`, else None (and nothing changes but the
    /// removal of a stale top key): the run loop's peek, compare and pop in one pass.
    #[inline]
    pub fn pop_before(&mut self, end: SimTime) -> Option<(SimTime, Popped<E, L>)> {
        self.fill_hole();
        let k = *self.heap.peek()?;
        if k.time >= end {
            return None;
        }
        Some(self.pop_top(k))
    }
    /// Pop `k`, the heap's top key.
    #[inline(always)]
    fn pop_top(&mut self, k: Key) -> (SimTime, Popped<E, L>) {
        let slot = k.slot as u32;
        let ev = if slot & LANE_BIT != 0 {
            if slot & SMALL_BIT != 0 {
                return self.pop_timer(k);
            }
            let lane = slot & !LANE_BIT;
            let l = &mut self.lanes[lane as usize];
            let (_, seq, item) = l.pop_front().expect("a lane key has its event");
            debug_assert_eq!(seq, k.seq);
            match l.front() {
                // The lane's next event replaces its head: one sift instead of a pop and a push.
                Some(&(t, s, _)) => {
                    self.heap.replace_top(t, s, k.slot);
                }
                None => self.hole = true,
            }
            self.now = k.time;
            self.popped += 1;
            return (k.time, Popped::Lane(lane, item));
        } else if slot & SMALL_BIT != 0 {
            self.hole = true;
            self.now = k.time;
            self.popped += 1;
            return (k.time, Popped::Small(slot & !SMALL_BIT));
        } else {
            self.hole = true;
            let ev = self.slots[slot as usize].take().expect("a queued slot holds its event");
            self.free.push(slot);
            ev
        };
        self.now = k.time;
        self.popped += 1;
        (k.time, Popped::Event(ev))
    }
    /// Pop the timer heap's top (a small event: `push_small_timer`). Out of line: timers are
    /// a small share of the events, and the common path stays short.
    /// `r`, a representative, is the heap's top: its timer is the timer heap's top (see
    /// `timers`). The next timer gets its representative if it has none yet.
    #[inline(never)]
    fn pop_timer(&mut self, r: Key) -> (SimTime, Popped<E, L>) {
        self.hole = true;
        let k = *self.timers.peek().expect("a representative has its timer");
        debug_assert_eq!((k.time, k.seq), (r.time, r.seq));
        self.timers.pop();
        if let Some(n) = self.timers.v.first_mut() {
            if n.slot & HAS_REP == 0 {
                n.slot |= HAS_REP;
                let (time, seq) = (n.time, n.seq);
                self.heap_push(Key { time, seq, slot: TIMER_REP as u64 });
            }
        }
        self.now = k.time;
        self.popped += 1;
        (k.time, Popped::Small(k.slot as u32 & !SMALL_BIT))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_fifo() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'a');
        q.push(SimTime(3), 'b');
        q.push(SimTime(5), 'c');
        q.push(SimTime(3), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn lanes_keep_the_global_time_then_sequence_order() {
        // The same events pushed with and without lanes pop in the same order, including
        // ties across lanes and an out-of-order event in a lane (which goes to the heap).
        let evs: Vec<(u32, u64)> =
            vec![(0, 5), (1, 5), (0, 7), (2, 3), (0, 6), (1, 5), (3, 9), (2, 3), (0, 7), (1, 4)];
        let mut plain = EventQueue::new();
        let mut laned = EventQueue::new();
        for (i, &(lane, t)) in evs.iter().enumerate() {
            plain.push(SimTime(t), i);
            laned.push_lane(lane, SimTime(t), i);
        }
        laned.push(SimTime(5), 100);
        plain.push(SimTime(5), 100);
        let a: Vec<_> = std::iter::from_fn(|| plain.pop()).collect();
        let b: Vec<_> = std::iter::from_fn(|| laned.pop()).collect();
        assert_eq!(a, b);
        assert!(laned.is_empty());
    }

    #[test]
    fn small_events_keep_the_order_of_push() {
        // The same events pushed as bodies and as small codes (odd values) pop in the same order.
        let mut plain = EventQueue::new();
        let mut mixed = EventQueue::new();
        for (i, t) in [4u64, 2, 4, 9, 2, 7, 4, 1].into_iter().enumerate() {
            plain.push(SimTime(t), i as u32);
            if i % 2 == 1 {
                mixed.push_small(SimTime(t), i as u32);
            } else {
                mixed.push(SimTime(t), i as u32);
            }
        }
        let a: Vec<_> = std::iter::from_fn(|| plain.pop()).collect();
        let b: Vec<_> = std::iter::from_fn(|| mixed.pop_with(|c| c)).collect();
        assert_eq!(a, b);
        assert!(mixed.is_empty());
    }

    #[test]
    fn small_first_events_pop_before_everything_else_at_their_time() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 1u32);
        q.push_small(SimTime(5), 2);
        q.push_lane(0, SimTime(5), 3);
        q.push_small_first(SimTime(5), 40);
        q.push_small_first(SimTime(4), 50);
        q.push_small_first(SimTime(5), 30);
        q.push(SimTime(6), 6);
        let got: Vec<_> = std::iter::from_fn(|| q.pop_with(|c| c)).map(|(t, e)| (t.0, e)).collect();
        assert_eq!(got, vec![(4, 50), (5, 40), (5, 30), (5, 1), (5, 2), (5, 3), (6, 6)]);
    }

    #[test]
    fn timers_keep_the_order_of_push() {
        // Random events pushed once all as bodies and once with some as small timers (the
        // second heap), popped with pushes in between: the same order, ties included.
        let mut rng = crate::Rng::from_seed(11);
        let mut plain = EventQueue::new();
        let mut mixed = EventQueue::new();
        let mut id = 0u32;
        let mut got = (Vec::new(), Vec::new());
        for round in 0..4000 {
            for _ in 0..rng.range_u64(0, 3) {
                let t = plain.now() + crate::SimDuration(rng.range_u64(0, 6) * 10);
                plain.push(t, id);
                match rng.range_u64(0, 4) {
                    0 => mixed.push_small_timer(t, id),
                    1 => mixed.push_lane(0, t, id),
                    2 => mixed.push_small(t, id),
                    _ => mixed.push(t, id),
                }
                id += 1;
            }
            if round % 2 == 0 {
                got.0.extend(plain.pop());
                got.1.extend(mixed.pop_with(|c| c));
                assert_eq!(plain.len(), mixed.len());
                assert_eq!(plain.peek_time(), mixed.peek_time());
            }
        }
        got.0.extend(std::iter::from_fn(|| plain.pop()));
        got.1.extend(std::iter::from_fn(|| mixed.pop_with(|c| c)));
        assert_eq!(got.0.len(), id as usize);
        assert_eq!(got.0, got.1);
        assert!(mixed.is_empty() && mixed.peek_time().is_none());
    }

    /// The tests' typed lanes: `EventQueue<Whole, Item>`; the whole event of lane `l`'s item
    /// `x` is `Whole(l * 1000 + x)`.
    #[derive(Debug, PartialEq)]
    struct Whole(u32);
    #[derive(Debug, PartialEq)]
    struct Item(u32);

    impl FromLane<Item> for Whole {
        fn from_lane(lane: u32, item: Item) -> Whole {
            Whole(lane * 1000 + item.0)
        }
    }

    #[test]
    fn pop_split_tells_small_events_bodies_and_lane_items_apart_and_advances_the_clock() {
        let mut q: EventQueue<Whole, Item> = EventQueue::new();
        q.push(SimTime(3), Whole(30));
        q.push_small(SimTime(1), 7);
        q.push_lane(4, SimTime(2), Item(20));
        let mut got = Vec::new();
        while let Some((t, p)) = q.pop_split() {
            assert_eq!(q.now(), t);
            got.push(match p {
                Popped::Small(c) => (t.0, "small", c),
                Popped::Event(Whole(e)) => (t.0, "event", e),
                Popped::Lane(l, Item(x)) => (t.0, "lane", l * 1000 + x),
            });
        }
        assert_eq!(got, vec![(1, "small", 7), (2, "lane", 4020), (3, "event", 30)]);
        assert_eq!(q.events_processed(), 3);
    }

    #[test]
    fn typed_lanes_keep_the_order_and_an_early_item_goes_to_the_heap_as_its_event() {
        // Lane items pop where the same whole events pushed with `push` would, also an item
        // earlier than its lane's last one (which goes to the heap, made whole by `FromLane`).
        let pushes = [(1u32, 5u64, 1u32), (1, 7, 2), (2, 6, 3), (1, 6, 4), (2, 6, 5), (1, 9, 6)];
        let mut laned: EventQueue<Whole, Item> = EventQueue::new();
        let mut plain: EventQueue<Whole> = EventQueue::new();
        for &(lane, t, x) in &pushes {
            laned.push_lane(lane, SimTime(t), Item(x));
            plain.push(SimTime(t), Whole(lane * 1000 + x));
        }
        laned.push(SimTime(6), Whole(99));
        plain.push(SimTime(6), Whole(99));
        let a: Vec<_> = std::iter::from_fn(|| laned.pop()).collect();
        let b: Vec<_> = std::iter::from_fn(|| plain.pop()).collect();
        assert_eq!(a, b);
        assert_eq!(a.len(), pushes.len() + 1);
    }

    #[test]
    fn pop_then_push_reuses_the_top_and_keeps_the_order() {
        let mut q = EventQueue::new();
        for t in [5u64, 1, 9, 3] {
            q.push(SimTime(t), t);
        }
        assert_eq!(q.pop(), Some((SimTime(1), 1)));
        assert_eq!(q.len(), 3);
        q.push(SimTime(2), 2); // fills the hole
        q.push(SimTime(3), 33); // equal time: after the earlier 3
        let order: Vec<u64> = std::iter::from_fn(|| q.pop().map(|x| x.1)).collect();
        assert_eq!(order, vec![2, 3, 33, 5, 9]);
        assert!(q.is_empty());
        assert_eq!(q.peek_time(), None);
    }

    #[test]
    fn key_heap_pops_in_rank_order() {
        // Pushes, pops and top replacements mixed, checked against a sorted reference.
        let mut rng = crate::Rng::from_seed(7);
        let mut h = KeyHeap::with_capacity(0);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        for seq in 0..5000u64 {
            let t = rng.range_u64(0, 50);
            match rng.range_u64(0, 3) {
                0 if h.len() > 0 => {
                    h.pop();
                    reference.sort();
                    reference.remove(0);
                }
                1 if h.len() > 0 => {
                    h.replace_top(SimTime(t), seq, seq);
                    reference.sort();
                    reference[0] = (t, seq);
                }
                _ => {
                    h.push(SimTime(t), seq, seq);
                    reference.push((t, seq));
                }
            }
            reference.sort();
            assert_eq!(h.peek().map(|k| (k.time.0, k.seq)), reference.first().copied());
        }
        while let Some(&k) = h.peek() {
            assert_eq!((k.time.0, k.seq), reference.remove(0));
            h.pop();
        }
        assert!(reference.is_empty());
    }

    #[test]
    fn scheduling_in_the_past_is_an_error() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), ());
        q.pop();
        assert_eq!(q.schedule(SimTime(9), ()), Err(PastEventError { now: SimTime(10), at: SimTime(9) }));
        assert!(q.schedule(SimTime(10), ()).is_ok());
    }
}
