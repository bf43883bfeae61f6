"""The scenarios, measurements and theory of `buffer-sizing-sqrt-n`: n long-lived TCP flows over a
dumbbell with spread RTTs, the buffer ladder and the smallest buffer reaching a utilization, the
synchronization index of the drops, and the short-flow queue's M/G/1 tail bound."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...metrics_quantiles import held_steps

#: Frame bytes on the bottleneck (1500 B IP packets; the dumbbell's links add no framing).
PACKET_B = 1500
#: TCP payload per packet: 20 B IP, 20 B TCP, 12 B timestamps.
MSS_B = PACKET_B - 52
#: Two-way propagation delays of the long flows: uniform over [RTT_MIN_S, RTT_MAX_S], taken as
#: RTT_CLASSES equal-width classes at their midpoints (one sender per class, a flow group each).
RTT_MIN_S = 0.080
RTT_MAX_S = 0.120
RTT_CLASSES = 10
#: The bottleneck's one-way delay; the rest of each RTT is on the sender's access link.
BOTTLENECK_DELAY_S = 0.005
BOTTLENECK = "bottleneck:router1->router2"
#: Every long flow starts at a time uniform over [0, START_SPREAD_S].
START_SPREAD_S = 2.0
#: The bin of the links table (the run's `record_interval`): `utilization` sums whole bins, so
#: warm-up and measurement windows are whole bins (`windows`).
RECORD_BIN_S = 0.5
#: The same for the short-flow runs: fine, so that the window [0.1 span, span] lies on bin
#: edges within 10 ms at every rate and both rates measure the same arrivals (scaled).
SHORT_RECORD_BIN_S = 0.01


def class_rtts(classes: int = RTT_CLASSES, lo: float = RTT_MIN_S, hi: float = RTT_MAX_S) -> list[float]:
    """The two-way propagation delay (s) of each RTT class: midpoints of equal-width classes."""
    return [lo + (hi - lo) * (i + 0.5) / classes for i in range(classes)]


def mean_rtt(classes: int = RTT_CLASSES) -> float:
    """The flows' mean two-way propagation delay (s); flows are spread evenly over the classes."""
    rtts = class_rtts(classes)
    return sum(rtts) / len(rtts)


def bdp_packets(rate_bps: float, rtt_s: float) -> float:
    """RTT x C in packets of PACKET_B."""
    return rate_bps * rtt_s / (PACKET_B * 8)


def sqrt_rule(rate_bps: float, n: int, rtt_s: float | None = None) -> float:
    """Appenzeller's buffer RTT x C / sqrt(n), in packets."""
    return bdp_packets(rate_bps, mean_rtt() if rtt_s is None else rtt_s) / math.sqrt(n)


def _access_delays(rtts: Sequence[float]) -> list[str]:
    # RTT = 2 (access + bottleneck delay); the receivers' access links have none.
    return [f"{(r / 2 - BOTTLENECK_DELAY_S) * 1e3:.6f}ms" for r in rtts]


def long_flows_doc(
    n: int,
    rate_bps: float,
    buffer_pkts: int,
    duration_s: float,
    cc: str = "tcp newreno",
    seed: int = 1,
    classes: int = RTT_CLASSES,
    equal_rtt_s: float | None = None,
    record_queue: bool = False,
    ack_every: int | None = None,
) -> dict[str, Any]:
    """n saturated flows (`cc` = "TRANSPORT CONTROLLER": "tcp newreno", "quic cubic") spread
    evenly over `classes` RTT classes (or all with `equal_rtt_s`), starting uniformly in
    [0, START_SPREAD_S], through a DropTail buffer. `ack_every`: TCP's receivers ACK every
    that many segments (None: the model's default, a delayed ACK every second one)."""
    if n % classes:
        raise ValueError(f"n: {n} is not a multiple of the {classes} RTT classes")
    transport, algo = cc.split()
    rtts = [equal_rtt_s] * classes if equal_rtt_s is not None else class_rtts(classes)
    flows = [
        {
            "name": f"long{i}",
            "count": n // classes,
            "kind": transport,
            "src": f"sender{i + 1}",
            "dst": f"receiver{i + 1}",
            "start": {"dist": "uniform", "min": "0s", "max": f"{START_SPREAD_S:g}s"},
        }
        for i in range(classes)
    ]
    return {
        "name": f"sqrtn-long-{transport}-{algo}-n{n}",
        "run": {
            "duration": f"{duration_s:g}s",
            "seed": seed,
            "record_interval": f"{RECORD_BIN_S:g}s",
            "record": {
                "queues": ["bottleneck"] if record_queue else False,
                "links": ["bottleneck"],
                "conn": False,
                "flows": False,
                "drops": True,
            },
        },
        "dumbbell": {
            "pairs": classes,
            "mtu": f"{PACKET_B}B",
            "access": {"rate": "100Gbps", "delay": "0s"},
            "access_delays": _access_delays(rtts),
            "bottleneck": {
                "rate": f"{rate_bps:g}bps",
                "delay": f"{BOTTLENECK_DELAY_S * 1e3:g}ms",
                "queue": {"packets": int(buffer_pkts)},
            },
        },
        transport: {"cc": algo} | ({"ack_every": ack_every} if transport == "tcp" and ack_every else {}),
        "flows": flows,
    }


def utilization(result: Any, rate_bps: float, t0: float, t1: float) -> float:
    """Bottleneck frame bytes over [t0, t1) / capacity (the links table's bins)."""
    links = result.links
    bn = links[(links["link"].astype(str) == BOTTLENECK) & (links["t_s"] >= t0) & (links["t_s"] < t1)]
    return float(bn["bytes"].sum()) * 8 / (t1 - t0) / rate_bps


def sync_index(drops: Any, n: int, bin_s: float, t0: float, t1: float) -> tuple[float, float]:
    """(synchronization index, q): [t0, t1) is cut into bins of `bin_s` (one mean RTT); k_t is
    the number of the n flows with at least one bottleneck drop in bin t, q = mean(k) / n. The
    index is the mean pairwise correlation of the flows' loss indicators, from
    Var(k) = n q (1 - q) (1 + (n - 1) index): 0 when flows lose independently (k binomial),
    1 when they all lose in the same bins (k is 0 or n). NaN without drops."""
    import numpy as np

    d = drops[(drops["queue"].astype(str) == BOTTLENECK) & (drops["t_s"] >= t0) & (drops["t_s"] < t1)]
    # Whole bins only (a part bin at the end is left out); 1e-9 keeps 0.6 / 0.1 at 6 bins.
    bins = max(1, int((t1 - t0) / bin_s + 1e-9))
    d = d[d["t_s"] < t0 + bins * bin_s]
    which = np.minimum(((d["t_s"].to_numpy(dtype=float) - t0) / bin_s).astype(int), bins - 1)
    pairs = {(int(w), f) for w, f in zip(which, d["flow"].astype(str), strict=True)}
    k = np.zeros(bins)
    for w, _ in pairs:
        k[w] += 1
    q = float(k.mean()) / n
    if q <= 0 or q >= 1 or n < 2:
        return math.nan, q
    return (float(k.var()) / (n * q * (1 - q)) - 1) / (n - 1), q


def cycle_s(rate_bps: float, n: int) -> float:
    """The sawtooth period (s) of a NewReno flow with the mean window of n flows sharing
    RTT x C plus a sqrt(n)-rule buffer: W = (BDP + rule) / n packets on average; the window goes
    from W_max / 2 to W_max, one packet per RTT, so W = 3/4 W_max and a cycle lasts W_max / 2 =
    2/3 W RTTs. The number of cycles in a window is the number of independent looks at the
    aggregate window it gets (each flow loses about once a cycle)."""
    return 2 / 3 * mean_window(rate_bps, n) * mean_rtt()


def mean_window(rate_bps: float, n: int) -> float:
    """The mean window (packets) of n flows sharing RTT x C plus a sqrt(n)-rule buffer."""
    return (bdp_packets(rate_bps, mean_rtt()) + sqrt_rule(rate_bps, n)) / n


#: The smallest mean window at which the paper's model (each window an AIMD sawtooth, every loss
#: repaired by fast retransmit) describes a NewReno flow: the sawtooth's trough, 2/3 of the mean,
#: must hold dupthresh + 1 = 4 segments (RFC 5681 §3.2, RFC 9002 §6.1.1: 3 duplicate ACKs or 3
#: later packets acknowledged), else a loss there waits for a retransmission timeout.
MODEL_MIN_WINDOW = 6.0


def spread_factor(cc: str) -> float:
    """The relative spread of a flow's window under `cc` ("tcp cubic", "quic newreno") over the
    model's NewReno: a sawtooth linear from beta W_max to W_max has standard deviation over mean
    (1 - beta) / (sqrt 3 (1 + beta)), 1 / (3 sqrt 3) for beta = 0.5; CUBIC's beta = 0.7 (RFC 9438
    §4.6), which in its Reno-friendly region (W_est, §4.3, the region of these windows at a 100 ms
    RTT) also grows linearly, gives 0.3 / 1.7 / (1/3) = 0.53 of it. The model's buffer scales so."""
    beta = 0.7 if cc.split()[-1] == "cubic" else 0.5
    return (1 - beta) / (1 + beta) * 3


def _erfinv(y: float) -> float:
    lo, hi = 0.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def model_over_rule(target: float, n: int) -> float:
    """The paper's buffer for utilization `target` with n desynchronized Reno flows, over
    RTT x C / sqrt(n): Appenzeller et al. section 3 bound the utilization by
    Util >= erf(3 sqrt 3 / (2 sqrt 2) x B / ((RTT x C + B) / sqrt n)) (each window uniform over
    its sawtooth, standard deviation W / (3 sqrt 3), their sum Gaussian, the buffer centred on its
    mean); solved for B: k / (1 - k / sqrt n) times the rule, k = erf^-1(target) 2 sqrt 2 /
    (3 sqrt 3). 0.92-1.03 for 98 %, 1.11-1.28 for 99.5 %, 1.31-1.54 for 99.9 % (n = 1600 ... 50):
    the rule itself gives erf(3 sqrt 3 / (2 sqrt 2)) = 98.9 % for large n."""
    k = _erfinv(target) * 2 * math.sqrt(2) / (3 * math.sqrt(3))
    return k / (1 - k / math.sqrt(n))


def windows(
    rate_bps: float, n: int, warm: tuple[float, float], measure: tuple[float, float]
) -> tuple[float, float]:
    """(warm-up, measurement window) in s for n flows at `rate_bps`: each (seconds, cycles) pair
    gives the larger of the two, so slow links and many flows get whole seconds and few flows
    on a fast link get whole sawtooth cycles (`cycle_s`)."""
    c = cycle_s(rate_bps, n)

    def bins(x: float) -> float:
        # Whole bins of the links table, so that the window's edges are bin edges.
        return math.ceil(x / RECORD_BIN_S - 1e-9) * RECORD_BIN_S

    return bins(max(warm[0], warm[1] * c)), bins(max(measure[0], measure[1] * c))


@dataclass
class Probe:
    """One run of the long-flow scenario at one buffer size."""

    buffer_pkts: int
    utilization: float
    sync: float
    loss_q: float
    drops: int
    wall_s: float
    peak_rss_kib: float
    bottleneck_packets: float


def ladder(
    measure: Callable[[int], Probe], targets: Sequence[float], start: int, factor: float, limit: int
) -> list[Probe]:
    """Probe buffers (packets) on a geometric ladder from `start` until it brackets every
    target: down (/ factor, at least one packet less) until a buffer misses the lowest target or
    one packet is reached, up (x factor, at least one more) until one reaches the highest; a
    step beyond `limit` packets is an error. Returns the probes in the order run. One ladder
    serves all targets (`threshold`)."""
    if factor <= 1:
        raise ValueError(f"ladder factor: {factor} is not above 1")
    lo = hi = measure(max(1, start))
    probes = [lo]
    while lo.utilization >= min(targets) and lo.buffer_pkts > 1:
        lo = measure(max(1, min(lo.buffer_pkts - 1, round(lo.buffer_pkts / factor))))
        probes.append(lo)
    while hi.utilization < max(targets):
        b = max(hi.buffer_pkts + 1, round(hi.buffer_pkts * factor))
        if b > limit:
            raise ValueError(f"targets: utilization {max(targets)} not reached with {hi.buffer_pkts} packets")
        hi = measure(b)
        probes.append(hi)
    return probes


#: 1 - utilization is floored here before its log (a link busy all the window gives exactly 0).
MIN_DEFICIT = 1e-6


def threshold(probes: Sequence[Probe], target: float) -> int:
    """The smallest buffer (packets) reaching `target` from a ladder's probes: hi is the
    smallest probed buffer from which on every probe reaches it, lo the probe just below; in
    between, log(1 - utilization) is taken as linear in the buffer (the exponential tail of
    the idle probability) and the crossing rounded up, so lo < result <= hi. Without a probe
    below hi, hi. Assumes utilization grows with the buffer; a probe that steps back (one run's
    noise) moves hi up to where it holds."""
    ps = sorted(probes, key=lambda p: p.buffer_pkts)
    i = len(ps)
    while i > 0 and ps[i - 1].utilization >= target:
        i -= 1
    if i == len(ps):
        raise ValueError(f"target: no probe reaches utilization {target}")
    hi = ps[i]
    if i == 0:
        return hi.buffer_pkts
    lo = ps[i - 1]

    def f(u: float) -> float:
        return math.log(max(1 - u, MIN_DEFICIT))

    span = f(hi.utilization) - f(lo.utilization)
    x = (f(target) - f(lo.utilization)) / span if span < 0 else 1.0
    b = lo.buffer_pkts + min(max(x, 0.0), 1.0) * (hi.buffer_pkts - lo.buffer_pkts)
    return min(hi.buffer_pkts, max(lo.buffer_pkts + 1, math.ceil(b - 1e-9)))


# --- short flows -------------------------------------------------------------------------------


def slow_start_bursts(packets: int, initial_window: int, max_window: int) -> list[int]:
    """The bursts (packets per RTT) of a flow of `packets` that never leaves slow start, with ACKs
    for every packet: IW, 2 IW, 4 IW, ... up to the receive window `max_window`, and the rest."""
    out = []
    w = initial_window
    left = packets
    while left > 0:
        out.append(min(w, left))
        left -= w
        w = min(2 * w, max_window)
    return out


def burst_moments(
    flow_packets: Sequence[int], initial_window: int, max_window: int
) -> tuple[float, float, float]:
    """(E[X], E[X^2], bursts per flow) over every burst of the given flows."""
    s1 = s2 = 0.0
    count = 0
    for p in flow_packets:
        for x in slow_start_bursts(int(p), initial_window, max_window):
            s1 += x
            s2 += x * x
            count += 1
    return s1 / count, s2 / count, count / max(len(flow_packets), 1)


def queue_tail(b: Any, load: float, ex: float, ex2: float) -> Any:
    """The paper's short-flow bound P(Q >= b) = exp(-b 2 (1 - rho) / rho E[X] / E[X^2]): the
    queue of an M/G/1 queue fed by Poisson bursts of X packets (derivation in the report)."""
    import numpy as np

    return np.exp(-np.asarray(b, dtype=float) * 2 * (1 - load) / load * ex / ex2)


def lundberg_theta(bursts: Sequence[int], load: float) -> float:
    """The exact decay rate of the same M/G/1 batch queue: the positive root theta of
    lambda (E[e^(theta X)] - 1) = theta, lambda = load / E[X] bursts per packet time, over the
    empirical burst sizes X. `queue_tail`'s closed form truncates E[e^(theta X)] at the second
    order, which underestimates it, so its theta is larger (its tail thinner) than this one."""
    import numpy as np

    x = np.asarray(bursts, dtype=float)
    lam = load / x.mean()

    def f(th: float) -> float:
        return float(lam * (np.mean(np.exp(th * x)) - 1) - th)

    lo, hi = 1e-9, 2 * (1 - load) / load * float(x.mean()) / float(np.mean(x * x))
    while f(hi) < 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return (lo + hi) / 2


def short_flows_doc(
    rate_bps: float,
    load: float,
    count: int,
    mean_packets: float,
    shape: float,
    initial_window: int,
    rtt_s: float,
    max_window: int,
    seed: int = 1,
    sizes: Sequence[int] | None = None,
) -> tuple[dict[str, Any], float]:
    """(scenario, arrival span in s): `count` Pareto-sized TCP transfers (this mean, in packets
    of MSS_B payload, and shape) starting uniformly over a span set so they offer `load` x rate
    (the order statistics of uniform starts are a Poisson process given their number). The
    draws are keyed by flow name and seed, so two rates with the same count see the same sizes
    and the same starts scaled by the span. ACK every packet, a receive window of `max_window`
    packets (45 is the 64 KB of TCP without window scaling), a buffer never reached (10 000
    packets): no flow sees a loss, so none leaves slow start. With `sizes` (packets per flow,
    `slow_start_sizes`), those flows instead, one flow group of fixed size per distinct size
    (independent uniform starts per group: together still uniform starts with iid sizes), over
    a span set by their total so that they offer exactly `load`."""
    span_s = count * mean_packets * PACKET_B * 8 / (rate_bps * load)
    groups: list[dict[str, Any]] = [
        {
            "name": "short",
            "count": count,
            "bytes": {"dist": "pareto", "mean": f"{round(mean_packets * MSS_B)}B", "shape": shape},
        }
    ]
    # Each packet on the bottleneck changes its queue at most twice (in, out): the data, plus
    # up to 3 handshake and closing packets per flow (none lost: the buffer is never reached).
    # The Pareto's own draws have no bound; twice their mean, and `queue_ccdf` refuses a cut.
    packets = math.ceil(2 * count * mean_packets)
    if sizes is not None:
        span_s = sum(sizes) * PACKET_B * 8 / (rate_bps * load)
        packets = sum(sizes)
        counts: dict[int, int] = {}
        for p in sizes:
            counts[int(p)] = counts.get(int(p), 0) + 1
        groups = [
            {"name": f"short{p}", "count": k, "bytes": f"{p * MSS_B}B"} for p, k in sorted(counts.items())
        ]
    doc = {
        "name": f"sqrtn-short-{rate_bps / 1e6:g}M-{load:g}",
        "run": {
            "duration": f"{span_s * 1.1:.6f}s",
            "seed": seed,
            "record_interval": f"{SHORT_RECORD_BIN_S:g}s",
            "record": {
                "queues": ["bottleneck"],
                "links": ["bottleneck"],
                "conn": False,
                "flows": False,
                "max_samples": max(1_000_000, 2 * (packets + 3 * count)),
            },
        },
        "dumbbell": {
            "pairs": 1,
            "mtu": f"{PACKET_B}B",
            "access": {"rate": "100Gbps", "delay": "0s"},
            "access_delays": _access_delays([rtt_s]),
            "bottleneck": {
                "rate": f"{rate_bps:g}bps",
                "delay": f"{BOTTLENECK_DELAY_S * 1e3:g}ms",
                "queue": {"packets": 10000},
            },
        },
        "tcp": {
            "cc": "newreno",
            "initial_window": initial_window,
            "ack_every": 1,
            "recv_buffer": f"{max_window * MSS_B}B",
        },
        "flows": [
            g
            | {
                "kind": "tcp",
                "src": "sender1",
                "dst": "receiver1",
                "app": "bulk",
                "start": {"dist": "uniform", "min": "0s", "max": f"{span_s:.6f}s"},
            }
            for g in groups
        ],
    }
    return doc, span_s


def slow_start_limit(initial_window: int, max_window: int) -> int:
    """The largest flow (packets) whose every burst is a slow-start doubling below the window
    cap: IW + 2 IW + ... while the next burst stays under `max_window` (62 for 2 and 45)."""
    total, w = 0, initial_window
    while w < max_window:
        total += w
        w *= 2
    return total


def slow_start_sizes(
    count: int, mean_packets: float, shape: float, max_packets: int, seed: int = 1
) -> list[int]:
    """`count` flow sizes in packets: the Pareto of this mean and shape (scale = mean (shape - 1)
    / shape packets) truncated to [scale, max_packets] by inverse transform, rounded up to whole
    packets; drawn from numpy's PCG64 with `seed`, so both line rates get the same flows."""
    import numpy as np

    scale = mean_packets * (shape - 1) / shape
    u = np.random.Generator(np.random.PCG64(seed)).random(count)
    x = scale * (1 - u * (1 - (scale / max_packets) ** shape)) ** (-1 / shape)
    return [int(v) for v in np.minimum(np.ceil(x - 1e-9), max_packets)]


def queue_ccdf(result: Any, t0: float, t1: float, levels: Any) -> Any:
    """P(Q >= b) for each b of `levels`: the fraction of time in [t0, t1) the bottleneck queue
    held at least b packets (the queue series is sampled at every change)."""
    import numpy as np

    q = bottleneck_queue(result, t1)
    v, dt = held_steps(q["t_s"], q["packets"], t0, t1)
    levels = np.asarray(levels, dtype=float)
    return np.array([dt[v >= b].sum() for b in levels]) / (t1 - t0)


def bottleneck_queue(result: Any, t1: float) -> Any:
    """The bottleneck's queue series by time, refusing one whose recording stopped at
    `run.record.max_samples` before `t1`: `held_steps` would hold its last sample to `t1`, a
    standing queue that was never there."""
    q = result.queues
    for cut in result.meta.get("truncated_series") or []:
        ours = isinstance(cut, dict) and cut.get("table") == "queue" and cut.get("name") == BOTTLENECK
        if ours and cut["last_t_s"] < t1:
            cap = result.scenario.get("run", {}).get("record", {}).get("max_samples", 1_000_000)
            raise ValueError(
                f"run.record.max_samples: {cap} samples of {BOTTLENECK}'s queue end at "
                f"{cut['last_t_s']:.3f} s, before {t1:.3f} s; raise it"
            )
    return q[q["queue"].astype(str) == BOTTLENECK].sort_values("t_s", kind="stable")
