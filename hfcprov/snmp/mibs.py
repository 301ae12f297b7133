"""hfcprov's MIBs (and an operator's ``--mib-dir``) compiled with pysmi and loaded into pysnmp.

``hfcprov.mib`` stays the cheap index for everyday name lookups; this module is the
full path: pysmi compiles every MIB text file into pysnmp modules once, into a cache
folder keyed by the sources' digest, and pysnmp's MibBuilder loads them from there.
The base modules (SNMPv2-SMI/TC/CONF and everything else pysnmp ships compiled) are
stubbed: pysmi generates no code for them and reads their symbols from text that
``symbols_text`` writes out of pysnmp's compiled copies, so no SMI source text is
needed on the machine. Costs (see the report figures): a cold compile ~3 s of CPU
(pysmi's grammar and code generator), a cache hit ~0.2 s with the pysnmp load.

    >>> view = mib_view()                                  # mibs/ only
    >>> view.get_node_name(("docsDevResetNow",), "DOCS-CABLE-DEVICE-MIB")[0]
    (1, 3, 6, 1, 2, 1, 69, 1, 1, 3)
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

from hfcprov.mib import _MODULE, _STRING, MIB_DIR, MibError


@dataclass(frozen=True)
class MibSource:
    module: str  # the name after DEFINITIONS, e.g. DOCS-IF-MIB
    path: Path
    text: str


def _pysnmp_mib_dir() -> Path:
    import pysnmp.smi.mibs

    return Path(pysnmp.smi.mibs.__file__).parent


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hfcprov" / "mibs"


def _files(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir()
                      if p.is_file() and not p.name.startswith(".") and p.suffix not in (".md", ".py", ".pyc"))
    except OSError as err:
        raise MibError(f"{folder}: cannot read MIB folder: {err.strerror}") from None


def sources(dirs=()) -> dict[str, MibSource]:
    """Module name -> source text of mibs/ then each of ``dirs``; a later folder's module wins
    (an operator's full DOCS-IF-MIB replaces hfcprov's compact one). Files that hold no
    ``DEFINITIONS ::= BEGIN`` are not MIB modules and are skipped."""
    found: dict[str, MibSource] = {}
    for folder in (MIB_DIR, *map(Path, dirs)):
        for path in _files(folder):
            try:
                text = path.read_text(errors="replace")
            except OSError as err:
                raise MibError(f"{path}: cannot read MIB file: {err.strerror}") from None
            for module, _body in _MODULE.findall(_STRING.sub('""', text)):
                found[module] = MibSource(module, path, text)
    return found


def _shipped_by_pysnmp() -> tuple[str, ...]:
    """Modules pysnmp has compiled already: its engine depends on their full form, so a
    compact or operator copy of e.g. SNMPv2-MIB must never replace them."""
    from pysmi.codegen.pysnmp import PySnmpCodeGen

    shipped = {p.stem for p in _pysnmp_mib_dir().glob("*.py") if not p.stem.startswith("_")}
    return tuple(sorted(shipped | set(PySnmpCodeGen.baseMibs) | set(PySnmpCodeGen.fakeMibs)))


def _digest(found: dict[str, MibSource]) -> str:
    import pysmi

    h = hashlib.sha256(f"pysmi {pysmi.__version__}\n".encode())
    for module in sorted(found):
        h.update(f"{module}\n{len(found[module].text)}\n{found[module].text}".encode())
    return h.hexdigest()[:20]


def compile_mibs(dirs=(), cache: Path | None = None, found: dict[str, MibSource] | None = None) -> Path:
    """Compile mibs/ and ``dirs`` with pysmi; the folder of the pysnmp modules. Reuses the
    folder of an earlier compile of the same texts. A file pysmi cannot compile raises
    MibError naming that file."""
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
        _compile_into(found, work)
        (work / ".complete").write_text("")
        try:
            work.rename(dest)
        except OSError:  # another process finished the same compile first
            pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return dest


def _compile_into(found: dict[str, MibSource], dest: Path) -> None:
    from pysmi.codegen.pysnmp import PySnmpCodeGen
    from pysmi.compiler import MibCompiler
    from pysmi.parser.dialect import smi_v1_relaxed
    from pysmi.parser.smi import parserFactory
    from pysmi.reader.callback import CallbackReader
    from pysmi.searcher.stub import StubSearcher
    from pysmi.writer.pyfile import PyFileWriter

    stubs = _shipped_by_pysnmp()
    stand_ins: dict[str, str] = {}

    def text_of(name: str, _ctx) -> str:
        if name in found and name not in stubs:
            return found[name].text
        if name in stubs:  # pysnmp's compiled copy wins; pysmi only needs its symbols
            if name not in stand_ins:
                stand_ins[name] = symbols_text(name)
            return stand_ins[name]
        return ""

    compiler = MibCompiler(parserFactory(**smi_v1_relaxed)(), PySnmpCodeGen(), PyFileWriter(str(dest)))
    compiler.add_sources(CallbackReader(text_of))
    compiler.add_searchers(StubSearcher(*stubs))
    wanted = [m for m in sorted(found) if m not in stubs]
    status = compiler.compile(*wanted, noDeps=True)
    for module in wanted:
        st = status.get(module)
        if st in ("compiled", "untouched"):
            continue
        raise MibError(_failure_line(module, st, status, found, stubs))
    for module, st in sorted(status.items()):  # an import that is in no folder
        if st == "missing" and module not in stubs:
            users = sorted(m for m in wanted if _imports(found[m].text, module))
            where = found[users[0]].path if users else "mibs"
            raise MibError(f"{where}: imports {module}, which is in no MIB folder (add its file with --mib-dir)")


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
    """SMI text that declares what a module pysnmp ships compiled defines (OIDs and textual
    conventions), built from pysnmp's copy: pysmi needs the symbols of SNMPv2-SMI, SNMPv2-TC
    and the like to compile modules importing them, and their source text is not on the machine."""
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
        elif isinstance(oid, tuple) and oid and oid[0] == 1 and re.fullmatch(r"[a-z][\w-]*", name) and name != "iso":
            lines.append(f"{name} OBJECT IDENTIFIER ::= {{ iso {' '.join(map(str, oid[1:]))} }}")
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


def _failure_line(module: str, st, status, found, stubs) -> str:
    path = found[module].path
    err = getattr(st, "error", None)
    if err is None:  # failed because something it imports failed or is missing
        for other, other_st in sorted(status.items()):
            if other != module and other_st in ("failed", "missing") and other not in stubs:
                if other in found:
                    return _failure_line(other, other_st, status, found, stubs)
                return f"{path}: imports {other}, which is in no MIB folder (add its file with --mib-dir)"
        return f"{path}: pysmi could not compile {module} ({st})"
    text = " ".join(str(err).split()).replace(f" at MIB {module}", "")
    missing = re.search(r'no module "([^"]+)" in symbolTable', text)
    if missing:
        return f"{path}: imports {missing.group(1)}, which is in no MIB folder (add its file with --mib-dir)"
    symbol = re.search(r'no symbol "([^"]+)" in module "([^"]+)"', text)
    if symbol and symbol.group(2) in found and found[symbol.group(2)].path.parent == MIB_DIR:
        return (f"{path}: imports {symbol.group(1)} from {symbol.group(2)}, which hfcprov's compact copy lacks "
                f"(add the full {symbol.group(2)} with --mib-dir)")
    grammar = re.search(r"Bad grammar near offset (\d+), line (\d+)", text)
    if grammar:
        return f"{path}: line {grammar.group(2)}: MIB syntax error pysmi cannot parse (offset {grammar.group(1)})"
    return f"{path}: pysmi cannot compile {module}: {text}"


def mib_view(dirs=(), cache: Path | None = None):
    """A pysnmp MibViewController with pysnmp's own modules and the compiled mibs/ + ``dirs``."""
    from pysnmp.smi import view

    from hfcprov.snmp.client import _NoMibCompiler

    found = sources(dirs)
    folder = compile_mibs(dirs, cache, found)
    mib_builder = _builder(folder)
    # everything is compiled already: keep pysnmp from building pysmi's grammar on a miss
    mib_builder.set_mib_compiler(_NoMibCompiler(), str(folder))
    try:  # pysnmp's own sources come first, so its full copies of shipped modules (SNMPv2-MIB) win
        with warnings.catch_warnings():  # pysmi 2 generates pysnmp 7's deprecated importSymbols calls
            warnings.simplefilter("ignore", DeprecationWarning)
            mib_builder.load_modules(*sorted(found))
    except Exception as err:  # noqa: BLE001 - pysnmp raises bare MibLoadError/SmiError from generated code
        raise MibError(f"{folder}: pysnmp cannot load the compiled MIBs: {' '.join(str(err).split())}") from None
    return view.MibViewController(mib_builder)


def _builder(compiled: Path | None = None):
    """A MibBuilder searching pysnmp's own modules, then ``compiled`` (mibs/ and --mib-dir), then
    the standard modules of pysnmp-mibs: pysnmp would put pysnmp-mibs before an added folder, and
    an operator's own DOCS-IF-MIB must win over the RFC copy there."""
    from pysnmp.smi import builder

    mib_builder = builder.MibBuilder()
    core = [s for s in mib_builder.get_mib_sources() if "pysnmp_mibs" not in str(s)]
    rest = [builder.DirMibSource(str(compiled))] if compiled is not None else []
    try:
        import pysnmp_mibs

        rest.append(builder.DirMibSource(os.path.dirname(pysnmp_mibs.__file__)))
    except ImportError:
        pass
    mib_builder.set_mib_sources(*core, *rest)
    return mib_builder


def objects(mib_view_controller, modules) -> dict[str, tuple[str, str, object]]:
    """name -> (module, numeric OID, syntax object or None) of every node the ``modules`` define."""
    from pysnmp.smi.builder import MibBuilder

    mib_builder: MibBuilder = mib_view_controller.mibBuilder
    result = {}
    for module in modules:
        symbols = mib_builder.mibSymbols.get(module, {})
        for name, node in symbols.items():
            oid = getattr(node, "name", None)
            if not isinstance(oid, tuple) or not oid or not hasattr(node, "getLabel"):
                continue
            syntax = node.getSyntax() if hasattr(node, "getSyntax") else None
            result[name] = (module, ".".join(map(str, oid)), syntax)
    return result


_ASN1_NAMES = {"OCTET STRING": "OctetString", "OBJECT IDENTIFIER": "ObjectIdentifier", "INTEGER": "Integer"}


def syntax_matches(text: str, syntax) -> bool:
    """Does pysnmp's syntax object have the type ``hfcprov.mib`` recorded (e.g. "Unsigned32",
    "TruthValue", "OCTET STRING")? Constrained or enumerated types are subclasses of it."""
    if not text or text.startswith("SEQUENCE OF") or syntax is None:
        return True  # tables and rows carry no value syntax
    wanted = _ASN1_NAMES.get(text, text)
    names = {c.__name__ for c in type(syntax).__mro__}
    if wanted == "Integer":
        return bool(names & {"Integer", "Integer32"})
    return wanted in names


def enums_of(syntax) -> dict[int, str]:
    named = getattr(syntax, "namedValues", None)
    if not named:
        return {}
    return {int(value): label for label, value in named.items()}


_loaded_view = None  # the view of the last load_dirs, for pysnmp engines created after it


def loaded_view():
    """The MibViewController ``load_dirs`` built (mibs/ + --mib-dir), or None."""
    return _loaded_view


def load_dirs(dirs, cache: Path | None = None) -> int:
    """``--mib-dir``: compile the folders with mibs/ through pysmi and add every name, OID and
    enum label they define to ``hfcprov.mib``'s index (they win over the compact ones).
    Returns how many names were added or changed."""
    from hfcprov import mib

    global _loaded_view
    found = sources(dirs)
    view = _loaded_view = mib_view(dirs, cache)
    extra = {s.module for s in found.values() if s.path.parent != MIB_DIR}
    idx = mib.index()
    changed = 0
    for name, (module, oid, syntax) in objects(view, sorted(extra)).items():
        enums = enums_of(syntax)
        old = idx.by_name.get(name)
        if old is None or old.oid != oid or (enums and old.enums != enums):
            changed += 1
        idx.add(name, oid, module=module, syntax=type(syntax).__name__ if syntax is not None else "",
                enums=enums or (old.enums if old else {}))
    return changed


# The standard modules operators' configs and audits name. pysnmp ships SNMPv2-MIB and the
# SNMP framework compiled; the IETF cable modules (RFC 2670/4546 DOCS-IF, RFC 4639 cable device,
# RFC 4323 QoS, RFC 4682 PacketCable MTA, RFC 5098 signalling, RFC 4131 BPI+) come compiled by pysmi
# in the PyPI package pysnmp-mibs (BSD). Debian main carries none of their text (libsnmp-base
# has net-snmp's own MIBs only; snmp-mibs-downloader is non-free and downloads at install).
# CableLabs' DOCS-IF3-MIB / DOCS-QOS3-MIB are in no package: hfcprov's mibs/ or --mib-dir.
STANDARD_MODULES = ("SNMPv2-MIB", "IF-MIB", "INET-ADDRESS-MIB", "DOCS-IF-MIB", "DOCS-CABLE-DEVICE-MIB",
                    "DOCS-IETF-QOS-MIB", "DOCS-IETF-BPI2-MIB", "DOCS-IETF-CABLE-DEVICE-NOTIFICATION-MIB",
                    "PKTC-IETF-MTA-MIB", "PKTC-IETF-SIG-MIB")

_standard_loaded: tuple[str, ...] | None = None


def standard_view():
    """(MibViewController, modules loaded) of the STANDARD_MODULES this machine has compiled."""
    from pysnmp.smi import view

    from hfcprov.snmp.client import _NoMibCompiler

    mib_builder = _builder()
    mib_builder.set_mib_compiler(_NoMibCompiler(), str(_pysnmp_mib_dir()))
    loaded = []
    for module in STANDARD_MODULES:
        try:
            with warnings.catch_warnings():  # pysnmp-mibs uses the pysnmp 4 names pysnmp 7 deprecates
                warnings.simplefilter("ignore")
                mib_builder.load_modules(module)
        except Exception:  # noqa: BLE001, S112 - not on this machine: its names stay unknown
            continue
        loaded.append(module)
    return view.MibViewController(mib_builder), tuple(loaded)


def load_standard() -> int:
    """Add the names of the standard modules (see STANDARD_MODULES) that hfcprov's compact
    mibs/ lacks to ``hfcprov.mib``'s index; once per process. Returns how many were added."""
    from hfcprov import mib

    global _standard_loaded
    if _standard_loaded is not None:
        return 0
    view, _standard_loaded = standard_view()
    idx = mib.index()
    added = 0
    for name, (module, oid, syntax) in objects(view, _standard_loaded).items():
        if name in idx.by_name:
            continue  # the compact copy is what the tests pin; same OIDs
        idx.add(name, oid, module=module, syntax=type(syntax).__name__ if syntax is not None else "",
                enums=enums_of(syntax))
        added += 1
    return added


def standard_modules() -> tuple[str, ...]:
    """The standard modules loaded so far (empty before ``load_standard``)."""
    return _standard_loaded or ()
