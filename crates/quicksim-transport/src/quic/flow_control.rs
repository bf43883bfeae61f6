//! Flow control (RFC 9000 §4): the credit the peer grants us (send side) and the credit we
//! grant the peer (receive side, INET `FlowControlResponder`). Used per connection and per
//! stream.

use super::niche::Opt;
use serde::{Deserialize, Serialize};

/// Credit granted by the peer: MAX_DATA or MAX_STREAM_DATA against the highest offset sent.
#[derive(Clone, Debug, Serialize, Deserialize)]
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

/// How a receive window grows: its initial credit, when to raise the limit and how. From the
/// configuration, so passed in rather than stored in every window.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct WindowRule {
    /// Initial credit; a new limit is always `consumed + window` (INET, RFC 9000 §4.2).
    pub window: u64,
    /// Send an update when `limit − consumed ≤ window · threshold_fraction` (INET
    /// `max*FrameThreshold`).
    pub threshold_fraction: f64,
    /// INET `roundConsumedDataValue`: raise the limit in steps of (window − threshold).
    pub round: bool,
}

impl WindowRule {
    fn threshold(&self) -> u64 {
        (self.window as f64 * self.threshold_fraction) as u64
    }
}

/// Credit we grant: the advertised limit, the data consumed by the application, and when to
/// raise the limit (by a [`WindowRule`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReceiveWindow {
    /// The limit advertised so far (highest allowed offset or byte count).
    pub limit: u64,
    /// Bytes the application consumed (in-order delivered data; the discard receiver reads at once).
    pub consumed: u64,
    /// Highest received offset (stream) or sum of highest offsets over streams (connection).
    pub received: u64,
    /// `consumed` from which an update is due: `limit − threshold`, saturating (the same test
    /// as `limit − consumed ≤ threshold`, without the rule at hand).
    due_at: u64,
}

impl ReceiveWindow {
    pub fn new(rule: &WindowRule) -> Self {
        let limit = rule.window;
        ReceiveWindow { limit, consumed: 0, received: 0, due_at: limit.saturating_sub(rule.threshold()) }
    }

    /// The peer sent data up to `received`; false is a flow-control violation.
    pub fn on_received(&mut self, received: u64) -> bool {
        self.received = self.received.max(received);
        self.received <= self.limit
    }

    /// The application consumed `n` more bytes. Returns the new limit if a MAX_* frame is due.
    /// `rule` must be the one the window was created with.
    pub fn on_consumed(&mut self, n: u64, rule: &WindowRule) -> Option<u64> {
        self.consumed += n;
        if self.consumed < self.due_at {
            return None;
        }
        let (window, threshold) = (rule.window, rule.threshold());
        let step = window - threshold;
        let update = if rule.round && step > 0 {
            let old = self.limit;
            while self.limit - self.consumed.min(self.limit) <= threshold {
                self.limit += step;
            }
            (self.limit > old).then_some(self.limit)
        } else {
            let new = self.consumed + window;
            (new > self.limit).then(|| {
                self.limit = new;
                new
            })
        };
        self.due_at = self.limit.saturating_sub(threshold);
        update
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALF: WindowRule = WindowRule { window: 100_000, threshold_fraction: 0.5, round: false };
    const HALF_ROUND: WindowRule = WindowRule { round: true, ..HALF };

    #[test]
    fn update_when_half_the_credit_is_consumed() {
        let mut w = ReceiveWindow::new(&HALF);
        assert!(w.on_received(100_000));
        assert!(!w.clone().on_received(100_001));
        assert_eq!(w.on_consumed(49_999, &HALF), None);
        assert_eq!(w.on_consumed(1, &HALF), Some(150_000));
        assert_eq!(w.on_consumed(10, &HALF), None);
        assert!(w.on_received(150_000));
    }

    #[test]
    fn rounded_updates_stay_on_the_grid() {
        let mut w = ReceiveWindow::new(&HALF_ROUND);
        // Packet-sized steps of 1231 B: the first update comes at 50_473 consumed.
        let mut updates = Vec::new();
        for _ in 0..82 {
            if let Some(l) = w.on_consumed(1231, &HALF_ROUND) {
                updates.push(l);
            }
        }
        // 82 · 1231 = 100_942: limits 150_000 and then 200_000, never consumed + window.
        assert_eq!(updates, vec![150_000, 200_000]);
        let mut w = ReceiveWindow::new(&HALF_ROUND);
        assert_eq!(w.on_consumed(100_000, &HALF_ROUND), Some(200_000));
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
