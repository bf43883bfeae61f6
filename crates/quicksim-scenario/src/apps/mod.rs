//! The applications on top of a transport flow, transport-neutral: what bytes a flow's client
//! hands its endpoint and when. Saturated (keeps the send buffer full), bulk (a number of bytes
//! as fast as possible, completion time recorded) and messages (a size every interval, INET's
//! generator). Saturated and bulk either fill the send buffer to exactly its limit or, with a
//! `write_size`, hand it whole writes of that size while it is below the limit (INET's generator
//! with no gap between messages). They talk to the transport only through [`Endpoint`]'s
//! `send_space`/`write`/`write_whole`.

use crate::schema::{QuicApp, SizeDist, TimeDist, TransportFlowCfg};
use crate::ScenarioError;
use quicksim_engine::{Rng, SimDuration, SimTime};
use quicksim_transport::Endpoint;
use serde::{Deserialize, Serialize};

/// A transport flow's application and stream count unless it names them.
pub(crate) const DEFAULT_APP: AppKind = AppKind::Saturated;
pub(crate) const DEFAULT_STREAMS: u32 = 1;

/// Which application a transport flow runs (the schema's `app`).
pub(crate) type AppKind = QuicApp;

/// A flow's application state. Serialized as part of a resting flow (`flows::park`).
#[derive(Serialize, Deserialize)]
pub(crate) struct App {
    pub kind: AppKind,
    /// Streams the data is spread over, round robin (the first one only for a one-stream
    /// transport such as TCP).
    pub streams: u32,
    pub next_stream: u32,
    /// Bulk: bytes the application has still to hand over, and all of them.
    pub bulk_left: u64,
    pub bulk_total: u64,
    /// Saturated/bulk: the size of each whole write (`Endpoint::write_whole`); None: fill the
    /// send buffer to its limit.
    pub write_size: Option<u64>,
    /// Bytes delivered in order to the receiving application.
    pub delivered: u64,
    /// Bulk: when the last byte was delivered.
    pub completion: Option<SimTime>,
    #[serde(with = "message_code")]
    pub message: Option<(SizeDist, TimeDist)>,
    /// The random stream of the message sizes and intervals; None when both are constant
    /// (nothing is ever drawn), so that a resting flow's encoding does not carry 32 B of random
    /// state (~38 B as varints, half of an idle message flow's application state).
    pub rng: Option<Rng>,
    /// Between the flow's start and stop.
    pub active: bool,
}

pub(crate) fn draw_size(d: &SizeDist, rng: &mut Rng) -> u64 {
    d.draw(rng)
}

pub(crate) fn draw_time(d: &TimeDist, rng: &mut Rng) -> SimDuration {
    d.draw(rng)
}

impl App {
    /// The application of transport flow `f` (at `path` in errors; `transport` names the flow's
    /// kind in them): `app` (default saturated), its size and interval for messages, its bytes
    /// for bulk, its streams.
    pub(crate) fn from_flow(
        f: &TransportFlowCfg,
        path: &str,
        transport: &str,
        rng: Rng,
        bytes: Option<u64>,
    ) -> Result<App, ScenarioError> {
        let err = |field: &str, msg: String| ScenarioError::new(format!("{path}.{field}"), msg);
        let kind = f.app.unwrap_or(DEFAULT_APP);
        let message = match kind {
            AppKind::Messages => {
                let s = f
                    .size
                    .clone()
                    .ok_or_else(|| err("size", "missing: message size for app = \"messages\"".into()))?;
                let iv = f.interval.clone().ok_or_else(|| {
                    err("interval", "missing: message interval for app = \"messages\"".into())
                })?;
                Some((s, iv))
            }
            _ => {
                for (field, set) in [("size", f.size.is_some()), ("interval", f.interval.is_some())] {
                    if set {
                        return Err(err(
                            field,
                            format!("does not apply to a saturated/bulk {transport} flow"),
                        ));
                    }
                }
                None
            }
        };
        let bulk = match (kind, bytes) {
            (AppKind::Bulk, Some(b)) if b > 0 => b,
            (AppKind::Bulk, _) => {
                return Err(err("bytes", "missing or 0: a bulk transfer needs `bytes`, e.g. \"10MB\"".into()))
            }
            (_, Some(_)) => return Err(err("bytes", "only applies to app = \"bulk\"".into())),
            _ => 0,
        };
        let write_size = match (kind, f.write_size) {
            (AppKind::Messages, Some(_)) => {
                return Err(err(
                    "write_size",
                    "does not apply to app = \"messages\" (its messages are `size`)".into(),
                ))
            }
            (_, Some(b)) if b.0 == 0 => return Err(err("write_size", "0 B: a write needs bytes".into())),
            (_, w) => w.map(|b| b.0),
        };
        let streams = f.streams.unwrap_or(DEFAULT_STREAMS);
        if streams == 0 {
            return Err(err("streams", "0: at least 1 stream".into()));
        }
        Ok(App {
            kind,
            streams,
            next_stream: 0,
            bulk_left: bulk,
            bulk_total: bulk,
            write_size,
            delivered: 0,
            completion: None,
            rng: message.as_ref().is_some_and(|(s, t)| !s.is_const() || !t.is_const()).then_some(rng),
            message,
            active: false,
        })
    }

    /// The next stream to write to, round robin.
    #[inline]
    fn next_stream_id<E: Endpoint>(&mut self) -> u64 {
        let s = E::app_stream_id(self.next_stream);
        self.next_stream = (self.next_stream + 1) % self.streams;
        s
    }

    /// Saturated and bulk applications hand the transport as much as its send buffer takes:
    /// up to its limit, or whole writes of `write_size` while it is below the limit. Returns the
    /// bytes handed over.
    pub(crate) fn refill<E: Endpoint>(&mut self, now: SimTime, conn: &mut E) -> u64 {
        if !self.active || self.message.is_some() {
            return 0;
        }
        let mut total = 0;
        loop {
            let mut space = conn.send_space();
            if self.kind == AppKind::Bulk {
                space = space.min(self.bulk_left);
            }
            if space == 0 {
                break;
            }
            let acc = if let Some(w) = self.write_size {
                // Whole writes, each to the next stream (INET: one generator per stream).
                let n = if self.kind == AppKind::Bulk { w.min(self.bulk_left) } else { w };
                let s = self.next_stream_id::<E>();
                conn.write_whole(now, s, n)
            } else {
                // Spread over the streams in chunks, round robin.
                let chunk = if self.streams > 1 { space.min(16_384) } else { space };
                let s = self.next_stream_id::<E>();
                conn.write(now, s, chunk)
            };
            if acc == 0 {
                break;
            }
            total += acc;
            if self.kind == AppKind::Bulk {
                self.bulk_left -= acc;
            }
        }
        total
    }

    /// A message application's next message: the gap to the one after it and the bytes handed
    /// over now (None when the message does not fit the send buffer: it is discarded, as INET's
    /// generator does). None when the application is not a message one or has stopped.
    pub(crate) fn message<E: Endpoint>(
        &mut self,
        now: SimTime,
        conn: Option<&mut E>,
    ) -> Option<(SimDuration, Option<u64>)> {
        if !self.active {
            return None;
        }
        let (size, interval) = self.message.clone()?;
        let (n, gap) = match (&size, &interval, &mut self.rng) {
            (&SizeDist::Const(n), &TimeDist::Const(gap), _) => (n, gap),
            (_, _, Some(rng)) => (draw_size(&size, rng), draw_time(&interval, rng)),
            (_, _, None) => unreachable!("a random size or interval has its stream (`from_flow`)"),
        };
        let mut acc = None;
        if let Some(c) = conn {
            if c.send_space() >= n {
                let s = self.next_stream_id::<E>();
                acc = Some(c.write(now, s, n));
            }
        }
        Some((gap, acc))
    }

    /// `len` bytes were delivered in order to the receiving application.
    #[inline]
    pub(crate) fn delivered(&mut self, now: SimTime, len: u64) {
        self.delivered += len;
        if self.kind == AppKind::Bulk && self.completion.is_none() && self.delivered >= self.bulk_total {
            self.completion = Some(now);
        }
    }
}

/// A message application's size and interval distributions as plain numbers (kind, a, b) for
/// the encoded state: the scenario types' own serde form is the scenario file's.
mod message_code {
    use crate::schema::{SizeDist, TimeDist};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    type Code = Option<((u8, u64, u64), (u8, u64, u64))>;

    pub fn serialize<S: Serializer>(m: &Option<(SizeDist, TimeDist)>, s: S) -> Result<S::Ok, S::Error> {
        let code: Code = m.as_ref().map(|(size, time)| (size.code(), time.code()));
        code.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<(SizeDist, TimeDist)>, D::Error> {
        let code = Code::deserialize(d)?;
        Ok(code.map(|(size, time)| (SizeDist::from_code(size), TimeDist::from_code(time))))
    }
}
