//! Connection configuration. `QuicConfig::default()` is the INET QUIC model's defaults
//! (`Q/Quic.ned`, report §2.1/§2.2) unless a field says otherwise.
//!
//! The one definition of every QUIC setting: a scenario's `[quic]` table (and a flow's own
//! `quic` table) deserializes into this struct, `scenario.json` writes it back, and the JSON
//! Schema and the scenario reference are generated from it (each field's doc comment is its
//! documentation there). Fields marked `#[serde(skip)]` are not settings of a scenario.

use quicksim_cc::CcSpec;
use quicksim_engine::SimDuration;
use serde::{Deserialize, Serialize};

use super::packet::{HeaderProfile, TransportParams};
use super::streams::SchedulerKind;
use crate::units;

/// Sender-side ACK-rate policy (draft-ietf-quic-ack-frequency): who decides how often the peer
/// acknowledges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckFreqPolicy {
    /// No ACK_FREQUENCY frames: the receiver's own `ack_ratio` decides (RFC 9000 §13.2.2).
    Receiver,
    /// One ACK_FREQUENCY with this Ack-Eliciting Threshold: the peer acks after more than
    /// `threshold` ack-eliciting packets, i.e. ack ratio 1:(threshold + 1) (draft §4).
    Fixed { threshold: u64 },
    /// Ack ratio cwnd/4 packets (four ACKs per window), at least 1 and at most `max` packets
    /// per ACK; a new ACK_FREQUENCY goes out whenever the ratio changes.
    Cwnd { max: u64 },
}

impl AckFreqPolicy {
    /// The policy sends ACK_FREQUENCY frames.
    pub fn uses_frames(&self) -> bool {
        !matches!(self, AckFreqPolicy::Receiver)
    }
}

/// `ack_policy`: who sets the peer's ACK rate (its settings are the `ack_frequency_*` fields).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AckPolicyKind {
    /// The receiver's own `ack_ratio` (no ACK_FREQUENCY frames).
    #[default]
    Receiver,
    /// One ACK_FREQUENCY frame with `ack_frequency_threshold`.
    Fixed,
    /// cwnd/4 packets per ACK, at most `ack_frequency_max`.
    Cwnd,
}

/// `header`: how packet headers are sized (`HeaderProfile`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HeaderKind {
    /// INET's fixed 13 B short header, no AEAD tag.
    #[default]
    Inet,
    /// RFC 9000 §17 headers with `dcid_len`-byte connection ids and a 16 B AEAD tag.
    Rfc9000,
}

/// Default connection id length of the "rfc9000" header profile.
pub const DEFAULT_DCID_LEN: u8 = 8;
/// Default cap of the "cwnd" ACK policy, packets per ACK.
pub const DEFAULT_ACK_FREQUENCY_MAX: u64 = 10;

/// Everything a QUIC connection can be configured with. Each field names its default and source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct QuicConfig {
    /// Header sizing: "inet" (INET's fixed 13 B short header, no AEAD tag; report §3) or
    /// "rfc9000" (RFC 9000 §17 headers with a 16 B AEAD tag). Default "inet".
    pub header: HeaderKind,
    /// Connection id length in bytes of the "rfc9000" header (0-20, RFC 9000 §17.2). Default 8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcid_len: Option<u8>,
    /// Maximum QUIC packet size (UDP payload) in bytes. Default: the path MTU − 28 B (IPv4 +
    /// UDP; 1252 B at MTU 1280, INET's). Also the MDS of congestion control. At least 1200 B
    /// with a handshake (RFC 9000 §14; INET aborts below 1200).
    #[serde(with = "units::bytes_text")]
    #[schemars(with = "units::schema::Size")]
    pub max_packet_size: u64,
    /// Run the 1-RTT handshake (Initial/Handshake spaces). Default true (INET since 2026);
    /// false = both ends start established with the peer's transport parameters known, as the
    /// 2020 paper's model.
    pub handshake: bool,
    /// Peer transport parameters assumed when `handshake` is false. None = the peer uses the same
    /// values as this config (the 2020 model: "parameters in the configuration file").
    #[serde(skip)]
    pub peer_params: Option<TransportParams>,
    /// The congestion controller and its settings: a built-in algorithm of the registry
    /// (`CcSpec::named("cubic")`, or a `BuiltinConfig` with non-default settings) or a run-time
    /// factory. Default NewReno with byte counting (INET "NewReno" with
    /// `accurateIncreaseInNewRenoCongestionAvoidance = true`). A scenario's `cc` key is resolved
    /// against the registry and the run's plugins, not by serde.
    #[serde(skip)]
    pub cc: CcSpec,
    /// Initial congestion window in packets of `max_packet_size`. Default: RFC 9002 §7.2's
    /// min(10·MDS, max(14720, 2·MDS)); a number = exactly that many packets (at least 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<u64>,
    /// false (default, INET): send only while a full-size packet fits into cwnd − in_flight.
    /// true: also fill the remaining window with a smaller packet (never exceeding cwnd,
    /// RFC 9002 §7).
    pub partial_window: bool,
    /// After a congestion event one packet may be sent at once even if the window is full
    /// (INET `allowOnePacket`, RFC 9002 §7.3.2 "MAY"). Default true (INET).
    #[serde(skip)]
    pub allow_one_packet: bool,
    /// Pace in-flight packets at 1.25·cwnd/srtt (RFC 9002 §7.7) when the controller gives no
    /// rate. Default false (INET sends back-to-back). A controller's own rate (BBR) is always
    /// honoured.
    pub pacing: bool,
    /// kInitialRtt. Default 333 ms (RFC 9002 §6.2.2, INET).
    #[serde(with = "units::duration")]
    #[schemars(with = "units::schema::Duration")]
    pub initial_rtt: SimDuration,
    /// Our max_ack_delay: the delayed-ACK timer (and advertised to the peer). Default 25 ms
    /// (RFC 9000 §18.2 default, INET constant).
    #[serde(with = "units::duration")]
    #[schemars(with = "units::schema::Duration")]
    pub max_ack_delay: SimDuration,
    /// Our ack_delay_exponent. Default 3 (RFC 9000 §18.2, INET constant).
    #[serde(skip)]
    pub ack_delay_exponent: u8,
    /// Ack ratio: ACK at once after this many ack-eliciting packets. Default 2 (RFC 9000
    /// §13.2.2, INET `numReceivedAckElicitingsBeforeAck`).
    pub ack_ratio: u64,
    /// The IFIP 2020 I-bit: the sender marks the last packet before the window blocks and the
    /// receiver acks such packets at once. Default false (INET `useIBit`).
    pub ibit: bool,
    /// draft-ietf-quic-ack-frequency §3 min_ack_delay, e.g. "1ms": advertise it and honour the
    /// peer's ACK_FREQUENCY and IMMEDIATE_ACK frames (which must request at least this delay).
    /// Default: unset (extension off, as INET). A sender needs the *peer's* min_ack_delay to use
    /// the extension; without a handshake the peer is assumed to have this config's value.
    #[serde(with = "units::opt_duration", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Duration>")]
    pub min_ack_delay: Option<SimDuration>,
    /// How this endpoint, as a data sender, steers the peer's ACK rate: "receiver" (default: the
    /// peer's `ack_ratio`), "fixed" (ACK_FREQUENCY with `ack_frequency_threshold`) or "cwnd"
    /// (cwnd/4 packets per ACK, at most `ack_frequency_max`). The last two need `min_ack_delay`.
    pub ack_policy: AckPolicyKind,
    /// Ack-Eliciting Threshold of the "fixed" policy: an ACK after more than N packets
    /// (ratio 1:(N+1)). Required with, and only with, ack_policy = "fixed".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_frequency_threshold: Option<u64>,
    /// Cap of the "cwnd" policy in packets per ACK (at least 1). Default 10; only with
    /// ack_policy = "cwnd".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_frequency_max: Option<u64>,
    /// Requested Max Ack Delay of our ACK_FREQUENCY frames. Default: the peer's max_ack_delay;
    /// raised to the peer's min_ack_delay if below (draft §4).
    #[serde(with = "units::opt_duration", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<units::schema::Duration>")]
    pub ack_frequency_max_ack_delay: Option<SimDuration>,
    /// Reordering Threshold of our ACK_FREQUENCY frames: 1 (default) = ACK at once on any
    /// out-of-order packet as RFC 9000 §13.2.1; 0 = never on reordering; k = once a packet is
    /// missing k below the largest received (draft §6.2).
    pub ack_frequency_reordering: u64,
    /// Put an IMMEDIATE_ACK frame (1 B) into the last packet before the congestion window
    /// blocks: the I-bit's job done with the draft's frame. Needs `min_ack_delay`.
    /// Default false.
    pub immediate_ack_on_block: bool,
    /// ECN (RFC 9000 §13.4, RFC 9002 §7.1): send ack-eliciting 1-RTT packets with ECT(0) while
    /// the path is tested or validated, report the ECN counts of received packets in ACK_ECN
    /// frames, validate the peer's counts and treat a rise of its CE count as a congestion
    /// event (once per round trip). Default false (INET has no ECN): then no packet is marked
    /// and received codepoints are not counted, as an endpoint without ECN support.
    pub ecn: bool,
    /// Also bundle ACK frames for non-ack-eliciting packets into outgoing packets. Default false
    /// (INET `bundleAckForNonAckElicitingPackets`).
    pub bundle_ack: bool,
    /// Maximum number of ACK ranges kept and sent. INET has no bound (its ACK frames grow for
    /// the whole run when ack-of-ack never happens, report §2.4); RFC 9000 §13.2.4 allows
    /// dropping the oldest ranges. Default 64.
    pub max_ack_ranges: usize,
    /// Connection flow-control credit we grant. Default 15 MB (INET `initialMaxData`).
    #[serde(with = "units::bytes_text")]
    #[schemars(with = "units::schema::Size")]
    pub initial_max_data: u64,
    /// Per-stream credit we grant. Default 6 MB (INET `initialMaxStreamData`).
    #[serde(with = "units::bytes_text")]
    #[schemars(with = "units::schema::Size")]
    pub initial_max_stream_data: u64,
    /// Send MAX_DATA when the remaining credit falls to this fraction of `initial_max_data`.
    /// Default 0.5 (INET `maxDataFrameThreshold`).
    pub max_data_threshold: f64,
    /// Same for MAX_STREAM_DATA. Default 0.5 (INET `maxStreamDataFrameThreshold`).
    pub max_stream_data_threshold: f64,
    /// INET `roundConsumedDataValue` (default false): a new limit is the old one plus
    /// (window − threshold), repeated while the remaining credit is within the threshold, instead
    /// of `consumed + window`. Limits then stay on a fixed grid, so packet-sized consumption
    /// steps cannot drift past the threshold; INET's flow-control validation (goodput =
    /// credit/RTT) uses it. Without it a receiver that crosses the threshold mid-burst grants
    /// only about half the credit per RTT.
    pub round_consumed_data: bool,
    /// Limit of all send queues, counting unsent plus unacked data (INET `sendQueueLimit`).
    /// Default 64 MB.
    #[serde(with = "units::bytes_text")]
    #[schemars(with = "units::schema::Size")]
    pub send_queue_limit: u64,
    /// `SendQueueLow` fires when an ACK brings the queue below this fraction of the limit
    /// (INET `sendQueueLowWaterRatio`). Default 0.4.
    pub send_queue_low_water: f64,
    /// Stream scheduler. Default round robin per STREAM frame (INET `RRScheduler`).
    #[serde(skip)]
    pub scheduler: SchedulerKind,
    /// Close with an error after this many consecutive PTOs without an ACK (INET
    /// kMaxProbePackets = 10). None = never.
    #[serde(skip)]
    pub max_consecutive_ptos: Option<u32>,
    /// Idle timeout (RFC 9000 §10.1). Default None (INET has none).
    #[serde(skip)]
    pub idle_timeout: Option<SimDuration>,
    /// Abstract TLS bytes in the CRYPTO frames of the client Initial, server Initial, server
    /// Handshake and client Handshake flights (the transport parameters come on top). Default
    /// [0, 0, 0, 0]: INET models the handshake by the TP blob and padding only.
    #[serde(skip)]
    pub crypto_sizes: [u64; 4],
    /// Several paths per connection (draft-ietf-quic-multipath-21) or migration to another
    /// path when the path fails (RFC 9000 §9): `{ paths = [{ src = "client.lte" }], scheduler =
    /// "minrtt" }` (docs/multipath.md). Default: one path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multipath: Option<MultipathConfig>,
}

/// `multipath`: the paths of a connection beyond its first (the flow's own `src` to `dst`, path
/// 0, which carries the handshake), and how they are used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultipathConfig {
    /// The further paths, path 1 onwards: each a pair of addresses (hosts or interfaces
    /// `<host>.<interface>`) that defaults to the flow's own `src` and `dst`.
    pub paths: Vec<PathConfig>,
    /// Which path new data goes on: "minrtt" (default), "roundrobin", "redundant" or "backup"
    /// (`path_sched::SCHEDULERS`), or a scheduler written in Python ("py:module:Class" or a
    /// name given to `quicksim.schedulers.register`; docs/multipath.md).
    #[serde(default = "default_path_scheduler")]
    pub scheduler: String,
    /// "multipath" (default: all paths at once, the draft's extension negotiated by the
    /// initial_max_path_id transport parameter) or "migrate" (one path at a time: when the
    /// path in use fails, the connection validates the next and moves there, RFC 9000 §9).
    #[serde(default)]
    pub mode: MultipathMode,
    /// Consecutive PTOs after which a failed path is abandoned (PATH_ABANDON) or, with
    /// "migrate", left for the next. Default 2.
    #[serde(default = "default_abandon_after")]
    pub abandon_after_ptos: u32,
    /// The scheduler `scheduler` names when it is not a built-in one: registered at run time
    /// (a Python class, `quicksim.schedulers`). Not a setting: the scenario names it.
    #[serde(skip)]
    #[schemars(skip)]
    pub plugin: Option<super::path_sched::SchedulerFactory>,
}

/// One further path of a connection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathConfig {
    /// The client's address on this path (default: the flow's `src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<String>,
    /// The server's address on this path (default: the flow's `dst`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<String>,
    /// A backup path (PATH_STATUS_BACKUP): carries data only while no other path is usable.
    #[serde(default)]
    pub backup: bool,
}

/// `multipath.mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MultipathMode {
    /// Every path at once (the multipath extension).
    #[default]
    Multipath,
    /// One path at a time; connection migration on failure (RFC 9000 §9).
    Migrate,
}

fn default_path_scheduler() -> String {
    super::path_sched::SCHEDULERS[0].0.to_string()
}
fn default_abandon_after() -> u32 {
    2
}

impl Default for QuicConfig {
    fn default() -> Self {
        QuicConfig {
            header: HeaderKind::Inet,
            dcid_len: None,
            max_packet_size: 1252,
            handshake: true,
            peer_params: None,
            cc: CcSpec::default(),
            initial_window: None,
            partial_window: false,
            allow_one_packet: true,
            pacing: false,
            initial_rtt: SimDuration::from_millis(333),
            max_ack_delay: SimDuration::from_millis(25),
            ack_delay_exponent: 3,
            ack_ratio: 2,
            ibit: false,
            min_ack_delay: None,
            ack_policy: AckPolicyKind::Receiver,
            ack_frequency_threshold: None,
            ack_frequency_max: None,
            ack_frequency_max_ack_delay: None,
            ack_frequency_reordering: 1,
            immediate_ack_on_block: false,
            ecn: false,
            bundle_ack: false,
            max_ack_ranges: 64,
            initial_max_data: 15_000_000,
            initial_max_stream_data: 6_000_000,
            max_data_threshold: 0.5,
            max_stream_data_threshold: 0.5,
            round_consumed_data: false,
            send_queue_limit: 64_000_000,
            send_queue_low_water: 0.4,
            scheduler: SchedulerKind::RoundRobin,
            max_consecutive_ptos: Some(10),
            idle_timeout: None,
            crypto_sizes: [0; 4],
            multipath: None,
        }
    }
}

/// Smallest packet size without a handshake: room for a header and a useful frame.
const MIN_PACKET_SIZE_NO_HANDSHAKE: u64 = 100;

impl QuicConfig {
    /// How packet headers are sized: `header` with its `dcid_len`.
    #[inline]
    pub fn header_profile(&self) -> HeaderProfile {
        match self.header {
            HeaderKind::Inet => HeaderProfile::Inet,
            HeaderKind::Rfc9000 => {
                HeaderProfile::Rfc9000 { dcid_len: self.dcid_len.unwrap_or(DEFAULT_DCID_LEN) }
            }
        }
    }

    /// The ACK-rate policy: `ack_policy` with its `ack_frequency_*` settings (checked by
    /// `validate`).
    pub fn ack_freq_policy(&self) -> AckFreqPolicy {
        match self.ack_policy {
            AckPolicyKind::Receiver => AckFreqPolicy::Receiver,
            AckPolicyKind::Fixed => {
                AckFreqPolicy::Fixed { threshold: self.ack_frequency_threshold.unwrap_or(0) }
            }
            AckPolicyKind::Cwnd => {
                AckFreqPolicy::Cwnd { max: self.ack_frequency_max.unwrap_or(DEFAULT_ACK_FREQUENCY_MAX) }
            }
        }
    }

    /// This config with `ack_policy` and its `ack_frequency_*` settings set from `p`.
    pub fn with_ack_freq_policy(self, p: AckFreqPolicy) -> QuicConfig {
        let (ack_policy, ack_frequency_threshold, ack_frequency_max) = match p {
            AckFreqPolicy::Receiver => (AckPolicyKind::Receiver, None, None),
            AckFreqPolicy::Fixed { threshold } => (AckPolicyKind::Fixed, Some(threshold), None),
            AckFreqPolicy::Cwnd { max } => (AckPolicyKind::Cwnd, None, Some(max)),
        };
        QuicConfig { ack_policy, ack_frequency_threshold, ack_frequency_max, ..self }
    }

    /// The transport parameters this endpoint advertises.
    pub fn local_params(&self) -> TransportParams {
        TransportParams {
            initial_max_data: self.initial_max_data,
            initial_max_stream_data: self.initial_max_stream_data,
            max_ack_delay: self.max_ack_delay,
            ack_delay_exponent: self.ack_delay_exponent,
            min_ack_delay: self.min_ack_delay,
            initial_max_path_id: self
                .multipath
                .as_ref()
                .filter(|m| m.mode == MultipathMode::Multipath)
                .map(|m| m.paths.len() as u32),
        }
    }

    /// Checks every field; the error names the field and the value.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(m) = &self.multipath {
            if m.plugin.is_none() && super::path_sched::scheduler(&m.scheduler).is_none() {
                let names: Vec<&str> = super::path_sched::SCHEDULERS.iter().map(|s| s.0).collect();
                return Err(format!(
                    "multipath.scheduler: {:?} is not a path scheduler; use one of {names:?}",
                    m.scheduler
                ));
            }
            if m.paths.is_empty() || m.paths.len() > 254 {
                return Err(format!("multipath.paths: {} paths; give 1 to 254 further paths", m.paths.len()));
            }
            if m.abandon_after_ptos == 0 {
                return Err("multipath.abandon_after_ptos: 0; a path needs at least 1 PTO to fail".into());
            }
        }
        if self.handshake && self.max_packet_size < 1200 {
            return Err(format!(
                "max_packet_size: {} B is below 1200 B, the minimum with a handshake (RFC 9000 §14); \
                 raise the MTU to at least 1228 or set handshake = false",
                self.max_packet_size
            ));
        }
        if self.max_packet_size < MIN_PACKET_SIZE_NO_HANDSHAKE {
            return Err(format!(
                "max_packet_size: {} B is too small (minimum {MIN_PACKET_SIZE_NO_HANDSHAKE} B)",
                self.max_packet_size
            ));
        }
        if self.max_packet_size > 65_527 {
            return Err(format!(
                "max_packet_size: {} B exceeds the largest UDP payload (65527 B)",
                self.max_packet_size
            ));
        }
        match (self.header, self.dcid_len) {
            (HeaderKind::Rfc9000, Some(d)) if d > 20 => {
                return Err(format!("dcid_len: {d} exceeds 20 (RFC 9000 §17.2)"));
            }
            (HeaderKind::Inet, Some(_)) => {
                return Err(
                    "dcid_len: only applies to header = \"rfc9000\" (INET's headers have 1 B ids)".into()
                );
            }
            _ => {}
        }
        if self.initial_window == Some(0) {
            return Err("initial_window: 0 packets: the initial window is at least 1 packet".into());
        }
        if self.ack_ratio == 0 {
            return Err("ack_ratio: 0: acknowledge at least every 1 packet".into());
        }
        if let Some(m) = self.min_ack_delay {
            // draft-ietf-quic-ack-frequency §3: min_ack_delay must not exceed max_ack_delay.
            if m > self.max_ack_delay {
                return Err(format!(
                    "min_ack_delay: {m} exceeds max_ack_delay {} (draft-ietf-quic-ack-frequency §3)",
                    self.max_ack_delay
                ));
            }
        }
        let policy = format!("{:?}", self.ack_policy).to_lowercase();
        match (self.ack_policy, self.ack_frequency_threshold) {
            (AckPolicyKind::Fixed, None) => {
                return Err("ack_frequency_threshold: is required with ack_policy = \"fixed\" (an ACK \
                            after more than N packets)"
                    .into())
            }
            (AckPolicyKind::Receiver | AckPolicyKind::Cwnd, Some(_)) => {
                return Err(format!(
                    "ack_frequency_threshold: only applies to ack_policy = \"fixed\", not {policy:?}"
                ))
            }
            _ => {}
        }
        match (self.ack_policy, self.ack_frequency_max) {
            (AckPolicyKind::Cwnd, Some(0)) => {
                return Err("ack_frequency_max: 0: at least 1 packet per ACK".into())
            }
            (AckPolicyKind::Receiver | AckPolicyKind::Fixed, Some(_)) => {
                return Err(format!(
                    "ack_frequency_max: only applies to ack_policy = \"cwnd\", not {policy:?}"
                ))
            }
            _ => {}
        }
        if (self.ack_policy != AckPolicyKind::Receiver || self.immediate_ack_on_block)
            && self.min_ack_delay.is_none()
            && self.peer_params.is_none_or(|p| p.min_ack_delay.is_none())
        {
            return Err(format!(
                "min_ack_delay: is required with ack_policy = {policy:?}{}: the peer must advertise it \
                 to accept ACK_FREQUENCY / IMMEDIATE_ACK (try \"1ms\")",
                if self.immediate_ack_on_block { " / immediate_ack_on_block" } else { "" }
            ));
        }
        if self.ack_delay_exponent > 20 {
            return Err(format!(
                "ack_delay_exponent: {} exceeds 20 (RFC 9000 §18.2)",
                self.ack_delay_exponent
            ));
        }
        if self.max_ack_delay.ps() == 0 || self.max_ack_delay >= SimDuration::from_millis(1 << 14) {
            return Err(format!(
                "max_ack_delay: {} must be positive and below 2^14 ms (RFC 9000 §18.2)",
                self.max_ack_delay
            ));
        }
        if self.initial_rtt.ps() == 0 {
            return Err("initial_rtt: must be positive".into());
        }
        if self.max_ack_ranges == 0 {
            return Err("max_ack_ranges: 0 is invalid; at least one range is needed".into());
        }
        if self.initial_max_data == 0 || self.initial_max_stream_data == 0 {
            return Err(format!(
                "initial_max_data / initial_max_stream_data: {} / {} must both be positive",
                self.initial_max_data, self.initial_max_stream_data
            ));
        }
        for (name, v) in [
            ("max_data_threshold", self.max_data_threshold),
            ("max_stream_data_threshold", self.max_stream_data_threshold),
            ("send_queue_low_water", self.send_queue_low_water),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return Err(format!("{name}: {v} must be a fraction in [0, 1]"));
            }
        }
        if self.send_queue_limit == 0 {
            return Err("send_queue_limit: 0 B is invalid".into());
        }
        if self.max_consecutive_ptos == Some(0) {
            return Err("max_consecutive_ptos: 0 is invalid; use None to disable".into());
        }
        Ok(())
    }
}

/// The configuration a state decoded by serde alone holds until its owner sets the real one
/// (`Connection::decode`; the simulator's encoded idle flows): one shared default, so decoding
/// allocates none. Serde `default` of the skipped configuration fields.
pub fn placeholder_config() -> std::sync::Arc<QuicConfig> {
    static UNSET: std::sync::LazyLock<std::sync::Arc<QuicConfig>> =
        std::sync::LazyLock::new(Default::default);
    std::sync::Arc::clone(&UNSET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_inet() {
        let c = QuicConfig::default();
        c.validate().unwrap();
        assert_eq!(c.max_packet_size, 1252);
        assert_eq!(c.local_params().encoded_len(), 16);
    }

    #[test]
    fn initial_window_of_zero_packets_is_rejected() {
        let c = QuicConfig { initial_window: Some(0), ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("initial_window: 0"));
        QuicConfig { initial_window: Some(1), ..Default::default() }.validate().unwrap();
    }

    #[test]
    fn errors_name_the_field() {
        let c = QuicConfig { max_packet_size: 1100, ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("max_packet_size: 1100"));
        let c = QuicConfig { max_packet_size: 1100, handshake: false, ..Default::default() };
        c.validate().unwrap();
        let c = QuicConfig { ack_ratio: 0, ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("ack_ratio"));
        let c = QuicConfig { send_queue_low_water: 1.5, ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("send_queue_low_water"));
        let c = QuicConfig {
            ack_policy: AckPolicyKind::Fixed,
            ack_frequency_threshold: Some(9),
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().starts_with("min_ack_delay"));
        let c = QuicConfig { min_ack_delay: Some(SimDuration::from_millis(26)), ..Default::default() };
        assert!(c.validate().unwrap_err().starts_with("min_ack_delay"));
    }
}
