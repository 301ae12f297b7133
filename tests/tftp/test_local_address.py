"""Which address and sockets a transfer uses: the address its request was sent to (a server on the
any-address answers from it, as clients check), and sockets opened ahead of a storm."""

from __future__ import annotations

import io
import os
import socket
import subprocess

import pytest

from hfcprov.tftp import TftpServer, fetch_many
from hfcprov.tftp import protocol as P
from tests.support import has_ipv6_loopback, require_tool

from .helpers import records, wait_idle

# Every 127.x.y.z address is the host's own on Linux: three addresses of one host, as a headend's
# several interfaces (or a secondary address handed to modems as their TFTP server) are.
ASKED = ["127.0.0.2", "127.0.0.3", "127.0.0.2", "127.0.0.1", "127.0.0.3"]


def _first_answer(server_ip: str, port: int, name: str) -> tuple[bytes, tuple]:
    """RRQ ``name`` to ``server_ip``: the first datagram back and the address it came from (then ACKed
    to the end, so the transfer finishes and its socket is free for the next request)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as c:
        c.bind(("127.0.0.1", 0))
        c.settimeout(3)
        c.sendto(P.encode_rrq(name, {}), (server_ip, port))
        first, sender = c.recvfrom(2048)
        datagram = first
        while datagram[:2] == b"\0\3":  # DATA: acknowledge it; a short one was the last
            c.sendto(P.encode_ack(int.from_bytes(datagram[2:4], "big")), sender)
            if len(datagram) < 4 + 512:
                break
            datagram = c.recvfrom(2048)[0]
        return first, sender


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_a_server_on_the_any_address_answers_from_the_address_asked(root, host):
    """Each DATA and each ERROR comes from the address the client sent its RRQ to, including from a
    socket reused after a transfer to another address (before: the route's preferred source,
    127.0.0.1 here, which a client that asked 127.0.0.2 rejects)."""
    if host == "::" and not has_ipv6_loopback():
        pytest.skip("no IPv6 on this machine: no dual-stack socket")
    log = io.StringIO()
    with TftpServer(root, host=host, log=log) as srv:
        for ip in ASKED:
            first, sender = _first_answer(ip, srv.port, "two.cm")
            assert first[:4] == b"\0\3\0\1" and sender[0] == ip
            wait_idle(srv)
        for ip in ("127.0.0.3", "127.0.0.2"):
            first, sender = _first_answer(ip, srv.port, "nope.cm")
            assert first[:4] == b"\0\5\0\1" and sender[0] == ip  # ERROR file not found
    assert [r["result"] for r in records(log.getvalue())] == ["ok"] * len(ASKED) + ["not-found"] * 2


def test_tftp_hpa_gets_a_file_asked_of_another_address(root, tmp_path):
    """tftp-hpa takes DATA only from the address it asked: it timed out against a server on the
    any-address asked at 127.0.0.2."""
    tftp = require_tool("tftp", "tftp-hpa")
    with TftpServer(root, host="0.0.0.0", timeout=1.0) as srv:
        for ip in ("127.0.0.2", "127.0.0.3"):
            out = tmp_path / f"from-{ip}"
            r = subprocess.run([tftp, "-m", "binary", ip, str(srv.port), "-c", "get", "gold.cm", str(out)],
                               capture_output=True, text=True, timeout=30)
            assert out.exists() and out.read_bytes() == (root / "gold.cm").read_bytes(), r.stdout + r.stderr


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_spare_sockets_serve_a_storm_without_opening_one(root):
    """A server on one address opens its transfer sockets at start: a burst of transfers (up to that
    many at once) opens no descriptor, where each concurrent transfer used to open, bind and register
    one."""
    with TftpServer(root, spare_sockets=64) as srv:
        before = _fds()
        got = fetch_many("127.0.0.1", srv.port, ["gold.cm", "two.cm", "big.bin", "short.cm"] * 10)
        wait_idle(srv)
        assert all(f.ok for f in got)
        assert _fds() == before


def test_a_spare_socket_refuses_datagrams_until_a_transfer_takes_it(root):
    """A spare socket is closed to the world: a datagram to its port draws ICMP port unreachable (a
    connected sender reads ECONNREFUSED), as a transfer's socket does for any port but its client's."""
    with TftpServer(root, spare_sockets=4) as srv:
        ports = [sock.getsockname()[1] for sock in list(srv._idle.values())]
        assert len(ports) == 4
        for port in ports:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.connect(("127.0.0.1", port))
                s.settimeout(3)
                s.send(P.encode_ack(1))
                with pytest.raises(ConnectionRefusedError):
                    s.recv(100)
        got = fetch_many("127.0.0.1", srv.port, ["gold.cm"] * 4)
        assert all(f.ok and f.data == (root / "gold.cm").read_bytes() for f in got)


def test_a_request_whose_address_the_kernel_did_not_name_never_takes_a_socket_bound_elsewhere(root):
    """On the any-address an idle socket is bound to the address its transfer was asked at, and is
    kept for that address alone: a request without one (no IP_PKTINFO) gets a socket of its own, and the
    idle sockets stay filed once each (before, it could take a socket bound to 127.0.0.2 and leave it
    filed for 127.0.0.2's next request while in use)."""
    import threading

    with TftpServer(root, host="0.0.0.0") as srv:
        first, sender = _first_answer("127.0.0.2", srv.port, "two.cm")
        assert sender[0] == "127.0.0.2"
        wait_idle(srv)
        seen, done = {}, threading.Event()

        def in_loop():
            sock = srv._transfer_socket(("127.0.0.1", 9), None)
            seen["bound"] = sock.getsockname()[0]
            srv._close_socket(sock)
            seen["idle"] = sorted(srv._idle)
            seen["filed"] = sorted(fd for bucket in srv._idle_at.values() for fd in bucket)
            done.set()

        srv.call_soon(in_loop)
        assert done.wait(10)
    assert seen["bound"] != "127.0.0.2"
    assert seen["idle"] == seen["filed"] and seen["idle"]
