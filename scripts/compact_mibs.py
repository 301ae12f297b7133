#!/usr/bin/env python3
"""Write hfcprov's compact copies (``mibs/``) of standard MIB modules from their published text.

A config file names objects of the IETF and CableLabs modules (SNMPv2-MIB, SNMP-COMMUNITY-MIB,
DOCS-CABLE-DEVICE-MIB, PKTC-MTA-MIB, ...). hfcprov ships every OBJECT-TYPE of those modules
(name, OID, SYNTAX with its enums and sizes, INDEX with IMPLIED, AUGMENTS, MAX-ACCESS), textual
conventions and notifications, without their descriptions: valid SMIv2 that ``hfcprov.mib`` reads
without pysnmp and pysmi compiles for ``--mib-dir``. The facts come from the published modules;
this script rewrites them in hfcprov's form::

    python3 scripts/compact_mibs.py --source /path/to/mib/text [--source ...] -o mibs MODULE...

Needs pysmi (a test dependency of hfcprov). A module whose textual convention comes from a module
outside the written set gets that convention's base syntax written out, so ``mibs/`` needs nothing
else to compile.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# Imported symbols that need no module in mibs/: pysmi's base modules and the SMI's own arcs.
BASE = {"SNMPv2-SMI", "SNMPv2-TC", "SNMPv2-CONF", "RFC1155-SMI", "RFC1065-SMI", "RFC-1212", "RFC-1215",
        "RFC1213-MIB", "SNMPv2-TC-v1", "SNMPv2-SMI-v1"}
MACROS = {"MODULE-IDENTITY", "OBJECT-TYPE", "OBJECT-IDENTITY", "NOTIFICATION-TYPE", "TEXTUAL-CONVENTION",
          "MODULE-COMPLIANCE", "OBJECT-GROUP", "NOTIFICATION-GROUP", "AGENT-CAPABILITIES", "TRAP-TYPE"}
# SNMPv2-SMI's types and arcs, always importable from it
SMI_SYMBOLS = {"Integer32", "Unsigned32", "Counter32", "Counter64", "Gauge32", "TimeTicks", "IpAddress", "Opaque",
               "Bits", "iso", "org", "dod", "internet", "mgmt", "mib-2", "transmission", "experimental", "private",
               "enterprises", "snmpV2", "snmpModules", "snmpDomains", "snmpProxys", "zeroDotZero", "security"}
SMI_ARCS = {"1.3": "org", "1.3.6": "dod", "1.3.6.1": "internet", "1.3.6.1.2": "mgmt", "1.3.6.1.2.1": "mib-2",
            "1.3.6.1.2.1.10": "transmission", "1.3.6.1.3": "experimental", "1.3.6.1.4": "private",
            "1.3.6.1.4.1": "enterprises", "1.3.6.1.5": "security", "1.3.6.1.6": "snmpV2", "1.3.6.1.6.3": "snmpModules",
            "1.3.6.1.6.1": "snmpDomains", "1.3.6.1.6.2": "snmpProxys"}
PRIMITIVE = {"INTEGER", "OCTET STRING", "OBJECT IDENTIFIER", "Integer32", "Unsigned32", "Counter32", "Counter64",
             "Gauge32", "TimeTicks", "IpAddress", "Opaque", "Bits", "BITS"}


def compile_json(sources: list[str], modules: list[str]) -> dict[str, dict]:
    """pysmi's JSON form of ``modules`` and everything they import, from the ``sources`` folders."""
    from pysmi.codegen.jsondoc import JsonCodeGen
    from pysmi.compiler import MibCompiler
    from pysmi.parser.dialect import smi_v1_relaxed
    from pysmi.parser.smi import parserFactory
    from pysmi.reader.localfile import FileReader
    from pysmi.searcher.stub import StubSearcher
    from pysmi.writer.callback import CallbackWriter

    out: dict[str, dict] = {}
    compiler = MibCompiler(parserFactory(**smi_v1_relaxed)(), JsonCodeGen(),
                           CallbackWriter(lambda name, data, _ctx: out.__setitem__(name, json.loads(data))))
    compiler.add_sources(*[FileReader(s) for s in sources])
    compiler.add_searchers(StubSearcher(*JsonCodeGen.baseMibs))
    status = compiler.compile(*modules, noDeps=False, rebuild=True, genTexts=False)
    bad = {m: str(s) for m, s in status.items() if m in modules and s not in ("compiled", "untouched")}
    if bad:
        sys.exit(f"compact_mibs: cannot compile {bad}")
    return out


class Writer:
    def __init__(self, docs: dict[str, dict], written: set[str]):
        self.docs = docs
        self.written = written  # modules in mibs/ (TCs of others are written out as their base syntax)
        self.by_oid = {}
        for module, doc in docs.items():
            for name, node in doc.items():
                if isinstance(node, dict) and "oid" in node and node.get("class") not in ("objectgroup",
                                                                                          "notificationgroup",
                                                                                          "modulecompliance"):
                    self.by_oid.setdefault(node["oid"], (module, name))
        for oid, name in SMI_ARCS.items():
            self.by_oid.setdefault(oid, ("SNMPv2-SMI", name))
        self.tcs = {(module, name): node for module, doc in docs.items() for name, node in doc.items()
                    if isinstance(node, dict) and node.get("class") == "textualconvention"}

    def _tc(self, module: str, name: str):
        """(module, TC node) of textual convention ``name`` as ``module`` sees it (own or imported)."""
        if (module, name) in self.tcs:
            return module, self.tcs[(module, name)]
        for other, symbols in self.docs[module].get("imports", {}).items():
            if other != "class" and name in symbols and other in self.docs:
                return self._tc(other, name)
        return None, None

    def syntax(self, module: str, syntax: dict, imports: dict[str, set], in_sequence: bool = False) -> str:
        kind = syntax.get("type", "")
        constraints = syntax.get("constraints", {})
        bits = syntax.get("bits")
        if kind not in PRIMITIVE:  # a textual convention: keep its name where mibs/ can import it
            home, tc = self._tc(module, kind)
            if home is not None and home != module and home not in self.written and home not in BASE:
                return self.syntax(home, {**tc["type"], **({"constraints": constraints} if constraints else {})},
                                   imports, in_sequence)
            if home is not None and home != module:
                imports.setdefault(home, set()).add(kind)
            elif home is None and kind:
                imports.setdefault("SNMPv2-TC", set()).add(kind)  # DisplayString, RowStatus, ...
        elif kind in SMI_SYMBOLS:
            imports.setdefault("SNMPv2-SMI", set()).add(kind)
        if kind == "Bits":
            kind = "BITS"
        if in_sequence:
            return "INTEGER" if kind == "INTEGER" else kind
        if bits:
            return f"BITS {{ {', '.join(f'{k}({v})' for k, v in sorted(bits.items(), key=lambda x: x[1]))} }}"
        if "enumeration" in constraints:
            items = sorted(constraints["enumeration"].items(), key=lambda x: x[1])
            return f"{kind} {{ {', '.join(f'{k}({v})' for k, v in items)} }}"
        if "range" in constraints:
            return f"{kind} ({' | '.join(_range(r) for r in constraints['range'])})"
        if "size" in constraints:
            return f"{kind} (SIZE ({' | '.join(_range(r) for r in constraints['size'])}))"
        return kind

    def parent(self, module: str, oid: str, imports: dict[str, set]) -> str:
        head, _, last = oid.rpartition(".")
        found = self.by_oid.get(head)
        if found is None:
            return "{ iso " + " ".join(oid.split(".")[1:]) + " }"
        home, name = found
        if home != module:
            imports.setdefault("SNMPv2-SMI" if name in SMI_SYMBOLS else home, set()).add(name)
        return f"{{ {name} {last} }}"

    def module(self, module: str) -> str:
        doc = self.docs[module]
        imports: dict[str, set] = {}
        body: list[str] = []
        rows = {node["oid"]: name for name, node in doc.items()
                if isinstance(node, dict) and node.get("nodetype") == "row"}
        columns: dict[str, list[tuple[str, str]]] = {}
        nodes = sorted(((name, node) for name, node in doc.items() if isinstance(node, dict)),
                       key=lambda x: [int(p) for p in x[1].get("oid", "0").split(".")])
        for name, node in nodes:
            cls = node.get("class")
            if cls == "textualconvention":
                imports.setdefault("SNMPv2-TC", set()).add("TEXTUAL-CONVENTION")
                hint = f' DISPLAY-HINT "{node["displayhint"]}"' if node.get("displayhint") else ""
                body.append(f"{name} ::= TEXTUAL-CONVENTION{hint} STATUS {node.get('status', 'current')} "
                            f"DESCRIPTION \"\"\n    SYNTAX {self.syntax(module, node['type'], imports)}\n")
            elif cls == "moduleidentity":
                imports.setdefault("SNMPv2-SMI", set()).add("MODULE-IDENTITY")
                revisions = sorted(r.get("revision", "") for r in node.get("revisions", []))
                updated = (revisions[-1].replace("-", "").replace(" ", "").replace(":", "") + "Z"
                           if revisions and revisions[-1] else "200001010000Z")
                body.append(f'{name} MODULE-IDENTITY LAST-UPDATED "{updated}" ORGANIZATION "" CONTACT-INFO ""\n'
                            f'    DESCRIPTION "Compact copy of {module}: see the published module."\n'
                            f"    ::= {self.parent(module, node['oid'], imports)}\n")
            elif cls in ("objectidentity", "objectidentifier") or (cls == "objecttype" and "nodetype" not in node
                                                                   and "syntax" not in node):
                body.append(f"{name} OBJECT IDENTIFIER ::= {self.parent(module, node['oid'], imports)}\n")
            elif cls == "notificationtype":
                imports.setdefault("SNMPv2-SMI", set()).add("NOTIFICATION-TYPE")
                body.append(f"{name} NOTIFICATION-TYPE STATUS {node.get('status', 'current')} DESCRIPTION \"\"\n"
                            f"    ::= {self.parent(module, node['oid'], imports)}\n")
            elif cls == "objecttype":
                imports.setdefault("SNMPv2-SMI", set()).add("OBJECT-TYPE")
                kind = node.get("nodetype")
                access = node.get("maxaccess", "read-only")
                status = node.get("status", "current")
                extra = ""
                if kind == "table":
                    row = rows.get(node["oid"] + ".1")
                    syntax = f"SEQUENCE OF {_entry_type(row)}"
                elif kind == "row":
                    syntax = _entry_type(name)
                    if "augmention" in node:
                        target = node["augmention"]["object"]
                        self._import_object(module, target, imports)
                        extra = f"\n    AUGMENTS {{ {target} }}"
                    else:
                        parts = []
                        for ix in node.get("indices", []):
                            self._import_object(module, ix["object"], imports)
                            parts.append(("IMPLIED " if ix.get("implied") else "") + ix["object"])
                        extra = f"\n    INDEX {{ {', '.join(parts)} }}"
                else:
                    syntax = self.syntax(module, node.get("syntax", {"type": "INTEGER"}), imports)
                    row = rows.get(node["oid"].rpartition(".")[0])
                    if row:
                        columns.setdefault(row, []).append(
                            (name, self.syntax(module, node.get("syntax", {}), imports, in_sequence=True)))
                units = f' UNITS "{node["units"]}"' if node.get("units") else ""
                body.append(f"{name} OBJECT-TYPE\n    SYNTAX {syntax}{units}\n    MAX-ACCESS {access} "
                            f"STATUS {status} DESCRIPTION \"\"{extra}\n"
                            f"    ::= {self.parent(module, node['oid'], imports)}\n")
        for row, cols in columns.items():
            items = ",\n    ".join(f"{name} {kind}" for name, kind in cols)
            body.append(f"{_entry_type(row)} ::= SEQUENCE {{\n    {items}\n}}\n")
        lines = [f"-- hfcprov compact copy of {module}: every object's name, OID, syntax and index as the",
                 "-- published module defines them (descriptions left out); written by scripts/compact_mibs.py.",
                 f"{module} DEFINITIONS ::= BEGIN", "", "IMPORTS"]
        groups = sorted((m, sorted(s)) for m, s in imports.items() if m != module and s)
        for i, (m, symbols) in enumerate(groups):
            end = ";" if i == len(groups) - 1 else ""
            lines.append(f"    {', '.join(symbols)}\n        FROM {m}{end}")
        if not groups:
            lines.pop()
        return "\n".join(lines) + "\n\n" + "\n".join(body) + "\nEND\n"

    def _import_object(self, module: str, name: str, imports: dict[str, set]) -> None:
        if name in self.docs[module]:
            return
        for other, symbols in self.docs[module].get("imports", {}).items():
            if other != "class" and name in symbols:
                imports.setdefault(other, set()).add(name)
                return


def _entry_type(row: str | None) -> str:
    return (row[0].upper() + row[1:]) if row else "Unknown"


def _range(r: dict) -> str:
    lo, hi = r.get("min"), r.get("max")
    return str(lo) if lo == hi else f"{lo}..{hi}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", action="append", required=True, help="folder of MIB text files")
    ap.add_argument("-o", "--out", required=True, help="folder to write the compact modules into")
    ap.add_argument("modules", nargs="+")
    args = ap.parse_args(argv)
    docs = compile_json(args.source, args.modules)
    writer = Writer(docs, set(args.modules))
    out = Path(args.out)
    for module in args.modules:
        (out / module).write_text(writer.module(module))
        print(f"{module}: {sum(1 for n in docs[module].values() if isinstance(n, dict) and 'oid' in n)} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
