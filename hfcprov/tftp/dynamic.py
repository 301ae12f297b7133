"""Config files built on request: tier template + inventory row, TLV 19/20 (59 for IPv6), MICs.

A modem asks for ``001095000002.cm`` (or any name the DHCP server handed out);
the row is found by the same file-name pattern the bulk build uses
(``pattern.format_map(row)``), or by the modem's IP address against an
inventory column. Per request only TLV 19 (TFTP server timestamp) and TLV 20
(the IPv4 address the request came from; TLV 59 for an IPv6 client, per MULPI) are
set and both MICs recomputed, as a DOCSIS provisioning server does. The framing is
the codec's (``hfcprov.config.prepare``/``fill``).

A cold boot storm (a fresh server, a whole node rebooting) must not depend on a
pre-warmed cache, so the expensive part is shared, made cheap and kept off the loop:

- a file is rendered and encoded once per (template, values of the variables the
  template reads, found by jinja2's static analysis): modems of one tier with the same
  overrides share one encoded body, only TLV 19/20 and the MICs differ; a modem whose
  file is already being built waits for that build instead of starting a second one;
- the rendered text is encoded by ``config.text_items``, which remembers each top-level
  statement's TLVs: files of one template repeat most statements;
- reading the inventory resolves each tier's template, the variables it reads and each
  modem's build key, and every worker compiles the templates before the server serves, as
  ``hfcprov build`` does (``tiers.templates.Renderers``: a tier as a plain Python function
  where it allows it, its code from the compiled-template cache; else jinja2, compiled once,
  not stat'ing every file per row), and renders and encodes one modem of each tier, so a
  storm's builds find jinja2 loaded and the statements every file of the tier shares known;
- builds run in worker processes (``hfcprov.tftp.workers``; ``processes``, default one
  per core but the loop's, shared by every builder in the process) at ordinary priority,
  or at the server's own when that is lower: in a cold storm the builds gate every
  waiting modem's transfer, so they must not wait behind the machine's other work (a
  fixed gap below a server at nice 10 put them at 19, where they starved); bounded to the
  cores the loop leaves, they cannot crowd it either. Finished builds are handed to the
  server's loop (``attach_loop``), where each waiting modem's file is stamped.

The YAML file that configures it::

    inventory: inventory.csv     # CSV/YAML rows with mac, tier and overrides (paths relative to this file)
    templates: ../templates      # folder of <tier>.j2, or one .j2 for every modem (default: shipped tiers)
    key: filename                # or: ip
    filename: "{mac}.cm"         # key=filename: requested names, as `hfcprov build --pattern`
    ip_column: ip                # key=ip: the inventory column holding each modem's address
    secret_file: cmts.key        # CMTS MIC shared secret; optional, never logged
    secret_map: secrets.yaml     # or one secret per CMTS: the map names each CMTS's secret file, the
    cmts_column: cmts            # inventory's cmts column each modem's CMTS (secret_file: rows without one)
    leases: kea-leases4.csv      # Kea memfile lease file(s) (a path or a list: v4 and v6), or
    kea_socket: /run/kea/kea4-ctrl-socket  # Kea's control socket (lease API: the lease_cmds hook)
    lease_bound: true            # serve a modem's file only to the address holding its lease (default
                                 # when a lease source is given); key=ip then finds the modem by the lease
    timestamp: true              # insert TLV 19
    modem_address: true          # insert TLV 20 (IPv4 client) or TLV 59 (IPv6 client)
    processes: 1                 # build worker processes (default: one per core but one, 1 to 4; 0: builds in
                                 # the server's threads)
    niceness: 10                 # how far below the server the workers run (0..19; default: at ordinary
                                 # priority, or the server's own when that is lower)

Edits to the inventory or to a template are picked up (checked at most once a second).

Lease-bound files: with a lease source, a request is served only when the requester's address
holds an active lease of the modem the file is for (``hfcprov.boot.leases``); anything else is
refused (a TFTP access violation, and a log line naming the requester, the file and why), so
knowing another modem's file name is not enough to fetch its tier. With ``key: ip`` the modem is
the one whose lease the requester holds, no inventory column needed.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import ipaddress
import os
import socket
import threading
import time
from pathlib import Path

from hfcprov.boot.leases import LeaseSource, lease_source
from hfcprov.boot.tod import rfc868_time
from hfcprov.errors import HfcprovError
from hfcprov.tftp.provider import MISS, Provider, RequestRefused, chain
from hfcprov.tftp.workers import WorkerPool
from hfcprov.tiers.naming import DEFAULT_PATTERN, FileNameError, config_file_name
from hfcprov.tiers.secrets import SecretMap, SecretMapError
from hfcprov.yamlfile import read_yaml

TFTP_TIMESTAMP = 19
TFTP_MODEM_ADDRESS = 20
TFTP_MODEM_ADDRESS_V6 = 59  # MULPI: the IPv6 form of TLV 20

KEYS = ("inventory", "templates", "key", "filename", "ip_column", "secret_file", "secret_map", "cmts_column",
        "leases", "kea_socket", "lease_bound", "timestamp", "modem_address", "processes", "niceness")
MAX_SHARED = 50_000  # distinct rendered configs kept; past that the cache starts over
# Build workers run at ordinary priority (nice 0), or at the server's own nice value when that is
# higher: never below the machine's other work (a fixed gap below a server at nice 10 left them at 19,
# starved on a busy machine: cold storms with 170-371 client retransmissions), never above a DHCP server
# (a server run as root raises itself to -10). Boot-storm bench, 1,000 cold modems sharing 10 configs,
# load 17-29: 0.81x, 1.16x and 0.90x of static (in-process, atftp clients, over 1 s) with no
# retransmissions, against 0.77x, 0.72x and 0.61x for 2 workers 10 below the server (an earlier round of
# bench/tftp_bootstorm.py).
BUILD_NICENESS = None  # the YAML's niceness: N sets a fixed gap below the server instead


def default_processes() -> int:
    """Build workers when the YAML names none: one per core but the one the loop serves on, 1 to 4.
    A worker's statement memo (``config.text_items``) is its own, so two workers on a storm's
    configs encode more than one does (measured: 0.17-0.24 s of build CPU against 0.13-0.17 s per
    1,000 cold modems), and on two cores a second one only takes the loop's core."""
    return max(1, min((os.cpu_count() or 1) - 1, 4))


def worker_niceness(gap: int | None, server_nice: int | None = None) -> int:
    """How much to lower the workers below the server (``os.nice`` in each): ``gap`` when given,
    else down to ordinary priority (0) from a raised server, and none from one at 0 or below it."""
    if gap is not None:
        return gap
    current = os.getpriority(os.PRIO_PROCESS, 0) if server_nice is None else server_nice
    return max(0, -current)


class DynamicConfigError(HfcprovError):
    """A bad dynamic-files YAML file; the message names the file and the key."""


def tftp_timestamp(now: float | None = None) -> int:
    """TLV 19 value for ``now`` (Unix seconds): RFC 868 seconds, modulo 2**32 (the Time of Day count)."""
    return rfc868_time(now)


class ConfigFileBuilder(Provider):
    """The dynamic provider (``hfcprov.tftp.provider.Provider``): ``request`` answers from memory
    (the bytes, a future of a build in progress, or a miss) and hands anything that reads a file
    to a thread of its own; ``builder(filename, client_ip) -> bytes | None`` waits for the file.

    ``secrets``: one CMTS shared secret per CMTS (``tiers.secrets.SecretMap``; ``secret`` is the
    default). ``leases``: a ``boot.leases.LeaseSource``; with ``lease_bound`` (the default when
    given) a file goes only to the address holding its modem's lease, anything else is refused
    (``RequestRefused``); with ``key="ip"`` the modem is found by the requester's lease."""

    def __init__(self, inventory: str | Path, templates: str | Path | None = None, *, key: str = "filename",
                 filename: str = DEFAULT_PATTERN, ip_column: str = "ip", secret: bytes | None = None,
                 timestamp: bool = True, modem_address: bool = True, processes: int | None = None,
                 niceness: int | None = None, secrets: SecretMap | None = None, leases: LeaseSource | None = None,
                 lease_bound: bool | None = None):
        if key not in ("filename", "ip"):
            raise DynamicConfigError(f"key must be 'filename' or 'ip', not {key!r}")
        if lease_bound and leases is None:
            raise DynamicConfigError("lease_bound needs a lease source (leases: or kea_socket:)")
        self.inventory = Path(inventory)
        self.templates = Path(templates) if templates is not None else None
        self.key = key
        self.pattern = filename
        self.ip_column = ip_column
        secrets = secrets if secrets is not None else SecretMap()
        self._secrets = secrets.with_default(secret) if secret is not None else secrets
        self.leases = leases
        self.lease_bound = leases is not None if lease_bound is None else bool(lease_bound)
        self.timestamp = timestamp
        self.modem_address = modem_address
        self._lock = threading.Lock()
        self._stamp = None
        self._checked = 0.0
        self._rows: dict[str, dict] = {}
        if processes is None:
            processes = default_processes()
        if processes < 0:
            raise DynamicConfigError(f"processes must be 0 or more, not {processes}")
        self.processes = processes
        if niceness is not None and not 0 <= int(niceness) <= 19:
            raise DynamicConfigError(f"niceness must be 0..19, not {niceness}")
        self.niceness = worker_niceness(BUILD_NICENESS if niceness is None else int(niceness))
        if processes:
            _worker_pool(processes, self.niceness)  # started now, so the first modem of a cold storm does not wait for it
        self._cache: dict[tuple, StampedFile] = {}  # (mac, address family) -> its file, ready for TLV 19/20
        # (template, the row's values it reads, CMTS, address family) -> shared file
        self._shared: dict[tuple, StampedFile] = {}
        self._pending: dict[tuple, concurrent.futures.Future] = {}  # same key -> the build in progress
        self._reads: dict[Path, frozenset | None] = {}  # template -> the variables it reads (None: cannot tell)
        self._templates: dict[str, Path] = {}  # repr(tier) -> its template
        self._keys: dict[str, tuple] = {}  # mac -> its build key (_key), computed with the inventory
        self._generation = 0  # bumped when a file changes, so a build started before is not shared after
        self._version = None  # the files' stamp as a number: workers compile templates once per version
        self.builds = 0  # parse + encode runs (distinct texts built), for tests and logs
        self._deliver = None  # a server loop's call_soon: builds complete in its thread (attach_loop)
        self._reload_lock = threading.Lock()
        self._reload_pool: concurrent.futures.ThreadPoolExecutor | None = None  # request()'s file reads
        # A bad inventory is reported at start, not at the first modem; the server says it is serving
        # once every worker has compiled every tier's template.
        concurrent.futures.wait(self._reload(force=True), timeout=60)

    @property
    def signs(self) -> bool:
        """Whether files get a CMTS MIC (a shared secret, or a map of them, was given)."""
        return bool(self._secrets)

    def __repr__(self):  # the secret stays out of any log or traceback
        return f"ConfigFileBuilder({str(self.inventory)!r}, key={self.key!r})"

    def __call__(self, filename: str, client_ip: str) -> bytes | None:
        return self.submit(filename, client_ip).result()

    def request(self, filename: str, client_ip: str) -> bytes | concurrent.futures.Future | None:
        """The Provider interface, never blocking: the bytes when built, a future while building
        (or while a thread reads an edited inventory or a new tier's template), MISS for a modem
        the inventory does not have."""
        got = self._submit(filename, client_ip, may_block=False)
        if got is None:  # would touch a file or build in this thread: a thread of ours does it
            out: concurrent.futures.Future = concurrent.futures.Future()
            self._threads().submit(lambda: chain(self.submit(filename, client_ip), out))
            return out
        if isinstance(got, concurrent.futures.Future) and got.done() and got.exception() is None \
                and got.result() is None:
            return MISS
        return got

    def _threads(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._lock:
            if self._reload_pool is None:
                self._reload_pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="tftp-reload")
            return self._reload_pool

    def close(self) -> None:
        with self._lock:
            pool, self._reload_pool = self._reload_pool, None
        if pool is not None:
            pool.shutdown(wait=False)

    def submit(self, filename: str, client_ip: str) -> concurrent.futures.Future:
        """The file without waiting for it: a future of its bytes (None: no such modem).

        The TFTP server asks through this, so a modem waiting for a build holds no thread.
        It may still read files first (the inventory after an edit, a template's variables).
        """
        return self._submit(filename, client_ip, may_block=True)

    def submit_nowait(self, filename: str, client_ip: str) -> bytes | concurrent.futures.Future | None:
        """What ``submit`` would give, if it can answer from memory without touching a file: the
        bytes themselves when the file is built (no future to chain), a future while it is being
        built; else None.

        The server's loop asks this first and hands only the None cases to a thread, so a
        storm's requests skip a thread hop while an inventory reload still never stalls it.
        """
        return self._submit(filename, client_ip, may_block=False)

    def _submit(self, filename: str, client_ip: str, may_block: bool) -> bytes | concurrent.futures.Future | None:
        try:
            if may_block:
                self._reload()
            elif time.monotonic() - self._checked >= 1.0:
                return None  # the files are due a check
            if self.lease_bound and not may_block and not self.leases.fresh():
                return None  # the lease source is read (or asked) on a thread
            row = self._find(filename, client_ip, may_block)
            if row is _RECHECK:
                return None  # a refusal is decided on the lease file as it is now: read on a thread
            if row is None:
                return _resolved(None)
            built = self._stamped(row, may_block, self._family(client_ip))
            if built is None:
                return None
            if isinstance(built, StampedFile):  # built already: stamped now, no future to wait on
                data = self._stamp_for(built, client_ip)
                return data if not may_block else _resolved(data)
        except BaseException as err:
            out = concurrent.futures.Future()
            out.set_exception(err)
            return out
        out = concurrent.futures.Future()

        def stamp(f):  # when the file is ready: TLV 19 is the time it is sent, not when it was asked for
            try:
                out.set_result(self._stamp_for(f.result(), client_ip))
            except BaseException as err:
                out.set_exception(err)

        built.add_done_callback(stamp)
        return out

    def _find(self, filename: str, client_ip: str, may_block: bool = True):
        """The inventory row the request is for (None: no such modem), or ``RequestRefused`` when a
        lease-bound file is asked for by an address that does not hold its modem's lease. A refusal is
        checked again on the source as it is now (``_RECHECK`` when that must wait for a thread)."""
        if self.key == "ip" and self.leases is not None:  # the modem is the one whose lease the requester holds
            lease = self._lease(client_ip, None, may_block)
            if lease is _RECHECK:
                return _RECHECK
            if lease is None or lease.mac is None:
                raise RequestRefused(f"lease-bound: {client_ip} holds no active lease ({self.leases.describe()})")
            return self._rows.get(lease.mac)
        row = self._rows.get(client_ip if self.key == "ip" else filename)
        if row is None and self.key == "filename":
            row = self._rows.get(filename.lower())
        if row is not None and self.lease_bound:
            lease = self._lease(client_ip, row["mac"], may_block)
            if lease is _RECHECK:
                return _RECHECK
            if lease is None:
                raise RequestRefused(f"lease-bound: {client_ip} holds no active lease, and the file is modem "
                                     f"{row['mac']}'s ({self.leases.describe()})")
            if lease.mac != row["mac"]:
                raise RequestRefused(f"lease-bound: the file is modem {row['mac']}'s, but {client_ip}'s lease is "
                                     f"modem {lease.mac or 'unknown'}'s ({self.leases.describe()})")
        return row

    def _lease(self, client_ip: str, mac: str | None, may_block: bool):
        lease = self.leases.lookup(client_ip)
        if lease is not None and lease.mac is not None and (mac is None or lease.mac == mac):
            return lease
        if not may_block:
            return _RECHECK
        return self.leases.lookup(client_ip, current=True)

    def _family(self, client_ip: str) -> int:
        """The address family a file is framed for: its TLV 20 (IPv4) or 59 (IPv6) hole, or 4 when no
        address is stamped (one build serves both)."""
        return 6 if self.modem_address and ":" in client_ip else 4

    def _stamp_for(self, built: StampedFile, client_ip: str) -> bytes:
        return built.build(tftp_timestamp() if self.timestamp else None, client_ip if self.modem_address else None)

    def attach_loop(self, call_soon) -> None:
        """Complete builds through ``call_soon`` (a TFTP server's loop), or inline again with None.
        Their callbacks stamp each waiting modem's file: done in the loop that sends it, they do not
        trade the GIL with it."""
        self._deliver = call_soon
        if call_soon is not None:
            # The first request after a quiet second goes to the thread that checks the files: started
            # now (and its module imported), not by the loop as a storm's first modem arrives.
            self._threads().submit(int)

    def warm(self, families: tuple[int, ...] = (4,)) -> int:
        """Render every modem's file now (e.g. right after start), framed for each address family in
        ``families`` (4, 6: what the server's clients will be); returns how many modems have theirs.
        Errors wait for the modem."""
        self._reload()
        families = families if self.modem_address else (4,)
        per_modem = []
        for row in list(self._rows.values()):
            try:  # all at once: every worker process gets some
                per_modem.append([self._stamped(row, family=family) for family in families])
            except HfcprovError:
                pass  # reported to that modem (TFTP error + log line) when it asks
        done = 0
        for builds in per_modem:
            try:
                for f in builds:
                    if not isinstance(f, StampedFile):
                        f.result()
                done += 1
            except HfcprovError:
                pass
        return done

    def _stamped(self, row: dict, may_block: bool = True, family: int = 4) -> StampedFile | concurrent.futures.Future | None:
        """The row's StampedFile framed for ``family`` if built, else a future of it: the build in
        progress or a new one. None when that needs a file read, a worker pool started or
        (``processes: 0``) a build in this thread, and ``may_block`` is False."""
        mac = row["mac"]
        cached = self._cache.get((mac, family))
        if cached is not None:
            return cached
        tier = repr(row.get("tier"))  # repr: any YAML value can be a key
        path = self._templates.get(tier)
        if path is None:  # the rule stats and resolves files: once per tier, not per modem
            if not may_block:
                return None
            # the bulk build's tier -> template rule
            from hfcprov.tiers import template_for

            path = self._templates[tier] = template_for(row, self.templates)
        if path not in self._reads and not may_block:
            return None
        if self.processes and not may_block and (_POOL is None or _POOL.processes != self.processes or _POOL.broken):
            return None  # the pool would have to start first
        # one build per family: its TLV 20 or 59 hole (a node's modems are mostly one or the other)
        key = (*(self._keys.get(mac) or self._key(path, row)), family)
        with self._lock:
            stamped = self._shared.get(key)
            if stamped is not None:
                self._cache[(mac, family)] = stamped
                return stamped
            pending = self._pending.get(key)
            if pending is not None:  # another modem's build of the same file: wait for that one
                return pending
            if not self.processes and not may_block:
                return None  # the build would run right here
            pending = self._pending[key] = concurrent.futures.Future()
        self._build(key, path, row, pending)
        return pending

    def _build(self, key: tuple, path: Path, row: dict, pending: concurrent.futures.Future) -> None:
        try:
            secret = self._secrets.secret_for(row)
        except SecretMapError as err:  # a CMTS the map does not name: that modem's error, never an unsigned file
            self._built(key, row["mac"], pending, None, err)
            return
        args = (str(path), row, secret, self.timestamp, self.modem_address, self._version, key[-1])
        if not self.processes:
            try:
                self._built(key, row["mac"], pending, _prepare(*args), None)
            except BaseException as err:
                self._built(key, row["mac"], pending, None, err)
            return

        def done(f):  # a dead worker breaks the pool: the next build starts a fresh one
            err = f.exception()
            self._built(key, row["mac"], pending, None if err else f.result(), err)

        try:
            _worker_pool(self.processes, self.niceness).submit(_prepare, *args, deliver=self._deliver).add_done_callback(done)
        except BaseException as err:
            self._built(key, row["mac"], pending, None, err)  # every modem waiting for it, not leave them hanging

    def _built(self, key, mac, pending, stamped, err) -> None:
        with self._lock:
            self._pending.pop(key, None)
            if err is None and key[0] == self._generation:  # not a build from before the last edit
                if len(self._shared) >= MAX_SHARED:
                    self._shared.clear()
                self._shared[key] = stamped
                self._cache[(mac, key[-1])] = stamped
            if err is None:
                self.builds += 1
        if err is None:
            pending.set_result(stamped)
        else:
            pending.set_exception(err)

    def _key(self, path: Path, row: dict) -> tuple:
        if path not in self._reads:
            from hfcprov.tiers.templates import template_reads

            self._reads[path] = template_reads(path)
        return _build_key(self._generation, path, self._reads[path], row, self._secrets.cmts_of(row))

    def _reload(self, force: bool = False) -> list[concurrent.futures.Future]:
        """Re-read the inventory and templates if they changed (checked at most once a second).

        The new state is prepared outside ``_lock``, which the loop's requests take, and swapped in:
        an edit during a storm does not stall the loop. Returns the workers' template compilations.
        """
        now = time.monotonic()
        if not force and now - self._checked < 1.0:
            return []
        with self._reload_lock:  # one reload at a time; requests that find one under way go to threads
            if not force and now - self._checked < 1.0:
                return []
            preloads: list[concurrent.futures.Future] = []
            stamp = _stamp(self.inventory, self.templates)
            if stamp != self._stamp:
                generation, version = self._generation + 1, hash(stamp)
                rows = self._index()
                templates, reads, keys, preloads = self._learn(rows, generation, version)
                with self._lock:
                    self._rows, self._templates, self._reads, self._keys = rows, templates, reads, keys
                    self._cache, self._shared = {}, {}
                    self._generation, self._version = generation, version
                    self._stamp = stamp
            self._checked = now
            return preloads

    def _learn(self, rows: dict, generation: int, version: int) -> tuple[dict, dict, dict, list]:
        """Each tier's template, the variables it reads and each modem's build key, with the inventory:
        a storm's first modems then find all that in memory instead of each asking a thread. Every
        worker is asked to compile each template now (the futures are returned). A tier whose template
        is missing or broken is left for its modems' requests to report."""
        from hfcprov.tiers import template_for
        from hfcprov.tiers.templates import template_reads

        templates: dict[str, Path] = {}
        reads: dict[Path, frozenset | None] = {}
        keys: dict[str, tuple] = {}
        preloads: list[concurrent.futures.Future] = []
        missing: set[str] = set()
        for row in rows.values():
            tier = repr(row.get("tier"))
            path = templates.get(tier)
            if path is None:
                if tier in missing:
                    continue
                try:
                    path = templates[tier] = template_for(row, self.templates)
                except HfcprovError:
                    missing.add(tier)
                    continue
                if path not in reads:
                    reads[path] = template_reads(path)
                    if self.processes:  # compiled in each worker now, not by a storm's first builds
                        try:
                            preloads += _worker_pool(self.processes, self.niceness).broadcast(
                                _preload, str(path), version, row)
                        except RuntimeError:
                            pass  # a broken pool: the next build starts a fresh one and compiles then
            keys[row["mac"]] = _build_key(generation, path, reads[path], row, self._secrets.cmts_of(row))
        return templates, reads, keys, preloads

    def _index(self) -> dict[str, dict]:
        from hfcprov.tiers import load_inventory

        rows = {}
        for n, row in enumerate(load_inventory(self.inventory), 1):
            if self.key == "ip" and self.leases is not None:
                rows[row["mac"]] = row  # found through the requester's lease
                continue
            if self.key == "ip":
                if not row.get(self.ip_column):
                    continue  # a modem without a fixed address can only be found by file name
                try:
                    name = str(ipaddress.ip_address(str(row[self.ip_column]).strip()))
                except ValueError:
                    raise DynamicConfigError(f"{self.inventory} row {n}: {self.ip_column} "
                                             f"{row[self.ip_column]!r} is not an IP address") from None
            else:
                try:
                    name = config_file_name(self.pattern, row)  # the rule of `build --pattern` and `dhcp export`
                except FileNameError as err:
                    raise DynamicConfigError(f"row {n} ({row['mac']}): {err}") from None
            rows[name] = row
        return rows


class StampedFile:
    """One modem's config, framed once by the codec for one address family, stamped per request
    with TLV 19 and the modem's address: TLV 20 for an IPv4 client (``family`` 4), TLV 59 for an
    IPv6 one (6; MULPI's "TFTP server provisioned modem address", IPv4 and IPv6 forms).

    Encoding a config with a few hundred TLVs costs far more than a boot storm can spend per
    request. The content (``hfcprov.config.text_items``: each top-level TLV, encoded) is framed
    once by ``hfcprov.config.prepare`` with holes for the stamped TLVs; a request fills them and
    the MICs (``PreparedFile.fill``, reusing the digest of the bytes before the first hole). The
    builder frames a file for the family of the modem asking (a node is usually one or the
    other): keeping the content to frame the other family too made every build slower and what
    crossed from a worker to the loop twice as large.
    """

    def __init__(self, items, secret: bytes | None, timestamp: bool, modem_address: bool, family: int = 4):
        from hfcprov.config import prepare

        self.stamp19 = timestamp
        self.stamp20 = modem_address
        self.family = family
        address = TFTP_MODEM_ADDRESS_V6 if family == 6 else TFTP_MODEM_ADDRESS
        holes = [code for code, on in ((TFTP_TIMESTAMP, timestamp), (address, modem_address)) if on]
        self.prepared = prepare(items, secret, holes=holes)

    def build(self, stamp: int | None, address: str | None) -> bytes:
        """The file with TLV 19 ``stamp`` and the modem's ``address`` (of the file's family)."""
        # the holes' raw bytes: fill() would otherwise parse the address text through the TLV's type
        values: dict[int, bytes] = {TFTP_TIMESTAMP: (stamp or 0).to_bytes(4, "big")} if self.stamp19 else {}
        if self.stamp20:
            if self.family == 6:
                values[TFTP_MODEM_ADDRESS_V6] = socket.inet_pton(socket.AF_INET6, address or "::")
            else:
                values[TFTP_MODEM_ADDRESS] = socket.inet_aton(address or "0.0.0.0")
        return self.prepared.fill(values)


_RECHECK = object()  # a lease-bound refusal to confirm on the lease source as it is now, off the loop


def _resolved(value) -> concurrent.futures.Future:
    f = concurrent.futures.Future()
    f.set_result(value)
    return f


def _build_key(generation: int, path: Path, names: frozenset | None, row: dict, cmts: str | None = None) -> tuple:
    """Rows equal on the variables the template reads (``names``; None: cannot tell, so all of them)
    and on their CMTS (whose secret signs the file) render the same text: they share one build.
    None counts as not given (render_text's rule); repr keeps 2 and "2" apart."""
    items = row.items() if names is None else ((k, row.get(k)) for k in names)
    return (generation, str(path), tuple(sorted((k, repr(v)) for k, v in items if v is not None)), cmts)


def _preload(template: str, version: int | None = None, row: dict | None = None) -> None:
    """Make a tier's renderer in this worker now, as its first build would: its fast function (read from
    the compiled-template cache, or written there), and with one of its modems' ``row`` rendered and
    encoded, jinja2 where the function hands rows to it and the statements every file of the tier shares.
    A broken template or row is reported to its modems instead."""
    try:
        render = _renderer(template, version)
        if row is not None:
            from hfcprov.config import text_items

            text_items(render(row), template)
    except HfcprovError:
        pass


def _prepare(template: str, row: dict, secret: bytes | None, timestamp: bool, modem_address: bool,
             version: int | None = None, family: int = 4) -> StampedFile:
    """Render and encode one config ready for stamping for an address ``family`` (runs in a worker
    process). ``version``: the builder's files as it last read them (``_version``): a template
    compiled for another is not used."""
    from hfcprov.config import text_items
    from hfcprov.tiers.templates import rendered_name

    text = _renderer(template, version)(row)
    return StampedFile(text_items(text, rendered_name(template, row)), secret, timestamp, modem_address, family)


# version of the builder's files -> the Renderers of this process (a worker's, or the server's with
# processes: 0): each template compiled once per version, as `hfcprov build` does (tier templates as
# plain functions where they allow it, jinja2 without a stat of every file per row where they do not)
_RENDERERS: dict = {}
_RENDERERS_KEPT = 8  # builders (versions) whose templates a worker keeps compiled at once


def _renderer(template: str, version: int | None):
    """The function rendering ``template`` with a row, compiled for the files' ``version``."""
    from hfcprov.tiers.templates import Renderers

    renderers = _RENDERERS.get(version)
    if renderers is None:
        if len(_RENDERERS) >= _RENDERERS_KEPT:
            _RENDERERS.clear()
        renderers = _RENDERERS[version] = Renderers()
    return renderers(template)


_POOL: WorkerPool | None = None
_POOL_LOCK = threading.Lock()


def _worker_pool(processes: int, niceness: int | None = None) -> WorkerPool:
    """The process-wide pool of ``processes`` build workers (one per process: builders share it).

    Returns once every worker is up with the render path imported: a server that says it is
    serving must not make the first modems of a storm wait for interpreters to start.
    """
    global _POOL
    niceness = worker_niceness(niceness)
    with _POOL_LOCK:
        if _POOL is None or _POOL.processes != processes or _POOL.broken or _POOL.niceness != niceness:
            if _POOL is not None:
                _POOL.shutdown()
            _POOL = WorkerPool(processes, preload=("hfcprov.config", "hfcprov.tiers.templates", "hfcprov.tftp.dynamic"),
                               initializer=_init_worker, niceness=niceness)
        return _POOL


@atexit.register
def _shutdown_pool() -> None:
    """Stop the workers before the interpreter tears its modules down."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown()


def _init_worker() -> None:
    # the render path, imported once per worker, not on its first modem
    import hfcprov.config.codec
    import hfcprov.tiers.fastrender
    import hfcprov.tiers.templates  # noqa: F401 - loaded for its side effect: the render path is ready


def _stamp(inventory: Path, templates: Path | None) -> tuple:
    """What changes when a file the builder reads changes (mtimes of the inventory and templates)."""
    from hfcprov.tiers.templates import SHIPPED, SUFFIX

    folder = templates if templates is not None else SHIPPED
    # one template for every modem: it, and the templates beside it that it may include
    files = [inventory] + (sorted(folder.glob("*" + SUFFIX)) if folder.is_dir() else
                           [folder, *sorted(folder.parent.glob("*" + SUFFIX))])
    out = []
    for f in files:
        try:
            st = os.stat(f)
            out.append((str(f), st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((str(f), None, None))
    return tuple(out)


def _processes(path: Path, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DynamicConfigError(f"{path}: processes must be a whole number 0 or more, not {value!r}")
    return value


def load_dynamic(path: str | Path) -> ConfigFileBuilder:
    """A ``ConfigFileBuilder`` from a YAML file (see the module doc); paths are relative to the file."""
    from hfcprov.config import read_secret

    path = Path(path)
    spec = read_yaml(path, DynamicConfigError, "dynamic files config")
    if not isinstance(spec, dict):
        raise DynamicConfigError(f"{path}: expected a mapping with at least 'inventory'")
    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise DynamicConfigError(f"{path}: unknown key {unknown[0]!r} (known: {', '.join(KEYS)})")
    if not spec.get("inventory"):
        raise DynamicConfigError(f"{path}: 'inventory' is required")
    base = path.resolve().parent

    def rel(p):
        return None if p in (None, "") else (base / str(p))

    secret = read_secret(rel(spec["secret_file"])) if spec.get("secret_file") else None
    processes = _processes(path, spec.get("processes"))  # names the file itself
    lease_files = spec.get("leases")
    if isinstance(lease_files, (str, Path)):
        lease_files = [lease_files]
    if lease_files is not None and (not isinstance(lease_files, list) or not lease_files):
        raise DynamicConfigError(f"{path}: leases must be a lease file or a list of them")
    try:
        secrets = SecretMap.load(rel(spec.get("secret_map")), secret, str(spec.get("cmts_column", "cmts")))
        leases = lease_source([rel(f) for f in lease_files or ()], rel(spec.get("kea_socket")))
        lease_bound = spec.get("lease_bound")
        return ConfigFileBuilder(rel(spec["inventory"]), rel(spec.get("templates")), key=spec.get("key", "filename"),
                                 filename=str(spec.get("filename", DEFAULT_PATTERN)),
                                 ip_column=str(spec.get("ip_column", "ip")), secrets=secrets,
                                 timestamp=bool(spec.get("timestamp", True)),
                                 modem_address=bool(spec.get("modem_address", True)),
                                 processes=processes, niceness=_niceness(path, spec.get("niceness")),
                                 leases=leases, lease_bound=None if lease_bound is None else bool(lease_bound))
    except HfcprovError as err:
        raise DynamicConfigError(f"{path}: {err}") from None


def _niceness(path, value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 19:
        raise DynamicConfigError(f"{path}: niceness must be a whole number 0..19, not {value!r}")
    return value
