//! Packet assembly: `poll_transmit` and the builders for handshake, data, probe, ACK-only and
//! CONNECTION_CLOSE packets (INET `PacketBuilder`, send loop of `Connection::sendPackets`).
//!
//! A 1-RTT packet is filled as INET does: ACK frame (if owed or worth bundling), control frames,
//! then STREAM frames chosen by the scheduler. A packet that elicits an ACK is sent only while a
//! full-size packet fits into cwnd − bytes_in_flight (unless `partial_window`), except probes
//! and the one packet allowed after a congestion event. ACK-only packets are not congestion
//! controlled.

use quicksim_cc::CongestionController;
use quicksim_engine::{Rate, SimTime, PS_PER_S};

use super::connection::{Connection, State};
use super::niche::Opt;
use super::packet::{stream_fit, AckEcnFrame, AckFrame, Frame, Frames, QuicPacket, SpaceId, StreamFrame};
use super::recovery::SentPacket;
use super::stats::{count, Sum};
use super::Role;
use crate::endpoint::EcnCodepoint;

/// Bytes kept free for STREAM data when an ACK frame is bundled into a data packet.
const STREAM_ROOM: u64 = 32;
/// Client Initial datagrams are padded to this size (RFC 9000 §14.1).
const MIN_INITIAL_SIZE: u64 = 1200;

impl Connection {
    /// The next packet to send, if any. Call until None after every input.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<QuicPacket> {
        self.advance(now);
        match self.state {
            State::Closing { .. } => {
                let code = self.rare.existing().and_then(|r| r.close_pending.take())?;
                return Some(self.build_close(code));
            }
            State::Draining { .. } | State::Closed => return None,
            State::Handshaking | State::Established => {}
        }
        let multipath = self.is_multipath();
        if multipath {
            // The handshake and its spaces are path 0's.
            self.select_path(0);
        }
        self.recovery.prune(now);
        for space in [SpaceId::Initial, SpaceId::Handshake] {
            if self.hs.keys[space.index()] && !self.recovery.is_discarded(space) {
                if let Some(p) = self.build_handshake_packet(now, space) {
                    return Some(p);
                }
            }
        }
        if !self.hs.keys[SpaceId::Data.index()] || self.peer().is_none() {
            return None;
        }
        if multipath {
            return self.poll_transmit_paths(now);
        }
        self.pacing_blocked = false;
        if self.probes[SpaceId::Data.index()] > 0 {
            self.probes[SpaceId::Data.index()] -= 1;
            return Some(self.build_data_packet(now, self.cfg.max_packet_size, true));
        }
        self.queue_blocked_frames();
        let has_content = !self.pending_is_empty() || self.streams.any_ready(self.conn_send.available());
        if !has_content {
            self.app_limited = true;
        } else if let Some(budget) = self.window_budget() {
            // `next_send_time` only moves when packets are paced (`pacing`, or a controller
            // that asks for a rate).
            if now < self.next_send_time {
                self.pacing_blocked = true;
            } else {
                self.app_limited = false;
                return Some(self.build_data_packet(now, budget, false));
            }
        } else {
            self.app_limited = false;
        }
        if self.acks.data().ack_due(now) {
            return self.build_ack_only(now, SpaceId::Data);
        }
        None
    }

    /// Packet budget the congestion window allows now, if any.
    pub(super) fn window_budget(&self) -> Option<u64> {
        let mps = self.cfg.max_packet_size;
        let cwnd = self.recovery.cc.cwnd_bytes();
        let rem = cwnd.saturating_sub(self.recovery.bytes_in_flight);
        if rem >= mps || self.allow_one {
            Some(mps)
        } else if self.cfg.partial_window && rem >= 64 {
            Some(rem)
        } else {
            None
        }
    }

    /// Queues (STREAM_)DATA_BLOCKED frames, once per limit (RFC 9000 §4.1, INET).
    pub(super) fn queue_blocked_frames(&mut self) {
        let wants_new =
            self.streams.send.values().any(|s| s.has_new_data() && s.max_sent < s.max_stream_data);
        if wants_new {
            if let Some(l) = self.conn_send.take_blocked() {
                self.rare.get_mut().pending.data_blocked = Some(l);
            }
        }
        for (&id, s) in self.streams.send.iter_mut() {
            if s.stream_blocked() && s.blocked_at.get() != Some(s.max_stream_data) {
                s.blocked_at = Opt::some(s.max_stream_data);
                self.rare.get_mut().pending.stream_data_blocked.insert(id, s.max_stream_data);
            }
        }
    }

    /// A 1-RTT header for packet number `pn`.
    pub(super) fn header_len_data(&self, pn: u64) -> u64 {
        self.header_len(SpaceId::Data, pn, 0)
    }

    fn header_len(&self, space: SpaceId, pn: u64, payload: u64) -> u64 {
        let la = self.recovery.largest_acked(space);
        match space {
            SpaceId::Data => self.cfg.header_profile().short_header_len(pn, la),
            _ => {
                let initial_dcid = self.role == Role::Client && !self.hs.server_cid_known;
                self.cfg.header_profile().long_header_len(space, pn, la, payload, initial_dcid)
            }
        }
    }

    fn header_budget(&self, space: SpaceId, pn: u64) -> u64 {
        match space {
            SpaceId::Data => self.header_len(space, pn, 0),
            _ => {
                let la = self.recovery.largest_acked(space);
                let initial_dcid = self.role == Role::Client && !self.hs.server_cid_known;
                self.cfg.header_profile().long_header_max(space, pn, la, initial_dcid)
            }
        }
    }

    /// Initial or Handshake packet: pending CRYPTO flight, probe or immediate ACK.
    fn build_handshake_packet(&mut self, now: SimTime, space: SpaceId) -> Option<QuicPacket> {
        let si = space.index();
        let probe = self.probes[si] > 0;
        let crypto_pending = self.hs.crypto(space).is_some_and(|c| c.pending && !c.acked);
        let ack_due = self.acks[space].ack_due(now);
        if !probe && !crypto_pending && !ack_due {
            return None;
        }
        if probe {
            self.probes[si] -= 1;
            if let Some(c) = self.hs.crypto(space) {
                c.on_lost();
            }
        }
        let pn = self.next_pn[si];
        let avail = self.cfg.max_packet_size - self.header_budget(space, pn);
        let mut frames = Frames::new();
        let mut ack = None;
        if self.acks[space].wants_bundle(true) || ack_due {
            if let Some((f, largest, n)) = self.build_ack(now, space, 0, avail / 2) {
                ack = Some((largest, n));
                frames.push(f);
            }
        }
        if let Some(c) = self.hs.crypto(space).and_then(|c| c.take_pending()) {
            count(&mut self.stats, &mut self.rare, Sum::CryptoFramesSent, 1);
            frames.push(Frame::Crypto(Box::new(c)));
        } else if probe {
            frames.push(Frame::Ping);
        }
        let client_initial = self.role == Role::Client && space == SpaceId::Initial;
        let pad_server = self.role == Role::Server
            && space == SpaceId::Initial
            && matches!(self.cfg.header, super::config::HeaderKind::Rfc9000);
        let ack_eliciting = frames.iter().any(Frame::is_ack_eliciting);
        if client_initial || (pad_server && ack_eliciting) {
            let payload: u64 = frames.iter().map(Frame::size).sum();
            let hdr = self.header_len(space, pn, MIN_INITIAL_SIZE);
            let total = hdr + payload;
            if total < MIN_INITIAL_SIZE {
                frames.push(Frame::Padding(MIN_INITIAL_SIZE - total));
            }
        }
        if frames.is_empty() {
            return None;
        }
        let pkt = self.finish(now, space, pn, frames, ack, false, false);
        // RFC 9001 §4.9.1: the client discards Initial keys when it first sends a Handshake packet.
        if self.role == Role::Client && space == SpaceId::Handshake {
            self.discard_space(SpaceId::Initial, now);
        }
        Some(pkt)
    }

    /// A 1-RTT packet of at most `budget` bytes: ACK, control frames, STREAM frames. A probe
    /// carries new or lost data, else a copy of the oldest outstanding data, else PING.
    pub(super) fn build_data_packet(&mut self, now: SimTime, budget: u64, probe: bool) -> QuicPacket {
        let space = SpaceId::Data;
        let si = space.index();
        let pn = self.next_pn[si];
        let mut avail = budget.saturating_sub(self.header_len(space, pn, 0));
        let mut frames = Frames::new();
        let mut ack = None;
        let acks = &self.acks[space];
        if acks.ack_due(now) || acks.wants_bundle(self.cfg.bundle_ack) {
            let exp = self.cfg.ack_delay_exponent;
            if let Some((f, largest, n)) = self.build_ack(now, space, exp, avail.saturating_sub(STREAM_ROOM))
            {
                ack = Some((largest, n));
                avail -= n;
                frames.push(f);
            }
        }
        self.add_control_frames(&mut frames, &mut avail);
        // draft-ietf-quic-ack-frequency §5: IMMEDIATE_ACK in the last packet the window allows
        // (the I-bit's job). A full packet decides it in advance, so 1 B is kept free for it.
        let imm_candidate = self.cfg.immediate_ack_on_block
            && !probe
            && self.peer().is_some_and(|p| p.min_ack_delay.is_some())
            && self.blocks_after(budget);
        if imm_candidate {
            avail = avail.saturating_sub(1);
        }
        let before = frames.len();
        self.add_stream_frames(&mut frames, &mut avail);
        if probe && frames.len() == before {
            self.add_probe_copy(&mut frames, &mut avail);
        }
        if imm_candidate {
            let size = self.header_len(space, pn, 0) + frames.iter().map(Frame::size).sum::<u64>() + 1;
            if self.blocks_after(size) {
                frames.push(Frame::ImmediateAck);
                self.rare.get_mut().stats.immediate_ack_frames_sent += 1;
            }
        }
        if !frames.iter().any(Frame::is_ack_eliciting) && (probe || !frames.is_empty()) {
            frames.push(Frame::Ping);
        }
        let ibit = self.cfg.ibit && !probe;
        self.finish(now, space, pn, frames, ack, true, ibit)
    }

    /// Sending `size` more bytes now leaves no room for another full-size packet.
    fn blocks_after(&self, size: u64) -> bool {
        let in_flight = self.recovery.bytes_in_flight + size;
        self.recovery.cc.cwnd_bytes().saturating_sub(in_flight) < self.cfg.max_packet_size
    }

    fn add_control_frames(&mut self, frames: &mut Frames, avail: &mut u64) {
        let push = |f: Frame, avail: &mut u64, frames: &mut Frames| -> bool {
            let n = f.size();
            if n <= *avail {
                *avail -= n;
                frames.push(f);
                true
            } else {
                false
            }
        };
        let cwnd = self.recovery.cc.cwnd_bytes();
        if let Some(tx) = self.ack_freq_tx.as_deref_mut() {
            if let Some(f) = tx.poll_frame(&self.cfg, self.peer.resolve(&self.cfg).as_ref(), cwnd) {
                if push(Frame::AckFrequency(f), avail, frames) {
                    self.rare.get_mut().stats.ack_frequency_frames_sent += 1;
                } else {
                    tx.on_lost(&f); // no room: send it with the next packet
                }
            }
        }
        if self.pending.handshake_done && push(Frame::HandshakeDone, avail, frames) {
            self.pending.handshake_done = false;
        }
        if self.pending.max_data && push(Frame::MaxData(self.conn_recv.limit), avail, frames) {
            self.pending.max_data = false;
            self.rare.get_mut().stats.max_data_frames_sent += 1;
        }
        let Some(r) = self.rare.existing().filter(|r| !r.pending.is_empty()) else { return };
        let (ps, st) = (&mut r.pending, &mut r.stats);
        let ids: Vec<u64> = ps.max_stream_data.iter().copied().collect();
        for id in ids {
            let Some(rs) = self.streams.recv.get(&id) else {
                ps.max_stream_data.remove(&id);
                continue;
            };
            if push(Frame::MaxStreamData { id, max: rs.fc.limit }, avail, frames) {
                ps.max_stream_data.remove(&id);
                st.max_stream_data_frames_sent += 1;
            }
        }
        if let Some(l) = ps.data_blocked {
            if push(Frame::DataBlocked(l), avail, frames) {
                ps.data_blocked = None;
                st.data_blocked_frames_sent += 1;
            }
        }
        let blocked: Vec<(u64, u64)> = ps.stream_data_blocked.iter().map(|(&a, &b)| (a, b)).collect();
        for (id, limit) in blocked {
            if push(Frame::StreamDataBlocked { id, limit }, avail, frames) {
                ps.stream_data_blocked.remove(&id);
                st.stream_data_blocked_frames_sent += 1;
            }
        }
    }

    /// STREAM frames, one stream per frame in scheduler order, lowest unsent offset first.
    fn add_stream_frames(&mut self, frames: &mut Frames, avail: &mut u64) {
        loop {
            let credit = self.conn_send.available();
            let Some(id) = self.streams.select(credit) else { break };
            let s = self.streams.send.get_mut(&id).expect("ready stream exists");
            let (off, max_len) = s.next_range(credit).expect("ready stream has a range");
            let Some(len) = stream_fit(id, off, *avail, max_len) else { break };
            let retrans = s.max_sent.saturating_sub(off).min(len);
            let new = s.on_sent(off, len);
            self.conn_send.used += new;
            count(&mut self.stats, &mut self.rare, Sum::StreamBytesSent, len);
            if retrans > 0 {
                self.rare.get_mut().stats.retransmitted_bytes += retrans;
            }
            let f = StreamFrame { id, offset: off, len };
            *avail -= f.size();
            frames.push(Frame::Stream(f));
        }
    }

    /// PTO probe without new data: re-send the STREAM frames of the oldest outstanding packet.
    fn add_probe_copy(&mut self, frames: &mut Frames, avail: &mut u64) {
        let Some(old) = self.recovery.oldest_outstanding(SpaceId::Data) else { return };
        let copies: Vec<StreamFrame> = old
            .frames
            .iter()
            .filter_map(|f| if let Frame::Stream(s) = f { Some(*s) } else { None })
            .collect();
        for sf in copies {
            let Some(len) = stream_fit(sf.id, sf.offset, *avail, sf.len) else { break };
            let f = StreamFrame { len, ..sf };
            count(&mut self.stats, &mut self.rare, Sum::StreamBytesSent, len);
            self.rare.get_mut().stats.retransmitted_bytes += len;
            *avail -= f.size();
            frames.push(Frame::Stream(f));
        }
    }

    pub(super) fn build_ack_only(&mut self, now: SimTime, space: SpaceId) -> Option<QuicPacket> {
        let si = space.index();
        let pn = self.next_pn[si];
        let avail = self.cfg.max_packet_size - self.header_budget(space, pn);
        let exp = if space == SpaceId::Data { self.cfg.ack_delay_exponent } else { 0 };
        let (f, largest, n) = self.build_ack(now, space, exp, avail)?;
        count(&mut self.stats, &mut self.rare, Sum::AckOnlyPacketsSent, 1);
        let ack = Some((largest, n));
        let pkt = self.finish(now, space, pn, smallvec::smallvec![f], ack, false, false);
        count(&mut self.stats, &mut self.rare, Sum::AckOnlyBytesSent, pkt.size_bytes());
        Some(pkt)
    }

    fn build_close(&mut self, code: u64) -> QuicPacket {
        let space = if self.hs.keys[SpaceId::Data.index()] {
            SpaceId::Data
        } else if self.hs.keys[SpaceId::Handshake.index()] && !self.recovery.is_discarded(SpaceId::Handshake)
        {
            SpaceId::Handshake
        } else {
            SpaceId::Initial
        };
        let si = space.index();
        let pn = self.next_pn[si];
        self.next_pn[si] += 1;
        let mut frames: Frames = smallvec::smallvec![Frame::ConnectionClose { error_code: code }];
        if self.role == Role::Client && space == SpaceId::Initial {
            let hdr = self.header_len(space, pn, MIN_INITIAL_SIZE);
            frames.push(Frame::Padding(MIN_INITIAL_SIZE.saturating_sub(hdr + frames[0].size())));
        }
        let payload = frames.iter().map(Frame::size).sum();
        let header_bytes = self.header_len(space, pn, payload);
        let pkt = QuicPacket::with_payload(space, pn, header_bytes, frames, payload);
        count(&mut self.stats, &mut self.rare, Sum::PacketsSent, 1);
        count(&mut self.stats, &mut self.rare, Sum::BytesSent, pkt.size_bytes());
        pkt
    }

    /// The ACK frame of `space` in at most `budget` bytes, counted as sent: an ACK_ECN frame
    /// with the space's ECN counts once ECN-marked packets have arrived (RFC 9000 §19.3), else
    /// a plain one. Returns the frame, its largest acknowledged and its size.
    /// Not inlined (nor is `finish`): each had two hot copies in `poll_transmit` (data and
    /// ACK-only packets), and the QUIC paths together no longer fitted the instruction cache
    /// (callgrind, scale3: I1 misses 10.3 M -> 3.9 M, +1 % instructions; wall -5 %).
    #[inline(never)]
    pub(super) fn build_ack(
        &mut self,
        now: SimTime,
        space: SpaceId,
        exp: u8,
        budget: u64,
    ) -> Option<(Frame, u64, u64)> {
        let counts = self.recovery.ecn.as_ref().and_then(|e| e.report(space));
        // A PATH_ACK (of a path other than 0) adds its path id, a varint of at most 2 B.
        let path_id = if self.mp().is_some_and(|m| m.active != 0) { 2 } else { 0 };
        let extra = counts.map_or(0, |c| c.size()) + path_id;
        let (a, largest, size) = self.acks[space].build(now, exp, budget.checked_sub(extra)?)?;
        let n = size + extra - path_id;
        self.note_ack_sent(&a, n);
        let f = match counts {
            Some(counts) => Frame::AckEcn(Box::new(AckEcnFrame { ack: a, counts })),
            None => Frame::Ack(a),
        };
        if path_id > 0 {
            let (f, n) = self.path_ack_wrap(f, n);
            return Some((f, largest, n));
        }
        Some((f, largest, n))
    }

    /// Counts an ACK frame of `size` bytes (its `size()`, computed by the caller).
    fn note_ack_sent(&mut self, a: &AckFrame, size: u64) {
        count(&mut self.stats, &mut self.rare, Sum::AckFramesSent, 1);
        count(&mut self.stats, &mut self.rare, Sum::AckFrameBytesSent, size);
        self.stats.max_ack_ranges_sent = self.stats.max_ack_ranges_sent.max(a.ranges.len() as u32);
    }

    /// A 1-RTT packet of the selected path from `frames` (`finish` without pacing or I-bit).
    pub(super) fn finish_path_packet(
        &mut self,
        now: SimTime,
        pn: u64,
        frames: Frames,
        ack: Option<(u64, u64)>,
    ) -> QuicPacket {
        self.finish(now, SpaceId::Data, pn, frames, ack, false, false)
    }

    /// Numbers the packet, registers it with recovery and updates counters and the pacer.
    /// `ack`: largest acknowledged and size of the ACK frame among `frames`, if any (its size
    /// is known to the caller, and computing it walks every range).
    /// `ibit`: set the I-bit if the packet is the last the window allows (decided here, after
    /// the packet counts in flight, so the packet is not moved again to be changed).
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn finish(
        &mut self,
        now: SimTime,
        space: SpaceId,
        pn: u64,
        frames: Frames,
        ack: Option<(u64, u64)>,
        may_pace: bool,
        ibit: bool,
    ) -> QuicPacket {
        let si = space.index();
        self.next_pn[si] += 1;
        let payload: u64 = match ack {
            Some((_, ack_size)) => frames
                .iter()
                .map(|f| {
                    if let Frame::Ack(_) | Frame::AckEcn(_) | Frame::PathAck(_) = f {
                        ack_size
                    } else {
                        f.size()
                    }
                })
                .sum(),
            None => frames.iter().map(Frame::size).sum(),
        };
        debug_assert_eq!(payload, frames.iter().map(Frame::size).sum::<u64>());
        let ack_largest = ack.map(|(l, _)| l).into();
        let header_bytes = self.header_len(space, pn, payload);
        let mut pkt = QuicPacket::with_payload(space, pn, header_bytes, frames, payload);
        let size = pkt.size_bytes();
        debug_assert!(
            size <= self.cfg.max_packet_size || space != SpaceId::Data,
            "packet of {size} B exceeds max_packet_size"
        );
        let in_flight = pkt.is_in_flight();
        let ack_eliciting = pkt.is_ack_eliciting();
        // Registered without frames, which are then copied into the stored packet in place:
        // a `SentPacket` assembled on the stack frame by frame and then moved was read back in
        // wider words than it was written with (a store-forwarding stall per packet sent).
        let frames = Default::default();
        // RFC 9000 §13.4: ECT(0) on ack-eliciting 1-RTT packets while ECN is tested or validated.
        let ect = ack_eliciting && self.recovery.ecn_mark_next(space);
        if ect {
            // ECT(0), or ECT(1) for an L4S controller (`EcnResponse::Scalable`).
            pkt.ecn = self.recovery.ecn.as_deref().map_or(EcnCodepoint::Ect0, |e| e.codepoint());
        }
        let size32 = u32::try_from(size).expect("a QUIC packet is at most max_packet_size (65 527 B)");
        let sent = SentPacket {
            pn,
            time_sent: now,
            size: size32,
            ack_eliciting,
            in_flight,
            ect,
            frames,
            ack_largest,
        };
        let app_limited = !self.streams.has_unsent();
        let ctx = self.timer_ctx();
        self.recovery.on_packet_sent(space, sent, app_limited, ctx);
        // PATH_CHALLENGE is kept: its loss sends a new one (`on_path_challenge_lost`).
        let keep = |f: &Frame| {
            !matches!(
                f,
                Frame::Padding(_)
                    | Frame::Ack(_)
                    | Frame::AckEcn(_)
                    | Frame::Ping
                    | Frame::PathAck(_)
                    | Frame::PathResponse(_)
            )
        };
        if in_flight {
            let kept = self.recovery.last_sent_frames(space, pn);
            for f in pkt.frames.iter() {
                if keep(f) {
                    kept.push(f.clone());
                }
            }
        } else {
            // An ACK-only packet, stored without frames (CONNECTION_CLOSE, the one frame kept
            // that is not in flight, goes out unregistered: `build_close`).
            debug_assert!(!pkt.frames.iter().any(keep), "a packet with frames to keep is in flight");
        }
        count(&mut self.stats, &mut self.rare, Sum::PacketsSent, 1);
        count(&mut self.stats, &mut self.rare, Sum::BytesSent, size);
        if ack_eliciting {
            self.last_activity = now;
        }
        if in_flight {
            self.allow_one = false;
            if may_pace {
                if let Some(rate) = self.pacing_rate(now) {
                    let start = self.next_send_time.max(now);
                    self.next_send_time = start + rate.tx_time(size);
                }
            }
            if ibit {
                // IFIP 2020 I-bit: the last packet the window allows asks for an immediate ACK.
                let rem = self.recovery.cc.cwnd_bytes().saturating_sub(self.recovery.bytes_in_flight);
                if rem < self.cfg.max_packet_size {
                    pkt.i_bit = true;
                    self.rare.get_mut().stats.ibit_packets_sent += 1;
                }
            }
        }
        pkt
    }

    /// The controller's pacing rate (always honoured: BBR paces by design), else with `pacing`
    /// 1.25 · cwnd / srtt (RFC 9002 §7.7). None without `pacing`, before an RTT sample or with
    /// an unlimited window.
    fn pacing_rate(&self, now: SimTime) -> Option<Rate> {
        let cx = self.recovery.cc_ctx(now);
        if let Some(r) = self.recovery.cc.pacing_rate(&cx) {
            return (r.bits_per_s > 0).then_some(r);
        }
        if !self.cfg.pacing {
            return None;
        }
        let cwnd = self.recovery.cc.cwnd_bytes();
        if !self.recovery.rtt.has_sample() || cwnd == u64::MAX {
            return None;
        }
        let srtt = self.recovery.rtt.smoothed().ps().max(1) as u128;
        // bits/s = cwnd·8 · 1.25 / srtt_s = cwnd · 10 · PS_PER_S / srtt_ps.
        let bps = (cwnd as u128 * 10 * PS_PER_S as u128 / srtt).min(u64::MAX as u128) as u64;
        (bps > 0).then(|| Rate::bps(bps))
    }
}
