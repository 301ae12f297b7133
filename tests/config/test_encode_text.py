"""encode_text remembers top-level statements: it must give what encode(parse_text()) gives, bytes or error."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, encode, encode_text, parse_text, render_text
from hfcprov.config import text as text_form

from .strategies import trees

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def reference(text, secret=None):
    try:
        return encode(parse_text(text, "<t>"), secret)
    except ConfigError as err:
        return ("error", str(err))


def remembered(text, secret=None):
    try:
        return encode_text(text, secret, "<t>")
    except ConfigError as err:
        return ("error", str(err))


def forget():
    text_form._STATEMENTS.clear()
    text_form._LINES.clear()


@SETTINGS
@given(trees(), st.one_of(st.none(), st.binary(min_size=1, max_size=16)), st.sampled_from(["\t", "  ", ""]))
@pytest.mark.slow
def test_rendered_trees_encode_as_parse_then_encode(tree, secret, indent):
    text = render_text(tree, indent=indent)
    want = reference(text, secret)
    forget()
    assert remembered(text, secret) == want  # every statement new
    assert remembered(text, secret) == want  # every statement remembered


# Edits a hand or a template could make: lines lost, repeated, swapped or joined; stray braces and words.
_JUNK = st.sampled_from(["}", "{", ";", "Main", "Main {", "/* x */", "/*", "*/", '"', "// c", "# c", "",
                         "NetworkAccess 1;", "MaxCPE 300;", "UsServiceFlow", "NetworkAccess", "1;",
                         "GenericTLV TlvCode 200 TlvLength 1 TlvValue 0x01;", "GenericTLV TlvCode 6 TlvValue 0x01;",
                         "UsServiceFlow { UsServiceFlowRef 1; }", "Main { NetworkAccess 1; }", "\u00e9"])


@st.composite
def edited_texts(draw):
    lines = render_text(draw(trees(max_tlvs=5)), indent=draw(st.sampled_from(["\t", " "]))).split("\n")
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["drop", "repeat", "swap", "join", "insert", "append"]))
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "join" and i + 1 < len(lines):
            lines[i:i + 2] = [lines[i] + " " + lines[i + 1]]
        elif op == "insert":
            lines.insert(i, draw(_JUNK))
        elif op == "append":
            lines[i] += " " + draw(_JUNK)
    return "\n".join(lines)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_texts())
@pytest.mark.slow
def test_edited_texts_give_the_same_bytes_or_the_same_error(text):
    want = reference(text)
    assert remembered(text) == want
    assert remembered(text) == want


@settings(max_examples=300, deadline=None)
@given(st.lists(_JUNK, max_size=12).map("\n".join))
def test_junk_gives_the_same_error(text):
    assert remembered(text) == reference(text)


def test_a_statement_is_remembered_once_parsed_and_an_error_never():
    forget()
    text = "Main {\n\tNetworkAccess 1;\n\tMaxCPE 4;\n}\n"
    first = encode_text(text)
    assert text_form._STATEMENTS["\tMaxCPE 4;"] == ((18, b"\x12\x01\x04"),)
    assert encode_text(text) == first
    for _ in range(2):
        try:
            encode_text("Main {\n\tMaxCPE 999;\n}\n")
            raise AssertionError("MaxCPE 999 is out of range")
        except ConfigError as err:
            assert err.line == 2
    assert "\tMaxCPE 999;" not in text_form._STATEMENTS


def test_a_top_level_line_is_not_taken_for_the_same_line_inside_a_block():
    forget()
    top = "Main {\n  MaxRateSustained 5;\n}\n"
    flow = "Main {\n  UsServiceFlow {\n  UsServiceFlowRef 1;\n  MaxRateSustained 5;\n  }\n}\n"
    assert remembered(top) == reference(top)  # not a top-level TLV: an error, remembered nowhere
    assert remembered(flow) == reference(flow) == encode_text(flow)
    assert remembered(top) == reference(top)


def test_errors_keep_their_line_numbers_after_remembered_lines():
    forget()
    good = "Main {\n" + "".join(f"  SnmpMibObject 1.3.6.1.2.1.1.{i}.0 Integer {i};\n" for i in range(5))
    encode_text(good + "}\n")
    try:
        encode_text(good + "  MaxCPE lots;\n}\n")
        raise AssertionError("'lots' is not a number")
    except ConfigError as err:
        assert (err.line, err.path) == (7, "18")


def test_the_statement_memo_is_bounded(monkeypatch):
    forget()
    monkeypatch.setattr(text_form, "_STATEMENT_MEMO_SIZE", 8)
    for i in range(50):
        encode_text(f"Main {{\n  SnmpMibObject 1.3.6.1.2.1.1.{i}.0 Integer {i};\n}}\n")
    assert len(text_form._STATEMENTS) <= 8


def test_a_compound_block_over_several_lines_is_remembered_as_one_statement():
    forget()
    block = "\tUsServiceFlow\n\t{\n\t\tUsServiceFlowRef 1;\n\t\tBufferControl { TargetBuffer 16384; }\n\t}"
    text = f"Main\n{{\n\tNetworkAccess 1;\n{block}\n}}\n"
    assert encode_text(text) == encode(parse_text(text))
    assert block in text_form._STATEMENTS
