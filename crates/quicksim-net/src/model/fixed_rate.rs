//! A link that serializes at one rate, changed only by scheduled steps (`NetEvent::SetRate`:
//! a scenario's `schedule` and `spikes`, see [`super::schedule`]): INET's `DatarateChannel`.

use super::LinkModel;
use quicksim_engine::{Rate, SimDuration, SimTime};

/// The rate at the start of the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub rate: Rate,
}

#[derive(Debug)]
pub struct FixedRate {
    rate: Rate,
    /// (frame bytes, serialization time) of the last frame at the current rate: most frames
    /// on a link have the size of the one before (full-size data, same-size ACKs), and this
    /// saves a 64-bit division per packet and hop. (0, 0) is right at every rate.
    memo: (u64, SimDuration),
}

impl FixedRate {
    pub fn new(cfg: &Config) -> Self {
        FixedRate { rate: cfg.rate, memo: (0, SimDuration::ZERO) }
    }
}

impl LinkModel for FixedRate {
    #[inline]
    fn tx_time(&mut self, _now: SimTime, frame_bytes: u64) -> SimDuration {
        if self.memo.0 != frame_bytes {
            self.memo = (frame_bytes, self.rate.tx_time(frame_bytes));
        }
        self.memo.1
    }
    #[inline]
    fn rate(&self) -> Rate {
        self.rate
    }
    fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
        // The memo holds a time at the old rate.
        self.memo = (0, SimDuration::ZERO);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memo_is_cleared_by_a_rate_change() {
        let mut m = FixedRate::new(&Config { rate: Rate::mbps(10) });
        // 1007 B frame: 805.6 us at 10 Mbit/s, 8.056 ms at 1 Mbit/s.
        assert_eq!(m.tx_time(SimTime::ZERO, 1007), SimDuration(805_600_000));
        assert_eq!(m.tx_time(SimTime::ZERO, 1007), SimDuration(805_600_000));
        m.set_rate(Rate::mbps(1));
        assert_eq!(m.tx_time(SimTime::ZERO, 1007), SimDuration(8_056_000_000));
        assert_eq!(m.rate(), Rate::mbps(1));
        // 0 B at any rate is 0: the empty memo is never wrong.
        assert_eq!(m.tx_time(SimTime::ZERO, 0), SimDuration::ZERO);
    }
}
