"""Config files built on request: tier template + inventory row, TLV 19/20, MICs.

A modem asks for ``001095000002.cm`` (or any name the DHCP server handed out);
the row is found by the same file-name pattern the bulk build uses
(``pattern.format_map(row)``), or by the modem's IP address against an
inventory column. The tree is rendered once per modem and cached; per request
only TLV 19 (TFTP server timestamp) and TLV 20 (the address the request came
from) are set and the file is encoded, so both MICs cover them, as a DOCSIS
provisioning server does. The YAML file that configures it::

    inventory: inventory.csv     # CSV/YAML rows with mac, tier and overrides (paths relative to this file)
    templates: ../templates      # folder of <tier>.j2, or one .j2 for every modem (default: shipped tiers)
    key: filename                # or: ip
    filename: "{mac}.cm"         # key=filename: requested names, as `hfcprov build --pattern`
    ip_column: ip                # key=ip: the inventory column holding each modem's address
    secret_file: cmts.key        # CMTS MIC shared secret; optional, never logged
    timestamp: true              # insert TLV 19
    modem_address: true          # insert TLV 20

Edits to the inventory or to a template are picked up (checked at most once a second).
"""

from __future__ import annotations

import dataclasses
import hashlib
import ipaddress
import os
import threading
import time
from pathlib import Path

import yaml

from hfcprov.errors import HfcprovError

# RFC 868 time (seconds since 1900-01-01), which is what DOCSIS TLV 19 carries.
RFC868_OFFSET = 2_208_988_800
TFTP_TIMESTAMP = 19
TFTP_MODEM_ADDRESS = 20

KEYS = ("inventory", "templates", "key", "filename", "ip_column", "secret_file", "timestamp", "modem_address")


class DynamicConfigError(HfcprovError):
    """A bad dynamic-files YAML file; the message names the file and the key."""


def tftp_timestamp(now: float | None = None) -> int:
    """TLV 19 value for ``now`` (Unix seconds): RFC 868 seconds, modulo 2**32."""
    return (int(time.time() if now is None else now) + RFC868_OFFSET) & 0xFFFFFFFF


class ConfigFileBuilder:
    """The dynamic provider: ``builder(filename, client_ip) -> bytes | None`` (None: no such modem)."""

    def __init__(self, inventory: str | Path, templates: str | Path | None = None, *, key: str = "filename",
                 filename: str = "{mac}.cm", ip_column: str = "ip", secret: bytes | None = None,
                 timestamp: bool = True, modem_address: bool = True):
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
        self._cache: dict[str, StampedFile] = {}  # mac -> rendered file, ready for TLV 19/20
        self._reload(force=True)  # a bad inventory is reported at start, not at the first modem

    def __repr__(self):  # the secret stays out of any log or traceback
        return f"ConfigFileBuilder({str(self.inventory)!r}, key={self.key!r})"

    def __call__(self, filename: str, client_ip: str) -> bytes | None:
        self._reload()
        row = self._rows.get(client_ip if self.key == "ip" else filename)
        if row is None and self.key == "filename":
            row = self._rows.get(filename.lower())
        if row is None:
            return None
        return self._stamped(row).build(tftp_timestamp() if self.timestamp else None,
                                        client_ip if self.modem_address else None)

    def warm(self) -> int:
        """Render every modem's file now (e.g. right after start); returns how many. Errors wait for the modem."""
        self._reload()
        done = 0
        for row in list(self._rows.values()):
            try:
                self._stamped(row)
                done += 1
            except HfcprovError:
                pass  # reported to that modem (TFTP error + log line) when it asks
        return done

    def _stamped(self, row: dict) -> StampedFile:
        from hfcprov.build import render_tree
        from hfcprov.build.bulk import (
            _template_for,  # the bulk build's tier -> template rule
        )

        mac = row["mac"]
        cached = self._cache.get(mac)
        if cached is not None:
            return cached
        tree = render_tree(_template_for(row, self.templates), row)
        stamped = StampedFile(tree, self._secret, self.timestamp, self.modem_address)
        self._cache[mac] = stamped
        return stamped

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
                self._cache = {}
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
    patch is checked once against a full ``encode`` with other values; if it ever
    differed (an unusual layout), every request takes the full encode instead.
    """

    def __init__(self, tree, secret: bytes | None, timestamp: bool, modem_address: bool):
        self.tree = tree
        self.secret = secret
        self.stamp19 = timestamp
        self.stamp20 = modem_address
        self.data = bytearray(self._encode(0, "0.0.0.0"))
        self.fast = self._index() and self._patch(1_234_567, "192.0.2.77") == self._encode(1_234_567, "192.0.2.77")

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
        return 6 in self.at and (self.secret is None or 7 in self.at)

    def _patch(self, stamp: int, address: str) -> bytes:
        from hfcprov.config.codec import cmts_mic

        out = bytearray(self.data)
        if self.stamp19:
            p = self.at[TFTP_TIMESTAMP] + 2
            out[p:p + 4] = stamp.to_bytes(4, "big")
        if self.stamp20:
            p = self.at[TFTP_MODEM_ADDRESS] + 2
            out[p:p + 4] = ipaddress.IPv4Address(address).packed
        cm = self.at[6]
        out[cm + 2:cm + 18] = hashlib.md5(out[:cm]).digest()
        if 7 in self.at:
            items = [(code, bytes(out[a:b])) for code, a, b in self.spans if code != 7]
            p = self.at[7] + 2
            out[p:p + 16] = cmts_mic(items, self.secret)
        return bytes(out)


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
                                 modem_address=bool(spec.get("modem_address", True)))
    except DynamicConfigError as err:
        raise DynamicConfigError(f"{path}: {err}") from None
