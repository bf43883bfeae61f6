//! Rate schedules: the steps of a link's rate over the run, from a list of (time, rate) steps
//! and periodic "spikes" (the rate drops to a fraction of nominal for a while, every period).
//! The scenario turns each step into a `NetEvent::SetRate` scheduled before the run, which the
//! channel hands to its link model.
//!
//! The steps stay pre-scheduled events rather than a lazy lookup by the model: `SetRate`
//! events are part of the event-trace hash and, being queued first, win ties with events at the
//! same picosecond (a frame starting at a step time takes the new rate). A lookup at frame
//! start would change both, so it would not be bit-identical with today's results.

use quicksim_engine::{Rate, SimDuration, SimTime};

/// Periodic rate drops: from `start` (default: one period in), every `period` the rate is
/// `fraction` of nominal for `duration`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spikes {
    pub period: SimDuration,
    pub duration: SimDuration,
    pub fraction: f64,
    pub start: Option<SimDuration>,
}

/// A link direction's rate steps, in the order they are scheduled (equal times keep it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RateSchedule {
    pub steps: Vec<(SimTime, Rate)>,
}

impl RateSchedule {
    /// A step to `rate` at `at`.
    pub fn step(&mut self, at: SimTime, rate: Rate) {
        self.steps.push((at, rate));
    }

    /// The steps of `s` up to `end`: down to `fraction * nominal` (rounded, at least 1 bit/s)
    /// at each spike start, back to `nominal` `duration` later.
    pub fn spikes(&mut self, nominal: Rate, s: &Spikes, end: SimTime) {
        debug_assert!(s.period.0 > 0 && s.duration < s.period, "checked by the caller");
        let low = Rate::bps(((nominal.bits_per_s as f64) * s.fraction).round().max(1.0) as u64);
        let mut t = s.start.unwrap_or(s.period).0;
        while t <= end.0 {
            self.steps.push((SimTime(t), low));
            self.steps.push((SimTime(t + s.duration.0), nominal));
            t += s.period.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spikes_alternate_low_and_nominal_until_the_end() {
        let mut s = RateSchedule::default();
        let sp = Spikes {
            period: SimDuration::from_millis(100),
            duration: SimDuration::from_millis(10),
            fraction: 0.25,
            start: None,
        };
        s.spikes(Rate::mbps(10), &sp, SimTime::from_millis(300));
        let ms = |t: u64| SimTime::from_millis(t);
        let (lo, hi) = (Rate::bps(2_500_000), Rate::mbps(10));
        // Spikes at 100, 200 and 300 ms (300 <= end), each 10 ms long.
        assert_eq!(
            s.steps,
            vec![(ms(100), lo), (ms(110), hi), (ms(200), lo), (ms(210), hi), (ms(300), lo), (ms(310), hi)]
        );
    }

    #[test]
    fn a_tiny_fraction_keeps_one_bit_per_second() {
        let mut s = RateSchedule::default();
        let sp = Spikes {
            period: SimDuration::from_millis(100),
            duration: SimDuration::from_millis(10),
            fraction: 1e-12,
            start: Some(SimDuration::ZERO),
        };
        s.spikes(Rate::mbps(1), &sp, SimTime::ZERO);
        assert_eq!(s.steps, vec![(SimTime::ZERO, Rate::bps(1)), (SimTime::from_millis(10), Rate::mbps(1))]);
    }
}
