//! A windowed running maximum (Kathleen Nichols' algorithm, as Linux `lib/win_minmax.c`): the
//! largest value seen in the last `window` units of a clock the caller chooses (BBR's
//! bandwidth filter counts packet-timed round trips). Keeps three samples: the best, the second
//! best after it, the third best after that, so that an expiring best is replaced at once.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Sample {
    t: u64,
    v: u64,
}

/// The maximum of `v` over `(t - window, t]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    /// The current maximum (0 before any sample).
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forgets everything and starts from `v` at `t`.
    pub fn reset(&mut self, t: u64, v: u64) {
        self.s = [Sample { t, v }; 3];
    }

    /// Adds `v` measured at `t` (non-decreasing) and returns the maximum over the window.
    pub fn update(&mut self, t: u64, v: u64, window: u64) -> u64 {
        let new = Sample { t, v };
        if v >= self.s[0].v || t.saturating_sub(self.s[2].t) > window {
            self.reset(t, v);
            return v;
        }
        if v >= self.s[1].v {
            self.s[1] = new;
            self.s[2] = new;
        } else if v >= self.s[2].v {
            self.s[2] = new;
        }
        // Expire the best when it left the window; promote the others.
        let dt = t - self.s[0].t;
        if dt > window {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = new;
            if t - self.s[0].t > window {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
            }
        } else if self.s[1].t == self.s[0].t && dt > window / 4 {
            // A quarter of the window passed with no second choice: take one.
            self.s[1] = new;
            self.s[2] = new;
        } else if self.s[2].t == self.s[1].t && dt > window / 2 {
            self.s[2] = new;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a brute-force maximum: the filter is an estimate from three samples, so it lies
    /// between the newest value and the true maximum over the window (Nichols' bound), and never
    /// reports a value older than the window.
    #[test]
    fn stays_within_the_window_maximum_on_a_decaying_series() {
        let mut f = WindowedMax::default();
        let w = 10;
        let series: Vec<u64> = (0..100).map(|t| 1000 - t * 7 + (t % 3) * 5).collect();
        for (t, &v) in series.iter().enumerate() {
            let got = f.update(t as u64, v, w);
            let lo = (t as u64).saturating_sub(w) as usize;
            let want = *series[lo..=t].iter().max().unwrap();
            assert!(got >= v && got <= want, "t={t}: {got} not in [{v}, {want}]");
        }
        // A step up replaces everything at once; a single high sample expires after the window.
        assert_eq!(f.update(100, 5000, w), 5000);
        assert_eq!(f.update(105, 10, w), 5000);
        assert_eq!(f.update(111, 10, w), 10);
    }
}
