"""Who is running a campaign: a lock row (pid, host, heartbeat) in the campaign's own database.

One run at a time writes a campaign's points. The lock lives in its own table of the
campaign database, so it travels with the file and needs nothing else on disk:

- ``RunLock.acquire`` takes it, or raises naming the holder (pid, host, since when). A holder
  whose process is gone (same host) or whose heartbeat stopped (another host) is stale and is
  taken over: that is how a run killed with ``kill -9`` is told from one still going.
- While held, a thread refreshes the heartbeat every ``HEARTBEAT`` seconds on its own connection,
  so a point that takes minutes does not make the run look dead.
- ``holder`` tells ``campaign status`` whether the points marked running are really running.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from hfcprov.lab.spec import CampaignError

HEARTBEAT = 2.0  # seconds between heartbeats
STALE = 15.0  # a heartbeat older than this means the holder is gone (another host, or a frozen process)

SCHEMA = """
CREATE TABLE IF NOT EXISTS run_lock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started REAL NOT NULL,
    heartbeat REAL NOT NULL,
    command TEXT
);
"""


@dataclass(frozen=True)
class Holder:
    pid: int
    host: str
    started: float
    heartbeat: float
    command: str | None

    @property
    def alive(self) -> bool:
        """The holding run still runs: its process exists (this host) and its heartbeat is fresh."""
        if self.host == socket.gethostname() and not _pid_alive(self.pid):
            return False
        return time.time() - self.heartbeat < STALE

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        return (f"pid {self.pid} on {self.host} since {since}, "
                f"last heartbeat {max(0.0, time.time() - self.heartbeat):.0f} s ago")


class LockHeld(CampaignError):
    """Another live run holds the campaign."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's
    try:  # a zombie (killed, not yet reaped by its parent) is not running
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.executescript(SCHEMA)
    return db


def holder(db: sqlite3.Connection) -> Holder | None:
    """The lock row of the open campaign database ``db``, if any (read only: no table, no holder)."""
    try:
        row = db.execute("SELECT pid, host, started, heartbeat, command FROM run_lock WHERE id = 1").fetchone()
    except sqlite3.OperationalError:  # no run_lock table: never run by a locking version
        return None
    return Holder(*row) if row else None


class RunLock:
    """The run lock of the campaign database at ``path``; a context manager."""

    def __init__(self, path: str | Path, command: str | None = None):
        self.path = Path(path)
        self.command = command
        self.pid = os.getpid()
        self._db: sqlite3.Connection | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def acquire(self) -> RunLock:
        db = _connect(self.path)
        now = time.time()
        try:
            db.execute("BEGIN IMMEDIATE")
            current = holder(db)
            if current is not None and current.pid != self.pid and current.alive:
                db.execute("ROLLBACK")
                raise LockHeld(f"{self.path}: another run holds this campaign: {current.describe()}"
                                    + (f" ({current.command})" if current.command else "")
                                    + "; wait for it to finish, or stop it first")
            db.execute("INSERT OR REPLACE INTO run_lock (id, pid, host, started, heartbeat, command) "
                       "VALUES (1, ?, ?, ?, ?, ?)", (self.pid, socket.gethostname(), now, now, self.command))
            db.execute("COMMIT")
        except BaseException:
            db.close()
            raise
        self._db = db
        self._thread = threading.Thread(target=self._beat, name="campaign-heartbeat", daemon=True)
        self._thread.start()
        return self

    def _beat(self) -> None:
        db = _connect(self.path)  # its own connection: sqlite3 objects stay in their thread
        try:
            while not self._stop.wait(HEARTBEAT):
                try:
                    db.execute("UPDATE run_lock SET heartbeat = ? WHERE id = 1 AND pid = ?", (time.time(), self.pid))
                except sqlite3.OperationalError:
                    pass  # busy past the timeout: the next beat tries again
        finally:
            db.close()

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._db is not None:
            try:
                self._db.execute("DELETE FROM run_lock WHERE id = 1 AND pid = ?", (self.pid,))
            finally:
                self._db.close()
                self._db = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
