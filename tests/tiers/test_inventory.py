"""Inventory readers: CSV and YAML/JSON, MAC normalisation, bad rows named by line."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hfcprov.macaddr import colon as mac_colon
from hfcprov.macaddr import normalize as normalize_mac
from hfcprov.tiers.inventory import InventoryError, check_row, load_inventory, read_rows


def test_csv_rows_with_overrides_and_blank_cells(tmp_path):
    p = tmp_path / "modems.csv"
    p.write_text("mac,tier,us_rate,max_cpe\n00:11:22:AA:BB:CC,res-100x10,,2\n# a comment\n0011.22aa.bbcd,res-50x5,7M,\n")
    rows = load_inventory(p)
    assert rows == [
        {"mac": "001122aabbcc", "tier": "res-100x10", "max_cpe": "2"},
        {"mac": "001122aabbcd", "tier": "res-50x5", "us_rate": "7M"},
    ]


def test_yaml_with_defaults_and_json(tmp_path):
    y = tmp_path / "modems.yaml"
    y.write_text("defaults:\n  tier: res-50x5\nmodems:\n  - mac: '00:11:22:33:44:55'\n  - {mac: 001122334456x}\n")
    with pytest.raises(InventoryError, match="modems.yaml entry 2: bad MAC"):
        load_inventory(y)
    j = tmp_path / "m.json"
    j.write_text('[{"mac": "00-11-22-33-44-55", "tier": "business-voice", "us_rate": 20000000}]')
    assert load_inventory(j) == [{"mac": "001122334455", "tier": "business-voice", "us_rate": 20000000}]


def test_unquoted_yaml_mac_is_caught(tmp_path):
    y = tmp_path / "m.yaml"
    y.write_text("- mac: '001122334455'\n- mac: 12:34:56:12:34:56\n- mac: 001122334455\n")
    # YAML 1.1 reads the second as a base-60 integer and the third as octal
    with pytest.raises(InventoryError, match="entry 2: mac must be quoted"):
        load_inventory(y)
    rows = read_rows(y)
    with pytest.raises(InventoryError, match="entry 3: mac must be quoted"):
        check_row(rows[2])


@pytest.mark.parametrize(
    "text, message",
    [
        ("tier\nres\n", "line 1: header has no 'mac' column"),
        ("mac,tier\n001122334455,a\nnot-a-mac,b\n", "m.csv line 3: bad MAC address 'not-a-mac'"),
        ("mac,tier\n001122334455,a,extra\n", "m.csv line 2: 3 cells but the header has 2 columns"),
        ("mac,tier\n001122334455,a\n00:11:22:33:44:55,b\n", "line 3: mac 001122334455 already on m.csv line 2"),
        ("mac,us rate\n001122334455,5M\n", "line 2: column 'us rate' is not a usable variable name"),
    ],
)
def test_bad_rows_name_their_line(tmp_path, text, message):
    p = tmp_path / "m.csv"
    p.write_text(text)
    with pytest.raises(InventoryError) as err:
        load_inventory(p)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_read_rows_lets_a_build_skip_bad_rows(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("mac\nzz\n001122334455\n")
    rows = read_rows(p)
    with pytest.raises(InventoryError):
        check_row(rows[0])
    assert check_row(rows[1])["mac"] == "001122334455"


def test_unreadable_and_malformed_files(tmp_path):
    with pytest.raises(InventoryError, match="cannot read"):
        load_inventory(tmp_path / "missing.csv")
    bad = tmp_path / "m.yaml"
    bad.write_text("modems: [\n")
    with pytest.raises(InventoryError, match="m.yaml line"):
        load_inventory(bad)


@given(st.binary(min_size=6, max_size=6), st.sampled_from([":", "-", ""]), st.booleans())
def test_mac_forms_normalise_to_one(raw, sep, upper):
    text = sep.join(f"{b:02x}" for b in raw)
    text = text.upper() if upper else text
    assert normalize_mac(text) == raw.hex()
    assert mac_colon(text) == ":".join(f"{b:02x}" for b in raw)


_cell = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12).map(str.strip)


@given(st.lists(st.tuples(st.binary(min_size=6, max_size=6), _cell, _cell), min_size=1, max_size=8, unique_by=lambda r: r[0]))
def test_any_csv_written_by_a_spreadsheet_reads_back(rows):
    import csv
    import io
    import tempfile
    from pathlib import Path

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["mac", "tier", "note"])
    for mac, tier, note in rows:
        w.writerow([mac.hex(":"), tier, note])
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.csv"
        p.write_text(buf.getvalue())
        got = load_inventory(p)
    assert [g["mac"] for g in got] == [mac.hex() for mac, _, _ in rows]
    for g, (_, tier, note) in zip(got, rows):
        assert g.get("tier") == (tier or None) and g.get("note") == (note or None)
