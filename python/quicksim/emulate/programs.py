"""The programs of `kind = "program"` flows: each command run in its host's namespace
(`ip netns exec`), its output saved in the run folder (`<flow>.client.stdout`, ...), killed
with quicksim (PR_SET_PDEATHSIG) and stopped at the end of the run (SIGTERM, then SIGKILL).

The death signal is set by `setpriv --pdeathsig KILL` (util-linux) in front of the command
rather than by a `preexec_fn`: without one, Python starts the child with vfork, which does not
copy quicksim's page tables; a fork of the whole process stalled the real-time loop by ~20 ms.
"""

from __future__ import annotations

import ctypes
import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import IO, Any

from ..errors import ScenarioError

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def check_commands(flows: list[dict[str, Any]]) -> None:
    """Each command's program exists (one line naming the flow's field otherwise)."""
    for f in flows:
        for role in ("client", "server"):
            cmd = f.get(role)
            if not cmd:
                continue
            try:
                words = shlex.split(cmd)
            except ValueError as e:
                raise ScenarioError(f"flows[{f['index']}].{role}: {cmd!r} is not a command: {e}") from None
            if not words or shutil.which(words[0]) is None:
                name = words[0] if words else cmd
                raise ScenarioError(f"flows[{f['index']}].{role}: command {name!r} not found")


class Program:
    """One running command of a flow (`role`: client or server) in namespace `ns`."""

    def __init__(self, flow: str, role: str, command: str, ns: str, out: Path) -> None:
        self.flow, self.role, self.command = flow, role, command
        self.stdout_path = out / f"{flow}.{role}.stdout"
        self.stderr_path = out / f"{flow}.{role}.stderr"
        # Open while the program runs (closed by `stop`): no `with` block spans that.
        self._files: list[IO[bytes]] = [
            open(self.stdout_path, "wb"),  # noqa: SIM115
            open(self.stderr_path, "wb"),  # noqa: SIM115
        ]
        self.started = time.monotonic()
        self.killed = False
        argv = ["ip", "netns", "exec", ns, *shlex.split(command)]
        setpriv = shutil.which("setpriv")
        self.proc = subprocess.Popen(
            [setpriv, "--pdeathsig", "KILL", *argv] if setpriv else argv,
            stdin=subprocess.DEVNULL,
            stdout=self._files[0],
            stderr=self._files[1],
            preexec_fn=None if setpriv else _die_with_parent,
            start_new_session=True,  # Ctrl-C reaches quicksim, which stops the programs itself
        )

    def exited(self) -> int | None:
        """The exit status if it has exited."""
        return self.proc.poll()

    def stop(self, grace_s: float = 2.0) -> None:
        """SIGTERM, and SIGKILL after `grace_s` if it is still running."""
        if self.proc.poll() is None:
            self.killed = True
            for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        for f in self._files:
            f.close()

    def report(self, t0: float) -> dict[str, Any]:
        """The program's block in the flow's `program` totals."""
        return {
            "command": self.command,
            "exit_code": self.proc.returncode,
            "stopped_by_quicksim": self.killed,
            "started_s": round(self.started - t0, 6),
            "stdout": self.stdout_path.name,
            "stderr": self.stderr_path.name,
        }
