"""Round trips over trees drawn from the whole dictionary, and a fuzz of the decoder."""

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hfcprov.config import (
    ConfigError,
    ConfigTree,
    Tlv,
    decode,
    encode,
    parse_json,
    parse_text,
    parse_yaml,
    render_json,
    render_text,
    render_yaml,
)
from hfcprov.config.dictionary import ROOT

from .strategies import layouts, sample_values, trees

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def encodable(tree, secret=None):
    try:
        return encode(tree, secret)
    except ConfigError as err:
        # only "too big for one TLV" may refuse a drawn tree; anything else is a bug
        assert "at most 255" in err.message, err
        assume(False)


@SETTINGS
@given(trees(), st.one_of(st.none(), st.binary(min_size=1, max_size=64)))
@pytest.mark.slow
def test_decode_encode_gives_the_tree_back(tree, secret):
    data = encodable(tree, secret)
    back = decode(data, secret)
    assert back == tree
    assert encode(back, secret) == data


@SETTINGS
@given(st.data())
def test_encode_decode_gives_the_bytes_back_whatever_the_layout(data):
    tree = data.draw(trees())
    tree.layout = data.draw(layouts(len(tree.tlvs)))
    tree.cmts_mic = b"\x5a" * 16
    blob = encodable(tree)
    assume(blob)  # an empty file is an error
    if not tree.layout.end_marker:
        assume(blob[-1:] != b"\xff")
    back = decode(blob)
    assert encode(back) == blob
    assert back == tree


@SETTINGS
@given(trees(), st.one_of(st.none(), st.binary(min_size=1, max_size=64)))
def test_assemble_without_digests_differs_only_in_zeroed_mics(tree, secret):
    """digests=False (the TFTP server frames once and writes both MICs per request): the same file
    with zeros where the MICs go."""
    from hfcprov.config import content_items
    from hfcprov.config.framing import assemble

    full = encodable(tree, secret)
    items = content_items(tree.tlvs)
    blank = assemble(items, secret, digests=False)
    n = sum(len(whole) for _, whole in items)  # the MICs follow the content
    mics = 2 if secret is not None else 1
    assert len(blank) == len(full) and blank[:n] == full[:n]
    assert blank[n:n + 18] == bytes((6, 16)) + bytes(16)
    if mics == 2:
        assert blank[n + 18:n + 36] == bytes((7, 16)) + bytes(16)
    assert blank[n + 18 * mics:] == full[n + 18 * mics:]


@SETTINGS
@given(trees())
def test_text_yaml_json_forms_round_trip(tree):
    data = encodable(tree)
    decoded = decode(data)
    text = render_text(decoded)
    assert parse_text(text) == tree
    assert render_text(decode(encode(parse_text(text)))) == text  # text -> binary -> text is stable
    assert parse_yaml(render_yaml(decoded)) == tree
    assert parse_json(render_json(decoded)) == tree


@pytest.mark.slow
def test_every_dictionary_entry_round_trips():
    """Each of the 1,542 paths, inside its parents, so no entry is left to chance."""
    failures, checked = [], 0
    for spec in ROOT.walk():
        chain = spec.path.split(".")
        if chain[0] in ("0", "6", "7", "254", "255"):  # 254 alone: an MTA file (test_mta)
            continue
        for value in ([None] if spec.compound else sample_values(spec)):
            node = Tlv(spec.code, value) if value is not None else Tlv(spec.code, None, [])
            for code in reversed(chain[:-1]):
                node = Tlv(int(code), None, [node])
            tree = ConfigTree([node])
            try:
                data = encode(tree)
                assert decode(data) == tree
                assert encode(decode(data)) == data
                assert parse_text(render_text(tree)) == tree
                assert parse_yaml(render_yaml(tree)) == tree
            except (ConfigError, AssertionError) as err:
                failures.append(f"{spec.path} {spec.name}: {err!r}")
            checked += 1
    assert not failures, failures[:10]
    assert checked > 1500


def _only_config_errors(blob: bytes, secret=None):
    try:
        tree = decode(blob, secret)
    except ConfigError as err:
        assert str(err)
        return
    # what decodes must encode again, and decode to the same tree
    again = encode(tree)
    assert decode(again) == tree


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_random_bytes_raise_only_config_errors(blob):
    _only_config_errors(blob)
    _only_config_errors(blob, b"secret")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees(), st.data())
@pytest.mark.slow
def test_fuzz_mutated_files_raise_only_config_errors(tree, data):
    try:
        blob = bytearray(encode(tree, b"k"))
    except ConfigError:
        assume(False)
    kind = data.draw(st.sampled_from(["truncate", "flip", "length", "byte", "splice"]))
    if kind == "truncate":
        blob = blob[: data.draw(st.integers(0, len(blob)))]
    elif kind == "flip":
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] ^= 1 << data.draw(st.integers(0, 7))
    elif kind == "length":
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    elif kind == "byte":
        blob.insert(data.draw(st.integers(0, len(blob))), data.draw(st.integers(0, 255)))
    else:
        i = data.draw(st.integers(0, len(blob)))
        blob[i:i] = data.draw(st.binary(max_size=20))
    _only_config_errors(bytes(blob))
    _only_config_errors(bytes(blob), b"k")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
@pytest.mark.slow
def test_fuzz_text_raises_only_config_errors(text):
    for parse in (parse_text, parse_yaml, parse_json):
        try:
            parse(text)
        except ConfigError:
            pass


def test_a_cm_file_whose_first_tlv_is_254_re_encodes_as_a_cm_file():
    # found by the fuzz test above: a CM file's first byte turned into 254 decoded as a CM file, then
    # encode() took the tree for an MTA file and refused it ("an MTA file starts with ...")
    for first in (bytes((254, 16)) + bytes(16), bytes((254, 1, 255))):
        blob = bytearray(encode(ConfigTree([Tlv(3, 1)]), b"k"))
        blob[:3] = b""
        blob[:0] = first
        _only_config_errors(bytes(blob))
