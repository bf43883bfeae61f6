//! A trace-driven link in mahimahi's `mm-link` format: each line of the trace is a time in
//! milliseconds at which the link can deliver one opportunity's worth of bytes (1500 B by
//! default); several lines with the same time are several opportunities in that millisecond.
//! The trace repeats with a period equal to its last time (so a file holding just `1` is one
//! 1500 B packet per millisecond, 12 Mbit/s).
//!
//! Semantics, as mahimahi's `LinkQueue::rationalize` (`src/frontend/link_queue.cc`):
//! - an opportunity carries up to its size in bytes from the head of the queue: several small
//!   frames, or a part of a large one whose remaining bytes go in the following opportunities;
//!   a frame is delivered at the opportunity that carries its last byte;
//! - bytes of an opportunity that nothing waits for are lost (the link cannot save them up),
//!   and so are opportunities while the queue is empty;
//! - an opportunity at t ms serves the frames waiting at t (a frame arriving within the same
//!   picosecond as an opportunity it left unused still gets it). mahimahi's clock has whole
//!   milliseconds: a packet arriving at exactly t ms is stamped t and served after t there; off
//!   the millisecond grid both agree (the test against mahimahi's algorithm below).
//!
//! One difference in bookkeeping, not in timing: mahimahi leaves a frame in its queue until the
//! opportunity that carries its first byte, while here the link takes the head frame when it is
//! free and holds it until its opportunity (the channel's "in transmission"), so a queue
//! discipline sees that frame leave up to one gap between opportunities earlier.

use super::{FileSource, LinkModel, ModelSettings};
use crate::qdisc::ConfigError;
use quicksim_engine::units::Bytes;
use quicksim_engine::{Rate, SimDuration, SimTime};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `model = { kind = "trace", file = "traces/cellular-walk.mm" }`: a mahimahi `mm-link` trace,
/// one line per delivery opportunity, in ms, repeating. Its rate is the trace's: no `rate`,
/// `schedule` or `spikes` beside it.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The trace file; a relative path is relative to the scenario file (the Python front end
    /// resolves it), or to the working directory for a scenario given as a dict.
    pub file: String,
    /// Bytes one opportunity carries (default 1500 B, the format's; mm-link's code: 1504 B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opportunity: Option<Bytes>,
}

impl ModelSettings for Settings {
    const KIND: &'static str = "trace";
    const SETS_RATE: bool = true;
    type Config = Config;

    fn config(&self, _rate: Option<Rate>, files: &mut dyn FileSource) -> Result<Config, ConfigError> {
        let opportunity_bytes = self.opportunity.map_or(DEFAULT_OPPORTUNITY_BYTES, |b| b.0);
        if opportunity_bytes == 0 {
            return Err(ConfigError::new("opportunity", "0 B: an opportunity carries at least 1 byte"));
        }
        // The opportunity size does not change the parse: 1 here, the real one in the config.
        let parse = |text: &str| -> Result<super::Loaded, String> {
            match Config::parse(text, 1) {
                Ok(c) => Ok(Arc::new(c.ms)),
                Err(e) if e.line == 0 => Err(e.message),
                Err(e) => Err(format!("line {}: {}", e.line, e.message)),
            }
        };
        let file = &self.file;
        let ms = files
            .load(file, &parse)
            .map_err(|m| ConfigError::new("file", format!("{file:?}: {m}")))?
            .downcast::<Arc<[u32]>>()
            .map_err(|_| ConfigError::new("file", format!("{file:?}: read as another kind of file")))?;
        Ok(Config { ms: Arc::clone(&ms), opportunity_bytes })
    }

    fn own_rate(cfg: &Config) -> Option<Rate> {
        Some(cfg.mean_rate())
    }
}

/// Picoseconds per millisecond.
const PS_PER_MS: u64 = 1_000_000_000;
/// mahimahi's trace format: each line is an opportunity for "one 1500-byte packet" (its
/// README); its code uses 1504 B (`LinkQueue::PACKET_SIZE`, the TUN device's largest payload).
pub const DEFAULT_OPPORTUNITY_BYTES: u64 = 1500;

/// A trace: opportunity times in ms (non-decreasing, the last > 0 and the period), and the
/// bytes one opportunity carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub ms: Arc<[u32]>,
    pub opportunity_bytes: u64,
}

/// Why a trace file was refused: the 1-based line (0: the file as a whole) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl Config {
    /// Read a trace in `mm-link` format: one non-negative integer per line (surrounding spaces
    /// and a `\r` are allowed), non-decreasing, at least one line, the last above 0. As mahimahi,
    /// blank lines and comments are errors, so a file accepted here is accepted by `mm-link`.
    pub fn parse(text: &str, opportunity_bytes: u64) -> Result<Config, ParseError> {
        let mut ms: Vec<u32> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let fail = |message: String| Err(ParseError { line, message });
            let s = raw.trim();
            if s.is_empty() {
                return fail("an empty line; each line is one time in ms".into());
            }
            let v: u32 = match s.parse() {
                Ok(v) => v,
                Err(_) => {
                    let shown: String = s.chars().take(40).collect();
                    return fail(format!(
                        "{shown:?} is not a time in whole milliseconds (0 to {})",
                        u32::MAX
                    ));
                }
            };
            if let Some(&last) = ms.last() {
                if v < last {
                    return fail(format!(
                        "{v} ms is before the line above ({last} ms); times must not decrease"
                    ));
                }
            }
            ms.push(v);
        }
        match ms.last() {
            None => Err(ParseError { line: 0, message: "no opportunities: the file is empty".into() }),
            Some(0) => Err(ParseError {
                line: ms.len(),
                message: "the last time is 0 ms: the trace must last longer than 0 ms (it repeats with the last time as period)".into(),
            }),
            Some(_) => Ok(Config { ms: ms.into(), opportunity_bytes }),
        }
    }

    /// The repeat period in ms: the last time.
    pub fn period_ms(&self) -> u64 {
        *self.ms.last().expect("a parsed trace is not empty") as u64
    }

    /// The mean rate over one period (opportunities x bytes x 8 / period), rounded to whole
    /// bits per second; at least 1 bit/s.
    pub fn mean_rate(&self) -> Rate {
        let bits = self.ms.len() as u128 * self.opportunity_bytes as u128 * 8 * 1000;
        let p = self.period_ms() as u128;
        Rate::bps(((bits + p / 2) / p).max(1) as u64)
    }
}

/// The link's position in its trace.
#[derive(Debug)]
pub struct Trace {
    cfg: Config,
    /// The current opportunity, counted from the start of the run over all repetitions.
    idx: u64,
    /// Bytes the current opportunity can still carry.
    left: u64,
    nominal: Rate,
}

impl Trace {
    pub fn new(cfg: &Config) -> Self {
        Trace { cfg: cfg.clone(), idx: 0, left: cfg.opportunity_bytes, nominal: cfg.mean_rate() }
    }

    /// The time of opportunity `idx` in ps: its period's start plus its time in the trace.
    fn time_ps(&self, idx: u64) -> u64 {
        let n = self.cfg.ms.len() as u64;
        ((idx / n) * self.cfg.period_ms() + self.cfg.ms[(idx % n) as usize] as u64) * PS_PER_MS
    }

    /// The first opportunity at or after `now_ps`.
    fn first_from(&self, now_ps: u64) -> u64 {
        let (n, period) = (self.cfg.ms.len() as u64, self.cfg.period_ms());
        let ms = now_ps.div_ceil(PS_PER_MS);
        // The last time of a period is the start of the next: at a period boundary the first
        // opportunity at or after it is the previous period's last ones.
        let (k, within) = if ms > 0 && ms.is_multiple_of(period) {
            (ms / period - 1, period)
        } else {
            (ms / period, ms % period)
        };
        // within <= period = the last time, so an opportunity of period k is at or after it.
        k * n + self.cfg.ms.partition_point(|&t| (t as u64) < within) as u64
    }
}

impl LinkModel for Trace {
    fn tx_time(&mut self, now: SimTime, frame_bytes: u64) -> SimDuration {
        if self.time_ps(self.idx) < now.0 {
            // The link idled past the current opportunity: what it had left is gone.
            self.idx = self.first_from(now.0);
            self.left = self.cfg.opportunity_bytes;
        }
        if frame_bytes <= self.left {
            self.left -= frame_bytes;
        } else {
            let need = frame_bytes - self.left;
            let more = need.div_ceil(self.cfg.opportunity_bytes);
            self.idx += more;
            self.left = more * self.cfg.opportunity_bytes - need;
        }
        SimDuration(self.time_ps(self.idx) - now.0)
    }
    fn rate(&self) -> Rate {
        self.nominal
    }
    /// A trace has no rate to set: the scenario refuses rate schedules on a trace link, and a
    /// rate change sent anyway leaves the trace as it is.
    fn set_rate(&mut self, _rate: Rate) {}
    fn size_only(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(text: &str) -> Trace {
        Trace::new(&Config::parse(text, 1500).unwrap())
    }
    /// Completion times in ms of frames of these sizes started back to back from `start_ms`
    /// (each next one when the one before completes).
    fn back_to_back(t: &mut Trace, start_ms: u64, sizes: &[u64]) -> Vec<f64> {
        let mut now = SimTime(start_ms * PS_PER_MS);
        sizes
            .iter()
            .map(|&b| {
                now = now + t.tx_time(now, b);
                now.0 as f64 / PS_PER_MS as f64
            })
            .collect()
    }

    #[test]
    fn a_full_size_frame_takes_one_opportunity_and_the_trace_repeats() {
        // Opportunities at 1, 1, 3 ms, period 3: then 4, 4, 6, 7, 7, 9 ...
        let mut t = trace("1\n1\n3\n");
        assert_eq!(back_to_back(&mut t, 0, &[1500; 7]), vec![1.0, 1.0, 3.0, 4.0, 4.0, 6.0, 7.0]);
        assert_eq!(t.rate(), Rate::mbps(12)); // 3 x 1500 B per 3 ms
    }

    #[test]
    fn small_frames_share_an_opportunity_and_large_ones_span_two() {
        // One opportunity per ms. 500 B frames: three per opportunity. Then 1000 B frames:
        // 1000 in ms 2, 500 + 500 in ms 2 and 3, 1000 in ms 3, ...
        let mut t = trace("1\n");
        assert_eq!(back_to_back(&mut t, 0, &[500; 6]), vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
        let mut t = trace("1\n");
        assert_eq!(back_to_back(&mut t, 0, &[1000; 4]), vec![1.0, 2.0, 2.0, 3.0]);
        // 1507 B (1500 + PPP): the 7 B spill over into the next opportunity, and so on.
        let mut t = trace("1\n");
        assert_eq!(back_to_back(&mut t, 0, &[1507, 1507]), vec![2.0, 3.0]);
    }

    #[test]
    fn unused_bytes_and_idle_opportunities_are_lost() {
        let mut t = trace("1\n");
        // A 500 B frame at 0 leaves 1000 B of the 1 ms opportunity; the next frame comes at
        // 1.5 ms: the leftover is gone, it waits for 2 ms.
        assert_eq!(t.tx_time(SimTime::ZERO, 500), SimDuration(PS_PER_MS));
        assert_eq!(t.tx_time(SimTime(1_500_000_000), 500), SimDuration(500_000_000));
        // Idle until 10 ms exactly: the opportunity at 10 ms serves it at once.
        assert_eq!(t.tx_time(SimTime(10 * PS_PER_MS), 1500), SimDuration::ZERO);
        // And a frame started at 10 ms after it waits for 11 ms.
        assert_eq!(t.tx_time(SimTime(10 * PS_PER_MS), 100), SimDuration(PS_PER_MS));
        // Far into the run (period 7 ms, opportunities at 0, 2, 7 + 7k: ... 994, 996, 1001,
        // 1001, 1003, 1008): a frame at 1000.0001 ms leaves at 1001 ms.
        let mut t = trace("0\n2\n7\n");
        let now = SimTime(1000 * PS_PER_MS + 100_000);
        assert_eq!(now + t.tx_time(now, 1500), SimTime(1001 * PS_PER_MS));
        // From 1001 ms exactly (143 periods): both opportunities at 1001 ms serve, the last of
        // period 142 and the first of period 143.
        let mut t = trace("0\n2\n7\n");
        assert_eq!(back_to_back(&mut t, 1001, &[1500, 1500, 1500]), vec![1001.0, 1001.0, 1003.0]);
        let mut t = trace("0\n2\n7\n");
        assert_eq!(back_to_back(&mut t, 0, &[1500; 4]), vec![0.0, 2.0, 7.0, 7.0]);
    }

    /// mahimahi's algorithm restated (not its code): opportunities in time order; each carries
    /// up to its size from the head of a FIFO of packets that arrived before it (mahimahi reads
    /// the clock in whole ms and burns the opportunities up to now before it queues an arriving
    /// packet, so a packet stamped t ms is served from the first opportunity after t), the
    /// head's remaining bytes first. Returns each packet's departure in ps.
    fn mahimahi_reference(ms: &[u32], opp: u64, arrivals: &[(u64, u64)]) -> Vec<u64> {
        let (n, period) = (ms.len() as u64, *ms.last().unwrap() as u64);
        let mut out = vec![0; arrivals.len()];
        let (mut head, mut left_of_head) = (0usize, arrivals.first().map_or(0, |a| a.1));
        let mut i = 0u64;
        while head < arrivals.len() {
            let t = ((i / n) * period + ms[(i % n) as usize] as u64) * PS_PER_MS;
            i += 1;
            let mut budget = opp;
            while budget > 0 && head < arrivals.len() && arrivals[head].0 / PS_PER_MS < t / PS_PER_MS {
                let used = budget.min(left_of_head);
                budget -= used;
                left_of_head -= used;
                if left_of_head == 0 {
                    out[head] = t;
                    head += 1;
                    left_of_head = arrivals.get(head).map_or(0, |a| a.1);
                }
            }
        }
        out
    }

    #[test]
    fn departures_are_mahimahis_for_arrivals_within_milliseconds() {
        // Random traces and random arrivals (never on a whole millisecond, where mahimahi's
        // ms clock and the picosecond one differ: docs/links.md), sizes 40..1500 B: a FIFO link
        // that starts each frame when it arrives or when the one before leaves gives every
        // frame the departure mahimahi gives it.
        let streams = quicksim_engine::RngStreams::new(16);
        for case in 0..200 {
            let mut rng = streams.stream("trace-test", case);
            let mut t = 0;
            let mut ms: Vec<u32> = (0..rng.range_u64(1, 30))
                .map(|_| {
                    t += rng.range_u64(0, 4) as u32;
                    t
                })
                .collect();
            *ms.last_mut().unwrap() += 1;
            let (mut at, mut arrivals) = (0u64, Vec::new());
            for _ in 0..300 {
                at += rng.range_u64(0, 3 * PS_PER_MS);
                if at % PS_PER_MS == 0 {
                    at += 1;
                }
                arrivals.push((at, rng.range_u64(40, 1500)));
            }
            let expect = mahimahi_reference(&ms, 1500, &arrivals);
            let mut link = Trace::new(&Config { ms: ms.clone().into(), opportunity_bytes: 1500 });
            let mut free = 0u64;
            let got: Vec<u64> = arrivals
                .iter()
                .map(|&(a, bytes)| {
                    let start = SimTime(a.max(free));
                    free = start.0 + link.tx_time(start, bytes).0;
                    free
                })
                .collect();
            assert_eq!(got, expect, "case {case}, trace {ms:?}");
        }
    }

    #[test]
    fn bad_traces_name_the_line() {
        let e = |s: &str| Config::parse(s, 1500).unwrap_err();
        assert_eq!(e("").line, 0);
        assert_eq!(e("1\n\n2\n").line, 2);
        assert_eq!(e("1\n2\nx\n").line, 3);
        assert_eq!(e("1\n-2\n").line, 2);
        let d = e("5\n3\n");
        assert_eq!(d.line, 2);
        assert!(d.message.contains("before the line above"), "{}", d.message);
        assert_eq!(e("0\n0\n").line, 2);
        assert_eq!(e("4294967296\n").line, 1);
        assert!(Config::parse(" 3 \r\n4\r\n", 1500).is_ok());
    }
}
