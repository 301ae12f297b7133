"""A small asyncio SNMP client on pysnmp 7's v3arch hlapi: GET, one-shot table fetch, SET.

Values come back as plain Python (int, bytes, str for IpAddress/OID, None for
noSuchObject/noSuchInstance), keyed by numeric OID strings; MIB lookups are
off (names come from ``hfcprov.mib``), which keeps thousands of requests cheap.
Failures are typed so the audit can tell a dead modem (``SnmpTimeout``) from a
wrong key (``SnmpAuthError``).
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from hfcprov.errors import HfcprovError


class SnmpError(HfcprovError):
    """An SNMP request failed; the message names the host."""


class SnmpTimeout(SnmpError):
    """No answer within timeout x (retries + 1)."""


class SnmpAuthError(SnmpError):
    """The agent rejected the credentials (SNMPv3 report: unknown user, wrong digest, ...)."""


@dataclass(frozen=True)
class Credentials:
    """SNMP credentials. ``repr`` never shows a community or key."""

    version: str = "2c"  # "2c" or "3"
    community: str = field(default="public", repr=False)
    user: str | None = None
    auth_key: str | None = field(default=None, repr=False)
    priv_key: str | None = field(default=None, repr=False)
    auth_proto: str = "SHA"  # MD5, SHA, SHA224, SHA256, SHA384, SHA512
    priv_proto: str = "AES"  # DES, 3DES, AES (AES128), AES192, AES256

    def auth_data(self):
        from pysnmp.hlapi.v3arch.asyncio import CommunityData, UsmUserData

        if self.version == "2c":
            return CommunityData(self.community, mpModel=1)
        return UsmUserData(
            self.user,
            authKey=self.auth_key,
            privKey=self.priv_key,
            authProtocol=_AUTH[self.auth_proto.upper()] if self.auth_key else None,
            privProtocol=_PRIV[self.priv_proto.upper()] if self.priv_key else None,
        )


def _protocols():
    from pysnmp.hlapi.v3arch import asyncio as hl

    auth = {"MD5": hl.USM_AUTH_HMAC96_MD5, "SHA": hl.USM_AUTH_HMAC96_SHA, "SHA224": hl.USM_AUTH_HMAC128_SHA224,
            "SHA256": hl.USM_AUTH_HMAC192_SHA256, "SHA384": hl.USM_AUTH_HMAC256_SHA384,
            "SHA512": hl.USM_AUTH_HMAC384_SHA512}
    priv = {"DES": hl.USM_PRIV_CBC56_DES, "3DES": hl.USM_PRIV_CBC168_3DES, "AES": hl.USM_PRIV_CFB128_AES,
            "AES128": hl.USM_PRIV_CFB128_AES, "AES192": hl.USM_PRIV_CFB192_AES, "AES256": hl.USM_PRIV_CFB256_AES}
    return auth, priv


class _Lazy(dict):
    def __init__(self, pick):
        super().__init__()
        self._pick = pick

    def __missing__(self, key):
        if not dict.__len__(self):
            self.update(_protocols()[self._pick])
            if key in self:
                return self[key]
        raise SnmpError(f"unknown SNMPv3 protocol {key!r} (choose from {', '.join(sorted(self))})")


_AUTH, _PRIV = _Lazy(0), _Lazy(1)
AUTH_PROTOCOLS = ("MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512")
PRIV_PROTOCOLS = ("DES", "3DES", "AES", "AES128", "AES192", "AES256")

ENV_COMMUNITY = "HFCPROV_SNMP_COMMUNITY"
ENV_V3_AUTH_KEY = "HFCPROV_SNMP_V3_AUTH_KEY"
ENV_V3_PRIV_KEY = "HFCPROV_SNMP_V3_PRIV_KEY"


def load_credentials(community_file: str | None = None, v3_user: str | None = None,
                     v3_key_file: str | None = None, auth_proto: str = "SHA", priv_proto: str = "AES",
                     default_community: str | None = "public", env=os.environ) -> Credentials:
    """Credentials from a file or the environment, never from the command line.

    - v2c: ``community_file`` (first line), else ``$HFCPROV_SNMP_COMMUNITY``, else ``default_community``
      (None: required, e.g. for a SET).
    - v3 (``v3_user`` given): keys from ``v3_key_file`` (lines ``auth: KEY`` and ``priv: KEY``), else
      ``$HFCPROV_SNMP_V3_AUTH_KEY`` / ``$HFCPROV_SNMP_V3_PRIV_KEY``.
    """
    if v3_user:
        keys = {"auth": env.get(ENV_V3_AUTH_KEY), "priv": env.get(ENV_V3_PRIV_KEY)}
        if v3_key_file:
            for n, line in enumerate(_read_secret_file(v3_key_file).splitlines(), 1):
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                key, sep, value = line.partition(":")
                if not sep or key.strip() not in ("auth", "priv"):
                    raise SnmpError(f"{v3_key_file} line {n}: expected 'auth: KEY' or 'priv: KEY'")
                keys[key.strip()] = value.strip()
        if not keys["auth"]:
            raise SnmpError(f"SNMPv3 user {v3_user}: no auth key (give --v3-key-file or set {ENV_V3_AUTH_KEY})")
        for what, key in keys.items():
            if key is not None and len(key) < 8:
                raise SnmpError(f"SNMPv3 user {v3_user}: {what} key shorter than 8 characters (RFC 3414)")
        if auth_proto.upper() not in AUTH_PROTOCOLS:
            raise SnmpError(f"unknown SNMPv3 auth protocol {auth_proto!r} (choose from {', '.join(AUTH_PROTOCOLS)})")
        if priv_proto.upper() not in PRIV_PROTOCOLS:
            raise SnmpError(f"unknown SNMPv3 priv protocol {priv_proto!r} (choose from {', '.join(PRIV_PROTOCOLS)})")
        return Credentials(version="3", user=v3_user, auth_key=keys["auth"], priv_key=keys["priv"],
                           auth_proto=auth_proto.upper(), priv_proto=priv_proto.upper())
    if community_file:
        lines = [ln.strip() for ln in _read_secret_file(community_file).splitlines() if ln.strip()]
        if not lines:
            raise SnmpError(f"{community_file}: empty community file")
        return Credentials(community=lines[0])
    if env.get(ENV_COMMUNITY):
        return Credentials(community=env[ENV_COMMUNITY])
    if default_community is None:
        raise SnmpError(f"no community: give --community-file or set {ENV_COMMUNITY}")
    return Credentials(community=default_community)


def _read_secret_file(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError as err:
        raise SnmpError(f"{path}: cannot read credentials: {err.strerror}") from None


def _python_value(value):
    from pyasn1.type import univ
    from pysnmp.proto import rfc1902
    from pysnmp.proto.rfc1905 import EndOfMibView, NoSuchInstance, NoSuchObject

    if isinstance(value, (NoSuchObject, NoSuchInstance, EndOfMibView)):
        return None
    if isinstance(value, rfc1902.IpAddress):
        return ".".join(str(b) for b in value.asOctets())
    if isinstance(value, univ.OctetString):
        return value.asOctets()
    if isinstance(value, univ.ObjectIdentifier):
        return str(value)
    if isinstance(value, univ.Integer):
        return int(value)
    return value.prettyPrint()


def _vb_value(value, typed: bool = False):
    from pysnmp.proto.rfc1905 import EndOfMibView, NoSuchInstance, NoSuchObject

    if isinstance(value, EndOfMibView):
        return END_OF_MIB
    if not typed:
        return _python_value(value)
    if isinstance(value, (NoSuchObject, NoSuchInstance)):
        return Typed("noSuchObject" if isinstance(value, NoSuchObject) else "noSuchInstance", None)
    names = [c.__name__ for c in type(value).__mro__]
    kind = next((n for n in ("IpAddress", "Counter32", "Gauge32", "Unsigned32", "TimeTicks", "Counter64", "Opaque",
                             "Integer32", "Integer", "OctetString", "ObjectIdentifier", "ObjectName", "Null")
                 if n in names), "Opaque")
    kind = {"Integer32": "Integer", "Unsigned32": "Gauge32", "ObjectName": "ObjectIdentifier"}.get(kind, kind)
    return Typed(kind, _python_value(value))


_AUTH_FAILURES = ("UnknownUserName", "WrongDigest", "DecryptionError", "UnknownSecurityName",
                  "UnsupportedSecurityLevel", "AuthenticationFailure", "AuthenticationError",
                  "NotInTimeWindow", "UnknownCommunityName")


END_OF_MIB = object()  # a var-bind past the agent's last object


class Typed(NamedTuple):
    """A value with its SMI type, for clients made with ``typed=True`` (``snmp get``/``walk`` print
    the type as net-snmp does). ``type`` is a ``hfcprov.config.ber`` type name ("Integer",
    "OctetString", "Counter32", ...) or "noSuchObject"/"noSuchInstance" (then ``value`` is None)."""

    type: str
    value: object
_UNSET = object()


class BaseClient:
    """Walking logic shared by the SNMP engines; an engine implements ``_get``, ``_bulk``
    (lists of ``(oid, value)``, values as ``_python_value`` gives them, ``END_OF_MIB`` past the
    end) and ``set``."""

    timeout: float
    retries: int
    # the local address requests leave from (a dual-homed lab host's management side); None: the kernel's
    # choice. Used for targets of its family only.
    source: str | None = None

    def _source_for(self, family_v6: bool, any_address: str) -> str:
        return self.source if self.source and (":" in self.source) == family_v6 else any_address

    async def _get(self, host: str, port: int, oid_list: list[str]) -> list[tuple[str, object]]:
        raise NotImplementedError

    async def _bulk(self, host: str, port: int, non_repeaters: int, max_repetitions: int,
                    oid_list: list[str]) -> list[tuple[str, object]]:
        raise NotImplementedError

    async def get(self, host: str, port: int, oid_list: list[str]) -> dict[str, object]:
        """GET scalars; the result maps each OID to its value (None when the agent has no such object)."""
        return {oid: (None if value is END_OF_MIB else value) for oid, value in await self._get(host, port, oid_list)}

    async def get_many(self, host: str, port: int, oid_list: list[str], per_request: int = 40) -> dict[str, object]:
        """GET any number of instances, ``per_request`` var-binds per PDU (agents cap answers)."""
        values: dict[str, object] = {}
        for i in range(0, len(oid_list), per_request):
            values.update(await self.get(host, port, oid_list[i:i + per_request]))
        return values

    async def fetch(self, host: str, port: int, scalars: list[str], columns: list[str],
                    max_repetitions: int | None = None, first_rows: list[str] = (),
                    stop=None) -> tuple[dict[str, object], dict[str, dict[str, object]]]:
        """Scalars and whole table columns in as few GETBULKs as the agent allows.

        The scalars ride as non-repeaters (GETNEXT of the OID minus its last arc) in the first
        request, as do ``first_rows`` columns (GETNEXT of the column: its first row, e.g. the
        CM's one docsIfCmStatusTable row, returned in the scalars dict under the column OID);
        the columns repeat until each leaves its subtree. ``max_repetitions`` defaults to
        what keeps an answer within 60 var-binds (agents cap responses: snmpsim at 64, many CMs
        lower). ``stop(column, row_index)`` returning True ends a column early at that row (not
        kept), e.g. after a table's active rows. Returns
        ``({scalar_oid: value}, {column_oid: {row_index: value}})``.
        """
        if max_repetitions is None:
            max_repetitions = max(2, (60 - len(scalars) - len(first_rows)) // max(1, len(columns)))
        scalar_values: dict[str, object] = {}
        tables: dict[str, dict[str, object]] = {c: {} for c in columns}
        cursors = {c: c for c in columns}  # column -> last OID seen
        first = True
        while cursors or first:
            non_rep = [s.rsplit(".", 1)[0] for s in scalars] + list(first_rows) if first else []
            active = list(cursors)
            request = non_rep + [cursors[c] for c in active]
            if not request:
                break
            var_binds = await self._bulk(host, port, len(non_rep), max_repetitions, request)
            for scalar, (name, value) in zip(scalars, var_binds[: len(scalars)] if first else ()):
                scalar_values[scalar] = value if name == scalar and value is not END_OF_MIB else None
            for column, (name, value) in zip(first_rows, var_binds[len(scalars): len(non_rep)] if first else ()):
                ok = name.startswith(column + ".") and value is not END_OF_MIB
                scalar_values[column] = value if ok else None
            reps = var_binds[len(non_rep):]
            done = set()
            before = dict(cursors)
            for i, (oid, value) in enumerate(reps):
                column = active[i % len(active)]
                if column in done or not oid.startswith(column + ".") or value is END_OF_MIB:
                    done.add(column)  # left the column's subtree (or endOfMibView)
                    continue
                index = oid[len(column) + 1:]
                if stop is not None and stop(column, index):
                    done.add(column)
                    continue
                tables[column][index] = value
                cursors[column] = oid
            for column in active:
                # finished when it left its subtree; also when it did not advance (empty or
                # non-increasing answer), so a broken agent cannot keep us looping
                if column in done or cursors[column] == before[column]:
                    cursors.pop(column, None)
            first = False
        return scalar_values, tables

    @staticmethod
    def _set_args(type_, value):
        """``set(..., "Integer", 1)``, or the older ``set(..., Integer32(1))`` with a pysnmp value."""
        if value is not _UNSET:
            return type_, value
        cls = type(type_).__name__
        name = {"Integer32": "Integer", "Integer": "Integer", "ObjectName": "ObjectIdentifier",
                "ObjectIdentifier": "ObjectIdentifier", "Unsigned32": "Gauge32"}.get(cls, cls)
        if name == "IpAddress":
            return name, ".".join(str(b) for b in type_.asOctets())
        return name, _python_value(type_)

    def _timeout_error(self, host: str, port: int) -> SnmpTimeout:
        return SnmpTimeout(f"{host}:{port}: no SNMP answer in {self.timeout:g} s x {self.retries + 1} tries")

    def close(self) -> None:
        pass


class _NoMibCompiler:
    """Stands in for pysmi: requests use numeric OIDs only, so nothing is ever compiled."""

    def compile(self, *names, **options):
        return {}


def _numeric_mib_view():
    """A MIB view without pysmi attached: pysnmp otherwise builds pysmi's grammar (seconds of CPU)
    on the first request although every OID here is numeric."""
    import pysnmp.smi.mibs
    from pysnmp.smi import builder, view

    mib_builder = builder.MibBuilder()
    mib_builder.set_mib_compiler(_NoMibCompiler(), os.path.dirname(pysnmp.smi.mibs.__file__))
    return view.MibViewController(mib_builder)


class PysnmpClient(BaseClient):
    """pysnmp 7 v3arch engine (v1/v2c/v3 USM); one engine shared by every request of a run."""

    def __init__(self, credentials: Credentials, timeout: float = 2.0, retries: int = 1, typed: bool = False):
        from pysnmp.hlapi.v3arch.asyncio import ContextData, SnmpEngine

        self.credentials = credentials
        self.typed = typed
        self.timeout = timeout
        self.retries = retries
        self._engine = SnmpEngine()
        from hfcprov.snmp.mibs import loaded_view

        # the --mib-dir view when the CLI compiled one, so pysnmp knows the operator's names too
        self._engine.cache["mibViewController"] = loaded_view() or _numeric_mib_view()
        self._auth = credentials.auth_data()
        self._context = ContextData()
        self._targets: dict[tuple[str, int], object] = {}
        self._objects: dict[str, object] = {}

    def _object(self, oid: str):
        """A resolved ObjectType for ``oid``, reused across requests: resolving one against the
        MIB view costs more CPU than encoding the request, and audits ask the same OIDs of
        every modem."""
        from pysnmp.hlapi.v3arch.asyncio import ObjectIdentity, ObjectType

        obj = self._objects.get(oid)
        if obj is None:
            obj = ObjectType(ObjectIdentity(oid)).resolve_with_mib(self._engine.cache["mibViewController"])
            if len(self._objects) < 50_000:
                self._objects[oid] = obj
        return obj

    async def _target(self, host: str, port: int):
        from pysnmp.error import PySnmpError
        from pysnmp.hlapi.v3arch.asyncio import UdpTransportTarget

        key = (host, port)
        target = self._targets.get(key)
        if target is None:
            try:
                target = await UdpTransportTarget.create(key, timeout=self.timeout, retries=self.retries)
                if self.source and (":" in self.source) == (":" in host):
                    target.set_local_address((self.source, 0))
            except PySnmpError as err:  # bad host name
                raise SnmpError(f"{host}:{port}: {err}") from None
            self._targets[key] = target
        return target

    def _check(self, host, port, error_indication, error_status, error_index, var_binds):
        where = f"{host}:{port}"
        if error_indication:
            name = type(error_indication).__name__
            if name == "RequestTimedOut":
                raise self._timeout_error(host, port)
            if name in _AUTH_FAILURES:
                raise SnmpAuthError(f"{where}: authentication failed ({error_indication})")
            raise SnmpError(f"{where}: {error_indication}")
        if error_status:
            status = error_status.prettyPrint() if hasattr(error_status, "prettyPrint") else str(error_status)
            obj = ""
            if error_index and int(error_index) <= len(var_binds):
                obj = f" at {var_binds[int(error_index) - 1][0]}"
            if status in ("authorizationError", "noAccess"):
                raise SnmpAuthError(f"{where}: {status}{obj}")
            raise SnmpError(f"{where}: {status}{obj}")

    async def _get(self, host, port, oid_list):
        from pysnmp.hlapi.v3arch.asyncio import get_cmd

        target = await self._target(host, port)
        result = await get_cmd(self._engine, self._auth, target, self._context,
                               *[self._object(o) for o in oid_list], lookupMib=False)
        self._check(host, port, *result)
        return [(str(name), _vb_value(value, self.typed)) for name, value in result[3]]

    async def _bulk(self, host, port, non_repeaters, max_repetitions, oid_list):
        from pysnmp.hlapi.v3arch.asyncio import bulk_cmd

        target = await self._target(host, port)
        result = await bulk_cmd(self._engine, self._auth, target, self._context, non_repeaters,
                                max_repetitions, *[self._object(o) for o in oid_list], lookupMib=False)
        self._check(host, port, *result)
        return [(str(name), _vb_value(value, self.typed)) for name, value in result[3]]

    async def set(self, host: str, port: int, oid: str, type_, value=_UNSET) -> None:
        """SET one object; ``type_`` is an SMI type name as in ``hfcprov.config.ber`` (e.g. "Integer")."""
        type_, value = self._set_args(type_, value)
        await self.set_many(host, port, [(oid, type_, value)])

    async def set_many(self, host: str, port: int, var_binds: list[tuple[str, str, object]]) -> list:
        """SET several objects in one PDU; ``(oid, type name, value)`` each."""
        from pysnmp.hlapi.v3arch.asyncio import ObjectIdentity, ObjectType, set_cmd
        from pysnmp.proto import rfc1902

        types = {"Integer": rfc1902.Integer32, "OctetString": rfc1902.OctetString,
                 "Gauge32": rfc1902.Gauge32, "Unsigned32": rfc1902.Unsigned32,
                 "IpAddress": rfc1902.IpAddress, "ObjectIdentifier": rfc1902.ObjectName,
                 "Counter32": rfc1902.Counter32, "TimeTicks": rfc1902.TimeTicks, "Opaque": rfc1902.Opaque,
                 "Counter64": rfc1902.Counter64}
        target = await self._target(host, port)
        view = self._engine.cache["mibViewController"]
        objs = [ObjectType(ObjectIdentity(oid), types[type_](value)).resolve_with_mib(view)
                for oid, type_, value in var_binds]
        result = await set_cmd(self._engine, self._auth, target, self._context, *objs, lookupMib=False)
        self._check(host, port, *result)
        return [(str(name), _vb_value(value, self.typed)) for name, value in result[3]]

    def close(self) -> None:
        dispatcher = self._engine.transport_dispatcher
        if dispatcher is not None:
            dispatcher.close_dispatcher()


def SnmpClient(credentials: Credentials, timeout: float = 2.0, retries: int = 1, engine: str | None = None,
               typed: bool = False):
    """The client for ``credentials``: SNMPv1/v2c through hfcprov's lean BER engine
    (``hfcprov.snmp.v2c``), SNMPv3 through pysnmp. ``engine="pysnmp"`` (or
    ``$HFCPROV_SNMP_ENGINE=pysnmp``) forces pysnmp for v2c too. ``typed``: values come as
    ``Typed(type, value)``."""
    engine = engine or os.environ.get("HFCPROV_SNMP_ENGINE", "auto")
    if credentials.version == "2c" and engine != "pysnmp":
        from hfcprov.snmp.v2c import V2cClient

        return V2cClient(credentials, timeout=timeout, retries=retries, typed=typed)
    return PysnmpClient(credentials, timeout=timeout, retries=retries, typed=typed)


def run(coro):
    """Run a coroutine to completion (the CLI's entry into asyncio)."""
    return asyncio.run(coro)


async def for_each(items, concurrency: int, one, on_result=None, before=None) -> Counter:
    """``await one(item)`` for every item, at most ``concurrency`` at once; each result goes to
    ``on_result`` as it arrives (completion order). ``before()`` is awaited before each item starts
    (a pacer). Returns the count of results by their ``status``."""
    counts: Counter = Counter()
    queue: asyncio.Queue = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def worker():
        while True:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            if before is not None:
                await before()
            result = await one(item)
            counts[result.status] += 1
            if on_result is not None:
                on_result(result)

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, queue.qsize())))))
    return counts
