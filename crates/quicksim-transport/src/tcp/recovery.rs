//! The connection's side of loss detection and recovery: the ACK fields of an arriving segment
//! (what the sender's state machine in `sender.rs` makes of them, the RTT sample, the timers
//! they restart) and the timers (retransmission timeout, persist, delayed ACK) with what they
//! trigger. Moved out of `connection.rs`, which keeps the state, the handshake and the input.

use quicksim_engine::{SimDuration, SimTime};

use super::accecn;
use super::connection::{Connection, State};
use super::rack::Rack;
use super::segment::{TcpSegment, ECE};
use super::sender::CaState;

impl Connection {
    /// When `handle_timeout` wants to run next.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        // The earliest of the timers set.
        let earlier = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mut t = earlier(earlier(self.rto_at, self.persist_at), self.rx.delack_at);
        if let Some(r) = self.tx.rack.as_deref() {
            t = earlier(t, earlier(r.tlp_at, r.reo_at));
        }
        if self.pacing_blocked && self.tx.next_send_time > self.last_now {
            t = earlier(t, Some(self.tx.next_send_time));
        }
        t.map(|t| t.max(self.last_now))
    }

    // ----- ACKs -----

    /// The ACK fields of an arriving segment.
    pub(super) fn on_ack(&mut self, now: SimTime, seg: &TcpSegment) {
        let cx = self.tx.cc_ctx(&self.rto.rtt, now);
        let blocks: &[(u64, u64)] = if self.sack_on { &seg.sack } else { &[] };
        let o = self.tx.on_ack(&self.cfg, &cx, now, seg.seq, seg.ack, seg.len as u64, seg.window, blocks);
        if o.dupack {
            self.stats.dup_acks += 1;
        }
        self.stats.segments_acked += o.delivered_segs;
        // AccECN with a classic controller: marks the ACE field reported are answered as an
        // ECE is (RFC 9768 §3.2.2.5: the sender's reaction is its controller's).
        // Held until an ACK that delivers data (the send time the reaction is judged by).
        if let Some(a) = self.tx.accecn.as_deref_mut() {
            self.stats.ce_reported = a.s_cep - accecn::CEP_INIT;
            if let (false, true, Some(sent)) = (a.scalable, a.ce_pending > 0, o.newest_sent) {
                a.ce_pending = 0;
                if self.tx.on_ece(&cx, now, sent) {
                    self.stats.ecn_reductions += 1;
                }
            }
        }
        // RFC 3168 §6.1.2: ECE on an ACK is a congestion signal, answered once per window
        // (with AccECN the bit is part of the ACE field, read by the sender above).
        if self.ecn_on && seg.flags & ECE != 0 && self.tx.accecn.is_none() {
            self.stats.ece_received += 1;
            if let Some(sent) = o.newest_sent {
                if self.tx.on_ece(&cx, now, sent) {
                    self.stats.ecn_reductions += 1;
                    self.cwr_pending = true;
                }
            }
        }
        // A recovery that follows one at once (Linux's recovery, `Sender::on_ack`) counts too.
        if o.entered_recovery {
            if self.sack_on {
                self.stats.sack_recoveries += 1;
            } else {
                self.stats.reno_recoveries += 1;
            }
        }
        if o.advanced {
            // RTT: the timestamp echo (RFC 7323 §4: unambiguous even for retransmissions),
            // else Karn's rule (RFC 6298 §3).
            let sample = match seg.ts.filter(|_| self.ts_on) {
                Some(ts) => Some(now - ts.ecr),
                None => o.karn_sample,
            };
            if let Some(r) = sample {
                self.rto.on_sample(&self.cfg, r, self.tx.snd_una, self.tx.snd_nxt);
            }
            // RFC 6298 §5.2/5.3: stop the timer when all is acknowledged, else restart it.
            self.rto_at = if self.tx.board.is_empty() { None } else { Some(now + self.rto_value()) };
            // RFC 8985 §7.2: the probe timer restarts too (Linux `tcp_set_xmit_timer`).
            self.schedule_tlp(now, true);
            let acked_stream = (self.tx.snd_una - 1).min(self.tls_tx.stream_end);
            self.tls_tx.on_acked(acked_stream);
            self.check_low_water();
        }
        // A window that opened ends the persist state (RFC 9293 §3.8.6.1).
        if self.persist_at.is_some() && self.tx.wnd_right > self.tx.snd_nxt {
            self.persist_at = None;
            self.persist_backoff = 0;
        }
    }

    // ----- timers -----

    /// Called when the time from `poll_timeout` has come.
    pub fn handle_timeout(&mut self, now: SimTime) {
        self.advance(now);
        // RACK-TLP's timers first: Linux's share one timer with the RTO, which a probe
        // restarts (`tcp_send_loss_probe`), and the PTO is never later than the RTO.
        if self.tx.rack.is_some() {
            self.on_rack_timers(now);
        }
        if self.rto_at.is_some_and(|t| t <= now) {
            self.rto_at = None;
            self.on_rto(now);
        }
        if self.persist_at.is_some_and(|t| t <= now) {
            // RFC 9293 §3.8.6.1: probe the zero window, back off like the RTO.
            self.probe_due = true;
            // Linux `tcp_probe_timer`: the next probe after RTO · 2^probes.
            self.persist_backoff = (self.persist_backoff + 1).min(16);
            let d = self.rto.base(&self.cfg, true).saturating_mul(1 << self.persist_backoff);
            self.persist_at = Some(now + d.min(self.cfg.max_rto));
        }
        if self.rx.delack_at.is_some_and(|t| t <= now) {
            self.rx.delack_at = None;
            self.rx.ack_now = true;
            self.stats.delack_timer_fires += 1;
            if let Some(l) = self.rx.linux.as_mut() {
                l.on_timer();
            }
        }
    }

    /// RACK's reordering timer and the loss probe timer (`rack.rs`).
    fn on_rack_timers(&mut self, now: SimTime) {
        let Some(r) = self.tx.rack.as_deref_mut() else { return };
        if r.tlp_at.is_some_and(|t| t <= now) {
            r.tlp_at = None;
            // At most one probe per episode (Linux `tcp_send_loss_probe`); else the RTO runs.
            r.tlp_due = r.tlp_high_seq.is_none();
        }
        if r.reo_at.is_some_and(|t| t <= now) {
            r.reo_at = None;
            let cx = self.tx.cc_ctx(&self.rto.rtt, now);
            if self.tx.on_reo_timeout(&self.cfg, &cx, now) {
                self.stats.sack_recoveries += 1;
            }
        }
    }

    /// (Re)arms the loss probe timer (RFC 8985 §7.2, Linux `tcp_schedule_loss_probe`) while
    /// data is out and nothing is being recovered: after an ACK that advanced (`on_ack`: capped
    /// by the RTO) or after new data (capped by the time left until the first segment's RTO;
    /// not at all once that has passed, as Linux).
    pub(super) fn schedule_tlp(&mut self, now: SimTime, on_ack: bool) {
        if self.tx.rack.is_none() {
            return;
        }
        let armed = self.state == State::Established
            && matches!(self.tx.state, CaState::Open | CaState::Cwr)
            && !self.tx.board.is_empty();
        let at = armed.then(|| {
            let rto = self.rto_value();
            let left = match (on_ack, self.tx.board.first()) {
                (false, Some(s)) => (s.sent + rto).saturating_sub(now),
                _ => rto,
            };
            let left = if left.ps() == 0 { SimDuration::MAX } else { left };
            let srtt = self.rto.rtt.has_sample().then(|| self.rto.rtt.smoothed());
            now + Rack::pto(srtt, self.tx.board.len() == 1, self.cfg.min_rto, left)
        });
        if let Some(r) = self.tx.rack.as_deref_mut() {
            r.tlp_at = at;
            if self.tx.board.is_empty() {
                r.stop();
            }
        }
    }

    fn on_rto(&mut self, now: SimTime) {
        match self.state {
            State::SynSent | State::SynReceived => {
                // RFC 6298 §5.5 for the SYN too (1 s, 2 s, 4 s, ...), up to `syn_retries`.
                if self.syns_sent > self.cfg.syn_retries {
                    self.finish(now, Some("connection timed out: no answer to the SYN".into()));
                    return;
                }
                self.stats.syn_timeouts += 1;
                self.rto.on_timeout();
                self.syn_due = true;
            }
            State::Established if !self.tx.board.is_empty() => {
                if self.rto.backoff >= self.cfg.max_retries {
                    self.finish(now, Some("connection timed out: too many retransmissions".into()));
                    return;
                }
                self.stats.rtos += 1;
                let cx = self.tx.cc_ctx(&self.rto.rtt, now);
                self.tx.on_rto(&cx, now);
                self.rto.on_timeout();
                // RFC 6298 §5.6: the timer restarts with the doubled value.
                self.rto_at = Some(now + self.rto_value());
            }
            _ => {}
        }
    }
}
