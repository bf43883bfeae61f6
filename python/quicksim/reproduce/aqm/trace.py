"""The `aqm` reproduction's trace-driven link: a mahimahi `mm-link` trace read as the link reads
it (one 1500-B delivery opportunity per line, at a whole millisecond, repeating with its last
time as period; `docs/links.md`), and what the reproduction needs of it: the capacity of a
window, the rate over 100-ms windows (the plots' link rate), and the queueing delay of a packet
that arrives behind a given backlog (the time until the opportunities from then on carry it)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

#: Bytes one opportunity carries (the link's default `opportunity`).
OPPORTUNITY_B = 1500
#: The window of the rate drawn as the link's rate (the cellular walk changes every 100 ms).
RATE_WINDOW_S = 0.1


@dataclass(frozen=True)
class Trace:
    """An `mm-link` trace file."""

    path: Path

    @cached_property
    def times_ms(self) -> Any:
        """The opportunity times of one period (ms, non-decreasing, as int64)."""
        import numpy as np

        return np.array([int(x) for x in self.path.read_text().split()], dtype=np.int64)

    @property
    def period_ms(self) -> int:
        return int(self.times_ms[-1])

    @property
    def mean_rate_bps(self) -> float:
        return len(self.times_ms) * OPPORTUNITY_B * 8 / (self.period_ms / 1e3)

    def count_before(self, t_s: Any) -> Any:
        """Opportunities at times < t (t in s, array): whole periods, then those of the last.
        An opportunity at exactly t serves a packet waiting at t, so it is not before t."""
        import numpy as np

        t_ms = np.asarray(t_s, dtype=float) * 1e3
        per, n = self.period_ms, len(self.times_ms)
        whole = np.floor(t_ms / per)
        into = t_ms - whole * per
        return whole.astype(np.int64) * n + np.searchsorted(self.times_ms, into, side="left")

    def opportunity_time_s(self, k: Any) -> Any:
        """The time (s) of the k-th opportunity from t = 0 (k counted from 0, array)."""
        import numpy as np

        k = np.asarray(k, dtype=np.int64)
        n = len(self.times_ms)
        return (self.times_ms[k % n] + (k // n) * self.period_ms) / 1e3

    def capacity_bytes(self, t0: float, t1: float) -> float:
        """The bytes the link can deliver in [t0, t1)."""
        return float(self.count_before(t1) - self.count_before(t0)) * OPPORTUNITY_B

    def rate_at(self, t_s: Any) -> Any:
        """The link's rate (bit/s) over the 100-ms window holding each t (array)."""
        import numpy as np

        t = np.asarray(t_s, dtype=float)
        w0 = np.floor(t / RATE_WINDOW_S) * RATE_WINDOW_S
        n = self.count_before(w0 + RATE_WINDOW_S) - self.count_before(w0)
        return n * OPPORTUNITY_B * 8 / RATE_WINDOW_S

    def wait_s(self, t_s: Any, frame_bytes: Any) -> Any:
        """The queueing delay of a packet arriving at t behind `frame_bytes` waiting (arrays): the
        opportunities from t on carry the backlog; the packet waits until the one that carries
        its last byte ahead (0 behind an empty queue)."""
        import numpy as np

        t = np.asarray(t_s, dtype=float)
        need = np.ceil(np.asarray(frame_bytes, dtype=float) / OPPORTUNITY_B).astype(np.int64)
        first = self.count_before(t)
        done = self.opportunity_time_s(first + np.maximum(need, 1) - 1)
        return np.where(need > 0, done - t, 0.0)
