"""The transfer state machine without sockets: a list records what it sends, the clock is a number."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.tftp import protocol as P
from hfcprov.tftp.transfer import OK, TIMEOUT, UNCONFIRMED, Transfer


def _blocks(sent: list[bytes]) -> list[int]:
    return [struct.unpack("!H", d[2:4])[0] for d in sent if d[:2] == b"\x00\x03"]


def _make(size=7000, windowsize=1, blksize=512, oack=False):
    sent: list[bytes] = []
    opts = P.Options(blksize=blksize, timeout=1.0, windowsize=windowsize,
                     oack={"windowsize": str(windowsize)} if oack else None)
    t = Transfer(("192.0.2.7", 1234), "f.cm", bytes(range(256)) * (size // 256) + bytes(size % 256), opts, 0.0,
                 sent.append)
    return t, sent


def test_window_of_4_then_an_ack_inside_it_resumes_after_that_block():
    t, sent = _make(windowsize=4)
    t.begin(0.0)
    assert _blocks(sent) == [1, 2, 3, 4] and t.deadline == 1.0
    sent.clear()
    assert t.on_ack(2, 0.5) is None  # blocks 3 and 4 lost: resend from 3
    assert _blocks(sent) == [3, 4, 5, 6] and t.deadline == 1.5
    sent.clear()
    assert t.on_ack(2, 0.6) is None and sent == [] and t.deadline == 1.5  # duplicate: ignored, no re-arm


def test_oack_is_resent_until_ack_0_then_data_flows():
    t, sent = _make(windowsize=2, oack=True)
    t.begin(0.0)
    assert sent[0][:2] == b"\x00\x06" and len(sent) == 1
    assert t.on_ack(1, 0.1) is None and len(sent) == 1  # not ACK 0: ignored
    assert t.on_timeout(1.0, max_tries=3) is None and sent[-1][:2] == b"\x00\x06" and t.retries == 1
    assert t.on_ack(0, 1.2) is None and _blocks(sent) == [1, 2]


@pytest.mark.parametrize("windowsize", [1, 4, 8])
def test_final_ack_lost_is_unconfirmed_and_an_earlier_stop_is_timeout(windowsize):
    t, _ = _make(windowsize=windowsize)  # 14 blocks
    t.begin(0.0)
    while t.next - 1 < t.last:  # acknowledge every window but the final one
        assert t.on_ack(t.next - 1, 0.1) is None
    assert t.next == t.last + 1  # every block sent, the final window unacknowledged
    assert [t.on_timeout(1.0 + i, max_tries=2) for i in range(3)] == [None, None, UNCONFIRMED]
    early, _ = _make(windowsize=windowsize)
    early.begin(0.0)
    assert [early.on_timeout(1.0 + i, max_tries=2) for i in range(3)] == [None, None, TIMEOUT]


@settings(max_examples=200, deadline=None)
@given(size=st.integers(0, 5000), windowsize=st.integers(1, 8), blksize=st.sampled_from([8, 512]),
       losses=st.lists(st.booleans(), max_size=400))
def test_a_lossy_client_gets_every_byte_in_order(size, windowsize, blksize, losses):
    """A client following RFC 7440 (ACK the last in-order block at the window's end or on a gap) over a
    path that drops the datagrams ``losses`` says: the bytes it assembles are the file's."""
    t, sent = _make(size=size, windowsize=windowsize, blksize=blksize)
    data = t.data
    got = bytearray()
    expect = 1
    drops = iter(losses)
    now = 0.0
    t.begin(now)
    for _ in range(20000):
        batch, sent[:] = list(sent), []
        last_in_order = None
        for d in batch:
            if next(drops, False):
                continue
            block = struct.unpack("!H", d[2:4])[0]
            if block == expect & 0xFFFF:
                got += d[4:]
                last_in_order = expect
                expect += 1
        now += 0.01
        if last_in_order is not None:
            result = t.on_ack(last_in_order & 0xFFFF, now)
        else:
            now = t.deadline
            result = t.on_timeout(now, max_tries=10**6)
        if result is not None:
            assert result == OK
            break
    assert bytes(got) == data


def test_a_send_that_fails_ends_the_window_and_the_timer_resends_it():
    sent: list[bytes] = []

    def send(datagram):  # the socket buffer is full from the second block on
        if len(sent) >= 1:
            raise BlockingIOError
        sent.append(datagram)

    t = Transfer(("192.0.2.7", 1234), "f.cm", bytes(7000), P.Options(windowsize=4), 0.0, send)
    t.begin(0.0)  # no exception reaches the loop
    assert _blocks(sent) == [1]
    sent.clear()
    t.send = sent.append  # room again
    assert t.on_timeout(1.0, max_tries=3) is None
    assert _blocks(sent) == [1, 2, 3, 4] and t.retries == 4


def test_acks_for_blocks_a_resend_covers_slide_the_window_instead_of_resending_again():
    t, sent = _make(windowsize=4)
    t.begin(0.0)
    assert _blocks(sent) == [1, 2, 3, 4]
    sent.clear()
    assert t.on_ack(1, 0.1) is None  # RFC 7440 gap report: 2..4 resent once, and 5 fills the window
    assert _blocks(sent) == [2, 3, 4, 5] and t.retries == 3
    sent.clear()
    # The client's ACKs of the first copies of 2 and 3 arrive after the resend: no second resend,
    # only the window slides to new blocks.
    assert t.on_ack(2, 0.2) is None and _blocks(sent) == [6]
    assert t.on_ack(3, 0.3) is None and _blocks(sent) == [6, 7]
    assert t.retries == 3
    sent.clear()
    assert t.on_ack(7, 0.4) is None and _blocks(sent) == [8, 9, 10, 11]  # the whole window: as usual
    sent.clear()
    assert t.on_ack(9, 0.5) is None and _blocks(sent) == [10, 11, 12, 13]  # a new gap is resent again


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=60), st.integers(1, 8))
def test_no_ack_sequence_sends_a_block_more_than_twice_between_timeouts(acks, windowsize):
    """Whatever ACKs arrive (duplicates, stale, out of order), the ACK rules alone send a block at
    most twice: once, and once more for a gap report."""
    t, sent = _make(size=20 * 512 + 100, windowsize=windowsize)
    t.begin(0.0)
    for a in acks:
        if t.on_ack(a, 0.1) is not None:
            break
    counts = {}
    for b in _blocks(sent):
        counts[b] = counts.get(b, 0) + 1
    assert max(counts.values()) <= 2


def _cut(sent: list[bytes], calls: list[int]):
    """``send_segments`` as the kernel does it (UDP_SEGMENT): the buffers joined, then cut into datagrams
    of ``size`` bytes, the last possibly shorter; ``calls`` gets the datagrams of each send."""
    def send_segments(buffers, size):
        joined = b"".join(bytes(b) for b in buffers)
        cut = [joined[i:i + size] for i in range(0, len(joined), size)]
        assert all(len(d) == size for d in cut[:-1])
        calls.append(len(cut))
        sent.extend(cut)
    return send_segments


@settings(max_examples=150, deadline=None)
@given(size=st.integers(0, 6000), windowsize=st.integers(1, 70), blksize=st.sampled_from([8, 512, 1428]),
       events=st.lists(st.one_of(st.integers(0, 40), st.none()), max_size=40))
def test_a_window_sent_in_one_call_is_the_same_datagrams(size, windowsize, blksize, events):
    """Whatever ACKs and timeouts (None) come, a transfer handing whole windows to ``send_segments``
    sends exactly the datagrams, in order, that one sending block by block does; and it hands over
    every window of more than one block in calls of at most 64 datagrams."""
    plain, sent_plain = _make(size=size, windowsize=windowsize, blksize=blksize)
    sent: list[bytes] = []
    calls: list[int] = []
    seg = Transfer(plain.client, plain.filename, plain.data, P.Options(blksize=blksize, timeout=1.0,
                   windowsize=windowsize), 0.0, sent.append, _cut(sent, calls))
    for t in (plain, seg):
        t.begin(0.0)
        for e in events:
            r = t.on_timeout(t.deadline, 10**6) if e is None else t.on_ack(e, 0.1)
            if r is not None:
                break
    assert sent == sent_plain
    assert all(2 <= n <= 64 for n in calls)
    if windowsize == 1:
        assert calls == []
    elif plain.last > 1:
        assert calls and calls[0] == min(windowsize, plain.last, 64)


@pytest.mark.parametrize("code", [22, 5, 92, 95])  # EINVAL, EIO, ENOPROTOOPT, EOPNOTSUPP
def test_a_path_that_cannot_segment_falls_back_to_one_send_per_block(code):
    sent: list[bytes] = []
    tried = []

    def refuse(buffers, size):
        tried.append(size)
        raise OSError(code, "no segmentation here")

    t = Transfer(("192.0.2.7", 1234), "f.cm", bytes(7000), P.Options(windowsize=4), 0.0, sent.append, refuse)
    t.begin(0.0)
    assert _blocks(sent) == [1, 2, 3, 4] and tried == [516]
    assert t.send_segments is None  # not tried again for this transfer
    sent.clear()
    assert t.on_ack(4, 0.1) is None and _blocks(sent) == [5, 6, 7, 8] and tried == [516]


def test_a_segmented_send_that_fails_ends_the_window_as_a_block_send_does():
    sent: list[bytes] = []

    def full(buffers, size):  # the socket buffer is full
        raise BlockingIOError

    t = Transfer(("192.0.2.7", 1234), "f.cm", bytes(7000), P.Options(windowsize=4), 0.0, sent.append, full)
    t.begin(0.0)  # no exception reaches the loop
    assert sent == [] and t.next == 2  # the first block counts as sent; the timer resends the window
    assert t.send_segments is full  # a full buffer is no reason to stop segmenting
    calls: list[int] = []
    t.send_segments = _cut(sent, calls)
    assert t.on_timeout(1.0, max_tries=3) is None
    assert _blocks(sent) == [1, 2, 3, 4] and calls == [4] and t.retries == 4


def test_blocks_too_large_to_share_a_send_go_one_by_one():
    calls: list[int] = []
    sent: list[bytes] = []
    t = Transfer(("192.0.2.7", 1234), "f.cm", bytes(200_000), P.Options(blksize=40_000, windowsize=4), 0.0,
                 sent.append, _cut(sent, calls))
    t.begin(0.0)
    assert t.send_segments is None and calls == [] and _blocks(sent) == [1, 2, 3, 4]
