"""The name <-> OID index: MIB objects, their enum labels and table indexes, and instance names.

An instance name is an object name and its index, as net-snmp writes it and as operators
put it in config files::

    docsDevNmAccessStatus.1                 integer index
    snmpCommunityStatus.'public'            IMPLIED string index (no length arc)
    vacmSecurityToGroupStatus.3."rotesting" a security model, then a string with its length
    snmpCommunityName."public"              accepted too: the row's index is IMPLIED, so no length

``resolve`` turns a name into a numeric OID using the row's INDEX clause (string, fixed-length
string, IMPLIED, OBJECT IDENTIFIER, IpAddress, integer); ``name_of`` does the reverse and
writes a string index quoted when it is printable, so the two round-trip.
"""

from __future__ import annotations

import re

from hfcprov.mib import smi


class MibObject:
    """One MIB node: ``syntax`` is the base type or textual convention name ("Unsigned32",
    "TruthValue"); ``index`` a row's INDEX ((object name, implied), ...); ``augments`` the row a
    row AUGMENTS (it shares that index); ``fixed`` the SIZE (n) of a fixed-length string."""

    __slots__ = ("augments", "enums", "fixed", "index", "module", "name", "oid", "syntax")

    def __init__(self, name: str, oid: str, module: str = "", syntax: str = "", enums: dict | None = None,
                 index: tuple = (), augments: str | None = None, fixed: int | None = None) -> None:
        self.name, self.oid, self.module, self.syntax = name, oid, module, syntax
        self.enums = enums if enums is not None else {}
        self.index, self.augments, self.fixed = index, augments, fixed

    def __repr__(self) -> str:
        return f"MibObject({self.module}::{self.name} {self.oid} {self.syntax})"


# a component of an instance suffix: a number, "a string" or 'a string' (backslash escapes)
_COMPONENT = re.compile(r'\d+|"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[A-Za-z][A-Za-z0-9-]*')  # label: an enum


class MibIndex:
    """Names, OIDs, enum labels and row indexes from a set of SMI text files."""

    def __init__(self) -> None:
        self.by_name: dict[str, MibObject] = {}
        self.by_oid: dict[str, MibObject] = {}
        self.by_module: dict[tuple[str, str], MibObject] = {}
        self.types: dict[str, smi.TypeInfo] = {}
        self._infos: dict[str, smi.TypeInfo] = {}  # type_info's memory, for ...
        self._infos_for = 0  # ... this many types (they only grow: a --mib-dir load adds some)

    # -- building ---------------------------------------------------------------------------
    def load_texts(self, texts: list[tuple[str, str]], prefer: frozenset = frozenset()) -> None:
        """Parse ``(source, text)`` pairs; parents may be defined in any file of the set. A name
        several modules define is the last one read, unless a module in ``prefer`` defines it."""
        self.add_definitions(smi.parse([text for _source, text in texts], self.types), prefer)

    def add_definitions(self, definitions: list[smi.Definition], prefer: frozenset = frozenset()) -> None:
        known = {name: obj.oid for name, obj in self.by_name.items()}
        for k, v in smi.SMI_ROOTS.items():
            known.setdefault(k, v)
        own = {(d.module, d.name) for d in definitions}
        module_oids: dict[tuple[str, str], str] = {}
        pending = list(definitions)
        while pending:  # resolve in passes: a parent may appear after its children
            left = []
            for d in pending:
                head, rest = d.parent[0], d.parent[1:]
                if head.replace(".", "").isdigit():
                    base = head
                elif (d.module, head) in own:  # the module's own node, never another module's namesake
                    base = module_oids.get((d.module, head))
                else:
                    base = known.get(head)
                if base is None:
                    left.append(d)
                    continue
                oid = ".".join([base, *rest])
                module_oids[(d.module, d.name)] = oid
                obj = MibObject(d.name, oid, d.module, d.syntax, dict(d.enums), d.index, d.augments, d.fixed)
                self.by_module[(d.module, d.name)] = obj
                current = self.by_name.get(d.name)
                if current is None or current.module == d.module or d.module in prefer \
                        or current.module not in prefer:
                    known[d.name] = oid
                    self._put(obj)
                else:
                    self.by_oid.setdefault(oid, obj)
            if len(left) == len(pending):
                break  # parents nowhere in the set: those names stay unknown
            pending = left

    def add(self, name: str, oid: str, module: str = "", syntax: str = "", enums: dict[int, str] | None = None,
            index: tuple = (), augments: str | None = None, fixed: int | None = None) -> None:
        obj = MibObject(name, oid, module, syntax, dict(enums or {}), index, augments, fixed)
        if module:
            self.by_module[(module, name)] = obj
        self._put(obj)

    def _put(self, obj: MibObject) -> None:
        self.by_name[obj.name] = obj
        self.by_oid[obj.oid] = obj

    # -- a cache of the built index (hfcprov.mib keeps one per set of shipped files) ---------
    def state(self) -> tuple:
        """Plain data (marshal-able) from which ``from_state`` rebuilds this index."""
        objects = [(o.name, o.oid, o.module, o.syntax, o.enums, o.index, o.augments, o.fixed)
                   for o in self.by_module.values()]
        owners = {name: obj.module for name, obj in self.by_name.items()}
        loose = [(o.name, o.oid, o.syntax, o.enums) for o in self.by_name.values() if not o.module]
        return 1, objects, owners, loose, {k: tuple(v) for k, v in self.types.items()}

    @classmethod
    def from_state(cls, state: tuple) -> MibIndex:
        version, objects, owners, loose, types = state
        if version != 1:
            raise ValueError("old cache")
        idx = cls()
        others = []
        for name, oid, module, syntax, enums, index, augments, fixed in objects:
            obj = MibObject(name, oid, module, syntax, enums, tuple(tuple(i) for i in index), augments, fixed)
            idx.by_module[(module, name)] = obj
            if owners.get(name) == module:
                idx._put(obj)
            else:
                others.append(obj)
        for obj in others:
            idx.by_oid.setdefault(obj.oid, obj)
        for name, oid, syntax, enums in loose:
            idx._put(MibObject(name, oid, "", syntax, enums))
        idx.types = {k: smi.TypeInfo(*v) for k, v in types.items()}
        return idx

    # -- lookups -----------------------------------------------------------------------------
    def type_info(self, syntax: str) -> smi.TypeInfo:
        """``smi.type_info`` of an OBJECT-TYPE's syntax against this index's types, parsed once per syntax
        (its regexes cost, and an audit checks every value of every modem)."""
        if self._infos_for != len(self.types):
            self._infos, self._infos_for = {}, len(self.types)
        info = self._infos.get(syntax)
        if info is None:
            info = self._infos[syntax] = smi.type_info(syntax, self.types)
        return info

    def object(self, name_or_oid: str) -> MibObject | None:
        """The object a name (``MODULE::name`` allowed, instance suffix ignored) or an OID is of."""
        text = name_or_oid.strip()
        if _is_numeric(text.lstrip(".")):
            found = self.lookup(text)
            return found[0] if found else None
        module, _, name = text.rpartition("::")
        name = name.split(".", 1)[0]
        if module:
            return self.by_module.get((module, name)) or self.by_name.get(name)
        return self.by_name.get(name)

    def resolve(self, name: str) -> str | None:
        """Numeric OID of ``name`` (``MODULE::`` prefix and instance suffix allowed), or None."""
        text = name.strip()
        if _is_numeric(text.lstrip(".")):
            return text.lstrip(".")
        name_part = re.split(r"[.'\"]", text, maxsplit=1)[0]  # "::" inside a quoted index is no module
        module = name_part.rpartition("::")[0]
        rest = text[len(module) + 2:] if module else text
        base, dot, suffix = rest.partition(".")
        obj = self.object(f"{module}::{base}" if module else base)
        if obj is None:
            root = smi.SMI_ROOTS.get(base)
            if root is None:
                return None
            obj = MibObject(base, root, "SNMPv2-SMI")
        if not dot:
            return obj.oid
        arcs = self._encode_suffix(obj, suffix)
        return f"{obj.oid}.{arcs}" if arcs is not None else None

    def lookup(self, oid: str) -> tuple[MibObject, str] | None:
        """The deepest known node at or above ``oid`` and the remaining index (may be "")."""
        parts = oid.strip().lstrip(".").split(".")
        for cut in range(len(parts), 0, -1):
            obj = self.by_oid.get(".".join(parts[:cut]))
            if obj is not None:
                return obj, ".".join(parts[cut:])
        return None

    def name_of(self, oid: str) -> str | None:
        """``docsDevNmAccessStatus.1``, ``snmpCommunityStatus.'public'``; None when no MIB names it."""
        found = self.lookup(oid)
        if found is None:
            return None
        obj, arcs = found
        # a name another module's object took (PKTC-IETF-MTA-MIB beside PKTC-MTA-MIB): qualified
        name = obj.name if self.by_name.get(obj.name) is obj or not obj.module else f"{obj.module}::{obj.name}"
        if not arcs:
            return name
        return f"{name}.{self._decode_suffix(obj, arcs)}"

    # -- table indexes -----------------------------------------------------------------------
    def row_index(self, column: MibObject) -> tuple:
        """((index object, implied), ...) of the row ``column`` is in; () for a scalar or unknown."""
        row = self.by_oid.get(column.oid.rpartition(".")[0])
        seen = 0
        while row is not None and row.augments and seen < 4:
            row, seen = self.by_name.get(row.augments), seen + 1
        return row.index if row is not None else ()

    def _index_types(self, column: MibObject) -> list[tuple[smi.TypeInfo, bool]] | None:
        index = self.row_index(column)
        if not index:
            return None
        out = []
        for name, implied in index:
            obj = self.by_name.get(name)
            if obj is None:
                return None
            info = self.type_info(obj.syntax) if obj.syntax else smi.TypeInfo("", {})
            if obj.fixed is not None:
                info = smi.TypeInfo(info.base, info.enums, obj.fixed)
            out.append((info, implied))
        return out

    def _encode_suffix(self, obj: MibObject, suffix: str) -> str | None:
        components = _components(suffix)
        if components is None:
            return None
        if all(c.isdigit() for c in components):
            return ".".join(components)
        types = self._index_types(obj)
        aligned = types is not None and len(types) == len(components)
        arcs = []
        for i, comp in enumerate(components):
            if comp.isdigit():
                arcs.append(comp)
                continue
            if comp[0] not in "\"'":  # an enumerated index by its label (vacmAccessStatus...1.noAuthNoPriv)
                value = {label: number for number, label in types[i][0].enums.items()}.get(comp) if aligned else None
                if value is None:
                    return None
                arcs.append(str(value))
                continue
            quote, text = comp[0], _unescape(comp[1:-1])
            data = text.encode("latin-1", "replace")
            if aligned:
                info, implied = types[i]
                if info.base not in (smi.STRING, ""):
                    return None  # a quoted string where the index is a number or an address
                bare = implied or info.fixed is not None or quote == "'"
            else:  # no INDEX to go by: net-snmp's rule ('...' has no length), an IMPLIED last string too
                last_implied = bool(types) and types[-1][1] and i == len(components) - 1
                bare = quote == "'" or last_implied
            arcs += ([] if bare else [str(len(data))]) + [str(b) for b in data]
        return ".".join(arcs)

    def _decode_suffix(self, obj: MibObject, arcs: str) -> str:
        """The index arcs as net-snmp writes them, or the plain numbers when they do not parse."""
        types = self._index_types(obj)
        if types is None:
            return arcs
        parts = [int(a) for a in arcs.split(".")]
        out = []
        pos = 0
        for n, (info, implied) in enumerate(types):
            last = n == len(types) - 1
            if pos >= len(parts):
                return arcs
            if info.base in (smi.STRING, smi.OID):
                if (implied and last) or (info.fixed is not None and info.base == smi.STRING):
                    length = len(parts) - pos if info.fixed is None else info.fixed
                    body, pos = parts[pos:pos + length], pos + length
                    bare = True
                else:
                    length = parts[pos]
                    body, pos = parts[pos + 1:pos + 1 + length], pos + 1 + length
                    bare = False
                if len(body) != length:
                    return arcs
                text = _printable(body) if info.base == smi.STRING and info.fixed is None else None
                if text is None:
                    out += ([] if bare else [str(length)]) + [str(b) for b in body]
                else:
                    out.append(f"'{text}'" if bare else f'"{text}"')
            elif info.base == smi.IPADDRESS:
                out += [str(b) for b in parts[pos:pos + 4]]
                pos += 4
            else:
                out.append(str(parts[pos]))
                pos += 1
        if pos != len(parts):
            return arcs
        return ".".join(out)


def _components(suffix: str) -> list[str] | None:
    """``3."ro.testing"`` -> ["3", '"ro.testing"']; None when it is not dots between components."""
    out = []
    pos = 0
    while pos <= len(suffix):
        m = _COMPONENT.match(suffix, pos)
        if m is None:
            return None
        out.append(m.group(0))
        pos = m.end()
        if pos == len(suffix):
            return out
        if suffix[pos] != ".":
            return None
        pos += 1
    return None


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _printable(data: list[int]) -> str | None:
    """The bytes as text to quote in a name, or None: empty, not printable ASCII, or holding a quote,
    a backslash or a blank (config text splits words on blanks)."""
    if not data or any(b < 0x21 or b > 0x7E or b in (0x22, 0x27, 0x5C) for b in data):
        return None
    return bytes(data).decode("ascii")


def _is_numeric(s: str) -> bool:
    return bool(s) and all(p.isdigit() for p in s.split("."))
