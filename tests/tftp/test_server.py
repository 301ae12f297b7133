"""The server against real clients on real loopback sockets: content, refusals, options, log."""

from __future__ import annotations

import io
import os
import threading

import pytest
import tftpy

from hfcprov.tftp import TftpServer, fetch, fetch_many
from hfcprov.tftp.protocol import TftpErrors
from tests.support import wait_for

from .conftest import SIZES
from .helpers import RawClient, oack_options, records, wait_idle


def _tftpy_get(port, name, options=None, timeout=2):
    out = io.BytesIO()
    tftpy.TftpClient("127.0.0.1", port, options=options or {}).download(name, out, timeout=timeout)
    return out.getvalue()


@pytest.mark.parametrize("name", sorted(SIZES) + ["cm/silver.cm", "alias.cm"])
def test_tftpy_client_gets_identical_bytes(server, root, name):
    assert _tftpy_get(server.port, name) == (root / name).read_bytes()


@pytest.mark.parametrize("options", [{"blksize": 1428}, {"blksize": 8}, {"blksize": 65464}, {"tsize": 0}])
def test_tftpy_client_with_options(server, root, options):
    assert _tftpy_get(server.port, "gold.cm", options) == (root / "gold.cm").read_bytes()


@pytest.mark.parametrize("options", [{}, {"windowsize": 8}, {"blksize": 1024, "windowsize": 16},
                                     {"blksize": 512, "windowsize": 3, "tsize": 0}])
def test_own_client_all_sizes(server, root, options):
    names = sorted(SIZES)
    got = fetch_many("127.0.0.1", server.port, [(n, options) for n in names])
    for name, f in zip(names, got):
        assert f.ok, f.error
        assert f.data == (root / name).read_bytes(), name


def test_oack_reports_negotiated_values(server, root):
    c = RawClient(server.port)
    c.rrq("gold.cm", {"blksize": 100000, "tsize": 0, "windowsize": 4, "timeout": 2, "bogus": 7})
    op, _, payload, _ = c.recv()
    assert op == 6
    # blksize clamps to the RFC 2348 maximum, tsize is the file size, unknown options are left out.
    assert oack_options(payload) == {"blksize": "65464", "tsize": "7000", "windowsize": "4", "timeout": "2"}
    c.close()


def test_write_request_is_refused_and_nothing_written(server, root, tmp_path):
    src = tmp_path / "upload.cm"
    src.write_bytes(b"x" * 1000)
    with pytest.raises(tftpy.TftpException):
        tftpy.TftpClient("127.0.0.1", server.port).upload("new.cm", str(src), timeout=1)
    assert not (root / "new.cm").exists()
    c = RawClient(server.port)
    c.wrq("gold.cm")
    op, code, payload, _ = c.recv()
    assert (op, code) == (5, TftpErrors.AccessViolation)
    assert b"read-only" in payload
    c.close()


@pytest.mark.parametrize("name", ["../secret.txt", "cm/../../secret.txt", "/etc/passwd", "escape.cm", "..\\secret.txt"])
def test_traversal_is_an_access_violation(server, name):
    (f,) = fetch_many("127.0.0.1", server.port, [name])
    assert not f.ok
    assert f.error_code == TftpErrors.AccessViolation, f.error


def test_absolute_path_inside_root_is_served(server, root):
    assert fetch("127.0.0.1", server.port, f"{root}/gold.cm") == (root / "gold.cm").read_bytes()


def test_missing_file_and_directory_are_not_found(server):
    for name in ("nope.cm", "cm"):
        (f,) = fetch_many("127.0.0.1", server.port, [name])
        assert f.error_code == TftpErrors.FileNotFound, f.error


def test_netascii_mode_converts_line_ends(server):
    assert fetch("127.0.0.1", server.port, "text.txt", mode="netascii") == \
        b"line one\r\nline two\r\0\r\nend\r\n"


def test_vanished_client_does_not_block_others(root):
    log = io.StringIO()
    with TftpServer(root, log=log, timeout=1.0, retries=1) as srv:
        ghost = RawClient(srv.port)
        ghost.rrq("big.bin")
        assert ghost.recv()[0] == 3  # got DATA 1, then disappears without an ACK
        ghost.close()
        got = fetch_many("127.0.0.1", srv.port, ["gold.cm"] * 20 + ["big.bin"])
        assert all(f.ok for f in got)
        wait_idle(srv)
    results = [r["result"] for r in records(log.getvalue())]
    # the others were all served while the ghost's transfer waited out its timeouts (2 s)
    assert results == ["ok"] * 21 + ["timeout"]


def test_resent_final_block_then_unconfirmed(root):
    """A modem that got the last block but whose final ACK is lost is logged as 'unconfirmed', not 'ok'."""
    log = io.StringIO()
    with TftpServer(root, log=log, timeout=0.2, retries=1) as srv:
        c = RawClient(srv.port)
        c.rrq("short.cm")
        op, block, payload, _ = c.recv()
        assert (op, block, len(payload)) == (3, 1, 511)
        op, block, _, _ = c.recv()  # the same final block again: the server retransmits on timeout
        assert (op, block) == (3, 1)
        c.close()
    (rec,) = records(log.getvalue())
    assert rec["result"] == "unconfirmed" and rec["retries"] >= 1


def test_datagram_from_another_port_is_refused_and_leaves_the_transfer_alone(root):
    """RFC 1350: a datagram to a transfer's TID from any other port is not the client's; its sender is
    told (the transfer's socket is connected, so the kernel answers ICMP port unreachable, which a
    connected sender reads as ECONNREFUSED) and the transfer goes on undisturbed. An ACK or an ERROR
    from the stranger, taken as the client's, would move or end the transfer."""
    import socket

    from hfcprov.tftp import protocol as P

    log = io.StringIO()
    with TftpServer(root, log=log) as srv:
        c = RawClient(srv.port)
        c.rrq("two.cm")
        op, block, first, _ = c.recv()
        assert (op, block) == (3, 1)
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stranger.bind(("127.0.0.1", 0))
        stranger.connect(("127.0.0.1", c.tid))
        stranger.settimeout(3)
        for datagram in (P.encode_ack(1), P.encode_ack(2), P.encode_error(0, "not your client")):
            stranger.send(datagram)
            with pytest.raises(ConnectionRefusedError):  # each one refused
                stranger.recv(100)
        stranger.close()
        got = [first]
        for block in (1, 2):
            c.ack(block)
            op, number, payload, _ = c.recv()
            assert (op, number) == (3, block + 1)  # the next block, once: the stranger's ACKs moved nothing
            got.append(payload)
        c.ack(3)
        wait_idle(srv)
        c.close()
    assert b"".join(got) == (root / "two.cm").read_bytes()
    (rec,) = records(log.getvalue())
    assert rec["result"] == "ok" and rec["retries"] == 0


def test_block_numbers_roll_over(server, root):
    # 100,000 bytes in 8-byte blocks is 12,501 blocks; with blksize 1 it is not allowed, so use a
    # file big enough for > 65,535 blocks of 8 bytes.
    big = root / "rollover.bin"
    big.write_bytes(bytes(range(256)) * 2100)  # 537,600 bytes = 67,201 blocks of 8
    try:
        data = fetch("127.0.0.1", server.port, "rollover.bin", {"blksize": 8, "windowsize": 64}, timeout=2)
        assert data == big.read_bytes()
    finally:
        big.unlink()


def test_log_has_one_json_line_per_transfer_and_a_summary(root):
    log = io.StringIO()
    with TftpServer(root, log=log) as srv:
        fetch("127.0.0.1", srv.port, "gold.cm", {"blksize": 1024})
        fetch_many("127.0.0.1", srv.port, ["nope.cm", "../x"])
    recs = records(log.getvalue())
    assert [r["result"] for r in recs] == ["ok", "not-found", "access-violation"]
    ok = recs[0]
    assert ok["file"] == "gold.cm" and ok["bytes"] == 7000 and ok["blksize"] == 1024 and ok["retries"] == 0
    assert ok["client"].startswith("127.0.0.1:") and ok["duration"] >= 0
    (summary,) = records(log.getvalue(), "summary")
    assert summary["transfers"] == 3 and summary["ok"] == 1 and summary["failed"] == 2


def test_graceful_stop_finishes_in_flight_transfer(root):
    log = io.StringIO()
    srv = TftpServer(root, log=log, timeout=0.5).start()
    c = RawClient(srv.port)
    c.rrq("two.cm")
    assert c.recv()[:2] == (3, 1)
    stopper = threading.Thread(target=srv.stop)
    stopper.start()
    wait_for(lambda: srv.stopping, 30, "the stop to be asked for")
    assert stopper.is_alive()  # waits for our transfer
    c.ack(1)
    assert c.recv()[:2] == (3, 2)
    c.ack(2)
    assert c.recv()[:2] == (3, 3)
    c.ack(3)
    stopper.join(3)
    assert not stopper.is_alive()
    assert [r["result"] for r in records(log.getvalue())] == ["ok"]
    c.close()


def test_start_reports_bound_port_and_refuses_bad_root(tmp_path):
    import socket

    from hfcprov.tftp import TftpServerError

    with pytest.raises(TftpServerError, match="not a folder"):
        TftpServer(tmp_path / "missing")
    with TftpServer(tmp_path) as srv:
        assert srv.port > 0
    holder = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    holder.bind(("127.0.0.1", 0))  # no SO_REUSEADDR: the port is taken for good
    try:
        with pytest.raises(TftpServerError, match="cannot listen on 127.0.0.1"):
            TftpServer(tmp_path, port=holder.getsockname()[1]).start()
    finally:
        holder.close()


def test_a_build_finished_during_a_burst_starts_before_the_next_request(tmp_path):
    """In a storm the listening socket does not empty for a while: a dynamic file that finished
    building meanwhile starts its transfer at once, not after the whole intake round."""
    order = []

    from hfcprov.tftp.provider import Provider as Base

    class Provider(Base):
        srv = None

        def request(self, filename, client_ip):
            order.append(filename)
            if filename == "a.cm":  # another modem's build completes while a.cm is being asked for
                self.srv.call_soon(lambda: order.append("built"))
            return b"x"

    provider = Provider()
    srv = provider.srv = TftpServer(tmp_path, dynamic=provider)
    srv._bind()  # the loop's own steps, driven here so the order is certain
    try:
        modems = [RawClient(srv.port) for _ in range(3)]
        for modem, name in zip(modems, ("a.cm", "b.cm", "c.cm")):
            modem.rrq(name)  # queued on the listening socket as sendto returns (loopback delivers in the call)
        srv._on_requests()
        assert order == ["a.cm", "built", "b.cm", "c.cm"]
        for modem in modems:
            modem.close()
    finally:
        srv._shutdown()


def test_a_transfer_socket_serves_a_bounded_number_of_transfers(root):
    """A finished transfer's socket serves the next ones, SOCKET_TRANSFERS in all; then it is closed and a
    fresh one takes over (a socket that has served many wakes the loop more dearly)."""
    from collections import Counter

    from hfcprov.tftp.server import SOCKET_TRANSFERS

    tids = []
    with TftpServer(root, spare_sockets=0) as srv:
        for _ in range(3 * SOCKET_TRANSFERS):
            c = RawClient(srv.port)
            try:
                c.rrq("short.cm")
                opcode, block, payload, _ = c.recv()
                assert (opcode, block, len(payload)) == (3, 1, 511)
                tids.append(c.tid)
                c.ack(1)
            finally:
                c.close()
            wait_idle(srv)  # its socket is back in the pool before the next request
    served = Counter(tids)
    assert sorted(served.values()) == [SOCKET_TRANSFERS] * 3, served
    # each socket's transfers came one after another: the pool handed the same one back
    assert [tids[i * SOCKET_TRANSFERS] for i in range(3)] == list(served)


def test_a_file_is_kept_in_memory_from_its_second_request(tmp_path):
    """A file asked for once (a storm's per-modem file) is not kept; asked for again, it is, for as long as
    its inode, size and mtime stay. Rewritten in place with those three kept, only a kept copy hides it."""
    f = tmp_path / "modem.cm"
    f.write_bytes(b"A" * 700)
    st = f.stat()

    def rewrite(byte: bytes) -> None:
        with open(f, "r+b") as out:
            out.write(byte * 700)
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))

    with TftpServer(tmp_path, port=0) as srv:
        assert fetch("127.0.0.1", srv.port, "modem.cm") == b"A" * 700
        rewrite(b"B")
        assert fetch("127.0.0.1", srv.port, "modem.cm") == b"B" * 700  # the first was read, not kept
        rewrite(b"C")
        assert fetch("127.0.0.1", srv.port, "modem.cm") == b"B" * 700  # the second was kept
        f.write_bytes(b"D" * 701)  # a new size: read again
        assert fetch("127.0.0.1", srv.port, "modem.cm") == b"D" * 701


@pytest.mark.parametrize("family, host", [("AF_INET", "127.0.0.1"), ("AF_INET6", "::1")])
def test_a_window_goes_out_in_one_send_and_arrives_as_its_datagrams(family, host):
    """UDP segmentation on a real loopback socket (IPv4 and IPv6): one sendmsg, and the receiver reads
    each DATA block as its own datagram, as if sent one by one."""
    import errno
    import socket

    from hfcprov.tftp import protocol as P
    from hfcprov.tftp.server import _segment_sender
    from hfcprov.tftp.transfer import Transfer

    af = getattr(socket, family)
    with socket.socket(af, socket.SOCK_DGRAM) as rx, socket.socket(af, socket.SOCK_DGRAM) as tx:
        try:
            rx.bind((host, 0))
        except OSError as err:
            pytest.skip(f"no {host} here ({err.strerror})")
        rx.settimeout(5)
        tx.connect(rx.getsockname())
        try:
            _segment_sender(tx)([b"\0\3\0\0", b"x"], 3)
        except OSError as err:
            if err.errno in (errno.EINVAL, errno.ENOPROTOOPT, errno.EOPNOTSUPP):
                pytest.skip(f"this kernel does not segment UDP ({err.strerror})")
            raise
        assert [rx.recv(64) for _ in range(2)] == [b"\0\3\0", b"\0x"]
        sends = []
        sender = _segment_sender(tx)

        def counted(buffers, size):
            sends.append(size)
            sender(buffers, size)

        data = bytes(range(256)) * 20  # 5,120 bytes: blocks 1-10 full, 11 empty
        t = Transfer((host, 9), "f.cm", data, P.Options(blksize=512, windowsize=8), 0.0, tx.send, counted)
        t.begin(0.0)
        got = [rx.recv(2048) for _ in range(8)]
        assert got == [P.HEADER.pack(P.DATA, k) + data[(k - 1) * 512:k * 512] for k in range(1, 9)]
        assert sends == [516] and t.send_segments is counted
        assert t.on_ack(8, 0.1) is None  # 9, 10 and the empty 11th: one send, the last datagram 4 bytes
        assert [rx.recv(2048) for _ in range(3)] == [P.HEADER.pack(P.DATA, 9) + data[4096:4608],
                                                      P.HEADER.pack(P.DATA, 10) + data[4608:], b"\0\3\0\x0b"]
        assert sends == [516, 516]
