//! Encoding a connection (postcard) to keep it compact while idle, and what decides when that is
//! possible: the simulator stores quiet connections encoded and decodes them on their next event.

use std::sync::Arc;

use super::connection::Connection;
use super::QuicConfig;

impl Connection {
    /// Nothing is going on (no bytes in flight, no stream data waiting to be sent, no event for
    /// the application) and the connection can be encoded (`can_park`). Decides when to keep the
    /// connection encoded (`encode`); a timer may still be set (a delayed ACK, the ACK-only
    /// packets' expiry).
    #[inline]
    pub fn is_quiet(&self) -> bool {
        self.recovery.bytes_in_flight == 0
            && self.queued_bytes == 0
            && self.event.is_none()
            && self.can_park()
    }

    /// The connection can be encoded (`encode`): false when its congestion controller was made
    /// at run time (a plugin), whose state serde cannot see, or while it is traced.
    #[inline]
    pub fn can_park(&self) -> bool {
        self.recovery.cc.can_park() && self.rare.get().is_none_or(|r| r.trace.is_none() && r.mp.is_none())
    }

    /// Appends the connection's whole state to `out` in a compact encoding (postcard: integers
    /// as varints, absent options as one byte), for keeping an idle connection in a few hundred
    /// bytes instead of its ~1-2 kB of live structures. The configuration is not included: it is
    /// shared, and [`Connection::decode`] takes it back. Decoding gives the connection back bit
    /// for bit: it behaves exactly as if it had never been encoded. Only for a connection that
    /// [`can_park`](Connection::can_park) (panics otherwise).
    pub fn encode(&self, out: &mut Vec<u8>) {
        assert!(self.can_park(), "a connection with a run-time congestion controller cannot be encoded");
        quicksim_engine::compact::encode_into(self, out);
    }

    /// The connection encoded at the start of `bytes` by [`Connection::encode`], with the
    /// configuration it was created with, and the bytes after it.
    pub fn decode(bytes: &[u8], cfg: Arc<QuicConfig>) -> Result<(Connection, &[u8]), String> {
        let (mut c, rest): (Connection, &[u8]) =
            postcard::take_from_bytes(bytes).map_err(|e| format!("encoded connection: {e}"))?;
        c.cfg = cfg;
        Ok((c, rest))
    }
}
