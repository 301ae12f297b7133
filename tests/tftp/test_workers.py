"""The build worker pool: real processes, real pipes."""

from __future__ import annotations

import contextlib
import os
import signal
import threading

import pytest

from hfcprov.tftp.workers import WorkerDied, WorkerPool


def _pid_and_nice(_=None):
    return os.getpid(), os.nice(0)


def _echo(x):
    return x


def _boom(message):
    raise ValueError(message)


class _Unpicklable(Exception):
    def __init__(self, a, b):  # pickle rebuilds exceptions from .args: (a,) alone fails
        super().__init__(a)


def _unpicklable():
    raise _Unpicklable("no way back", 2)


def _cannot_be_rebuilt_here():
    raise ValueError("not here")


class _OneWay:
    """Pickles in the worker; rebuilding it in the caller raises."""

    def __reduce__(self):
        return (_cannot_be_rebuilt_here, ())


def _one_way():
    return _OneWay()


def _end_at_start():
    os._exit(3)


def _held(path):
    """A build that waits for the test's word: it tells the test its worker's pid over the UNIX socket
    ``path``, then returns 1 once the test answers (or fails when the test goes away)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall(str(os.getpid()).encode())
        if s.recv(1) != b"1":
            raise RuntimeError("the test did not release this build")
    return 1


@pytest.fixture
def pool():
    p = WorkerPool(2, niceness=5)
    yield p
    p.shutdown()


def test_results_and_errors_come_back(pool):
    assert [f.result(10) for f in [pool.submit(_echo, i) for i in range(50)]] == list(range(50))
    with pytest.raises(ValueError, match="bad rate"):
        pool.submit(_boom, "bad rate").result(10)
    with pytest.raises(RuntimeError, match="_Unpicklable: no way back"):  # its text, not a dead reader
        pool.submit(_unpicklable).result(10)
    assert pool.submit(_echo, "still here").result(10) == "still here"


def test_broadcast_reaches_every_worker_and_they_run_niced(pool):
    answers = [f.result(10) for f in pool.broadcast(_pid_and_nice)]
    assert len({pid for pid, _ in answers}) == 2
    assert {nice for _, nice in answers} == {os.nice(0) + 5}


def test_deliver_completes_futures_in_the_callers_loop(pool):
    calls, ran_in, handed = [], [], threading.Event()

    def call_soon(fn):
        calls.append(fn)
        handed.set()

    f = pool.submit(_echo, 7, deliver=call_soon)
    f.add_done_callback(lambda _: ran_in.append(threading.current_thread()))
    assert handed.wait(30)
    assert not f.done()  # handed over, not completed by the pool's reader
    for fn in calls:
        fn()
    assert f.result(0) == 7 and ran_in == [threading.current_thread()]


def test_a_worker_that_dies_fails_its_builds_and_breaks_the_pool(pool, tmp_path):
    import socket

    (pid, _), (other, _) = [f.result(10) for f in pool.broadcast(_pid_and_nice)]
    gate = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    gate.bind(str(tmp_path / "gate"))
    gate.listen(8)
    gate.settimeout(60)
    held = [pool.submit(_held, str(tmp_path / "gate")) for _ in range(4)]  # two per worker: none can finish
    os.kill(pid, signal.SIGKILL)
    released = 0
    with gate:
        while released < 2:  # the other worker's two builds, one after the other, each when it asks
            conn, _ = gate.accept()
            with conn:  # the killed worker's may come too, or say nothing: it died mid-build
                if conn.recv(16) == str(other).encode():
                    conn.sendall(b"1")
                    released += 1
    failed, done = [], []
    for f in held:
        try:
            done.append(f.result(10))  # the other worker's builds finish as usual
        except WorkerDied as err:
            failed.append(str(err))
    assert len(failed) == 2 and all(f"build worker {pid} ended" in m for m in failed) and done == [1, 1]
    assert pool.broken
    with pytest.raises(RuntimeError, match="ended"):
        pool.submit(_echo, 1)


def test_a_reply_the_caller_cannot_read_fails_that_workers_builds_instead_of_hanging(pool):
    f = pool.submit(_one_way)
    with pytest.raises(WorkerDied, match="unreadable reply .*ValueError: not here"):
        f.result(10)
    assert pool.broken  # its owner starts a fresh pool for the next build


def test_build_workers_gap_below_the_server_and_their_default_count():
    from hfcprov.tftp.dynamic import default_processes, worker_niceness

    assert worker_niceness(None, server_nice=10) == 0  # a server below ordinary priority: the same as it
    assert worker_niceness(None, server_nice=0) == 0
    assert worker_niceness(None, server_nice=-10) == 10  # a raised server: workers back at ordinary priority
    assert worker_niceness(3, server_nice=-10) == 3  # the YAML's niceness: a fixed gap, as asked
    assert default_processes() == max(1, min((os.cpu_count() or 1) - 1, 4))  # the loop keeps a core


@contextlib.contextmanager
def _one_busy_worker(tmp_path):
    """A pool of one worker, busy in a build the test holds: yields (pool, held build, release)."""
    import socket

    pool = WorkerPool(1)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gate:
            gate.bind(str(tmp_path / "gate"))
            gate.listen(1)
            gate.settimeout(60)
            held = pool.submit(_held, str(tmp_path / "gate"))
            conn, _ = gate.accept()  # the worker is in the held build
            with conn:
                conn.recv(16)
                yield pool, held, lambda: conn.sendall(b"1")
    finally:
        pool.shutdown()


def test_builds_asked_while_a_worker_is_busy_wait_here_and_go_to_it_together(tmp_path):
    """A cold storm's builds behind a busy worker cost one pipe message per hand-over, not one each:
    they wait in this process while the worker builds, and all come back, in order, once it is free."""
    from hfcprov.tftp import workers

    with _one_busy_worker(tmp_path) as (pool, held, release):
        later = [pool.submit(_echo, i) for i in range(workers.HANDOVER + 5)]
        worker = pool._workers[0]
        assert worker.sent == 1 and len(worker.queued) == workers.HANDOVER + 5  # none written yet
        release()
        assert held.result(30) == 1
        assert [f.result(30) for f in later] == list(range(workers.HANDOVER + 5))
        assert worker.sent == 0 and not worker.queued


def _big(n, _padding=""):
    return bytes(n)


def test_a_storm_of_large_builds_and_results_never_jams_the_pipes(tmp_path):
    """Builds whose arguments and results are larger than a pipe holds, queued behind a busy worker: the
    reader never writes to a worker that is itself waiting for the reader to read its results."""
    with _one_busy_worker(tmp_path) as (pool, held, release):
        futures = [pool.submit(_big, 400_000 + i, "x" * 30_000) for i in range(300)]
        release()
        assert held.result(60) == 1
        assert [len(f.result(60)) for f in futures] == [400_000 + i for i in range(300)]


def test_a_worker_that_ends_before_it_is_ready_breaks_the_pool_without_a_traceback():
    pool = WorkerPool(1, initializer=_end_at_start, start_timeout=30)
    try:
        assert pool.broken == "a build worker did not start"
        with pytest.raises(RuntimeError, match="did not start"):
            pool.submit(_echo, 1)
    finally:
        pool.shutdown()
