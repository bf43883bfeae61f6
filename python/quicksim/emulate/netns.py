"""Network namespaces and TUN devices of a real-time run (docs/emulation.md).

Each emulated host gets a namespace `qs-<pid>-<host>` (the prefix and quicksim's process id make
it unique per run and let the next run find what a killed one left) holding one TUN device `qs0`
(IFF_TUN | IFF_NO_PI: a read or write is one IPv4 packet) with the host's 10.x address, the
route to 10.0.0.0/8 through it, its path MTU, and IPv6 off (so only the programs' packets cross).
A TUN device without IFF_VNET_HDR has no segmentation offloads: the kernel hands over MSS-sized
segments, as on a wire. The device is made in quicksim's namespace under a temporary name,
moved in and renamed; it is not persistent, so it vanishes with its descriptor, even after
SIGKILL. `Namespaces` owns everything it makes and removes it on exit, error or interrupt.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

from ..errors import SimulationError

PREFIX = "qs-"
DEVICE = "qs0"
_LEFTOVER = re.compile(r"^qs-(\d+)-\S+$")
_TUNSETIFF = 0x400454CA
_IFF_TUN = 0x0001
_IFF_NO_PI = 0x1000


def ns_name(host: str, pid: int | None = None) -> str:
    """The namespace of `host` in the run of process `pid` (default: this one)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", host)
    return f"{PREFIX}{os.getpid() if pid is None else pid}-{safe}"


def ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`ip ARGS`; a failure raises SimulationError with ip's own message."""
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SimulationError(f"emulation: `ip {' '.join(args)}` failed: {r.stderr.strip()}")
    return r


def namespaces() -> list[str]:
    """The names of the network namespaces (`ip netns list`)."""
    out = ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_inside(ns: str) -> None:
    """Kills every process in namespace `ns` (SIGKILL: they belong to a run that is over)."""
    for pid in ip("netns", "pids", ns, check=False).stdout.split():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def clean_leftovers() -> list[str]:
    """Removes the namespaces (and the processes in them) that runs of dead quicksim processes
    left, saying so on stderr; returns their names."""
    removed = []
    for ns in sorted(namespaces()):
        m = _LEFTOVER.match(ns)
        if m is None or _alive(int(m.group(1))):
            continue
        kill_inside(ns)
        ip("netns", "del", ns, check=False)
        removed.append(ns)
    if removed:
        print(f"quicksim: removed what a killed run left: namespaces {', '.join(removed)}", file=sys.stderr)
    return removed


def check_environment() -> None:
    """One clear line if this machine or user cannot emulate: root, /dev/net/tun, `ip`."""
    if os.geteuid() != 0:
        raise SimulationError("emulation needs root (network namespaces and TUN devices): run as root")
    if not os.path.exists("/dev/net/tun"):
        raise SimulationError("emulation needs /dev/net/tun (the tun kernel module): not found")
    if subprocess.run(["ip", "-V"], capture_output=True).returncode != 0:
        raise SimulationError("emulation needs the `ip` command (iproute2)")


def _open_tun(name: str) -> int:
    try:
        fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        raise SimulationError(f"emulation: cannot open /dev/net/tun: {e.strerror}") from None
    try:
        fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH", name.encode(), _IFF_TUN | _IFF_NO_PI))
    except OSError as e:
        os.close(fd)
        raise SimulationError(f"emulation: cannot create TUN device {name}: {e.strerror}") from None
    return fd


class Namespaces:
    """The namespaces and TUN devices of the hosts in `plan["hosts"]`, made on entry and removed
    on exit. `fds` and `names` are in the plan's host order."""

    def __init__(self, hosts: Sequence[dict[str, Any]]) -> None:
        self.hosts = list(hosts)
        self.names = [ns_name(h["name"]) for h in self.hosts]
        self.fds: list[int] = []
        self._made: list[str] = []

    def __enter__(self) -> Namespaces:
        try:
            existing = set(namespaces())
            for ns in self.names:
                if ns in existing:
                    raise SimulationError(f"emulation: network namespace {ns} is in use")
            for i, (h, ns) in enumerate(zip(self.hosts, self.names, strict=True)):
                self._make(i, h, ns)
        except BaseException:
            self.close()
            raise
        return self

    def _make(self, i: int, h: dict[str, Any], ns: str) -> None:
        ip("netns", "add", ns)
        self._made.append(ns)
        ip(
            "netns",
            "exec",
            ns,
            "sh",
            "-c",
            "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; "
            "echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6",
        )
        ip("-n", ns, "link", "set", "lo", "up")
        tmp = f"qs{os.getpid() % 1_000_000}t{i}"[:15]
        fd = _open_tun(tmp)
        self.fds.append(fd)
        ip("link", "set", tmp, "netns", ns)
        ip("-n", ns, "link", "set", tmp, "name", DEVICE)
        ip("-n", ns, "link", "set", DEVICE, "mtu", str(h["mtu"]), "up")
        ip("-n", ns, "addr", "add", f"{h['address']}/32", "dev", DEVICE)
        ip("-n", ns, "route", "add", "10.0.0.0/8", "dev", DEVICE)

    def close(self) -> None:
        """Removes what was made: processes inside, the devices (their descriptors), namespaces."""
        for ns in self._made:
            kill_inside(ns)
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []
        for ns in self._made:
            for _ in range(50):  # a namespace with a process still exiting may refuse once
                if ip("netns", "del", ns, check=False).returncode == 0 or ns not in namespaces():
                    break
                time.sleep(0.02)
        self._made = []

    def __exit__(self, *exc: object) -> None:
        self.close()
