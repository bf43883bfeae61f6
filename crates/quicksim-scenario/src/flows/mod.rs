//! The flows of a run: UDP sources and transport flows, one state per flow, and the registry of
//! transports (`transports!` below). The run loop (`world`) calls a flow only through the
//! methods of [`FlowApp`], which the registry generates: a `match` over the registered kinds,
//! so every call is static and each transport's code is monomorphised.
//!
//! Adding a transport: its sans-IO endpoint (implementing `Endpoint`, with a settings type that
//! deserializes from its table), a `flows/<name>.rs` implementing [`transport::Transport`] for
//! it, and one line in `transports!`. The registry makes the rest: the flow kind and its table in
//! scenario files (`schema::flows`), the scenario's `[kind]` defaults table, their checks,
//! `scenario.json`, the JSON Schema, and building the flows (`settings`).

pub(crate) mod quic;
pub(crate) mod quinn;
pub(crate) mod registry;
pub(crate) mod settings;
pub(crate) mod tcp;
#[cfg(test)]
mod toy;
pub(crate) mod transport;
pub(crate) mod udp;

use crate::payload::{Contents, PacketPool, Payload, PoolSet};
use quicksim_engine::SimTime;
use quicksim_net::NodeId;
use quicksim_transport::Endpoint;
use transport::{Parked, Transport, TransportFlow};
use udp::UdpFlow;

/// The run loop's context with this registry's packet pools.
pub(crate) type Ctx = crate::ctx::Ctx<Pools>;

/// A flow's endpoints and times (its name is in `Ctx::flow_names`).
#[derive(Clone, Debug)]
pub struct FlowSpec {
    /// The kind as in scenario files: "udp", "onoff" or a transport's `KIND`.
    pub kind: &'static str,
    pub src: NodeId,
    pub dst: NodeId,
    /// When a transport flow opens its connection: `start` unless the scenario gives an earlier
    /// `connect` (then the run loop has a `FlowConnect` event for it).
    pub connect: SimTime,
    /// When the application starts (a UDP source sends; a transport flow's application hands
    /// over data, opening the connection first if `connect` is `start`).
    pub start: SimTime,
    pub stop: SimTime,
    /// What `stop` stops: sending, or the application's writing.
    pub stop_mode: crate::schema::StopMode,
    /// How much later each of its packets enters the network (`extra_delay`, as drawn).
    pub extra_delay: quicksim_engine::SimDuration,
}

pub(crate) struct FlowRt {
    pub spec: FlowSpec,
    pub app: FlowApp,
}

/// What the registry adds to each transport: its tag in [`crate::payload::Payload`] and its pool.
pub(crate) trait Registered: Endpoint + Sized {
    const TAG: u8;
    fn pool(pools: &mut Pools) -> &mut PacketPool<Self::Packet>;
}

/// Generates, from the list of transports (`Live / Parked = tag: endpoint type`):
/// - [`FlowApp`], a flow's state: a UDP source, or per transport a live flow and a resting one;
/// - [`Pools`], one packet pool per transport, and `Registered` for each endpoint type;
/// - the dispatch methods the run loop calls.
macro_rules! transports {
    ($($(#[$attr:meta])* $live:ident / $parked:ident = $tag:literal : $ty:ty),* $(,)?) => {
        pub(crate) enum FlowApp {
            /// Boxed like the others, so a flow's entry stays small (72 B instead of 208 B).
            Udp(Box<UdpFlow>),
            /// Real programs (`kind = "program"`, real-time runs): their packets come and go
            /// through `world::realtime`; the flow itself does nothing.
            Program,
            $(
                $(#[$attr])* $live(Box<TransportFlow<$ty>>),
                $(#[$attr])* $parked(Box<Parked<$ty>>),
            )*
        }

        /// The transport packets crossing the network, one pool per transport.
        #[allow(non_snake_case)]
        #[derive(Default)]
        pub(crate) struct Pools {
            $( $(#[$attr])* $live: PacketPool<<$ty as Endpoint>::Packet>, )*
            /// Real IP packets of a real-time run (`Payload::raw`).
            pub(crate) raw: PacketPool<Vec<u8>>,
        }

        impl PoolSet for Pools {
            /// Frees the slot of a packet that left the network (dropped).
            #[inline]
            fn release(&mut self, tag: u8, slot: u32) {
                match tag {
                    $( $(#[$attr])* $tag => self.$live.release(slot), )*
                    Payload::RAW_TAG => self.raw.release(slot),
                    _ => unreachable!("no transport has tag {tag}"),
                }
            }

            fn contents(&self, p: &Payload) -> Contents<'_> {
                match p.as_transport() {
                    None => Contents::Udp,
                    $( $(#[$attr])* Some(($tag, _, slot)) => <$ty as Transport>::contents(&self.$live.slots[slot as usize]), )*
                    Some((Payload::RAW_TAG, _, slot)) => Contents::Ip(&self.raw.slots[slot as usize]),
                    Some((tag, _, _)) => unreachable!("no transport has tag {tag}"),
                }
            }
        }

        $(
            $(#[$attr])* impl Registered for $ty {
                const TAG: u8 = $tag;
                #[inline(always)]
                fn pool(pools: &mut Pools) -> &mut PacketPool<Self::Packet> {
                    &mut pools.$live
                }
            }
        )*

        impl FlowApp {
            /// A transport flow, resting from the start if its transport can encode it (~60 B
            /// instead of a ~1.7 kB live state until it starts).
            pub(crate) fn transport<E: Transport>(t: TransportFlow<E>, scratch: &mut Vec<u8>) -> FlowApp
            where
                FlowApp: From<Box<TransportFlow<E>>> + From<Box<Parked<E>>>,
            {
                match Parked::sleep(&t, scratch) {
                    Some(p) => FlowApp::from(Box::new(p)),
                    None => FlowApp::from(Box::new(t)),
                }
            }

            /// Puts the flow's state in live form (decoded if it was resting). The test is
            /// inlined into the run loop; the decoding, which needs a large stack frame (a
            /// stack probe per 4 kB page on every call), is not: a live flow's packet pays a
            /// comparison, not a call through that frame.
            #[inline(always)]
            pub(crate) fn make_live(&mut self) {
                if !self.is_live() {
                    self.wake();
                }
            }

            /// A UDP source or a live transport flow (not resting encoded).
            #[inline(always)]
            fn is_live(&self) -> bool {
                match self {
                    FlowApp::Udp(_) | FlowApp::Program => true,
                    $( $(#[$attr])* FlowApp::$live(_) => true, )*
                    _ => false,
                }
            }

            /// Decodes a resting flow (`make_live`).
            #[cold]
            #[inline(never)]
            fn wake(&mut self) {
                match self {
                    $( $(#[$attr])* FlowApp::$parked(p) => *self = FlowApp::$live(p.wake()), )*
                    _ => {}
                }
            }

            /// Stores the flow encoded if nothing is going on in it and its transport can
            /// encode it. True if it did. The quiet test is inlined (a busy flow's event pays
            /// only that); the encoding is a call.
            #[inline(always)]
            pub(crate) fn rest(&mut self, scratch: &mut Vec<u8>) -> bool {
                match self {
                    $( $(#[$attr])* FlowApp::$live(t) if t.quiet() => self.sleep(scratch), )*
                    _ => false,
                }
            }

            /// Encodes a quiet live flow (`rest`); true if its transport could.
            #[inline(never)]
            fn sleep(&mut self, scratch: &mut Vec<u8>) -> bool {
                match self {
                    $(
                        $(#[$attr])* FlowApp::$live(t) => match Parked::sleep(t, scratch) {
                            Some(p) => {
                                *self = FlowApp::$parked(Box::new(p));
                                true
                            }
                            None => false,
                        },
                    )*
                    _ => false,
                }
            }

            /// A transport flow opens its connection before its application starts.
            pub(crate) fn connect(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
                match self {
                    FlowApp::Udp(_) => unreachable!("flow {f}: a UDP source has no connection"),
                    FlowApp::Program => {}
                    $(
                        $(#[$attr])* FlowApp::$live(t) => t.connect(cx, now, f, spec),
                        $(#[$attr])* FlowApp::$parked(_) => unreachable!("flow {f} woken before its connect"),
                    )*
                }
            }

            pub(crate) fn start(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
                match self {
                    FlowApp::Udp(u) => u.start(cx, now, f),
                    FlowApp::Program => {}
                    $(
                        $(#[$attr])* FlowApp::$live(t) => t.start(cx, now, f, spec),
                        $(#[$attr])* FlowApp::$parked(_) => unreachable!("flow {f} woken before its start"),
                    )*
                }
            }

            pub(crate) fn stop(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
                match self {
                    FlowApp::Udp(u) => u.stop(),
                    FlowApp::Program => {}
                    $(
                        $(#[$attr])* FlowApp::$live(t) => t.stop(cx, now, f, spec),
                        $(#[$attr])* FlowApp::$parked(_) => unreachable!("flow {f} woken before its stop"),
                    )*
                }
            }

            /// A transport packet (in slot `slot` of the flow's pool) for endpoint `side`, arrived
            /// with ECN field `ecn`.
            #[inline]
            #[allow(clippy::too_many_arguments)]
            pub(crate) fn on_packet(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec, side: u8, slot: u32, ecn: quicksim_net::Ecn) {
                match self {
                    $( $(#[$attr])* FlowApp::$live(t) => t.on_packet(cx, now, f, spec, side, slot, ecn), )*
                    _ => unreachable!("flow {f}: a transport packet for a flow that is not live"),
                }
            }

            #[inline]
            pub(crate) fn on_timer(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec, side: u8) {
                match self {
                    $( $(#[$attr])* FlowApp::$live(t) => t.on_timer(cx, now, f, spec, side), )*
                    _ => {}
                }
            }

            pub(crate) fn on_message(&mut self, cx: &mut Ctx, now: SimTime, f: u32, spec: &FlowSpec) {
                match self {
                    $( $(#[$attr])* FlowApp::$live(t) => t.on_message(cx, now, f, spec), )*
                    _ => {}
                }
            }

            /// The TLS secrets log of the flow's connection (quinn), for a capture.
            pub(crate) fn tls_keylog(&self) -> Option<std::sync::Arc<quicksim_quinn::TlsKeyLog>> {
                match self {
                    FlowApp::Udp(_) | FlowApp::Program => None,
                    $(
                        $(#[$attr])* FlowApp::$live(t) => <$ty as Transport>::tls_keylog(&t.cfg),
                        $(#[$attr])* FlowApp::$parked(p) => <$ty as Transport>::tls_keylog(&p.cfg),
                    )*
                }
            }

            /// The end of the run: what a stack's own qlog holds still goes to the sinks.
            pub(crate) fn flush_qlog(&mut self, cx: &mut Ctx, now: SimTime, f: u32) {
                match self {
                    $( $(#[$attr])* FlowApp::$live(t) => t.flush_qlog(cx, now, f), )*
                    _ => {}
                }
            }

            /// The flow's own totals (completion time, the transport's block) added to `o`.
            pub(crate) fn totals(&self, spec: &FlowSpec, o: &mut serde_json::Value) {
                match self {
                    $( $(#[$attr])* FlowApp::$live(t) => t.totals(spec, o), )*
                    _ => {}
                }
            }
        }

        /// The kinds of the registered transports, as scenario files name them.
        pub(crate) const TRANSPORT_KINDS: &[&str] = &[$($(#[$attr])* <$ty as Transport>::KIND),*];

        /// Checks the settings table of transport `kind` at `path` (`quic`, `flows[2].quic`).
        pub(crate) fn check_settings(kind: &str, table: &serde_json::Map<String, serde_json::Value>, path: &str) -> Result<(), crate::ScenarioError> {
            $( $(#[$attr])* if kind == <$ty as Transport>::KIND { return registry::check::<$ty>(table, path); } )*
            unreachable!("{kind} is not a registered transport")
        }

        /// The defaults table `scenario.json` writes for transport `kind` (None: none).
        pub(crate) fn default_settings(kind: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
            $( $(#[$attr])* if kind == <$ty as Transport>::KIND { return registry::defaults::<$ty>(); } )*
            unreachable!("{kind} is not a registered transport")
        }

        /// A checked settings table of transport `kind` in canonical form.
        pub(crate) fn canonical_settings(kind: &str, table: &serde_json::Map<String, serde_json::Value>) -> serde_json::Map<String, serde_json::Value> {
            $( $(#[$attr])* if kind == <$ty as Transport>::KIND { return registry::canonical::<$ty>(table); } )*
            unreachable!("{kind} is not a registered transport")
        }

        /// The JSON Schema of transport `kind`'s settings table.
        pub(crate) fn settings_schema(kind: &str, gen: &mut schemars::SchemaGenerator) -> schemars::Schema {
            $( $(#[$attr])* if kind == <$ty as Transport>::KIND { return registry::schema::<$ty>(gen); } )*
            unreachable!("{kind} is not a registered transport")
        }

        /// Builds flow `index` (at `path`) over transport `t.kind` (`registry::build`); `bytes`:
        /// a bulk transfer's size as drawn for this flow.
        pub(crate) fn build_transport_flow(
            t: &crate::schema::TransportFlowCfg,
            defaults: &serde_json::Map<String, serde_json::Value>,
            path: &str,
            index: usize,
            path_mtu: u64,
            bytes: Option<u64>,
            cx: &mut registry::BuildCx,
        ) -> Result<(FlowApp, Option<u8>, transport::ExtraPaths), crate::ScenarioError> {
            $( $(#[$attr])* if t.kind == <$ty as Transport>::KIND { return registry::build::<$ty>(t, defaults, path, index, path_mtu, bytes, cx); } )*
            unreachable!("{} is not a registered transport", t.kind)
        }

        $(
            $(#[$attr])* impl From<Box<TransportFlow<$ty>>> for FlowApp {
                fn from(t: Box<TransportFlow<$ty>>) -> FlowApp {
                    FlowApp::$live(t)
                }
            }
            $(#[$attr])* impl From<Box<Parked<$ty>>> for FlowApp {
                fn from(p: Box<Parked<$ty>>) -> FlowApp {
                    FlowApp::$parked(p)
                }
            }
        )*
    };
}

transports! {
    Quic / QuicParked = 0: quicksim_transport::quic::Connection,
    Tcp / TcpParked = 1: quicksim_transport::tcp::Connection,
    Quinn / QuinnParked = 2: quicksim_quinn::QuinnEndpoint,
    #[cfg(test)] Toy / ToyParked = 3: toy::ToyEnd,
}
