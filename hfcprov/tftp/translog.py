"""Structured transfer log: one JSON line per transfer, and a summary line.

A record is ``{"event": "transfer", "client", "file", "bytes", "duration",
"retries", "result", ...}``; ``result`` is ``ok`` or what went wrong
(``not-found``, ``access-violation``, ``refused-write``, ``timeout``,
``client-error``, ``generate-error``, ``bad-request``, ``refused``: a provider would not
give that file to that requester, ``detail`` says why). The summary
(``"event": "summary"``) is written every ``interval`` seconds while transfers
happen and once on exit.
"""

from __future__ import annotations

import json
import math
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

_ENCODER = json.JSONEncoder(separators=(",", ":"))  # one for every line: json.dumps makes one per call
_quote = json.encoder.encode_basestring_ascii  # a JSON string literal, in C


@dataclass
class Summary:
    """Counters over the server's life; ``results`` counts transfers by result."""

    started: float = field(default_factory=time.time)
    transfers: int = 0
    bytes: int = 0
    retries: int = 0
    dropped: int = 0  # requests not even answered (no file descriptor left, shutting down)
    results: Counter = field(default_factory=Counter)

    @property
    def ok(self) -> int:
        return self.results["ok"]

    @property
    def failed(self) -> int:
        return self.transfers - self.ok

    def as_record(self) -> dict:
        return {"event": "summary", "uptime": round(time.time() - self.started, 3), "transfers": self.transfers,
                "ok": self.ok, "failed": self.failed, "bytes": self.bytes, "retries": self.retries,
                "dropped": self.dropped, "results": dict(self.results)}


class TransferLog:
    """Where records go: a file path (appended), an open text stream, or nowhere (None)."""

    def __init__(self, target: str | Path | IO[str] | None = None, interval: float = 60.0):
        self._own = False
        if target is None:
            self._stream = None
        elif isinstance(target, (str, Path)):
            self._stream = sys.stdout if str(target) == "-" else open(target, "a")
            self._own = self._stream is not sys.stdout
        else:
            self._stream = target
        self.interval = interval
        self.summary = Summary()
        self._last_summary = time.monotonic()
        self._since_summary = 0
        self.summary_at = math.inf  # monotonic time the next summary is due (inf: nothing to summarise)
        self._lock = threading.Lock()
        self.dirty = False
        self.flushed = time.monotonic()  # when the stream was last flushed

    def transfer(self, record: dict) -> None:
        self._count(record["result"], record.get("bytes", 0), record.get("retries", 0))
        self._write({"event": "transfer", **record})

    def transfer_done(self, client: str, file: str, delivered: int, size: int, duration: float, retries: int,
                      result: str, blksize: int, windowsize: int) -> None:
        """``transfer`` for a transfer that ran: the same record, written without a dict or an
        encoder (in a storm this line was the largest part of the loop's Python time per transfer)."""
        self._count(result, delivered, retries)
        if self._stream is None:
            return
        line = (f'{{"event":"transfer","time":{time.time():.3f},"client":{_quote(client)},"file":{_quote(file)},'
                f'"bytes":{delivered},"size":{size},"duration":{duration:.6f},"retries":{retries},'
                f'"result":{_quote(result)},"blksize":{blksize},"windowsize":{windowsize}}}\n')
        with self._lock:
            if self._stream is not None:
                self._stream.write(line)
                self.dirty = True

    def _count(self, result: str, delivered: int, retries: int) -> None:
        s = self.summary
        s.transfers += 1
        s.bytes += delivered
        s.retries += retries
        s.results[result] += 1
        self._since_summary += 1
        if self.summary_at == math.inf:
            self.summary_at = self._last_summary + self.interval

    def event(self, name: str, **fields) -> None:
        """A server event that is not a transfer (e.g. ``warm``: every dynamic file rendered)."""
        self._write({"event": name, "time": round(time.time(), 3), **fields})
        self.flush()

    def error(self, message: str, **fields) -> None:
        """A problem that is not one transfer (e.g. out of file descriptors)."""
        self._write({"event": "error", "time": round(time.time(), 3), "message": message, **fields})

    def tick(self, now: float | None = None) -> None:
        """Periodic summary, only when something happened since the last one."""
        if (time.monotonic() if now is None else now) >= self.summary_at:
            self.write_summary()

    def write_summary(self) -> None:
        self._last_summary = time.monotonic()
        self._since_summary = 0
        self.summary_at = math.inf
        self._write(self.summary.as_record())
        self.flush()

    def close(self) -> None:
        self.flush()
        if self._own and self._stream is not None:
            self._stream.close()
        self._stream = None

    def _write(self, record: dict) -> None:
        line = _ENCODER.encode(record) + "\n"
        with self._lock:  # the loop thread and the warm-up thread both write
            if self._stream is not None:
                self._stream.write(line)
                self.dirty = True

    def flush(self) -> None:
        """Push buffered lines out; the server calls this every few tens of milliseconds while lines
        wait, not once per transfer."""
        if not self.dirty:  # read without the lock: a line written meanwhile is flushed next turn
            return
        self.flushed = time.monotonic()
        with self._lock:
            if self.dirty and self._stream is not None:
                self._stream.flush()
            self.dirty = False
