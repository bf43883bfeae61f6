"""Scenarios and fluid-model predictions for the situations of the coupled-congestion papers
(Wischik, Raiciu, Greenhalgh, Handley, NSDI 2011; Khalili, Gast, Popovic, Le Boudec, CoNEXT
2012 / IEEE/ACM ToN 2013): users of two types sharing access links, some of them upgraded from
TCP to a two-path connection, and TCP and two-path users through one bottleneck. For the
future `quicksim reproduce multipath` (issue 37); docs/multipath-coupled.md has the context.

What of the papers is in here, and what is not: the papers' own figures (their link
capacities, RTTs, buffers, user counts and plotted values) could not be read with the tools at
hand (docs/multipath-coupled.md, "The published scenarios", says what was tried), so nothing
here is a value from a figure. The situations are those the papers' abstracts name: Khalili
et al.'s problem P1, "upgrading some TCP users to MPTCP can reduce the throughput of others
without any benefit to the upgraded users", is the `upgrade` family; RFC 6356's goals at a
shared bottleneck (from the same group as the NSDI paper) the `shared` family. Every default
below (rates, RTTs, buffers, counts) is this module's choice, named as such, to be replaced by
a figure's values once someone has read them: pass them as arguments.

Scenario syntax assumed (branch `mp`, commit 06d0e8f "Hosts with several interfaces" and its
`quicksim-transport` `MultipathConfig`; its docs/multipath.md was not written yet):

- a host with several interfaces: `nodes.<h> = {kind = "host", interfaces = ["own", "shared"]}`;
  each interface is the network node `<h>.<interface>` with its own address, links name it
  (`a = "<h>.own"`), and the host's name stands for its first interface;
- a QUIC flow over several paths: `quic.multipath = {paths = [{src = "<h>.shared"}]}` adds path
  1 from that interface (path 0 is the flow's own `src` to `dst`), with the default scheduler
  "minrtt" and mode "multipath";
- the coupling is the connection's `quic.cc`: "lia", "olia", "balia" couple the paths, any
  other algorithm runs uncoupled per path ("newreno" = uncoupled NewReno).

The single-path variants (`upgraded=False`) use none of it and run on main as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .multipath_model import ALGOS
from .multipath_network import Link, NetworkEquilibrium, UserClass, solve

__all__ = [
    "SharedSetup",
    "UpgradeSetup",
    "shared_prediction",
    "shared_scenario",
    "upgrade_prediction",
    "upgrade_scenario",
    "upgrade_uncoupled_stand_in",
]

#: The reference TCP of every scenario: NewReno with RFC 9002 Appendix B.5's increase, the
#: per-path base of the coupled controllers (docs/multipath-coupled.md, "One path is NewReno").
_TCP_CC = {"algo": "newreno", "exact_increase": False}


def _cc(algo: str) -> Any:
    if algo not in ALGOS:
        raise ValueError(f"algo: {algo!r} is not one of {', '.join(ALGOS)}")
    return _TCP_CC if algo == "uncoupled" else algo


def _rate(bps: float) -> str:
    return f"{round(bps)}bps"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:g}ms"


def _queue(rate_bps: float, rtt_s: float, bdp: float, packet_bytes: int) -> dict[str, int]:
    """A drop-tail queue of `bdp` bandwidth-delay products, in packets (at least 2)."""
    return {"packets": max(2, round(bdp * rate_bps * rtt_s / (8 * packet_bytes)))}


def _check_positive(**values: float) -> None:
    for name, v in values.items():
        if not v > 0:
            raise ValueError(f"{name}: {v} is not positive")


@dataclass(frozen=True)
class UpgradeSetup:
    """Khalili et al.'s problem P1 in its smallest form. `n1` type-1 users reach the server
    through the shared access point ap1 only (TCP); `n2` type-2 users have an access point of
    their own, ap2, and can reach ap1 too. Upgraded, a type-2 user runs one two-path
    connection (path 0 through ap2, path 1 through ap1); not upgraded, TCP through ap2 only.
    ap1's uplink has `n1 * c1_bps`, ap2's `n2 * c2_bps`: before the upgrade every type-1 user
    gets c1 and every type-2 user c2. Every path has the round trip `rtt_s`; each uplink queue
    holds `buffer_bdp` of its bandwidth-delay product. The defaults are this module's choice,
    not a paper's (module doc)."""

    n1: int = 5
    n2: int = 5
    c1_bps: float = 2e6
    c2_bps: float = 4e6
    rtt_s: float = 0.1
    buffer_bdp: float = 1.0
    packet_bytes: int = 1280
    duration_s: float = 120.0
    #: Every flow starts at a time drawn uniformly from [0, start_spread_s) (its own stream, so
    #: each seed draws anew): without it equal-RTT flows through a drop-tail queue keep the
    #: shares their start order gave them (phase effects), the same in every seed.
    start_spread_s: float = 0.1

    def check(self) -> None:
        if self.n1 < 1 or self.n2 < 1:
            raise ValueError(f"n1, n2: {self.n1}, {self.n2}; both types need at least one user")
        _check_positive(
            c1_bps=self.c1_bps,
            c2_bps=self.c2_bps,
            rtt_s=self.rtt_s,
            buffer_bdp=self.buffer_bdp,
            packet_bytes=self.packet_bytes,
            duration_s=self.duration_s,
        )
        if not 0 <= self.start_spread_s < self.duration_s:
            raise ValueError(f"start_spread_s: {self.start_spread_s} is not in [0, duration_s)")


def upgrade_scenario(setup: UpgradeSetup, algo: str, *, upgraded: bool = True) -> dict[str, Any]:
    """The scenario of `setup` with the type-2 users running `algo` ("uncoupled" = NewReno
    per path) when `upgraded`, TCP through ap2 when not. Flows `t1_<i>` and `t2_<i>`; the
    uplinks are links `ap1` and `ap2` (their `links` rows are what the prediction's per-link
    loads compare with)."""
    setup.check()
    cc = _cc(algo)
    quarter = _ms(setup.rtt_s / 4)  # access and uplink each carry a quarter of the round trip
    nodes: dict[str, Any] = {"ap1": {"kind": "router"}, "ap2": {"kind": "router"}, "core": {"kind": "router"}}
    links: list[dict[str, Any]] = []
    flows: list[dict[str, Any]] = []
    access = max(setup.c1_bps, setup.c2_bps) * 10  # never the bottleneck
    for i in range(setup.n1):
        host = f"t1_{i}"
        nodes[host] = {"kind": "host"}
        links.append({"name": f"{host}_ap1", "a": host, "b": "ap1", "rate": _rate(access), "delay": quarter})
        flows.append(_flow(host, host, f"srv1_{i}", _TCP_CC, None, setup.start_spread_s))
    for i in range(setup.n2):
        host = f"t2_{i}"
        own = f"{host}.own" if upgraded else host
        nodes[host] = {"kind": "host", "interfaces": ["own", "shared"]} if upgraded else {"kind": "host"}
        links.append({"name": f"{host}_ap2", "a": own, "b": "ap2", "rate": _rate(access), "delay": quarter})
        if upgraded:
            links.append(
                {
                    "name": f"{host}_ap1",
                    "a": f"{host}.shared",
                    "b": "ap1",
                    "rate": _rate(access),
                    "delay": quarter,
                }
            )
        extra = {"paths": [{"src": f"{host}.shared"}]} if upgraded else None
        flows.append(_flow(host, own, f"srv2_{i}", cc if upgraded else _TCP_CC, extra, setup.start_spread_s))
    for ap, rate in (("ap1", setup.n1 * setup.c1_bps), ("ap2", setup.n2 * setup.c2_bps)):
        q = _queue(rate, setup.rtt_s, setup.buffer_bdp, setup.packet_bytes)
        links.append({"name": ap, "a": ap, "b": "core", "rate": _rate(rate), "delay": quarter, "queue": q})
    for f in flows:  # one server per user, on a fast link with no delay
        nodes[f["dst"]] = {"kind": "host"}
        links.append({"name": f["dst"], "a": "core", "b": f["dst"], "rate": _rate(access * 10)})
    mode = algo if upgraded else "tcp"
    how = f"two paths, {algo}" if upgraded else "TCP"
    return scenario_doc(
        f"multipath-upgrade-{mode}",
        f"{setup.n1} TCP users on ap1, {setup.n2} users on ap2 ({how})",
        setup.duration_s,
        nodes,
        links,
        flows,
    )


def upgrade_uncoupled_stand_in(setup: UpgradeSetup) -> dict[str, Any]:
    """The upgraded scenario with uncoupled NewReno, built without the multipath syntax: an
    uncoupled two-path user is two independent TCP connections, so each type-2 user becomes two
    single-path users, `t2_<i>` through ap2 and `t2_<i>_ap1` through ap1, with the same links
    and delays. It runs on main today: the one column of the P1 comparison that can be
    measured before the `mp` branch merges."""
    sc = upgrade_scenario(setup, "uncoupled", upgraded=False)
    access = max(setup.c1_bps, setup.c2_bps) * 10
    quarter = _ms(setup.rtt_s / 4)
    for i in range(setup.n2):
        host, srv = f"t2_{i}_ap1", f"srv2_{i}_ap1"
        sc["nodes"][host] = {"kind": "host"}
        sc["nodes"][srv] = {"kind": "host"}
        sc["links"].append({"name": host, "a": host, "b": "ap1", "rate": _rate(access), "delay": quarter})
        sc["links"].append({"name": srv, "a": "core", "b": srv, "rate": _rate(access * 10)})
        sc["flows"].append(_flow(host, host, srv, _TCP_CC, None, setup.start_spread_s))
    sc["name"] = "multipath-upgrade-uncoupled-stand-in"
    sc["description"] = f"{setup.n1} TCP users on ap1, {setup.n2} users each with a TCP on ap2 and one on ap1"
    return sc


def upgrade_prediction(
    setup: UpgradeSetup, algo: str, *, upgraded: bool = True, w_min_pkts: float = 0.0
) -> dict[str, float]:
    """The fluid model's throughput of one type-1 and one type-2 user, in bit/s and as a
    fraction of c1 and c2 ("norm_type1", "norm_type2"), and the type-2 users' share on ap1.
    `w_min_pkts` floors every multipath window (1: a path is always probed with a packet per
    round trip)."""
    setup.check()
    pps = 8.0 * setup.packet_bytes
    links = [Link("ap1", setup.n1 * setup.c1_bps / pps), Link("ap2", setup.n2 * setup.c2_bps / pps)]
    t1 = UserClass("type1", setup.n1, "uncoupled", (("ap1",),), (setup.rtt_s,))
    if upgraded:
        _cc(algo)
        t2 = UserClass("type2", setup.n2, algo, (("ap2",), ("ap1",)), (setup.rtt_s, setup.rtt_s))
    else:
        t2 = UserClass("type2", setup.n2, "uncoupled", (("ap2",),), (setup.rtt_s,))
    e = solve(links, [t1, t2], w_min_pkts=w_min_pkts)
    r1, r2 = e.user_rate("type1") * pps, e.user_rate("type2") * pps
    via_ap1 = e.rates_pps["type2"][1] * pps if upgraded else 0.0
    return {
        "type1_bps": r1,
        "type2_bps": r2,
        "norm_type1": r1 / setup.c1_bps,
        "norm_type2": r2 / setup.c2_bps,
        "type2_on_ap1": via_ap1 / r2,
        "loss_ap1": e.losses["ap1"],
        "loss_ap2": e.losses["ap2"],
    }


@dataclass(frozen=True)
class SharedSetup:
    """`n_tcp` TCP users and `n_mp` two-path users, both paths of each through one bottleneck
    of `rate_bps` (disjoint access links), every path with the round trip `rtt_s`. RFC 6356's
    goals 1 and 2: a coupled user takes one TCP share, an uncoupled one two. The defaults are
    this module's choice (module doc)."""

    n_tcp: int = 2
    n_mp: int = 2
    rate_bps: float = 20e6
    rtt_s: float = 0.04
    buffer_bdp: float = 1.0
    packet_bytes: int = 1280
    duration_s: float = 120.0
    #: As `UpgradeSetup.start_spread_s`.
    start_spread_s: float = 0.04

    def check(self) -> None:
        if self.n_tcp < 0 or self.n_mp < 1:
            raise ValueError(f"n_tcp, n_mp: {self.n_tcp}, {self.n_mp}; need n_tcp >= 0 and n_mp >= 1")
        _check_positive(
            rate_bps=self.rate_bps,
            rtt_s=self.rtt_s,
            buffer_bdp=self.buffer_bdp,
            packet_bytes=self.packet_bytes,
            duration_s=self.duration_s,
        )
        if not 0 <= self.start_spread_s < self.duration_s:
            raise ValueError(f"start_spread_s: {self.start_spread_s} is not in [0, duration_s)")


def shared_scenario(setup: SharedSetup, algo: str) -> dict[str, Any]:
    """The scenario of `setup` with the two-path users running `algo`: flows `tcp_<i>` and
    `mp_<i>`, the bottleneck link `bottleneck`."""
    setup.check()
    cc = _cc(algo)
    quarter = _ms(setup.rtt_s / 4)
    access = setup.rate_bps * 10
    nodes: dict[str, Any] = {"ra": {"kind": "router"}, "rb": {"kind": "router"}}
    links: list[dict[str, Any]] = []
    flows: list[dict[str, Any]] = []
    for i in range(setup.n_tcp):
        host = f"tcp_{i}"
        nodes[host] = {"kind": "host"}
        links.append({"name": host, "a": host, "b": "ra", "rate": _rate(access), "delay": quarter})
        flows.append(_flow(host, host, f"srv_{host}", _TCP_CC, None, setup.start_spread_s))
    for i in range(setup.n_mp):
        host = f"mp_{i}"
        nodes[host] = {"kind": "host", "interfaces": ["wifi", "lte"]}
        for iface in ("wifi", "lte"):
            links.append(
                {
                    "name": f"{host}_{iface}",
                    "a": f"{host}.{iface}",
                    "b": "ra",
                    "rate": _rate(access),
                    "delay": quarter,
                }
            )
        flows.append(
            _flow(
                host,
                f"{host}.wifi",
                f"srv_{host}",
                cc,
                {"paths": [{"src": f"{host}.lte"}]},
                setup.start_spread_s,
            )
        )
    q = _queue(setup.rate_bps, setup.rtt_s, setup.buffer_bdp, setup.packet_bytes)
    links.append(
        {
            "name": "bottleneck",
            "a": "ra",
            "b": "rb",
            "rate": _rate(setup.rate_bps),
            "delay": quarter,
            "queue": q,
        }
    )
    for f in flows:
        nodes[f["dst"]] = {"kind": "host"}
        links.append({"name": f["dst"], "a": "rb", "b": f["dst"], "rate": _rate(access * 10)})
    return scenario_doc(
        f"multipath-shared-{algo}",
        f"{setup.n_tcp} TCP and {setup.n_mp} two-path ({algo}) users through one bottleneck",
        setup.duration_s,
        nodes,
        links,
        flows,
    )


def shared_prediction(setup: SharedSetup, algo: str) -> dict[str, float]:
    """The fluid model's throughput of one TCP user and one two-path user (bit/s) and their
    ratio."""
    setup.check()
    pps = 8.0 * setup.packet_bytes
    classes = [UserClass("mp", setup.n_mp, _algo(algo), (("b",), ("b",)), (setup.rtt_s, setup.rtt_s))]
    if setup.n_tcp:
        classes.append(UserClass("tcp", setup.n_tcp, "uncoupled", (("b",),), (setup.rtt_s,)))
    e: NetworkEquilibrium = solve([Link("b", setup.rate_bps / pps)], classes)
    mp = e.user_rate("mp") * pps
    out = {"mp_bps": mp}
    if setup.n_tcp:
        out["tcp_bps"] = e.user_rate("tcp") * pps
        out["ratio"] = mp / out["tcp_bps"]
    return out


def _algo(algo: str) -> str:
    _cc(algo)
    return algo


def _flow(
    name: str, src: str, dst: str, cc: Any, multipath: dict[str, Any] | None, spread_s: float
) -> dict[str, Any]:
    quic: dict[str, Any] = {"cc": cc}
    if multipath is not None:
        quic["multipath"] = multipath
    flow = {"name": name, "kind": "quic", "src": src, "dst": dst, "quic": quic}
    if spread_s > 0:
        flow["start"] = {"dist": "uniform", "min": "0s", "max": _ms(spread_s)}
    return flow


def scenario_doc(
    name: str,
    description: str,
    duration_s: float,
    nodes: dict[str, Any],
    links: list[dict[str, Any]],
    flows: list[dict[str, Any]],
    *,
    seed: int = 1,
    record_interval: str = "0.5s",
) -> dict[str, Any]:
    """A multipath reproduction's scenario over its own topology (`nodes`, `links`, `flows`),
    with unlimited flow-control credit."""
    return {
        "name": name,
        "description": description,
        "run": {"duration": f"{duration_s:g}s", "seed": seed, "record_interval": record_interval},
        "nodes": nodes,
        "links": links,
        # Bulk transfers limited by congestion control only (as the example scenarios).
        "quic": {"initial_max_data": "4294967295B", "initial_max_stream_data": "4294967295B"},
        "flows": flows,
    }
