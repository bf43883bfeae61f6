//! Flow control (RFC 9000 §4): the credit the peer grants us (send side) and the credit we
//! grant the peer (receive side, INET `FlowControlResponder`). Used per connection and per
//! stream.

use super::niche::Opt;

/// Credit granted by the peer: MAX_DATA or MAX_STREAM_DATA against the highest offset sent.
#[derive(Clone, Debug)]
pub struct SendCredit {
    /// The peer's current limit.
    pub max: u64,
    /// Credit used (sum of highest offsets sent over streams, or one stream's highest offset).
    pub used: u64,
    /// Limit for which a (STREAM_)DATA_BLOCKED frame was already queued (one per limit, INET).
    /// (`u64::MAX` is never a limit one is blocked at: the credit used would be 2^64 − 1.)
    pub blocked_at: Opt<u64>,
}

impl SendCredit {
    pub fn new(max: u64) -> Self {
        SendCredit { max, used: 0, blocked_at: Opt::NONE }
    }

    pub fn available(&self) -> u64 {
        self.max.saturating_sub(self.used)
    }

    /// Applies a MAX_* frame (limits never decrease, RFC 9000 §19.9).
    pub fn on_max(&mut self, max: u64) -> bool {
        if max > self.max {
            self.max = max;
            true
        } else {
            false
        }
    }

    /// Returns the limit to report in a blocked frame if one is owed now.
    pub fn take_blocked(&mut self) -> Option<u64> {
        if self.available() == 0 && self.blocked_at.get() != Some(self.max) {
            self.blocked_at = Opt::some(self.max);
            Some(self.max)
        } else {
            None
        }
    }
}

/// Credit we grant: the advertised limit, the data consumed by the application, and when to
/// raise the limit.
#[derive(Clone, Debug)]
pub struct ReceiveWindow {
    /// Initial credit; a new limit is always `consumed + window` (INET, RFC 9000 §4.2).
    pub window: u64,
    /// Send an update when `limit − consumed ≤ threshold` (INET `max*FrameThreshold`).
    pub threshold: u64,
    /// The limit advertised so far (highest allowed offset or byte count).
    pub limit: u64,
    /// Bytes the application consumed (in-order delivered data; the discard receiver reads at once).
    pub consumed: u64,
    /// Highest received offset (stream) or sum of highest offsets over streams (connection).
    pub received: u64,
    /// INET `roundConsumedDataValue`: raise the limit in steps of (window − threshold).
    pub round: bool,
}

impl ReceiveWindow {
    pub fn new(window: u64, threshold_fraction: f64, round: bool) -> Self {
        let threshold = (window as f64 * threshold_fraction) as u64;
        ReceiveWindow { window, threshold, limit: window, consumed: 0, received: 0, round }
    }

    /// The peer sent data up to `received`; false is a flow-control violation.
    pub fn on_received(&mut self, received: u64) -> bool {
        self.received = self.received.max(received);
        self.received <= self.limit
    }

    /// The application consumed `n` more bytes. Returns the new limit if a MAX_* frame is due.
    pub fn on_consumed(&mut self, n: u64) -> Option<u64> {
        self.consumed += n;
        if self.limit - self.consumed.min(self.limit) <= self.threshold {
            let step = self.window - self.threshold;
            if self.round && step > 0 {
                let old = self.limit;
                while self.limit - self.consumed.min(self.limit) <= self.threshold {
                    self.limit += step;
                }
                return (self.limit > old).then_some(self.limit);
            }
            let new = self.consumed + self.window;
            if new > self.limit {
                self.limit = new;
                return Some(new);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_when_half_the_credit_is_consumed() {
        let mut w = ReceiveWindow::new(100_000, 0.5, false);
        assert!(w.on_received(100_000));
        assert!(!w.clone().on_received(100_001));
        assert_eq!(w.on_consumed(49_999), None);
        assert_eq!(w.on_consumed(1), Some(150_000));
        assert_eq!(w.on_consumed(10), None);
        assert!(w.on_received(150_000));
    }

    #[test]
    fn rounded_updates_stay_on_the_grid() {
        let mut w = ReceiveWindow::new(100_000, 0.5, true);
        // Packet-sized steps of 1231 B: the first update comes at 50_473 consumed.
        let mut updates = Vec::new();
        for _ in 0..82 {
            if let Some(l) = w.on_consumed(1231) {
                updates.push(l);
            }
        }
        // 82 · 1231 = 100_942: limits 150_000 and then 200_000, never consumed + window.
        assert_eq!(updates, vec![150_000, 200_000]);
        let mut w = ReceiveWindow::new(100_000, 0.5, true);
        assert_eq!(w.on_consumed(100_000), Some(200_000));
    }

    #[test]
    fn blocked_once_per_limit() {
        let mut c = SendCredit::new(10);
        assert_eq!(c.take_blocked(), None);
        c.used = 10;
        assert_eq!(c.take_blocked(), Some(10));
        assert_eq!(c.take_blocked(), None);
        assert!(c.on_max(20));
        assert!(!c.on_max(15));
        c.used = 20;
        assert_eq!(c.take_blocked(), Some(20));
    }
}
