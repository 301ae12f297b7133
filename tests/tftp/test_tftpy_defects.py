"""One regression test per tftpy 0.8.7 defect named in issue 4, each against hfcprov's server."""

from __future__ import annotations

import io
import selectors
import socket
import threading
import time

import pytest

from hfcprov.tftp import TftpServer, fetch, fetch_many, raise_fd_limit
from hfcprov.tftp.protocol import encode_ack, encode_rrq
from hfcprov.udpstat import udp_drops

from .helpers import RawClient, abandoning, oack_options, wait_idle


def test_more_than_1024_open_sessions(root):
    """tftpy: select() raises 'filedescriptor out of range' past ~1,000 sessions."""
    n = 1200
    if raise_fd_limit(4 * n) < 3 * n:
        pytest.skip("RLIMIT_NOFILE too low for 1,200 client + 1,200 server sockets")
    with TftpServer(root, timeout=5) as srv:
        clients = []
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.sendto(encode_rrq("two.cm"), ("127.0.0.1", srv.port))
            clients.append(s)
        # Every session has sent DATA 1 and waits for its ACK: n sockets open in the server at once.
        first = []
        for s in clients:
            s.settimeout(5)
            data, addr = s.recvfrom(1000)
            assert data[:4] == b"\x00\x03\x00\x01"
            first.append(addr)
        assert srv.active == n
        # A session whose socket number is far above 1024 still works, and so does a new one.
        assert fetch("127.0.0.1", srv.port, "gold.cm") == (root / "gold.cm").read_bytes()
        for s, addr in zip(clients, first):
            for block in (1, 2, 3):
                s.sendto(encode_ack(block), addr)
                if block < 3:
                    assert s.recvfrom(1000)[0][:4] == b"\x00\x03" + bytes([0, block + 1])
        wait_idle(srv, 10)
        assert srv.active == 0 and srv.summary.ok == n + 1
        for s in clients:
            s.close()


def test_dynamic_file_object_without_name(root):
    """tftpy: a dyn_file_func result without .name crashes the server at session end."""

    class Nameless(io.RawIOBase):  # a file object that has read() and nothing else a file has
        def __init__(self, data):
            self._buf = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            return self._buf.readinto(b)

    payload = bytes(range(256)) * 9
    with TftpServer(root, dynamic=lambda name, ip: Nameless(payload) if name == "dyn.cm" else None) as srv:
        assert not hasattr(Nameless(b""), "name")
        for _ in range(3):
            assert fetch("127.0.0.1", srv.port, "dyn.cm") == payload
        assert fetch("127.0.0.1", srv.port, "gold.cm") == (root / "gold.cm").read_bytes()
        wait_idle(srv)
        assert srv.summary.ok == 4


def test_slow_dynamic_lookup_does_not_stall_other_transfers(root):
    """tftpy: dyn_file_func runs inside the single loop, so one slow lookup stalls everyone."""
    release, building = threading.Event(), threading.Event()

    def slow(name, ip):
        if name == "slow.cm":
            building.set()
            release.wait(60)
            return b"built slowly"
        return None

    with TftpServer(root, dynamic=slow) as srv:
        result = {}
        t = threading.Thread(target=lambda: result.update(slow=fetch("127.0.0.1", srv.port, "slow.cm", timeout=5)))
        t.start()
        assert building.wait(30)  # the slow build is now running on a worker
        got = fetch_many("127.0.0.1", srv.port, ["gold.cm", "big.bin", "cm/silver.cm", "absent.cm"])
        # all answered while the slow build is still held: they did not wait behind it
        assert [f.ok for f in got] == [True, True, True, False]
        assert t.is_alive() and not release.is_set()
        release.set()
        t.join(5)
        assert result["slow"] == b"built slowly"


def test_client_timeout_option_is_honoured(root):
    """tftpy: ignores the client's timeout option (RFC 2349) and uses its own."""
    with abandoning(TftpServer(root, timeout=4.0, retries=2)) as srv:
        c = RawClient(srv.port)
        c.rrq("gold.cm", {"timeout": 1})
        op, _, payload, _ = c.recv()
        assert op == 6 and oack_options(payload) == {"timeout": "1"}
        c.ack(0)
        op, block, _, t_first = c.recv()
        assert (op, block) == (3, 1)
        op, block, _, t_again = c.recv(timeout=3.5)  # not acknowledged: retransmitted after ~1 s, not 4 s
        assert (op, block) == (3, 1)
        assert 0.8 < t_again - t_first < 1.8
        c.close()


def test_windowsize_sends_a_window_per_ack_and_resumes_after_a_partial_ack(root):
    """tftpy: no windowsize (RFC 7440), one block per round trip."""
    with abandoning(TftpServer(root, timeout=3.0)) as srv:
        c = RawClient(srv.port)
        c.rrq("gold.cm", {"windowsize": 4})  # 7000 bytes: blocks 1..14
        op, _, payload, _ = c.recv()
        assert op == 6 and oack_options(payload) == {"windowsize": "4"}
        c.ack(0)
        assert [c.recv()[1] for _ in range(4)] == [1, 2, 3, 4]
        with pytest.raises(socket.timeout):
            c.recv(timeout=0.3)  # the window is full: the server waits for an ACK
        c.ack(2)  # blocks 3 and 4 "lost": the next window starts at 3
        assert [c.recv()[1] for _ in range(4)] == [3, 4, 5, 6]
        c.close()


@pytest.mark.parametrize("rcvbuf, expect_drops", [(16 << 20, False), (4096, True)])
def test_burst_of_requests_fits_the_receive_buffer(root, rcvbuf, expect_drops):
    """tftpy: the listening socket keeps the default SO_RCVBUF; a burst overflows it and modems retry.

    2,000 RRQs arrive back to back; the kernel's per-socket drop counter (/proc/net/udp) must
    stay at zero and every modem gets DATA 1 to its first RRQ. The small-buffer case shows the
    check catches the overflow.
    """
    n = 2000
    if raise_fd_limit(4 * n) < 3 * n:
        pytest.skip("RLIMIT_NOFILE too low")
    srv = TftpServer(root, timeout=1, retries=1, rcvbuf=rcvbuf).start()
    clients = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    try:
        rrq = encode_rrq("short.cm")
        for s in clients:
            s.bind(("127.0.0.1", 0))
            s.setblocking(False)
        for s in clients:
            s.sendto(rrq, ("127.0.0.1", srv.port))
        answered = _count_first_data(clients, within=3.0)
        drops = _udp_drops(srv.port)
    finally:
        srv.stop(graceful=False)
        for s in clients:
            s.close()
    if expect_drops:
        assert drops > 0 and answered < n
    else:
        assert drops == 0 and answered == n


def _count_first_data(clients, within: float) -> int:
    """How many of ``clients`` received DATA block 1 within ``within`` seconds."""
    sel = selectors.DefaultSelector()
    for s in clients:
        sel.register(s, selectors.EVENT_READ)
    got = 0
    deadline = time.monotonic() + within
    while got < len(clients) and time.monotonic() < deadline:
        for key, _ in sel.select(0.1):
            sel.unregister(key.fileobj)
            got += key.fileobj.recv(1000)[:4] == b"\x00\x03\x00\x01"
    sel.close()
    return got


def _udp_drops(port: int) -> int:
    drops = udp_drops(port)
    assert drops is not None, f"no UDP socket on port {port}"
    return drops
