"""MICs in every layout and the prepared file: encode, verify and ``prepare(...).fill`` checked against an
HMAC and MD5 computed here from the bytes alone (own TLV walk, the spec's CMTS MIC list written out)."""

import hashlib
import hmac
import pickle
import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, ConfigTree, Tlv, content_items, decode, encode, parse_text, verify
from hfcprov.config.forms import parse_any, parse_yaml, render_yaml
from hfcprov.config.framing import prepare
from hfcprov.config.text import render_text
from hfcprov.config.tree import Layout

from .strategies import trees

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPEC_ORDER = [1, 2, 3, 4, 17, 43, 6, 18, 19, 20, 22, 23, 24, 25, 28, 29, 26, 35, 36, 37, 40]  # MULPI D.2.1
SECRET = b"framing-secret"


def walk(data: bytes):
    """(offset, type, whole TLV) of every TLV up to the end marker, pad bytes skipped."""
    out, pos = [], 0
    while pos < len(data) and data[pos] != 0xFF:
        if data[pos] == 0:
            pos += 1
            continue
        end = pos + 2 + data[pos + 1]
        out.append((pos, data[pos], data[pos:end]))
        pos = end
    return out


def independent_mics(data: bytes, secret: bytes):
    """What each TLV 6 and TLV 7 of ``data`` should hold: MD5 of what precedes it; the HMAC of the spec list."""
    tlvs = walk(data)
    mac = hmac.new(secret, digestmod="md5")
    for code in SPEC_ORDER:
        for _, t, whole in tlvs:
            if t == code:
                mac.update(whole)
    cm = [(hashlib.md5(data[:pos]).digest(), whole[2:]) for pos, t, whole in tlvs if t == 6]
    cmts = [(mac.digest(), whole[2:]) for pos, t, whole in tlvs if t == 7]
    return cm, cmts


@st.composite
def any_layouts(draw, n: int):
    """MICs anywhere, in either order, repeated; pad bytes; odd tails."""
    marks = [(draw(st.integers(0, n)), code) for code in draw(st.lists(st.sampled_from([6, 7, 0]), max_size=5))]
    marks.sort(key=lambda m: m[0])  # stable: the drawn order stays among marks at one position
    end = draw(st.booleans())
    return Layout(marks=marks, end_marker=end, tail=draw(st.binary(max_size=7)) if end else b"")


def cm_after_cmts(layout: Layout) -> bool:
    codes = [c for _, c in layout.marks if c in (6, 7)]
    return 7 in codes and 6 in codes[codes.index(7):]


@SETTINGS
@given(st.data())
def test_encode_and_verify_agree_with_an_independent_hmac_in_any_layout(data):
    tree = data.draw(trees(max_tlvs=6))
    tree.layout = data.draw(any_layouts(len(tree.tlvs)))
    assume(any(c == 7 for _, c in tree.layout.marks))
    try:
        blob = encode(tree, SECRET)
    except ConfigError as err:
        if "at most 255" in err.message:
            assume(False)
        assert cm_after_cmts(tree.layout) and "comes after the CMTS MIC" in err.message
        return
    assert not cm_after_cmts(tree.layout)
    if not tree.layout.end_marker:
        assume(blob[-1:] != b"\xff" and b"\xff" not in blob[:1])
    cm, cmts = independent_mics(blob, SECRET)
    assert all(want == got for want, got in cm + cmts)
    if cm:
        verify(blob, SECRET)
    back = decode(blob)
    assert back == tree and encode(back, SECRET) == blob and encode(back) == blob


def _file(content: bytes, *trailer: bytes) -> bytes:
    data = content + b"".join(trailer) + b"\xff"
    return data + b"\0" * (-len(data) % 4)


def test_mic_covered_tlv_after_the_cmts_mic_is_in_the_cmts_mic():
    # the old encoder hashed only what came before TLV 7; verify hashes the whole file
    tree = ConfigTree([Tlv(3, 1), Tlv(18, 4)], layout=Layout(marks=[(1, 6), (1, 7)]))
    blob = encode(tree, SECRET)
    assert [t for _, t, _ in walk(blob)] == [3, 6, 7, 18]
    verify(blob, SECRET)
    (cm,), (cmts,) = independent_mics(blob, SECRET)
    assert cm[0] == cm[1] and cmts[0] == cmts[1]


def test_cmts_mic_before_cm_mic_is_refused_with_a_secret_and_kept_without():
    content = bytes.fromhex("030101")
    cmts = b"\x11" * 16
    cm = hashlib.md5(content + b"\x07\x10" + cmts).digest()
    blob = _file(content, b"\x07\x10" + cmts, b"\x06\x10" + cm)
    tree = decode(blob)
    assert tree.warnings == [] and encode(tree) == blob  # the decoded CMTS MIC kept: no cycle
    with pytest.raises(ConfigError, match="comes after the CMTS MIC") as err:
        encode(tree, SECRET)
    assert err.value.path == "6"


def test_two_cm_mics_reencode_byte_exact():
    content = bytes.fromhex("030101" "120104")
    first = b"\x06\x10" + hashlib.md5(content).digest()
    right = b"\x06\x10" + hashlib.md5(content + first).digest()
    for second in (right, first):  # a second MIC over what precedes it, or a stale copy of the first
        blob = _file(content, first, second)
        assert encode(decode(blob)) == blob
    # both CM MICs and a CMTS MIC, re-signed
    tree = decode(_file(content, first, right))
    blob = encode(tree, SECRET)
    cm, cmts = independent_mics(blob, SECRET)
    assert len(cm) == 2 and all(w == g for w, g in cm + cmts)


def test_zero_length_cmts_mic_placeholder_is_a_warning_and_kept():
    content = bytes.fromhex("030101")
    cm = b"\x06\x10" + hashlib.md5(content).digest()
    blob = _file(content, cm, b"\x07\x00")
    tree = decode(blob)
    assert [w.path for w in tree.warnings] == ["7"] and "0 bytes, not 16" in str(tree.warnings[0])
    assert encode(tree) == blob
    with pytest.raises(ConfigError, match="0 bytes, not 16"):
        decode(blob, strict=True)


def test_decode_reports_a_bad_cm_mic_as_a_warning():
    good = encode(parse_text("Main { NetworkAccess 1; MaxCPE 4; }"))
    bad = good.replace(b"\x12\x01\x04", b"\x12\x01\x05")  # one value byte flipped
    assert decode(good).warnings == []
    (warning,) = decode(bad).warnings
    assert "CM MIC (TLV 6) mismatch" in str(warning) and warning.offset == 6 and warning.path == "6"
    with pytest.raises(ConfigError, match="CM MIC"):
        decode(bad, strict=True)
    assert "no CM MIC" in str(decode(bytes.fromhex("030101ff")).warnings[0])


@pytest.mark.parametrize("data", [b"", b"  \n", b"\n"])
def test_an_empty_file_is_an_error(data):
    with pytest.raises(ConfigError, match="empty"):
        parse_any(data, "x.cm")


def test_a_form_carrying_a_cmts_mic_needs_the_secret():
    blob = encode(parse_text("Main { NetworkAccess 1; }"), SECRET)
    tree = decode(blob)
    for form in (render_yaml(tree), render_text(tree)):
        parsed = parse_any(form, "x")
        assert parsed.carries_cmts_mic
        with pytest.raises(ConfigError, match="carries a CMTS MIC"):
            encode(parsed)
        assert encode(parsed, SECRET) == blob
    assert encode(parse_yaml("Main:\n  - NetworkAccess: 1\n"))  # no CMTS MIC carried: none needed


# --- the prepared file ----------------------------------------------------------------------

def stamped(tree: ConfigTree, values: dict) -> ConfigTree:
    out = ConfigTree(list(tree.tlvs))
    for code in sorted(values):
        out.set_top(code, values[code])
    return out


@SETTINGS
@given(trees(max_tlvs=6), st.one_of(st.none(), st.binary(min_size=1, max_size=64)),
       st.sets(st.sampled_from([19, 20, 59])), st.integers(0, 2**32 - 1),
       st.integers(0, 2**32 - 1).map(lambda n: ".".join(str(n >> s & 255) for s in (24, 16, 8, 0))))
def test_prepared_file_fill_equals_encoding_the_stamped_tree(tree, secret, holes, stamp, address):
    try:
        items = content_items(tree.tlvs)
        prepared = prepare(items, secret, holes=holes)
    except ConfigError as err:
        assume("at most 255" not in err.message)
        raise
    typed = {19: stamp, 20: address, 59: "2001:db8::" + format(stamp & 0xFFFF, "x")}
    values = {code: typed[code] for code in holes}
    prepared = pickle.loads(pickle.dumps(prepared))  # built in a worker, filled in the server
    for _ in range(2):  # the kept digest prefix is reused
        blob = prepared.fill(values)
        assert blob == encode(stamped(tree, values), secret)
        cm, cmts = independent_mics(blob, secret or b"")
        assert cm[0][0] == cm[0][1] and (secret is None or cmts[0][0] == cmts[0][1])
    if 19 in holes:
        raw = prepared.fill({19: (stamp ^ 1).to_bytes(4, "big")})
        assert decode(raw).find("19")[0].value == stamp ^ 1


@SETTINGS
@given(trees(), st.sampled_from([None, SECRET]), st.sampled_from([None, b"\x11" * 16]))
def test_assemble_of_the_standard_trailer_is_prepare_and_fill(tree, secret, decoded):
    from hfcprov.config.framing import assemble

    try:
        items = content_items(tree.tlvs)
    except ConfigError:
        return
    assert assemble(items, secret, decoded_cmts_mic=decoded) == \
        prepare(items, secret, decoded_cmts_mic=decoded).fill()


def test_prepared_file_places_holes_where_set_top_would_and_refuses_others():
    tree = parse_text("Main { TftpTimestamp 5; NetworkAccess 1; TftpTimestamp 6; MaxCPE 3; }")
    prepared = prepare(content_items(tree.tlvs), SECRET, holes=(20, 19))
    blob = prepared.fill({19: 77, 20: b"\x0a\x00\x00\x01"})
    assert [t for _, t, _ in walk(blob)] == [19, 3, 18, 20, 6, 7]
    assert blob == encode(stamped(tree, {19: 77, 20: "10.0.0.1"}), SECRET)
    assert prepared.fill() == encode(stamped(tree, {19: 0, 20: "0.0.0.0"}), SECRET)
    with pytest.raises(ConfigError, match="takes 4 bytes"):
        prepared.fill({19: b"\x01"})
    with pytest.raises(ConfigError, match="not a hole"):
        prepared.fill({59: b"\0" * 16})
    with pytest.raises(ConfigError, match="cannot be filled"):
        prepare(content_items(tree.tlvs), SECRET, holes=(9,))


@SETTINGS
@given(trees(max_tlvs=8), st.one_of(st.none(), st.just(SECRET)), st.sampled_from([None, b"\x11" * 16]),
       st.sets(st.sampled_from([19, 20, 59])), st.integers(0, 2**32 - 1))
def test_the_standard_prepared_file_is_the_layouts_one(tree, secret, decoded, holes, stamp):
    """``prepare``'s own way for the standard trailer (what every stamped file takes) frames and fills as
    the general one does, given that trailer as an explicit layout."""
    try:
        items = content_items(tree.tlvs)
    except ConfigError:
        return
    standard = Layout(marks=[(len(items), 6)] + ([(len(items), 7)] if secret or decoded else []), tail=None)
    try:
        fast = prepare(items, secret, holes=holes, decoded_cmts_mic=decoded)
    except ConfigError as err:
        with pytest.raises(ConfigError, match=re.escape(err.message)):
            prepare(items, secret, holes=holes, decoded_cmts_mic=decoded, layout=standard)
        return
    general = prepare(items, secret, holes=holes, decoded_cmts_mic=decoded, layout=standard)
    assert (fast.data, fast.holes, fast.steps, fast.fixed) == (general.data, general.holes, general.steps,
                                                               general.fixed)
    values = {19: stamp, 20: b"\x0a\x00\x00\x01", 59: bytes(range(16))}
    values = {code: values[code] for code in holes}
    assert pickle.loads(pickle.dumps(fast)).fill(values) == general.fill(values)
    assert fast.fill() == general.fill()
