"""An operator's MIB folders (``--mib-dir``) compiled with pysmi into hfcprov's name index.

pysmi parses every module of the folders (subfolders included) together with ``mibs/`` and
writes its JSON form of each (names, OIDs, syntax, enums, indexes) into a cache folder keyed
by the sources' digest, so only the first run with a given set of files pays for the compile;
``load_dirs`` adds what they define to ``hfcprov.mib``'s index. The SMI's base modules
(SNMPv2-SMI/TC/CONF, RFC1155-SMI, ...) are read from the folders when they hold them, else
from text ``symbols_text`` writes out of pysnmp's compiled copies, so no SMI source text
has to be on the machine.

A module pysmi cannot compile (a syntax error, an import no folder holds, a pysmi failure) is
reported in one line naming its file and the reason; the other modules still load.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hfcprov.mib import MibError, index, shipped_files, smi
from hfcprov.mib.index import MibObject

# pysmi reads these as the SMI's own definitions (JsonCodeGen.baseMibs)
BASE_MODULES = ("RFC1065-SMI", "RFC1155-SMI", "RFC1158-MIB", "RFC-1212", "RFC1213-MIB", "RFC-1215", "SNMPv2-SMI",
                "SNMPv2-TC", "SNMPv2-TM", "SNMPv2-CONF")
_FORMAT = "json-2"  # bump when what is cached changes


@dataclass(frozen=True)
class MibSource:
    module: str  # the name after DEFINITIONS, e.g. DOCS-IF-MIB
    path: Path
    text: str


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise MibError(f"{folder}: --mib-dir is not a folder")
    try:
        return sorted(p for p in folder.rglob("*") if p.is_file() and not any(
            part.startswith(".") for part in p.relative_to(folder).parts) and p.suffix not in (".md", ".py", ".pyc"))
    except OSError as err:
        raise MibError(f"{folder}: cannot read MIB folder: {err.strerror}") from None


def sources(dirs=()) -> dict[str, MibSource]:
    """Module name -> source text of ``mibs/`` then each of ``dirs`` (subfolders included, in name
    order); a later file's module wins (an operator's full DOCS-IF-MIB replaces hfcprov's copy).
    Files that hold no ``DEFINITIONS ::= BEGIN`` are not MIB modules and are skipped."""
    found: dict[str, MibSource] = {}
    for path in [*shipped_files(), *(p for folder in dirs for p in _files(Path(folder)))]:
        try:
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError as err:
            raise MibError(f"{path}: cannot read MIB file: {err.strerror}") from None
        if "DEFINITIONS" not in text:
            continue
        for module, _body in smi.modules(smi.strip(text)):
            found[module] = MibSource(module, path, text)
    return found


def cache_root() -> Path:
    from hfcprov.cachedir import cache_root as root

    return root() / "mibs"


def _digest(found: dict[str, MibSource]) -> str:
    import pysmi

    h = hashlib.sha256(f"{_FORMAT} pysmi {pysmi.__version__}\n".encode())
    for module in sorted(found):
        h.update(f"{module}\n{found[module].path.name}\n{len(found[module].text)}\n{found[module].text}".encode())
    return h.hexdigest()[:20]


def compile_mibs(dirs=(), cache: Path | None = None, found: dict[str, MibSource] | None = None) -> Path:
    """Compile ``mibs/`` and ``dirs`` with pysmi; the folder of the JSON modules (one
    ``MODULE.json`` each, and ``failures.txt``: one line per module that did not compile).
    Reuses the folder of an earlier compile of the same texts."""
    found = sources(dirs) if found is None else found
    dest = (cache or cache_root()) / _digest(found)
    if (dest / ".complete").exists():
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable home (service account): a per-user temp cache still saves recompiles
        dest = Path(tempfile.gettempdir()) / f"hfcprov-mibs-{os.getuid()}" / dest.name
        if (dest / ".complete").exists():
            return dest
        dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=dest.parent))
    try:
        failures = _compile_into(found, work)
        (work / "failures.txt").write_text("".join(f"{line}\n" for line in failures))
        (work / ".complete").write_text("")
        try:
            work.rename(dest)
        except OSError:  # another process finished the same compile first
            pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest


def failures(folder: Path) -> list[str]:
    """The one-line reasons of the modules a compile left out."""
    path = folder / "failures.txt"
    return [line for line in path.read_text().splitlines() if line] if path.exists() else []


def _compile_into(found: dict[str, MibSource], dest: Path) -> list[str]:
    """JSON of every module of ``found`` into ``dest``; the failure lines."""
    from pysmi.codegen.jsondoc import JsonCodeGen
    from pysmi.compiler import MibCompiler
    from pysmi.parser.dialect import smi_v1_relaxed
    from pysmi.parser.smi import parserFactory
    from pysmi.reader.callback import CallbackReader
    from pysmi.searcher.stub import StubSearcher
    from pysmi.writer.callback import CallbackWriter

    stand_ins: dict[str, str] = {}

    def text_of(name: str, _ctx) -> str:
        if name in found:
            return found[name].text
        if name in BASE_MODULES:  # the SMI's own modules, not in any folder: pysnmp's symbols
            if name not in stand_ins:
                stand_ins[name] = symbols_text(name)
            return stand_ins[name]
        return ""

    def write(name, data, _ctx):
        (dest / f"{name}.json").write_text(data)

    def compiler():
        c = MibCompiler(parserFactory(**smi_v1_relaxed)(), JsonCodeGen(), CallbackWriter(write))
        c.add_sources(CallbackReader(text_of))
        c.add_searchers(StubSearcher(*BASE_MODULES))
        return c

    wanted = [m for m in sorted(found) if m not in BASE_MODULES]
    try:
        status = compiler().compile(*wanted, noDeps=True, genTexts=False, ignoreErrors=True)
    except Exception:  # noqa: BLE001 - a pysmi bug on one module: compile them one by one to name it
        status = {}
        for module in wanted:
            try:
                status.update(compiler().compile(module, noDeps=True, genTexts=False, ignoreErrors=True))
            except Exception as err:  # noqa: BLE001
                status[module] = _Failed(f"pysmi failed: {type(err).__name__} {err}")
    lines = []
    for module in wanted:
        st = status.get(module)
        if st in ("compiled", "untouched") and (dest / f"{module}.json").exists():
            continue
        lines.append(_failure_line(module, st, status, found))
    return lines


class _Failed(str):
    """A status for a module whose compile raised."""

    @property
    def error(self):
        return str(self)


# RFC 2578 section 7.1: the application types, which pysnmp implements in code.
_SMI_TYPES = """
Integer32 ::= INTEGER (-2147483648..2147483647)
IpAddress ::= [APPLICATION 0] IMPLICIT OCTET STRING (SIZE (4))
Counter32 ::= [APPLICATION 1] IMPLICIT INTEGER (0..4294967295)
Gauge32 ::= [APPLICATION 2] IMPLICIT INTEGER (0..4294967295)
Unsigned32 ::= [APPLICATION 2] IMPLICIT INTEGER (0..4294967295)
TimeTicks ::= [APPLICATION 3] IMPLICIT INTEGER (0..4294967295)
Opaque ::= [APPLICATION 4] IMPLICIT OCTET STRING
Counter64 ::= [APPLICATION 6] IMPLICIT INTEGER (0..18446744073709551615)
"""
_SYNTAX_TEXT = {"OctetString": "OCTET STRING", "ObjectIdentifier": "OBJECT IDENTIFIER", "Integer32": "Integer32",
                "Integer": "INTEGER", "Unsigned32": "Unsigned32", "Gauge32": "Gauge32", "TimeTicks": "TimeTicks",
                "Counter32": "Counter32", "Counter64": "Counter64", "IpAddress": "IpAddress", "Bits": "BITS"}


def symbols_text(module: str) -> str:
    """SMI text that declares what a base module defines (OIDs and textual conventions), built
    from pysnmp's compiled copy: pysmi needs the symbols of SNMPv2-SMI, SNMPv2-TC and the like
    to compile modules importing them, and their source text may not be on the machine."""
    from pysnmp.smi import builder

    mib_builder = builder.MibBuilder()
    try:
        mib_builder.load_modules(module)
    except Exception:  # noqa: BLE001 - not a pysnmp module after all: no symbols
        return ""
    lines = [f"{module} DEFINITIONS ::= BEGIN"]
    if module == "SNMPv2-SMI":
        lines.append(_SMI_TYPES)
    for name, node in mib_builder.mibSymbols[module].items():
        oid = getattr(node, "name", None)
        if isinstance(node, type):
            lines.extend(_tc_text(name, node))
        elif isinstance(oid, tuple) and oid and oid[0] in (0, 1, 2) and re.fullmatch(r"[a-z][\w-]*", name) \
                and name != "iso":  # zeroDotZero is { 0 0 }: DEFVALs of RowPointer columns name it
            lines.append(f"{name} OBJECT IDENTIFIER ::= {{ {' '.join(map(str, oid))} }}" if oid[0] != 1
                         else f"{name} OBJECT IDENTIFIER ::= {{ iso {' '.join(map(str, oid[1:]))} }}")
    lines.append("END")
    return "\n".join(lines) + "\n"


def _tc_text(name: str, cls) -> list[str]:
    mro = [c.__name__ for c in cls.__mro__]
    if "TextualConvention" not in mro or name == "TextualConvention" or not name[:1].isupper():
        return []
    base = next((_SYNTAX_TEXT[c] for c in mro[1:] if c in _SYNTAX_TEXT), None)
    if base is None:
        return []
    named = getattr(cls, "namedValues", None)
    if named and base != "OCTET STRING":
        items = ", ".join(f"{label}({int(value)})" for label, value in named.items())
        base = f"{'BITS' if base == 'BITS' else 'INTEGER'} {{ {items} }}"
    return [f'{name} ::= TEXTUAL-CONVENTION\n    STATUS current\n    DESCRIPTION ""\n    SYNTAX {base}']


def _imports(text: str, module: str) -> bool:
    return f"FROM {module}" in " ".join(text.split())


def _failure_line(module: str, st, status, found) -> str:
    path = found[module].path
    err = getattr(st, "error", None)
    if err is None:  # failed because something it imports failed or is missing
        for other, other_st in sorted(status.items()):
            if other != module and other_st in ("failed", "missing") and _imports(found[module].text, other):
                if other in found:
                    return f"{path}: imports {other}, which did not compile ({found[other].path})"
                return f"{path}: imports {other}, which is in no MIB folder (add its file with --mib-dir)"
        return f"{path}: pysmi could not compile {module} ({st or 'no output'})"
    text = " ".join(str(err).split()).replace(f" at MIB {module}", "")
    listed = re.match(r"(.*?: )(\S.*)", text)
    if listed and text.count(",") > 4:  # pysmi lists every symbol: the first few say enough
        names = listed.group(2).split(", ")
        text = f"{listed.group(1)}{', '.join(names[:4])} (and {len(names) - 4} more)"
    missing = re.search(r'no module "([^"]+)" in symbolTable', text)
    if missing:
        return f"{path}: imports {missing.group(1)}, which is in no MIB folder (add its file with --mib-dir)"
    symbol = re.search(r'no symbol "([^"]+)" in module "([^"]+)"', text)
    if symbol:
        return f"{path}: imports {symbol.group(1)} from {symbol.group(2)}, which does not define it"
    grammar = re.search(r"Bad grammar near offset (\d+), line (\d+)", text)
    if grammar:
        return f"{path}: line {grammar.group(2)}: MIB syntax error pysmi cannot parse (offset {grammar.group(1)})"
    return f"{path}: pysmi cannot compile {module}: {text}"


def load_dirs(dirs, cache: Path | None = None, warn=None) -> int:
    """``--mib-dir``: compile the folders with ``mibs/`` and add every name, OID, enum label and
    index their modules define to ``hfcprov.mib``'s index (they win over the shipped copies).
    Each module that did not compile goes to ``warn`` as one line (``MibError`` without ``warn``).
    Returns how many names were added or changed."""
    found = sources(dirs)
    folder = compile_mibs(dirs, cache, found)
    lines = failures(folder)
    shipped = {p.resolve() for p in shipped_files()}
    ours = {m for m, s in found.items() if s.path.resolve() not in shipped}
    lines = [line for line in lines if any(line.startswith(f"{found[m].path}:") for m in ours)]
    if lines and warn is None:
        raise MibError(lines[0])
    for line in lines:
        warn(line)
    docs = [json.loads((folder / f"{m}.json").read_text()) for m in sorted(ours) if (folder / f"{m}.json").exists()]
    return add_json(index(), docs)


def add_json(idx, docs: list[dict]) -> int:
    """Add modules of pysmi's JSON to ``idx`` (their textual conventions first: a module may use
    another's); how many names were added or changed."""
    for doc in docs:
        for name, node in doc.items():
            if isinstance(node, dict) and node.get("class") == "textualconvention":
                idx.types[name] = _json_syntax(node.get("type", {}), idx.types)
    changed = 0
    for doc in docs:
        module = doc.get("meta", {}).get("module", "")
        for name, node in doc.items():
            if not isinstance(node, dict) or "oid" not in node or node.get("class") in (
                    "objectgroup", "notificationgroup", "modulecompliance", "agentcapabilities"):
                continue
            syntax = node.get("syntax") or {}
            info = _json_syntax(syntax, idx.types) if syntax else smi.TypeInfo("", {})
            kind = "INTEGER" if "enumeration" in syntax.get("constraints", {}) else syntax.get("type", "")
            index_ = tuple((i["object"], bool(i.get("implied"))) for i in node.get("indices", []))
            augments = (node.get("augmention") or {}).get("object")
            old = idx.by_name.get(name)
            if old is None or old.oid != node["oid"] or (info.enums and old.enums != info.enums):
                changed += 1
            obj = MibObject(name, node["oid"], module, kind, dict(info.enums), index_, augments, info.fixed)
            idx.by_module[(module, name)] = obj
            idx.by_name[name] = obj
            idx.by_oid[obj.oid] = obj
    return changed


def _json_syntax(syntax: dict, types) -> smi.TypeInfo:
    kind = syntax.get("type", "")
    constraints = syntax.get("constraints", {})
    base = smi.type_info(kind, types)
    enums = {int(v): k for k, v in constraints.get("enumeration", {}).items()} or base.enums
    sizes = constraints.get("size") or []
    fixed = sizes[0]["min"] if len(sizes) == 1 and sizes[0].get("min") == sizes[0].get("max") else base.fixed
    if syntax.get("bits"):
        return smi.TypeInfo(smi.STRING, {}, None)
    return smi.TypeInfo(base.base, enums if base.base == smi.INTEGER else {}, fixed)
