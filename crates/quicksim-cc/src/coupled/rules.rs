//! The coupled increase and decrease rules of LIA, OLIA and BALIA, as pure integer functions of
//! the paths' windows, smoothed RTTs and (OLIA) inter-loss byte counts.
//!
//! Every increase is returned in units of 1/cwnd_r bytes (the unit of NewReno's carry in its
//! RFC 9002 Appendix B.5 mode: `cwnd += (MDS·acked + carry) / cwnd`), so that a path adds
//! `⌊(increase + carry) / cwnd_r⌋` bytes and carries the remainder. With one path every rule's
//! increase is exactly `MDS·acked`, NewReno's numerator, and its decrease exactly NewReno's
//! halving: RFC 6356 goal 1 with n = 1, bit for bit.
//!
//! Sources: RFC 6356 for LIA; for OLIA and BALIA the rules as their papers state them (Khalili,
//! Gast, Popovic, Le Boudec, "MPTCP is not Pareto-optimal", CoNEXT 2012 / IEEE/ACM ToN 2013;
//! Peng, Walid, Hwang, Low, "Multipath TCP: analysis, design, and implementation", IEEE/ACM
//! ToN 2016, and draft-walid-mptcp-congestion-control), cross-checked against the authors'
//! own Linux code (multipath-tcp.org's `net/mptcp/mptcp_olia.c`, `mptcp_balia.c`). The papers'
//! full text was not at hand when this was written, so no equation numbers are cited for them.
//!
//! Arithmetic is in u128/i128 with windows in bytes and RTTs in nanoseconds: windows below 2^40
//! bytes and RTTs below 2^34 ns (17 s) keep every product below 2^127.

/// One path as a coupled rule sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathSample {
    /// Congestion window in bytes (QUIC has no fast-recovery inflation, so this is the real
    /// window RFC 6356 §3 asks cwnd_total to sum).
    pub cwnd: u64,
    /// Smoothed RTT in nanoseconds (RFC 6356 §3: "the smoothed round-trip time estimate used by
    /// TCP"), at least 1.
    pub srtt_ns: u64,
    /// OLIA's ℓ_r = max(ℓ1_r, ℓ2_r): bytes acknowledged between the last two losses, or since
    /// the last loss if more (Khalili et al.; Linux `mptcp_olia.c`'s loss1/loss2/loss3).
    pub interloss_bytes: u64,
}

fn u(x: u64) -> u128 {
    u128::from(x)
}

/// Σ_i cwnd_i · rtt_ref / rtt_i: the sum of the paths' rates measured in bytes per `rtt_ref`
/// (the denominator of RFC 6356 §4's alpha for packet-based stacks, before squaring). The
/// term of a path whose RTT is `rtt_ref` is its window exactly, so one path gives its own.
fn rate_sum(paths: &[PathSample], rtt_ref_ns: u64) -> u128 {
    paths.iter().map(|p| u(p.cwnd) * u(rtt_ref_ns) / u(p.srtt_ns)).sum()
}

/// LIA's alpha scaled by `alpha_scale`, in RFC 6356 §4's form for packet-based stacks:
///
/// ```text
///   alpha·alpha_scale = alpha_scale · cwnd_total · cwnd_max / (Σ_i rtt_max·cwnd_i/rtt_i)²
/// ```
///
/// where `max` is the path with the largest cwnd_i/rtt_i² (the numerator of §3 eq. 2; moving
/// rtt_max into the denominator is the RFC's remedy for the rounding of small terms, and the
/// RFC notes the formula serves byte-based stacks alike). Truncated, as §4.1's integer
/// arithmetic. One path: exactly `alpha_scale` (alpha = 1).
pub fn lia_alpha_scaled(paths: &[PathSample], alpha_scale: u64) -> u128 {
    let Some(best) = paths.iter().copied().reduce(|a, b| {
        // cwnd_b / rtt_b² > cwnd_a / rtt_a², cross-multiplied; ties keep the first.
        if u(b.cwnd) * u(a.srtt_ns) * u(a.srtt_ns) > u(a.cwnd) * u(b.srtt_ns) * u(b.srtt_ns) {
            b
        } else {
            a
        }
    }) else {
        return u(alpha_scale);
    };
    let total: u128 = paths.iter().map(|p| u(p.cwnd)).sum();
    let s = rate_sum(paths, best.srtt_ns);
    if s == 0 {
        return u(alpha_scale);
    }
    u(alpha_scale) * total * u(best.cwnd) / (s * s)
}

/// LIA's increase on path `r` for `acked_mss` = MSS_r · bytes_acked, RFC 6356 §4.1 eq. (3),
/// in units of 1/cwnd_r bytes:
///
/// ```text
///   min( alpha·bytes_acked·MSS_r / (alpha_scale·cwnd_total),  bytes_acked·MSS_r / cwnd_r )
/// ```
///
/// The second term (what TCP would add, §3 goal 2) wins ties, so one path is NewReno.
pub fn lia_increase(paths: &[PathSample], r: usize, alpha_scale: u64, acked_mss: u64) -> i128 {
    let alpha = lia_alpha_scaled(paths, alpha_scale);
    let total: u128 = paths.iter().map(|p| u(p.cwnd)).sum();
    let tcp = u(acked_mss);
    let coupled = u(acked_mss) * u(paths[r].cwnd) * alpha / (u(alpha_scale) * total).max(1);
    coupled.min(tcp) as i128
}

/// OLIA's α_r as a signed fraction (num, den) (Khalili et al.; `mptcp_get_epsilon` in Linux's
/// `mptcp_olia.c`), over the paths R_u in `paths`:
/// - M: the paths with the largest window; B: the paths with the largest ℓ_p/rtt_p² (the
///   presumed best paths: TCP's rate there goes as √ℓ/rtt);
/// - B\M non-empty: α_r = 1/(|R_u|·|B\M|) for r in B\M, −1/(|R_u|·|M|) for r in M;
/// - otherwise (and for every other path) α_r = 0.
///
/// α moves window from the largest windows to the best paths that do not yet have one.
pub fn olia_alpha(paths: &[PathSample], r: usize) -> (i64, u64) {
    let n = paths.len() as u64;
    let max_cwnd = paths.iter().map(|p| p.cwnd).max().unwrap_or(0);
    // ℓ_a / rtt_a² compared with ℓ_b / rtt_b², cross-multiplied.
    let better = |a: &PathSample, b: &PathSample| {
        (u(a.interloss_bytes) * u(b.srtt_ns) * u(b.srtt_ns))
            .cmp(&(u(b.interloss_bytes) * u(a.srtt_ns) * u(a.srtt_ns)))
    };
    let Some(best) = paths.iter().max_by(|a, b| better(a, b)) else {
        return (0, 1);
    };
    let in_b = |p: &PathSample| better(p, best).is_eq();
    let in_m = |p: &PathSample| p.cwnd == max_cwnd;
    let m = paths.iter().filter(|p| in_m(p)).count() as u64;
    let b_not_m = paths.iter().filter(|p| in_b(p) && !in_m(p)).count() as u64;
    let p = &paths[r];
    if b_not_m == 0 {
        (0, 1)
    } else if in_b(p) && !in_m(p) {
        (1, n * b_not_m)
    } else if in_m(p) {
        (-1, n * m)
    } else {
        (0, 1)
    }
}

/// OLIA's increase on path `r` per ACK, in units of 1/cwnd_r bytes. The paper's rule, in
/// packets per ACKed packet (Khalili et al., the OLIA algorithm):
///
/// ```text
///   w_r += (w_r/rtt_r²) / (Σ_p w_p/rtt_p)²  +  α_r / w_r
/// ```
///
/// In bytes, per `bytes_acked` with w = cwnd/MSS: cwnd_r += bytes_acked·MSS·(cwnd_r/s_r² +
/// α_r/cwnd_r) with s_r = Σ_p cwnd_p·rtt_r/rtt_p; times cwnd_r, that is
/// acked_mss·(cwnd_r²/s_r² + α_r). Negative when α_r < 0 outweighs the first term: the window
/// then shrinks (as the Linux implementation's `mptcp_snd_cwnd_cnt` going below zero).
pub fn olia_increase(paths: &[PathSample], r: usize, acked_mss: u64) -> i128 {
    let c = u(paths[r].cwnd);
    let s = rate_sum(paths, paths[r].srtt_ns).max(1);
    let first = (u(acked_mss) * c * c / (s * s)) as i128;
    let (num, den) = olia_alpha(paths, r);
    let second = i128::from(acked_mss) * i128::from(num) / i128::from(den);
    first + second
}

/// BALIA's α_r = max_k x_k / x_r with x_k = cwnd_k/rtt_k, as (max_k cwnd_k·rtt_r/rtt_k,
/// cwnd_r): both in bytes per rtt_r (Peng et al.; draft-walid-mptcp-congestion-control). At
/// least 1.
fn balia_alpha(paths: &[PathSample], r: usize) -> (u128, u128) {
    let rr = paths[r].srtt_ns;
    let m = paths.iter().map(|p| u(p.cwnd) * u(rr) / u(p.srtt_ns)).max().unwrap_or(0);
    (m.max(u(paths[r].cwnd)), u(paths[r].cwnd))
}

/// BALIA's increase on path `r` per ACK, in units of 1/cwnd_r bytes. The rule in packets per
/// ACKed packet (Peng et al.; draft-walid-mptcp-congestion-control; Linux `mptcp_balia.c`'s
/// `ai` is its inverse):
///
/// ```text
///   w_r += x_r / (τ_r·(Σ_k x_k)²) · (1 + α_r)/2 · (4 + α_r)/5
/// ```
///
/// With m = max_k cwnd_k·τ_r/τ_k and s_r = Σ_k cwnd_k·τ_r/τ_k (bytes per τ_r), α_r = m/cwnd_r
/// and the factor is (cwnd_r + m)(4·cwnd_r + m)/(10·cwnd_r²), so in bytes per bytes_acked,
/// times cwnd_r: acked_mss·(cwnd_r + m)(4·cwnd_r + m)/(10·s_r²). One path: m = s = cwnd, and
/// that is acked_mss.
pub fn balia_increase(paths: &[PathSample], r: usize, acked_mss: u64) -> i128 {
    let (m, c) = balia_alpha(paths, r);
    let s = rate_sum(paths, paths[r].srtt_ns).max(1);
    (u(acked_mss) * (c + m) * (4 * c + m) / (10 * s * s)) as i128
}

/// BALIA's window after a loss on path `r` (Peng et al.; draft-walid-mptcp-congestion-control;
/// Linux `mptcp_balia.c`'s `md`): w_r −= (w_r/2)·min(α_r, 1.5), i.e. w_r·(2 − min(α_r, 3/2))/2, truncated. α_r ≥ 1,
/// so a path halves when it is the fastest and goes to a quarter when another path is at
/// least 1.5 times as fast. One path: ⌊w/2⌋, NewReno's halving.
pub fn balia_reduced_window(paths: &[PathSample], r: usize) -> u64 {
    let (m, c) = balia_alpha(paths, r);
    let w = u(paths[r].cwnd);
    // min(α, 3/2) = min(m/c, 3/2): 2m ≥ 3c means the cap applies.
    let reduced = if 2 * m >= 3 * c { w / 4 } else { w * (2 * c - m) / (2 * c) };
    reduced as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path of `cwnd` bytes, `rtt_ms` ms and OLIA inter-loss count `l`.
    fn p(cwnd: u64, rtt_ms: u64, l: u64) -> PathSample {
        PathSample { cwnd, srtt_ns: rtt_ms * 1_000_000, interloss_bytes: l }
    }

    #[test]
    fn lia_alpha_two_paths_by_hand() {
        // cwnd 10 000 B at 10 ms and 20 000 B at 40 ms (RFC 6356 §3 eq. 2, times in ms):
        // cwnd/rtt² = 100 and 12.5, so path 1 is max; Σ cwnd/rtt = 1000 + 500 = 1500;
        // alpha = 30 000 · 100 / 1500² = 3·10^6 / 2.25·10^6 = 4/3.
        // §4.1 scaled by 512: ⌊682.67⌋ = 682. Eq. 4: s = 10000 + 20000·10/40 = 15000,
        // 512 · 30000 · 10000 / 15000² = 682.67 as well.
        let paths = [p(10_000, 10, 0), p(20_000, 40, 0)];
        assert_eq!(lia_alpha_scaled(&paths, 512), 682);
        // Without scaling alpha truncates to 1; a larger scale keeps more digits.
        assert_eq!(lia_alpha_scaled(&paths, 1), 1);
        assert_eq!(lia_alpha_scaled(&paths, 3 << 20), 4 << 20);
    }

    #[test]
    fn lia_alpha_three_paths_by_hand() {
        // Equal RTTs (20 ms), cwnd 10/20/30 kB: alpha = total·max/total² = 30000/60000 = 1/2.
        let equal = [p(10_000, 20, 0), p(20_000, 20, 0), p(30_000, 20, 0)];
        assert_eq!(lia_alpha_scaled(&equal, 512), 256);
        // cwnd 15/10/5 kB at 10/20/50 ms: cwnd/rtt² = 150, 25, 2 (path 1 max); Σ cwnd/rtt =
        // 1500 + 500 + 100 = 2100; alpha = 30000·150/2100² = 4.5e6/4.41e6 = 1.0204;
        // ·512 = 522.45 -> 522.
        let mixed = [p(15_000, 10, 0), p(10_000, 20, 0), p(5_000, 50, 0)];
        assert_eq!(lia_alpha_scaled(&mixed, 512), 522);
    }

    #[test]
    fn lia_increase_by_hand() {
        // The two-path case above, an ACK of 1000 B with MSS 1000 (acked·MSS = 10^6):
        // coupled term 682/512 · 10^6 / 30000 = 44.40 B, TCP term 10^6/20000 = 50 B on path 2
        // and 10^6/10000 = 100 B on path 1: both paths add the coupled 44.40 B.
        // In 1/cwnd units: path 2: ⌊10^6·20000·682 / (512·30000)⌋ = 888 020 (44.4 B);
        // path 1: ⌊10^6·10000·682/(512·30000)⌋ = 444 010 (44.4 B of 10 000).
        let paths = [p(10_000, 10, 0), p(20_000, 40, 0)];
        assert_eq!(lia_increase(&paths, 1, 512, 1_000_000), 888_020);
        assert_eq!(lia_increase(&paths, 0, 512, 1_000_000), 444_010);
        // Equal RTTs and windows 10 and 30 kB: alpha = 30/40 = 3/4 (384/512); the coupled
        // term 0.75·10^6/40000 = 18.75 B, below both TCP terms (100 and 33.3 B).
        let paths = [p(10_000, 20, 0), p(30_000, 20, 0)];
        assert_eq!(lia_alpha_scaled(&paths, 512), 384);
        assert_eq!(lia_increase(&paths, 0, 512, 1_000_000), 187_500); // 18.75 B · 10^4
                                                                      // 10 kB at 100 ms next to 1 kB at 10 ms: cwnd/rtt² = 1 and 10 (path 2 is max);
                                                                      // s = 10·10000/100 + 1000 = 2000; alpha = 11000·1000/2000² = 2.75 (1408/512).
                                                                      // Coupled term 2.75·10^6/11000 = 250 B. Path 1's TCP term 10^6/10000 = 100 B caps it
                                                                      // (goal 2: never more than TCP); path 2's is 1000 B, so it adds the coupled 250 B.
        let paths = [p(10_000, 100, 0), p(1_000, 10, 0)];
        assert_eq!(lia_alpha_scaled(&paths, 512), 1408); // 2.75 · 512
        assert_eq!(lia_increase(&paths, 0, 512, 1_000_000), 1_000_000); // TCP term, ·cwnd
        assert_eq!(lia_increase(&paths, 1, 512, 1_000_000), 250_000); // 250 B · 1000
    }

    #[test]
    fn olia_alpha_when_the_best_path_has_the_smallest_window() {
        // Equal RTTs (20 ms). Path 1: cwnd 10 kB, ℓ = 100 kB (rare losses: the best path);
        // path 2: cwnd 40 kB (M), ℓ = 50 kB. B = {1}, M = {2}, B\M = {1}, |R_u| = 2:
        // α_1 = 1/(2·1) = +1/2, α_2 = −1/(2·1) = −1/2.
        let paths = [p(10_000, 20, 100_000), p(40_000, 20, 50_000)];
        assert_eq!(olia_alpha(&paths, 0), (1, 2));
        assert_eq!(olia_alpha(&paths, 1), (-1, 2));
        // Increase per ACK of 1000 B at MSS 1000, s = 50 000 B:
        // path 1: 10^6·(10^4/2.5·10^9 + 0.5/10^4) = 10^6·5.4·10^-5 = 54 B (540 000 ·1/10^4);
        // path 2: 10^6·(4·10^4/2.5·10^9 − 0.5/(4·10^4)) = 10^6·3.5·10^-6 = 3.5 B (140 000).
        assert_eq!(olia_increase(&paths, 0, 1_000_000), 540_000);
        assert_eq!(olia_increase(&paths, 1, 1_000_000), 140_000);
        // Three paths, the best (ℓ/rtt² largest) is the smallest window: path 3 at 10 ms
        // with ℓ = 40 kB: ℓ/rtt² = 400 vs 100 kB/400 = 250 and 50 kB/400 = 125.
        let three = [p(30_000, 20, 100_000), p(30_000, 20, 50_000), p(5_000, 10, 40_000)];
        // M = {1, 2} (30 kB each), B\M = {3}: α_3 = 1/(3·1), α_1 = α_2 = −1/(3·2).
        assert_eq!(olia_alpha(&three, 2), (1, 3));
        assert_eq!(olia_alpha(&three, 0), (-1, 6));
        assert_eq!(olia_alpha(&three, 1), (-1, 6));
    }

    #[test]
    fn olia_alpha_is_zero_when_a_best_path_has_the_largest_window() {
        // The best path (ℓ) is also the largest window: B\M is empty, every α is 0, and the
        // increase is the first term alone (Σ α = 0 always).
        let paths = [p(40_000, 20, 100_000), p(10_000, 20, 50_000)];
        assert_eq!(olia_alpha(&paths, 0), (0, 1));
        assert_eq!(olia_alpha(&paths, 1), (0, 1));
        // 10^6 · 40000² / 50000² = 640 000 (16 B of 40 kB).
        assert_eq!(olia_increase(&paths, 0, 1_000_000), 640_000);
        // Before any loss every ℓ is 0, all paths tie in B, and B\M is the smaller windows.
        let fresh = [p(40_000, 20, 0), p(10_000, 20, 0)];
        assert_eq!(olia_alpha(&fresh, 1), (1, 2));
        assert_eq!(olia_alpha(&fresh, 0), (-1, 2));
    }

    #[test]
    fn balia_increase_and_decrease_by_hand() {
        // Two windows of 10 kB (10 packets of 1000 B) at 10 and 40 ms: x = 1 and 0.25 pkt/ms,
        // Σx = 1.25. Path 1: α = 1, factor (2/2)(5/5) = 1, Δw = 1/(10·1.5625) = 0.064 pkt =
        // 64 B per ACKed packet (640 000 in 1/10^4 units). Path 2: α = 4, factor (5/2)(8/5) = 4,
        // Δw = 0.25/(40·1.5625)·4 = 0.016 pkt = 16 B (160 000).
        let paths = [p(10_000, 10, 0), p(10_000, 40, 0)];
        assert_eq!(balia_increase(&paths, 0, 1_000_000), 640_000);
        assert_eq!(balia_increase(&paths, 1, 1_000_000), 160_000);
        // Loss: path 1 (α = 1) halves to 5000; path 2 (α = 4, capped at 1.5) loses
        // 10000/2·1.5 = 7500, leaving 2500.
        assert_eq!(balia_reduced_window(&paths, 0), 5_000);
        assert_eq!(balia_reduced_window(&paths, 1), 2_500);
        // Equal RTTs, 8 kB and 10 kB: α_1 = 10000/8000 = 1.25, so path 1 loses 4000·1.25 =
        // 5000 and keeps 3000; path 2 (α = 1) halves.
        let paths = [p(8_000, 10, 0), p(10_000, 10, 0)];
        assert_eq!(balia_reduced_window(&paths, 0), 3_000);
        assert_eq!(balia_reduced_window(&paths, 1), 5_000);
    }

    #[test]
    fn one_path_is_newreno_in_every_rule() {
        for (cwnd, rtt) in [(2_504, 1), (12_345, 37), (1 << 30, 3_000), (3, 100)] {
            let one = [p(cwnd, rtt, 777)];
            for acked_mss in [1, 1252 * 1252, 1252 * 65_000] {
                assert_eq!(lia_increase(&one, 0, 512, acked_mss), i128::from(acked_mss));
                assert_eq!(lia_increase(&one, 0, 1, acked_mss), i128::from(acked_mss));
                assert_eq!(olia_increase(&one, 0, acked_mss), i128::from(acked_mss));
                assert_eq!(balia_increase(&one, 0, acked_mss), i128::from(acked_mss));
            }
            assert_eq!(lia_alpha_scaled(&one, 512), 512);
            assert_eq!(olia_alpha(&one, 0), (0, 1));
            assert_eq!(balia_reduced_window(&one, 0), cwnd / 2);
        }
    }
}
