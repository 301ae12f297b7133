"""Decode, edit, encode: every form ``decode`` writes encodes back to the same bytes (issue 26 item 3) --
GenericTLVs of known codes, MICs and pad bytes where a file had them, a missing end marker, odd tails, an
MTA file's short TLV 64 -- and names typed the docsis C tool's way are read with a warning naming what to
write, or refused with "did you mean"."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, ConfigTree, Tlv, VarBind, decode, encode, parse_text
from hfcprov.config.forms import parse_any, parse_json, parse_yaml, render_json, render_yaml
from hfcprov.config.framing import decode_mta, encode_mta
from hfcprov.config.names import DIGITMAP_OID
from hfcprov.config.text import encode_text, render_text
from hfcprov.config.tree import Layout

from .strategies import trees

SECRET = b"round-trip-secret"
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FORMS = [("text", render_text, parse_text), ("yaml", render_yaml, parse_yaml), ("json", render_json, parse_json)]


def forms_of(tree: ConfigTree):
    for name, render, parse in FORMS:
        yield name, parse(render(tree))


@st.composite
def framed_files(draw):
    """A valid tree framed in any layout a real file may have: MICs anywhere (CM before CMTS), repeated,
    pad bytes, with or without the end marker, any tail."""
    tree = draw(trees(max_tlvs=6))
    n = len(tree.tlvs)
    codes = draw(st.lists(st.sampled_from([6, 7, 0]), max_size=5))
    if 7 in codes and 6 in codes[codes.index(7):]:  # a CM MIC after a computed CMTS MIC covers it: refused
        codes = [c for c in codes if c != 6]
    marks = sorted(((draw(st.integers(0, n)), c) for c in codes), key=lambda m: m[0])
    codes_sorted = [c for _, c in marks]
    if 7 in codes_sorted and 6 in codes_sorted[codes_sorted.index(7):]:
        marks = [m for m in marks if m[1] != 6]
    end = draw(st.booleans())
    layout = Layout(marks=marks, end_marker=end, tail=draw(st.one_of(st.none(), st.binary(max_size=7))) if end else b"")
    tree.layout = draw(st.sampled_from([None, layout]))
    return tree


@SETTINGS
@given(framed_files())
def test_every_form_of_a_decoded_file_encodes_to_its_bytes(tree):
    # a file without a CMTS MIC is re-encoded without the secret (with it, encode adds one)
    secret = SECRET if tree.layout is None or any(c == 7 for _, c in tree.layout.marks) else None
    try:
        data = encode(tree, secret)
    except ConfigError as err:
        assert "at most 255" in err.message  # a drawn value too long for its TLV
        return
    if not data:
        return  # no TLVs, no trailer: an empty file, which decode refuses
    decoded = decode(data)
    assert encode(decoded, secret) == data
    for name, back in forms_of(decoded):
        assert encode(back, secret) == data, name


def test_a_generic_tlv_of_a_known_code_is_written_as_given_with_a_warning():
    data = encode(parse_text("Main { NetworkAccess 1; MaxCPE 4; }"))
    bad = data.replace(bytes.fromhex("030101"), bytes.fromhex("03020001"))  # NetworkAccess in 2 bytes
    tree = decode(bad)
    text = render_text(tree)
    assert "GenericTLV TlvCode 3 TlvLength 2 TlvValue 0x0001;" in text
    again = parse_text(text, "edited.cfg")
    assert again.tlvs[0].unfit and encode(again) == encode(tree)
    (warning,) = again.warnings
    assert warning.path == "3" and warning.line == 3 and "NetworkAccess takes exactly 1 bytes, not 2" in str(warning)
    assert "written as given" in str(warning) and str(warning).startswith("edited.cfg:3")
    # bytes that fit are read as the TLV itself, as decoding them does
    (node,) = parse_text("Main { GenericTLV TlvCode 3 TlvLength 1 TlvValue 0x01; }").tlvs
    assert node == Tlv(3, 1) and not node.unfit
    (flow,) = parse_text("Main { GenericTLV TlvCode 24 TlvLength 4 TlvValue 0x01020007; }").tlvs
    assert flow.children == [Tlv(1, 7)]
    yaml_tree = parse_yaml("Main:\n  - GenericTLV: {TlvCode: 3, TlvValue: '0x0001'}\n")
    assert yaml_tree.warnings[0].line == 2 and encode(yaml_tree).startswith(bytes.fromhex("03020001"))


def test_layout_statements_read_and_written():
    text = "Main {\n Pad;\n NetworkAccess 1;\n CmMic;\n CmtsMic;\n MaxCPE 2;\n EndOfData 0x0000;\n}\n"
    tree = parse_text(text)
    assert tree.layout == Layout(marks=[(0, 0), (1, 6), (1, 7)], end_marker=True, tail=b"\0\0")
    data = encode(tree, SECRET)
    assert data[0] == 0 and data[-3:] == b"\xff\0\0" and decode(data, SECRET).layout == tree.layout
    assert render_text(decode(data)).count("CmMic;") == 1
    no_end = parse_text("Main { NetworkAccess 1; CmMic; NoEndOfData; }")
    assert encode(no_end).endswith(b"\x06\x10" + encode(no_end)[-16:])  # ends with the CM MIC itself
    with pytest.raises(ConfigError, match="ends with EndOfData or NoEndOfData"):
        parse_text("Main { NetworkAccess 1; CmMic; }")
    with pytest.raises(ConfigError, match="after the end of the file") as err:
        parse_text("Main {\n NetworkAccess 1;\n EndOfData;\n CmMic;\n}")
    assert err.value.line == 4


def test_a_cm_file_opening_with_tlv_254_stays_a_cm_file_through_its_forms():
    tree = ConfigTree([Tlv(254, 2), Tlv(3, 1)])  # 254 1 would open an MTA file
    data = encode(ConfigTree(list(tree.tlvs), cm_file=True), SECRET)
    decoded = decode(data)
    assert decoded.cm_file and "CmMic;" in render_text(decoded)
    for name, back in forms_of(decoded):
        assert encode(back, SECRET) == data, name


def test_a_short_tlv_64_of_an_mta_file_comes_back_as_tlv_64():
    tree = ConfigTree([Tlv(254, 1), Tlv(11, VarBind("1.3.6.1.2.1.1.4.0", "Integer", 5), wide=True), Tlv(254, 255)],
                      mta=True)
    data = encode_mta(tree)
    assert data[3] == 64 and decode_mta(data).tlvs[1].wide
    text = render_text(decode_mta(data))
    assert "GenericTLV TlvCode 64" in text
    for name, back in forms_of(decode_mta(data)):
        assert encode(back) == data, name


def test_tlv_0_6_7_and_255_are_content_in_an_mta_file_not_layout():
    tree = ConfigTree([Tlv(254, 1), Tlv(6, b"\x5a" * 16), Tlv(255, b""), Tlv(254, 255)], mta=True)
    data = encode(tree)
    decoded = parse_any(data)
    assert "CmMic 0x5a5a" in render_text(decoded)
    for name, back in forms_of(decoded):
        assert back.layout is None and encode(back) == data, name


def test_an_unknown_name_says_what_was_meant():
    with pytest.raises(ConfigError, match="did you mean MaxRateSustained") as err:
        parse_text("Main {\n UsServiceFlow {\n  UsServiceFlowRef 1;\n  MaxRateSustaind 1000;\n }\n}", "a.cfg")
    assert err.value.line == 4 and str(err.value).startswith("a.cfg:4")
    with pytest.raises(ConfigError, match="did you mean NetworkAccess"):
        parse_yaml("Main:\n  - NetworkAcess: 1\n")
    with pytest.raises(ConfigError, match="did you mean MaxRateSustained"):
        parse_json('{"Main": [{"UsServiceFlow": [{"MaxRateSustaind": 1}]}]}')
    with pytest.raises(ConfigError, match="unknown TLV name 'Zzyzx'") as err:
        parse_text("Main { Zzyzx 1; }")
    assert "did you mean" not in str(err.value)


def test_the_c_tools_loose_names_are_read_as_it_reads_them_with_a_hint():
    tree = parse_text("Main {\n DsServiceFlow {\n  UsServiceFlowRef 2;\n  QosParamSetType 7;\n }\n}")
    assert tree.tlvs[0].children[0] == Tlv(1, 2)
    (warning,) = tree.warnings
    assert warning.line == 3 and "write DsServiceFlowRef" in str(warning)
    assert encode(tree) == encode(parse_text("Main { DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; } }"))
    # a name with no sub-TLV of its code in this block: that code, that name's value type (the C tool's bytes)
    asf = parse_text("Main { UpstreamAggregateServiceFlow { UpstreamServiceFlowReference 10;"
                     " UpstreamAggregateServiceFlowReference { GenericTLV TlvCode 1 TlvLength 2 TlvValue 0x0102; } } }")
    assert encode(asf).startswith(bytes.fromhex("460a" "0102000a" "2404" "01020102"))
    assert "written as TLV 70.36" in str(asf.warnings[0])
    leaf = parse_text("Main { UpstreamAggregateServiceFlow { UpstreamAggregateServiceFlowReference 7; } }")
    assert leaf.tlvs[0].children == [Tlv(36, b"\x00\x07")]
    with pytest.raises(ConfigError, match="unknown TLV name 'UsServiceFlowRef' at the top level"):
        parse_text("Main { UsServiceFlowRef 1; }")  # at the top level a name is never read loosely


def test_digitmap_takes_a_file_as_the_c_tool_does(tmp_path):
    plan = b"(xx.T|[2-9]xxxxxx|011x.T)" * 20
    (tmp_path / "plan.txt").write_bytes(plan)
    src = tmp_path / "mta.cfg"
    src.write_text('Main {\n MtaConfigDelimiter 1;\n DigitMap "plan.txt";\n MtaConfigDelimiter 255;\n}\n')
    tree = parse_any(src.read_bytes(), str(src))
    assert tree.tlvs[1].value == VarBind(DIGITMAP_OID, "OctetString", plan)
    assert encode(tree)[3] == 64  # over 255 bytes: TLV 64 in an MTA file
    src.write_text('Main {\n MtaConfigDelimiter 1;\n DigitMap "nope.txt";\n}\n')
    with pytest.raises(ConfigError, match="cannot read the DigitMap file") as err:
        parse_text(src.read_text(), str(src))
    assert err.value.line == 3
    (tmp_path / "big.txt").write_bytes(b"x" * 8193)
    with pytest.raises(ConfigError, match="at most 8192"):
        parse_text('Main { MtaConfigDelimiter 1; DigitMap "big.txt"; }', str(src))


def test_encode_text_keeps_layout_statements():
    text = "Main {\n NetworkAccess 1;\n CmMic;\n Pad;\n EndOfData;\n}\n"
    assert encode_text(text) == encode(parse_text(text))
