"""hfcprov.snmp.mibs: mibs/ and --mib-dir compiled with pysmi, loaded into pysnmp, agreeing with hfcprov.mib."""

from __future__ import annotations

import time

import pytest

from hfcprov import mib
from hfcprov.snmp import mibs


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mibcache")


@pytest.fixture(scope="module")
def view(cache):
    return mibs.mib_view(cache=cache)


def _own_modules():
    return sorted(mibs.sources())


def test_every_file_in_mibs_compiles(cache, view):
    folder = mibs.compile_mibs(cache=cache)
    shipped = set(mibs._shipped_by_pysnmp())
    own = _own_modules()
    assert len(own) == len([p for p in mib.MIB_DIR.iterdir() if p.is_file()])  # one module per file
    for module in own:
        if module in shipped:
            # pysnmp's full copy is the one loaded; the compact text must still be valid SMI for pysmi
            from pysmi.parser.dialect import smi_v1_relaxed
            from pysmi.parser.smi import parserFactory

            trees = parserFactory(**smi_v1_relaxed)().parse(mibs.sources()[module].text)
            assert len(trees) == 1, module
        else:
            assert (folder / f"{module}.py").is_file(), module
        assert view.mibBuilder.mibSymbols.get(module), f"pysnmp loaded nothing of {module}"


def test_pysnmp_and_the_cheap_index_agree_on_every_object(view):
    compiled = mibs.objects(view, _own_modules())
    checked = 0
    for name, obj in mib.index().by_name.items():
        if not obj.module:
            continue
        assert name in compiled, f"{obj.module}::{name} missing from pysnmp"
        module, oid, syntax = compiled[name]
        assert (module, oid) == (obj.module, obj.oid), name
        assert mibs.syntax_matches(obj.syntax, syntax), f"{name}: {obj.syntax} vs {type(syntax).__mro__}"
        if obj.enums:
            assert mibs.enums_of(syntax).items() >= obj.enums.items(), name
        checked += 1
    assert checked >= 60


def test_syntax_matches_can_fail(view):
    _, _, unsigned = mibs.objects(view, ["DOCS-QOS3-MIB"])["docsQosParamSetMaximumBuffer"]
    assert mibs.syntax_matches("Unsigned32", unsigned)
    assert not mibs.syntax_matches("OCTET STRING", unsigned)
    assert not mibs.syntax_matches("TruthValue", unsigned)


def test_compile_is_cached_by_the_sources_digest(cache, tmp_path):
    first = mibs.compile_mibs(cache=cache)
    started = time.monotonic()
    assert mibs.compile_mibs(cache=cache) == first
    assert time.monotonic() - started < 0.5  # no pysmi grammar built on a hit
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "HFCPROV-TEST-MIB.my").write_text(EXTRA_MIB)
    second = mibs.compile_mibs([extra], cache=cache)
    assert second != first and (second / "HFCPROV-TEST-MIB.py").is_file()
    assert not list(cache.glob(".build-*"))  # no half-built folder left behind


EXTRA_MIB = """
HFCPROV-TEST-MIB DEFINITIONS ::= BEGIN
IMPORTS MODULE-IDENTITY, OBJECT-TYPE, Unsigned32 FROM SNMPv2-SMI
        clabProjDocsis FROM CLAB-DEF-MIB;
hfcprovTestMib MODULE-IDENTITY
    LAST-UPDATED "202611220000Z" ORGANIZATION "t" CONTACT-INFO "t" DESCRIPTION "t"
    ::= { clabProjDocsis 999 }
hfcprovTestCounter OBJECT-TYPE
    SYNTAX      Unsigned32
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "an extra name"
    ::= { hfcprovTestMib 1 }
END
"""


def test_load_dirs_adds_the_operators_names(tmp_path, cache):
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "HFCPROV-TEST-MIB.my").write_text(EXTRA_MIB)
    (extra / "README").write_text("not a MIB module: skipped\n")
    assert mib.resolve("hfcprovTestCounter.0") is None
    try:
        assert mibs.load_dirs([extra], cache=cache) == 2  # the module identity and the counter
        assert mib.resolve("hfcprovTestCounter.0") == "1.3.6.1.4.1.4491.2.1.999.1.0"
        # a pysnmp engine created after --mib-dir knows the operator's names (the SNMPv3 path)
        from pysnmp.hlapi.v3arch.asyncio import ObjectIdentity, ObjectType

        from hfcprov.snmp.client import Credentials, PysnmpClient

        engine_view = PysnmpClient(Credentials(community="public"))._engine.cache["mibViewController"]
        obj = ObjectType(ObjectIdentity("HFCPROV-TEST-MIB", "hfcprovTestCounter", 0)).resolve_with_mib(engine_view)
        assert str(obj[0].get_oid()) == "1.3.6.1.4.1.4491.2.1.999.1.0"
    finally:
        for name in ("hfcprovTestCounter", "hfcprovTestMib"):
            obj = mib.index().by_name.pop(name, None)
            if obj:
                mib.index().by_oid.pop(obj.oid, None)
        mibs._loaded_view = None


@pytest.mark.parametrize("text,expected", [
    (("BROKEN-MIB DEFINITIONS ::= BEGIN\nIMPORTS enterprises FROM SNMPv2-SMI;\n"
      "foo OBJECT IDENTIFIER ::= { enterprises 99999\nbar OBJECT-TYPE SYNTAX\nEND\n"),
     "line 4: MIB syntax error pysmi cannot parse"),
    ("BROKEN-MIB DEFINITIONS ::= BEGIN\nIMPORTS foo FROM NOWHERE-MIB;\nbar OBJECT IDENTIFIER ::= { foo 1 }\nEND\n",
     "imports NOWHERE-MIB, which is in no MIB folder (add its file with --mib-dir)"),
    (("BROKEN-MIB DEFINITIONS ::= BEGIN\nIMPORTS OBJECT-TYPE FROM SNMPv2-SMI ifType FROM IF-MIB;\n"
     "bar OBJECT-TYPE SYNTAX INTEGER MAX-ACCESS read-only STATUS current DESCRIPTION \"\" ::= { ifType 1 }\nEND\n"),
     "imports ifType from IF-MIB, which hfcprov's compact copy lacks (add the full IF-MIB with --mib-dir)"),
])
@pytest.mark.slow
def test_a_broken_file_is_named_in_one_line(tmp_path, cache, text, expected):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "broken.mib").write_text(text)
    with pytest.raises(mib.MibError) as err:
        mibs.compile_mibs([bad], cache=cache)
    assert str(err.value).startswith(f"{bad / 'broken.mib'}: {expected}")
    assert "\n" not in str(err.value)
