"""Write the training scenarios of quicksim's profile-guided optimisation (scripts/pgo-profile).

The profile should describe what quicksim spends its time on in general, not one benchmark: the
four `quicksim bench` scenarios (shortened), every bundled scenario (handshake, loss, jitter,
flow control, rate changes, UDP, CUBIC-free NewReno and cc="none"), and the ACK-policy variants
of the ACK-frequency study, each as the JSON the Python front hands to the core.

Usage: python3 scripts/pgo_training.py OUT_DIR
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

from quicksim import api, bench
from quicksim.reproduce.ack_frequency import VARIANTS

# Long scenarios are cut: a profile needs the paths and their relative weights, not 200 s.
MAX_DURATION = "30s"


def scenarios() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {
        "bench-linksharing": bench.linksharing_scenario(),
        "bench-scale-100x1g": bench.scale_100x1g_scenario(duration_s=3.0),
        "bench-scale-10g": bench.scale_10g_scenario(duration_s=1.0),
        "bench-many-flows": bench.many_flows_scenario(idle=2_000, duration_s=5.0),
    }
    bundled = resources.files("quicksim") / "scenarios"
    for f in sorted(bundled.iterdir(), key=lambda p: p.name):
        if f.name.endswith(".toml"):
            doc = api.load_scenario(str(f))
            doc.pop("sweep", None)
            out[f"scenario-{f.name[:-5]}"] = api.apply_overrides(doc, [f"run.duration={MAX_DURATION}"])
    ack = api.load_scenario(str(bundled / "ack-ratio.toml"))
    ack.pop("sweep", None)
    for key, (_, sets) in VARIANTS.items():
        out[f"ack-{key}"] = api.apply_overrides(ack, [*sets, "run.duration=5s"])
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name, doc in scenarios().items():
        (out / f"{name}.json").write_text(api._to_json(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
