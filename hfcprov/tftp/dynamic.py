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
        self._trees: dict[str, tuple] = {}  # mac -> (template path, ConfigTree)
        self._reload(force=True)  # a bad inventory is reported at start, not at the first modem

    def __repr__(self):  # the secret stays out of any log or traceback
        return f"ConfigFileBuilder({str(self.inventory)!r}, key={self.key!r})"

    def __call__(self, filename: str, client_ip: str) -> bytes | None:
        from hfcprov.config import encode

        self._reload()
        row = self._rows.get(client_ip if self.key == "ip" else filename)
        if row is None and self.key == "filename":
            row = self._rows.get(filename.lower())
        if row is None:
            return None
        tree = self._tree(row)
        tree = dataclasses.replace(tree, tlvs=list(tree.tlvs))  # set_top replaces list items only
        if self.timestamp:
            tree.set_top(TFTP_TIMESTAMP, tftp_timestamp())
        if self.modem_address:
            tree.set_top(TFTP_MODEM_ADDRESS, client_ip)
        return encode(tree, self._secret)

    def _tree(self, row: dict):
        from hfcprov.build import render_tree
        from hfcprov.build.bulk import _template_for  # the bulk build's tier -> template rule

        mac = row["mac"]
        cached = self._trees.get(mac)
        if cached is not None:
            return cached[1]
        template = _template_for(row, self.templates)
        tree = render_tree(template, row)
        self._trees[mac] = (template, tree)
        return tree

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
                self._trees = {}
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
