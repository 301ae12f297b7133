"""The build worker pool: real processes, real pipes."""

from __future__ import annotations

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
