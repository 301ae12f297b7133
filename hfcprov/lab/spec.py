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
    target: sim                        # or {kind: emu | modem, ...}: see target.* in docs/campaign-reference.md
    template: res-50x5                 # tier template (needed for emu and modem): a shipped tier or a path, rendered per point with
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

A ``modem`` target has a section per role, each with its own place on a dual-homed lab host
(``docs/lab-setup.md``): ``probe`` (the server behind the CMTS and where the probe leaves from),
``snmp`` (credentials, v2c or v3, and where SNMP leaves from), ``tftp`` (the folder a TFTP server
serves, or a remote publish command, and the published file name), ``cmts`` (its address and SNMP).
Every key of every section is a ``file_key`` field below: the parser, the store and
docs/campaign-reference.md are derived from those declarations.

``env:NAME`` as ``secret``, a community or an SNMPv3 key reads the value from the environment when
the campaign runs, so it is in neither the file nor the store.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import yaml

from hfcprov import macaddr
from hfcprov.errors import HfcprovError, UnitError
from hfcprov.lab.schema import AXES, REQUIRED, Point, file_key
from hfcprov.probe import DEFAULT_PORT
from hfcprov.suggest import did_you_mean
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


SNMP_VERSIONS = ("2c", "3")
AUTH_PROTOCOLS = ("MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512")  # hfcprov.snmp's (pysnmp's USM)
PRIV_PROTOCOLS = ("DES", "3DES", "AES", "AES128", "AES192", "AES256")
FROM_MODEM = "from-modem"  # tftp.filename: publish under the name the modem last loaded
SECRET_KEYS = ("community", "write_community", "auth_key", "priv_key")


@dataclass(frozen=True)
class SnmpAccess:
    """How SNMP reaches a modem (``target.snmp``) or the CMTS (``target.cmts.snmp``)."""

    version: str = file_key("2c", "2c or 3; 3 takes user, auth/priv protocols and keys, and refuses a community",
                            "3")
    community: str | None = file_key(None, "v2c read community (env:NAME reads the environment); default public",
                                     "env:CM_READ")
    write_community: str | None = file_key(None, "v2c community for the reset SET (env:NAME); default the read "
                                           "community", "env:CM_WRITE")
    user: str | None = file_key(None, "v3 USM user", "labuser")
    auth_protocol: str = file_key("SHA", "v3 authentication: " + " | ".join(AUTH_PROTOCOLS), "SHA256")
    auth_key: str | None = file_key(None, "v3 authentication key (env:NAME), or give key_file", "env:CM_AUTH")
    priv_protocol: str = file_key("AES", "v3 privacy: " + " | ".join(PRIV_PROTOCOLS), "AES")
    priv_key: str | None = file_key(None, "v3 privacy key (env:NAME); none: authNoPriv", "env:CM_PRIV")
    key_file: str | None = file_key(None, "v3 keys in a file of 'auth: KEY' and 'priv: KEY' lines (as snmp "
                                    "--v3-key-file), relative to the campaign file", "keys/lab.v3")
    port: int = file_key(161, "UDP port of the agent", "1161")
    timeout: float = file_key(2.0, "seconds per SNMP request", "1s", "s")
    retries: int = file_key(1, "retries per SNMP request", "2")
    namespace: str | None = file_key(None, "network namespace SNMP leaves from (the management side of the "
                                     "lab host)", "mgmt")
    source: str | None = file_key(None, "local address SNMP leaves from", "192.0.2.10")


@dataclass(frozen=True)
class TftpPublish:
    """Where a point's config file goes and under which name (``target.tftp``)."""

    root: str | None = file_key(None, "the folder the TFTP server serves: each point's file is written there",
                                "/srv/tftp")
    filename: str = file_key("{mac}.cm", "the published name: a pattern of the modem's mac, tier and name (as "
                             "build --pattern and dhcp export), or from-modem (the docsDevServerConfigFile it "
                             "loaded last)", "'{tier}.cm'")
    publish: str | None = file_key(None, "a command that copies the file to a remote TFTP server instead of root: "
                                   "{file} is the local file, {name} the published name", "scp -q {file} "
                                   "tftp@192.0.2.10:/srv/tftp/{name}")
    server: str | None = file_key(None, "the TFTP server the modem must load its file from "
                                  "(docsDevServerConfigTftpAddress); default host", "192.0.2.10")
    host: str | None = file_key(None, "hfcprov serves root itself on this address", "192.0.2.10")
    port: int = file_key(69, "with host: the UDP port", "69")
    namespace: str | None = file_key(None, "with host: the network namespace hfcprov's TFTP server runs in",
                                     "headend")


@dataclass(frozen=True)
class ProbeAccess:
    """The measurement's two ends (``target.probe``): the responder and where the probe leaves from."""

    server: str | None = file_key(None, "the host behind the CMTS that answers the probe (hfcprov probe "
                                  "responder)", "198.51.100.20")
    port: int = file_key(DEFAULT_PORT, "the responder's port (UDP echo and TCP bulk)", str(DEFAULT_PORT))
    namespace: str | None = file_key(None, "network namespace the probe runs in (the CPE side of the lab host)",
                                     "cpe")
    source: str | None = file_key(None, "local address the probe leaves from", "192.168.100.10")
    interface: str | None = file_key(None, "interface the probe leaves by (the one behind the modem)", "eth1")


@dataclass(frozen=True)
class CmtsAccess:
    """The CMTS (``target.cmts``: an address, or this mapping)."""

    address: str | None = file_key(None, "the CMTS's management address (its docsIfCmtsCmStatusTable and "
                                   "docsIf3CmtsCmRegStatusTable)", "192.0.2.1")
    snmp: SnmpAccess | None = file_key(None, "SNMP to the CMTS: target.snmp's keys, each defaulting to "
                                       "target.snmp's", "{version: 3, user: cmtsuser, key_file: keys/cmts.v3}")


@dataclass(frozen=True)
class ModemEntry:
    """One modem of ``target.modems`` (a campaign tests one)."""

    mac: str = file_key(REQUIRED, "the modem's MAC (any notation)", "00:11:22:33:44:55")
    ip: str | None = file_key(None, "its management address; default: the address target.cmts lists", "10.1.0.50")
    name: str | None = file_key(None, "a name for reports and the file name pattern", "lab-cm-1")
    tier: str | None = file_key(None, "the tier the file name pattern's {tier} means; default the template's "
                                "name", "res-50x5")


@dataclass(frozen=True)
class Target:
    kind: str = file_key("sim", "what runs the points: sim (the simulator), emu (the emulated modem in network "
                           "namespaces), modem (a real modem behind a CMTS)", "emu")
    # emu and modem: where configs go and how the modem is reset and audited.
    modems: tuple = file_key((), "modem: the one modem under test (see target.modems[])",
                        "[{mac: 00:11:22:33:44:55, ip: 10.1.0.20}]")
    cmts: CmtsAccess | None = file_key(None, "modem: the CMTS (see target.cmts.*): its registration table proves "
                                       "a reboot and gives the modem's address", "192.0.2.1")
    snmp: SnmpAccess = file_key(SnmpAccess(), "modem: SNMP to the modem (see target.snmp.*)",
                                "{version: 3, user: labuser, key_file: keys/lab.v3}")
    tftp: TftpPublish = file_key(TftpPublish(), "modem: where each point's file goes (see target.tftp.*)",
                                 "{root: /srv/tftp}")
    probe: ProbeAccess = file_key(ProbeAccess(), "modem: the probe's ends (see target.probe.*)",
                                  "{server: 198.51.100.20, namespace: cpe}")
    online_timeout: float = file_key(120.0, "seconds from reset to proven back on the new file", "90s", "s")
    poll_interval: float = file_key(2.0, "modem: seconds between SNMP polls while it reboots", "1s", "s")
    max_unreachable: int = file_key(3, "modem: stop the campaign after this many points in a row whose modem "
                                    "never answered (0: never stop)", "5")
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
    template: str | None = file_key(None, "tier template (needed for emu and modem): a file, relative to the "
                                     "campaign file, or a shipped tier by name; rendered per point with "
                                     "Point.template_vars", "res-50x5")
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
        for snmp in (d["target"].get("snmp"), (d["target"].get("cmts") or {}).get("snmp")):
            for key in SECRET_KEYS:
                if snmp and snmp.get(key) is not None:
                    snmp[key] = "(set)"
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
                self.fail(path + [k], f"unknown key (known: {', '.join(sorted(allowed))}){did_you_mean(k, allowed)}")
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
                p = self.shipped_tier(template, p)
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

    def shipped_tier(self, name: str, tried: Path) -> Path:
        """A template that is no file here: a shipped tier by name (``res-50x5``), as ``build -t`` takes it,
        so a campaign file works from an installed wheel; else the error names both."""
        from hfcprov.tiers.templates import TemplateError, locate

        try:
            return locate(name)
        except TemplateError as err:
            shipped = str(err).split("shipped tiers: ", 1)[-1].rstrip(")")
            self.fail(["template"], f"template file {str(tried)!r} not found, and {name!r} is no shipped tier "
                                    f"({shipped}){did_you_mean(Path(name).stem, shipped.split(', '))}")

    def target(self, value) -> Target:
        if isinstance(value, str):
            value = {"kind": value}
        t = self.mapping(value, ["target"], _keys(Target))
        kind = t.get("kind", "sim")
        if kind not in KINDS:
            self.fail(["target", "kind"], f"unknown target {kind!r} (known: {', '.join(KINDS)}){did_you_mean(kind, KINDS)}")
        modems = t.get("modems") or []
        if not isinstance(modems, list):
            self.fail(["target", "modems"], "expected a list of {mac, ip}")
        for i, m in enumerate(modems):
            m = self.mapping(m, ["target", "modems", i], _keys(ModemEntry))
            if "mac" not in m:
                self.fail(["target", "modems", i], "a modem needs its mac")
            try:  # one spelling everywhere: the published file name, SNMP indexes, the store
                modems[i] = {**{k: str(v) for k, v in m.items() if v is not None},
                             "mac": macaddr.normalize(m["mac"])}
            except macaddr.MacAddressError as err:
                self.fail(["target", "modems", i, "mac"], str(err))
        if kind == "modem" and not modems:
            self.fail(["target", "modems"], "a modem campaign needs at least one modem (mac, ip)")
        if len(modems) > 1:
            # one queue under test per campaign: modems sharing an upstream would disturb each other's points
            self.fail(["target", "modems", 1], "one modem per campaign; run one campaign file per modem")
        snmp = self.snmp(t.get("snmp"), ["target", "snmp"])
        cmts = self.cmts(t.get("cmts"), snmp)
        tftp = self.section(TftpPublish, t.get("tftp"), ["target", "tftp"])
        if tftp.root is not None:
            tftp = replace(tftp, root=self.path_of(tftp.root))
        probe = self.section(ProbeAccess, t.get("probe"), ["target", "probe"])
        if kind == "modem":
            if not tftp.root and not tftp.publish:
                self.fail(["target", "tftp"], "a modem campaign publishes its files: give root (the folder the "
                                              "TFTP server serves) or publish (a command)")
            if not probe.server:
                self.fail(["target", "probe", "server"], "the host behind the CMTS that answers the probe is needed")
            if not modems[0].get("ip") and cmts is None:
                self.fail(["target", "modems", 0], "the modem needs its ip, or target.cmts to find it")
            if tftp.filename != FROM_MODEM:
                from hfcprov.tiers.naming import FileNameError, config_file_name

                try:
                    config_file_name(tftp.filename, {"mac": modems[0]["mac"], "tier": "tier", "name": "name"})
                except FileNameError as err:
                    self.fail(["target", "tftp", "filename"], f"{err} (fields: mac, tier, name; or {FROM_MODEM})")
        timeout = self.unit(parse_duration, t.get("online_timeout", 120), ["target", "online_timeout"])
        poll = self.unit(parse_duration, t.get("poll_interval", Target.poll_interval), ["target", "poll_interval"])
        if poll <= 0:
            self.fail(["target", "poll_interval"], "must be greater than 0")
        secret = t.get("secret")
        return Target(kind=kind, modems=tuple(dict(m) for m in modems), cmts=cmts, snmp=snmp, tftp=tftp,
                      probe=probe, online_timeout=timeout, poll_interval=poll,
                      max_unreachable=self.integer(t.get("max_unreachable", Target.max_unreachable),
                                                   ["target", "max_unreachable"], minimum=0),
                      secret=None if secret is None else str(secret))

    def snmp(self, value, path, base: SnmpAccess | None = None) -> SnmpAccess:
        """``target.snmp`` (or ``target.cmts.snmp`` over ``base``): SNMPv3 is never silently v2c."""
        wanted = str((value or {}).get("version", "")).lower().removeprefix("v") if isinstance(value, dict) else ""
        if base is not None and wanted and wanted != base.version:  # another version: none of base's credentials
            base = replace(base, **{k: getattr(SnmpAccess, k) for k in ("community", "write_community", "user",
                                                                         "auth_protocol", "auth_key", "priv_protocol",
                                                                         "priv_key", "key_file")})
        snmp = self.section(SnmpAccess, value, path, base)
        version = str(snmp.version).lower().removeprefix("v")
        if version not in SNMP_VERSIONS:
            self.fail(path + ["version"], f"unknown SNMP version {snmp.version!r} (known: 2c, 3)")
        given = set(value or {})
        if version == "3":
            wrong = [k for k in ("community", "write_community") if k in given]
            if wrong:
                self.fail(path + [wrong[0]], "SNMPv3 has no community: give user and keys (auth_key/priv_key "
                                             "or key_file)")
            if not snmp.user:
                self.fail(path + ["user"], "SNMPv3 needs a user")
            if not snmp.auth_key and not snmp.key_file:
                self.fail(path + ["auth_key"], "SNMPv3 needs an auth key (auth_key: env:NAME, or key_file)")
            for key, known in (("auth_protocol", AUTH_PROTOCOLS), ("priv_protocol", PRIV_PROTOCOLS)):
                if str(getattr(snmp, key)).upper() not in known:
                    self.fail(path + [key], f"unknown {key.replace('_', ' ')} {getattr(snmp, key)!r} "
                                            f"(known: {', '.join(known)})")
        else:
            wrong = [k for k in ("user", "auth_key", "priv_key", "key_file") if k in given]
            if wrong:
                self.fail(path + [wrong[0]], "an SNMPv3 key: set version: 3 (SNMPv2c has communities only)")
        out = replace(snmp, version=version, auth_protocol=str(snmp.auth_protocol).upper(),
                      priv_protocol=str(snmp.priv_protocol).upper())
        if out.key_file and "key_file" in given:
            out = replace(out, key_file=self.path_of(out.key_file))
        return out

    def cmts(self, value, snmp: SnmpAccess) -> CmtsAccess | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = {"address": value}
        c = self.mapping(value, ["target", "cmts"], _keys(CmtsAccess))
        if not c.get("address"):
            self.fail(["target", "cmts", "address"], "the CMTS's address is needed")
        return CmtsAccess(address=str(c["address"]), snmp=self.snmp(c.get("snmp"), ["target", "cmts", "snmp"], snmp))

    def section(self, cls, value, path, base=None):
        """A mapping read by ``cls``'s declared keys: whole numbers, times (unit s) and text; ``base``
        gives the values of keys the mapping leaves out."""
        m = self.mapping(value, path, _keys(cls))
        out = {}
        for f in fields(cls):
            if f.name not in m:
                continue
            v = m[f.name]
            default = getattr(base, f.name) if base is not None else f.default
            if f.metadata.get("unit") == "s":
                out[f.name] = self.unit(parse_duration, v, path + [f.name])
            elif isinstance(default, int) and not isinstance(default, bool):
                out[f.name] = self.integer(v, path + [f.name], minimum=0)
            elif v is None or isinstance(v, (dict, list)):
                self.fail(path + [f.name], "expected a value")
            else:
                out[f.name] = str(v)
        return replace(base, **out) if base is not None else cls(**out)

    def path_of(self, text: str) -> str:
        """A path as written, relative to the campaign file."""
        p = Path(text).expanduser()
        if not p.is_absolute() and self.source != "<campaign>":
            p = Path(self.source).parent / p
        return str(p)

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
