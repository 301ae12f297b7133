"""The lean v2c engine's BER against pysnmp's own encoder/decoder (the reference), both ways."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pyasn1.codec.ber import decoder, encoder
from pysnmp.proto import api, rfc1902

from hfcprov.snmp.client import END_OF_MIB
from hfcprov.snmp.v2c import GETBULK, decode_response, encode_request

v2c = api.PROTOCOL_MODULES[api.SNMP_VERSION_2C]

oids = st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=12).map(lambda t: "1.3.6." + ".".join(map(str, t)))
values = st.one_of(
    st.integers(-(2**31), 2**31 - 1).map(lambda v: (rfc1902.Integer32(v), v)),
    st.integers(0, 2**32 - 1).map(lambda v: (rfc1902.Gauge32(v), v)),
    st.binary(max_size=40).map(lambda v: (rfc1902.OctetString(v), v)),
    st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: (rfc1902.IpAddress(".".join(map(str, t))),
                                                         ".".join(map(str, t)))),
    st.just((v2c.NoSuchInstance(""), None)),
    st.just((v2c.EndOfMibView(""), END_OF_MIB)),
)


@settings(max_examples=150)
@given(st.integers(0, 2**31 - 1), st.binary(min_size=1, max_size=20), st.lists(st.tuples(oids, values), max_size=20),
       st.integers(0, 18))
def test_decodes_what_pysnmp_encodes(request_id, community, var_binds, error_status):
    pdu = v2c.GetResponsePDU()
    v2c.apiPDU.set_defaults(pdu)
    v2c.apiPDU.set_request_id(pdu, request_id)
    v2c.apiPDU.set_error_status(pdu, error_status)
    v2c.apiPDU.set_varbinds(pdu, [(oid, value[0]) for oid, value in var_binds])
    msg = v2c.Message()
    v2c.apiMessage.set_defaults(msg)
    v2c.apiMessage.set_community(msg, community)
    v2c.apiMessage.set_pdu(msg, pdu)
    got_id, status, _index, got, got_community = decode_response(encoder.encode(msg))
    assert (got_id, status, got_community) == (request_id, error_status, community)
    assert got == [(oid, value[1]) for oid, value in var_binds]


@given(st.integers(0, 2**31 - 1), st.lists(oids, min_size=1, max_size=10), st.integers(0, 3), st.integers(0, 50))
def test_pysnmp_decodes_what_we_encode(request_id, oid_list, non_repeaters, max_repetitions):
    data = encode_request(GETBULK, request_id, b"public", oid_list, non_repeaters, max_repetitions)
    msg, rest = decoder.decode(data, asn1Spec=v2c.Message())
    assert not rest
    pdu = v2c.apiMessage.get_pdu(msg)
    assert bytes(v2c.apiMessage.get_community(msg)) == b"public"
    assert int(v2c.apiBulkPDU.get_request_id(pdu)) == request_id
    assert int(v2c.apiBulkPDU.get_non_repeaters(pdu)) == non_repeaters
    assert int(v2c.apiBulkPDU.get_max_repetitions(pdu)) == max_repetitions
    assert [str(name) for name, _ in v2c.apiBulkPDU.get_varbinds(pdu)] == oid_list


def test_garbage_is_a_value_error():
    import pytest

    for junk in (b"", b"\x30\x03\x02\x01", b"\x30\x00", bytes(range(40))):
        with pytest.raises(ValueError):
            decode_response(junk)


def _response(var_binds: bytes) -> bytes:
    from hfcprov.config.ber import tlv
    pdu = tlv(0xA2, b"\x02\x01\x07\x02\x01\x00\x02\x01\x00" + tlv(0x30, var_binds))
    return tlv(0x30, b"\x02\x01\x01" + tlv(0x04, b"public") + pdu)


def test_var_binds_of_any_length_and_overruns():
    """Short var-binds are cut inline, long ones (a 200-byte string) by the general reader; a value
    or an OID overrunning its var-bind is malformed either way, never read from the next one."""
    import pytest

    oid = b"\x06\x03\x2b\x06\x01"
    short = b"\x30\x08" + oid + b"\x02\x01\x05"
    long_ = b"\x30\x81\xd0" + oid + b"\x04\x81\xc8" + b"x" * 200
    _, _, _, got, _ = decode_response(_response(short + long_ + short))
    assert got == [("1.3.6.1", 5), ("1.3.6.1", b"x" * 200), ("1.3.6.1", 5)]
    for bad in (b"\x30\x08" + oid + b"\x02\x02\x05",  # value overruns its var-bind into the next
                b"\x30\x05\x06\x05\x2b\x06\x01" + b"\x02\x01\x05",  # OID overruns its var-bind
                b"\x30\x08" + oid + b"\x02\x01"):  # truncated at the end
        with pytest.raises(ValueError):
            decode_response(_response(bad + short))
