"""OID decoding by cached prefix (``ber.decode_oid_body``) against a plain decoding of every byte."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.config import ber
from hfcprov.config.errors import ConfigError


def plain(body: bytes) -> str:
    """The reference: every sub-identifier decoded, shortest form required, the first giving two arcs."""
    if not body or body[-1] & 0x80:
        raise ConfigError("truncated")
    arcs, arc, start = [], 0, True
    for b in body:
        if start and b == 0x80:
            raise ConfigError("not shortest")
        arc, start = (arc << 7) | (b & 0x7F), not b & 0x80
        if start:
            arcs.append(arc)
            arc = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(map(str, [first, arcs[0] - 40 * first, *arcs[1:]]))


def same(body: bytes) -> None:
    try:
        want = plain(body)
    except ConfigError:
        with pytest.raises(ConfigError):
            ber.decode_oid_body(body)
        return
    assert ber.decode_oid_body(body) == want


arcs = st.integers(0, 2**32 - 1) | st.integers(0, 200)
columns = st.lists(arcs, min_size=0, max_size=12).map(lambda t: "1.3.6.1.4.1.4491." + ".".join(map(str, t)))


@settings(max_examples=300)
@given(st.lists(st.tuples(columns, st.lists(arcs, min_size=1, max_size=4)), min_size=1, max_size=6),
       st.data())
def test_rows_of_shared_columns_decode_as_encoded(rows, data):
    """A walk's OIDs: columns repeated with different row indexes (the prefix cache hits), each
    also damaged one byte at a time (what a broken agent sends)."""
    for column, index in rows * 2:
        oid = column.strip(".") + "." + ".".join(map(str, index))
        body = ber.encode_oid_body(oid)
        assert ber.decode_oid_body(body) == oid
        at = data.draw(st.integers(0, len(body) - 1))
        damaged = body[:at] + bytes([data.draw(st.sampled_from([0x80, 0x81, 0xFF, 0x00, 0x7F]))]) + body[at + 1:]
        same(damaged)
        same(body[:at])


@given(st.binary(max_size=24))
def test_any_bytes_decode_as_plainly(body):
    same(body)
    same(body)  # again, from the cache
