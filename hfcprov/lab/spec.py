"""The campaign file: what to test, on what, and how; expanded into points.

A campaign YAML names the target (``sim``, ``emu`` or ``modem``), an optional
tier template, the parameter grid, the traffic, repetitions and whether to run
the simulator beside every measured point. Every quantity is parsed here, once,
with ``hfcprov.units``; the rest of ``lab`` sees bits/s, bytes and seconds.

The grid's axes are declared once, as the fields of ``hfcprov.lab.schema.Point``
(docs/campaign-reference.md is generated from them).

A mistake in the file raises ``CampaignError`` naming the file, the line and
the key path (``grid.buffer[2]``).

The file (see ``examples/buffer-sweep.yaml``, ``emu-campaign.yaml``, ``lab-campaign.yaml``)::

    name: buffer-sweep                 # default: the file's stem
    target: sim                        # or {kind: emu | modem, modems: [{mac, ip}], cmts, online_timeout,
                                       #     snmp: {community, write_community, port, timeout, retries},
                                       #     tftp: {root, host, port}, probe: {server, port}, secret}
    template: ../templates/res-50x5.j2 # tier template (needed for emu and modem), rendered per point with
                                       # us_rate, us_buffer, ds_rate, rtt, flows, ... (Point.template_vars)
    grid:                              # one value or a list each; every combination is a point
      upstream_rate: [1M, 2M]          # required
      buffer: [16KiB, 64KiB]           # required: TargetBuffer
      downstream_rate: 50M             # optional
      rtt: [40ms, 100ms]               # added round-trip delay (default 40ms)
      flows: 1                         # parallel upstream TCP flows
      congestion_control: newreno      # reno | newreno | sack | cubic | fast
      loss: 0                          # plant loss: 0.01 or 1%
      mac: tokenbucket                 # simulator link model: tokenbucket | docsis (request-grant MAC)
      aqm: none                        # upstream queue: none (drop-tail) | docsis-pie | lld | file (as the config says)
      far_rtt: 80ms                    # sim: a second server; flows 2, 4, ... go there (default: one server)
    traffic: {duration: 30s, warmup: 5s, probe_interval: 100ms, voip: false}
    repetitions: 3
    simulate: true                     # emu/modem: also predict every point with the simulator
    seed: 1                            # repetition r runs with seed + r
    jobs: 0                            # simulator processes (0: one per CPU)

``env:NAME`` as ``secret``, ``community`` or ``write_community`` reads the value
from the environment when the campaign runs, so it is in neither the file nor the store.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import yaml

from hfcprov import macaddr
from hfcprov.errors import HfcprovError, UnitError
from hfcprov.lab.schema import AXES, REQUIRED, Point, file_key
from hfcprov.units import as_written, parse_duration, parse_rtt

KINDS = ("sim", "emu", "modem")


class CampaignError(HfcprovError):
    """A campaign file (or a store) that cannot be used, with where and why."""


@dataclass(frozen=True)
class Traffic:
    duration: float = file_key(20.0, "seconds measured per point (after the warm-up)", "30s", "s")
    warmup: float = file_key(2.0, "seconds before measuring: TCP slow start and its recovery are not counted; the "
                             "emulator's probe lengthens it when the loaded RTT is long", "5s", "s")
    probe_interval: float = file_key(0.1, "seconds between latency probes", "100ms", "s")
    voip: bool = file_key(False, "run a G.711 voice stream beside the bulk flows and score its MOS", "true")


@dataclass(frozen=True)
class Target:
    kind: str = file_key("sim", "what runs the points: sim (the simulator), emu (the emulated modem in network "
                           "namespaces), modem (a real modem behind a CMTS)", "emu")
    # emu and modem: where configs go and how the modem is reset and audited.
    modems: tuple = file_key((), "modem: the one modem under test, [{mac, ip, name}]",
                        "[{mac: 00:11:22:33:44:55, ip: 10.1.0.20}]")
    cmts: str | None = file_key(None, "modem: the CMTS address (for its modem table)", "10.1.0.1")
    snmp: dict = file_key({}, "community, write_community (env:NAME reads the environment), port, timeout, "
                         "retries, version", "{community: public, write_community: env:CM_WRITE}")
    tftp: dict = file_key({}, "modem: root (the folder the TFTP server serves), host and port (hfcprov serves it "
                         "itself when host is given)", "{root: /srv/tftp, host: 10.1.0.2}")
    probe: dict = file_key({}, "modem: server (the host behind the CMTS answering the probe), port",
                      "{server: 10.2.0.10}")
    online_timeout: float = file_key(120.0, "seconds from reset to online with the new config", "90s", "s")
    secret: str | None = file_key(None, "CMTS MIC shared secret (env:NAME reads the environment); never stored",
                             "env:CMTS_SECRET")


@dataclass(frozen=True, kw_only=True)
class Campaign:
    name: str = file_key(REQUIRED, "campaign name (default: the file's stem)", "buffer-sweep")
    target: Target = file_key(Target(), "target kind, or a mapping (see target.*)", "sim")
    grid: dict = file_key(REQUIRED, "axes: one value or a list each; every combination is a point (see grid.*)",
                     "{upstream_rate: [1M, 2M], buffer: [16KiB, 64KiB]}")  # axis -> tuple of parsed values
    traffic: Traffic = file_key(Traffic(), "what runs through each point (see traffic.*)", "{duration: 30s}")
    repetitions: int = file_key(1, "runs per point; repetition r uses seed + r and the report draws error bars", "3")
    simulate: bool = file_key(True, "emu/modem: also predict every point with the simulator", "false")
    template: str | None = file_key(None, "tier template (needed for emu and modem), relative to the campaign file, "
                                     "rendered per point with Point.template_vars", "../templates/res-50x5.j2")
    seed: int = file_key(1, "seed of the first repetition", "7")
    jobs: int = file_key(0, "simulator processes (0: one per CPU)", "2")
    description: str = file_key("", "free text shown at the top of the report", "White et al. Test 1")
    source: str = "<campaign>"

    def points(self) -> list[Point]:
        keys = list(AXES)
        combos = itertools.product(*(self.grid[k] for k in keys), range(self.repetitions))
        out = []
        for i, combo in enumerate(combos):
            values = dict(zip(keys + ["rep"], combo))
            out.append(Point(index=i, seed=self.seed + values["rep"], **values))
        return out

    def to_record(self) -> dict:
        """What the store keeps about the campaign: everything but the secrets."""
        d = asdict(self)
        d["target"].pop("secret", None)
        snmp = d["target"].get("snmp") or {}
        if "write_community" in snmp:
            snmp["write_community"] = "(set)"
        return d

    @property
    def fingerprint(self) -> str:
        """Hash of what decides the points and how they run: a resume must match it."""
        rec = self.to_record()
        for k in ("description", "source", "jobs"):
            rec.pop(k, None)
        return hashlib.sha256(json.dumps(rec, sort_keys=True, default=str).encode()).hexdigest()[:16]


def load_campaign(path: str | Path) -> Campaign:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise CampaignError(f"{path}: cannot read campaign file: {err.strerror}") from None
    return parse_campaign(text, source=str(path))


def parse_campaign(text: str, source: str = "<campaign>") -> Campaign:
    try:
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark else source
        raise CampaignError(f"{where}: not valid YAML: {getattr(err, 'problem', err)}") from None
    return _Reader(source, node).campaign(data if data is not None else {})


class _Reader:
    """Turns the loaded YAML into a Campaign, reporting errors with line and key path."""

    def __init__(self, source: str, node):
        self.source = source
        self.root = node

    def fail(self, path: list, message: str):
        line = _line_of(self.root, path)
        where = f"{self.source}:{line}" if line else self.source
        dotted = _dotted(path)
        raise CampaignError(f"{where}: {dotted + ': ' if dotted else ''}{message}")

    def mapping(self, value, path, allowed):
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping, got {type(value).__name__}")
        for k in value:
            if k not in allowed:
                self.fail(path + [k], f"unknown key (known: {', '.join(sorted(allowed))})")
        return value

    def campaign(self, data) -> Campaign:
        top = self.mapping(data, [], _keys(Campaign))
        name = top.get("name") or Path(self.source).stem
        if not isinstance(name, str):
            self.fail(["name"], "expected a string")
        target = self.target(top.get("target", {"kind": "sim"}))
        grid = self.grid(top.get("grid"))
        traffic = self.traffic(top.get("traffic"))
        reps = self.integer(top.get("repetitions", 1), ["repetitions"], minimum=1)
        template = top.get("template")
        if template is not None:
            if not isinstance(template, str):
                self.fail(["template"], "expected a path")
            p = Path(template)
            if not p.is_absolute() and self.source != "<campaign>":
                p = Path(self.source).parent / p
            if not p.exists():
                self.fail(["template"], f"template file {str(p)!r} not found")
            template = str(p)
        if target.kind != "sim" and template is None:
            self.fail(["template"], f"a {target.kind} campaign needs a tier template to build configs from")
        self.far_server(grid, target)
        simulate = top.get("simulate", True)
        if not isinstance(simulate, bool):
            self.fail(["simulate"], "expected true or false")
        return Campaign(name=name, target=target, grid=grid, traffic=traffic, repetitions=reps,
                        simulate=simulate, template=template,
                        seed=self.integer(top.get("seed", 1), ["seed"], minimum=0),
                        jobs=self.integer(top.get("jobs", 0), ["jobs"], minimum=0),
                        description=str(top.get("description", "")), source=self.source)

    def target(self, value) -> Target:
        if isinstance(value, str):
            value = {"kind": value}
        t = self.mapping(value, ["target"], _keys(Target))
        kind = t.get("kind", "sim")
        if kind not in KINDS:
            self.fail(["target", "kind"], f"unknown target {kind!r} (known: {', '.join(KINDS)})")
        modems = t.get("modems") or []
        if not isinstance(modems, list):
            self.fail(["target", "modems"], "expected a list of {mac, ip}")
        for i, m in enumerate(modems):
            self.mapping(m, ["target", "modems", i], {"mac", "ip", "name"})
            if "mac" not in m:
                self.fail(["target", "modems", i], "a modem needs its mac")
            try:  # one spelling everywhere: the published file name, SNMP indexes, the store
                modems[i] = {**m, "mac": macaddr.normalize(m["mac"])}
            except macaddr.MacAddressError as err:
                self.fail(["target", "modems", i, "mac"], str(err))
        if kind == "modem" and not modems:
            self.fail(["target", "modems"], "a modem campaign needs at least one modem (mac, ip)")
        if len(modems) > 1:
            # one queue under test per campaign: modems sharing an upstream would disturb each other's points
            self.fail(["target", "modems", 1], "one modem per campaign; run one campaign file per modem")
        snmp = self.mapping(t.get("snmp"), ["target", "snmp"],
                            {"community", "write_community", "port", "timeout", "retries", "version"})
        snmp = dict(snmp)
        if "timeout" in snmp:
            snmp["timeout"] = self.unit(parse_duration, snmp["timeout"], ["target", "snmp", "timeout"])
        for key in ("port", "retries"):
            if key in snmp:
                snmp[key] = self.integer(snmp[key], ["target", "snmp", key], minimum=0)
        tftp = self.mapping(t.get("tftp"), ["target", "tftp"], {"host", "port", "root"})
        probe = self.mapping(t.get("probe"), ["target", "probe"], {"server", "port"})
        timeout = self.unit(parse_duration, t.get("online_timeout", 120), ["target", "online_timeout"])
        secret = t.get("secret")
        return Target(kind=kind, modems=tuple(dict(m) for m in modems), cmts=t.get("cmts"),
                      snmp=dict(snmp), tftp=dict(tftp), probe=dict(probe), online_timeout=timeout,
                      secret=None if secret is None else str(secret))

    def grid(self, value) -> dict:
        """Every axis of ``Point`` (hfcprov.lab.schema) parsed by its own declaration."""
        g = self.mapping(value, ["grid"], set(AXES))
        out = {}
        for key, ax in AXES.items():
            raw = g.get(key, ax.default)
            if raw is REQUIRED:
                self.fail(["grid"], f"the grid needs {key} (one value or a list)")
            if raw is None:
                out[key] = (None,)  # the template decides
                continue
            items = raw if isinstance(raw, list) else [raw]
            if not items:
                self.fail(["grid", key], "empty list")
            values = []
            for i, item in enumerate(items):
                path = ["grid", key] + ([i] if isinstance(raw, list) else [])
                try:  # a time written as a bare YAML number is refused like `--rtt 30` (units.as_written)
                    v = ax.parse(as_written(item) if key in g and ax.parse in (parse_duration, parse_rtt) else item)
                except (UnitError, ValueError) as err:
                    self.fail(path, str(err))
                if v in values:
                    self.fail(path, f"{item!r} appears twice")
                values.append(v)
            out[key] = tuple(values)
        return out

    def far_server(self, grid: dict, target: Target) -> None:
        """``far_rtt``: a second server the simulator can place, beyond the near one (a point with one
        flow has none there: flows 2, 4, ... go to it)."""
        far = [v for v in grid["far_rtt"] if v is not None]
        if not far:
            return
        if target.kind != "sim":
            self.fail(["grid", "far_rtt"], f"a second server is simulated only (the {target.kind} target has one "
                                           "server); run it with target: sim")
        for v in far:
            for rtt in grid["rtt"]:
                if v <= rtt:
                    self.fail(["grid", "far_rtt"], f"{v * 1e3:g} ms is not beyond rtt {rtt * 1e3:g} ms "
                                                   "(the near server's)")

    def traffic(self, value) -> Traffic:
        t = self.mapping(value, ["traffic"], _keys(Traffic))
        duration = self.unit(parse_duration, t.get("duration", Traffic.duration), ["traffic", "duration"])
        if duration <= 0:
            self.fail(["traffic", "duration"], "must be greater than 0")
        probe = self.unit(parse_duration, t.get("probe_interval", Traffic.probe_interval),
                          ["traffic", "probe_interval"])
        if probe <= 0:
            self.fail(["traffic", "probe_interval"], "must be greater than 0")
        voip = t.get("voip", False)
        if not isinstance(voip, bool):
            self.fail(["traffic", "voip"], "expected true or false")
        return Traffic(duration=duration,
                       warmup=self.unit(parse_duration, t.get("warmup", Traffic.warmup), ["traffic", "warmup"]),
                       probe_interval=probe, voip=voip)

    def unit(self, parser, value, path):
        try:
            # a number written in the file is read as its text: `rtt: 30` is refused like `--rtt 30`
            return parser(as_written(value) if _in_file(self.root, path) else value)
        except UnitError as err:
            self.fail(path, str(err))

    def integer(self, value, path, minimum=0) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.fail(path, f"expected a whole number >= {minimum}, got {value!r}")
        return value


def _keys(cls) -> set[str]:
    """The keys a section of the file takes: its declared fields (``schema.file_key``)."""
    return {f.name for f in fields(cls) if "doc" in f.metadata}


def _dotted(path: list) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _in_file(node, path: list) -> bool:
    """Whether ``path`` is written in the YAML (else its value is a default)."""
    for p in path:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == str(p)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(p, int) and p < len(node.value):
            node = node.value[p]
        else:
            return False
    return node is not None


def _line_of(node, path: list) -> int | None:
    """1-based line of the deepest node along ``path`` that exists in the YAML."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for p in path:
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if k.value == str(p):
                    nxt = v
                    line = k.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(p, int) and p < len(node.value):
            nxt = node.value[p]
            line = nxt.start_mark.line + 1
        if nxt is None:
            break
        node = nxt
    return line
