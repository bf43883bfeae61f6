//! When a TCP connection is quiet, and its compact encoding (postcard): the simulator stores
//! quiet connections encoded and decodes them on their next event, as it does QUIC's
//! (`quic/park.rs`). Kept apart from the protocol logic: nothing here changes what TCP does.

use std::sync::Arc;

use super::config::TcpConfig;
use super::connection::{Connection, State};

impl Connection {
    /// Nothing is going on and the connection can be encoded (`can_park`): no segment in
    /// flight (data, FIN, or a SYN or SYN-ACK waiting for its answer), nothing in the send
    /// buffer (unsent or unacknowledged), no FIN still to send, no segment owed without a timer
    /// (an immediate ACK, a SYN to repeat, a window probe), no out-of-order data waiting for a
    /// hole to fill, no event for the application. Decides when to keep the connection encoded
    /// (`encode`). A timer may still be set: a delayed ACK (the timer sends it; the flow wakes
    /// for it) or a persist timer; QUIC allows the same (`quic::Connection::is_quiet`).
    ///
    /// Called after every event of a flow, so the cheap test that fails during a transfer (the
    /// retransmission queue) comes first.
    #[inline]
    pub fn is_quiet(&self) -> bool {
        self.tx.board.is_empty()
            && self.events.is_empty()
            && !(self.rx.ack_now || self.syn_due || self.probe_due || self.rst_due.is_some())
            && match self.state {
                // A SYN or SYN-ACK is out and its answer awaited: in flight.
                State::SynSent | State::SynReceived => false,
                State::Listen | State::Closed => true,
                State::Established => {
                    self.queued_bytes() == 0
                        && !(self.fin_queued && self.fin_seq.is_none())
                        && !self.rx.holds_out_of_order()
                }
            }
            && self.can_park()
    }

    /// The connection can be encoded (`encode`): false when its congestion controller was made
    /// at run time (a plugin), whose state serde cannot see.
    #[inline]
    pub fn can_park(&self) -> bool {
        self.tx.cc.can_park()
    }

    /// Appends the connection's whole state to `out` in a compact encoding (postcard: integers
    /// as varints, absent options as one byte): an idle connection in a few hundred bytes
    /// instead of its live structures with their heap parts. The configuration is not
    /// included: it is shared, and [`Connection::decode`] takes it back. Decoding gives the
    /// connection back bit for bit. Only for a connection that
    /// [`can_park`](Connection::can_park) (panics otherwise).
    pub fn encode(&self, out: &mut Vec<u8>) {
        assert!(self.can_park(), "a connection with a run-time congestion controller cannot be encoded");
        quicksim_engine::compact::encode_into(self, out);
    }

    /// The connection encoded at the start of `bytes` by [`Connection::encode`], with the
    /// configuration it was created with, and the bytes after it.
    pub fn decode(bytes: &[u8], cfg: Arc<TcpConfig>) -> Result<(Connection, &[u8]), String> {
        let (mut c, rest): (Connection, &[u8]) =
            postcard::take_from_bytes(bytes).map_err(|e| format!("encoded TCP connection: {e}"))?;
        c.cfg = cfg;
        Ok((c, rest))
    }
}
