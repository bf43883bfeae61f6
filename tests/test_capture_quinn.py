"""quinn flows in the outputs meant for real stacks: `run.capture` with quinn-proto's real
datagrams and the connection's TLS secrets in a Decryption Secrets Block (read back with
python-pcapng, decrypted by tshark when it is installed), and `run.record.qlog` with quinn-proto's
own qlog. Needs the compiled core.
"""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pcapng import FileScanner  # type: ignore[import-untyped]
from pcapng.blocks import EnhancedPacket, UnknownBlock  # type: ignore[import-untyped]

import quicksim

pytestmark = [
    pytest.mark.core,
    # python-pcapng 2.1.1's own option table declares if_tsresol without a type and warns about
    # itself when it reads one (every nanosecond capture has it).
    pytest.mark.filterwarnings("ignore:Field type should not be:DeprecationWarning"),
]

DSB = 0x0000000A
TLSK = 0x544C534B
LABELS = {
    "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
    "SERVER_HANDSHAKE_TRAFFIC_SECRET",
    "CLIENT_TRAFFIC_SECRET_0",
    "SERVER_TRAFFIC_SECRET_0",
}


def scenario(encryption: bool = True, loss: float = 0.01) -> dict[str, Any]:
    """A quinn flow (NewReno) and a model QUIC flow over a lossy 10 Mbit/s dumbbell, 1 s."""
    return {
        "run": {"duration": "1s", "capture": {"links": ["bottleneck"]}, "record": {"qlog": ["qn"]}},
        "dumbbell": {
            "pairs": 2,
            "bottleneck": {
                "rate": "10Mbps",
                "delay": "10ms",
                "loss": {"kind": "bernoulli", "p": loss},
                "queue": {"packets": 30},
            },
        },
        "quic": {"header": "rfc9000"},
        "quinn": {"cc": "newreno", "encryption": encryption},
        "flows": [
            {"name": "qn", "kind": "quinn", "src": "sender1", "dst": "receiver1"},
            {"name": "q", "kind": "quic", "src": "sender2", "dst": "receiver2"},
        ],
    }


def blocks(path: Path) -> list[tuple[str, Any]]:
    """('dsb', (secrets type, text)) or ('epb', (interface, data)) in file order."""
    out: list[tuple[str, Any]] = []
    with path.open("rb") as fp:
        for b in FileScanner(fp):
            if isinstance(b, UnknownBlock) and b.block_type == DSB:
                kind, length = struct.unpack_from("<II", b.data)
                out.append(("dsb", (kind, bytes(b.data[8 : 8 + length]).decode())))
            elif isinstance(b, EnhancedPacket):
                out.append(("epb", (b.interface_id, bytes(b.packet_data))))
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, quicksim.Result]:
    out = tmp_path_factory.mktemp("quinn-capture")
    res = quicksim.run(scenario(), out=out)
    res.save(out)
    return out, res


def quinn_port(res: quicksim.Result) -> int:
    return int(res.totals["capture"]["flows"]["qn"]["client"].rsplit(":", 1)[1])


def test_the_secrets_block_precedes_every_quinn_packet_and_holds_the_key_log(
    run: tuple[Path, quicksim.Result],
) -> None:
    out, res = run
    bl = blocks(out / "capture.pcapng")
    dsbs = [(i, d) for i, (k, d) in enumerate(bl) if k == "dsb"]
    assert dsbs, "no Decryption Secrets Block"
    assert all(kind == TLSK for _, (kind, _) in dsbs)
    lines = [ln for _, (_, text) in dsbs for ln in text.splitlines()]
    # NSS key-log lines: label, the 32-byte client random, the secret (the cipher suite's hash
    # length: 32 B for SHA-256, 48 B for SHA-384, which rustls's first choice AES-256-GCM uses).
    for ln in lines:
        _label, random, secret = ln.split(" ")
        assert len(random) == 64 and len(secret) in (64, 96), ln
        int(random, 16), int(secret, 16)
    assert {ln.split(" ")[0] for ln in lines} >= LABELS, lines
    assert len({ln.split(" ")[1] for ln in lines}) == 1, "one connection, one client random"
    assert len(lines) == len(set(lines)), "a secret both ends derive is written once"
    # quinn's datagrams are UDP to/from port 443 with the client's port. Initial packets are
    # protected with keys from the connection ID (RFC 9001 §5.2): only they may come before the
    # first block; every Handshake or 1-RTT packet comes after it.
    port = quinn_port(res)

    def is_quinn(data: bytes) -> bool:
        sport, dport = struct.unpack_from(">HH", data, 20)
        return data[9] == 17 and {sport, dport} == {port, 443}

    quinn = [i for i, (k, d) in enumerate(bl) if k == "epb" and is_quinn(d[1])]
    assert len(quinn) > 200
    early = [bl[i][1][1][28:] for i in quinn if i < dsbs[0][0]]
    # A long header (0x80, fixed bit 0x40) of QUIC version 1 and type Initial (bits 0x30 = 0).
    assert early and all(q[0] & 0xF0 == 0xC0 and q[1:5] == b"\x00\x00\x00\x01" for q in early)


def test_the_same_seed_writes_the_same_bytes(run: tuple[Path, quicksim.Result], tmp_path: Path) -> None:
    out, _ = run
    quicksim.run(scenario(), out=tmp_path).save(tmp_path)
    assert (tmp_path / "capture.pcapng").read_bytes() == (out / "capture.pcapng").read_bytes()
    for role in ("client", "server"):
        assert (tmp_path / f"qn.{role}.sqlog").read_bytes() == (out / f"qn.{role}.sqlog").read_bytes()


def tshark(*args: str) -> str:
    exe = shutil.which("tshark")
    if exe is None:
        pytest.skip("tshark is not on the PATH (CI installs it with apt-get where it can)")
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    return r.stdout


def frame_types(f: Path, port: int) -> list[int]:
    """Every QUIC frame type tshark decodes in the quinn flow's packets."""
    rows = tshark("-r", str(f), "-Y", f"quic && udp.port == {port}", "-T", "fields", "-e", "quic.frame_type")
    return [int(t) for row in rows.split() for t in row.split(",") if t]


def test_tshark_decrypts_the_quinn_packets_with_the_embedded_secrets(
    run: tuple[Path, quicksim.Result],
) -> None:
    out, res = run
    types = frame_types(out / "capture.pcapng", quinn_port(res))
    # 0x02/0x03 ACK, 0x08-0x0f STREAM, 0x06 CRYPTO: 1-RTT and handshake packets decrypted.
    acks = sum(t in (2, 3) for t in types)
    streams = sum(8 <= t <= 15 for t in types)
    assert streams > 150 and acks > 50 and 6 in types, (streams, acks, sorted(set(types)))
    # And nothing tshark calls malformed or undecryptable in the quinn flow.
    port = quinn_port(res)
    bad = tshark(
        "-r",
        str(out / "capture.pcapng"),
        "-Y",
        f"udp.port == {port} && (_ws.malformed || quic.decryption_failed || _ws.expert.severity >= error)",
    )
    assert bad == "", bad[:2000]


def test_with_the_null_protection_tshark_decrypts_nothing_past_the_initial(tmp_path: Path) -> None:
    res = quicksim.run(scenario(encryption=False), out=tmp_path)
    types = frame_types(tmp_path / "capture.pcapng", quinn_port(res))
    # The secrets are in the file, but the packets were not protected with them (nor the Initial
    # packets with RFC 9001's keys): tshark decodes no STREAM or ACK frame.
    assert not any(8 <= t <= 15 or t in (2, 3) for t in types), sorted(set(types))


def records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text()
    assert text.startswith("\x1e")
    recs = text.split("\x1e")[1:]
    assert all(r.endswith("\n") for r in recs)
    return [json.loads(r) for r in recs]


def test_quinn_qlog_holds_the_events_derived_from_its_datagrams_and_stats(
    run: tuple[Path, quicksim.Result],
) -> None:
    # The default build: quinn-proto's own qlog needs the `quinn-qlog` cargo feature (tested in
    # crates/quicksim-scenario/tests/it/quinn_qlog.rs); without it, quicksim writes what it can
    # read of quinn's datagrams (unencrypted first byte, length) and Connection::stats().
    out, res = run
    files = {}
    for role in ("client", "server"):
        recs = records(out / f"qn.{role}.sqlog")
        head, events = recs[0], recs[1:]
        assert head["qlog_version"] == "0.3", head
        times = [e["time"] for e in events]
        # Simulated time, ms since the run's start: in [0, 1000] and in order.
        assert times == sorted(times) and times[0] >= 0 and times[-1] <= 1000.0, (times[0], times[-1])
        files[role] = events
    sent = [e["data"] for e in files["client"] if e["name"] == "transport:packet_sent"]
    got = [e["data"] for e in files["server"] if e["name"] == "transport:packet_received"]
    assert sent[0]["header"]["packet_type"] == "initial" and sent[-1]["header"]["packet_type"] == "1RTT"
    q = res.totals["flows"]["qn"]["quinn"]
    # Every datagram the client sent, with its length: quinn's own UDP byte count.
    assert sum(d["raw"]["length"] for d in sent) == q["bytes_sent"]
    # The server got fewer: the 1 % lost (3 % allowed for the few hundred draws) and those in
    # flight when the run ends (at most the final window's worth of 1472 B datagrams).
    missing = len(sent) - len(got)
    assert 0 < missing <= 0.03 * len(sent) + q["cwnd"] / 1472 + 1, (len(got), len(sent), q["cwnd"])
    metrics = [e["data"] for e in files["client"] if e["name"] == "recovery:metrics_updated"]
    cwnd = [m["cwnd"] for m in metrics]
    srtt = [m["smoothed_rtt"] for m in metrics if m["smoothed_rtt"] > 0]
    # NewReno from RFC 9002's initial window (10 datagrams of 1472 B), never below its 2-datagram
    # floor, and the summary's final window is the last one written.
    assert cwnd[0] == 14_720 and min(cwnd) >= 2 * 1472 and len(set(cwnd)) > 10, (min(cwnd), len(set(cwnd)))
    assert cwnd[-1] == q["cwnd"]
    # The smoothed RTT (ms) after its first sample: at least the bottleneck's 20 ms round trip,
    # at most the path's (under 25 ms with the access links) plus the 30-packet queue
    # (30 x 1507 B at 10 Mbit/s = 36 ms) and quinn's 25 ms ACK delay.
    assert min(srtt[1:]) >= 20.0 and max(srtt[1:]) <= 25 + 36 + 25, (min(srtt[1:]), max(srtt[1:]))
