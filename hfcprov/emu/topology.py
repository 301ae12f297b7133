"""The emulated plant: CPE host - cable modem - CMTS - server, one namespace each.

::

    cpe [lan0 10.10.1.2] --- [lan 10.10.1.1] cm [rf 10.10.2.2] --- [rf 10.10.2.1] cmts [net 10.10.3.1] --- [net0 10.10.3.2] srv
                                   downstream queue ^         ^ upstream queue

The modem namespace holds both service-flow queues: the upstream one on its
``rf`` side, the downstream one on its ``lan`` side. Added delay and loss are
plant impairments: ``netem`` on the CMTS interfaces when the kernel has it,
else a TUN delay line in the modem namespace that every forwarded packet
passes (policy routing by input interface). Each lab instance has its own
namespace names (``hfemu-<6 hex>-<node>``), so parallel labs never collide,
and the same addresses inside each.

A lab's state (namespaces, helper processes, applied queues) is a JSON file in
``STATE_DIR``; ``down_all`` needs only the name prefix, so it also cleans up
after a crash.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from hfcprov.emu import classify, netns, timekeeping
from hfcprov.emu.aqmstage import plan_stage
from hfcprov.emu.caps import Capabilities, detect
from hfcprov.emu.classify import Classifier
from hfcprov.emu.netns import NetnsError
from hfcprov.emu.offload import offloads_off
from hfcprov.emu.shaping import QueuePlan
from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write
from hfcprov.model import DEFAULT_DOCSIS_VERSION, DOCSIS_VERSIONS

PREFIX = "hfemu-"
STATE_DIR = Path(os.environ.get("HFCPROV_EMU_STATE", "/run/hfcprov-emu"))
NODES = ("cpe", "cm", "cmts", "srv")
ADDR = {
    "cpe": "10.10.1.2", "cm_lan": "10.10.1.1", "cm_rf": "10.10.2.2",
    "cmts_rf": "10.10.2.1", "cmts_net": "10.10.3.1", "srv": "10.10.3.2",
}
# ``up(ipv6=True)``: the modem's management side (CM rf <-> CMTS rf, where it boots by TFTP and
# answers SNMP) is IPv6 as well, on a unique-local prefix that lives only inside the namespaces.
ADDR6 = {"cm_rf": "fd00:10:2::2", "cmts_rf": "fd00:10:2::1"}
ADDR6_PREFIX = 64
DEV = {"upstream": "rf", "downstream": "lan"}  # modem-namespace device holding each direction's queue
MAX_FLOWS = 16  # service flows one direction gets (a DOCSIS 3.0 CM's usual minimum)
TUN = "dl0"
TUN_TABLE = "100"


class EmuError(HfcprovError):
    """The emulated plant could not be built, changed or found."""


@dataclass
class Impairments:
    rtt: float = 0.0  # added round-trip delay, seconds (half each way)
    loss: float = 0.0  # random loss per direction, fraction
    seed: int | None = None
    loss_method: str | None = None  # force one of caps.LOSS_METHODS; None: the best the host has


@dataclass
class Lab:
    name: str
    impairments: Impairments = field(default_factory=Impairments)
    caps: Capabilities | None = None
    pids: dict[str, int] = field(default_factory=dict)  # helper processes: role -> pid
    queues: dict[str, dict] = field(default_factory=dict)  # direction -> applied queue (tc view)
    rejected: list[str] = field(default_factory=list)
    # The modem's DOCSIS version: which upstream flows run AQM (hfcprov.model.upstream_aqm)
    docsis_version: str = DEFAULT_DOCSIS_VERSION
    ipv6: bool = False  # management (TFTP boot, SNMP) over IPv6: ADDR6

    def ns(self, node: str) -> str:
        return f"{self.name}-{node}"

    def addr(self, role: str) -> str:
        """The address of ``role`` (an ``ADDR`` key) the modem's management uses: IPv6 where the lab has it."""
        return ADDR6[role] if self.ipv6 and role in ADDR6 else ADDR[role]

    def addr_v4(self, role: str) -> str:
        """The IPv4 address of ``role`` (the data path's, whatever the management family)."""
        return ADDR[role]

    def endpoint(self, role: str, port: int) -> str:
        """``host:port`` of ``role``, ``[v6]:port`` for an IPv6 address (what ``--listen``/``--tftp`` take)."""
        host = self.addr(role)
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    @property
    def state_file(self) -> Path:
        return STATE_DIR / f"{self.name}.json"

    def save(self) -> None:
        d = asdict(self)
        d["caps"] = asdict(self.caps) if self.caps else None
        atomic_write(self.state_file, json.dumps(d, indent=2) + "\n")

    @classmethod
    def load(cls, name: str) -> Lab:
        path = STATE_DIR / f"{name}.json"
        try:
            d = json.loads(path.read_text())
        except FileNotFoundError as err:
            raise EmuError(f"no emulated modem named {name} (no {path})") from err
        return cls(name=d["name"], impairments=Impairments(**d["impairments"]),
                   caps=Capabilities(**d["caps"]) if d.get("caps") else None, pids=d.get("pids", {}),
                   queues=d.get("queues", {}), rejected=d.get("rejected", []),
                   docsis_version=d.get("docsis_version", DEFAULT_DOCSIS_VERSION), ipv6=d.get("ipv6", False))

    # -- building ---------------------------------------------------------------------------
    def build(self) -> None:
        """Create namespaces, links, addresses, routes and impairments. Undone by ``down``."""
        require_root()
        try:
            for node in NODES:
                netns.add(self.ns(node))
            self._links()
            self.caps = detect(self.ns("cm"))
            self._impair()
        except BaseException:
            self.down()
            raise
        self.save()

    def _links(self) -> None:
        ns = self.ns
        for a, dev_a, b, dev_b in (("cpe", "lan0", "cm", "lan"), ("cm", "rf", "cmts", "rf"),
                                   ("cmts", "net", "srv", "net0")):
            netns.run(["ip", "-n", ns(a), "link", "add", dev_a, "type", "veth", "peer", "name", dev_b,
                       "netns", ns(b)])
        for node, dev, addr in (("cpe", "lan0", "cpe"), ("cm", "lan", "cm_lan"), ("cm", "rf", "cm_rf"),
                                ("cmts", "rf", "cmts_rf"), ("cmts", "net", "cmts_net"), ("srv", "net0", "srv")):
            netns.run(["ip", "-n", ns(node), "addr", "add", f"{ADDR[addr]}/24", "dev", dev])
            netns.run(["ip", "-n", ns(node), "link", "set", dev, "up"])
            offloads_off(ns(node), dev)
        netns.run(["ip", "-n", ns("cpe"), "route", "add", "default", "via", ADDR["cm_lan"]])
        netns.run(["ip", "-n", ns("cm"), "route", "add", "default", "via", ADDR["cmts_rf"]])
        netns.run(["ip", "-n", ns("cmts"), "route", "add", "10.10.1.0/24", "via", ADDR["cm_rf"]])
        netns.run(["ip", "-n", ns("srv"), "route", "add", "default", "via", ADDR["cmts_net"]])
        v6_nodes = ("cm", "cmts") if self.ipv6 else ()
        for node in v6_nodes:  # both ends of rf: nodad, so the addresses are usable at once
            netns.run(["sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf.rf.disable_ipv6=0"],
                      ns=ns(node))
            netns.run(["ip", "-n", ns(node), "addr", "add", f"{ADDR6[f'{node}_rf']}/{ADDR6_PREFIX}", "dev", "rf",
                       "nodad"])
        for node in NODES:
            sysctls = [] if node in v6_nodes else ["net.ipv6.conf.all.disable_ipv6=1",
                                                   "net.ipv6.conf.default.disable_ipv6=1"]
            sysctls += ["net.ipv4.conf.all.send_redirects=0", "net.ipv4.conf.default.send_redirects=0"]
            if node in ("cm", "cmts"):
                sysctls.append("net.ipv4.ip_forward=1")
            else:
                sysctls += _host_tcp()
            netns.run(["sysctl", "-q", "-w", *sysctls], ns=ns(node))

    def _impair(self) -> None:
        imp, caps = self.impairments, self.caps
        if not imp.rtt and not imp.loss:
            return
        method = (imp.loss_method or caps.loss_method) if imp.loss else None
        if method and method not in caps.loss_methods():
            raise EmuError(f"loss method {method} is not available here (this host offers: "
                           f"{', '.join(caps.loss_methods()) or 'none'})")
        cmts = self.ns("cmts")
        if caps.netem and (imp.rtt or method == "netem"):
            for dev in ("rf", "net"):
                args = ["tc", "qdisc", "replace", "dev", dev, "root", "netem", "delay",
                        f"{imp.rtt / 2 * 1e6:.0f}us", "limit", "100000"]
                if method == "netem":
                    args += ["loss", f"{imp.loss * 100:.4f}%"]
                netns.run(args, ns=cmts)
        if method == "nft-numgen":
            per_million = round(imp.loss * 1_000_000)
            netns.run(["nft", "-f", "-"], ns=cmts, input=(
                "table ip hfemu {\n  chain plantloss {\n    type filter hook forward priority 0;\n"
                f"    numgen random mod 1000000 < {per_million} drop\n  }}\n}}\n"))
        elif method == "iptables-statistic":
            netns.run(["iptables", "-A", "FORWARD", "-m", "statistic", "--mode", "random",
                       "--probability", f"{imp.loss:.6f}", "-j", "DROP"], ns=cmts)
        line_delay = 0.0 if caps.netem else imp.rtt / 2
        line_loss = imp.loss if method == "tun-delayline" else 0.0
        if not line_delay and not line_loss:
            return
        if not caps.tun:
            raise EmuError("no netem qdisc and no /dev/net/tun: cannot add delay or loss on this kernel")
        self._delay_line(line_delay, line_loss, imp.seed)

    def _delay_line(self, one_way: float, loss: float, seed: int | None, extra: Sequence[str] = ()) -> None:
        cm = self.ns("cm")
        old = self.pids.pop("delayline", None)
        if old is not None:  # restarting it (with or without the AQM stage): the TUN device stays
            stop_process(old)
        else:
            netns.run(["ip", "tuntap", "add", "dev", TUN, "mode", "tun"], ns=cm)
            netns.run(["ip", "link", "set", TUN, "up", "txqueuelen", "10000"], ns=cm)
            netns.run(["sysctl", "-q", "-w", "net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0",
                       f"net.ipv4.conf.{TUN}.rp_filter=0", f"net.ipv4.conf.{TUN}.accept_local=1"], ns=cm)
            netns.run(["ip", "route", "add", "default", "dev", TUN, "table", TUN_TABLE], ns=cm)
            for pref, dev in (("100", "lan"), ("101", "rf")):
                netns.run(["ip", "rule", "add", "pref", pref, "iif", dev, "lookup", TUN_TABLE], ns=cm)
        args = ["--dev", TUN, "--delay", repr(one_way), "--loss", repr(loss), *extra]
        if seed is not None:
            args += ["--seed", str(seed)]
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if len(str(self.control_path)) < 100:  # a UNIX socket path's limit (108 with the NUL)
            args += ["--control", str(self.control_path)]
        # up once it says so: the TUN device has its reader (carrier on) and the control socket answers
        self.pids["delayline"] = self.spawn("cm", [sys.executable, "-m", "hfcprov.emu.delayline", *args],
                                            log=self.state_dir / "delayline.err", ready="delayline: ready")

    @property
    def control_path(self) -> Path:
        """The delay line's control socket (``hfcprov.emu.timekeeping``)."""
        return self.state_dir / "delayline.sock"

    def timekeeping(self) -> dict | None:
        """The delay line's timekeeping counters (``hfcprov.emu.timekeeping.ask``), or None without one."""
        if "delayline" not in self.pids or not self.control_path.exists():
            return None
        try:
            return timekeeping.ask(self.control_path)
        except (OSError, ValueError) as err:
            raise EmuError(f"the delay line of {self.name} does not answer on {self.control_path}: {err}") from err

    def spawn(self, node: str, argv: list[str], log: Path | None = None, ready: str | None = None,
              timeout: float = 10.0, priority: int | None = None) -> int:
        """Start a helper process in ``node``'s namespace, detached from our session.

        With ``ready``, return once the process prints that line on stdout (its own word that it
        is up), or raise ``EmuError`` if it exits or stays silent ``timeout`` seconds. With
        ``priority``, it runs SCHED_FIFO at that priority (``timekeeping.raise_priority``: an
        emulated host, ``HOST_PRIORITY``, must not lose the CPU to the machine's other jobs)."""
        out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - handed to the child, closed below
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [_repo_root(), os.environ.get("PYTHONPATH")])))
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns(node), *argv], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE if ready else out, stderr=out, start_new_session=True, env=env)
        if log:
            out.close()
        if priority is not None:  # set before it starts any thread (``ip netns exec`` execs in place)
            timekeeping.raise_priority(priority, proc.pid)
        if ready:
            try:
                said = _read_line(proc.stdout, timeout)
            finally:
                proc.stdout.close()  # it says nothing more there
            if said != ready:
                stop_process(proc.pid)
                tail = log.read_text(errors="replace").strip().splitlines()[-1:] if log else []
                raise EmuError(f"{argv[2] if argv[1] == '-m' else argv[0]} did not start in {self.ns(node)}: "
                               f"{' '.join(tail) or said or 'no output'}")
        return proc.pid

    # -- queues -----------------------------------------------------------------------------
    def apply(self, plans: list[QueuePlan], classifiers: Sequence[Classifier] = (), save: bool = True,
              aggregates: Sequence = (), settings=None) -> list[str]:
        """Install every flow's queue and the classifiers that steer into them; replaces what was there.

        Per direction: an ``htb`` root (handle 1:) with one class per service flow in plan
        order (class 1:1 is the primary flow and htb's default, so unclassified traffic goes
        there), each the flow's own token bucket and byte-limited queue (``QueuePlan.tc_args``),
        and ``u32`` filters from the classifiers in rule order (``classify.steer``). The
        classes sit side by side under the root, so each is held to its own rate. Returns why
        flows or classifiers were not installed. Upstream flows under AQM run in the userspace
        stage (``aqmstage.plan_stage``); ``aggregates`` (the file's ``AggregateServiceFlow``s) and
        ``settings`` (its ``ModemSettings``) let an LLD aggregate run there as one dual queue.
        """
        cm = self.ns("cm")
        by_direction: dict[str, list[QueuePlan]] = {}
        for p in plans:
            by_direction.setdefault(p.direction, []).append(p)
        refused: list[str] = []
        for direction, flows in by_direction.items():
            for p in flows[MAX_FLOWS:]:
                refused.append(f"service flow {p.flow.path or direction}: more than {MAX_FLOWS} {direction} "
                               "flows; not installed")
            del flows[MAX_FLOWS:]
        steering, why = classify.steer({d: [p.flow for p in f] for d, f in by_direction.items()}, list(classifiers))
        refused += why
        # AQM on upstream flows (hfcprov.model.upstream_aqm): the userspace stage (no pie qdisc here),
        # one shaper + queue per such flow, packets classified by the same classifiers as tc's
        stage = plan_stage(by_direction.get("upstream", []), self.docsis_version, steering, aggregates, settings)
        for direction, flows in by_direction.items():
            dev = DEV[direction]
            self.clear(direction)  # start clean: a replaced root would keep its old classes and filters
            netns.run(["tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "1"], ns=cm)
            for band, p in enumerate(flows):
                tc_plan = stage.tc_plans[band] if stage is not None and direction == "upstream" else p
                for argv in tc_plan.tc_args(dev, classid=_classid(band), handle=f"{band + 10:x}:"):
                    netns.run(argv, ns=cm)
            filters = []
            for s in (s for s in steering if s.classifier.direction == direction):
                for m in s.matches:
                    netns.run(["tc", "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio",
                               str(s.prio), "u32", *m, "flowid", _classid(s.band)], ns=cm)
                filters.append({"classifier": s.classifier.path, "prio": s.prio, "flowid": _classid(s.band),
                                "u32_filters": len(s.matches)})
            bands = [{"ref": p.flow.ref, "path": p.flow.path, "classid": _classid(band), "rate_bps": p.rate_bps,
                      "burst": p.burst, "peak_bps": p.peak_bps, "buffer": p.buffer} for band, p in enumerate(flows)]
            primary = bands[0]
            self.queues[direction] = {"rate_bps": primary["rate_bps"], "burst": primary["burst"],
                                      "peak_bps": primary["peak_bps"], "buffer": primary["buffer"], "dev": dev,
                                      "flows": bands, "filters": filters}
            if stage is not None and direction == "upstream":
                self.queues[direction]["aqm"] = stage.as_dict()
        for direction in ("upstream", "downstream"):
            if direction not in by_direction:
                self.clear(direction)
        if stage is not None or "aqm" in self.pids:
            self._aqm_stage(stage)
        if save:
            self.save()
        return refused

    def _aqm_stage(self, stage) -> None:
        """(Re)start the delay line with the AQM stage, or without it once no flow needs it."""
        imp, caps = self.impairments, self.caps or detect(self.ns("cm"))
        method = (imp.loss_method or caps.loss_method) if imp.loss else None
        self._delay_line(0.0 if caps.netem else imp.rtt / 2, imp.loss if method == "tun-delayline" else 0.0,
                         imp.seed, stage.args() if stage is not None else ())
        if stage is not None:
            self.pids["aqm"] = self.pids["delayline"]
        else:
            self.pids.pop("aqm", None)

    def clear(self, direction: str) -> None:
        netns.run(["tc", "qdisc", "del", "dev", DEV[direction], "root"], ns=self.ns("cm"), check=False)
        self.queues.pop(direction, None)

    def qdisc_stats(self, direction: str) -> dict:
        """The kernel's own view of a queue: ``tc -s -j qdisc`` for its device."""
        out = netns.run(["tc", "-s", "-j", "qdisc", "show", "dev", DEV[direction]], ns=self.ns("cm"))
        return json.loads(out)[0] if out.strip() else {}

    # -- booting like a modem ---------------------------------------------------------------
    @property
    def state_dir(self) -> Path:
        return STATE_DIR / self.name

    def boot(self, tftp_root: str | os.PathLike, filename: str | None = None, dynamic: str | None = None,
             tftp_port: int = 69, snmp_port: int = 161, max_buffer: int | None = None,
             timeout: float = 180.0, headend=None, snmp_keys=None) -> dict:
        """Start the provisioning side and the modem process; return once booted.

        Without ``headend`` the modem fetches ``filename`` from a TFTP server on the CMTS side. With
        ``headend`` (an ``emu.headend.Headend``) it boots as a cable modem does: DHCP from a real Kea
        (reservations from the lab's inventory), Time of Day, TFTP of the file DHCP named, and the
        emulated CMTS's registration check (``emu.headend``, ``emu.cmts``). ``snmp_keys`` (an
        ``emu.headend.SnmpKeys``): what the modem's agent accepts (default: community public, no v3).

        Returns the modem's ``applied.json``: what it fetched, the queues it installed, the flows it refused.
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        modem = [sys.executable, "-m", "hfcprov.emu.modem", "--lab", self.name, "--state", str(self.state_dir),
                 "--snmp-port", str(snmp_port)]
        if headend is not None:
            from hfcprov.emu import headend as headends

            got = headends.start(self, headend, tftp_root, tftp_port)
            modem += ["--dhcp", str(got["dhcp"]), "--mac", got["mac"], "--cmts", got["cmts"],
                      "--snmp-credentials", got["snmp_credentials"]]
        else:
            serve = [sys.executable, "-m", "hfcprov", "tftp", "serve", "--root", str(Path(tftp_root).resolve()),
                     "--listen", self.endpoint("cmts_rf", tftp_port), "--log", str(self.state_dir / "tftp.log")]
            if dynamic:
                serve += ["--dynamic", str(Path(dynamic).resolve())]
            self.pids["tftp"] = self.spawn("cmts", serve, log=self.state_dir / "tftp.err")
            modem += ["--file", filename, "--tftp", self.endpoint("cmts_rf", tftp_port)]
            if snmp_keys is not None:  # a file (0600), never the command line
                modem += ["--snmp-credentials", str(snmp_keys.write(self.state_dir / "modem-snmp.json"))]
        if max_buffer is not None:
            modem += ["--max-buffer", str(max_buffer)]
        self.pids["modem"] = self.spawn("cm", modem, log=self.state_dir / "modem.err")
        self.save()
        return self.wait_boot(1, timeout)

    def applied(self) -> dict | None:
        """The modem's last ``applied.json``, or None before its first boot."""
        try:
            return json.loads((self.state_dir / "applied.json").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def wait_boot(self, boots: int, timeout: float = 180.0) -> dict:
        """Wait until the modem has finished boot number ``boots`` (operational or not: see its status)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            a = self.applied()
            if a and a.get("boots", boots) >= boots:
                return a
            pid = self.pids.get("modem")
            if pid and not os.path.exists(f"/proc/{pid}"):
                err = (self.state_dir / "modem.err").read_text(errors="replace").strip().splitlines()[-1:]
                raise EmuError(f"the modem process of {self.name} exited: {' '.join(err) or 'no output'}")
            time.sleep(0.1)
        raise EmuError(f"the modem of {self.name} did not finish boot {boots} within {timeout:.0f} s "
                       f"(see {self.state_dir / 'modem.log'})")

    # -- tear-down --------------------------------------------------------------------------
    def down(self) -> None:
        """Stop helpers and remove namespaces and state; safe to call twice."""
        for pid in self.pids.values():
            stop_process(pid)
        for node in NODES:
            _remove_ns(self.ns(node))
        self.state_file.unlink(missing_ok=True)
        shutil.rmtree(self.state_dir, ignore_errors=True)


def up(rtt: float = 0.0, loss: float = 0.0, seed: int | None = None, name: str | None = None,
       prefix: str = PREFIX, loss_method: str | None = None, docsis_version: str = DEFAULT_DOCSIS_VERSION,
       ipv6: bool = False) -> Lab:
    """Build a new lab with a fresh unique name; the caller owns it (``lab.down()``).

    ``loss_method`` forces how random loss is made (one of ``caps.LOSS_METHODS``); by default
    the first the host offers, in that order. ``docsis_version`` ("3.1" or "3.0") is the
    modem's: which upstream flows get AQM (``hfcprov.model.upstream_aqm``). ``ipv6`` puts the
    modem's management on IPv6 (``ADDR6``): it boots by TFTP from the CMTS's IPv6 address (so a
    dynamic file carries TLV 59, not TLV 20) and answers SNMP on its own. Data paths stay IPv4.
    """
    if docsis_version not in DOCSIS_VERSIONS:
        raise EmuError(f"DOCSIS version {docsis_version!r}: expected one of {', '.join(DOCSIS_VERSIONS)}")
    lab = Lab(name=name or f"{prefix}{secrets.token_hex(3)}", impairments=Impairments(rtt, loss, seed, loss_method),
              docsis_version=docsis_version, ipv6=ipv6)
    if any(netns.exists(lab.ns(n)) for n in NODES):
        raise EmuError(f"an emulated modem named {lab.name} already exists")
    lab.build()
    return lab


def names(prefix: str = PREFIX) -> list[str]:
    """Labs present, from namespaces and state files (either may survive a crash)."""
    found = {n.rsplit("-", 1)[0] for n in netns.list_names(prefix) if n.rsplit("-", 1)[-1] in NODES}
    if STATE_DIR.is_dir():
        found |= {p.stem for p in STATE_DIR.glob(f"{prefix}*.json")}
    return sorted(found)


def down_all(prefix: str = PREFIX) -> list[str]:
    """Remove every lab whose name starts with ``prefix``, with whatever processes live in it."""
    require_root()
    removed = names(prefix)
    for name in removed:
        try:
            Lab.load(name).down()
        except EmuError:
            Lab(name=name).down()
    return removed


def _remove_ns(name: str) -> None:
    if not netns.exists(name):
        return
    for pid in netns.pids(name):
        stop_process(pid)
    netns.delete(name)


def _read_line(pipe, timeout: float) -> str:
    """One line from ``pipe`` (a child's stdout), '' if it closes or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    got = b""
    while not got.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([pipe], [], [], left)[0]:
            return ""
        part = os.read(pipe.fileno(), 256)
        if not part:
            return ""
        got += part
    return got.decode(errors="replace").strip()


def stop_process(pid: int, grace: float = 2.0) -> None:
    """Stop a helper process this lab started (by its pid): SIGTERM, then SIGKILL after ``grace`` seconds;
    reap it if it is ours.

    Exit is seen through the process's pidfd (a zombie has exited: one whose parent we are killing
    too may wait a while for init to reap it, and is not worth the grace period)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except (ProcessLookupError, PermissionError):
                return
            if select.select([fd], [], [], grace)[0]:
                break
    finally:
        os.close(fd)
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass  # not our child: its parent (or init) reaps it


def _host_tcp() -> list[str]:
    """TCP settings of the end hosts (cpe, srv).

    A new namespace takes the host's default congestion control. Where that is BBR, a socket
    born BBR keeps the kernel's internal pacing on after it is switched to CUBIC or Reno (BBR's
    init turns it on; nothing turns it off), so a "cubic" flow would leave paced, unlike a stock
    Linux host. The probe sets each flow's congestion control before connecting; the hosts'
    default is CUBIC, or else Reno (a namespace may only default to an algorithm the host allows,
    ``tcp_allowed_congestion_control``), so nothing else starts paced either. No cached metrics:
    a run must not start from the ssthresh or RTT of the run before.
    """
    tcp = ["net.ipv4.tcp_no_metrics_save=1"]
    try:
        allowed = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control").read_text().split()
    except OSError:
        allowed = []
    default = next((cc for cc in ("cubic", "reno") if cc in allowed), None)
    if default:
        tcp.append(f"net.ipv4.tcp_congestion_control={default}")
    return tcp


def _classid(band: int) -> str:
    return f"1:{band + 1:x}"  # tc minors are hex


def require_root() -> None:
    if os.geteuid() != 0:
        raise EmuError("the emulated modem needs root (network namespaces and tc); run as root")


def _repo_root() -> str:
    return str(Path(__file__).resolve().parent.parent.parent)


__all__ = ["ADDR", "ADDR6", "PREFIX", "EmuError", "Impairments", "Lab", "NetnsError", "down_all", "names", "up"]
