#!/usr/bin/env python3
"""hfcprov's DOCSIS 3.1 upstream against CableLabs' docsis-ns3, on the same scenarios (opt-in).

    HFCPROV_DOCSIS_NS3=/path/to/ns-3.41 nice -n 10 .venv/bin/python bench/docsis_ns3.py [--jobs 2]
        [--cache ~/.cache/hfcprov/docsis-ns3.json] [--seeds 3] [--tables goodput,buffer,pie,lld] [--quick]
        [--cases N] [--pie-cases N] [--tiers N]
    HFCPROV_DOCSIS_NS3=... .venv/bin/python bench/docsis_ns3.py --pie-trace 2M,1   # PIE: docsis-ns3's replayed

Skips (exit 0, one line) without ``HFCPROV_DOCSIS_NS3``: the path of an ns-3.41 tree with the
docsis module built (``build/contrib/docsis/examples/ns3.41-residential-example-*``). Nothing of
docsis-ns3 is copied here: its own example program runs with its own command-line options and
``--ns3::Class::Attribute=value`` settings, and this file reads the trace files it writes.

The scenario, on both sides: one cable modem on docsis-ns3's default OFDMA upstream channel
(1880 subcarriers of 50 kHz, 1024-QAM, 6-symbol frames: 668 Mb/s; MAP interval 2 ms or 1 ms,
rounded to whole frames), one classic upstream service flow (MaxSustained ``rate``, Peak 2 x
rate, Max Traffic Burst 100 ms x rate: the residential example's tier), a TargetBuffer of
``buffer`` bytes, ``flows`` bulk TCP uploads to a server ``rtt`` / 2 beyond the CMTS, and the
CMTS's congestion model (other modems leave ``1 - congestion`` of the channel, varying by
``variation`` % MAP to MAP). The hosts are Linux-like Reno with SACK: docsis-ns3's residential
example puts DCTCP on its TCP client node, so it is turned into Reno by its own attributes
(``TcpDctcp::DctcpShiftG=0``: alpha stays 1 and every back-off halves; ``UseEct0``: the packets
are classic; ``DctcpShiftG`` is the gain g itself, so 0 holds alpha), pacing off (as Linux without
fq), 1448-byte segments with timestamps (1500-byte packets), 1 s minimum RTO, delayed ACKs every
second segment / 200 ms, limited transmit, no PRR; hfcprov's hosts are ``hfcprov.sim.hosts.DOCSIS_NS3``,
the same stack option for option (TcpLinuxReno's growth by segments ACKed, ssthresh half of cwnd,
ns-3's classic SACK recovery, no lost-retransmission detection, ns-3's exit from the loss state).
docsis-ns3's scheduler inflates the rates by (MeanPacketSize + 10) / MeanPacketSize to pay for
the MAC headers its requests count; MeanPacketSize is set to a 1518-byte frame, so both sides
grant the rate MULPI C.2.2.7.2 defines (the Ethernet frame, not the MAC header). AQM: drop-tail
(``ClassicAqmLatencyTarget=10s`` is docsis-ns3's way to disable it) or its DOCSIS-PIE (Annex M)
at the 10 ms target; hfcprov runs ``hfcprov.queue``'s DOCSIS-PIE on its request-grant CM.

Figures, each per case (median over seeds): goodput (docsis-ns3: TCP payload of the data packets
leaving the CMTS in the measured window, less the bytes its CM dropped, which TCP sent again; hfcprov: distinct bytes
delivered), and the upstream latency of every data packet from the CM's queue to the CMTS
(docsis-ns3's ``latency-CM.dat``; hfcprov's ``extra["upstream_latency"]``): mean, p50, p99. Per tier,
the 95%-goodput buffer: the smallest size on a ladder keeping 95% of the best goodput any size
reached. Targets: goodput within 5%, latency within 15%, the 95% buffer within one ladder step.

Classic plus LL (table 4, ``--tables lld``): the upload's service flow is a Low Latency aggregate
(docsis-ns3's ``numServiceFlows=2``: its AMSR, peak and burst as above, a classic flow with the
buffer and docsis-ns3's coupled DOCSIS-PIE at 10 ms, a low-latency flow), the uploads classic, and
beside them the residential example's upstream game session (UDP, DSCP EF, 82 +- 20 payload bytes
every 33 ms), which its classifier sends to the low-latency flow; hfcprov sends NQB probes of
110 +- 20 bytes there every 33 ms (its classifier's DSCP; sizes normal, as docsis-ns3's game client
draws them: a 1 Mb/s PGS grant holds a packet of up to 116 bytes on both sides). PGS off and on (``guaranteedGrantRate``, GGI one MAP, as
docsis-ns3 defaults it). Figures: the uploads' goodput, and the upstream latency of the game
packets (low latency) and of the uploads' packets (classic), mean, p50, p99.

docsis-ns3 is CPU-heavy: runs are cached in ``--cache`` (outside the repository) by their full
command line, at most ``--jobs`` at a time (default 1; 2 at most on a shared machine).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENV = "HFCPROV_DOCSIS_NS3"
DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hfcprov" / "docsis-ns3.json"
CLIENT = "10.1.1.3"  # the residential example's TCP client (the uploads' source)
GAME_CLIENT = "10.1.1.1"  # its UDP EF game client: 33 ms apart, 110 +- 20-byte packets (the LL cases' LL flow)
MSS = 1448  # ns-3's SegmentSize in the residential example; with timestamps a data packet is 1500 bytes
HEADERS = 52  # IP + TCP + timestamp option
FRAME = 1518  # an Ethernet frame of a 1500-byte packet: what MULPI's rate counts


@dataclass(frozen=True)
class Case:
    """One scenario, run on both sides."""

    rate: float  # b/s: the upstream flow's Max Sustained Traffic Rate
    rtt: float  # s: the base round trip beyond the DOCSIS link (twice the server link's delay)
    flows: int = 3
    buffer: int = 262_144  # bytes: TargetBuffer
    map_interval: float = 0.002  # s (docsis-ns3 rounds it to whole OFDMA frames)
    congestion: float = 0.0  # share of the channel other modems use (the CMTS's free capacity: 1 - this)
    variation: float = 0.0  # % the free capacity varies MAP to MAP
    aqm: str = "none"  # none | docsis-pie
    lld: bool = False  # a Low Latency aggregate: the uploads classic, a game flow (UDP, EF/NQB) low-latency
    ggr: float = 0.0  # b/s: the low-latency flow's Guaranteed Grant Rate (Proactive Grant Service); 0: none
    duration: float = 25.0  # s simulated in all
    warmup: float = 5.0  # s before measuring
    seed: int = 1
    channel: str = ""  # "": docsis-ns3's default OFDMA channel; "wide": its widest (CHANNELS)

    @property
    def label(self) -> str:
        c = f" c{self.congestion:.0%}" if self.congestion else ""
        a = " pie" if self.aqm != "none" and not self.lld else ""
        if self.lld:
            a += f" lld pgs{self.ggr / 1e6:g}M" if self.ggr else " lld"
        w = f" {self.channel}" if self.channel else ""
        return (f"{self.rate / 1e6:g}M {self.rtt * 1e3:g}ms x{self.flows} {self.buffer // 1024}K "
                f"map{self.map_interval * 1e3:g}{c}{a}{w}")


# The upstream channels both sides run: docsis-ns3's attributes and hfcprov's profile overrides of docsis3.1.
# "wide" is the widest single OFDMA channel docsis-ns3 models (it allows 1900 subcarriers of 50 kHz, 95 MHz,
# and 4096-QAM at most): 800 Mb/s of MAC frames. It has one upstream channel per CM, so hfcprov's two-channel
# docsis3.1-highsplit (1.6 Gb/s) has no docsis-ns3 counterpart: a 1 Gb/s tier is a capacity case on it.
CHANNELS = {
    "": {"peer": [], "profile": [], "capacity": 668_444_444},
    "wide": {"peer": ["--ns3::docsis::DocsisNetDevice::NumUsSc=1900",
                      "--ns3::docsis::DocsisNetDevice::UsSpectralEfficiency=12"],
             "profile": ["subcarriers=1900", "bits_per_subcarrier=12"], "capacity": 800_533_333},
}


# -- docsis-ns3 side ---------------------------------------------------------------------------------------------

def peer_binary(tree: Path) -> Path:
    found = sorted((tree / "build" / "contrib" / "docsis" / "examples").glob("ns3*-residential-example*"))
    if not found:
        raise SystemExit(f"{ENV}={tree}: no build/contrib/docsis/examples/ns3*-residential-example* there "
                         "(build ns-3 with the docsis module first)")
    optimized = [p for p in found if "optimized" in p.name]
    return (optimized or found)[0]


def seconds(x: float) -> str:
    return f"{x * 1e9:.0f}ns"


def peer_args(case: Case) -> list[str]:
    """The residential example's options and attributes for ``case`` (module docstring)."""
    rate = int(round(case.rate))
    args = [
        f"--numTcpUploads={case.flows}", "--numTcpDownloads=0", "--numTcpDashStreams=0", "--numDctcpUploads=0",
        "--numDctcpDownloads=0", "--numDctcpDashStreams=0", "--numWebUsers=0", "--numUdpEfUp=0",
        "--numUdpEfDown=0", "--numUdpBeUp=0", "--numUdpBeDown=0", "--numServiceFlows=1", "--fileModel=unlimited",
        f"--upstreamMsr={rate}bps", f"--upstreamPeakRate={2 * rate}bps", "--downstreamMsr=1000000000bps",
        f"--tcpDelayStart={seconds(case.rtt / 2)}", "--tcpDelayStep=0ms",
        # the TargetBuffer in bytes is rate x queueDepthTime / 8 (truncated): ns resolution keeps it exact
        f"--queueDepthTime={seconds(case.buffer * 8 / case.rate + 0.5e-9)}",
        f"--simulationEndTime={seconds(case.duration)}", f"--RngRun={case.seed}",
        "--ns3::TcpDctcp::UseEct0=true", "--ns3::TcpDctcp::DctcpShiftG=0", "--ns3::TcpDctcp::DctcpAlphaOnInit=1",
        "--ns3::TcpSocketState::EnablePacing=false",
        "--ns3::TcpSocket::SndBufSize=67108864", "--ns3::TcpSocket::RcvBufSize=67108864",
        f"--ns3::docsis::DocsisNetDevice::MapInterval={seconds(case.map_interval)}",
        f"--ns3::docsis::CmtsUpstreamScheduler::MeanPacketSize={FRAME}",
    ]
    if case.aqm == "none":
        args.append("--ns3::docsis::DualQueueCoupledAqm::ClassicAqmLatencyTarget=10s")
    args += CHANNELS[case.channel]["peer"]
    if case.congestion:
        capacity = CHANNELS[case.channel]["capacity"]
        args += [f"--ns3::docsis::CmtsUpstreamScheduler::FreeCapacityMean={int(capacity * (1 - case.congestion))}bps",
                 f"--ns3::docsis::CmtsUpstreamScheduler::FreeCapacityVariation={case.variation:g}"]
    if case.lld:  # the aggregate with its two flows, and one upstream EF game session (its LL classifier's)
        args = [{"--numServiceFlows=1": "--numServiceFlows=2", "--numUdpEfUp=0": "--numUdpEfUp=1"}.get(a, a)
                for a in args]
        if case.ggr:
            args.append(f"--guaranteedGrantRate={int(case.ggr)}bps")
    return args


def _window(case: Case):
    return case.warmup, case.duration


def parse_peer(folder: Path, case: Case) -> dict:
    """Goodput and upstream latency from the trace files the residential example wrote in ``folder``."""
    t0, t1 = _window(case)
    sent = lat = 0
    lats = []
    last, stall = t0, 0.0  # the longest time no data reached the CMTS (docsis-ns3's stalls, docs/calibration.md)
    with open(folder / "latency-CM.dat") as f:
        for line in f:
            p = line.split()
            if len(p) < 6 or p[2] != CLIENT or p[5] != "6":
                continue
            t, size = float(p[0]), int(p[4])
            if size < 1000 or not t0 <= t < t1:
                continue
            sent += size - HEADERS
            lats.append(float(p[1]) / 1e3)
            stall, last = max(stall, t - last), t
    stall = max(stall, t1 - last)
    dropped = 0
    drops = 0
    with open(folder / "cmdrop.dat") as f:
        for line in f:
            p = line.split()
            if len(p) >= 4 and p[1] == CLIENT and int(p[3]) >= 1000 and t0 <= float(p[0]) < t1:
                dropped += int(p[3]) - HEADERS
                drops += 1
    lat = _latency(lats)
    if case.lld:  # the game session's packets (its client's address, UDP): the low-latency flow
        game = []
        with open(folder / "latency-CM.dat") as f:
            for line in f:
                p = line.split()
                if len(p) >= 6 and p[2] == GAME_CLIENT and p[5] == "17" and t0 <= float(p[0]) < t1:
                    game.append(float(p[1]) / 1e3)
        lat.update({f"ll_{k}": v for k, v in _latency(game).items()})
    acks = []  # the ACK path's downstream delay: the same on both sides (hfcprov adds its mean to the RTT)
    with open(folder / "latency-CMTS.dat") as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and p[3] == CLIENT and p[5] == "6" and int(p[4]) < 100:
                acks.append(float(p[1]) / 1e3)
    ds = statistics.fmean(acks) if acks else 0.0
    return {"goodput_bps": max(0, sent - dropped) * 8 / (t1 - t0), "drops": drops, "ds_delay": ds, "stall": stall,
            **lat}


def _latency(values: list[float]) -> dict:
    if not values:
        return {"lat_mean": None, "lat_p50": None, "lat_p99": None, "packets": 0}
    s = sorted(values)
    return {"lat_mean": statistics.fmean(s), "lat_p50": s[len(s) // 2],
            "lat_p99": s[min(len(s) - 1, int(0.99 * len(s)))], "packets": len(s)}


class Cache:
    """Peer results by command line, in a JSON file outside the repository (written atomically)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        try:
            self.data = json.loads(path.read_text())
        except (OSError, ValueError):
            self.data = {}

    @staticmethod
    def key(binary: Path, args: list[str]) -> str:
        return hashlib.sha256(json.dumps([binary.name, args]).encode()).hexdigest()[:24]

    def get(self, key: str):
        with self.lock:
            return self.data.get(key)

    def put(self, key: str, value: dict) -> None:
        with self.lock:
            self.data[key] = value
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.data, indent=1, sort_keys=True))
            tmp.replace(self.path)


def run_peer(binary: Path, case: Case, cache: Cache) -> dict:
    """One docsis-ns3 run (from the cache when it ran before): its figures and CPU seconds."""
    args = peer_args(case)
    key = Cache.key(binary, args)
    hit = cache.get(key)
    if hit is not None:
        return hit
    with tempfile.TemporaryDirectory(prefix="hfcprov-docsis-ns3-") as tmp:
        folder = Path(tmp)
        cmd = ["nice", "-n", "10", str(binary), *args, "--fileNameCmDrop=cmdrop.dat"]
        with open(folder / "stdout.txt", "w") as out:
            proc = subprocess.Popen(cmd, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            tail = (folder / "stdout.txt").read_text()[-800:]
            raise SystemExit(f"docsis-ns3 failed ({proc.returncode}) on {case.label}: {tail}")
        result = {**parse_peer(folder, case), "cpu_s": usage.ru_utime + usage.ru_stime}
    cache.put(key, result)
    return result


# -- hfcprov side -------------------------------------------------------------------------------------------------

def profile_of(case: Case) -> str:
    """The hfcprov modem profile of docsis-ns3's channel in ``case``."""
    over = list(CHANNELS[case.channel]["profile"])
    if case.map_interval != 0.002:
        over.append(f"map_interval={case.map_interval * 1e3:g}ms")
    if case.congestion:
        over.append(f"congestion={case.congestion:g}")
        if case.variation:
            over.append(f"variation={case.variation:g}")
    return "docsis3.1" + (":" + ",".join(over) if over else "")


def hfc_scenario(case: Case, ds_delay: float):
    """The same scenario on hfcprov.sim: the ACK path's downstream delay (measured on the peer's run, the
    same on both sides and not under test) is added to the base RTT."""
    from hfcprov.sim import FlowSpec, Scenario, TcpOptions
    from hfcprov.sim.hosts import DOCSIS_NS3

    tcp = TcpOptions(**DOCSIS_NS3)  # docsis-ns3's TCP uploads (module docstring)
    extra = {"aqm": "docsis-pie", "aqm_params": {"latency_target": 0.010}} if case.aqm != "none" else {}
    if case.lld:  # the game session: NQB probes every 33 ms, which MULPI's classifier sends to the LL flow, of
        # 110 +- 20 B (docsis-ns3's game client: 82 +- 20 B of payload, normal; a 1 Mb/s PGS grant holds 116 B)
        extra = {"aqm": "lld", "aqm_params": {"nqb_probes": True}, "probe_rate": 1 / 0.033, "probe_size": 110,
                 "probe_size_sd": 20,
                 "pgs": {"rate": case.ggr} if case.ggr else None}
    return Scenario(rate=case.rate, buffer=case.buffer, rtt=case.rtt + ds_delay, burst=int(case.rate * 0.1 / 8),
                    peak=2 * case.rate, mac="docsis", profile=profile_of(case),
                    flows=[FlowSpec(start=0.2) for _ in range(case.flows)], tcp=tcp, duration=case.duration,
                    warmup=case.warmup, seed=case.seed, sample_interval=None, **extra)


def run_hfc(case: Case, ds_delay: float) -> dict:
    from hfcprov.sim import run

    r = run(hfc_scenario(case, ds_delay))
    lat = r.extra["mac"]["upstream_latency"]
    out = {"goodput_bps": r.goodput_bps, "lat_mean": lat["mean"], "lat_p50": lat["p50"], "lat_p99": lat["p99"],
           "drops": r.extra["queue_drops"], "cpu_s": r.extra["cpu_s"]}
    if case.lld:
        ll = r.extra["mac"]["ll_upstream_latency"]
        out.update(ll_lat_mean=ll["mean"], ll_lat_p50=ll["p50"], ll_lat_p99=ll["p99"])
    return out


def _hfc_job(arg):
    case, ds = arg
    return run_hfc(Case(**case), ds)


# -- running both sides ---------------------------------------------------------------------------------------------

class Both:
    """Runs cases on both sides (docsis-ns3 at most ``jobs`` at a time, cached; hfcprov in processes)."""

    def __init__(self, binary: Path, cache: Cache, jobs: int) -> None:
        self.binary, self.cache, self.jobs = binary, cache, jobs
        self.cpu = {"peer": 0.0, "hfc": 0.0}

    def prefetch(self, cases: list[Case]) -> None:
        """Run every docsis-ns3 case not in the cache, ``jobs`` at a time, in the order given."""
        todo = list(dict.fromkeys(c for c in cases if self.cache.get(Cache.key(self.binary, peer_args(c))) is None))
        done = 0

        def one(c):
            nonlocal done
            run_peer(self.binary, c, self.cache)
            done += 1
            print(f"  docsis-ns3 {done}/{len(todo)}: {c.label} seed {c.seed}", file=sys.stderr, flush=True)

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            list(pool.map(one, todo))

    def run(self, cases: list[Case]) -> list[tuple[dict, dict]]:
        todo = sorted({c for c in cases}, key=lambda c: -c.rate)  # the long ones first
        done = 0

        def peer(c):
            nonlocal done
            r = run_peer(self.binary, c, self.cache)
            done += 1
            print(f"  docsis-ns3 {done}/{len(todo)}: {c.label} seed {c.seed}", file=sys.stderr, flush=True)
            return c, r

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            peers = dict(pool.map(peer, todo))
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=self.jobs) as pool:
            hfcs = dict(zip(todo, pool.map(_hfc_job, [(asdict(c), peers[c]["ds_delay"]) for c in todo])))
        for c in todo:
            self.cpu["peer"] += peers[c]["cpu_s"]
            self.cpu["hfc"] += hfcs[c]["cpu_s"]
        return [(peers[c], hfcs[c]) for c in cases]


def median_over_seeds(both: Both, base: Case, seeds: int) -> tuple[dict, dict]:
    pairs = both.run([replace(base, seed=s) for s in range(1, seeds + 1)])
    peer = _median([p for p, _ in pairs])
    if base.aqm != "none" and not base.lld:
        peer["pie_idle"] = sum(pie_held_off(p, base) for p, _ in pairs)
    return peer, _median([h for _, h in pairs])


def pie_held_off(peer: dict, case: Case) -> bool:
    """A docsis-ns3 DOCSIS-PIE run whose AQM sat idle through the measured window: fewer than one drop per
    2 s while the mean latency is over twice the 10 ms target. That is MULPI Annex M's burst state machine
    back in NO_BURST (its queue under the target for 1 s, e.g. a start-up ending in a long RTO stall), where
    no packet is dropped early until the queue reaches a third of the buffer (83 ms of a 250 ms buffer),
    which a single Reno flow's slow climb does not reach in the run (docs/calibration.md section 9)."""
    return (peer.get("drops") or 0) < 0.5 * (case.duration - case.warmup) and (peer.get("lat_mean") or 0) > 0.020


def _median(rows: list[dict]) -> dict:
    out = {}
    for k in ("goodput_bps", "lat_mean", "lat_p50", "lat_p99", "drops", "cpu_s", "stall", "ll_lat_mean",
              "ll_lat_p50", "ll_lat_p99"):
        vals = [r[k] for r in rows if r.get(k) is not None]
        out[k] = statistics.median(vals) if vals else None
    return out


def rel(a, b) -> float:
    if a is None or b is None:
        return float("inf")
    return abs(a - b) / b if b else (0.0 if a == b else float("inf"))


# -- the cases ------------------------------------------------------------------------------------------------------

def goodput_cases(quick: bool) -> list[Case]:
    """Table 1: classic TCP uploads on drop-tail, chosen to be informative per CPU second. Single and
    multiple flows, MAP 2 and 1 ms, congestion 0-80% (binding and not), 20 Mb/s to 1 Gb/s, each with a
    buffer that fills the rate. The latency figures are means over many sawtooth periods only when a
    period is short against the measured window, so the fast tiers run more flows at a shorter RTT (a
    Reno period is about rate x RTT^2 / (24,000 x flows) seconds: 10-16 flows at 10 ms keep it near
    1 s at 200-1000 Mb/s) and measure 5 s after 5 s; up to 100 Mb/s, 10-20 s after 5 s. The first ten
    are the sizing tiers' filled rungs (table 3 runs them anyway)."""
    out = []

    def add(rate, flows, rtt, buffer, map_interval=0.002, congestion=0.0, variation=0.0, channel=""):
        out.append(Case(rate=rate, rtt=rtt, flows=flows, buffer=buffer, map_interval=map_interval,
                        congestion=congestion, variation=variation, channel=channel, **timing(rate)))

    K = 1024
    for m in (0.002, 0.001):  # the tiers, at and above their 95% size
        add(20e6, 3, 0.02, 64 * K, m)
        add(20e6, 3, 0.02, 128 * K, m)
        add(50e6, 3, 0.01, 128 * K, m)
        add(50e6, 3, 0.01, 256 * K, m)
    add(50e6, 3, 0.01, 64 * K, 0.001)
    add(100e6, 3, 0.03, 256 * K)
    # one flow
    add(20e6, 1, 0.02, 64 * K)
    add(20e6, 1, 0.02, 64 * K, 0.001)
    add(50e6, 1, 0.01, 128 * K)
    add(100e6, 1, 0.01, 256 * K)
    # other RTTs and flow counts
    add(20e6, 3, 0.06, 128 * K)
    add(50e6, 5, 0.03, 128 * K)
    add(100e6, 3, 0.03, 256 * K, 0.001)
    # other modems' load: the CMTS's free capacity (1 - congestion) x 668 Mb/s, +-variation % MAP to MAP;
    # binding (below the tier's rate) at 200 and 300 Mb/s
    add(20e6, 1, 0.02, 64 * K, congestion=0.8, variation=50)
    add(50e6, 3, 0.02, 128 * K, 0.001, congestion=0.8, variation=20)
    add(100e6, 3, 0.02, 256 * K, congestion=0.4, variation=20)
    add(100e6, 3, 0.02, 256 * K, congestion=0.8, variation=20)
    add(200e6, 10, 0.01, 512 * K, congestion=0.8, variation=20)
    add(300e6, 10, 0.01, 512 * K, 0.001, congestion=0.6, variation=20)
    # fast tiers; 1 Gb/s and 750 Mb/s on docsis-ns3's widest channel (800 Mb/s of frames: 1 Gb/s is a capacity
    # case, CHANNELS)
    for m in (0.002, 0.001):
        add(200e6, 10, 0.01, 512 * K, m)
        add(500e6, 16, 0.01, 1024 * K, m)
    add(1e9, 16, 0.01, 2048 * K, channel="wide")
    add(750e6, 16, 0.01, 2048 * K, 0.001, channel="wide")
    return out[:6] if quick else out


# (rate, rtt, flows, channel): the issue's three tiers (docsis-ns3's sizes quoted there), 300 Mb/s, and the
# fastest tier docsis-ns3's widest channel carries (750 Mb/s: it has no 1 Gb/s upstream, CHANNELS)
TIERS = [(20e6, 0.02, 3, ""), (50e6, 0.01, 3, ""), (100e6, 0.03, 3, ""), (300e6, 0.02, 3, ""),
         (750e6, 0.01, 10, "wide")]
LADDER = tuple(1024 * 2 ** k for k in range(3, 14))  # 8 KiB .. 8 MiB, doubling
# the sizing tiers whose whole doubling ladder ran before (docs/calibration.md's shares); the others run the
# rule's rung and its neighbours only (``tier_ladder``)
FULL_LADDER = {(20e6, 0.02, 3, ""), (50e6, 0.01, 3, ""), ((100e6, 0.03, 3, ""), 0.002)}


def timing(rate: float) -> dict:
    """Run length: 20 s measured after 5 s below 100 Mb/s; 10 s after 5 s at 100 Mb/s; 5 s after 5 s
    above (docsis-ns3 costs ~2.5 CPU s per simulated second at 500 Mb/s; the fast cases run enough
    flows that 5 s hold several sawtooth periods)."""
    if rate < 100e6:
        return {"duration": 25.0, "warmup": 5.0}
    return {"duration": 15.0, "warmup": 5.0} if rate <= 100e6 else {"duration": 10.0, "warmup": 5.0}


def tier_timing(rate: float) -> dict:
    """Table 3's run length: as ``timing`` up to 100 Mb/s; above, 15 s measured (three flows' sawtooth is slow),
    10 s at 500 Mb/s and more (ten flows)."""
    if rate <= 100e6:
        return timing(rate)
    return {"duration": 20.0, "warmup": 5.0} if rate < 500e6 else {"duration": 15.0, "warmup": 5.0}


def ladder_for(rate: float, rtt: float) -> list[int]:
    """The doubling sizes around where the rate fills: from an eighth of the BDP + 8 ms of rate to 3 x that."""
    lo = (rate * (rtt + 0.008) / 8) / 8
    hi = rate * (rtt + 0.008) / 8 * 1.5
    return [s for s in LADDER if lo / 2 <= s <= hi * 2] or list(LADDER[:4])


def rule_rung(rate: float, rtt: float, flows: int, m: float, channel: str = "") -> int:
    """The sizing rule's doubling rung for the tier on its profile (drop-tail, Reno; the ACK path's 1.2 ms)."""
    from hfcprov.queue.inputs import SizingInputs
    from hfcprov.queue.sizing import rule_bytes

    need = rule_bytes(SizingInputs(rate, rtt + 0.0012, flows, "reno", aqm_latency_target=None,
                                   profile=profile_of(Case(rate=rate, rtt=rtt, map_interval=m, channel=channel))))
    return next((s for s in LADDER if s >= need), LADDER[-1])


def tier_ladder(rate: float, rtt: float, flows: int, m: float, channel: str = "") -> list[int]:
    """The sizes table 3 runs for a tier: the whole doubling ladder for the tiers that ran it before
    (``FULL_LADDER``); else the rule's rung and one step either side, which decides "within one step"
    wherever the 95% point is (``extend_ladder`` adds the next rung out when an end of it decides)."""
    if (rate, rtt, flows, channel) in FULL_LADDER or ((rate, rtt, flows, channel), m) in FULL_LADDER:
        return ladder_for(rate, rtt)
    r = LADDER.index(rule_rung(rate, rtt, flows, m, channel))
    return list(LADDER[max(0, r - 1):r + 2])


def extend_ladder(sizes: list[int], goodput: dict) -> list[int]:
    """The rungs to add when the three around the rule cannot place the 95% point: below the smallest when it
    already keeps 95% of the best, above the largest when it is more than 5% over the one before it."""
    best = max(goodput.values())
    more = []
    i0, i1 = LADDER.index(sizes[0]), LADDER.index(sizes[-1])
    if goodput[sizes[0]] >= 0.95 * best and i0 > 0:
        more.append(LADDER[i0 - 1])
    if len(sizes) > 1 and goodput[sizes[-1]] > 1.05 * goodput[sizes[-2]] and i1 + 1 < len(LADDER):
        more.append(LADDER[i1 + 1])
    return more


# table 2's cases at or below this rate run at least LOW_RATE_SEEDS seeds (docsis-ns3 takes seconds a run there):
# one flow's per-seed p50 spreads widely on both sides (2 Mb/s PIE, docsis-ns3 seeds 1-64: 13.1-24.2 ms; its
# median of seeds 1-3 is 19.2 ms, of 64 seeds 17.2), so three seeds cannot tell 15% apart (docs/calibration.md 9)
LOW_RATE = 10e6
LOW_RATE_SEEDS = 8


def seeds_for(case: Case, seeds: int) -> int:
    return max(seeds, LOW_RATE_SEEDS) if case.rate <= LOW_RATE and seeds > 1 else seeds


def pie_cases() -> list[Case]:
    """DOCSIS-PIE against docsis-ns3's own (Annex M) at 2, 10, 50 and 100 Mb/s: one flow, 40 ms, a
    buffer of 250 ms at the rate (at 2 Mb/s 64 KiB, the issue's case), and drop-tail beside it."""
    out = []
    for rate in (2e6, 10e6, 50e6, 100e6):
        buf = 65536 if rate == 2e6 else int(rate * 0.25 / 8)
        for aqm in ("docsis-pie", "none"):
            out.append(Case(rate=rate, rtt=0.04, flows=1, buffer=buf, aqm=aqm, duration=40.0, warmup=10.0))
    return out


def lld_cases(quick: bool) -> list[Case]:
    """Classic plus LL: a Low Latency aggregate (AMSR ``rate``, peak 2x, burst 100 ms, its classic flow's
    buffer 50 ms at the rate, docsis-ns3's coupled DOCSIS-PIE at 10 ms), classic TCP uploads and a game flow
    on the low-latency flow; PGS off and on (GGR 1 Mb/s, GGI one MAP; with 1 ms MAPs also 2 Mb/s, whose
    grants hold every game packet), MAP 2 and 1 ms, congestion 80%, 20 to 200 Mb/s. Runs of 25 s (15 s at
    200 Mb/s): the game flow's 30 packets/s fill its p99."""
    out = []
    for base in (dict(rate=20e6, flows=1), dict(rate=50e6), dict(rate=100e6), dict(rate=50e6, map_interval=0.001),
                 dict(rate=100e6, congestion=0.8, variation=20), dict(rate=200e6, duration=15.0)):
        rate = base["rate"]
        for ggr in (0.0, 1e6) + ((2e6,) if base.get("map_interval") == 0.001 else ()):
            kw = {"flows": 3, "duration": 25.0, "warmup": 5.0, **base}
            out.append(Case(rtt=0.02, buffer=max(65536, int(rate * 0.05 / 8)), aqm="docsis-pie", lld=True, ggr=ggr,
                            **kw))
    return out[:4] if quick else out


LL_KEYS = (("goodput_bps", 0.05), ("ll_lat_mean", 0.15), ("ll_lat_p50", 0.15), ("ll_lat_p99", 0.15),
           ("lat_mean", 0.15), ("lat_p50", 0.15), ("lat_p99", 0.15))


def table_lld(both: Both, cases: list[Case], seeds: int) -> list[dict]:
    print(f"\n4. Classic plus LL (Low Latency aggregate), PGS off and on (median of {seeds} seeds; targets: goodput "
          "5%, latency 15%): the classic uploads' goodput; the game flow's (low-latency) and the classic packets' "
          "upstream latency, ms")
    print(f"{'case':<40} | {'goodput hfc':>11} {'ns3':>6} {'err':>6} | {'LL mean hfc':>11} {'ns3':>5} {'err':>6} | "
          f"{'LL p50':>6} {'ns3':>5} {'err':>6} | {'LL p99':>6} {'ns3':>5} {'err':>6} | {'C mean':>6} {'ns3':>5} "
          f"{'err':>6} | {'C p99':>6} {'ns3':>5} {'err':>6} | miss")
    rows = []
    for c in cases:
        n, h = median_over_seeds(both, c, seeds)
        e = {k: rel(h[k], n[k]) for k, _ in LL_KEYS}
        miss = [k.replace("_bps", "").replace("lat_", "") for k, lim in LL_KEYS if e[k] > lim]
        rows.append({"case": c, "peer": n, "hfc": h, "err": e, "miss": miss})
        ms = lambda x: f"{x * 1e3:.2f}" if x is not None else "-"  # noqa: E731
        cols = " | ".join(f"{ms(h[k]):>6} {ms(n[k]):>5} {e[k]:6.1%}" for k in ("ll_lat_mean", "ll_lat_p50",
                                                                               "ll_lat_p99", "lat_mean", "lat_p99"))
        print(f"{c.label:<40} | {h['goodput_bps'] / 1e6:11.2f} {n['goodput_bps'] / 1e6:6.2f} {e['goodput_bps']:6.1%} | "
              f"{cols} | {','.join(miss)}")
    inside = sum(not r["miss"] for r in rows)
    med = {k: statistics.median(r["err"][k] for r in rows) for k, _ in LL_KEYS}
    worst = max(rows, key=lambda r: max(r["err"][k] / lim for k, lim in LL_KEYS))
    print(f"{inside} of {len(rows)} cases inside every target; median error: "
          + ", ".join(f"{k.replace('_bps', '').replace('lat_', 'latency ')} {v:.1%}" for k, v in med.items()))
    print(f"worst case: {worst['case'].label}: " + ", ".join(
        f"{k.replace('_bps', '').replace('lat_', 'latency ')} {worst['err'][k]:.1%}" for k, _ in LL_KEYS))
    return rows


# -- tables ---------------------------------------------------------------------------------------------------------

KEYS = (("goodput_bps", 0.05), ("lat_mean", 0.15), ("lat_p50", 0.15), ("lat_p99", 0.15))
# s without data reaching the CMTS (median over seeds) past which a miss is docsis-ns3's stall (docs/calibration.md)
STALL = 0.5
# b/s: the residential example's client reaches its CM over a half-duplex 1 Gb/s CSMA link; uploads above
# this share it with their ACKs and lose them there (30% at 1 Gb/s, 3% at 500 Mb/s: docs/calibration.md)
LAN_LIMIT = 600e6


def table_goodput(both: Both, cases: list[Case], seeds: int, title: str) -> list[dict]:
    more = f", {LOW_RATE_SEEDS} at {LOW_RATE / 1e6:g} Mb/s and below" if any(seeds_for(c, seeds) > seeds for c in cases) else ""
    print(f"\n{title} (median of {seeds} seeds{more}; targets: goodput 5%, upstream latency 15%)")
    print(f"{'case':<34} | {'goodput Mb/s hfc':>16} {'ns3':>7} {'err':>6} | {'lat mean ms hfc':>15} {'ns3':>6} "
          f"{'err':>6} | {'p50 hfc':>7} {'ns3':>6} {'err':>6} | {'p99 hfc':>7} {'ns3':>6} {'err':>6} | miss")
    rows = []
    for c in cases:
        n, h = median_over_seeds(both, c, seeds_for(c, seeds))
        e = {k: rel(h[k], n[k]) for k, _ in KEYS}
        miss = [k.replace("_bps", "").replace("lat_", "") for k, lim in KEYS if e[k] > lim]
        if miss and (n.get("stall") or 0) > STALL:  # the known cause of a miss, named where it is seen
            miss.append(f"(ns3 stalled {n['stall']:.1f} s)")
        if miss and n.get("pie_idle"):
            miss.append(f"(ns3 PIE idle in {n['pie_idle']} of {seeds} seeds)")
        if miss and min(c.rate, CHANNELS[c.channel]["capacity"]) > LAN_LIMIT:
            miss.append("(ns3's half-duplex LAN loses ACKs)")
        rows.append({"case": c, "peer": n, "hfc": h, "err": e, "miss": miss})
        ms = lambda x: f"{x * 1e3:.2f}" if x is not None else "-"  # noqa: E731
        print(f"{c.label:<34} | {h['goodput_bps'] / 1e6:16.2f} {n['goodput_bps'] / 1e6:7.2f} {e['goodput_bps']:6.1%} | "
              f"{ms(h['lat_mean']):>15} {ms(n['lat_mean']):>6} {e['lat_mean']:6.1%} | {ms(h['lat_p50']):>7} "
              f"{ms(n['lat_p50']):>6} {e['lat_p50']:6.1%} | {ms(h['lat_p99']):>7} {ms(n['lat_p99']):>6} "
              f"{e['lat_p99']:6.1%} | {','.join(miss)}")
    return rows


def summary(rows: list[dict]) -> None:
    if not rows:
        return
    inside = sum(not r["miss"] for r in rows)
    med = {k: statistics.median(r["err"][k] for r in rows) for k, _ in KEYS}
    worst = max(rows, key=lambda r: max(r["err"][k] / lim for k, lim in KEYS))
    stalled = sum(any(m.startswith("(ns3 stalled") for m in r["miss"]) for r in rows)
    idle = sum(any(m.startswith("(ns3 PIE idle") for m in r["miss"]) for r in rows)
    lan = sum(any(m.startswith("(ns3's half-duplex LAN") for m in r["miss"]) for r in rows)
    print(f"{inside} of {len(rows)} cases inside every target ({stalled} of the misses where docsis-ns3 stalled"
          + (f", {idle} where its PIE sat idle" if idle else "")
          + (f", {lan} where its LAN lost ACKs" if lan else "") + "); median error: "
          + ", ".join(f"{k.replace('_bps', '').replace('lat_', 'latency ')} {v:.1%}" for k, v in med.items()))
    print(f"worst case: {worst['case'].label}: " + ", ".join(
        f"{k.replace('_bps', '').replace('lat_', 'latency ')} {worst['err'][k]:.1%}" for k, _ in KEYS))


def tier_maps(channel: str) -> tuple:
    """MAP intervals table 3 runs a tier at (the wide channel's 750 Mb/s tier: 2 ms only, for CPU)."""
    return (0.002,) if channel else (0.002, 0.001)


def tier_cases(tiers) -> list[Case]:
    """Table 3's first runs per tier (``tier_ladder``), for prefetching."""
    return [Case(rate=r, rtt=t, flows=f, buffer=b, map_interval=m, channel=ch, **tier_timing(r))
            for r, t, f, ch in tiers for m in tier_maps(ch) for b in tier_ladder(r, t, f, m, ch)]


def table_buffer(both: Both, seeds: int, tiers) -> list[dict]:
    print(f"\n3. The 95%-goodput buffer per tier (smallest doubling size keeping 95% of the best goodput; median of "
          f"{seeds} seeds; three Reno uploads, drop-tail; target: the same size or one step apart)")
    print(f"{'tier':<30} | {'rule':>6} {'hfcprov':>8} {'docsis-ns3':>10} {'steps':>5} | goodput share per size hfc / ns3")
    out = []
    for rate, rtt, flows, channel in tiers:
        for m in tier_maps(channel):
            sizes = tier_ladder(rate, rtt, flows, m, channel)
            good = {"hfc": {}, "peer": {}}
            while True:
                for b in sizes:
                    if b in good["peer"]:
                        continue
                    n, h = median_over_seeds(both, Case(rate=rate, rtt=rtt, flows=flows, buffer=b, map_interval=m,
                                                        channel=channel, **tier_timing(rate)), seeds)
                    good["peer"][b], good["hfc"][b] = n["goodput_bps"], h["goodput_bps"]
                more = [b for side in good.values() for b in extend_ladder(sizes, side) if b not in sizes]
                if not more:
                    break
                sizes = sorted(set(sizes) | set(more))
            pick, shares = {}, {}
            for side, g in good.items():
                best = max(g.values())
                pick[side] = next(b for b in sizes if g[b] >= 0.95 * best)
                shares[side] = {b: v / best for b, v in g.items()}
            steps = abs(LADDER.index(pick["hfc"]) - LADDER.index(pick["peer"]))
            rung = rule_rung(rate, rtt, flows, m, channel)
            label = f"{rate / 1e6:g}M {rtt * 1e3:g}ms x{flows} map{m * 1e3:g}{' ' + channel if channel else ''}"
            detail = " ".join(f"{b // 1024}K {shares['hfc'][b]:.0%}/{shares['peer'][b]:.0%}" for b in sizes)
            print(f"{label:<30} | {rung // 1024:>5}K {pick['hfc'] // 1024:>7}K {pick['peer'] // 1024:>9}K {steps:>5} | "
                  f"{detail}")
            out.append({"tier": (rate, rtt, flows, m, channel), "rule": rung, "hfc": pick["hfc"],
                        "peer": pick["peer"], "steps": steps, "shares": shares})
    inside = sum(r["steps"] <= 1 for r in out)
    rule_in = sum(abs(LADDER.index(r["rule"]) - LADDER.index(r["peer"])) <= 1 for r in out)
    print(f"{inside} of {len(out)} tiers: hfcprov within one ladder step of docsis-ns3; the rule: {rule_in} of {len(out)}")
    return out


def fine(spec: str, step: int, jobs: int) -> None:
    """hfcprov alone on a fine ladder (``RATE,RTT,FLOWS,MAP``): where 95% of the best goodput is reached, against
    the sizing rule's sum before the ladder (docs/sizing.md's table). Seeds 1-3; ACK path 1.2 ms."""
    from concurrent.futures import ProcessPoolExecutor

    from hfcprov.queue.inputs import SizingInputs
    from hfcprov.queue.sizing import rule_bytes
    from hfcprov.units import parse_duration, parse_rate

    rate_t, rtt_t, flows_t, map_t = spec.split(",")
    rate, rtt, flows, m = parse_rate(rate_t), parse_duration(rtt_t), int(flows_t), parse_duration(map_t)
    rule = rule_bytes(SizingInputs(rate, rtt + 0.0012, flows, "reno", aqm_latency_target=None,
                                   profile=profile_of(Case(rate=rate, rtt=rtt, map_interval=m))))
    sizes = [b for b in range(step, int(rule * 2.5) + step, step) if b >= rule / 3]
    cases = [asdict(Case(rate=rate, rtt=rtt, flows=flows, buffer=b, map_interval=m, seed=s, **timing(rate)))
             for b in sizes for s in (1, 2, 3)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        got = [r["goodput_bps"] for r in pool.map(_hfc_job, [(c, 0.0012) for c in cases])]
    med = {b: statistics.median(got[i * 3:(i + 1) * 3]) for i, b in enumerate(sizes)}
    best = max(med.values())
    pick = next(b for b in sizes if med[b] >= 0.95 * best)
    print(f"{spec}: 95% of the best at {pick // 1024} KiB; the rule's sum {rule / 1024:.1f} KiB")
    print(" ".join(f"{b // 1024}K {med[b] / best:.0%}" for b in sizes))


def pie_trace(binary: Path, rate: float, seed: int) -> None:
    """Table 2's DOCSIS-PIE case at ``rate`` (seed ``seed``) with docsis-ns3's PIE traces: its per-update
    queue-delay estimate (MULPI Annex M's qdelaySingle) and drop probability, and its drops. The estimates
    are replayed through ``hfcprov.queue.pie.DocsisPie`` (each drop before an update entering the burst
    state as drop_early does): where the probabilities agree, the controllers are the same and any
    difference between the sides lies in what feeds them (the queue the hosts and the MAC make)."""
    from hfcprov.queue.pie import IN_BURST, IN_BURST_PROTECTING, NO_BURST, DocsisPie, PieParams
    from hfcprov.sim.run import Network

    case = replace(next(c for c in pie_cases() if c.rate == rate and c.aqm == "docsis-pie"), seed=seed)
    t0, t1 = _window(case)
    with tempfile.TemporaryDirectory(prefix="hfcprov-docsis-ns3-") as tmp:
        folder = Path(tmp)
        cmd = ["nice", "-n", "10", str(binary), *peer_args(case), "--fileNameCmDrop=cmdrop.dat",
               "--fileNameCalculatePState=pstate.dat"]
        with open(folder / "stdout.txt", "w") as out:
            subprocess.run(cmd, cwd=folder, stdout=out, stderr=subprocess.STDOUT, check=True)
        states = [(float(p[0]), float(p[1]), float(p[6])) for p in (line.split() for line in open(folder / "pstate.dat"))]
        drops = [float(line.split()[0]) for line in open(folder / "cmdrop.dat")]
        peer = parse_peer(folder, case)
        lat = sorted(float(p[1]) / 1e3 for p in (line.split() for line in open(folder / "latency-CM.dat"))
                     if len(p) >= 6 and p[2] == CLIENT and p[5] == "6" and int(p[4]) >= 1000 and t0 <= float(p[0]) < t1)
    pie = DocsisPie(PieParams(), case.buffer)
    worst, d, glitches = 0.0, 0, 0
    for t, q, prob in states:
        while d < len(drops) and drops[d] < t:  # an early drop out of NO_BURST / IN_BURST starts the allowance
            if pie.burst_state in (NO_BURST, IN_BURST):
                pie.burst_state, pie.burst_allowance = IN_BURST_PROTECTING, pie.p.max_burst
            d += 1
        pie.update(q)
        worst = max(worst, abs(pie.drop_prob - prob))
        glitches += q > 1000  # a uint32 wrap of docsis-ns3's byte count (2^32 B at the rate: hours)
    window = [s for s in states if t0 <= s[0] < t1 and s[1] < 1000]
    print(f"{case.label} seed {seed}: docsis-ns3's {len(states)} PIE updates replayed through hfcprov's DocsisPie: "
          f"largest drop-probability difference {worst:.2g}; estimates over 1000 s (a wrapped byte count in "
          f"docsis-ns3): {glitches}")
    run_net = Network(hfc_scenario(case, peer["ds_delay"]))
    pie, eng, seen = run_net.bottleneck.pie, run_net.engine, []

    def sample(_=None):  # just after each of hfcprov's updates: its estimate and probability
        if t0 <= eng.now < t1:
            seen.append((pie.qdelay, pie.drop_prob))
        eng.at(pie.next_update + 1e-9, sample)

    eng.at(pie.next_update + 1e-9, sample)
    r = run_net.run()
    hist = run_net.bottleneck.cm.hist
    mine = [hist.quantile(q / 10) for q in range(1, 10)]
    theirs = [lat[int(len(lat) * q / 10)] for q in range(1, 10)]
    print(f"  in the window ({t0:g}-{t1:g} s):       {'docsis-ns3':>12} {'hfcprov':>9}")
    print(f"  goodput Mb/s                 {peer['goodput_bps'] / 1e6:12.2f} {r.goodput_bps / 1e6:9.2f}")
    print(f"  CM drops                     {sum(t0 <= x < t1 for x in drops):12d} {'-':>9} (hfcprov counts the run: "
          f"{r.extra['queue_drops']}, {r.extra['timeouts']} RTOs)")
    print(f"  PIE estimate mean ms         {statistics.fmean(s[1] for s in window) * 1e3:12.1f} "
          f"{statistics.fmean(q for q, _ in seen) * 1e3:9.1f}")
    print(f"  drop probability mean        {statistics.fmean(s[2] for s in window):12.4f} "
          f"{statistics.fmean(p for _, p in seen):9.4f}")
    print("  upstream latency deciles ms  " + " ".join(f"{x * 1e3:.0f}" for x in theirs) + "  |  hfcprov "
          + " ".join(f"{x * 1e3:.0f}" for x in mine))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fine", metavar="RATE,RTT,FLOWS,MAP",
                    help="hfcprov alone: the 95%%-goodput size on a fine ladder against the rule (no docsis-ns3)")
    ap.add_argument("--step", default="8K", help="--fine: the ladder's step")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--jobs", type=int, default=1, choices=(1, 2))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--tables", default="goodput,buffer,pie,lld")
    ap.add_argument("--quick", action="store_true", help="a few cases and tiers, one seed (a smoke run)")
    ap.add_argument("--cases", type=int, help="table 1: its first N cases only (for a run that must end in time)")
    ap.add_argument("--pie-cases", type=int, help="table 2: its first N cases only (2 Mb/s first)")
    ap.add_argument("--tiers", type=int, help="table 3: its first N tiers only (20 Mb/s first)")
    ap.add_argument("--peer-case", help=argparse.SUPPRESS)
    ap.add_argument("--pie-trace", metavar="RATE,SEED",
                    help="table 2's DOCSIS-PIE case: docsis-ns3's PIE updates replayed through hfcprov's controller")
    args = ap.parse_args()
    if args.fine:
        from hfcprov.units import parse_bytes

        fine(args.fine, parse_bytes(args.step), args.jobs)
        return
    tree = os.environ.get(ENV)
    if not tree:
        print(f"docsis-ns3 comparison skipped: set {ENV} to a built ns-3.41 tree with the docsis module")
        return
    binary = peer_binary(Path(tree))
    cache = Cache(args.cache)
    if args.pie_trace:
        from hfcprov.units import parse_rate

        rate_t, seed_t = args.pie_trace.split(",")
        pie_trace(binary, parse_rate(rate_t), int(seed_t))
        return
    if args.peer_case:
        case = Case(**json.loads(args.peer_case))
        print(json.dumps(run_peer(binary, case, cache)))
        return
    seeds = 1 if args.quick else args.seeds
    both = Both(binary, cache, args.jobs)
    tables = set(args.tables.split(","))
    print(f"hfcprov against docsis-ns3 ({binary.name}), cache {args.cache}")
    rows = []
    tiers = (TIERS[:1] if args.quick else TIERS)[:args.tiers]
    goodput = goodput_cases(args.quick)[:args.cases]
    pies = (pie_cases()[:2] if args.quick else pie_cases())[:args.pie_cases]
    every = []  # the peer's runs, the sizing tiers first (what the advice is checked against)
    if "buffer" in tables:
        every += tier_cases(tiers)
    if "goodput" in tables:
        every += goodput
    if "pie" in tables:
        every += pies
    if "lld" in tables:
        every += lld_cases(args.quick)
    both.prefetch([replace(c, seed=s) for c in every for s in range(1, seeds_for(c, seeds) + 1)])
    if "goodput" in tables:
        rows += table_goodput(both, goodput, seeds, "1. Classic TCP uploads, drop-tail")
        summary(rows)
    if "pie" in tables:
        pie = table_goodput(both, pies, seeds,
                            "2. DOCSIS-PIE (10 ms target) against docsis-ns3's, one flow, 40 ms; drop-tail beside it")
        summary(pie)
        rows += pie
    if "lld" in tables:
        table_lld(both, lld_cases(args.quick), seeds)
    if "buffer" in tables:
        table_buffer(both, seeds, tiers)
    print(f"\nCPU: docsis-ns3 {both.cpu['peer']:.1f} s (cached runs count their first run), "
          f"hfcprov {both.cpu['hfc']:.1f} s: {both.cpu['peer'] / max(both.cpu['hfc'], 1e-9):.1f}x")


if __name__ == "__main__":
    main()
