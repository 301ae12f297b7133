"""TFTP provisioning: a read-only server for modem boot storms, and a many-modem client.

Library API (stable; the lab runner and the emulated modem use it)::

    from hfcprov.tftp import TftpServer, fetch
    with TftpServer(root, host="127.0.0.1", port=0, dynamic=None, log=None) as srv:
        data = fetch("127.0.0.1", srv.port, "gold.cm")

``TftpServer.start()`` returns once listening (``.port`` is the bound port);
``.stop()`` finishes in-flight transfers. ``dynamic`` is a ``Provider`` (asked from the
loop, never blocking: bytes, a future or a miss) or any callable
``(filename, client_ip) -> bytes | None`` (run on a thread);
``hfcprov.tftp.dynamic.load_dynamic`` builds a provider from a YAML file (tier template
+ inventory, TLV 19/20 or 59, MICs).
"""

from hfcprov.tftp.client import Fetch, TftpFetchError, fetch, fetch_many
from hfcprov.tftp.paths import AccessViolation, resolve_in_root
from hfcprov.tftp.provider import MISS, Provider
from hfcprov.tftp.server import (
           DynamicProvider,
           TftpServer,
           TftpServerError,
           raise_fd_limit,
)

__all__ = [
           "MISS",
           "AccessViolation",
           "DynamicProvider",
           "Fetch",
           "Provider",
           "TftpFetchError",
           "TftpServer",
           "TftpServerError",
           "fetch",
           "fetch_many",
           "raise_fd_limit",
           "resolve_in_root",
]
