"""Wire format and option rules (hypothesis), and the root-confinement rule."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.tftp import protocol as P
from hfcprov.tftp.paths import AccessViolation, resolve_in_root

names = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=60)
option_names = st.sampled_from(["blksize", "tsize", "timeout", "windowsize", "BLKSIZE", "x-vendor"])


@given(names, st.dictionaries(option_names, st.integers(0, 70000), max_size=4))
def test_rrq_round_trips_through_tftpy_parser(filename, options):
    pkt = P.parse(P.encode_rrq(filename, options))
    assert pkt.opcode == 1 and pkt.filename == filename and pkt.mode == "octet"
    assert pkt.options == {k: str(v) for k, v in options.items()}


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


@given(st.binary(max_size=80))
def test_garbage_datagrams_raise_one_error_type(data):
    try:
        P.parse(data)
    except P.TftpProtocolError:
        pass


@given(st.integers(0, 65535), st.binary(max_size=600))
def test_data_and_error_encoding(block, payload):
    pkt = P.parse(P.encode_data(block, payload))
    assert (pkt.blocknumber, pkt.data) == (block, payload)
    err = P.parse(P.encode_error(2, "outside the root"))
    assert err.errorcode == 2 and err.errmsg == b"outside the root"


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
