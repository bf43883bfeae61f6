//! The rare state of a connection: what most connections never need (the rare counters,
//! per-stream control frames, lost packet numbers, queued application events), in one box
//! allocated on first use.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::packet::AckFrequencyFrame;
use super::stats::{Carries, SUMS};
use super::{ConnEvent, ConnStats};

/// Pending per-stream and blocked frames (most connections never send one).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(in crate::quic) struct PendingStreamControl {
    pub max_stream_data: BTreeSet<u64>,
    pub data_blocked: Option<u64>,
    pub stream_data_blocked: BTreeMap<u64, u64>,
}

impl PendingStreamControl {
    pub fn is_empty(&self) -> bool {
        self.max_stream_data.is_empty() && self.data_blocked.is_none() && self.stream_data_blocked.is_empty()
    }
}

/// What most connections never need, in one box allocated when first needed: the rare
/// counters, per-stream control frames, lost packet numbers, the peer's ACK_FREQUENCY request,
/// a close code to send and application events beyond the first. Six separate boxes (or the fields inline) cost ~48 B per endpoint.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(in crate::quic) struct Rare {
    /// The rare counters; the hot ones (`stats::Sum`) are kept in `Stats` and stay zero here.
    pub stats: ConnStats,
    /// Bits 32 and up of the `Stats` sums.
    pub high: [u64; SUMS],
    pub pending: PendingStreamControl,
    /// Recently lost packet numbers (1-RTT), to count spurious losses.
    pub lost_pns: BTreeSet<u64>,
    /// The latest ACK_FREQUENCY request of the peer that we applied.
    pub ack_freq_rx: Option<AckFrequencyFrame>,
    /// CONNECTION_CLOSE error code still to be sent.
    pub close_pending: Option<u64>,
    /// Application events queued behind `Connection::event`.
    pub events: VecDeque<ConnEvent>,
    /// Trace events not yet polled; Some while tracing (`Endpoint::set_tracing`). Not encoded:
    /// a traced connection is never stored encoded (`can_park`).
    #[serde(skip)]
    pub trace: Option<VecDeque<crate::endpoint::TraceEvent>>,
    /// The paths of a multipath (or migrating) connection; None on a single-path one, which so
    /// pays nothing for it. Not encoded: such a connection is never stored encoded (`can_park`).
    #[serde(skip)]
    pub mp: Option<Box<super::path_state::Multipath>>,
}

/// The [`Rare`] state of a connection, `None` until first needed.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(in crate::quic) struct RareBox(Option<Box<Rare>>);

impl RareBox {
    /// The rare state, allocated on first use: only call it to change something.
    #[inline]
    pub fn get_mut(&mut self) -> &mut Rare {
        if self.0.is_none() {
            self.alloc();
        }
        self.0.as_deref_mut().expect("allocated")
    }

    /// Out of line: the ~25 call sites stay small (and inlined into the hot paths).
    #[cold]
    #[inline(never)]
    fn alloc(&mut self) {
        self.0 = Some(Box::default());
    }

    /// The rare state if it exists.
    #[inline]
    pub fn get(&self) -> Option<&Rare> {
        self.0.as_deref()
    }

    /// The rare state if it exists, to change.
    #[inline]
    pub fn existing(&mut self) -> Option<&mut Rare> {
        self.0.as_deref_mut()
    }
}

/// Queues an event for the application: in `first` (the connection's oldest event) if the
/// queue is empty, else behind it in the rare state. The queue is drained after every input, so
/// it nearly always holds none or one event (a deque per connection kept a one-slot buffer, 48 B
/// with the allocator's overhead, for the connection's life).
pub(super) fn push_event(first: &mut Option<ConnEvent>, rare: &mut RareBox, e: ConnEvent) {
    if first.is_none() {
        debug_assert!(rare.get().is_none_or(|r| r.events.is_empty()));
        *first = Some(e);
        return;
    }
    let rest = &mut rare.get_mut().events;
    // Grows from one slot, not the default four.
    if rest.capacity() == 0 {
        rest.reserve_exact(1);
    }
    rest.push_back(e);
}

impl Carries for RareBox {
    #[inline]
    fn high(&mut self) -> &mut [u64; SUMS] {
        &mut self.get_mut().high
    }
}
