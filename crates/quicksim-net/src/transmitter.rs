//! When a link direction's transmitter is free, and the one end-of-transmission event it keeps
//! pending. An optimisation a reader of the channel can skip: it changes how many events a frame
//! costs, not when anything happens.
//!
//! A frame's serialization time and propagation delay are known when it starts, so the channel
//! decides its fate (loss, drop lists, jitter: each from its own random stream, drawn in the
//! channel's FIFO order as before) and schedules its arrival at the far end right then. The
//! transmitter then only needs an event at the end of the serialization when something has to
//! happen there: a packet waits behind the frame (it starts then), or the frame is lost (its drop
//! is reported then). A frame that finds the link idle and leaves nothing waiting costs one event
//! (its arrival) instead of two, like htsim's pipe (one pending event per link direction).
//!
//! A direction that can go down (`Channel::may_go_down`) decides each frame's fate at the end of
//! its serialization instead, as the link's state then decides it (a frame on the wire when the
//! link goes down is lost): an end-of-transmission event for every frame there.

use quicksim_engine::SimTime;

/// The transmitter of one link direction.
#[derive(Debug, Default)]
pub(crate) struct Transmitter {
    /// End of the last frame's serialization: the transmitter is busy before it.
    busy_until: SimTime,
    /// A `NetEvent::TxDone` is pending at `busy_until`. While it is, the transmitter is not free
    /// even at `busy_until` (the event, not a newcomer, starts what waits).
    wake_pending: bool,
    /// Decide each frame's fate at its end of serialization (`Channel::may_go_down`).
    fate_at_end: bool,
}

impl Transmitter {
    /// A frame offered now can start at once (queue permitting).
    #[inline(always)]
    pub fn free(&self, now: SimTime) -> bool {
        !self.wake_pending && now >= self.busy_until
    }

    /// A frame starts; its serialization ends at `end`.
    #[inline(always)]
    pub fn start(&mut self, end: SimTime) {
        self.busy_until = end;
    }

    /// The time of a `TxDone` to schedule for a packet that must wait for the transmitter, if
    /// none is pending yet; marks it pending.
    #[inline(always)]
    pub fn wake_for_waiting(&mut self, now: SimTime) -> Option<SimTime> {
        if self.wake_pending || now >= self.busy_until {
            return None;
        }
        self.wake_pending = true;
        Some(self.busy_until)
    }

    /// The time of a `TxDone` for the frame just started, whose fate or drop is due at its end.
    #[inline(always)]
    pub fn wake_at_end(&mut self) -> SimTime {
        self.wake_pending = true;
        self.busy_until
    }

    /// The pending `TxDone` happened.
    #[inline(always)]
    pub fn woken(&mut self) {
        self.wake_pending = false;
    }

    /// Whether each frame's fate is decided at its end of serialization.
    #[inline(always)]
    pub fn fate_at_end(&self) -> bool {
        self.fate_at_end
    }

    pub fn set_fate_at_end(&mut self) {
        self.fate_at_end = true;
    }

    /// End of the last frame's serialization.
    pub fn busy_until(&self) -> SimTime {
        self.busy_until
    }
}
