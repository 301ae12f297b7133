"""Who holds which address: the DHCP server's leases, read where Kea keeps them.

The TFTP server asks ``lookup(address)`` for the requester of a file: the active lease of
that address (its modem's MAC), or None. Two sources, one interface (``LeaseSource``):

- ``MemfileLeases(paths)``: Kea's memfile lease files (``kea-leases4.csv``, ``kea-leases6.csv``),
  read as Kea writes them: a header naming the columns, one line per change of a lease, the
  last line of an address wins; a lease whose ``valid_lifetime`` is 0, whose state is not
  0 (default) or that expired is not held. The files Kea's lease file cleanup (LFC) leaves
  beside it (``.2`` or ``.completed``, then ``.1``) are read first. Appended lines are read
  incrementally, checked at most once a second (``max_age``).
- ``KeaLeaseApi(socket_path)``: ``lease4-get``/``lease6-get`` through Kea's control socket
  (the server loads the ``lease_cmds`` hook); always current, one round trip per lookup.

A DHCPv6 lease names its modem by ``hwaddr`` when Kea learned it, else by the MAC inside the
client's DUID (DUID-LLT or DUID-LL of an Ethernet address).
"""

from __future__ import annotations

import csv
import ipaddress
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hfcprov import macaddr
from hfcprov.errors import HfcprovError


class LeaseError(HfcprovError):
    """A lease source that cannot be read (missing file, not a Kea lease file, no control socket)."""


@dataclass(frozen=True)
class Lease:
    """One lease: the address, the modem's MAC (12 hex digits; None if Kea did not learn it), the
    client's DUID (DHCPv6), and when it ends (Unix seconds)."""

    address: str
    mac: str | None
    expire: float
    state: int = 0
    duid: str | None = None

    def active(self, now: float | None = None) -> bool:
        return self.state == 0 and self.expire > (time.time() if now is None else now)


class LeaseSource:
    """``lookup(address)``: the active lease of that address, or None. May read a file or a
    socket; ``fresh()`` says whether a lookup would answer from memory. ``current=True`` reads
    the source now whatever its age: a refusal is decided on what the DHCP server wrote last (a
    modem asks for its file milliseconds after its lease)."""

    def lookup(self, address: str, current: bool = False) -> Lease | None:
        raise NotImplementedError

    def fresh(self) -> bool:
        return False

    def describe(self) -> str:
        return type(self).__name__


def mac_from_duid(duid: str | bytes | None) -> str | None:
    """The Ethernet MAC inside a DUID-LLT (type 1) or DUID-LL (type 3), or None."""
    if duid is None:
        return None
    raw = duid if isinstance(duid, bytes) else bytes.fromhex(str(duid).replace(":", "").replace("-", "") or "")
    if len(raw) == 14 and raw[:4] == b"\x00\x01\x00\x01":
        return raw[8:].hex()
    if len(raw) == 10 and raw[:4] == b"\x00\x03\x00\x01":
        return raw[4:].hex()
    return None


def _mac(text) -> str | None:
    if not text:
        return None
    try:
        return macaddr.normalize(text)
    except ValueError:
        return None


def _address(text: str) -> str:
    return str(ipaddress.ip_address(text.strip()))


class MemfileLeases(LeaseSource):
    """Leases from Kea memfile CSV files (IPv4, IPv6 or both: one path each)."""

    def __init__(self, paths, max_age: float = 1.0, clock=time.time):
        paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        if not paths:
            raise LeaseError("no lease file given")
        self.paths = [Path(p) for p in paths]
        self.max_age = max_age
        self.clock = clock
        self._leases: dict[str, Lease] = {}
        self._files: dict[Path, list] = {}  # file -> [inode, bytes read, header, partial last line]
        self._checked: float | None = None
        self._lock = threading.Lock()
        for path in self.paths:  # a missing file is reported at start, not at the first modem
            if not any(p.exists() for p in _lfc_files(path) + [path]):
                raise LeaseError(f"{path}: no such lease file (Kea's memfile lease-database 'name')")
        self.refresh(force=True)

    def describe(self) -> str:
        return ", ".join(map(str, self.paths))

    def fresh(self) -> bool:
        return self._checked is not None and time.monotonic() - self._checked < self.max_age

    def lookup(self, address: str, current: bool = False) -> Lease | None:
        if current or not self.fresh():
            self.refresh(force=current)
        try:
            lease = self._leases.get(_address(address))
        except ValueError:
            return None
        return lease if lease is not None and lease.active(self.clock()) else None

    def __len__(self) -> int:
        """Addresses with a lease line (active or not) in the files."""
        return len(self._leases)

    def refresh(self, force: bool = False) -> None:
        """Read what Kea appended since the last call; everything again after a cleanup (LFC) rotated
        the files (a file replaced, shrunk, appeared or went)."""
        with self._lock:
            if not force and self.fresh():
                return
            files = [f for path in self.paths for f in _lfc_files(path) + [path]]
            stats = {}
            for f in files:
                try:
                    stats[f] = os.stat(f)
                except FileNotFoundError:
                    stats[f] = None
                except OSError as err:
                    raise LeaseError(f"{f}: cannot read lease file: {err.strerror}") from None
            rotated = any((st is None) != (f not in self._files) or
                          (st is not None and (st.st_ino != self._files[f][0] or st.st_size < self._files[f][1]))
                          for f, st in stats.items())
            # after a rotation the table is rebuilt aside and swapped in: a lookup meanwhile sees the old one
            leases, known = ({}, {}) if rotated else (self._leases, self._files)
            for f in files:
                st = stats[f]
                if st is not None and (f not in known or st.st_size > known[f][1]):
                    self._read(f, st.st_ino, leases, known)
            self._leases, self._files = leases, known
            self._checked = time.monotonic()

    @staticmethod
    def _read(path: Path, inode: int, leases: dict, known: dict) -> None:
        state = known.setdefault(path, [inode, 0, None, b""])
        try:
            with open(path, "rb") as f:
                f.seek(state[1])
                data = state[3] + f.read()
                state[1] = f.tell()
        except OSError as err:
            raise LeaseError(f"{path}: cannot read lease file: {err.strerror}") from None
        text, _, state[3] = data.rpartition(b"\n")  # a line Kea is still writing waits for the next read
        lines = text.decode("utf-8", "replace").splitlines()
        if state[2] is None and lines:
            header = [h.strip() for h in next(csv.reader([lines[0]]))]
            if "address" not in header or ("hwaddr" not in header and "duid" not in header):
                raise LeaseError(f"{path}: not a Kea lease file (first line {lines[0][:80]!r})")
            state[2] = header
            lines = lines[1:]
        header = state[2]
        for fields in csv.reader(lines):
            if not fields or fields == header:
                continue
            try:
                lease = _memfile_lease(dict(zip(header, fields)))
            except (ValueError, KeyError):
                continue  # Kea skips a damaged line too; the next change of that lease rewrites it
            if lease.expire <= 0:
                leases.pop(lease.address, None)  # valid_lifetime 0: the lease was deleted
            else:
                leases[lease.address] = lease


def _lfc_files(path: Path) -> list[Path]:
    """What Kea's lease file cleanup leaves beside ``path``, oldest first (``path`` itself comes after)."""
    completed = path.with_name(path.name + ".completed")
    previous = completed if completed.exists() else path.with_name(path.name + ".2")
    return [previous, path.with_name(path.name + ".1")]


def _memfile_lease(row: dict) -> Lease:
    address = _address(row["address"])
    lifetime = int(row.get("valid_lifetime") or 0)
    expire = float(row.get("expire") or 0) if lifetime else 0.0
    duid = row.get("duid") or None
    mac = _mac(row.get("hwaddr")) or mac_from_duid(duid)
    return Lease(address, mac, expire, int(row.get("state") or 0), duid)


class KeaLeaseApi(LeaseSource):
    """Leases asked from a running Kea through its control socket (``lease_cmds`` hook)."""

    def __init__(self, socket_path, clock=time.time):
        from hfcprov.boot.kea import KeaControl

        self.control = KeaControl(socket_path)
        self.clock = clock
        if not Path(socket_path).exists():
            raise LeaseError(f"{socket_path}: no Kea control socket there")

    def describe(self) -> str:
        return f"Kea control socket {self.control.path}"

    def lookup(self, address: str, current: bool = False) -> Lease | None:  # always current
        from hfcprov.boot.kea import KeaError

        try:
            family = ipaddress.ip_address(address).version
        except ValueError:
            return None
        try:
            found = self.control.lease(family, str(ipaddress.ip_address(address)))
        except KeaError as err:
            raise LeaseError(str(err)) from None
        if not found:
            return None
        duid = found.get("duid")
        lease = Lease(found["ip-address"], _mac(found.get("hw-address")) or mac_from_duid(duid),
                      float(found.get("cltt", 0)) + float(found.get("valid-lft", 0)), int(found.get("state", 0)), duid)
        return lease if lease.active(self.clock()) else None


def lease_source(files=None, kea_socket=None) -> LeaseSource | None:
    """The source a dynamic TFTP config names: memfile CSV paths, or a Kea control socket (one of them)."""
    if files and kea_socket:
        raise LeaseError("give lease files or a Kea control socket, not both")
    if kea_socket:
        return KeaLeaseApi(kea_socket)
    if files:
        return MemfileLeases(files)
    return None


__all__ = ["KeaLeaseApi", "Lease", "LeaseError", "LeaseSource", "MemfileLeases", "lease_source", "mac_from_duid"]
