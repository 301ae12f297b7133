"""Final-ACK loss is logged as ``unconfirmed`` for every windowsize; a client gone earlier as ``timeout``.

A raw client on a real UDP socket negotiates the windowsize, acknowledges each full window
and then "loses" its last ACK (or stops acknowledging one window before the end).
"""

from __future__ import annotations

import io

import pytest

from hfcprov.tftp import TftpServer

from .helpers import RawClient, records

BLOCKS = 14  # gold.cm: 7000 bytes = 13 full blocks of 512 and a short one


def _run(root, windowsize: int, stop_before: int) -> dict:
    """Fetch gold.cm acknowledging every window that ends before block ``stop_before``; then go silent
    (the server's retransmissions are read and ignored). Returns the transfer's log record."""
    log = io.StringIO()
    with TftpServer(root, log=log, timeout=0.15, retries=2) as srv:
        c = RawClient(srv.port)
        c.rrq("gold.cm", {"blksize": "512", "windowsize": str(windowsize)})
        op, _, _, _ = c.recv()
        assert op == 6  # OACK
        c.ack(0)
        seen = set()
        window_start = 1
        while True:
            try:
                op, block, _, _ = c.recv(timeout=1.5)
            except TimeoutError:
                break  # the server gave up
            assert op == 3
            seen.add(block)
            window_end = min(window_start + windowsize - 1, BLOCKS)
            if block == window_end and window_end < stop_before and block not in (BLOCKS,):
                c.ack(block)
                window_start = block + 1
        c.close()
    (rec,) = records(log.getvalue())
    rec["_seen"] = seen
    return rec


@pytest.mark.parametrize("windowsize", [1, 4, 8])
def test_lost_final_ack_is_unconfirmed(root, windowsize):
    rec = _run(root, windowsize, stop_before=BLOCKS + 1)
    assert rec["_seen"] == set(range(1, BLOCKS + 1))  # the client got every block
    assert rec["windowsize"] == windowsize
    assert rec["result"] == "unconfirmed", rec
    assert rec["retries"] >= 1  # the final window was resent before giving up


@pytest.mark.parametrize("windowsize", [1, 4, 8])
def test_client_gone_before_the_last_window_is_timeout(root, windowsize):
    # acknowledges nothing from block 5 on: the last window was never even sent
    rec = _run(root, windowsize, stop_before=5)
    assert BLOCKS not in rec["_seen"]
    assert rec["result"] == "timeout", rec
