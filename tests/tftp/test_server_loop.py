"""The loop's own bookkeeping, driven by hand on a server that is bound but not running: when it
comes back for timers and the log, and how much it reads from the listening socket per turn."""

from __future__ import annotations

import io
import socket
import time

import pytest

from hfcprov.tftp import TftpServer
from hfcprov.tftp import protocol as P
from hfcprov.tftp.server import LOG_FLUSH_EVERY, TIMER_SLACK
from hfcprov.tftp.transfer import Transfer


@pytest.fixture
def idle_server(tmp_path):
    (tmp_path / "f.cm").write_bytes(bytes(3000))
    srv = TftpServer(tmp_path, port=0, log=io.StringIO(), timeout=1.0, retries=3)
    srv._bind()  # sockets and epoll, no loop thread: the test turns the crank
    yield srv
    srv._shutdown()


def _armed(srv, deadline: float, sent: list) -> Transfer:
    t = Transfer(("192.0.2.7", 1000 + len(srv._timers)), "f.cm", bytes(3000), P.Options(), 0.0, sent.append)
    t.begin(0.0)
    t.deadline = deadline
    srv._arm(t)
    return t


def test_timers_due_together_take_one_pass_and_fire_at_most_the_slack_late(idle_server):
    srv, sent = idle_server, []
    a = _armed(srv, 1.000, sent)
    b = _armed(srv, 1.004, sent)
    c = _armed(srv, 1.500, sent)
    assert srv._due == 1.000  # the earliest timer, exactly
    sent.clear()
    srv._housekeep(1.001)
    assert (a.retries, b.retries) == (1, 0)  # a resent; b not due yet
    # b is due 3 ms later: the loop comes back once for it and anything else due by the slack,
    # not once per timer
    assert srv._due == pytest.approx(1.001 + TIMER_SLACK)
    srv._housekeep(srv._due)
    assert b.retries == 1 and c.retries == 0
    assert srv._due == pytest.approx(1.500)


def test_a_finished_transfers_timer_does_not_bring_the_loop_back(idle_server):
    srv, sent = idle_server, []
    done = _armed(srv, 1.000, sent)
    live = _armed(srv, 3.000, sent)
    done.done = True  # it ended: its heap entry is stale
    srv._housekeep(0.5)
    assert srv._due == 3.000 and live.retries == 0
    assert not any(entry[2] is done for entry in srv._timers)


def test_a_log_line_is_flushed_within_the_flush_interval(idle_server):
    srv = idle_server
    srv.log.transfer({"client": "192.0.2.7:1", "file": "f.cm", "bytes": 0, "retries": 0, "result": "not-found"})
    now = time.monotonic()  # the log keeps the real clock's time of its last flush
    srv._logged(now)
    assert srv._due == pytest.approx(now + LOG_FLUSH_EVERY)
    srv._housekeep(now + LOG_FLUSH_EVERY)
    assert not srv.log.dirty
    assert srv._due == srv.log.summary_at  # nothing left but the summary


def test_a_quiet_turn_reads_one_request_and_a_busy_one_reads_them_all(idle_server):
    """A quiet turn (modems coming back one by one) reads one request: the level-triggered poll
    reports the next at once, and a read that finds the socket empty would cost an exception."""
    srv = idle_server
    clients = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(3)]
    try:
        for c in clients:
            c.sendto(P.encode_rrq("f.cm"), ("127.0.0.1", srv.port))  # on loopback: queued once sent
        srv._on_requests(1)
        assert len(srv._transfers) == 1
        srv._on_requests(50)
        assert len(srv._transfers) == 3
        for c in clients:
            assert P.parse(c.recv(1024)).block == 1  # each got its first block
    finally:
        for c in clients:
            c.close()
