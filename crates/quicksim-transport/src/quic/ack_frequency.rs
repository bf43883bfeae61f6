//! Sender side of draft-ietf-quic-ack-frequency: which ACK_FREQUENCY frame to send, when to send
//! it again, and what the peer's max_ack_delay is once it has been acknowledged. (The receiver
//! side is the [`super::ack::AckPolicy`] the connection builds from the latest frame received.)

use quicksim_engine::{SimDuration, PS_PER_US};
use serde::{Deserialize, Serialize};

#[cfg(test)]
use super::config::AckPolicyKind;
use super::config::{AckFreqPolicy, QuicConfig};
use super::packet::{AckFrequencyFrame, TransportParams};

/// Packets per ACK the cwnd policy asks for: a quarter of the window, 1..=`max`.
pub fn cwnd_ratio(cwnd_bytes: u64, mps: u64, max: u64) -> u64 {
    (cwnd_bytes / (4 * mps.max(1))).clamp(1, max.max(1))
}

/// ACK_FREQUENCY state of a data sender.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AckFreqSender {
    next_seq: u64,
    /// The latest frame sent (only its sequence number counts at the peer).
    last: Option<AckFrequencyFrame>,
    /// The latest frame was lost: send the current request again, with a new sequence number.
    resend: bool,
    /// The latest frame was acknowledged.
    acked: bool,
}

impl AckFreqSender {
    /// The frame to put into the next 1-RTT packet, if the request changed or was lost.
    /// None when the policy sends no frames or the peer did not advertise min_ack_delay.
    pub fn poll_frame(
        &mut self,
        cfg: &QuicConfig,
        peer: Option<&TransportParams>,
        cwnd_bytes: u64,
    ) -> Option<AckFrequencyFrame> {
        let peer = peer?;
        let min = peer.min_ack_delay?;
        let threshold = match cfg.ack_freq_policy() {
            AckFreqPolicy::Receiver => return None,
            AckFreqPolicy::Fixed { threshold } => threshold,
            AckFreqPolicy::Cwnd { max } => cwnd_ratio(cwnd_bytes, cfg.max_packet_size, max) - 1,
        };
        // draft §4: Requested Max Ack Delay must not be below the peer's min_ack_delay.
        let delay = cfg.ack_frequency_max_ack_delay.unwrap_or(peer.max_ack_delay).max(min);
        let want = AckFrequencyFrame {
            seq: self.next_seq,
            ack_eliciting_threshold: threshold,
            request_max_ack_delay_us: delay.ps().div_ceil(PS_PER_US),
            reordering_threshold: cfg.ack_frequency_reordering,
        };
        let same = self.last.is_some_and(|l| AckFrequencyFrame { seq: want.seq, ..l } == want);
        if same && !self.resend {
            return None;
        }
        self.next_seq += 1;
        self.last = Some(want);
        self.resend = false;
        self.acked = false;
        Some(want)
    }

    /// A packet carrying `f` was acknowledged. Returns the requested max_ack_delay if `f` is
    /// the latest request: the sender's PTO uses it from now on (draft §4, RFC 9002 §6.2.1).
    pub fn on_acked(&mut self, f: &AckFrequencyFrame) -> Option<SimDuration> {
        if self.last.is_some_and(|l| l.seq == f.seq) {
            self.acked = true;
            return Some(SimDuration(f.request_max_ack_delay_us * PS_PER_US));
        }
        None
    }

    /// A packet carrying `f` was lost: re-send if it was the latest and not yet acknowledged
    /// (an older frame is obsolete anyway).
    pub fn on_lost(&mut self, f: &AckFrequencyFrame) {
        if self.last.is_some_and(|l| l.seq == f.seq) && !self.acked {
            self.resend = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(min: Option<SimDuration>) -> TransportParams {
        TransportParams { min_ack_delay: min, ..QuicConfig::default().local_params() }
    }

    #[test]
    fn frames_only_for_a_peer_with_min_ack_delay_and_on_change() {
        let cfg = QuicConfig {
            ack_policy: AckPolicyKind::Cwnd,
            ack_frequency_max: Some(10),
            min_ack_delay: Some(SimDuration::from_millis(1)),
            ..Default::default()
        };
        let mut s = AckFreqSender::default();
        assert_eq!(s.poll_frame(&cfg, Some(&peer(None)), 100_000), None);
        let p = peer(Some(SimDuration::from_millis(1)));
        let f = s.poll_frame(&cfg, Some(&p), 12 * 1252).unwrap();
        assert_eq!((f.seq, f.ack_eliciting_threshold, f.request_max_ack_delay_us), (0, 2, 25_000));
        assert_eq!(s.poll_frame(&cfg, Some(&p), 13 * 1252), None); // still 3 per ACK
        let f = s.poll_frame(&cfg, Some(&p), 100 * 1252).unwrap();
        assert_eq!((f.seq, f.ack_eliciting_threshold), (1, 9)); // capped at 10 per ACK
        s.on_lost(&AckFrequencyFrame { seq: 0, ..f }); // obsolete: nothing
        assert_eq!(s.poll_frame(&cfg, Some(&p), 100 * 1252), None);
        s.on_lost(&f);
        assert_eq!(s.poll_frame(&cfg, Some(&p), 100 * 1252).unwrap().seq, 2);
        let g = AckFrequencyFrame { seq: 2, ..f };
        assert_eq!(s.on_acked(&g), Some(SimDuration::from_millis(25)));
        s.on_lost(&g); // acked already: no resend
        assert_eq!(s.poll_frame(&cfg, Some(&p), 100 * 1252), None);
    }

    #[test]
    fn requested_delay_respects_min_ack_delay() {
        let cfg = QuicConfig {
            ack_policy: AckPolicyKind::Fixed,
            ack_frequency_threshold: Some(9),
            ack_frequency_max_ack_delay: Some(SimDuration::from_micros(100)),
            min_ack_delay: Some(SimDuration::from_millis(1)),
            ..Default::default()
        };
        let p = peer(Some(SimDuration::from_millis(2)));
        let f = AckFreqSender::default().poll_frame(&cfg, Some(&p), 0).unwrap();
        assert_eq!((f.ack_eliciting_threshold, f.request_max_ack_delay_us), (9, 2000));
    }
}
