"""What one simulator run is: a service flow, a path, TCP options, traffic, loss, a seed.

``Scenario`` holds plain numbers (bits/s, bytes, seconds); units are parsed once
here, at the edge, by ``Scenario.from_dict`` (YAML/JSON scenario files, sweep
points, ``--set key=value``) or taken from a ``ServiceFlow``
(``Scenario.from_service_flow``). Errors name the file and the key.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field, fields

from hfcprov.errors import HfcprovError
from hfcprov.model import DEFAULT_DOCSIS_VERSION, DEFAULT_MAX_TRAFFIC_BURST, BufferRejected
from hfcprov.queue.pie import AqmConfigError
from hfcprov.queue.select import DURATION_KEYS, aqm_keys, parse_params
from hfcprov.sim.codecs import CODECS
from hfcprov.sim.hystart import HYSTART, HYSTART_ROUNDS
from hfcprov.units import as_written, parse_bytes, parse_duration, parse_link_rate, parse_rate, parse_rtt


class ScenarioError(HfcprovError):
    """A scenario file, sweep file or --set override is wrong; the message names file and key."""


# Cohen-Ramanathan's and today's RTO timers: (granularity s, minimum RTO s)
TIMERS = {"coarse": (0.5, 2.0), "200ms": (0.2, 0.8), "fine": (0.0, 0.2)}


SSTHRESH_FROM = ("flightsize", "pipe", "cwnd")  # TcpOptions.ssthresh_from
PROBE_MIN_SIZE = 28  # bytes: a probe's IP and UDP headers (Scenario.probe_size and the sizes drawn around it)


@dataclass
class TcpOptions:
    variant: str = "newreno"  # reno | newreno | sack, or a CongestionControl name (cubic, fast)
    recovery: str | None = None  # reno | newreno | sack; None: follows the variant (sack for cubic/fast)
    mss: int = 1460  # bytes of payload per segment
    header_bytes: int = 40  # IP + TCP headers
    initial_window: int = 10  # segments (RFC 6928); Cohen-Ramanathan's PCs used 1 or 2
    initial_ssthresh: int | None = None  # bytes; None: unlimited
    socket_buffer: int | None = None  # bytes: the largest window; None: unlimited
    timer_granularity: float = 0.0  # s: 0 fine, 0.5 BSD coarse, 0.2 the HFC tuning
    min_rto: float = 1.0  # s (RFC 6298)
    initial_rto: float = 1.0  # s
    # rfc6298: RTO = max(srtt + 4 rttvar, min_rto); linux: srtt + max(4 rttvar, min_rto) (Linux keeps
    # rttvar at least tcp_rto_min), so a steady RTT behind a full buffer does not bring RTO down to srtt
    rto_rule: str = "rfc6298"
    dupthresh: int = 3  # duplicate ACKs for fast retransmit; 1 = super fast retransmit
    # new data on the duplicate ACKs before fast retransmit (RFC 3042, which RFC 5681 3.2 says a
    # TCP SHOULD do; with SACK while pipe < cwnd, RFC 6675 step 3, as ns-3 does); off by
    # default, as in the stacks the validation papers measured and the MAC calibration used
    limited_transmit: bool = False
    # what ssthresh halves on a loss: flightsize (RFC 5681 eq. 4, limited-transmit segments
    # excluded), pipe (with SACK: outstanding - SACKed - lost, as ns-3's BytesInFlight) or cwnd
    # (Linux's tcp_reno_ssthresh, ns-3's TcpLinuxReno and TcpDctcp: max(cwnd / 2, 2 MSS))
    ssthresh_from: str = "flightsize"
    # cwnd in whole bytes: congestion avoidance adds int(MSS*MSS/cwnd) per ACK (ns-3, integer
    # stacks); off: the exact fraction, RFC 5681 eq. 3
    integer_cwnd: bool = False
    # Reno grows by the segments each ACK covers, as Linux (tcp_slow_start up to ssthresh, then
    # tcp_cong_avoid_ai): with delayed ACKs twice the per-ACK growth; off: one step per ACK (BSD, ns-3)
    count_acked: bool = False
    # CUBIC grows at least 5% per RTT in congestion avoidance until its first loss, as Linux (bictcp_update
    # caps cnt at 20 while last_max_cwnd is 0, e.g. after a HyStart exit); off: the RFC 9438 curve from K = 0
    cubic_linux_floor: bool = False
    # how CUBIC computes its window: rfc9438 (the exact curve); linux (tcp_cubic.c's integer arithmetic:
    # whole segments, cnt recomputed at most every HZ/32 ticks, a whole-segment Reno-friendly estimate,
    # the 5% floor); ns3 (ns-3's TcpCubic, a port of the same on an exact clock)
    cubic_arithmetic: str = "rfc9438"
    kernel_hz: int = 250  # the kernel's timer ticks per second (CONFIG_HZ; Debian's 250): the linux arithmetic's clock
    # the ACK that ends fast recovery also grows cwnd from ssthresh (ns-3); off: RFC 5681
    # 3.2 step 6 and RFC 6582 set cwnd = ssthresh on it and nothing more
    grow_on_recovery_exit: bool = False
    # after an RTO, an ACK below HighData at the RTO grows cwnd by every segment it covers and the
    # one that passes it only by the segments beyond it (ns-3's CA_LOSS state: after a go-back over
    # SACKed data cwnd stays at one segment, which a delayed ACK then holds); off: by the segments
    # newly delivered (RFC 5681 3.1, Linux)
    loss_exit_from_recover: bool = False
    # most segments per packet for new data (TSO at the sender, GRO at the receiver; Linux: 44, 64 KB),
    # sized as Linux's TSO autosizing (~1 ms of the pacing rate, >= 2); a drop-tail link serves a
    # train as back-to-back packets in one event; 1: off (always off with a MAC or an AQM)
    tso: int = 1
    # new data waits for a whole TSO-sized chunk of window (Linux's tcp_tso_should_defer: TCP builds GSO
    # packets whatever the device, so a Linux sender on delayed ACKs sends ~1 ms bursts, not pairs;
    # the segments still leave one by one); off: every segment the window allows leaves at once
    tso_defer: bool = False
    # Linux's PSH and the receiver's ACK of it (on in the linux host: docs/sim.md): each send of new data leaves
    # as GSO packets of the TSO size (tcp_tso_autosize) cut from its front (tcp_write_xmit), and the last segment
    # of each packet of two or more carries PSH (__tcp_transmit_skb forces it when tcp_skb_pcount > 1; a packet
    # of one has none); the receiver (with quickack) ACKs an in-order segment with PSH at once when it holds
    # nothing out of order (tcp_measure_rcv_mss sets ICSK_ACK_PUSHED for a full-sized one, tcp_cleanup_rbuf
    # ACKs once the application has read everything, which a bulk reader has); off: no PSH
    push: bool = False
    # the RTT sample congestion control sees (CUBIC's HyStart): newest, the send time of the newest segment an
    # ACK newly covers, as Linux (tcp_clean_rtx_queue's last_ackt: ca_rtt_us, from the sender's own send times);
    # oldest: the echoed timestamp of the oldest, the one srtt and the RTO take (and ca_rtt when a covered
    # segment was retransmitted)
    ca_rtt: str = "oldest"
    # a retransmission is lost again once data sent after it is SACKed (Linux); off: only the RTO finds it
    detect_lost_retransmit: bool = True
    delayed_ack: bool = True
    # Linux's immediate ACKs beside the delayed ones (tcp.LinuxAckState): quick-ACK mode (tcp_incr_quickack,
    # TCP_MAX_QUICKACKS = 16) at the first data segment, after a pause longer than the receiver's RTO and on a
    # spurious retransmission; one ACK per segment while the receive window grows (tcp_grow_window,
    # tcp_rcv_space_adjust: all through slow start); off: only every delack_count-th segment, a hole or the timer
    quickack: bool = False
    # with quickack, the receiver's first window: rcv_init_window, segments it first advertises and starts
    # rcv_ssthresh at (tcp_select_initial_window: TCP_DEFAULT_INIT_RCVWND = 10), so tcp_grow_window ACKs every
    # segment until rcv_ssthresh reaches the clamp (0: starts at the clamp, no room); rcv_window_clamp, bytes
    # (tcp_rmem[1] = 128 KiB at the len/truesize scaling ratio; 0: 64 KiB, the ratio 1/2)
    rcv_init_window: int = 0
    rcv_window_clamp: int = 0
    # exact: the delayed ACK waits delack_timeout (Linux); tick: BSD's fast timer, the next tick of a
    # free-running delack_timeout clock; auto: tick with a coarse RTO timer (timer_granularity > 0)
    delack_timer: str = "auto"
    delack_count: int = 2
    delack_timeout: float = 0.2  # s
    # CUBIC's slow-start exit: auto/linux = Linux's HyStart (ACK train + delay), rfc9406 = HyStart++,
    # off = slow start until a loss (hfcprov.sim.hystart)
    hystart: str = HYSTART[0]
    # where Linux HyStart's rounds start (hfcprov.sim.hystart): low_window, from the first ACK at a window of
    # 16 (Linux 6.6-6.13); always, from the first ACK (Linux 6.14 on, ns-3): each round then starts a flight
    hystart_rounds: str = HYSTART_ROUNDS[0]
    fast_alpha: float = 20.0  # FAST TCP: packets each flow keeps queued (Caltech release default)

    @property
    def recovery_mode(self) -> str:
        if self.recovery:
            return self.recovery
        return self.variant if self.variant in ("reno", "newreno", "sack") else "sack"


@dataclass
class LossSpec:
    model: str = "none"  # none | bernoulli | gilbert
    rate: float = 0.0  # mean fraction of packets lost
    burst: float = 1.0  # gilbert: mean burst length in packets


@dataclass
class VoiceSpec:
    """A voice call beside the flows (White et al. Test 2): ``RunResult.mos`` scores it."""

    codec: str = "g711"  # a name in hfcprov.sim.codecs.CODECS
    jitter_buffer: float = 0.060  # s of de-jitter buffer at the listener
    tail: float = 3.0  # s: the call runs from the end of warm-up to this long before the end


@dataclass
class PgsSpec:
    """Proactive Grant Service on the low-latency flow of an LLD aggregate (``aqm: lld``): the CMTS
    grants it ``rate`` (Guaranteed Grant Rate, 24.45) every ``interval`` (Guaranteed Grant Interval,
    24.44; None: one MAP interval) without a request. Only a request-grant upstream has grants to
    give; on the token bucket there is no grant to wait for and it changes nothing."""

    rate: float = 0.0  # bits/s
    interval: float | None = None  # s


@dataclass
class FlowSpec:
    start: float = 0.0  # s
    size: int | None = None  # bytes; None: long-lived (runs to the end)
    variant: str | None = None  # per-flow TCP variant; None: the scenario's
    # s: this flow's base RTT (a farther server), >= the scenario's rtt; the difference is added half
    # each way on the server's side of the bottleneck; None: the scenario's rtt
    rtt: float | None = None


@dataclass
class Scenario:
    rate: float  # bits/s: Max Sustained Traffic Rate of the shaped (bottleneck) service flow
    buffer: int | None  # bytes: drop-tail buffer (Buffer Control target); None: unlimited
    rtt: float = 0.040  # s: base RTT, split equally over the two directions
    burst: int = DEFAULT_MAX_TRAFFIC_BURST  # bytes: Max Traffic Burst
    peak: float | None = None  # bits/s: Peak Traffic Rate
    channel: float | None = None  # bits/s: channel capacity; None: the peak (or sustained) rate
    overhead: int = 18  # bytes of framing per packet on the shaped link (Ethernet header + CRC)
    direction: str = "upstream"  # which way the data flows: through the CM upstream or the CMTS downstream
    access_rate: float | None = None  # bits/s: the hop feeding the bottleneck (e.g. 25M HFC -> 10M LAN)
    reverse_rate: float | None = None  # bits/s: shaping of the ACK direction; None: unshaped
    reverse_buffer: int | None = None  # bytes
    reverse_channel: float = 1e9  # bits/s
    mac: str = "tokenbucket"  # tokenbucket | docsis (request-grant, issue 7)
    # mac: docsis: the modem profile (hfcprov.queue.profile: docsis3.1, docsis3.0-4ch, docsis2.0, ...,
    # with overrides: "docsis3.1:map_interval=1ms"); None: docsis2.0 (the calibrated 2011 model) when
    # mac_params are given (they are that model's), else the default profile (docsis3.1)
    profile: str | None = None
    # mac: docsis parameters: hfcprov.queue.grant.MacParams fields plus preset (docsis11 | docsis30),
    # modems (saturating neighbours), buffer_overhead, buffer_block; None: MacParams() (calibrated)
    mac_params: dict | None = None
    reverse_mac: str = "tokenbucket"  # docsis: ACKs go up through a request-grant CM (downstream data)
    reverse_mac_params: dict | None = None  # as mac_params for that CM; None: DOCSIS 1.1
    # queue discipline of the shaped service flow (mac: tokenbucket): none (drop-tail) or a name in
    # hfcprov.sim.links.QUEUES (issue 20's AQMs); aqm_params: that discipline's parameters
    aqm: str = "none"
    aqm_params: dict | None = None
    pgs: PgsSpec | None = None  # aqm: lld: Proactive Grant Service on the low-latency flow
    voice: VoiceSpec | None = None  # a voice call beside the flows; None: none
    flows: list[FlowSpec] = field(default_factory=lambda: [FlowSpec()])
    tcp: TcpOptions = field(default_factory=TcpOptions)
    data_loss: LossSpec = field(default_factory=LossSpec)
    ack_loss: LossSpec = field(default_factory=LossSpec)
    probe_rate: float = 0.0  # probes per second (ping-like), 0: none
    probe_size: int = 64  # bytes (IP)
    # bytes: each probe's size drawn from a normal distribution around probe_size with this deviation (a
    # game's packets: docsis-ns3's upstream game session is 110 +- 20 B); 0: every probe probe_size
    probe_size_sd: int = 0
    duration: float = 10.0  # s simulated
    warmup: float = 0.0  # s excluded from goodput and queue figures
    seed: int = 1  # every random draw of a run comes from it: same seed, same result
    # s: each flow starts up to this much after its start (uniform, from the seed), as real runs do
    start_jitter: float = 0.01
    # s: each data packet reaches the bottleneck up to this much later (uniform, never reordered): the
    # timing noise of hosts and of the emulator's delay line; 0: a deterministic path
    jitter: float = 0.0
    sample_interval: float | None = 0.1  # s between queue/cwnd samples; None: no series
    name: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.pgs, dict):  # as hfcprov.queue.select.asf_keys gives it: plain numbers
            self.pgs = PgsSpec(**self.pgs)

    # -- construction ---------------------------------------------------------
    @classmethod
    def from_service_flow(cls, sf, docsis_version: str = DEFAULT_DOCSIS_VERSION, **overrides) -> Scenario:
        """A scenario whose bottleneck is this ``hfcprov.model.ServiceFlow`` (``flow_keys``)."""
        return cls(**{**flow_keys(sf, docsis_version), **overrides})

    @classmethod
    def from_dict(cls, d: dict, source: str = "<scenario>", *, written: bool = False) -> Scenario:
        """Build from a YAML/JSON mapping whose quantities may carry units (``5M``, ``64KiB``, ``40ms``).

        ``written``: the mapping is what a person wrote (a scenario or sweep file): it is read with
        the CLI's rules (``_WRITTEN``), so ``rtt: 40`` is refused like ``--rtt 40``. A program's
        plain numbers (seconds, bits/s) are taken as they are."""
        if not isinstance(d, dict):
            raise ScenarioError(f"{source}: a scenario is a mapping of keys to values")
        d = dict(d)
        if "rate" not in d:
            raise ScenarioError(f"{source}: missing key 'rate' (the max sustained rate, e.g. rate: 5M)")
        if "buffer" not in d:
            raise ScenarioError(f"{source}: missing key 'buffer' (the Buffer Control target, e.g. buffer: 64KiB)")
        kw = _convert(cls, d, source, "", written)
        if kw.get("aqm_params") is not None and kw.get("aqm", "none") != "none":
            kw["aqm_params"] = _aqm_params(kw["aqm_params"], kw["aqm"], source, written)
        return cls(**kw)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **kw) -> Scenario:
        return dataclasses.replace(self, **kw)

    def upstream_findings(self) -> list[str]:
        """What this upstream provisions that its modem profile's request-grant MAC cannot carry, one line
        each (``hfcprov.queue.sizing.upstream_checks``: a rate beyond the channel, a Max Traffic Burst that
        caps the rate); the simulation shows it as a real upstream would, and the user should know why.
        None to say for a token bucket or the calibrated 2011 MAC (``mac_params`` without a profile)."""
        if self.direction != "upstream" or self.mac != "docsis" or (self.profile is None and self.mac_params):
            return []
        from hfcprov.queue.inputs import DEFAULT_PROFILE, SizingError, SizingInputs
        from hfcprov.queue.sizing import upstream_checks

        try:
            tier = SizingInputs(self.rate, max(self.rtt, 1e-3), aqm_latency_target=None, mac="docsis",
                                profile=self.profile or DEFAULT_PROFILE, burst=self.burst, peak=self.peak)
        except SizingError:  # not a tier sizing takes (the simulator says what it makes of it)
            return []
        return [line for _, line in upstream_checks(tier)]


def flow_keys(sf, docsis_version: str = DEFAULT_DOCSIS_VERSION) -> dict:
    """The scenario keys a ``hfcprov.model.ServiceFlow`` decides: the one mapping from a flow.

    The buffer is the queue a modem gives the flow (``BufferControl.queue_size``, the rule
    the emulated modem applies too); the burst is the flow's (DOCSIS default 3044).
    """
    if not sf.max_sustained_rate:
        raise ScenarioError(f"{sf.name}: no Max Sustained Traffic Rate to simulate")
    try:
        buffer = sf.queue_size()
    except BufferRejected as err:
        raise ScenarioError(f"{sf.name}: {err}") from None
    keys = {"rate": float(sf.max_sustained_rate), "buffer": buffer, "burst": sf.burst,
            "direction": sf.direction, "name": sf.service_class_name or sf.path or ""}
    if sf.peak_rate:
        keys["peak"] = float(sf.peak_rate)
    keys.update(aqm_keys(sf, docsis_version))  # hfcprov.model.upstream_aqm: the emulated modem's rule too
    return keys


# key -> parser for quantities; everything else is converted by its declared type
_PARSERS = {
    "rate": parse_rate, "peak": parse_rate, "channel": parse_rate, "access_rate": parse_rate,
    "reverse_rate": parse_rate, "reverse_channel": parse_rate,
    "buffer": parse_bytes, "burst": parse_bytes, "reverse_buffer": parse_bytes, "overhead": parse_bytes,
    "mss": parse_bytes, "header_bytes": parse_bytes, "socket_buffer": parse_bytes,
    "initial_ssthresh": parse_bytes, "probe_size": parse_bytes, "probe_size_sd": parse_bytes, "size": parse_bytes,
    "rtt": parse_duration, "timer_granularity": parse_duration, "min_rto": parse_duration,
    "initial_rto": parse_duration, "delack_timeout": parse_duration, "start": parse_duration,
    "jitter_buffer": parse_duration, "tail": parse_duration,
    "duration": parse_duration, "warmup": parse_duration, "sample_interval": parse_duration,
    "start_jitter": parse_duration, "interval": parse_duration, "jitter": parse_duration,
}
# Written by a person: a number is read as its text (hfcprov.units.as_written: a time needs its unit)
# and the CLI's plausibility checks apply (an RTT over 10 s, a link rate under 1 kb/s).
_WRITTEN = {"rtt": parse_rtt, "rate": parse_link_rate, "peak": parse_link_rate, "channel": parse_link_rate,
            "access_rate": parse_link_rate, "reverse_rate": parse_link_rate, "reverse_channel": parse_link_rate}


def _loss_fraction(value) -> float:
    """A loss rate: a fraction of packets (0.01) or a percentage (1%); run's checks bound it."""
    text = str(value).strip()
    return float(text[:-1]) / 100 if text.endswith("%") else float(text)


# a loss model's keys are a fraction and a packet count, not the link's rate and burst bytes
_LOSS_PARSERS = {"rate": _loss_fraction, "burst": float}
_NESTED = {"tcp": TcpOptions, "data_loss": LossSpec, "ack_loss": LossSpec, "voice": VoiceSpec, "pgs": PgsSpec}
# quantities inside mac_params / reverse_mac_params (hfcprov.queue.grant.MacParams and the CM's keys)
_MAC_PARSERS = {
    "channel_rate": parse_rate, "map_interval": parse_duration, "map_advance": parse_duration,
    "propagation": parse_duration, "minislot_bytes": parse_bytes, "max_grant_bytes": parse_bytes,
    "frame_overhead": parse_bytes, "fragment_overhead": parse_bytes, "burst_overhead": parse_bytes,
    "buffer_overhead": parse_bytes, "buffer_block": parse_bytes,
    # mac: cmts (hfcprov.sim.cmts.CmtsParams)
    "granularity": parse_duration, "max_delay": parse_duration, "interleave_delay": parse_duration,
    "map_bytes": parse_bytes, "other_frame": parse_bytes, "mac_header": parse_bytes,
    "extended_header": parse_bytes,
}
_CHOICES = {
    "direction": ("upstream", "downstream"),
    "model": ("none", "bernoulli", "gilbert"),
    "ssthresh_from": SSTHRESH_FROM,
    "hystart": HYSTART,
    "hystart_rounds": HYSTART_ROUNDS,
    "delack_timer": ("auto", "exact", "tick"),
    "rto_rule": ("rfc6298", "linux"),
    "cubic_arithmetic": ("rfc9438", "linux", "ns3"),
    "ca_rtt": ("oldest", "newest"),
}


def _convert(cls, d: dict, source: str, prefix: str, written: bool = False) -> dict:
    known = {f.name: f for f in fields(cls)}
    out = {}
    for key, value in d.items():
        where = f"{source}: {prefix}{key}"
        if key not in known:
            from hfcprov.suggest import did_you_mean

            raise ScenarioError(f"{where}: unknown key (known: {', '.join(sorted(known))}){did_you_mean(key, known)}")
        try:
            out[key] = _value(cls, key, value, where, written)
        except ScenarioError:
            raise
        except (HfcprovError, ValueError, TypeError) as err:
            raise ScenarioError(f"{where}: {err}") from None
    return out


def _value(cls, key, value, where, written=False):
    if cls is Scenario and key in ("mac_params", "reverse_mac_params"):
        return _mac_params(value, where, written)
    if cls is Scenario and key == "voice":
        if value is None or value is False:
            return None
        if value is True:
            return VoiceSpec()
        if isinstance(value, str):
            value = {"codec": value}
    if cls is VoiceSpec and key == "codec":
        if value not in CODECS:
            raise ScenarioError(f"{where}: {value!r} is not one of {', '.join(CODECS)}")
        return value
    if cls is Scenario and key in _NESTED:
        if isinstance(value, _NESTED[key]):
            return value
        if value is None and cls.__dataclass_fields__[key].default is None:
            return None  # an optional part left out (pgs: none), as to_dict writes it
        if key.endswith("_loss") and isinstance(value, (int, float, str)) and not isinstance(value, bool):
            value = {"model": "bernoulli", "rate": value}  # "data_loss: 0.01" means Bernoulli 1%
        if key == "tcp" and isinstance(value, str):
            value = {"variant": value}
        if not isinstance(value, dict):
            raise ScenarioError(f"{where}: expected a mapping")
        if key == "tcp" and "timer" in value:
            value = dict(value)
            timer = value.pop("timer")
            if timer not in TIMERS:
                raise ScenarioError(f"{where}.timer: {timer!r} is not one of {', '.join(TIMERS)}")
            value.setdefault("timer_granularity", f"{TIMERS[timer][0]!r}s")  # as text: read like the file's
            value.setdefault("min_rto", f"{TIMERS[timer][1]!r}s")
        if key == "tcp" and "host" in value:  # a preset (hfcprov.sim.hosts): the keys given beside it win
            from hfcprov.sim.hosts import HOSTS

            value = dict(value)
            host = value.pop("host")
            if host not in HOSTS:
                raise ScenarioError(f"{where}.host: {host!r} is not one of {', '.join(HOSTS)}")
            value = {**{k: f"{v!r}s" if _PARSERS.get(k) is parse_duration else v  # read like the file's
                        for k, v in HOSTS[host].items()}, **value}
        if key == "tcp" and value.get("super_fast_retransmit") is not None:
            value = dict(value)
            value["dupthresh"] = 1 if value.pop("super_fast_retransmit") else 3
        nested = _NESTED[key]
        return nested(**_convert(nested, value, where.split(": ", 1)[0], f"{key}.", written))
    if cls is Scenario and key == "flows":
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                raise ScenarioError(f"{where}: must be >= 0")
            return [FlowSpec() for _ in range(value)]
        if not isinstance(value, list):
            raise ScenarioError(f"{where}: a number of long-lived flows or a list of {{start, size}}")
        flows = []
        for i, item in enumerate(value):
            if isinstance(item, FlowSpec):
                flows.append(item)
                continue
            if not isinstance(item, dict):
                raise ScenarioError(f"{where}[{i}]: expected a mapping like {{start: 1s, size: 3MB}}")
            flows.append(FlowSpec(**_convert(FlowSpec, item, where.split(": ", 1)[0], f"flows[{i}].", written)))
        return flows
    if value is None:
        return None
    if cls is TcpOptions and key == "hystart" and isinstance(value, bool):
        value = "auto" if value else "off"  # YAML reads a bare off/on as a boolean
    if written and cls is Scenario and key in _WRITTEN:
        return _WRITTEN[key](as_written(value))
    if cls is LossSpec and key in _LOSS_PARSERS:
        return _LOSS_PARSERS[key](value)
    if key in _PARSERS:
        return _PARSERS[key](as_written(value) if written and _PARSERS[key] is parse_duration else value)
    if key in _CHOICES and value not in _CHOICES[key]:
        raise ScenarioError(f"{where}: {value!r} is not one of {', '.join(str(c) for c in _CHOICES[key])}")
    ftype = str(next(f.type for f in fields(cls) if f.name == key))
    if ftype.startswith("bool"):
        if isinstance(value, bool):
            return value
        if str(value).lower() in ("1", "true", "yes", "on"):
            return True
        if str(value).lower() in ("0", "false", "no", "off"):
            return False
        raise ScenarioError(f"{where}: expected true or false, got {value!r}")
    if ftype.startswith("int"):
        if isinstance(value, bool) or float(value) != int(float(value)):
            raise ScenarioError(f"{where}: expected a whole number, got {value!r}")
        return int(float(value))
    if ftype.startswith("float"):
        if isinstance(value, bool):
            raise ScenarioError(f"{where}: expected a number, got {value!r}")
        return float(value)
    return value


def _mac_params(value, where: str, written: bool = False) -> dict | None:
    """A MAC parameter mapping with its quantities parsed; unknown keys and bad values named."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: expected a mapping of MAC parameters (e.g. {{preset: docsis11}})")
    from hfcprov.sim.mac_link import check_params

    out = {}
    for k, v in value.items():
        try:
            parser = _MAC_PARSERS.get(k) if v is not None else None
            out[k] = parser(as_written(v) if written and parser is parse_duration else v) if parser else v
        except (HfcprovError, ValueError, TypeError) as err:
            raise ScenarioError(f"{where}.{k}: {err}") from None
    try:
        check_params(out)
    except (HfcprovError, ValueError, TypeError) as err:
        raise ScenarioError(f"{where}: {err}") from None
    return out


def _aqm_params(value, aqm: str, source: str, written: bool) -> dict:
    """``aqm_params`` parsed for its discipline when the scenario is read, so a bad value names the
    file (and, written by a person, ``latency_target: 10`` is refused like ``rtt: 40``)."""
    if written and isinstance(value, dict):
        value = {k: as_written(v) if k in DURATION_KEYS and v is not None else v for k, v in value.items()}
    try:
        return parse_params(value, aqm)
    except AqmConfigError as err:
        raise ScenarioError(f"{source}: aqm_params: {err}") from None


def apply_overrides(d: dict, assignments: list[str], source: str = "--set") -> dict:
    """``["tcp.mss=536", "rate=5M"]`` applied to a scenario mapping (values parsed as YAML scalars)."""
    import yaml

    d = copy.deepcopy(d)
    for item in assignments:
        if "=" not in item:
            raise ScenarioError(f"{source} {item!r}: expected key=value, e.g. tcp.mss=536")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw
        if _PARSERS.get(key.strip().rsplit(".", 1)[-1]) is parse_duration:
            value = as_written(value)  # typed by a person: `rtt=40` is refused like --rtt 40
        elif key.strip() in _WRITTEN:  # and `rate=5` like --rate 5 (a file's own keys are plain numbers)
            try:
                value = _WRITTEN[key.strip()](as_written(value))
            except (HfcprovError, ValueError) as err:
                raise ScenarioError(f"{source} {key.strip()}: {err}") from None
        set_path(d, key.strip(), value, source)
    return d


def set_path(d: dict, dotted: str, value, source: str = "--set") -> None:
    parts = dotted.split(".")
    node = d
    for part in parts[:-1]:
        nxt = node.get(part)
        if nxt is None or isinstance(nxt, (int, float, str)):
            nxt = {} if nxt is None else ({"model": "bernoulli", "rate": nxt} if part.endswith("_loss") else {})
            node[part] = nxt
        if not isinstance(nxt, dict):
            raise ScenarioError(f"{source} {dotted}: {part} is not a mapping")
        node = nxt
    node[parts[-1]] = value
