//! Streams: per-stream send queues (app data waiting, in flight, lost), receive reassembly with
//! in-order delivery, and the stream scheduler (INET `StreamSndQueue`, `StreamRcvQueue`,
//! `RRScheduler`).
//!
//! Data is abstract: only byte ranges are tracked. The next range to send on a stream is the
//! first unsent gap from offset 0, so lost data goes out again lowest offset first, in new
//! packets (INET `StreamSndQueue`, RFC 9000 §13.3).

use super::flow_control::ReceiveWindow;
use super::niche::Opt;
use super::range_set::RangeSet;
use serde::{Deserialize, Serialize};

/// Which stream scheduler a connection uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SchedulerKind {
    /// Round robin per STREAM frame, in stream id order (INET `RRScheduler`).
    #[default]
    RoundRobin,
    /// Always the lowest stream id with data first (strict priority by id).
    LowestIdFirst,
}

impl SchedulerKind {
    pub fn build(self) -> Box<dyn StreamScheduler> {
        match self {
            SchedulerKind::RoundRobin => Box::new(RoundRobin::default()),
            SchedulerKind::LowestIdFirst => Box::new(LowestIdFirst),
        }
    }
}

/// Chooses the stream of the next STREAM frame.
pub trait StreamScheduler: Send + std::fmt::Debug {
    /// `ready` holds the ids of the streams that can send now, ascending. Returns one of them.
    fn select(&mut self, ready: &[u64]) -> Option<u64>;
}

/// Round robin: the next ready id after the one served last, wrapping around.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RoundRobin {
    last: Option<u64>,
}

impl RoundRobin {
    /// `select` over ready ids given ascending, reading no further than needed.
    fn select_iter(&mut self, mut ready: impl Iterator<Item = u64>) -> Option<u64> {
        let first = ready.next()?;
        let pick = match self.last {
            Some(l) if first <= l => ready.find(|&id| id > l).unwrap_or(first),
            _ => first,
        };
        self.last = Some(pick);
        Some(pick)
    }
}

impl StreamScheduler for RoundRobin {
    fn select(&mut self, ready: &[u64]) -> Option<u64> {
        self.select_iter(ready.iter().copied())
    }
}

/// Strict priority by stream id.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LowestIdFirst;

impl StreamScheduler for LowestIdFirst {
    fn select(&mut self, ready: &[u64]) -> Option<u64> {
        ready.first().copied()
    }
}

/// Send side of one stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SendStream {
    /// End of the data the application has written.
    pub written: u64,
    /// Bytes that must be (re)sent: new data and lost data.
    pub unsent: RangeSet,
    /// Bytes acknowledged by the peer.
    pub acked: RangeSet,
    /// Highest offset sent so far (flow control counts offsets, RFC 9000 §4.1).
    pub max_sent: u64,
    /// The peer's MAX_STREAM_DATA.
    pub max_stream_data: u64,
    /// Limit for which a STREAM_DATA_BLOCKED was already queued.
    /// (Never `u64::MAX`: that would need data written up to offset 2^64 − 1.)
    pub blocked_at: Opt<u64>,
}

impl SendStream {
    pub fn new(max_stream_data: u64) -> Self {
        SendStream {
            written: 0,
            unsent: RangeSet::new(),
            acked: RangeSet::new(),
            max_sent: 0,
            max_stream_data,
            blocked_at: Opt::NONE,
        }
    }

    /// Bytes queued and not yet acknowledged (INET counts unsent plus unacked).
    pub fn queued(&self) -> u64 {
        self.written - self.acked.total()
    }

    /// The next range to send, limited by stream credit and `conn_credit` bytes of new
    /// connection credit: `(offset, max_len)`. Retransmissions below `max_sent` need no credit.
    pub fn next_range(&self, conn_credit: u64) -> Option<(u64, u64)> {
        let (s, e) = self.unsent.first()?;
        if s < self.max_sent {
            return Some((s, e.min(self.max_sent) - s));
        }
        let limit = e.min(self.max_stream_data).min(s.saturating_add(conn_credit));
        (limit > s).then(|| (s, limit - s))
    }

    /// New data is waiting but stream credit is exhausted.
    pub fn stream_blocked(&self) -> bool {
        match self.unsent.first() {
            Some((s, _)) => s >= self.max_sent && s >= self.max_stream_data,
            None => false,
        }
    }

    /// Has new (never sent) data waiting.
    pub fn has_new_data(&self) -> bool {
        self.written > self.max_sent
    }

    /// Marks `[off, off+len)` as sent; returns the number of bytes beyond the previous
    /// `max_sent` (new connection credit used).
    pub fn on_sent(&mut self, off: u64, len: u64) -> u64 {
        self.unsent.remove(off, off + len);
        let end = off + len;
        let new = end.saturating_sub(self.max_sent);
        self.max_sent = self.max_sent.max(end);
        new
    }

    /// A frame carrying `[off, off+len)` was lost: its unacked part goes back to the queue.
    /// Returns the number of bytes re-queued.
    pub fn on_lost(&mut self, off: u64, len: u64) -> u64 {
        let end = off + len;
        let mut requeued = 0;
        let mut pos = off;
        // Re-queue the gaps of `acked` inside [off, end).
        let acked: Vec<(u64, u64)> = self.acked.iter().filter(|&(a, b)| b > off && a < end).collect();
        for (a, b) in acked {
            if a > pos {
                requeued += self.unsent.insert(pos, a);
            }
            pos = pos.max(b);
        }
        if pos < end {
            requeued += self.unsent.insert(pos, end);
        }
        requeued
    }

    /// `[off, off+len)` was acknowledged; returns the number of newly acknowledged bytes.
    pub fn on_acked(&mut self, off: u64, len: u64) -> u64 {
        self.unsent.remove(off, off + len);
        self.acked.insert(off, off + len)
    }
}

/// Receive side of one stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecvStream {
    /// Bytes received above `delivered`, not yet deliverable (reassembly queue).
    pub received: RangeSet,
    /// In-order prefix delivered to (and consumed by) the application.
    pub delivered: u64,
    /// Highest offset received (flow control).
    pub highest: u64,
    /// The credit we grant on this stream (MAX_STREAM_DATA).
    pub fc: ReceiveWindow,
}

impl RecvStream {
    pub fn new(fc: ReceiveWindow) -> Self {
        RecvStream { received: RangeSet::new(), delivered: 0, highest: 0, fc }
    }

    /// Stores `[off, off+len)`. Returns `(duplicate bytes, newly deliverable (offset, len))`.
    pub fn on_data(&mut self, off: u64, len: u64) -> (u64, Option<(u64, u64)>) {
        let end = off + len;
        self.highest = self.highest.max(end);
        let start = off.max(self.delivered);
        let fresh = if end > start { self.received.insert(start, end) } else { 0 };
        let dup = len - fresh;
        match self.received.first() {
            Some((s, e)) if s <= self.delivered => {
                self.received.pop_first();
                let from = self.delivered;
                self.delivered = e;
                (dup, Some((from, e - from)))
            }
            _ => (dup, None),
        }
    }
}

/// Streams by id, ascending. A sorted vector rather than a `BTreeMap`: a connection has a few
/// streams, and a B-tree's first node holds room for 11 (over 1 kB per map for one stream,
/// which dominated the memory of an idle connection).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StreamMap<T> {
    v: Vec<(u64, T)>,
}

impl<T> Default for StreamMap<T> {
    fn default() -> Self {
        StreamMap { v: Vec::new() }
    }
}

impl<T> StreamMap<T> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.v.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v.is_empty()
    }

    fn find(&self, id: u64) -> Result<usize, usize> {
        self.v.binary_search_by_key(&id, |&(k, _)| k)
    }

    pub fn get(&self, id: &u64) -> Option<&T> {
        self.find(*id).ok().map(|i| &self.v[i].1)
    }

    pub fn get_mut(&mut self, id: &u64) -> Option<&mut T> {
        self.find(*id).ok().map(|i| &mut self.v[i].1)
    }

    /// The stream `id`, created with `make` if it does not exist.
    pub fn get_or_insert_with(&mut self, id: u64, make: impl FnOnce() -> T) -> &mut T {
        let i = match self.find(id) {
            Ok(i) => i,
            Err(i) => {
                // Most connections use one or two streams: grow from exactly one slot (a
                // first insert would otherwise reserve four, ~400 B per connection).
                if self.v.capacity() == 0 {
                    self.v.reserve_exact(1);
                }
                self.v.insert(i, (id, make()));
                i
            }
        };
        &mut self.v[i].1
    }

    pub fn clear(&mut self) {
        self.v = Vec::new();
    }

    pub fn iter(&self) -> impl Iterator<Item = (&u64, &T)> {
        self.v.iter().map(|(k, t)| (k, t))
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&u64, &mut T)> {
        self.v.iter_mut().map(|(k, t)| (&*k, t))
    }

    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.v.iter().map(|(_, t)| t)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.v.iter_mut().map(|(_, t)| t)
    }
}

/// A connection's scheduler: the `SchedulerKind`s inline, picking from the ready streams as
/// it walks them (a boxed `dyn StreamScheduler` and a buffer of ready ids cost ~100 B per
/// connection, heap included).
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Scheduler {
    RoundRobin(RoundRobin),
    LowestIdFirst,
}

/// All streams of a connection, by id (ascending: deterministic order).
#[derive(Debug, Serialize, Deserialize)]
pub struct Streams {
    pub send: StreamMap<SendStream>,
    pub recv: StreamMap<RecvStream>,
    scheduler: Scheduler,
}

impl Streams {
    pub fn new(kind: SchedulerKind) -> Self {
        let scheduler = match kind {
            SchedulerKind::RoundRobin => Scheduler::RoundRobin(RoundRobin::default()),
            SchedulerKind::LowestIdFirst => Scheduler::LowestIdFirst,
        };
        Streams { send: StreamMap::new(), recv: StreamMap::new(), scheduler }
    }

    /// Some stream can send a frame now.
    pub fn any_ready(&self, conn_credit: u64) -> bool {
        self.send.values().any(|s| s.next_range(conn_credit).is_some())
    }

    /// The stream the scheduler picks among those that can send now.
    pub fn select(&mut self, conn_credit: u64) -> Option<u64> {
        let mut ready =
            self.send.iter().filter(|(_, s)| s.next_range(conn_credit).is_some()).map(|(&id, _)| id);
        match &mut self.scheduler {
            Scheduler::RoundRobin(rr) => rr.select_iter(ready),
            Scheduler::LowestIdFirst => ready.next(),
        }
    }

    /// Total queued (unsent plus unacked) bytes over all send streams.
    pub fn queued(&self) -> u64 {
        self.send.values().map(SendStream::queued).sum()
    }

    /// Ids of streams that can send a frame now, ascending.
    pub fn ready(&self, conn_credit: u64) -> Vec<u64> {
        self.send.iter().filter(|(_, s)| s.next_range(conn_credit).is_some()).map(|(&id, _)| id).collect()
    }

    /// Some stream still has data that is neither acked nor in flight (new or lost).
    pub fn has_unsent(&self) -> bool {
        self.send.values().any(|s| !s.unsent.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::super::flow_control::WindowRule;
    use super::*;

    #[test]
    fn round_robin_cycles() {
        let mut rr = RoundRobin::default();
        assert_eq!(rr.select(&[0, 4, 8]), Some(0));
        assert_eq!(rr.select(&[0, 4, 8]), Some(4));
        assert_eq!(rr.select(&[0, 8]), Some(8));
        assert_eq!(rr.select(&[0, 4, 8]), Some(0));
        assert_eq!(rr.select(&[]), None);
        assert_eq!(rr.select(&[4]), Some(4));
    }

    #[test]
    fn lost_data_is_resent_lowest_offset_first() {
        let mut s = SendStream::new(1_000_000);
        s.written = 3000;
        s.unsent.insert(0, 3000);
        assert_eq!(s.next_range(u64::MAX), Some((0, 3000)));
        assert_eq!(s.on_sent(0, 1000), 1000);
        assert_eq!(s.on_sent(1000, 1000), 1000);
        assert_eq!(s.next_range(u64::MAX), Some((2000, 1000)));
        s.on_acked(1000, 500);
        assert_eq!(s.on_lost(0, 2000), 1500); // 1000..1500 is acked
                                              // Retransmission of 0..1000 first, needing no credit.
        assert_eq!(s.next_range(0), Some((0, 1000)));
        assert_eq!(s.on_sent(0, 1000), 0);
        assert_eq!(s.next_range(0), Some((1500, 500)));
        s.on_sent(1500, 500);
        assert_eq!(s.next_range(0), None); // new data, no connection credit
        assert_eq!(s.next_range(10), Some((2000, 10)));
        assert_eq!(s.queued(), 2500);
    }

    #[test]
    fn stream_credit_blocks() {
        let mut s = SendStream::new(100);
        s.written = 300;
        s.unsent.insert(0, 300);
        assert_eq!(s.next_range(u64::MAX), Some((0, 100)));
        s.on_sent(0, 100);
        assert!(s.stream_blocked());
        assert_eq!(s.next_range(u64::MAX), None);
        s.max_stream_data = 250;
        assert_eq!(s.next_range(u64::MAX), Some((100, 150)));
    }

    #[test]
    fn reassembly_delivers_in_order_once() {
        let mut r = RecvStream::new(ReceiveWindow::new(&WindowRule {
            window: 1000,
            threshold_fraction: 0.5,
            round: false,
        }));
        assert_eq!(r.on_data(100, 100), (0, None));
        assert_eq!(r.on_data(0, 50), (0, Some((0, 50))));
        assert_eq!(r.on_data(0, 50), (50, None));
        assert_eq!(r.on_data(40, 70), (20, Some((50, 150))));
        assert_eq!(r.delivered, 200);
        assert_eq!(r.highest, 200);
    }
}
