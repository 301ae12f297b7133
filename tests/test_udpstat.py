"""The /proc/net/udp reader, on a real socket of this test."""

import socket
import sys

import pytest

from hfcprov.udpstat import udp_drops, udp_sockets

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux /proc/net/udp")


def test_a_bound_socket_is_listed_with_its_address_and_no_drops():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert ("127.0.0.1", port) in {(u.address, u.port) for u in udp_sockets()}
        assert udp_drops(port) == 0
    assert udp_drops(port) is None


def test_a_full_receive_buffer_shows_as_drops():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        rx.bind(("127.0.0.1", 0))
        for _ in range(200):  # never read: the buffer fills and the kernel drops the rest
            tx.sendto(b"x" * 1000, rx.getsockname())
        assert udp_drops(rx.getsockname()[1]) > 0


def test_no_table_means_no_sockets(tmp_path):
    assert udp_sockets(tmp_path / "absent") == []


def test_port_bound_tells_a_held_port_from_a_free_one():
    from hfcprov.udpstat import port_bound

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        assert port_bound(port)
    assert not port_bound(port)
