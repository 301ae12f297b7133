"""The TLV table declares each shared subtree once; the expanded Spec tree is the flat table it replaced
(tests/config/data/tlv-table-flat.txt, the 1,542 rows as imported) except the disagreements fixed."""

from pathlib import Path

from hfcprov.config import dictionary, tlvdata
from hfcprov.config.dictionary import ROOT, lookup

FLAT = Path(__file__).parent / "data" / "tlv-table-flat.txt"
CLASSIFIERS, FLOWS, NESTED_43 = ("22", "23", "60"), ("24", "25"), ("22", "23", "24", "25", "26", "60")
EXTENDED_MIC = {"6": "ExtendedCMTSMICConfiguration", "6.1": "ExtendedCMTSMICHMACDigestType",
                "6.2": "ExtendedCMTSMICHMACBitmap", "6.3": "ExtendedCMTSMICHMACDigest"}


def span(text):
    return tuple(int(x) for x in text.split("..")) if text else None


def fixed(flat: dict) -> dict:
    """The flat table with the disagreements fixed (each from MULPI; see tlvdata's docstring)."""
    want = {path: list(row) for path, row in flat.items()}
    for c in CLASSIFIERS:
        want[f"{c}.10.3"][4] = (3, 3)  # EtherType/DSAP/MacType: 3 bytes (C.2.1.8.3), 23 had 0..3
        want[f"{c}.12.1"][4] = (3, 3)  # IPv6 traffic class low, high, mask (C.2.1.10.1), 23 had none
        want[f"{c}.11.2"][3] = (0, 4096)  # VlanID range of 22, 23/60 had none
    want["23.13"][5] = "MULPIv3.0-I24 Annex C.2.1.4.8"
    for path in ("60.5", "60.9.7", "60.9.8", "60.9.9", "60.9.10"):  # full-range: the same values
        want[path][3] = want[path.replace("60.", "22.", 1)][3]
    for f in FLOWS:
        want[f"{f}.8"][5] = "MULPIv3.0-I24 Annex C.2.2.7.2"
        for sub in ("8", "9", "10"):
            want[f"{f}.{sub}"][3] = None  # 24 had none, 25 the full uint32 range: the same values
    for c in NESTED_43:
        for sub, name in EXTENDED_MIC.items():
            want[f"{c}.43.{sub}"][0] = name
    want["71.38.3"][5] = "MULPIv3.1-I25 Annex C.2.2.9.13.3"  # was .34 (70.38.3 cites .3)
    return want


def expanded() -> dict:
    return {spec.path: [spec.name, spec.type, spec.rule, spec.vrange, spec.lrange, spec.spec_ref]
            for spec in ROOT.walk()}


def test_expanded_tree_is_the_flat_table_except_the_fixed_disagreements():
    flat = {}
    for line in FLAT.read_text().splitlines():
        path, name, typ, rule, vrange, lrange, ref = line.split("|")
        if path in dictionary.FRAGMENTED.keys() or path.isdigit() and int(path) in dictionary.FRAGMENTED:
            lrange = ""  # fragmented at the top: no length limit (the dictionary's rule, unchanged)
        flat[path] = [name, typ, rule, span(vrange), span(lrange), ref or None]
    assert expanded() == fixed(flat)
    assert len(flat) == 1542


def test_the_table_declares_each_shared_subtree_once():
    rows = tlvdata.ROWS.splitlines() + [r for t in tlvdata.SUBTREES.values() for r in t.splitlines()]
    assert len(rows) < 600  # was 1,542: 963 rows were copies
    mounts = [r.rsplit("|", 1)[1] for r in tlvdata.ROWS.splitlines() if "|@" in r]
    assert sorted(mounts) == ["@aggregate_service_flow:ds", "@aggregate_service_flow:us", "@classifier:drop",
                              "@classifier:ds", "@classifier:us", "@service_flow:ds", "@service_flow:us",
                              "@vendor_specific", "@vendor_specific"]
    assert lookup("70.1").name == "UpstreamServiceFlowReference" and lookup("71.1").name == "DownstreamServiceFlowReference"
    assert lookup("71.27").name == "DownstreamPeakTrafficRate" and lookup("70.42.10").name == "QPDrainRateExponent"
    # the old names of the nested Extended CMTS MIC and of 60's sub-TLVs are still read
    assert lookup("24.43.6").child_named("ExtendedCMTSMICHMACtype") is lookup("24.43.6.1")
    assert lookup("60.9").child_named("IPProtocol") is lookup("60.9.2") and lookup("22.9.2").name == "IpProto"
    assert lookup("25.1").name == "DsServiceFlowRef" and lookup("24.1").name == "UsServiceFlowRef"
    assert lookup("25.3") is None and lookup("25.17").name == "DsResequencing"


def test_a_new_sub_tlv_is_one_row(monkeypatch):
    row = "77|FutureSubTlv|uint8|fixed:1|0..3||DOCSIS 4.0"
    subtrees = dict(tlvdata.SUBTREES, service_flow=tlvdata.SUBTREES["service_flow"] + row + "\n",
                    vendor_specific=tlvdata.SUBTREES["vendor_specific"] + row + "\n")
    monkeypatch.setattr(tlvdata, "SUBTREES", subtrees)
    root = dictionary._build()
    paths = {s.path for s in root.walk() if s.name == "FutureSubTlv"}
    assert paths == {"24.77", "25.77", "43.77", *(f"{c}.43.77" for c in NESTED_43)}


def test_subtrees_built_on_first_use_are_the_same_from_every_thread():
    # mounted subtrees are built on first use (a per-file encode touches few); threads racing for one
    # must all get the one subtree, each mount built once, and a full walk must see every path
    import threading

    root = dictionary._build()
    assert "_mount" in root.children[24].__dict__ and "_mount" in root.children[43].__dict__
    found, start = [], threading.Barrier(8)

    def look():
        start.wait()
        spec = root
        for code in (24, 43, 5, 1):
            spec = spec.children[code]
        found.append((spec, root.children[24].by_name["VendorSpecific"], root.children[43].vendor_specific))

    threads = [threading.Thread(target=look) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 8 and len({tuple(map(id, f[:2])) for f in found}) == 1 and all(f[2] for f in found)
    assert found[0][0].path == "24.43.5.1"
    assert sum(1 for _ in root.walk()) == sum(1 for _ in ROOT.walk()) == 1542
    assert not any("_mount" in s.__dict__ for s in root.walk())


def test_a_missing_attribute_of_a_spec_is_still_an_attribute_error():
    import pytest

    with pytest.raises(AttributeError):
        lookup("24").no_such_field  # noqa: B018
    assert not hasattr(dictionary._build().children[22], "no_such_field")


def test_a_broken_table_is_refused_when_built(monkeypatch):
    import pytest

    monkeypatch.setattr(tlvdata, "ROWS", tlvdata.ROWS + "200.1|Orphan|uint8|fixed:1|||\n")
    with pytest.raises(RuntimeError, match="200.1 has no parent row"):
        dictionary._build()
    monkeypatch.setattr(tlvdata, "ROWS", tlvdata.ROWS.replace("200.1|", "5.99.1|"))
    with pytest.raises(RuntimeError, match="5.99.1 has no parent row"):  # nested rows: when first used
        dictionary._build().children[5].children
