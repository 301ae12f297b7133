"""The emulated modem's userspace AQM stage: hfcprov.queue's algorithms on real packets.

This machine's kernel has no ``pie``, ``fq_codel`` or ``dualpi2`` qdisc, so a
service flow with AQM on cannot be a tc queue. The stage is the service flow
instead: a token-bucket shaper at the flow's rate in front of the *same* queue
discipline objects the simulator runs (``hfcprov.queue``): DOCSIS-PIE, the
LLD dual queue with queue protection, or drop-tail; which one a flow gets is
``hfcprov.queue.select``'s rule, the simulator's too. It works on raw IP packets
(the TUN delay line hands them over, ``hfcprov.emu.delayline``):

- classification reads the IPv4 TOS / IPv6 traffic class (ECN, DSCP) and the
  5-tuple (queue protection's flow key);
- a CE mark rewrites the ECN bits (and, for IPv4, patches the header checksum,
  RFC 1624);
- the clock is ``time.monotonic``; the owner's loop calls ``offer`` for each
  packet read and ``release`` when ``next_time`` comes, then writes what it gets.

The kernel's htb class for the flow must not be the bottleneck (set it above the
rate, or leave the flow unshaped in tc): the stage's queue is the one that fills.
How fast the stage stays faithful on this machine is measured by
``tests/emu/test_aqmstage.py`` (see docs/emu.md).
"""

from __future__ import annotations

import dataclasses
import json
import random
import struct
import zlib
from collections import deque
from dataclasses import dataclass, replace

from hfcprov.model import (
    ANY_PROTOCOL,
    DEFAULT_DOCSIS_VERSION,
    DEFAULT_MAX_TRAFFIC_BURST,
    TCP_OR_UDP,
    Classifier,
    upstream_aqm,
)
from hfcprov.queue.dualq import DROPPED, LOW_LATENCY_MARKED, DualQParams, DualQueue
from hfcprov.queue.ecn import CE, NOT_ECT
from hfcprov.queue.pie import AqmConfigError, ByteFifo, PieParams, PieQueue, qdelay_estimate
from hfcprov.queue.select import asf_keys, dualq_params

KINDS = ("droptail", "pie", "dualq")


def parse(pkt: bytes) -> tuple[int, int, int]:
    """(ecn, dscp, flow key) of an IPv4/IPv6 packet; (0, 0, 0) for anything else."""
    if not pkt:
        return 0, 0, 0
    version = pkt[0] >> 4
    if version == 4 and len(pkt) >= 20:
        tos = pkt[1]
        proto = pkt[9]
        key = pkt[12:20] + bytes((proto,))
        ihl = (pkt[0] & 0x0F) * 4
        if proto in (6, 17) and len(pkt) >= ihl + 4:
            key += pkt[ihl:ihl + 4]
        return tos & 3, tos >> 2, zlib.crc32(key)
    if version == 6 and len(pkt) >= 40:
        tc = ((pkt[0] & 0x0F) << 4) | (pkt[1] >> 4)
        nh = pkt[6]
        key = pkt[8:40] + bytes((nh,))
        if nh in (6, 17) and len(pkt) >= 44:
            key += pkt[40:44]
        return tc & 3, tc >> 2, zlib.crc32(key)
    return 0, 0, 0


def mark_ce(pkt: bytes) -> bytes:
    """The packet with its ECN field set to CE (IPv4 header checksum patched)."""
    b = bytearray(pkt)
    if b[0] >> 4 == 4:
        old = (b[0] << 8) | b[1]
        b[1] |= CE
        new = (b[0] << 8) | b[1]
        # RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')
        hc = struct.unpack_from("!H", b, 10)[0]
        s = (~hc & 0xFFFF) + (~old & 0xFFFF) + new
        s = (s & 0xFFFF) + (s >> 16)
        s = (s & 0xFFFF) + (s >> 16)
        struct.pack_into("!H", b, 10, ~s & 0xFFFF)
    elif b[0] >> 4 == 6:
        b[1] |= CE << 4
    return bytes(b)


class AqmStage:
    """One service flow in userspace: a token-bucket shaper in front of an AQM queue.

    ``offer(pkt, now) -> bool`` (False: dropped), ``next_time(now) -> float | None``
    (when ``release`` has something; None: queue empty), ``release(now) -> [pkt]``.
    Counters: ``offered``, ``dropped``, ``marked``, ``sent``, ``sent_bytes``, and
    ``waits`` (the last ``keep`` queueing delays, seconds). Timekeeping (``timekeeping()``):
    ``backlogged_s``, the time packets waited, and ``lost_bytes``, tokens the bucket could not
    hold meanwhile: sending time lost because the owner's loop released packets late.
    """

    def __init__(self, kind: str, rate: float, buffer: int | None, burst: int = DEFAULT_MAX_TRAFFIC_BURST,
                 target: float | None = None, dualq: DualQParams | None = None, seed: int = 0,
                 keep: int = 100_000, ll_buffer: int | None = None, ll_rate: float | None = None,
                 name: str = "") -> None:
        if kind not in KINDS:
            raise AqmConfigError(f"AQM stage: {kind!r} is not one of {', '.join(KINDS)}")
        if not rate or rate <= 0:
            raise AqmConfigError("AQM stage: the service flow needs a rate > 0")
        self.kind = kind
        self.name = name or kind
        self.rate = rate / 8.0  # bytes/s
        self.burst = max(burst, 1)
        self.tokens = float(self.burst)
        self.t_tokens = None
        rng = random.Random(seed)
        if kind == "pie":
            params = PieParams(latency_target=target) if target else PieParams()
            self.q = PieQueue(rate, buffer, params, rng=rng, delay=self._estimate)
        elif kind == "dualq":
            p = dualq or DualQParams()
            if target:
                p = DualQParams(**{**p.__dict__, "classic": PieParams(latency_target=target)})
            self.q = DualQueue(rate, buffer, ll_buffer, p, ll_rate=ll_rate, rng=rng)
        else:
            self.q = ByteFifo(buffer)
        self.offered = self.dropped = self.marked = self.sent = self.sent_bytes = 0
        self.waits: deque = deque(maxlen=keep)
        self.backlogged_s = 0.0
        self.lost_bytes = 0.0

    def _estimate(self, nbytes: float) -> float:
        """DOCSIS-PIE's queue delay from the rate and the bucket's tokens (no peak: they go at once)."""
        return qdelay_estimate(nbytes, self.rate * 8.0, None, max(0.0, self.tokens))

    def _refill(self, now: float) -> None:
        if self.t_tokens is None:
            self.t_tokens = now
        elapsed = now - self.t_tokens
        tok = self.tokens + elapsed * self.rate
        backlogged = elapsed > 0 and self._head_size() is not None
        if backlogged:
            self.backlogged_s += elapsed
        if tok < self.burst:
            self.tokens = tok
        else:
            self.tokens = float(self.burst)
            if backlogged:  # a packet waited while the bucket overflowed: it was released late
                self.lost_bytes += tok - self.burst
        self.t_tokens = now

    def timekeeping(self) -> dict:
        """The stage's account of its own timing (``hfcprov.emu.timekeeping.verdict`` reads it)."""
        return {"flow": self.name, "rate_bps": self.rate * 8.0, "backlogged_s": self.backlogged_s,
                "lost_bytes": self.lost_bytes}

    def offer(self, pkt: bytes, now: float) -> bool:
        self.offered += 1
        size = len(pkt)
        self._refill(now)
        if self.kind == "dualq":
            ecn, dscp, key = parse(pkt)
            out = self.q.enqueue(pkt, size, now, key, ecn, dscp)
            if out == DROPPED:
                self.dropped += 1
                return False
            if out == LOW_LATENCY_MARKED:
                self.marked += 1
                if ecn != NOT_ECT:
                    self.q.lq[-1] = (mark_ce(pkt), size, now)
            return True
        if not self.q.enqueue(pkt, size, now):
            self.dropped += 1
            return False
        return True

    def _head_size(self) -> int | None:
        q = self.q
        if self.kind == "dualq":
            sizes = [d[0][1] for d in (q.lq, q.cq) if d]
            return min(sizes) if sizes else None
        return q.items[0][1] if q.items else None

    def next_time(self, now: float) -> float | None:
        size = self._head_size()
        if size is None:
            return None
        self._refill(now)
        if self.tokens >= size:
            return now
        return now + (size - self.tokens) / self.rate

    def release(self, now: float) -> list:
        out = []
        self._refill(now)
        q = self.q
        while True:
            size = self._head_size()
            if size is None or self.tokens < size:
                break
            entry = q.dequeue(now)
            pkt, size, t_in = entry[0], entry[1], entry[2]
            self.tokens -= size
            self.sent += 1
            self.sent_bytes += size
            self.waits.append(now - t_in)
            out.append(pkt)
        q.update(now)
        return out


# -- several service flows: classify, then one stage per flow -------------------------------
def packet_matches(c: Classifier, pkt: bytes) -> bool:
    """Does the raw packet match the classifier, as its tc u32 filters would (``classify.u32_matches``)?

    The same rules as tc: IPv4 only (the filters are ``protocol ip``), ports only on TCP/UDP
    packets with a 20-byte IP header, IpProto 257 (or any protocol with port criteria) means
    TCP or UDP. ``c`` is one the modem installed (``classify.steer`` refused the invalid ones).
    """
    if len(pkt) < 20 or pkt[0] >> 4 != 4:
        return False
    proto = pkt[9]
    if c.tos and not c.tos[0] <= (pkt[1] & c.tos[2]) <= c.tos[1]:
        return False
    uses_ports = c.src_ports is not None or c.dst_ports is not None
    if c.protocol == TCP_OR_UDP or (uses_ports and c.protocol == ANY_PROTOCOL):
        if proto not in (6, 17):
            return False
    elif c.protocol != ANY_PROTOCOL and proto != c.protocol:
        return False
    for field, at in ((c.src, 12), (c.dst, 16)):
        if field and (int.from_bytes(pkt[at:at + 4], "big") & field[1]) != (field[0] & field[1]):
            return False
    if uses_ports:
        if pkt[0] & 0x0F != 5 or len(pkt) < 24:
            return False
        for ports, at in ((c.src_ports, 20), (c.dst_ports, 22)):
            if ports and not ports[0] <= int.from_bytes(pkt[at:at + 2], "big") <= ports[1]:
                return False
    return True


class FlowDispatch:
    """The upstream service flows in userspace: each packet goes to its flow's stage.

    ``rules`` are the installed classifiers in the order the modem tries them, each with the
    band (index of its flow among the upstream flows); a packet no rule matches goes to band 0,
    the primary flow (tc's htb default). ``stages[band]`` is that flow's ``AqmStage``, or None
    for a flow the stage does not queue (tc shapes it after the delay line): ``offer`` then
    returns None and the caller passes the packet on.
    """

    def __init__(self, stages: list, rules: list = ()) -> None:
        self.stages = list(stages)
        self.rules = list(rules)
        # an aggregate's member flows share one stage (the dual queue): release it once
        self.live = list({id(s): s for s in self.stages if s is not None}.values())

    def classify(self, pkt: bytes) -> int:
        for c, band in self.rules:
            if packet_matches(c, pkt):
                return band
        return 0

    def offer(self, pkt: bytes, now: float) -> bool | None:
        stage = self.stages[self.classify(pkt)] if len(self.stages) > 1 else self.stages[0]
        return None if stage is None else stage.offer(pkt, now)

    def next_time(self, now: float) -> float | None:
        times = [t for s in self.live if (t := s.next_time(now)) is not None]
        return min(times) if times else None

    def release(self, now: float) -> list:
        if len(self.live) == 1:
            return self.live[0].release(now)
        out = []
        for s in self.live:
            out += s.release(now)
        return out


def source_matcher(net):
    """A predicate on raw packets: IPv4 with a source address inside ``net`` (an IPv4Network)."""
    base = int(net.network_address)
    mask = int(net.netmask)

    def match(pkt: bytes) -> bool:
        return len(pkt) >= 20 and pkt[0] >> 4 == 4 and (int.from_bytes(pkt[12:16], "big") & mask) == base

    return match


# -- the emulated modem's use of the stage (topology.Lab.apply) ------------------------------
HOME_PREFIX = "10.10.1.0/24"  # the CPE side of the emulated plant: upstream packets come from here


@dataclass(frozen=True)
class FlowStage:
    """What one upstream flow with AQM runs in the stage."""

    kind: str  # "pie" | "dualq"
    rate: float  # bits/s
    buffer: int  # bytes
    burst: int  # bytes
    target: float | None  # s: the AQM latency target (None: the dual queue's own, from ``params``)
    flow: str  # the flow's name (an aggregate's: its path or profile), for status and errors
    params: dict | None = None  # an aggregate's dual queue: ``asf_keys``'s aqm_params, as the simulator's

    def build(self, seed: int = 0) -> AqmStage:
        """The stage the delay line runs (``dualq_params`` reads ``params`` as the simulator does)."""
        if self.params is None:
            return AqmStage(self.kind, self.rate, self.buffer, burst=self.burst, target=self.target, seed=seed,
                            name=self.flow)
        dq, ll_buffer, ll_rate, _nqb = dualq_params(self.params)
        return AqmStage("dualq", self.rate, self.buffer, burst=self.burst, dualq=dq, seed=seed, ll_buffer=ll_buffer,
                        ll_rate=ll_rate, name=self.flow)

    def as_dict(self) -> dict:
        d = {"stage": self.kind, "rate_bps": self.rate, "buffer": self.buffer, "burst": self.burst,
             "latency_target": self.target if self.target is not None else PieParams().latency_target,
             "flow": self.flow}
        if self.params is not None:
            d["params"] = self.params
        return d


@dataclass(frozen=True)
class StagePlan:
    """The userspace stage of the upstream direction: one ``FlowStage`` (or None) per flow, in band order.

    ``tc_plans`` are the flows' own plans, without a rate for the flows the stage queues (tc
    only steers them; the stage shapes and queues, or tc's queue would fill first and the AQM
    would never see a queue). ``rules`` are the installed upstream classifiers with their bands.
    """

    flows: tuple  # FlowStage | None per upstream band
    tc_plans: tuple  # hfcprov.emu.shaping.QueuePlan per upstream band
    rules: tuple = ()  # (Classifier, band) in the order the modem tries them

    @property
    def staged(self) -> list[FlowStage]:
        """The stages, each once (an aggregate's member flows share one)."""
        return list({id(f): f for f in self.flows if f is not None}.values())

    def spec(self) -> dict:
        staged = self.staged
        index = {id(f): i for i, f in enumerate(staged)}
        return {"from": HOME_PREFIX, "stages": [f.as_dict() for f in staged],
                "bands": [None if f is None else index[id(f)] for f in self.flows],
                "rules": [{"band": band, "classifier": dataclasses.asdict(c)} for c, band in self.rules]}

    def args(self) -> list[str]:
        """``hfcprov.emu.delayline`` options that run this stage."""
        return ["--aqm-spec", json.dumps(self.spec())]

    def as_dict(self) -> dict:
        first = self.staged[0].as_dict()  # the primary staged flow at the top level (status line)
        return {**first, "where": "userspace (TUN delay line)", "flows": [f.as_dict() for f in self.staged]}


def dispatch_from_spec(spec: dict, seed: int = 0) -> FlowDispatch:
    """The ``FlowDispatch`` a ``StagePlan.spec()`` describes (the delay line's side)."""
    stages = [FlowStage(f["stage"], f["rate_bps"], f["buffer"], f["burst"], f["latency_target"], f["flow"],
                        f.get("params")).build(seed + i) for i, f in enumerate(spec["stages"])]
    rules = []
    for r in spec.get("rules", []):
        c = r["classifier"]
        c = Classifier(**{k: tuple(v) if isinstance(v, list) else v for k, v in c.items()})
        rules.append((c, r["band"]))
    return FlowDispatch([None if i is None else stages[i] for i in spec["bands"]], rules)


def _aggregate_stages(plans: list, aggregates, settings, docsis_version: str) -> dict[int, FlowStage]:
    """{band: the dual queue} for the member flows of each upstream LLD aggregate service flow.

    ``asf_keys`` (the simulator's path for ``sim run --config``) gives the aggregate's rate,
    burst, classic buffer and dual-queue parameters; where it gives no dual queue (no
    low-latency member, TLV 91, DOCSIS 3.0) it is the classic flow's DOCSIS-PIE at the
    aggregate's rate, or, without AQM, the members stay per-flow (tc).
    """
    flows = [p.flow for p in plans]
    out: dict[int, FlowStage] = {}
    for asf in aggregates:
        if asf.direction != "upstream" or asf.ref is None:
            continue
        bands = [i for i, f in enumerate(flows) if f.asf_ref == asf.ref]
        if not bands:
            continue
        keys = asf_keys(asf, flows, settings, docsis_version)
        name = f"aggregate service flow {asf.path or asf.ref}"
        params = dict(keys.get("aqm_params") or {})
        if keys["aqm"] == "lld":
            stage = FlowStage("dualq", keys["rate"], int(keys["buffer"]), int(keys["burst"]), None, name, params)
        elif keys["aqm"] == "docsis-pie":  # TLV 91 or DOCSIS 3.0: the classic flow's PIE at the aggregate's rate
            stage = FlowStage("pie", keys["rate"], int(keys["buffer"]), int(keys["burst"]),
                              params.get("latency_target", PieParams().latency_target), name)
        else:
            continue
        out.update(dict.fromkeys(bands, stage))
    return out


def plan_stage(upstream_plans: list, docsis_version: str = DEFAULT_DOCSIS_VERSION, steering: list = (),
               aggregates=(), settings=None) -> StagePlan | None:
    """The stage for the upstream direction, or None when no upstream flow runs AQM.

    Which flows run AQM is ``hfcprov.model.upstream_aqm``'s rule for the modem's DOCSIS
    version (the simulator's too). Each such flow with a rate gets its own shaper and queue in
    the stage; the member flows of an LLD aggregate service flow (``aggregates``: the file's
    ``AggregateServiceFlow``s, ``settings``: its ``ModemSettings``) share one dual queue at the
    aggregate's rate, as ``sim run --config`` runs it. The stage classifies packets with the
    installed upstream classifiers (``steering``, from ``classify.steer``) exactly as tc does.
    Flows without AQM stay in tc.
    """
    shared = _aggregate_stages(upstream_plans, aggregates, settings, docsis_version) if aggregates else {}
    flows, tc_plans = [], []
    for band, p in enumerate(upstream_plans):
        aqm = upstream_aqm(p.flow, settings, docsis_version)
        if band in shared:
            flows.append(shared[band])
        elif aqm is None or not p.rate_bps:  # no AQM, or no rate limit: no queue for an AQM to act on
            flows.append(None)
            tc_plans.append(p)
            continue
        else:
            kind = "pie" if aqm.algorithm == "docsis-pie" else "dualq"
            flows.append(FlowStage(kind, float(p.rate_bps), int(p.buffer), int(p.burst), aqm.latency_target,
                                   p.flow.name))
        tc_plans.append(replace(p, rate_bps=None, peak_bps=None))
    if not any(flows):
        return None
    rules = tuple((s.classifier, s.band) for s in steering if s.classifier.direction == "upstream")
    return StagePlan(tuple(flows), tuple(tc_plans), rules)
