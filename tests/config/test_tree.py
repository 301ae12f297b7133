"""The tree API other parts code against: find, set_top, equality ignoring MICs and layout."""

from hfcprov.config import ConfigTree, Tlv, decode, encode, parse_text


def test_find_paths_and_set_top():
    tree = parse_text("""Main { MaxCPE 1; UsServiceFlow { UsServiceFlowRef 1; BufferControl { TargetBuffer 1000; } }
                       MaxCPE 2; UsServiceFlow { UsServiceFlowRef 2; BufferControl { TargetBuffer 2000; } } }""")
    assert [t.value for t in tree.find("24.35.2")] == [1000, 2000]
    assert [t.value for t in tree.find("24.1")] == [1, 2]
    assert tree.find("25") == [] and tree.find("24.99.1") == []
    tree.set_top(18, 8)  # replaces both MaxCPE where the first one was
    assert [(t.code, t.value) for t in tree.tlvs if t.code == 18] == [(18, 8)] and tree.tlvs[0].code == 18
    tree.set_top(3, 1)  # appended
    assert tree.tlvs[-1] == Tlv(3, 1)
    tree.set_top(68, Tlv(68, 50))
    assert decode(encode(tree)).find("68")[0].value == 50


def test_equality_ignores_mics_and_layout():
    tree = parse_text("Main { NetworkAccess 1; }")
    back = decode(encode(tree, b"k"))
    assert back == tree and back.cm_mic is not None and back.cmts_mic is not None
    assert back != ConfigTree([Tlv(3, 0)])


def test_edit_of_a_decoded_file_recomputes_the_cm_mic_and_keeps_odd_layouts_sane():
    data = b"\x03\x01\x01\x00\x12\x01\x02"  # pad byte between TLVs, no MICs, no end marker
    tree = decode(data)
    assert encode(tree) == data
    tree.set_top(18, 5)
    assert encode(tree) == b"\x03\x01\x01\x00\x12\x01\x05"
    tree.remove(18)  # structural edits fall back to the standard trailer
    out = encode(tree)
    assert out[:3] == b"\x03\x01\x01" and out[3:5] == b"\x06\x10" and len(out) % 4 == 0
