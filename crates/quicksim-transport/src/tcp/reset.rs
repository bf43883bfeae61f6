//! Aborting a connection and RST segments: the application's ABORT (RFC 9293 §3.10.5), a RST
//! arriving (RFC 9293 §3.10.7.4 with RFC 5961 §3: only a RST at exactly RCV.NXT resets, one
//! elsewhere in the window gets a challenge ACK), and the answer of a connection that is gone
//! to the segments still arriving (RFC 9293 §3.10.7.1, the CLOSED state).

use quicksim_engine::SimTime;

use super::connection::{Connection, State};
use super::segment::TcpSegment;

impl Connection {
    /// The application aborts: unsent and unacknowledged data is dropped and the connection is
    /// gone at once. From SYN-RECEIVED or ESTABLISHED a RST goes out (sequence number SND.NXT,
    /// acknowledging RCV.NXT, as Linux's `tcp_send_active_reset`); from LISTEN or SYN-SENT
    /// nothing is sent (RFC 9293 §3.10.5: nothing of ours was acknowledged yet). After a
    /// graceful close it does nothing.
    pub fn abort(&mut self, now: SimTime) {
        self.advance(now);
        match self.state {
            State::Closed => return,
            State::Listen | State::SynSent => {}
            State::SynReceived | State::Established => {
                self.rst_due = Some((self.tx.snd_nxt, Some(self.rx.rcv_nxt)));
            }
        }
        self.drop_tcb(now);
    }

    /// A RST for a connection that exists (RFC 9293 §3.10.7.3, §3.10.7.4; RFC 5961 §3).
    pub(super) fn on_rst(&mut self, now: SimTime, seg: &TcpSegment) {
        let accept = match self.state {
            State::Listen | State::Closed => false,
            // Acceptable if it acknowledges the SYN (§3.10.7.3).
            State::SynSent => seg.has_ack() && seg.ack == 1,
            State::SynReceived | State::Established => {
                let nxt = self.rx.rcv_nxt;
                if seg.seq == nxt {
                    true
                } else {
                    // In the window but not exact: a challenge ACK, which the peer (if it did
                    // reset) answers with a RST at the sequence number it acknowledges.
                    if seg.seq > nxt && seg.seq < nxt + self.cfg.recv_buffer {
                        self.rx.ack_now = true;
                    }
                    false
                }
            }
        };
        if accept {
            self.drop_tcb(now);
        }
    }

    /// A segment for this connection after it was aborted or reset: a RST is discarded, any
    /// other segment is answered with a RST (RFC 9293 §3.10.7.1: sequence number SEG.ACK if it
    /// acknowledges, else 0 acknowledging the segment).
    pub(super) fn answer_without_tcb(&mut self, seg: &TcpSegment) {
        if seg.is_rst() {
            return;
        }
        self.rst_due = Some(if seg.has_ack() { (seg.ack, None) } else { (0, Some(seg.seq + seg.seq_len())) });
    }

    /// The connection is gone: its data, queued and in flight, is dropped, no timer runs, and
    /// the application learns that it closed (no error: an abort is the application's own
    /// choice, and the simulator's only source of RSTs is such an abort at the peer).
    fn drop_tcb(&mut self, now: SimTime) {
        self.tcb_gone = true;
        self.fin_queued = false;
        self.tls_tx.unframed = 0;
        // Forgotten, not delivered: no counter or controller hears of it.
        let end = self.tx.snd_nxt;
        self.tx.board.ack_to(end, |_| {});
        self.rx.delack_at = None;
        self.rx.ack_now = false;
        self.finish(now, None);
    }
}
