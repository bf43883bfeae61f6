//! What a TCP connection sends: SYN and SYN-ACK, retransmissions (RFC 6675 NextSeg rule 1),
//! new data and FIN, zero-window probes, pure ACKs. Every non-SYN segment carries the current
//! ACK, window, SACK blocks and timestamps, so any segment satisfies an owed ACK.
//!
//! New data goes out when the congestion window (`Sender::window_allows`), the peer's window,
//! sender silly-window avoidance (RFC 9293 §3.8.6.2.1), Nagle (if on) and the pacer allow.
//! A lost segment waiting for retransmission blocks new data (RFC 6675 §4 NextSeg order).

use quicksim_engine::SimTime;

use super::accecn;
use super::config::TlsVersion;
use super::connection::{Connection, State};
use super::sack::FIN_SEG;
use super::segment::{max_sack_blocks, sack_option_len, SackBlocks, SynOptions, TcpSegment, Timestamps};
use super::segment::{ACK, CWR, ECE, FIN, RST, SYN};
use crate::endpoint::{EcnCodepoint, Role, WirePacket};

/// The data segment chosen.
enum Pick {
    Retransmit { seq: u64, len: u64, fin: bool },
    New { len: u64, fin: bool },
}

impl Connection {
    /// The next segment to send now, if any. Call until None after every input.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<TcpSegment> {
        let mut seg = TcpSegment::blank();
        self.poll_transmit_into(now, &mut seg).then_some(seg)
    }

    /// `poll_transmit` written over `out`, a spent segment (every field is set): whether a
    /// segment was written; `out` is untouched if not. The run loop writes over its pool slot,
    /// so a segment (~180 B with its inline SACK blocks) is not moved from here to the caller
    /// and again into the slot.
    pub fn poll_transmit_into(&mut self, now: SimTime, out: &mut TcpSegment) -> bool {
        self.advance(now);
        match self.state {
            State::Listen => return false,
            State::SynSent | State::SynReceived => {
                if !self.syn_due {
                    return false;
                }
                *out = self.build_syn(now); // once or twice per connection: by value
                return true;
            }
            State::Closed => {
                if let Some((seq, ack)) = self.rst_due.take() {
                    self.write_rst(now, seq, ack, out);
                    return true;
                }
                // Answer a retransmitted FIN (TIME-WAIT's job).
                if self.tcb_gone || !self.rx.ack_now {
                    return false;
                }
                self.write_bare(now, false, out);
                return true;
            }
            State::Established => {}
        }
        if let Some((ack, ace)) = self.prior_ack.take() {
            self.write_prior_ack(now, ack, ace, out);
            return true;
        }
        if self.next_data(now, out) {
            return true;
        }
        if self.probe_due {
            self.probe_due = false;
            self.stats.zero_window_probes += 1;
            self.write_bare(now, true, out);
            return true;
        }
        if self.rx.ack_due(now) {
            self.stats.pure_acks_sent += 1;
            self.write_bare(now, false, out);
            return true;
        }
        false
    }

    /// SYN (client) or SYN-ACK (server), with the options this end offers or accepts.
    fn build_syn(&mut self, now: SimTime) -> TcpSegment {
        self.syn_due = false;
        self.syns_sent += 1;
        if self.syns_sent > 1 {
            self.stats.syn_retransmits += 1;
        } else {
            self.syn_time = now;
        }
        let client = self.role == Role::Client;
        let cfg = &self.cfg;
        // The server offers only what the client's SYN offered (RFC 7323 §1.3, RFC 2018 §2).
        let ts = if client { cfg.timestamps } else { self.ts_on };
        let sack_permitted = if client { cfg.sack } else { self.sack_on };
        let scaling = if client { cfg.window_scaling } else { self.ws_on };
        let opts = SynOptions {
            mss: cfg.local_mss() as u16,
            wscale: scaling.then(|| self.local_wscale()),
            sack_permitted,
        };
        let ecr = if client { SimTime::ZERO } else { self.rx.ts_recent };
        let window = self.rx.window(true, self.tx.smss);
        let mut seg = TcpSegment {
            flags: SYN,
            window,
            ts: ts.then_some(Timestamps { val: now, ecr }),
            syn_opts: Some(opts),
            ..TcpSegment::blank()
        };
        // RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR, the SYN-ACK that agrees ECE
        // alone; RFC 9768 §3.1.1: an AccECN SYN AE, CWR and ECE, its SYN-ACK the echo of the
        // SYN's IP-ECN field. Both go out Not-ECT.
        if client {
            seg.set_ace(accecn::syn_bits(self.ecn_mode()));
        } else if let Some(a) = self.tx.accecn.as_deref() {
            seg.set_ace(a.synack);
        } else if self.ecn_on {
            seg.flags |= ECE;
        }
        if !client {
            seg.flags |= ACK;
            seg.ack = self.rx.rcv_nxt;
            self.rx.on_ack_sent();
        }
        // RFC 6298 §2.1/§5.5: 1 s, doubled per timeout.
        self.rto_at = Some(now + self.rto_value());
        self.count_sent(seg.size_bytes());
        seg
    }

    /// The data segment to send now, if any, written over `out` (untouched if none).
    fn next_data(&mut self, now: SimTime, out: &mut TcpSegment) -> bool {
        self.pacing_blocked = false;
        let (blocks, max_payload) = if self.sack_on {
            let blocks = self.rx.sack_blocks(max_sack_blocks(self.ts_on));
            let option = if blocks.is_empty() { 0 } else { sack_option_len(blocks.len()) };
            (blocks, self.tx.smss - option)
        } else {
            (SackBlocks::new(), self.tx.smss)
        };
        // A tail loss probe due goes first, regardless of the congestion window (RFC 8985 §7.3).
        let probe = match self.tx.rack.as_deref().is_some_and(|r| r.tlp_due) {
            true => self.pick_probe(max_payload),
            false => None,
        };
        if let (None, Some(r)) = (&probe, self.tx.rack.as_deref_mut()) {
            r.tlp_due = false; // nothing to probe with
        }
        let is_probe = probe.is_some();
        let pick = if let Some(p) = probe {
            p
        } else if let Some(s) = self.tx.board.next_lost() {
            // The FIN takes a sequence number but no room in the window, as for new data: a
            // full segment with the FIN must fit the one-segment window after a timeout (with
            // `s.len` it never did, and the connection stalled for good).
            if !(self.tx.force_one || self.tx.window_allows(s.payload(), false)) {
                self.tx.app_limited = false;
                return false;
            }
            Pick::Retransmit { seq: s.seq, len: s.payload(), fin: s.has(FIN_SEG) }
        } else {
            match self.pick_new(now, max_payload) {
                Some(p) => p,
                None => return false,
            }
        };
        // `next_send_time` only moves when segments are paced (`pacing`, or a controller that
        // asks for a rate).
        if now < self.tx.next_send_time {
            self.pacing_blocked = true;
            return false;
        }
        let new_data = matches!(pick, Pick::New { .. });
        self.build_data(now, pick, blocks, out);
        if is_probe {
            self.on_probe_sent(now, !new_data);
        } else if new_data {
            self.schedule_tlp(now, false);
        }
        true
    }

    /// The tail loss probe (RFC 8985 §7.3, Linux `tcp_send_loss_probe`): a new segment if the
    /// peer's window takes it whole, else the highest segment not SACKed again.
    fn pick_probe(&mut self, max_payload: u64) -> Option<Pick> {
        if self.fin_seq.is_none() {
            let off = self.tx.snd_nxt - 1;
            if self.app_ready {
                while self.tls_tx.stream_end - off < max_payload && self.tls_tx.frame(&self.cfg) {}
            }
            let avail = self.tls_tx.stream_end - off;
            let len = avail.min(max_payload);
            let fin = self.fin_queued && self.tls_tx.unframed == 0 && len == avail;
            let room = self.tx.wnd_right.saturating_sub(self.tx.snd_nxt);
            if (len > 0 || fin) && len <= room {
                return Some(Pick::New { len, fin });
            }
        }
        let s = self.tx.board.last_unsacked()?;
        Some(Pick::Retransmit { seq: s.seq, len: s.payload(), fin: s.has(FIN_SEG) })
    }

    /// A probe went out: its episode opens at SND.NXT, and the RTO restarts from now.
    fn on_probe_sent(&mut self, now: SimTime, retrans: bool) {
        if let Some(r) = self.tx.rack.as_deref_mut() {
            r.tlp_due = false;
            r.tlp_at = None;
            r.tlp_high_seq = Some(self.tx.snd_nxt);
            r.tlp_retrans = retrans;
        }
        self.stats.loss_probes += 1;
        self.rto_at = Some(now + self.rto_value());
    }

    /// New data (or the FIN) if every limit allows it.
    fn pick_new(&mut self, now: SimTime, max_payload: u64) -> Option<Pick> {
        if self.fin_seq.is_some() {
            return None; // the FIN is out: nothing new follows it
        }
        let off = self.tx.snd_nxt - 1;
        if self.app_ready {
            // Lay out records until a full segment's worth is available (a segment may span
            // records, as the socket buffer coalesces them).
            while self.tls_tx.stream_end - off < max_payload && self.tls_tx.frame(&self.cfg) {}
        }
        let avail = self.tls_tx.stream_end - off;
        let fin_pending = self.fin_queued && self.fin_seq.is_none() && self.tls_tx.unframed == 0;
        let room = self.tx.wnd_right.saturating_sub(self.tx.snd_nxt);
        let len = avail.min(max_payload).min(room);
        let fin = fin_pending && len == avail;
        if len == 0 && !fin {
            if avail > 0 {
                self.arm_persist(now);
            } else {
                self.tx.app_limited = true;
            }
            return None;
        }
        // RFC 9293 §3.8.6.2.1: a short segment only if it is all there is or the window is at
        // least half the largest one seen.
        if len < max_payload && len < avail && len < self.tx.max_snd_wnd / 2 {
            self.arm_persist(now);
            return None;
        }
        // RFC 9293 §3.7.4: Nagle holds a short segment while data is unacknowledged.
        if self.cfg.nagle && len < max_payload && !fin && !self.tx.board.is_empty() {
            self.tx.app_limited = true;
            return None;
        }
        // The FIN takes a sequence number but no room in the window (never more than SMSS
        // per segment, so a one-segment window can always send).
        if !self.tx.window_allows(len, true) {
            self.tx.app_limited = false;
            return None;
        }
        Some(Pick::New { len, fin })
    }

    /// Starts the persist timer when the peer's window blocks and nothing is in flight
    /// (RFC 9293 §3.8.6.1: else the ACKs of the outstanding data bring the window).
    fn arm_persist(&mut self, now: SimTime) {
        self.tx.app_limited = false;
        if self.tx.board.is_empty() && self.persist_at.is_none() && self.rto_at.is_none() {
            self.persist_at = Some(now + self.rto.base(&self.cfg, true));
        }
    }

    fn build_data(&mut self, now: SimTime, pick: Pick, blocks: SackBlocks, out: &mut TcpSegment) {
        let (seq, len, fin, retx) = match pick {
            Pick::Retransmit { seq, len, fin } => (seq, len, fin, true),
            Pick::New { len, fin } => (self.tx.snd_nxt, len, fin, false),
        };
        let off = seq - 1;
        out.reset(seq, len as u32, if fin { FIN } else { 0 }, blocks);
        if self.cfg.tls != TlsVersion::None {
            out.records = self.tls_tx.marks_in(off, off + len);
        }
        self.fill_ack(now, out);
        // RFC 3168 §6.1.2/§6.1.5: ECT(0) on new data only (never on retransmissions, pure ACKs
        // or a bare FIN, as Linux), and CWR on the first new data after a reduction. With
        // AccECN ECT(1) for an L4S controller, and no CWR (the bit is part of the ACE field).
        if let (true, Some(a)) = (self.ecn_on && !retx && len > 0, self.tx.accecn.as_deref()) {
            out.ecn = if a.ect1 { EcnCodepoint::Ect1 } else { EcnCodepoint::Ect0 };
        } else if self.ecn_on && !retx && len > 0 {
            out.ecn = EcnCodepoint::Ect0;
            if self.cwr_pending {
                self.cwr_pending = false;
                out.flags |= CWR;
            }
        }
        let rate = self.tx.delivery.on_sent(now, self.tx.in_flight(), len);
        if retx {
            self.tx.board.on_retransmit(seq, now, rate);
            self.stats.retransmitted_segments += 1;
            self.stats.retransmitted_bytes += len;
            if self.tx.state == super::CaState::Recovery {
                self.stats.fast_retransmits += 1;
            }
        } else {
            let seq_len = len + u64::from(fin);
            self.tx.board.push(seq, seq_len as u32, fin, now, rate);
            self.tx.snd_nxt += seq_len;
            if fin {
                self.fin_seq = Some(seq + len);
            }
        }
        self.stats.data_bytes_sent += len;
        let app_limited = self.tls_tx.stream_end == self.tx.snd_nxt - 1 && self.tls_tx.unframed == 0;
        let cx = self.tx.cc_ctx(&self.rto.rtt, now);
        self.tx.on_sent(&cx, now, len, app_limited);
        // RFC 6298 §5.1: start the timer if it is not running.
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rto_value());
        }
        self.persist_at = None;
        self.persist_backoff = 0;
        let size = out.size_bytes();
        // A controller's rate is always honoured (BBR paces by design); Linux's default rate
        // only with `pacing`.
        let rate = if self.cfg.pacing {
            self.tx.pacing_rate(&cx, self.rto.rtt.has_sample())
        } else {
            quicksim_cc::CongestionController::pacing_rate(&self.tx.cc, &cx).filter(|r| r.bits_per_s > 0)
        };
        if let Some(rate) = rate {
            self.tx.next_send_time = self.tx.next_send_time.max(now) + rate.tx_time(size);
        }
        self.count_sent(size);
    }

    /// A segment without data: a pure ACK, or (`probe`) a zero-window probe with the sequence
    /// number SND.UNA − 1, which the receiver must answer (Linux `tcp_xmit_probe_skb`).
    /// Written over `out` (every field).
    fn write_bare(&mut self, now: SimTime, probe: bool, out: &mut TcpSegment) {
        let blocks =
            if self.sack_on { self.rx.sack_blocks(max_sack_blocks(self.ts_on)) } else { SackBlocks::new() };
        let seq = if probe { self.tx.snd_una - 1 } else { self.tx.snd_nxt };
        out.reset(seq, 0, 0, blocks);
        self.fill_ack(now, out);
        self.count_sent(out.size_bytes());
    }

    /// The ACK of the segments before a change of CE state (`Connection::prior_ack`): ACK
    /// number `ack` and ACE field `ace` as they were then; it settles no owed ACK (the changing
    /// segment's is still owed). Linux `__tcp_send_ack(sk, prior_rcv_nxt)`.
    fn write_prior_ack(&mut self, now: SimTime, ack: u64, ace: accecn::Ace, out: &mut TcpSegment) {
        let blocks =
            if self.sack_on { self.rx.sack_blocks(max_sack_blocks(self.ts_on)) } else { SackBlocks::new() };
        out.reset(self.tx.snd_nxt, 0, ACK, blocks);
        out.set_ace(ace);
        out.ack = ack;
        out.window = self.rx.window(false, self.tx.smss);
        if self.ts_on {
            out.ts = Some(Timestamps { val: now, ecr: self.rx.ts_recent });
        }
        self.stats.pure_acks_sent += 1;
        self.stats.acks_sent += 1;
        self.count_sent(out.size_bytes());
    }

    /// A RST with sequence number `seq`, and ACK number `ack` if given (RFC 9293 §3.10.7.1).
    /// An abort's (it acknowledges) carries the timestamps option, as Linux's
    /// `tcp_send_active_reset`; the answer of a connection that is gone carries none, as
    /// Linux's `tcp_v4_send_reset` for a segment that finds no socket. Written over `out`.
    fn write_rst(&mut self, now: SimTime, seq: u64, ack: Option<u64>, out: &mut TcpSegment) {
        out.reset(seq, 0, RST, SackBlocks::new());
        if let Some(a) = ack {
            out.flags |= ACK;
            out.ack = a;
            if self.ts_on {
                out.ts = Some(Timestamps { val: now, ecr: self.rx.ts_recent });
            }
        }
        self.stats.rsts_sent += 1;
        self.count_sent(out.size_bytes());
    }

    /// ACK number, window, timestamps; settles an owed ACK.
    fn fill_ack(&mut self, now: SimTime, seg: &mut TcpSegment) {
        seg.flags |= ACK;
        if let Some(a) = self.tx.accecn.as_deref_mut() {
            seg.set_ace(a.ace_out()); // RFC 9768 §3.2.2: r.cep mod 8 on every ACK
        } else if self.ece_pending {
            seg.flags |= ECE; // RFC 3168 §6.1.3: every ACK until CWR arrives
        }
        seg.ack = self.rx.rcv_nxt;
        seg.window = self.rx.window(false, self.tx.smss);
        if self.ts_on {
            seg.ts = Some(Timestamps { val: now, ecr: self.rx.ts_recent });
        }
        if self.rx.ack_due(now) {
            self.stats.acks_sent += 1;
        }
        self.rx.on_ack_sent();
    }

    /// A segment of `size` bytes (`size_bytes`) goes out.
    fn count_sent(&mut self, size: u64) {
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += size;
    }
}
