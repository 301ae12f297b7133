"""hfcprov.mib.compiler: --mib-dir folders compiled with pysmi into the name index.

Every shipped module compiles with pysmi and pysmi agrees with hfcprov's own SMI reader on every
object; a folder with broken modules still loads, each failure one line naming the file and why;
the docsis C tool's own MIB folder loads without a traceback (when the built tool is given).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hfcprov import mib
from hfcprov.mib import compiler

pytest.importorskip("pysmi", reason="pysmi not installed")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("mibcache")


@pytest.fixture(scope="module")
def shipped(cache):
    return compiler.compile_mibs(cache=cache)


def test_every_shipped_module_compiles(shipped):
    assert compiler.failures(shipped) == []
    modules = compiler.sources()
    assert len(modules) == len(mib.shipped_files())  # one module per file
    for module in modules:
        assert (shipped / f"{module}.json").is_file(), module


def test_pysmi_and_the_cheap_reader_agree_on_every_object(shipped):
    idx = mib.index()
    checked = 0
    for module in compiler.sources():
        doc = json.loads((shipped / f"{module}.json").read_text())
        for name, node in doc.items():
            if not isinstance(node, dict) or "oid" not in node or node.get("class") in (
                    "objectgroup", "notificationgroup", "modulecompliance"):
                continue
            ours = idx.by_module.get((module, name))
            assert ours is not None, f"{module}::{name} missing from hfcprov.mib"
            assert ours.oid == node["oid"], name
            enum = node.get("syntax", {}).get("constraints", {}).get("enumeration")
            if enum and node.get("syntax", {}).get("type") in ("INTEGER", "Integer32"):
                assert ours.enums == {v: k for k, v in enum.items()}, name
            if node.get("indices"):
                assert ours.index == tuple((i["object"], bool(i["implied"])) for i in node["indices"]), name
            checked += 1
    assert checked > 1900


def test_compile_is_cached_by_the_sources_digest(cache, shipped, tmp_path):
    started = time.process_time()
    assert compiler.compile_mibs(cache=cache) == shipped
    assert time.process_time() - started < 0.5  # no pysmi grammar built on a hit
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "HFCPROV-TEST-MIB.my").write_text(EXTRA_MIB)
    second = compiler.compile_mibs([extra], cache=cache)
    assert second != shipped and (second / "HFCPROV-TEST-MIB.json").is_file()
    assert not list(cache.glob(".build-*"))  # no half-built folder left behind


EXTRA_MIB = """
HFCPROV-TEST-MIB DEFINITIONS ::= BEGIN
IMPORTS MODULE-IDENTITY, OBJECT-TYPE, Unsigned32 FROM SNMPv2-SMI
        RowPointer FROM SNMPv2-TC
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
hfcprovTestPointer OBJECT-TYPE
    SYNTAX      RowPointer
    MAX-ACCESS  read-write
    STATUS      current
    DESCRIPTION "its DEFVAL names zeroDotZero (pysmi once failed with KeyError: 'zeroDotZero')"
    DEFVAL      { zeroDotZero }
    ::= { hfcprovTestMib 2 }
END
"""

BROKEN = {
    "syntax.mib": ("BROKEN-SYNTAX-MIB DEFINITIONS ::= BEGIN\nIMPORTS enterprises FROM SNMPv2-SMI;\n"
                   "foo OBJECT IDENTIFIER ::= { enterprises 99999\nbar OBJECT-TYPE SYNTAX\nEND\n",
                   "line 4: MIB syntax error pysmi cannot parse (offset 139)"),
    "orphan.mib": ("BROKEN-IMPORT-MIB DEFINITIONS ::= BEGIN\nIMPORTS foo FROM NOWHERE-MIB;\n"
                   "bar OBJECT IDENTIFIER ::= { foo 1 }\nEND\n",
                   "imports NOWHERE-MIB, which is in no MIB folder (add its file with --mib-dir)"),
}


def _load_in_child(folders, cache, names):
    """load_mib_dirs in a fresh process (the index is process-wide): (warnings, {name: oid})."""
    code = ("import json, sys\nfrom hfcprov import mib\nw = []\n"
            "mib.load_mib_dirs(json.loads(sys.argv[1]), warn=w.append)\n"
            "print(json.dumps([w, {n: mib.resolve(n) for n in json.loads(sys.argv[2])}]))\n")
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    r = subprocess.run([sys.executable, "-c", code, json.dumps([str(f) for f in folders]), json.dumps(names)],
                       capture_output=True, text=True, timeout=900, env=env, check=False)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-3000:]
    return json.loads(r.stdout)


def test_a_folder_with_broken_modules_still_loads_the_good_ones(tmp_path, cache):
    folder = tmp_path / "vendor"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "HFCPROV-TEST-MIB").write_text(EXTRA_MIB)  # subfolders are read too
    for name, (text, _why) in BROKEN.items():
        (folder / name).write_text(text)
    (folder / "README").write_text("not a MIB module: skipped\n")
    warnings, names = _load_in_child([folder], tmp_path / "cache",
                                     ["hfcprovTestCounter.0", "hfcprovTestPointer.0", "sysDescr.0"])
    assert names == {"hfcprovTestCounter.0": "1.3.6.1.4.1.4491.2.1.999.1.0",
                     "hfcprovTestPointer.0": "1.3.6.1.4.1.4491.2.1.999.2.0", "sysDescr.0": "1.3.6.1.2.1.1.1.0"}
    assert sorted(warnings) == sorted(f"{folder / name}: {why}" for name, (_text, why) in BROKEN.items())


def test_without_a_warning_callback_a_broken_module_is_an_error(tmp_path, cache):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "syntax.mib").write_text(BROKEN["syntax.mib"][0])
    with pytest.raises(mib.MibError) as err:
        compiler.load_dirs([folder], cache=cache)
    assert str(err.value).startswith(f"{folder / 'syntax.mib'}: line 4:") and "\n" not in str(err.value)


def _c_tool_mibs() -> Path | None:
    folder = os.environ.get("HFCPROV_DOCSIS_MIBS")
    if folder:
        return Path(folder)
    tool = os.environ.get("HFCPROV_DOCSIS_TOOL")
    if tool and (Path(tool).resolve().parents[1] / "mibs").is_dir():  # <checkout>/src/docsis -> <checkout>/mibs
        return Path(tool).resolve().parents[1] / "mibs"
    return None


@pytest.mark.slow
@pytest.mark.skipif(_c_tool_mibs() is None, reason="no docsis C tool MIB folder (set HFCPROV_DOCSIS_MIBS or "
                                                   "HFCPROV_DOCSIS_TOOL to the built tool)")
def test_the_c_tools_own_mib_folder_loads_without_a_traceback(tmp_path):
    folder = _c_tool_mibs()
    warnings, names = _load_in_child([folder], tmp_path / "cache", ["docsIf31CmStatusOfdmaUsTable",
                                                                     "pktcMtaDevEnabled.0", "diffServDataPathStatus"])
    assert names["pktcMtaDevEnabled.0"] == "1.3.6.1.4.1.4491.2.2.1.1.1.7.0"
    assert names["diffServDataPathStatus"]  # only in the C tool's DIFFSERV-MIB
    for line in warnings:  # each module pysmi cannot compile: one line, its file first
        assert "\n" not in line and line.startswith(str(folder)) and ": " in line
