"""Runs a command (iperf3's client) and samples `ss -tin` beside it until it exits: the kernel's
congestion window over time for linux-vs-model. A script on its own (the standard library
only, no quicksim import), started as the client of a `kind = "program"` flow inside the
sender's namespace:

    python3 sampler.py --out ss.txt --interval 0.1 --dst 10.0.0.4 -- iperf3 -c 10.0.0.4 ...

The command's standard output and error pass through (iperf3's JSON lands in the flow's
`client.stdout`); its exit status is the sampler's. `--out` gets, per sample, a line
`# t=<seconds since the command started>` followed by `ss -tinH dst DST`'s output.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import signal
import subprocess
import sys
import time

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    # The command dies with the sampler (quicksim kills the sampler's process group on a normal
    # stop; after a SIGKILL of quicksim the sampler gets its own death signal, and so must this).
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def main(argv: list[str] | None = None) -> int:
    """Start the command, sample until it exits, return its exit status."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="file for the ss samples")
    ap.add_argument("--interval", type=float, default=0.1, help="seconds between samples")
    ap.add_argument("--dst", required=True, help="the peer's address (ss's filter)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    a = ap.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd or a.interval <= 0:
        ap.error("give a positive --interval and a command after --")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, preexec_fn=_die_with_parent)
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    with open(a.out, "w", encoding="utf-8") as out:
        k = 0
        while proc.poll() is None:
            t = time.monotonic() - t0
            ss = subprocess.run(["ss", "-tinH", "dst", a.dst], capture_output=True, text=True)
            out.write(f"# t={t:.6f}\n{ss.stdout}")
            out.flush()  # each sample on disk as taken: a killed sampler keeps what it took
            k += 1
            # On a grid from the start, so a slow `ss` does not make the samples drift.
            pause = t0 + k * a.interval - time.monotonic()
            if pause > 0:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(pause)
    return proc.returncode if proc.returncode >= 0 else 128 - proc.returncode


if __name__ == "__main__":
    sys.exit(main())
