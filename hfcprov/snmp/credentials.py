"""SNMP credentials: from a file or the environment, never from the command line, never shown.

- v2c: ``community_file`` (first line), else ``$HFCPROV_SNMP_COMMUNITY``, else a default
  (None: required, e.g. for a SET);
- v3 (``v3_user``): keys from ``v3_key_file`` (lines ``auth: KEY`` and ``priv: KEY``), else
  ``$HFCPROV_SNMP_V3_AUTH_KEY`` / ``$HFCPROV_SNMP_V3_PRIV_KEY``.

A community or key file that others can read, or anyone but its owner can write, is refused
(``hfcprov.secretfile``, as ssh does with a private key); a group-readable one is warned about.
``repr`` never shows a community or key.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from hfcprov import secretfile
from hfcprov.snmp.base import SnmpError

AUTH_PROTOCOLS = ("MD5", "SHA", "SHA224", "SHA256", "SHA384", "SHA512")
PRIV_PROTOCOLS = ("DES", "3DES", "AES", "AES128", "AES192", "AES256")

ENV_COMMUNITY = "HFCPROV_SNMP_COMMUNITY"
ENV_V3_AUTH_KEY = "HFCPROV_SNMP_V3_AUTH_KEY"
ENV_V3_PRIV_KEY = "HFCPROV_SNMP_V3_PRIV_KEY"


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


def load_credentials(community_file: str | None = None, v3_user: str | None = None,
                     v3_key_file: str | None = None, auth_proto: str = "SHA", priv_proto: str = "AES",
                     default_community: str | None = "public", env=os.environ, warn=None) -> Credentials:
    """Credentials from a file or the environment (see the module docstring); a group-readable
    secret file goes to ``warn(line)``."""
    if v3_user:
        keys = {"auth": env.get(ENV_V3_AUTH_KEY), "priv": env.get(ENV_V3_PRIV_KEY)}
        if v3_key_file:
            for n, line in enumerate(read_secret_file(v3_key_file, "SNMPv3 key file", warn).splitlines(), 1):
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
        lines = [ln.strip() for ln in read_secret_file(community_file, "community file", warn).splitlines()
                 if ln.strip()]
        if not lines:
            raise SnmpError(f"{community_file}: empty community file")
        return Credentials(community=lines[0])
    if env.get(ENV_COMMUNITY):
        return Credentials(community=env[ENV_COMMUNITY])
    if default_community is None:
        raise SnmpError(f"no community: give --community-file or set {ENV_COMMUNITY}")
    return Credentials(community=default_community)


def read_secret_file(path: str, what: str = "secret file", warn=None) -> str:
    """The text of a community or key file, after its permissions are checked."""
    secretfile.check(path, what, warn)
    try:
        return Path(path).read_text()
    except OSError as err:
        raise SnmpError(f"{path}: cannot read credentials: {err.strerror}") from None
