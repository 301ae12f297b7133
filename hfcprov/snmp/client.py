"""The SNMP client hfcprov uses: ``SnmpClient`` picks the engine for the credentials.

SNMPv1/v2c go through hfcprov's lean BER engine (``hfcprov.snmp.v2c``); SNMPv3 (USM keys,
engine discovery) through pysnmp 7's v3arch hlapi (``PysnmpClient`` here). Both are
``hfcprov.snmp.base.BaseClient``s: values come back as plain Python (int, bytes, str for
IpAddress/OID, None for noSuchObject/noSuchInstance), keyed by numeric OID strings; MIB lookups
are off (names come from ``hfcprov.mib``), which keeps thousands of requests cheap. Failures are
typed so the audit can tell a dead modem (``SnmpTimeout``) from a wrong key (``SnmpAuthError``).
"""

from __future__ import annotations

import asyncio
import os

from hfcprov.snmp.base import (
    END_OF_MIB,
    BaseClient,
    SnmpAuthError,
    SnmpError,
    SnmpTimeout,
    Typed,
)
from hfcprov.snmp.credentials import Credentials, load_credentials
from hfcprov.snmp.v2c import V2cClient

__all__ = ["END_OF_MIB", "Credentials", "PysnmpClient", "SnmpAuthError", "SnmpClient", "SnmpError", "SnmpTimeout",
           "Typed", "load_credentials", "run"]


def _protocols():
    from pysnmp.hlapi.v3arch import asyncio as hl

    auth = {"MD5": hl.USM_AUTH_HMAC96_MD5, "SHA": hl.USM_AUTH_HMAC96_SHA, "SHA224": hl.USM_AUTH_HMAC128_SHA224,
            "SHA256": hl.USM_AUTH_HMAC192_SHA256, "SHA384": hl.USM_AUTH_HMAC256_SHA384,
            "SHA512": hl.USM_AUTH_HMAC384_SHA512}
    priv = {"DES": hl.USM_PRIV_CBC56_DES, "3DES": hl.USM_PRIV_CBC168_3DES, "AES": hl.USM_PRIV_CFB128_AES,
            "AES128": hl.USM_PRIV_CFB128_AES, "AES192": hl.USM_PRIV_CFB192_AES, "AES256": hl.USM_PRIV_CFB256_AES}
    return auth, priv


def _auth_data(credentials: Credentials):
    """pysnmp's CommunityData / UsmUserData for the credentials."""
    from pysnmp.hlapi.v3arch.asyncio import CommunityData, UsmUserData

    if credentials.version == "2c":
        return CommunityData(credentials.community, mpModel=1)
    auth, priv = _protocols()
    return UsmUserData(
        credentials.user,
        authKey=credentials.auth_key,
        privKey=credentials.priv_key,
        authProtocol=auth[credentials.auth_proto.upper()] if credentials.auth_key else None,
        privProtocol=priv[credentials.priv_proto.upper()] if credentials.priv_key else None,
    )


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
        self._engine.cache["mibViewController"] = _numeric_mib_view()
        self._auth = _auth_data(credentials)
        self._context = ContextData()
        self._targets: dict[tuple[str, int, bool], object] = {}
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

    async def _target(self, host: str, port: int, once: bool = False):
        """The transport target of one agent; ``once``: no resend, one wait as long as every try's."""
        from pysnmp.error import PySnmpError
        from pysnmp.hlapi.v3arch.asyncio import UdpTransportTarget

        key = (host, port, once)
        target = self._targets.get(key)
        if target is None:
            timeout, retries = (self.once_timeout, 0) if once else (self.timeout, self.retries)
            try:
                target = await UdpTransportTarget.create((host, port), timeout=timeout, retries=retries)
                if self.source and (":" in self.source) == (":" in host):
                    target.set_local_address((self.source, 0))
            except PySnmpError as err:  # bad host name
                raise SnmpError(f"{host}:{port}: {err}") from None
            self._targets[key] = target
        return target

    def _check(self, host, port, error_indication, error_status, error_index, var_binds, once: bool = False):
        where = f"{host}:{port}"
        if error_indication:
            name = type(error_indication).__name__
            if name == "RequestTimedOut":
                raise self._timeout_error(host, port, once)
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

    async def set_many(self, host: str, port: int, var_binds: list[tuple[str, str, object]],
                       once: bool = False) -> list:
        """SET several objects in one PDU; ``(oid, type name, value)`` each; ``once``: never resent."""
        from pysnmp.hlapi.v3arch.asyncio import ObjectIdentity, ObjectType, set_cmd
        from pysnmp.proto import rfc1902

        types = {"Integer": rfc1902.Integer32, "OctetString": rfc1902.OctetString,
                 "Gauge32": rfc1902.Gauge32, "Unsigned32": rfc1902.Unsigned32,
                 "IpAddress": rfc1902.IpAddress, "ObjectIdentifier": rfc1902.ObjectName,
                 "Counter32": rfc1902.Counter32, "TimeTicks": rfc1902.TimeTicks, "Opaque": rfc1902.Opaque,
                 "Counter64": rfc1902.Counter64}
        target = await self._target(host, port, once)
        view = self._engine.cache["mibViewController"]
        objs = [ObjectType(ObjectIdentity(oid), types[type_](value)).resolve_with_mib(view)
                for oid, type_, value in var_binds]
        result = await set_cmd(self._engine, self._auth, target, self._context, *objs, lookupMib=False)
        self._check(host, port, *result, once=once)
        return [(str(name), _vb_value(value, self.typed)) for name, value in result[3]]

    def close(self) -> None:
        dispatcher = self._engine.transport_dispatcher
        if dispatcher is not None:
            dispatcher.close_dispatcher()


def SnmpClient(credentials: Credentials, timeout: float = 2.0, retries: int = 1, engine: str | None = None,
               typed: bool = False, patience: float | None = None):
    """The client for ``credentials``: SNMPv1/v2c through hfcprov's lean BER engine
    (``hfcprov.snmp.v2c``), SNMPv3 through pysnmp. ``engine="pysnmp"`` (or
    ``$HFCPROV_SNMP_ENGINE=pysnmp``) forces pysnmp for v2c too. ``typed``: values come as
    ``Typed(type, value)``. ``patience``: how long the v2c engine keeps listening for a slow
    agent's late answer after the last try (default 5 x timeout; 0: a timeout is final)."""
    engine = engine or os.environ.get("HFCPROV_SNMP_ENGINE", "auto")
    if credentials.version == "2c" and engine != "pysnmp":
        return V2cClient(credentials, timeout=timeout, retries=retries, typed=typed, patience=patience)
    return PysnmpClient(credentials, timeout=timeout, retries=retries, typed=typed)


def run(coro):
    """Run a coroutine to completion (the CLI's entry into asyncio)."""
    return asyncio.run(coro)
