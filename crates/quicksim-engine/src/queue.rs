//! The future event list: a binary heap ordered by (time, insertion sequence), so events at the
//! same time pop in the order they were scheduled (ns-3's `EventKey.m_uid`).

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
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

/// Priority queue of events with a clock that only moves forward.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
    now: SimTime,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1024), seq: 0, now: SimTime::ZERO, popped: 0 }
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
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Schedule `ev` at `at`; `at` must not be before `now()`.
    pub fn schedule(&mut self, at: SimTime, ev: E) -> Result<(), PastEventError> {
        if at < self.now {
            return Err(PastEventError { now: self.now, at });
        }
        self.push_unchecked(at, ev);
        Ok(())
    }
    /// Schedule where the caller guarantees `at >= now()` (checked in debug builds).
    pub fn push(&mut self, at: SimTime, ev: E) {
        assert!(at >= self.now, "event scheduled in the past: {} < {}", at, self.now);
        self.push_unchecked(at, ev);
    }
    fn push_unchecked(&mut self, at: SimTime, ev: E) {
        self.heap.push(Entry { time: at, seq: self.seq, ev });
        self.seq += 1;
    }
    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
    /// Pop the next event and advance the clock to its time.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let e = self.heap.pop()?;
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.ev))
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
    fn scheduling_in_the_past_is_an_error() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), ());
        q.pop();
        assert_eq!(q.schedule(SimTime(9), ()), Err(PastEventError { now: SimTime(10), at: SimTime(9) }));
        assert!(q.schedule(SimTime(10), ()).is_ok());
    }
}
