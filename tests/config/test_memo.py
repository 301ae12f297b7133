"""Each spec remembers values it read from text and bytes it encoded: the memo must never change a result."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hfcprov.config import ConfigError, encode, parse_text, render_text
from hfcprov.config import dictionary
from hfcprov.config.dictionary import ROOT

from .strategies import trees

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _forget():
    for spec in [ROOT, *ROOT.walk()]:
        spec._parsed.clear()
        spec._encoded.clear()


def _encoded_or_error(tree):
    try:
        return encode(tree)
    except ConfigError as err:
        return ("error", err.message)


@SETTINGS
@given(trees())
def test_remembered_results_equal_fresh_ones(tree):
    text = render_text(tree)
    first_tree, first_bytes = parse_text(text), _encoded_or_error(tree)
    again_tree, again_bytes = parse_text(text), _encoded_or_error(tree)  # now from the memo
    _forget()
    assert again_tree == first_tree == parse_text(text)
    assert again_bytes == first_bytes == _encoded_or_error(tree)


def test_a_value_of_another_type_is_not_taken_for_a_remembered_one():
    spec = ROOT.children[3]  # NetworkAccess, uint8
    assert spec.encode(1) == b"\x01"
    try:
        spec.encode(True)  # equal to 1 and same hash: must still go through the value type
    except ConfigError:
        pass
    assert (bool, True) not in spec._encoded or spec._encoded[(bool, True)] == spec.encode(True)
    assert spec._encoded[(int, 1)] == b"\x01"


def test_errors_are_not_remembered():
    spec = ROOT.children[3]
    for _ in range(2):
        try:
            spec.from_text("lots")
            raise AssertionError("'lots' is not a NetworkAccess value")
        except ConfigError:
            pass
    assert "lots" not in spec._parsed


def test_the_memo_is_bounded(monkeypatch):
    monkeypatch.setattr(dictionary, "MEMO_SIZE", 8)
    spec = ROOT.children[11]  # SnmpMibObject
    spec._parsed.clear()
    for i in range(50):
        spec.from_text(f"1.3.6.1.2.1.1.{i}.0 Integer {i}")
    assert len(spec._parsed) <= 8
    parsed = parse_text("Main { SnmpMibObject 1.3.6.1.2.1.1.5.0 Integer 5; }")
    assert parsed.tlvs[0].value.value == 5


_CONFIG_CHARS = st.sampled_from(list('abcXYZ019.;{}"\\ \t\r\n#/*-_') + ["é", "Main", "SnmpMibObject", "//", "0x"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_CONFIG_CHARS, max_size=60).map("".join))
def test_remembered_line_tokens_equal_a_scan_of_the_whole_text(text):
    from hfcprov.config import text as text_form

    def outcome(scan):
        try:
            return scan()
        except ConfigError as err:
            return ("error", err.message, err.line)

    whole = outcome(lambda: text_form._scan(text, "<t>", 1))
    assert outcome(lambda: text_form._tokens(text, "<t>")) == whole
    assert outcome(lambda: text_form._tokens(text, "<t>")) == whole  # second time: from the memo


@SETTINGS
@given(st.lists(trees(), min_size=1, max_size=3))
def test_a_decode_with_a_memo_is_the_decode_without(trees_):
    """``decode_node(..., memo=)`` (lint's reading of many files' TLVs) gives the same trees, and the same
    warnings, as a decode without it, whatever files the memo has seen."""
    from hfcprov.config.codec import content_items
    from hfcprov.config.tlvio import decode_node

    memo: dict = {}
    for tree in trees_ * 2:  # the second pass reads every sub-TLV from the memo
        try:
            items = content_items(tree.tlvs)
        except ConfigError:
            continue
        for code, whole in items:
            if len(whole) != whole[1] + 2:
                continue
            plain_warnings, memo_warnings = [], []
            plain = decode_node(ROOT.children.get(code), code, whole[2:], 0, str(code), plain_warnings)
            remembered = decode_node(ROOT.children.get(code), code, whole[2:], 0, str(code), memo_warnings,
                                     memo=memo)
            assert remembered == plain
            assert [str(w) for w in memo_warnings] == [str(w) for w in plain_warnings]
