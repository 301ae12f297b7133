"""Config files built on request: tier template + inventory row, TLV 19/20, MICs.

A modem asks for ``001095000002.cm`` (or any name the DHCP server handed out);
the row is found by the same file-name pattern the bulk build uses
(``pattern.format_map(row)``), or by the modem's IP address against an
inventory column. Per request only TLV 19 (TFTP server timestamp) and TLV 20
(the address the request came from) are set and both MICs recomputed, as a
DOCSIS provisioning server does.

A cold boot storm (a fresh server, a whole node rebooting) must not depend on a
pre-warmed cache, so the expensive part is shared and taken off the GIL:

- a file is rendered, parsed and encoded once per (template, values of the variables
  the template reads, found by jinja2's static analysis): modems of one tier with the
  same overrides share one encoded body, only TLV 19/20 and the MICs differ;
- a modem whose file is already being built waits for that build instead of
  starting a second one;
- builds run in a process pool (``processes``, default one per core, shared by every
  builder in the process), so the server's loop keeps draining the listening socket
  while both cores build.

The YAML file that configures it::

    inventory: inventory.csv     # CSV/YAML rows with mac, tier and overrides (paths relative to this file)
    templates: ../templates      # folder of <tier>.j2, or one .j2 for every modem (default: shipped tiers)
    key: filename                # or: ip
    filename: "{mac}.cm"         # key=filename: requested names, as `hfcprov build --pattern`
    ip_column: ip                # key=ip: the inventory column holding each modem's address
    secret_file: cmts.key        # CMTS MIC shared secret; optional, never logged
    timestamp: true              # insert TLV 19
    modem_address: true          # insert TLV 20
    processes: 2                 # worker processes parsing + encoding (default: one per core; 0: in-thread)

Edits to the inventory or to a template are picked up (checked at most once a second).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import dataclasses
import hashlib
import ipaddress
import multiprocessing
import os
import socket
import threading
import time
from pathlib import Path

import yaml

from hfcprov.errors import HfcprovError

# RFC 868 time (seconds since 1900-01-01), which is what DOCSIS TLV 19 carries.
RFC868_OFFSET = 2_208_988_800
TFTP_TIMESTAMP = 19
TFTP_MODEM_ADDRESS = 20

KEYS = ("inventory", "templates", "key", "filename", "ip_column", "secret_file", "timestamp", "modem_address",
        "processes")
MAX_SHARED = 50_000  # distinct rendered configs kept; past that the cache starts over


class DynamicConfigError(HfcprovError):
    """A bad dynamic-files YAML file; the message names the file and the key."""


def tftp_timestamp(now: float | None = None) -> int:
    """TLV 19 value for ``now`` (Unix seconds): RFC 868 seconds, modulo 2**32."""
    return (int(time.time() if now is None else now) + RFC868_OFFSET) & 0xFFFFFFFF


class ConfigFileBuilder:
    """The dynamic provider: ``builder(filename, client_ip) -> bytes | None`` (None: no such modem)."""

    def __init__(self, inventory: str | Path, templates: str | Path | None = None, *, key: str = "filename",
                 filename: str = "{mac}.cm", ip_column: str = "ip", secret: bytes | None = None,
                 timestamp: bool = True, modem_address: bool = True, processes: int | None = None):
        if key not in ("filename", "ip"):
            raise DynamicConfigError(f"key must be 'filename' or 'ip', not {key!r}")
        self.inventory = Path(inventory)
        self.templates = Path(templates) if templates is not None else None
        self.key = key
        self.pattern = filename
        self.ip_column = ip_column
        self._secret = secret
        self.timestamp = timestamp
        self.modem_address = modem_address
        self._lock = threading.Lock()
        self._stamp = None
        self._checked = 0.0
        self._rows: dict[str, dict] = {}
        if processes is None:
            processes = min(os.cpu_count() or 1, 4) if (os.cpu_count() or 1) > 1 else 0
        if processes < 0:
            raise DynamicConfigError(f"processes must be 0 or more, not {processes}")
        self.processes = processes
        if processes:
            _worker_pool(processes)  # started now, so the first modem of a cold storm does not wait for it
        self._cache: dict[str, StampedFile] = {}  # mac -> its file, ready for TLV 19/20
        self._shared: dict[tuple, StampedFile] = {}  # (template, the row's values it reads) -> shared file
        self._pending: dict[tuple, concurrent.futures.Future] = {}  # same key -> the build in progress
        self._reads: dict[Path, frozenset | None] = {}  # template -> the variables it reads (None: cannot tell)
        self._templates: dict[str, Path] = {}  # repr(tier) -> its template
        self._generation = 0  # bumped when a file changes, so a build started before is not shared after
        self.builds = 0  # parse + encode runs (distinct texts built), for tests and logs
        self._reload(force=True)  # a bad inventory is reported at start, not at the first modem

    def __repr__(self):  # the secret stays out of any log or traceback
        return f"ConfigFileBuilder({str(self.inventory)!r}, key={self.key!r})"

    def __call__(self, filename: str, client_ip: str) -> bytes | None:
        return self.submit(filename, client_ip).result()

    def submit(self, filename: str, client_ip: str) -> concurrent.futures.Future:
        """The file without waiting for it: a future of its bytes (None: no such modem).

        The TFTP server asks through this, so a modem waiting for a build holds no thread.
        It may still read files first (the inventory after an edit, a template's variables).
        """
        return self._submit(filename, client_ip, may_block=True)

    def submit_nowait(self, filename: str, client_ip: str) -> concurrent.futures.Future | None:
        """``submit`` if it can answer from memory, without touching a file; else None.

        The server's loop asks this first and hands only the None cases to a thread, so a
        storm's requests skip a thread hop while an inventory reload still never stalls it.
        """
        return self._submit(filename, client_ip, may_block=False)

    def _submit(self, filename: str, client_ip: str, may_block: bool) -> concurrent.futures.Future | None:
        out = concurrent.futures.Future()
        try:
            if may_block:
                self._reload()
            elif time.monotonic() - self._checked >= 1.0:
                return None  # the files are due a check
            row = self._rows.get(client_ip if self.key == "ip" else filename)
            if row is None and self.key == "filename":
                row = self._rows.get(filename.lower())
            if row is None:
                out.set_result(None)
                return out
            built = self._stamped(row, may_block)
            if built is None:
                return None
        except BaseException as err:  # noqa: BLE001 - handed to whoever waits, as a call would raise it
            out.set_exception(err)
            return out

        def stamp(f):  # when the file is ready: TLV 19 is the time it is sent, not when it was asked for
            try:
                out.set_result(f.result().build(tftp_timestamp() if self.timestamp else None,
                                                client_ip if self.modem_address else None))
            except BaseException as err:  # noqa: BLE001
                out.set_exception(err)

        built.add_done_callback(stamp)
        return out

    def warm(self) -> int:
        """Render every modem's file now (e.g. right after start); returns how many. Errors wait for the modem."""
        self._reload()
        builds = []
        for row in list(self._rows.values()):
            try:
                builds.append(self._stamped(row))  # all at once: every worker process gets some
            except HfcprovError:
                pass  # reported to that modem (TFTP error + log line) when it asks
        done = 0
        for f in builds:
            try:
                f.result()
                done += 1
            except HfcprovError:
                pass
        return done

    def _stamped(self, row: dict, may_block: bool = True) -> concurrent.futures.Future | None:
        """A future of the row's StampedFile: done if built, the build in progress, or a new build.
        None when that needs a file read, a worker pool started or (``processes: 0``) a build in
        this thread, and ``may_block`` is False."""
        from hfcprov.build import template_for  # the bulk build's tier -> template rule

        mac = row["mac"]
        cached = self._cache.get(mac)
        if cached is not None:
            return _done(cached)
        tier = repr(row.get("tier"))  # repr: any YAML value can be a key
        path = self._templates.get(tier)
        if path is None:  # the rule stats and resolves files: once per tier, not per modem
            if not may_block:
                return None
            path = self._templates[tier] = template_for(row, self.templates)
        if path not in self._reads and not may_block:
            return None
        if self.processes and not may_block and (_POOL is None or _POOL._max_workers != self.processes):
            return None  # the pool would have to start first
        key = self._key(path, row)
        with self._lock:
            stamped = self._shared.get(key)
            if stamped is not None:
                self._cache[mac] = stamped
                return _done(stamped)
            pending = self._pending.get(key)
            if pending is not None:  # another modem's build of the same file: wait for that one
                return pending
            if not self.processes and not may_block:
                return None  # the build would run right here
            pending = self._pending[key] = concurrent.futures.Future()
        self._build(key, path, row, pending)
        return pending

    def _build(self, key: tuple, path: Path, row: dict, pending: concurrent.futures.Future) -> None:
        args = (str(path), row, self._secret, self.timestamp, self.modem_address, hash(self._stamp))
        if not self.processes:
            try:
                self._built(key, row["mac"], pending, _prepare(*args), None)
            except BaseException as err:  # noqa: BLE001 - the modems waiting get the error; nothing is cached
                self._built(key, row["mac"], pending, None, err)
            return
        pool = _worker_pool(self.processes)

        def done(f):
            err = f.exception()
            if isinstance(err, concurrent.futures.process.BrokenProcessPool):
                _drop_pool(pool)  # a worker died (OOM killer...): the next build starts a fresh pool
            self._built(key, row["mac"], pending, None if err else f.result(), err)

        try:
            pool.submit(_prepare, *args).add_done_callback(done)
        except RuntimeError as err:  # a broken or shut-down pool refuses work
            _drop_pool(pool)
            self._built(key, row["mac"], pending, None, err)

    def _built(self, key, mac, pending, stamped, err) -> None:
        with self._lock:
            self._pending.pop(key, None)
            if err is None and key[0] == self._generation:  # not a build from before the last edit
                if len(self._shared) >= MAX_SHARED:
                    self._shared.clear()
                self._shared[key] = stamped
                self._cache[mac] = stamped
            if err is None:
                self.builds += 1
        if err is None:
            pending.set_result(stamped)
        else:
            pending.set_exception(err)

    def _key(self, path: Path, row: dict) -> tuple:
        """Rows equal on the variables the template reads render the same text: they share one build."""
        if path not in self._reads:
            from hfcprov.build.templates import template_reads

            self._reads[path] = template_reads(path)
        names = self._reads[path]
        items = row.items() if names is None else ((k, row.get(k)) for k in names)
        # None counts as not given (render_text's rule); repr keeps 2 and "2" apart
        return (self._generation, str(path), tuple(sorted((k, repr(v)) for k, v in items if v is not None)))

    def _reload(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < 1.0:
            return
        with self._lock:
            if not force and now - self._checked < 1.0:
                return
            stamp = _stamp(self.inventory, self.templates)
            if stamp != self._stamp:
                self._rows = self._index()
                self._cache, self._shared, self._reads, self._templates = {}, {}, {}, {}
                self._generation += 1
                self._stamp = stamp
            self._checked = now

    def _index(self) -> dict[str, dict]:
        from hfcprov.build import load_inventory

        rows = {}
        for n, row in enumerate(load_inventory(self.inventory), 1):
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
                    name = self.pattern.format_map(row)
                except KeyError as err:
                    raise DynamicConfigError(f"file pattern {self.pattern!r} names {{{err.args[0]}}}, "
                                             f"which row {n} ({row['mac']}) does not have") from None
            rows[name] = row
        return rows


class StampedFile:
    """One modem's rendered config, re-stamped per request with TLV 19/20 and fresh MICs.

    Encoding a config with a few hundred TLVs costs milliseconds, a boot storm cannot
    afford that per request. The file is encoded once by the codec with placeholder
    values; a request patches the two fixed-size values in place and recomputes the CM
    MIC (MD5 of what precedes TLV 6) and the CMTS MIC (the codec's ``cmts_mic``). The
    patch is checked against a full ``encode`` with other values; if it differed (an
    unusual layout), every request takes the full encode instead. ``patch_ok``: that
    check's outcome for an earlier file of the same template (None: check this one);
    the check is a third of a build's cost, and the codec lays out TLV 19/20 and the
    MICs by their codes, not by the values around them, so one file per template tells.
    """

    def __init__(self, tree, secret: bytes | None, timestamp: bool, modem_address: bool,
                 patch_ok: bool | None = None):
        self.tree = tree
        self.secret = secret
        self.stamp19 = timestamp
        self.stamp20 = modem_address
        self.data = bytearray(self._encode(0, "0.0.0.0"))
        plain = self._index()  # this file's own layout: each of TLV 6/7/19/20 once, where expected
        self.checked = plain and patch_ok is None  # the patch was compared with a full encode here
        if self.checked:
            self.fast = self._patch(1_234_567, "192.0.2.77") == self._encode(1_234_567, "192.0.2.77")
        else:
            self.fast = plain and bool(patch_ok)

    def __getstate__(self):  # sent back from a worker process: the tree is only needed when not fast
        state = dict(self.__dict__)
        if self.fast:
            state["tree"] = None
        return state

    def build(self, stamp: int | None, address: str | None) -> bytes:
        if self.fast:
            return self._patch(stamp or 0, address or "0.0.0.0")
        return self._encode(stamp, address)

    def _encode(self, stamp, address) -> bytes:
        from hfcprov.config import encode

        tree = dataclasses.replace(self.tree, tlvs=list(self.tree.tlvs))  # set_top replaces list items only
        if self.stamp19:
            tree.set_top(TFTP_TIMESTAMP, stamp)
        if self.stamp20:
            tree.set_top(TFTP_MODEM_ADDRESS, address)
        return encode(tree, self.secret)

    def _index(self) -> bool:
        """Top-level TLV spans of the placeholder file; False if it is not the plain layout we can patch."""
        data = self.data
        self.spans, self.at = [], {}
        pos = 0
        while pos < len(data) and data[pos] != 0xFF:
            code = data[pos]
            if code == 0:
                pos += 1
                continue
            if pos + 2 > len(data):
                return False
            end = pos + 2 + data[pos + 1]
            self.spans.append((code, pos, end))
            if code in (6, 7, TFTP_TIMESTAMP, TFTP_MODEM_ADDRESS):
                if code in self.at:
                    return False
                self.at[code] = pos
            pos = end
        if self.secret is None:
            self.spans = []  # only the CMTS MIC needs them: not sent back from the worker for nothing
        return 6 in self.at and (self.secret is None or 7 in self.at)

    def _patch(self, stamp: int, address: str) -> bytes:
        from hfcprov.config.codec import cmts_mic

        out = bytearray(self.data)
        if self.stamp19:
            p = self.at[TFTP_TIMESTAMP] + 2
            out[p:p + 4] = stamp.to_bytes(4, "big")
        if self.stamp20:
            p = self.at[TFTP_MODEM_ADDRESS] + 2
            out[p:p + 4] = socket.inet_aton(address)
        cm = self.at[6]
        out[cm + 2:cm + 18] = hashlib.md5(out[:cm]).digest()
        if 7 in self.at:
            items = [(code, bytes(out[a:b])) for code, a, b in self.spans if code != 7]
            p = self.at[7] + 2
            out[p:p + 16] = cmts_mic(items, self.secret)
        return bytes(out)


def _done(value) -> concurrent.futures.Future:
    f = concurrent.futures.Future()
    f.set_result(value)
    return f


def _prepare(template: str, row: dict, secret: bytes | None, timestamp: bool, modem_address: bool,
             version: int = 0) -> StampedFile:
    """Render, parse and encode one config ready for stamping (runs in a worker process).

    ``version`` changes with any edit of the builder's files; each worker checks the patch once
    per (template, version), remembered here rather than in the server, whose answer would come
    too late in a cold storm (every build is submitted before the first check returns)."""
    from hfcprov.build import render_tree

    patch_ok = _PATCH_OK.get((template, version))
    stamped = StampedFile(render_tree(template, row), secret, timestamp, modem_address, patch_ok)
    if stamped.checked:
        _PATCH_OK[(template, version)] = stamped.fast
    return stamped


# In each worker: (template, version of the builder's files) -> the outcome of its first patch check.
_PATCH_OK: dict[tuple[str, int], bool] = {}


_POOL: concurrent.futures.ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _worker_pool(processes: int) -> concurrent.futures.ProcessPoolExecutor:
    """The process-wide pool of ``processes`` workers (one per process: builders share it).

    Returns once every worker is up with the render path imported: a server that says it is
    serving must not make the first modems of a storm wait for interpreters to start.
    """
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL._max_workers != processes:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            # forkserver: the server process has threads, which fork() must not copy mid-lock.
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(["hfcprov.config", "hfcprov.tftp.dynamic"])
            ready = ctx.Semaphore(0)  # each worker releases it once its imports are done
            pool = _POOL = concurrent.futures.ProcessPoolExecutor(processes, mp_context=ctx, initializer=_init_worker,
                                                                  initargs=(ready,))
            for _ in range(processes):
                pool.submit(int)  # no idle worker yet: each submit starts one
            up, deadline = 0, time.monotonic() + 60
            while up < processes and time.monotonic() < deadline:
                if ready.acquire(timeout=0.1):
                    up += 1
                elif any(not p.is_alive() for p in list(pool._processes.values())):
                    break  # a worker died starting: builds will report the broken pool
        return _POOL


@atexit.register
def _shutdown_pool() -> None:
    """Stop the workers before the interpreter tears its modules down (else a noisy weakref callback)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _drop_pool(pool) -> None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is pool:
            _POOL = None
    pool.shutdown(wait=False)


def _init_worker(ready=None) -> None:
    # the render path, imported once per worker, not on its first modem
    import hfcprov.build.templates
    import hfcprov.config.codec  # noqa: F401 - both bind the name hfcprov, used by neither

    if ready is not None:
        ready.release()


def _stamp(inventory: Path, templates: Path | None) -> tuple:
    """What changes when a file the builder reads changes (mtimes of the inventory and templates)."""
    from hfcprov.build.templates import SHIPPED, SUFFIX

    folder = templates if templates is not None else SHIPPED
    files = [inventory] + (sorted(folder.glob("*" + SUFFIX)) if folder.is_dir() else [folder])
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
    try:
        spec = yaml.safe_load(path.read_text())
    except OSError as err:
        raise DynamicConfigError(f"{path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise DynamicConfigError(f"{path}{where}: not valid YAML: {getattr(err, 'problem', err)}") from None
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
    try:
        return ConfigFileBuilder(rel(spec["inventory"]), rel(spec.get("templates")), key=spec.get("key", "filename"),
                                 filename=str(spec.get("filename", "{mac}.cm")),
                                 ip_column=str(spec.get("ip_column", "ip")), secret=secret,
                                 timestamp=bool(spec.get("timestamp", True)),
                                 modem_address=bool(spec.get("modem_address", True)),
                                 processes=_processes(path, spec.get("processes")))
    except DynamicConfigError as err:
        raise DynamicConfigError(f"{path}: {err}") from None
