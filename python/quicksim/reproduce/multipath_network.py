"""Fluid equilibria of whole networks of single-path and multipath users: user classes over
shared links of given capacities, each link's loss rate at the point where every congested
link is exactly full, and every user's per-path rate there, for the algorithms of
`multipath_model` (uncoupled NewReno, LIA, OLIA, BALIA). This is the setting of the published
multipath scenarios (users of several types, some upgraded from TCP to a multipath
connection, sharing access links); `multipath_papers` builds its scenarios from it.

The model (Kelly's network fluid model with the per-path rules of `multipath_model`):

- a path is a list of links; its loss rate is p_r = 1 - prod_l (1 - p_l);
- given the path loss rates, every user of a class sits at the equilibrium of its algorithm
  (`multipath_model.equilibrium`: TCP's w = sqrt(2/p) on one path, the coupled rules'
  balance on several); the RTTs are fixed (no queueing delay in the model);
- a link's loss rate is positive only if the link is full: load_l = C_l where p_l > 0 and
  load_l <= C_l where p_l = 0 (complementary slackness; drop-tail queues drop only when
  full).

The loss rates are found by the multiplicative update p_l <- p_l * load_l / C_l (on a link
whose load goes as p^(-1/2), as one TCP's does, each step halves the error in log p), starting
from 1 % on every link. A link whose loss falls below 1e-12 carries less than its capacity and
counts as loss-free. OLIA puts a user's traffic only on its best paths (every other path at the
window floor), a jump when two paths' merits cross, and at a tie the loss rates do not say how
the traffic splits; so an OLIA user's split is state of the solver that moves toward the
better paths, as OLIA's own alpha terms move a connection (`_olia_rates`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .multipath_model import ALGOS, PathCond, equilibrium

__all__ = ["Link", "NetworkEquilibrium", "UserClass", "solve"]

#: Below this a link's loss rate counts as zero (the link is not a bottleneck).
P_FLOOR = 1e-12
#: The loss rates every link starts from.
_P_START = 0.01
#: Above this the model's sqrt(2/p) law has no meaning; the update never goes higher.
_P_CAP = 0.5
#: How fast an OLIA user's split follows the merits. 0.1 settled every case of the P1 network
#: tried (c1/c2 from 0.25 to 8, n1:n2 of 1:1, 5:1 and 1:5, with and without a window floor);
#: 0.5 oscillated without end in 12 of those 42 and 0.25 in 6 (the split and the loss rates
#: overshooting each other).
_SPLIT_GAIN = 0.1
#: The smallest share of an OLIA user's traffic a path keeps in the solver's split state.
_SPLIT_FLOOR = 1e-15
_LN2 = math.log(2.0)
#: Below this share a path that keeps losing gets a growing gain (`_Split`).
_SMALL_SHARE = 0.01
#: The largest gain a path's share can reach while it keeps losing (`_Split`).
_GAIN_CAP = 1e6
_LN_HUNDREDTH = math.log(0.01)


@dataclass(frozen=True)
class Link:
    """A link (one direction) and its capacity in packets per second."""

    name: str
    capacity_pps: float


@dataclass(frozen=True)
class UserClass:
    """`count` identical users running `algo` over `paths` (each a tuple of link names) with
    the round-trip times `rtts_s` (one per path)."""

    name: str
    count: int
    algo: str
    paths: tuple[tuple[str, ...], ...]
    rtts_s: tuple[float, ...]


@dataclass(frozen=True)
class NetworkEquilibrium:
    """Loss rate and load of every link, and the rate of one user of each class on each of its
    paths (packets per second)."""

    losses: Mapping[str, float]
    loads_pps: Mapping[str, float]
    rates_pps: Mapping[str, tuple[float, ...]]
    iterations: int

    def user_rate(self, cls: str) -> float:
        """One user of class `cls`: its total rate over all its paths."""
        return sum(self.rates_pps[cls])


def _check(links: Sequence[Link], classes: Sequence[UserClass]) -> dict[str, float]:
    caps: dict[str, float] = {}
    for i, link in enumerate(links):
        if link.name in caps:
            raise ValueError(f"links[{i}].name: {link.name!r} is listed twice")
        if not link.capacity_pps > 0:
            raise ValueError(f"links[{i}].capacity_pps: {link.capacity_pps} is not positive")
        caps[link.name] = link.capacity_pps
    names: set[str] = set()
    for i, c in enumerate(classes):
        where = f"classes[{i}]"
        if c.name in names:
            raise ValueError(f"{where}.name: {c.name!r} is listed twice")
        names.add(c.name)
        if c.algo not in ALGOS:
            raise ValueError(f"{where}.algo: {c.algo!r} is not one of {', '.join(ALGOS)}")
        if c.count < 1:
            raise ValueError(f"{where}.count: {c.count} is not a positive number of users")
        if not c.paths or len(c.paths) != len(c.rtts_s):
            raise ValueError(f"{where}: {len(c.paths)} paths and {len(c.rtts_s)} RTTs; give one RTT a path")
        for j, path in enumerate(c.paths):
            if not path:
                raise ValueError(f"{where}.paths[{j}]: empty; a path crosses at least one link")
            for name in path:
                if name not in caps:
                    raise ValueError(f"{where}.paths[{j}]: {name!r} is not a link")
            if not c.rtts_s[j] > 0:
                raise ValueError(f"{where}.rtts_s[{j}]: {c.rtts_s[j]} is not positive")
    if not classes:
        raise ValueError("classes: empty; give at least one user class")
    return caps


def _path_loss(path: Sequence[str], p: Mapping[str, float]) -> float:
    keep = 1.0
    for name in path:
        keep *= 1.0 - p[name]
    return 1.0 - keep


def solve(
    links: Sequence[Link],
    classes: Sequence[UserClass],
    *,
    w_min_pkts: float = 0.0,
    tol: float = 1e-6,
    max_iter: int = 20_000,
) -> NetworkEquilibrium:
    """The network's fluid equilibrium (see the module doc): every link with loss is full to
    within `tol` (relative), every loss-free link at most full. `w_min_pkts` floors every
    multipath window (as in `multipath_model.equilibrium`)."""
    caps = _check(links, classes)
    p = dict.fromkeys(caps, _P_START)
    windows: dict[str, list[float] | None] = {c.name: None for c in classes}
    split = {c.name: _Split(len(c.paths)) for c in classes}
    for it in range(1, max_iter + 1):
        load = dict.fromkeys(caps, 0.0)
        rates: dict[str, tuple[float, ...]] = {}
        for c in classes:
            conds = [PathCond(_path_loss(path, p), rtt) for path, rtt in zip(c.paths, c.rtts_s, strict=True)]
            if c.algo == "olia" and len(c.paths) > 1:
                rates[c.name] = _olia_rates(conds, split[c.name], w_min_pkts)
            else:
                e = equilibrium(c.algo, conds, w_min_pkts=w_min_pkts, tol=1e-11, w0_pkts=windows[c.name])
                windows[c.name] = list(e.windows_pkts)
                rates[c.name] = e.rates_pps
            for path, rate in zip(c.paths, rates[c.name], strict=True):
                for name in path:
                    load[name] += c.count * rate
        err = max(
            abs(load[n] / caps[n] - 1.0) if p[n] > P_FLOOR else max(0.0, load[n] / caps[n] - 1.0)
            for n in caps
        )
        if err < tol and all(_balanced(c, p, split[c.name].shares, tol) for c in classes):
            losses = {n: (p[n] if p[n] > P_FLOOR else 0.0) for n in caps}
            return NetworkEquilibrium(losses, load, rates, it)
        for n in caps:
            ratio = min(4.0, max(0.25, load[n] / caps[n]))
            p[n] = min(_P_CAP, max(P_FLOOR, p[n] * ratio))
    raise RuntimeError(f"the network did not settle in {max_iter} iterations (tolerance {tol})")


class _Split:
    """An OLIA user's split of its traffic over its paths, the solver's state (`_olia_rates`),
    with a gain per path: doubled on every step a small share keeps losing, reset when it
    gains. A path on its way out (or at the boundary of a tie, where its merit gap shrinks
    with its share) then leaves in a geometric number of steps rather than as 1/n. Only a
    share below 1 % gets it: at an interior tie a path approaching its share from above
    loses for many steps in a row, and a growing gain there overshoots."""

    def __init__(self, n: int) -> None:
        self.shares = [1.0 / n] * n
        self.gains = [_SPLIT_GAIN] * n

    def step(self, merit: Sequence[float]) -> None:
        mean = sum(s * m for s, m in zip(self.shares, merit, strict=True))
        new = []
        for i, (s, m) in enumerate(zip(self.shares, merit, strict=True)):
            x = math.log(m / mean)
            g = self.gains[i]
            self.gains[i] = min(_GAIN_CAP, 2 * g) if x < 0 and s < _SMALL_SHARE else _SPLIT_GAIN
            new.append(max(_SPLIT_FLOOR, s * math.exp(max(_LN_HUNDREDTH, min(_LN2, g * x)))))
        norm = sum(new)
        self.shares = [x / norm for x in new]


def _olia_rates(conds: Sequence[PathCond], split: _Split, w_min_pkts: float) -> tuple[float, ...]:
    """One OLIA user's per-path rates at the current loss rates, and a step of its split.

    OLIA's equilibrium (Khalili et al.'s Pareto-optimality; `multipath_model`): the traffic
    goes on the best paths B only, where a path's merit is TCP's rate there, sqrt(2/p)/rtt;
    on B the balance w_r/rtt_r^2/(sum_p w_p/rtt_p)^2 = p_r*w_r/2 makes the total rate that of
    TCP on a best path; every other path sits at the floor `w_min_pkts`. How the total splits
    among tied best paths the loss rates do not say (the links' capacities do), so the split
    is state: each step moves it toward the paths of higher merit, as OLIA's alpha terms move
    a real connection's windows (shares times (merit / mean merit)^gain), and the loss-rate
    update fills the links.
    """
    merit = [math.sqrt(2.0 / c.loss) / c.rtt_s for c in conds]
    floors = [w_min_pkts / c.rtt_s for c in conds]
    spare = max(0.0, max(merit) - sum(floors))
    rates = tuple(f + s * spare for f, s in zip(floors, split.shares, strict=True))
    split.step(merit)
    return rates


def _balanced(c: UserClass, p: Mapping[str, float], split: Sequence[float], tol: float) -> bool:
    """An OLIA user is at its equilibrium when every path that carries a share of its traffic
    above 1e-9 has the best merit to within `tol` (the other classes always are)."""
    if c.algo != "olia" or len(c.paths) == 1:
        return True
    merit = [math.sqrt(2.0 / _path_loss(path, p)) / rtt for path, rtt in zip(c.paths, c.rtts_s, strict=True)]
    best = max(merit)
    return all(m >= best * (1 - tol) for m, s in zip(merit, split, strict=True) if s > 1e-9)
