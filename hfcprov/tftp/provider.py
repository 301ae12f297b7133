"""The one interface between the TFTP server and whatever makes the files its root does not have.

``Provider.request(filename, client_ip)`` is called from the server's loop and must never
block. It answers with:

- ``bytes``: the file, served at once like a static file;
- a ``concurrent.futures.Future`` that resolves to the bytes (or None: no such file), or
  fails (the modem gets a TFTP error, the log the reason); the modem holds no thread while
  it waits, and a resent RRQ joins the same wait;
- ``None`` (``MISS``): no such file.

A provider that will not serve this requester raises ``RequestRefused`` (or fails the future
with it): the modem gets an access violation, the log the requester, file and reason.

``attach_loop(call_soon)`` hands the provider the loop's ``call_soon``, so it can complete its
futures in the loop's thread; ``close()`` is called when the server that made the provider
stops. ``hfcprov.tftp.dynamic.ConfigFileBuilder`` is a provider; ``as_provider`` wraps a plain
``callable(filename, client_ip) -> bytes | file-like | None`` in one that calls it on a thread.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable

from hfcprov.errors import HfcprovError

MISS = None


class RequestRefused(HfcprovError):
    """A provider will not give this file to this requester (e.g. it does not hold the modem's lease).

    Raised by ``request`` or set on its future: the server answers a TFTP access violation and logs
    the requester, the file and this message (``"result": "refused"``)."""


class Provider:
    """Base class: a provider that has no files. Subclasses override ``request``."""

    owned = False  # made by the server (as_provider): the server closes it

    def request(self, filename: str, client_ip: str) -> bytes | concurrent.futures.Future | None:
        return MISS

    def attach_loop(self, call_soon: Callable[[Callable[[], object]], None] | None) -> None:
        """``call_soon`` of the loop that asks (None: that loop has ended)."""

    def close(self) -> None:
        """Release threads or processes; called by a server on a provider it made."""


class CallProvider(Provider):
    """A plain ``callable(filename, client_ip)`` run on a thread pool: it may read files or wait."""

    owned = True

    def __init__(self, fn: Callable[[str, str], object], workers: int = 4):
        self.fn = fn
        self.workers = workers
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def request(self, filename: str, client_ip: str) -> concurrent.futures.Future:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.workers, thread_name_prefix="tftp-build")
        return self._pool.submit(self._call, filename, client_ip)

    def _call(self, filename: str, client_ip: str) -> bytes | None:
        try:
            return normalise(self.fn(filename, client_ip))
        except FileNotFoundError:
            return MISS

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def as_provider(dynamic, workers: int = 4) -> Provider | None:
    """``dynamic`` as a Provider: itself when it is one, a CallProvider around a plain callable."""
    if dynamic is None or isinstance(dynamic, Provider):
        return dynamic
    if callable(dynamic):
        return CallProvider(dynamic, workers)
    raise TypeError("dynamic provider must be a hfcprov.tftp.provider.Provider or a callable "
                    "(filename, client_ip) -> bytes")


def chain(source: concurrent.futures.Future, target: concurrent.futures.Future) -> None:
    """Complete ``target`` as ``source`` completes (result or exception)."""

    def copy(f):
        try:
            target.set_result(f.result())
        except BaseException as err:  # noqa: BLE001 - handed to whoever waits on target
            target.set_exception(err)

    source.add_done_callback(copy)


def normalise(result) -> bytes | None:
    """What a callable returned, as bytes (or None for not found)."""
    if result is None or isinstance(result, bytes):
        return result
    if isinstance(result, (bytearray, memoryview)):
        return bytes(result)
    if hasattr(result, "read"):  # any file-like object; it needs no .name (tftpy's crash)
        try:
            data = result.read()
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        return data.encode() if isinstance(data, str) else bytes(data)
    if isinstance(result, str):
        return result.encode()
    raise TypeError(f"dynamic provider returned {type(result).__name__}, expected bytes or a file object")
