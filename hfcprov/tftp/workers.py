"""Worker processes for dynamic config files: one pipe per worker, one reader thread.

Why not ``concurrent.futures.ProcessPoolExecutor``: each task goes through a manager
thread and a queue-feeder thread in the calling process, three threads trading the GIL
with the TFTP loop for every build. In a cold boot storm that cost the server process
more than the builds cost the workers. Here ``submit`` writes the call into the least busy
worker's pipe from the caller's own thread, and a single reader thread, asleep in
``wait()`` until a result arrives, completes the futures, or hands them to the event loop
that asked (``deliver``), so their callbacks run there and do not trade the GIL with it.

A worker busy with builds is not written to at every ``submit``: further builds wait in this
process, and the reader hands them over together (up to ``HANDOVER``) when all the worker's results
are back, so a cold storm's 300 builds cost the loop, the reader and the worker a few dozen pipe
messages and wake-ups instead of 300 each; the worker was busy, so none of them starts later.

A worker that dies (the OOM killer...) or sends a reply this process cannot read fails the
builds it held with ``WorkerDied``, and the pool refuses further work; its owner starts a
new one.
"""

from __future__ import annotations

import concurrent.futures
import functools
import itertools
import multiprocessing
import os
import pickle
import select
import signal
import threading
import time

BATCH = 16  # results a busy worker sends back in one message, at most
HANDOVER = 64  # builds handed to a busy worker in one message, at most (a bulk build's stage: 64 rows)


class WorkerDied(RuntimeError):
    """A build worker process ended with builds in hand."""


class _Worker:
    __slots__ = ("conn", "jobs", "process", "queued", "sent")

    def __init__(self, process, conn):
        self.process = process
        self.conn = conn
        self.jobs: dict[int, tuple] = {}  # job -> (future, deliver or None), sent or queued
        self.queued: list[tuple] = []  # (job, fn, args) not written yet: the worker is busy
        self.sent = 0  # jobs written to the worker whose results have not come back


class WorkerPool:
    """``processes`` worker processes running ``fn(*args)`` for ``submit``; ``preload``: modules the
    forkserver imports once, so each worker starts warm; ``initializer`` runs in each worker before
    the pool is returned, so the first build does not wait for a worker to start; ``niceness``: how
    much lower than the calling process the workers run (``os.nice``)."""

    def __init__(self, processes: int, preload: tuple[str, ...] = (), initializer=None, start_timeout: float = 60,
                 niceness: int = 0):
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        ctx = multiprocessing.get_context(method)  # not fork: the server process has threads
        if method == "forkserver" and preload:
            ctx.set_forkserver_preload(list(preload))
        self.processes = processes
        self.niceness = niceness
        self.broken: str | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count()
        self._workers: list[_Worker] = []
        self._closed = False
        for _ in range(processes):
            ours, theirs = ctx.Pipe(duplex=True)
            proc = ctx.Process(target=_serve, args=(theirs, initializer, niceness), daemon=True, name="hfcprov-build")
            proc.start()
            theirs.close()
            self._workers.append(_Worker(proc, ours))
        deadline = time.monotonic() + start_timeout
        for w in self._workers:  # each says "ready" once its imports and initializer are done
            try:
                ready = w.conn.poll(max(0.0, deadline - time.monotonic())) and _recv(w.conn) == "ready"
            except (EOFError, OSError):  # it ended before saying so (its initializer failed, or it was killed)
                ready = False
            if not ready:
                self.broken = "a build worker did not start"
                break
        self._stop_r, self._stop_w = ctx.Pipe(duplex=False)
        self._reader = threading.Thread(target=self._read, name="build-results", daemon=True)
        self._reader.start()

    def submit(self, fn, *args, deliver=None) -> concurrent.futures.Future:
        """``fn(*args)`` in a worker; ``fn`` and ``args`` must pickle (a module-level function).

        ``deliver``: a thread-safe ``call_soon(callable)`` of an event loop; the future is then
        completed (and its callbacks run) in that loop's thread instead of the pool's reader."""
        with self._lock:  # one writer per pipe at a time; the write itself releases the GIL
            return self._send(min(self._workers, key=lambda w: len(w.jobs)), fn, args, deliver)

    def broadcast(self, fn, *args) -> list[concurrent.futures.Future]:
        """``fn(*args)`` once in every worker (to load something each of them will need)."""
        with self._lock:
            return [self._send(w, fn, args, None) for w in self._workers]

    def _send(self, w: _Worker, fn, args, deliver) -> concurrent.futures.Future:
        """Called with ``_lock`` held: the job is written now if the worker is idle, else queued for the
        reader to hand over with the next ones when results come back (``_hand_over``)."""
        if self.broken or self._closed:
            raise RuntimeError(self.broken or "worker pool is shut down")
        fut = concurrent.futures.Future()
        job = next(self._ids)
        w.jobs[job] = (fut, deliver)
        if w.sent:
            w.queued.append((job, fn, args))
            return fut
        w.sent = 1
        try:  # the worker is idle and its pipe empty: nothing else writes to it until a result comes back
            w.conn.send_bytes(pickle.dumps([(job, fn, args)], pickle.HIGHEST_PROTOCOL))
        except (OSError, ValueError) as err:
            del w.jobs[job]
            w.sent = 0
            self._break(f"build worker pipe: {err}")
            raise RuntimeError(self.broken) from None
        return fut

    def _hand_over(self, w: _Worker, done: int) -> None:
        """The reader got ``done`` results from ``w``: once it has all of them back, the builds queued
        meanwhile go to it together. Only then: the worker, done, is reading its pipe and writes nothing,
        so this write cannot wait on a worker that waits on us to read its results (both pipes full)."""
        with self._lock:
            w.sent -= done
            if w.sent or not w.queued or self._closed:
                return
            batch, w.queued = w.queued[:HANDOVER], w.queued[HANDOVER:]
            w.sent = len(batch)
        try:  # outside the lock (a large message waits for the worker to read it); only we write now
            w.conn.send_bytes(pickle.dumps(batch, pickle.HIGHEST_PROTOCOL))
        except (OSError, ValueError) as err:
            self._died(w, f"build worker pipe: {err}")

    def _read(self) -> None:
        # one poll object for the pool's life (multiprocessing.connection.wait builds a selector per call)
        workers = {w.conn.fileno(): w for w in self._workers}
        waiting = select.poll()
        for fd in (*workers, self._stop_r.fileno()):
            waiting.register(fd, select.POLLIN)
        while workers:
            for fd, _ in waiting.poll():
                w = workers.get(fd)
                if w is None:
                    return  # the stop pipe: shutdown
                try:
                    replies = _recv(w.conn)
                except (EOFError, OSError):
                    del workers[fd]
                    waiting.unregister(fd)
                    self._died(w, f"build worker {w.process.pid} ended (exit code {w.process.exitcode})")
                    continue
                except Exception as err:  # noqa: BLE001 - its builds cannot be told apart: all of them fail
                    del workers[fd]
                    waiting.unregister(fd)
                    self._died(w, f"unreadable reply from build worker {w.process.pid}: {type(err).__name__}: {err}")
                    continue
                self._hand_over(w, len(replies))
                by_loop: dict = {}
                for job, ok, value in replies:
                    fut, deliver = w.jobs.pop(job, (None, None))
                    if fut is None:
                        continue
                    if deliver is None:
                        _settle(((fut, ok, value),))
                    else:
                        by_loop.setdefault(deliver, []).append((fut, ok, value))
                for deliver, settled in by_loop.items():  # one hand-over per loop and message
                    deliver(functools.partial(_settle, settled))

    def _died(self, w: _Worker, why: str) -> None:
        """The worker is lost to us: the builds it held fail with ``why`` and the pool takes no more."""
        with self._lock:
            if self._closed:
                return
            jobs, w.jobs, w.queued = w.jobs, {}, []
            self._break(why)
        for fut, _ in jobs.values():
            fut.set_exception(WorkerDied(why))

    def _break(self, why: str) -> None:
        self.broken = self.broken or why

    def shutdown(self) -> None:
        """Stop the workers and the reader; builds still in hand fail with "worker pool is shut down"."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            jobs = [f for w in self._workers for f, _ in w.jobs.values()]
            for w in self._workers:
                w.jobs, w.queued = {}, []
                try:
                    w.conn.send_bytes(pickle.dumps(None))
                except (OSError, ValueError):
                    pass
        for fut in jobs:
            fut.set_exception(RuntimeError("worker pool is shut down"))
        try:
            self._stop_w.send(None)
        except (OSError, ValueError):
            pass
        if threading.current_thread() is not self._reader:
            self._reader.join(5)
        for w in self._workers:
            w.process.join(5)
            if w.process.is_alive():
                w.process.kill()
                w.process.join()
            w.conn.close()
        self._stop_r.close()
        self._stop_w.close()


def _settle(settled) -> None:
    for fut, ok, value in settled:
        (fut.set_result if ok else fut.set_exception)(value)


def _recv(conn):
    # plain pickle: only data crosses (multiprocessing's own pickler sets up reducers for each message)
    return pickle.loads(conn.recv_bytes())


def _serve(conn, initializer, niceness: int = 0) -> None:
    """A worker: run each (job, fn, args) of each list it is sent and send back (job, ok, result or error)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the server, which stops us
    if niceness:
        os.nice(niceness)  # relative to the process that started us
    if initializer is not None:
        initializer()
    conn.send_bytes(pickle.dumps("ready"))
    waiting = select.poll()  # is more work queued? (conn.poll builds a selector at every call)
    waiting.register(conn.fileno(), select.POLLIN)
    replies = []
    while True:
        try:
            msg = _recv(conn)
        except (EOFError, OSError):
            return
        if msg is None:
            return
        for i, (job, fn, args) in enumerate(msg):
            try:
                replies.append((job, True, fn(*args)))
            except BaseException as err:  # noqa: BLE001 - the build's error is the caller's answer
                replies.append((job, False, _portable(err)))
            # While more work waits, results go back together: one wake-up of the caller's reader for
            # several builds. Never more than BATCH, so the first modems of a storm are not held back.
            if len(replies) >= BATCH or i == len(msg) - 1 and not waiting.poll(0):
                conn.send_bytes(pickle.dumps(replies, pickle.HIGHEST_PROTOCOL))
                replies = []


def _portable(err: BaseException) -> BaseException:
    """The error itself if it survives pickling, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:  # noqa: BLE001 - any exception class that cannot be rebuilt
        return RuntimeError(f"{type(err).__name__}: {err}")
