"""The TLV dictionary: ``tlvdata.ROWS`` turned into a tree of ``Spec`` nodes.

Decoding, encoding, the text/YAML/JSON forms, validation and ``hfcprov config tlvs``
all read this one tree. ``ROOT.children[24].children[35].children[2]`` is TargetBuffer.
"""

from __future__ import annotations

import _thread

from hfcprov.config import tlvdata
from hfcprov.config.errors import ConfigError
from hfcprov.config.tree import Tlv
from hfcprov.config.types import TYPES, ValueType

MAX_VALUE = 255  # a TLV length byte
# Codes with their own handling in the codec, never ordinary TLVs.
PAD, CM_MIC, CMTS_MIC, END = 0, 6, 7, 255
# Values that may exceed 255 bytes, split over consecutive TLVs of at most 254 (MULPI C.1.2.10/11:
# the manufacturer and co-signer CVCs; C.1.2.21/22: the CVC chains).
FRAGMENTED = {32: 254, 33: 254, 81: 254, 82: 254}
# Sub-TLVs of a VendorSpecific TLV (43, and 43 inside classifiers, flows...) are the dictionary's
# only under CableLabs' vendor ID; other vendors' sub-TLVs are theirs, kept as raw bytes.
VENDOR_ID, CABLELABS = 8, b"\xff\xff\xff"
# Configs built from one tier template repeat most of their values (SNMP objects, filters,
# service flows), so each spec remembers the values it read from text and the bytes it
# encoded, up to this many of each; a full memo starts over.
MEMO_SIZE = 4096


class Spec:
    """One TLV of the dictionary: path, name, value type, length rule, ranges, its sub-TLVs by code and name.

    Compared by identity (each path has one). A plain class rather than a dataclass: every per-file
    encode imports this module (see tree.py)."""

    def __init__(self, path: str, name: str, type: str, rule: str, vrange: tuple[int, int] | None = None,
                 lrange: tuple[int, int] | None = None, spec_ref: str | None = None,
                 children: dict[int, Spec] | None = None, by_name: dict[str, Spec] | None = None,
                 aliases: list[str] | None = None, enums: dict[int, str] | None = None):
        self.path = path
        self.name = name
        self.type = type
        self.rule = rule
        self.vrange = vrange
        self.lrange = lrange
        self.spec_ref = spec_ref
        self.children = {} if children is None else children
        self.by_name = {} if by_name is None else by_name
        self.aliases = [] if aliases is None else aliases
        self.enums = {} if enums is None else enums  # value -> label
        self.__post_init__()

    def __repr__(self) -> str:
        return f"Spec(path={self.path!r}, name={self.name!r}, type={self.type!r}, rule={self.rule!r})"

    def __post_init__(self):
        # Precomputed once: the codec asks these for every TLV of every file.
        self.code = int(self.path.rsplit(".", 1)[-1]) if self.path else -1
        self.compound = self.rule == "sub"
        self.vtype: ValueType | None = None if self.compound else TYPES[self.type]
        self.fixed = int(self.rule[6:]) if self.rule.startswith("fixed:") and not self.lrange else None
        self.free_length = self.rule in ("var", "nul") and not self.lrange
        self.vendor_specific = False  # set by _fill for VendorSpecific TLVs
        # Only immutable (hashable) values are remembered, so two trees never share a mutable value.
        self._parsed: dict[str, object] = {}  # text -> value
        self._encoded: dict[tuple, bytes] = {}  # (value's type, value) -> its bytes

    def __getattr__(self, attr: str):
        # Only a mount point not built yet lacks these (``_fill``); any other missing name is an error.
        if attr in _LAZY and "_mount" in self.__dict__:
            self._expand()
            return getattr(self, attr)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def _expand(self) -> None:
        with _expanding:
            mount = self.__dict__.get("_mount")
            if mount is None:  # another thread built it meanwhile
                return
            lines, prefix, variant, subtrees = mount
            built = Spec(self.path, self.name, self.type, self.rule)  # filled aside: other threads see all or nothing
            _fill(built, lines, prefix, variant, subtrees)
            self.vendor_specific = _is_vendor_specific(built)
            self.by_name = built.by_name
            self.children = built.children
            del self._mount

    def length_ok(self, n: int) -> str | None:
        """None when ``n`` value bytes suit this TLV, else why not."""
        rule = self.rule
        if rule.startswith("fixed:"):
            want = int(rule[6:])
            if n != want:
                return f"{self.name} takes exactly {want} bytes, not {n}"
        elif rule.startswith("alt:"):
            a, b = (int(x) for x in rule[4:].split(","))
            if n not in (a, b):
                return f"{self.name} takes {a} or {b} bytes, not {n}"
        elif rule.startswith("n*"):
            k = int(rule[2:])
            if n % k:
                return f"{self.name} takes a multiple of {k} bytes, not {n}"
        if self.lrange and not self.lrange[0] <= n <= self.lrange[1]:
            lo, hi = self.lrange
            return f"{self.name} takes {lo}..{hi} bytes, not {n}" if lo != hi else \
                f"{self.name} takes exactly {lo} bytes, not {n}"
        return None

    def check_value(self, value) -> None:
        if self.vrange and type(value) is int:  # other types are refused by the value type
            lo, hi = self.vrange
            if not lo <= value <= hi:
                raise ConfigError(f"{self.name} {value} out of range {lo}..{hi}")

    def decode(self, raw: bytes):
        if len(raw) != self.fixed and not self.free_length:
            why = self.length_ok(len(raw))
            if why:
                raise ConfigError(why)
        value = self.vtype.decode(raw)
        if self.vrange:
            self.check_value(value)
        return value

    def encode(self, value) -> bytes:
        try:
            key = (type(value), value)
            return self._encoded[key]
        except KeyError:
            raw = self._encode(value)
            if len(self._encoded) >= MEMO_SIZE:
                self._encoded.clear()
            self._encoded[key] = raw
            return raw
        except TypeError:  # unhashable: not remembered
            return self._encode(value)

    def _encode(self, value) -> bytes:
        vrange = self.vrange
        if vrange and type(value) is int and not vrange[0] <= value <= vrange[1]:
            self.check_value(value)  # raises
        raw = self.vtype.encode(value)
        if len(raw) != self.fixed and not self.free_length:
            why = self.length_ok(len(raw))
            if why:
                raise ConfigError(why)
        return raw

    def from_text(self, text: str):
        """A value as written in the text form: an enum label or what the value type reads."""
        try:
            return self._parsed[text]
        except KeyError:
            pass
        value = self._from_text(text)
        try:
            hash(value)
        except TypeError:
            return value
        if len(self._parsed) >= MEMO_SIZE:
            self._parsed.clear()
        self._parsed[text] = value
        return value

    def _from_text(self, text: str):
        if self.enums:
            label = text.strip().lower()
            for value, name in self.enums.items():
                if name.lower() == label:
                    return value
        return self.vtype.from_text(text)

    def from_plain(self, x):
        """A value from YAML/JSON: an enum label or what the value type reads."""
        return self.from_text(x) if self.enums and isinstance(x, str) else self.vtype.from_plain(x)

    def child_named(self, name: str) -> Spec | None:
        return self.by_name.get(name) or self.by_name.get(name.lower())

    def walk(self):
        """Every spec under this one, depth first, in code order."""
        for code in sorted(self.children):
            child = self.children[code]
            yield child
            yield from child.walk()


def _span(text):
    return tuple(int(x) for x in text.split("..")) if text else None


def _rows(lines, prefix, variant):
    """The rows of one table (``tlvdata.ROWS`` or a subtree mounted at ``prefix``): variant-tagged rows
    and names chosen; a row's mount (``@subtree[:variant]``) is returned, not expanded."""
    for line in lines:
        fields = line.split("|")
        tags, _, path = fields[0].rpartition(":")
        if tags and variant not in tags.split(","):
            continue
        path = f"{prefix}{path}"
        names = fields[1].split(",")
        name, aliases = names[0], []
        for other in names[1:]:
            tag, _, override = other.partition("=")
            if other.startswith("+"):
                aliases.append(other[1:])
            elif tag == variant:
                name = override
        mount = fields[7] if len(fields) > 7 else ""
        yield path, name, fields[2], fields[3], _span(fields[4]), _span(fields[5]), fields[6] or None, aliases, mount


# Sub-TLVs are built when first used: mounted subtrees (classifiers, service flows, vendor-specific,
# L2VPN: two thirds of the 1,542 paths) and each top-level TLV's own sub-TLV rows. A per-file encode
# of a text config touches a few of them, and building all of them was most of
# `hfcprov config encode`'s import time. The tree is the same either way
# (`walk()` builds everything; docs/config-formats.md's listing is checked against it).
_LAZY = ("children", "by_name", "vendor_specific")
_expanding = _thread.allocate_lock()


def _build() -> Spec:
    root = Spec(path="", name="Main", type="aggregate", rule="sub")
    top, nested = [], {}  # the top-level rows now; each top-level TLV's own sub-TLV rows when first used
    for line in tlvdata.ROWS.splitlines():
        path = line.split("|", 1)[0].rpartition(":")[2]
        if "." in path:
            nested.setdefault(path.split(".", 1)[0], []).append(line)
        else:
            top.append(line)
    # the aliases of the top-level table are listed apart, in tlvdata.ALIASES
    _fill(root, top, "", "", tlvdata.SUBTREES, tlvdata.ALIASES)
    for code, lines in nested.items():
        spec = root.children.get(int(code)) if code.isdigit() else None
        if spec is None or spec.path != code:
            raise RuntimeError(f"TLV table: {lines[0].split('|', 1)[0]} has no parent row")
        if "_mount" in spec.__dict__:
            raise RuntimeError(f"TLV table: {code} has rows besides its subtree")
        spec._mount = (lines, "", "", tlvdata.SUBTREES)
        del spec.children, spec.by_name, spec.vendor_specific  # built on first use: Spec.__getattr__
    return root


def _fill(top: Spec, lines, prefix: str, variant: str, subtrees: dict[str, str], aliases=()) -> None:
    """Add one table's rows under ``top``; each mount point gets its subtree on first use (``Spec._expand``)."""
    index: dict[str, Spec] = {top.path: top}
    aliases = list(aliases)
    mounts = []
    for path, name, typ, rule, vrange, lrange, ref, also, mount in _rows(lines, prefix, variant):
        aliases += [(path, a) for a in also]
        parent_path = path.rsplit(".", 1)[0] if "." in path else ""
        parent = index.get(parent_path)
        if parent is None or parent_path == path:
            raise RuntimeError(f"TLV table: {path} has no parent row")  # a broken table, not a user error
        if path in index:
            raise RuntimeError(f"TLV table: {path} listed twice")
        if typ not in TYPES and rule != "sub" or rule == "sub" and typ != "aggregate":
            raise RuntimeError(f"TLV table: {path} has unknown type {typ}")
        if path.isdigit() and int(path) in FRAGMENTED:
            lrange = None  # 0..255 per fragment; the joined chain has no limit
        spec = Spec(path, name, typ, rule, vrange, lrange, ref)
        if typ.startswith("uint") and name in tlvdata.ENUMS:
            spec.enums = dict(tlvdata.ENUMS[name])
        index[path] = spec
        parent.children[spec.code] = spec
        _name(parent, name, spec)
        if mount:
            mounts.append((spec, mount))
    for spec in index.values():
        spec.vendor_specific = _is_vendor_specific(spec)
    for path, name in aliases:
        if path in index and path != "0":
            index[path].aliases.append(name)
            _name(index[path.rsplit(".", 1)[0] if "." in path else ""], name, index[path])
    for spec, mount in mounts:
        sub, _, sub_variant = mount[1:].partition(":")
        if spec.children:
            raise RuntimeError(f"TLV table: {spec.path} has rows besides its @{sub} subtree")
        spec._mount = (subtrees[sub].splitlines(), f"{spec.path}.", sub_variant, subtrees)
        del spec.children, spec.by_name, spec.vendor_specific  # built on first use: Spec.__getattr__


def _is_vendor_specific(spec: Spec) -> bool:
    kid = spec.children.get(VENDOR_ID)
    return spec.compound and kid is not None and kid.name == "VendorIdentifier"


def children_for(spec: Spec, children) -> dict[int, Spec]:
    """The sub-TLV specs that apply to one instance of ``spec``: its children, except under a
    VendorSpecific TLV whose VendorIdentifier (sub-TLV 8) is not CableLabs' 0xFFFFFF, where only the
    VendorIdentifier is known. ``children``: ``Tlv`` nodes or (code, value bytes) pairs."""
    if not spec.vendor_specific:
        return spec.children
    for child in children:
        code, value = (child.code, child.value) if isinstance(child, Tlv) else child
        if code == VENDOR_ID:
            if value == CABLELABS or not isinstance(value, (bytes, bytearray)):
                return spec.children
            return {VENDOR_ID: spec.children[VENDOR_ID]}
    return spec.children


def check_vendor(spec: Spec, children) -> None:
    """Refuse named (typed) sub-TLVs under another vendor's VendorSpecific TLV: their meaning is the vendor's."""
    kids = children_for(spec, children)
    if kids is spec.children:
        return
    for child in children:
        if child.code != VENDOR_ID and not isinstance(child.value, (bytes, bytearray)) or child.compound:
            vendor = next(c.value for c in children if c.code == VENDOR_ID)
            raise ConfigError(f"sub-TLV {child.code} of {spec.name} is named only under vendor ID 0xffffff"
                              f" (CableLabs); vendor 0x{bytes(vendor).hex()} needs GenericTLV", path=f"{spec.path}.{child.code}")


def _name(parent: Spec, name: str, spec: Spec) -> None:
    if name in parent.by_name and parent.by_name[name] is not spec:
        raise RuntimeError(f"TLV table: two children of {parent.path or 'Main'} are named {name}")
    parent.by_name[name] = spec
    parent.by_name.setdefault(name.lower(), spec)


ROOT = _build()


def lookup(path: str) -> Spec | None:
    """Spec of a dotted TLV path such as ``24.35.2``; None if the dictionary does not know it."""
    spec = ROOT
    for part in path.split("."):
        spec = spec.children.get(int(part))
        if spec is None:
            return None
    return spec


_BY_NAME_ANYWHERE: dict[str, list[Spec]] = {}


def specs_named(name: str) -> list[Spec]:
    """Every spec anywhere in the dictionary with this name (or alias), depth first in code order. Builds
    the whole tree on first use: for error paths and the docsis C tool's loose name lookup only."""
    if not _BY_NAME_ANYWHERE:
        index: dict[str, list[Spec]] = {}
        for spec in ROOT.walk():
            for key in {spec.name, *spec.aliases}:
                index.setdefault(key, []).append(spec)
                index.setdefault(key.lower(), []).append(spec)
        _BY_NAME_ANYWHERE.update(index)
    found = _BY_NAME_ANYWHERE.get(name) or _BY_NAME_ANYWHERE.get(name.lower(), [])
    return list(dict.fromkeys(found))


def names_under(parent: Spec) -> list[str]:
    """The names (and aliases) the text form accepts under ``parent``: for "did you mean"."""
    return [name for child in parent.children.values() for name in (child.name, *child.aliases)]


def tlv_line(spec: Spec) -> str:
    """One greppable line per TLV: path, name (and aliases), type, length rule, range, spec section."""
    rng = f"{spec.vrange[0]}..{spec.vrange[1]}" if spec.vrange else \
        (f"len {spec.lrange[0]}..{spec.lrange[1]}" if spec.lrange else "-")
    kind = "sub-TLVs" if spec.compound else spec.type
    alias = f" (also {', '.join(spec.aliases)})" if spec.aliases else ""
    enums = " enum " + ",".join(f"{v}={n}" for v, n in spec.enums.items()) if spec.enums else ""
    return (f"{spec.path:<14} {spec.name + alias:<48} {kind:<24} {spec.rule:<9} {rng:<26} {spec.spec_ref or ''}"
            f"{enums}").rstrip()


def tlv_listing() -> str:
    """The whole dictionary, one ``tlv_line`` per TLV, depth first in code order."""
    return "\n".join(tlv_line(spec) for spec in ROOT.walk()) + "\n"
