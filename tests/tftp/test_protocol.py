"""Wire format and option rules (hypothesis), and the root-confinement rule.

tftpy's packet classes are an independent reading of RFC 1350/2347: what we encode they
parse, and what they encode we parse, to the same fields."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tftpy.TftpPacketFactory import TftpPacketFactory
from tftpy.TftpPacketTypes import (
    TftpPacketDAT,
    TftpPacketERR,
    TftpPacketOACK,
    TftpPacketRRQ,
)

from hfcprov.tftp import protocol as P
from hfcprov.tftp.paths import AccessViolation, resolve_in_root

tftpy = TftpPacketFactory()

names = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=60)
option_names = st.sampled_from(["blksize", "tsize", "timeout", "windowsize", "BLKSIZE", "x-vendor"])


@given(names, st.dictionaries(option_names, st.integers(0, 70000), max_size=4))
def test_rrq_round_trips_and_tftpy_reads_it_alike(filename, options):
    wire = P.encode_rrq(filename, options)
    ours, theirs = P.parse(wire), tftpy.parse(wire)
    assert ours.opcode == P.RRQ == theirs.opcode and ours.filename == filename == theirs.filename
    assert ours.mode == "octet" == theirs.mode
    assert ours.options == {k: str(v) for k, v in options.items()} == theirs.options


@given(names, st.dictionaries(option_names, st.integers(0, 70000).map(str), max_size=4))
def test_what_tftpy_encodes_we_parse_alike(filename, options):
    rrq = TftpPacketRRQ()
    rrq.filename, rrq.mode, rrq.options = filename, "octet", options
    pkt = P.parse(rrq.encode().buffer)
    assert (pkt.opcode, pkt.filename, pkt.mode, pkt.options) == (P.RRQ, filename, "octet", options)
    oack = TftpPacketOACK()
    oack.options = options
    assert P.parse(oack.encode().buffer).options == options


def test_opcodes_and_error_codes_are_rfc_1350s():
    assert [int(o) for o in P.Opcode] == [1, 2, 3, 4, 5, 6]
    assert (P.RRQ, P.WRQ, P.DATA, P.ACK, P.ERROR, P.OACK) == tuple(P.Opcode)
    assert P.ErrorCode.FileNotFound == 1 and P.ErrorCode.AccessViolation == 2
    assert P.ErrorCode.FailedNegotiation == 8  # RFC 2347
    assert set(P.ERROR_TEXT) == set(P.ErrorCode)
    assert {(r.name, r.minimum, r.maximum) for r in P.OPTIONS.values()} == {
        ("blksize", 8, 65464), ("timeout", 1, 255), ("tsize", 0, None), ("windowsize", 1, 65535)}


@pytest.mark.parametrize("datagram, where", [
    (b"\x00", "shorter than an opcode"),
    (b"\x00\x04\x01", "without its 2-byte number"),
    (b"\x00\x01gold.cm\x00octet", "byte 10 has no terminating NUL"),
    (b"\x00\x01gold.cm\x00", "without a file name and a mode"),
    (b"\x00\x01gold.cm\x00octet\x00blksize\x00", "option 'blksize' has no value"),
    (b"\x00\x01g\xe9.cm\x00octet\x00", "byte 3 is not ASCII"),
    (b"\x00\x09", "unknown opcode 9"),
])
def test_malformed_datagrams_say_what_and_where(datagram, where):
    with pytest.raises(P.TftpProtocolError, match=where):
        P.parse(datagram)


@given(st.dictionaries(option_names, st.integers(-5, 100000).map(str) | st.text(max_size=5), max_size=5),
       st.integers(0, 10**9))
def test_negotiated_values_stay_in_rfc_ranges(requested, size):
    o = P.negotiate(requested, size, timeout=1.0, max_windowsize=64)
    assert P.MIN_BLKSIZE <= o.blksize <= P.MAX_BLKSIZE
    assert 1 <= o.windowsize <= 64 and 0 < o.timeout <= 255
    for k in o.oack:  # the OACK only names options the client asked for
        assert k in {n.lower() for n in requested}
    if "tsize" in o.oack:
        assert o.oack["tsize"] == size


@settings(deadline=None)
@given(st.binary(max_size=80))
def test_garbage_datagrams_raise_one_error_type(data):
    try:
        P.parse(data)
    except P.TftpProtocolError:
        pass


@given(st.integers(0, 65535), st.binary(max_size=600))
def test_data_and_error_encoding(block, payload):
    wire = P.encode_data(block, payload)
    pkt, theirs = P.parse(wire), tftpy.parse(wire)
    assert (pkt.block, pkt.data) == (block, payload) == (theirs.blocknumber, theirs.data)
    dat = TftpPacketDAT()
    dat.blocknumber, dat.data = block, payload
    assert dat.encode().buffer == wire
    err = P.parse(P.encode_error(2, "outside the root"))
    assert err.code == 2 and err.message == "outside the root"
    stock = TftpPacketERR()
    stock.errorcode = 1
    assert P.parse(stock.encode().buffer).code == P.ErrorCode.FileNotFound
    assert P.parse(P.encode_error(1)).message == "File not found."  # RFC 1350's text when none is given


segments = st.lists(st.sampled_from(["a", "b", "..", ".", "", "gold.cm", "link", "/"]), max_size=6)


@settings(max_examples=200)
@given(segments)
def test_resolved_path_is_inside_root_or_refused(tmp_path_factory, parts):
    root = tmp_path_factory.getbasetemp() / "confine"
    if not root.exists():
        (root / "a" / "b").mkdir(parents=True)
        os.symlink("/etc", root / "link")
    root = root.resolve()
    name = "/".join(parts)
    try:
        p = resolve_in_root(root, name)
    except AccessViolation:
        return
    assert p == root or root in p.parents


@pytest.mark.parametrize("data, want", [(b"a\nb", b"a\r\nb"), (b"a\rb", b"a\r\0b"), (b"\r\n", b"\r\0\r\n")])
def test_netascii(data, want):
    assert P.netascii(data) == want
