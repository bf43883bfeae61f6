//! Window rules a transport supplies to its congestion controller: the initial window, the
//! floor of a reduced window, and the window after a collapse (an RTO, or QUIC's persistent
//! congestion).
//!
//! These are transport rules, not algorithm choices: QUIC takes them from RFC 9002 §7.2, TCP
//! from RFC 5681 §3.1 and RFC 6928. A controller reads them from its context
//! ([`crate::InitCtx::window`], [`crate::CcCtx::window`]), so NewReno and CUBIC run unchanged
//! over either transport.

/// How a transport sizes the congestion window, in multiples of the maximum segment (QUIC:
/// maximum datagram) size. Use one of the presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowRules {
    /// Initial window = min(`initial_segments`·MDS, max(`initial_floor_segments`·MDS,
    /// `initial_cap_bytes`)).
    pub initial_segments: u64,
    pub initial_floor_segments: u64,
    pub initial_cap_bytes: u64,
    /// No reduction after a loss or ECN mark goes below this many segments.
    pub minimum_segments: u64,
    /// The window after a collapse: an RTO, or persistent congestion.
    pub loss_window_segments: u64,
    /// How NewReno grows when its own `per_ack_increase` does not say.
    pub growth: Growth,
    /// The transport paces its segments (TCP's `pacing`: Linux's internal pacing, a socket
    /// whose `sk_pacing_status` is not `SK_PACING_NONE`). Linux's HyStart then waits for an
    /// ACK train as long as the whole minimum RTT, not half of it (`hystart_update`,
    /// [`crate::hystart_linux`]). False in the presets.
    pub paced: bool,
}

/// How a window-based controller (NewReno) grows its window: the transport's default, which
/// the controller's own setting overrides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Growth {
    /// By the bytes each ACK acknowledges (RFC 9002 §7.3; QUIC stacks, INET).
    PerByte,
    /// Once per ACK (RFC 5681 §3.1 eq. 3, "increments cwnd by at most SMSS bytes for each
    /// ACK"; ns-3's `TcpNewReno`, ns-2, htsim).
    PerAck,
    /// Linux's `tcp_reno_cong_avoid` (net/ipv4/tcp_cong.c): slow start by the acknowledged
    /// segments up to ssthresh, then one segment per window of acknowledged segments
    /// (`tcp_cong_avoid_ai`), the count zeroed at each reduction (`tcp_init_cwnd_reduction`,
    /// `tcp_enter_loss`). TCP under `profile = "linux"`.
    Linux,
}

impl WindowRules {
    /// QUIC, RFC 9002 §7.2: kInitialWindow = min(10·MDS, max(14720, 2·MDS)), kMinimumWindow =
    /// 2·MDS, and persistent congestion (§7.6.2) sets the window to kMinimumWindow; growth by
    /// the acknowledged bytes (§7.3).
    pub const RFC9002: WindowRules = WindowRules {
        initial_segments: 10,
        initial_floor_segments: 2,
        initial_cap_bytes: 14_720,
        minimum_segments: 2,
        loss_window_segments: 2,
        growth: Growth::PerByte,
        paced: false,
    };

    /// TCP: initial window min(10·SMSS, max(2·SMSS, 14600)) (RFC 6928 §2), ssthresh never below
    /// 2·SMSS after a loss (RFC 5681 §3.1 eq. 4), the loss window LW = 1 SMSS after an RTO
    /// (RFC 5681 §3.1), and growth per ACK (RFC 5681 §3.1).
    pub const RFC5681: WindowRules = WindowRules {
        initial_segments: 10,
        initial_floor_segments: 2,
        initial_cap_bytes: 14_600,
        minimum_segments: 2,
        loss_window_segments: 1,
        growth: Growth::PerAck,
        paced: false,
    };

    /// These rules with an initial window of exactly `segments` segments (at least 1), for a
    /// sender configured with a fixed IW instead of the RFC's formula (RFC 3390 and RFC 6928
    /// both let a stack choose a smaller one; some studies start from 1 segment, RFC 5681 §3.1's
    /// original IW). The minimum and loss windows stay the transport's.
    #[must_use]
    pub const fn with_initial_segments(self, segments: u64) -> WindowRules {
        let n = if segments == 0 { 1 } else { segments };
        WindowRules { initial_segments: n, initial_floor_segments: n, initial_cap_bytes: 0, ..self }
    }

    /// The initial congestion window in bytes for segments of `mds` bytes.
    #[inline]
    pub fn initial_window(&self, mds: u64) -> u64 {
        (self.initial_segments * mds).min((self.initial_floor_segments * mds).max(self.initial_cap_bytes))
    }

    /// The smallest window a loss or ECN reduction leaves, in bytes.
    #[inline]
    pub fn minimum_window(&self, mds: u64) -> u64 {
        self.minimum_segments * mds
    }

    /// The window after an RTO or persistent congestion, in bytes.
    #[inline]
    pub fn loss_window(&self, mds: u64) -> u64 {
        self.loss_window_segments * mds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc9002_preset() {
        let w = WindowRules::RFC9002;
        // min(12520, max(2504, 14720)) = 12520.
        assert_eq!(w.initial_window(1252), 12_520);
        assert_eq!(w.initial_window(1200), 12_000);
        // min(15000, max(3000, 14720)): capped at 14720.
        assert_eq!(w.initial_window(1500), 14_720);
        // min(80000, max(16000, 14720)): the 2·MDS floor wins over the cap.
        assert_eq!(w.initial_window(8000), 16_000);
        assert_eq!(w.minimum_window(1252), 2_504);
        // Persistent congestion collapses to kMinimumWindow.
        assert_eq!(w.loss_window(1252), 2_504);
    }

    #[test]
    fn rfc5681_preset() {
        let w = WindowRules::RFC5681;
        // RFC 6928: 10 segments of 1460 B are exactly 14600 B.
        assert_eq!(w.initial_window(1460), 14_600);
        // min(5360, max(1072, 14600)) = 5360: ten small segments.
        assert_eq!(w.initial_window(536), 5_360);
        // min(15000, max(3000, 14600)) = 14600: capped.
        assert_eq!(w.initial_window(1500), 14_600);
        // Jumbo frames: min(90000, max(18000, 14600)) = 18000 (two segments).
        assert_eq!(w.initial_window(9000), 18_000);
        assert_eq!(w.minimum_window(1460), 2_920);
        // RFC 5681 §3.1: LW = 1 SMSS after an RTO.
        assert_eq!(w.loss_window(1460), 1_460);
    }

    #[test]
    fn a_fixed_initial_window_is_exactly_that_many_segments() {
        for base in [WindowRules::RFC9002, WindowRules::RFC5681] {
            let one = base.with_initial_segments(1);
            assert_eq!(one.initial_window(1201), 1_201);
            // No 14720 B cap and no 2-segment floor: 40 segments of 1500 B are 60 000 B.
            assert_eq!(base.with_initial_segments(40).initial_window(1500), 60_000);
            // 0 is read as 1 (the scenario rejects it before it gets here).
            assert_eq!(base.with_initial_segments(0).initial_window(1180), 1_180);
            // Only the initial window changes.
            assert_eq!(one.minimum_window(1460), base.minimum_window(1460));
            assert_eq!(one.loss_window(1460), base.loss_window(1460));
        }
    }
}
