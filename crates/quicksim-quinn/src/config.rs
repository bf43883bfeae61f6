//! The `[quinn]` table of a scenario (defaults for every quinn flow, a flow's own `quinn` table
//! over it): the settings quinn-proto exposes, and how they become quinn-proto's configuration
//! for one flow (TLS from the flow's seed, MTU from the path).

use crate::tls::{self, TlsKeyLog};
use quicksim_engine::{Rng, SimDuration};
use quicksim_transport::units;
use quinn_proto::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
use quinn_proto::{
    AckFrequencyConfig, ClientConfig, ConnectionId, ConnectionIdGenerator, EndpointConfig, IdleTimeout,
    ServerConfig, TransportConfig, VarInt,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// quinn's congestion controllers (its own code, not quicksim's registry).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QuinnCc {
    /// quinn-proto's NewReno.
    NewReno,
    /// quinn's default.
    #[default]
    Cubic,
    /// quinn-proto's BBR (v1-like).
    Bbr,
}

/// A quinn flow's settings (the one definition of each: the scenario's `[quinn]` table and a
/// flow's own `quinn` table deserialize into it; the JSON Schema and the scenario reference are
/// generated from it). Unset fields keep quinn-proto's defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct QuinnConfig {
    /// TLS 1.3 packet protection (rustls + ring); false: the null protection (same sizes).
    pub encryption: bool,
    /// quinn-proto's own congestion controller: "newreno", "cubic" (quinn's default) or "bbr".
    pub cc: QuinnCc,
    /// Initial congestion window in bytes; default RFC 9002 §7.2's min(10 x payload,
    /// max(14720, 2 x payload)) with the pinned UDP payload (see `transport`).
    #[serde(with = "units::opt_bytes", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Size>")]
    pub initial_window: Option<u64>,
    #[serde(with = "units::opt_duration", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Duration>")]
    /// The RTT assumed before the first sample (quinn: 333 ms, RFC 9002 §6.2.2).
    pub initial_rtt: Option<SimDuration>,
    /// Ask the peer (ACK_FREQUENCY) to ACK when more than this many ack-eliciting packets are
    /// unacknowledged (0: every packet; quinn's receiver default is 1, every second packet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_eliciting_threshold: Option<u64>,
    /// Ask the peer to delay ACKs at most this long (with `ack_eliciting_threshold`).
    #[serde(with = "units::opt_duration", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Duration>")]
    pub ack_max_delay: Option<SimDuration>,
    /// Ask the peer to ACK at once when a packet is this far out of order (with
    /// `ack_eliciting_threshold`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_reordering_threshold: Option<u64>,
    #[serde(with = "units::opt_bytes", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Size>")]
    /// Flow-control credit per stream (quinn's default: 1.25 MB).
    pub stream_receive_window: Option<u64>,
    #[serde(with = "units::opt_bytes", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Size>")]
    /// Flow-control credit of the connection (quinn's default: unlimited, 2^62 − 1).
    pub receive_window: Option<u64>,
    #[serde(with = "units::opt_bytes", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Size>")]
    /// Most unacknowledged data in flight across all streams (quinn's default: 10 MB).
    pub send_window: Option<u64>,
    /// Idle timeout (quinn: 30 s); "0s" disables it.
    #[serde(with = "units::opt_duration", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Duration>")]
    pub max_idle_timeout: Option<SimDuration>,
    /// The path MTU (IP bytes): quinn's UDP payload is fixed at `mtu - 28` (no MTU discovery).
    #[serde(with = "units::bytes")]
    #[schemars(with = "units::schema::Size")]
    pub mtu: u64,
}

impl Default for QuinnConfig {
    fn default() -> Self {
        QuinnConfig {
            encryption: true,
            cc: QuinnCc::default(),
            initial_window: None,
            initial_rtt: None,
            ack_eliciting_threshold: None,
            ack_max_delay: None,
            ack_reordering_threshold: None,
            stream_receive_window: None,
            receive_window: None,
            send_window: None,
            max_idle_timeout: None,
            mtu: 1500,
        }
    }
}

/// IPv4 + UDP header bytes.
pub const UDP_IP: u64 = 28;
/// quinn-proto's smallest UDP payload (RFC 9000's 1200 B).
const MIN_PAYLOAD: u64 = 1200;

fn dur(d: SimDuration) -> Duration {
    Duration::from_nanos(d.0 / 1000)
}

fn varint(field: &str, v: u64) -> Result<VarInt, String> {
    VarInt::from_u64(v).map_err(|_| format!("{field}: {v} exceeds QUIC's 2^62-1"))
}

impl QuinnConfig {
    /// The largest UDP payload quinn sends.
    pub fn udp_payload(&self) -> u64 {
        self.mtu.saturating_sub(UDP_IP)
    }

    /// Checks what quinn-proto would refuse or panic on; errors start with the field's name.
    pub fn validate(&self) -> Result<(), String> {
        let p = self.udp_payload();
        if p < MIN_PAYLOAD {
            return Err(format!(
                "mtu: {} B leaves {p} B for QUIC; quinn needs a path MTU of at least {} B",
                self.mtu,
                MIN_PAYLOAD + UDP_IP
            ));
        }
        if p > 65_527 {
            return Err(format!("mtu: {} B exceeds the largest UDP datagram", self.mtu));
        }
        if self.initial_window == Some(0) {
            return Err("initial_window: 0 B: the window must hold a packet".into());
        }
        if self.initial_rtt.is_some_and(|d| d.0 == 0) {
            return Err("initial_rtt: 0s: must be positive".into());
        }
        for (f, v) in [
            ("stream_receive_window", self.stream_receive_window),
            ("receive_window", self.receive_window),
            ("send_window", self.send_window),
        ] {
            if v == Some(0) {
                return Err(format!("{f}: 0 B: nothing could be sent"));
            }
            if let Some(v) = v {
                varint(f, v)?;
            }
        }
        if let Some(t) = self.max_idle_timeout {
            IdleTimeout::try_from(dur(t)).map_err(|_| "max_idle_timeout: too long for QUIC".to_string())?;
        }
        Ok(())
    }

    fn transport(&self) -> Result<TransportConfig, String> {
        let mut t = TransportConfig::default();
        let payload = self.udp_payload() as u16;
        t.initial_mtu(payload).min_mtu(payload).mtu_discovery_config(None);
        t.enable_segmentation_offload(false);
        // quinn builds its controller before it knows the datagram size (with 1200 B: 12 000 B
        // from 14 720 clamped to 10 datagrams), which at a 9000 B MTU is 1.3 datagrams and stalls
        // the server's 1-RTT packets; by default, RFC 9002 §7.2's formula with the pinned UDP
        // payload instead (as the model's QUIC uses).
        let p = self.udp_payload();
        let iw = Some(self.initial_window.unwrap_or((10 * p).min(14_720.max(2 * p))));
        match self.cc {
            QuinnCc::NewReno => {
                let mut c = NewRenoConfig::default();
                if let Some(w) = iw {
                    c.initial_window(w);
                }
                t.congestion_controller_factory(Arc::new(c));
            }
            QuinnCc::Cubic => {
                let mut c = CubicConfig::default();
                if let Some(w) = iw {
                    c.initial_window(w);
                }
                t.congestion_controller_factory(Arc::new(c));
            }
            QuinnCc::Bbr => {
                let mut c = BbrConfig::default();
                if let Some(w) = iw {
                    c.initial_window(w);
                }
                t.congestion_controller_factory(Arc::new(c));
            }
        }
        if let Some(d) = self.initial_rtt {
            t.initial_rtt(dur(d));
        }
        if self.ack_eliciting_threshold.is_some()
            || self.ack_max_delay.is_some()
            || self.ack_reordering_threshold.is_some()
        {
            let mut a = AckFrequencyConfig::default();
            if let Some(v) = self.ack_eliciting_threshold {
                a.ack_eliciting_threshold(varint("ack_eliciting_threshold", v)?);
            }
            if let Some(d) = self.ack_max_delay {
                a.max_ack_delay(Some(dur(d)));
            }
            if let Some(v) = self.ack_reordering_threshold {
                a.reordering_threshold(varint("ack_reordering_threshold", v)?);
            }
            t.ack_frequency_config(Some(a));
        }
        if let Some(v) = self.stream_receive_window {
            t.stream_receive_window(varint("stream_receive_window", v)?);
        }
        if let Some(v) = self.receive_window {
            t.receive_window(varint("receive_window", v)?);
        }
        if let Some(v) = self.send_window {
            t.send_window(v);
        }
        if let Some(d) = self.max_idle_timeout {
            let idle = if d.0 == 0 {
                None
            } else {
                Some(IdleTimeout::try_from(dur(d)).map_err(|_| "max_idle_timeout: too long".to_string())?)
            };
            t.max_idle_timeout(idle);
        }
        Ok(t)
    }
}

/// Connection IDs from a seeded generator (quinn's default draws from the thread's RNG).
struct SeededCids(Rng);

impl ConnectionIdGenerator for SeededCids {
    fn generate_cid(&mut self) -> ConnectionId {
        ConnectionId::new(&self.0.next_u64().to_le_bytes())
    }
    fn cid_len(&self) -> usize {
        8
    }
    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// Everything a flow's two ends are made from: quinn-proto's configurations and the seeds.
pub struct QuinnShared {
    pub cfg: QuinnConfig,
    pub client: ClientConfig,
    pub server: Arc<ServerConfig>,
    /// Per end (client, server): the endpoint configuration, quinn's RNG seed, the TLS stream.
    pub ends: [(Arc<EndpointConfig>, [u8; 32], Rng); 2],
    /// The connection's TLS secrets, logged by both ends (for a packet capture).
    pub keylog: Arc<TlsKeyLog>,
}

impl std::fmt::Debug for QuinnShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuinnShared").field("cfg", &self.cfg).finish_non_exhaustive()
    }
}

fn seed32(rng: &mut Rng) -> [u8; 32] {
    let mut s = [0u8; 32];
    for c in s.chunks_mut(8) {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    s
}

impl QuinnShared {
    /// A flow's configuration; everything random (certificate, TLS, connection IDs, quinn's
    /// RNG, the stateless-reset and token keys) comes from `rng`, the flow's stream of the run's
    /// seed.
    pub fn new(cfg: QuinnConfig, mut rng: Rng) -> Result<QuinnShared, String> {
        cfg.validate()?;
        let transport = Arc::new(cfg.transport()?);
        let keylog = Arc::new(TlsKeyLog::default());
        let c = tls::crypto(seed32(&mut rng), cfg.encryption, &keylog)?;
        let mut client = ClientConfig::new(c.client);
        client.transport_config(Arc::clone(&transport));
        // quinn draws the client's first destination CID from the thread's RNG by default.
        let dcid = seed32(&mut rng);
        client.initial_dst_cid_provider(Arc::new(move || ConnectionId::new(&dcid[..16])));
        let token_key = ring::hkdf::Prk::new_less_safe(ring::hkdf::HKDF_SHA256, &seed32(&mut rng));
        let mut server = ServerConfig::new(c.server, Arc::new(token_key));
        server.transport_config(transport).migration(false).time_source(Arc::new(FixedClock));
        let end = |rng: &mut Rng| -> Result<(Arc<EndpointConfig>, [u8; 32], Rng), String> {
            let reset = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &seed32(rng));
            let mut e = EndpointConfig::new(Arc::new(reset));
            e.max_udp_payload_size(cfg.udp_payload() as u16).map_err(|e| format!("mtu: {e}"))?;
            let cid_seed = rng.next_u64();
            e.cid_generator(move || Box::new(SeededCids(Rng::from_seed(cid_seed))));
            let quinn_seed = seed32(rng);
            let tls = Rng::from_seed(rng.next_u64());
            Ok((Arc::new(e), quinn_seed, tls))
        };
        let ends = [end(&mut rng)?, end(&mut rng)?];
        Ok(QuinnShared { cfg, client, server: Arc::new(server), ends, keylog })
    }

    /// The client's and the server's configuration with quinn-proto's own qlog written to
    /// `stream` (each end needs its own: the qlog stream is part of quinn's transport
    /// configuration). Everything else is as in `client`/`server`.
    #[cfg(feature = "qlog")]
    pub(crate) fn with_qlog(
        &self,
        stream: quinn_proto::QlogStream,
        server: bool,
    ) -> Result<(ClientConfig, Arc<ServerConfig>), String> {
        let mut t = self.cfg.transport()?;
        t.qlog_stream(Some(stream));
        let t = Arc::new(t);
        let mut c = self.client.clone();
        let mut s = (*self.server).clone();
        if server {
            s.transport_config(t);
        } else {
            c.transport_config(t);
        }
        Ok((c, Arc::new(s)))
    }
}

/// The wall clock quinn's server reads for address-validation tokens: a fixed instant, so
/// nothing depends on when the run happens.
struct FixedClock;

impl quinn_proto::TimeSource for FixedClock {
    fn now(&self) -> std::time::SystemTime {
        std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000)
    }
}
