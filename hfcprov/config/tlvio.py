"""Reading and writing single TLVs against the dictionary: what the CM codec, MTA framing and the text,
YAML and JSON forms share.

    raw, end = value_at(data, pos, "24")                  # one TLV's value bytes (errors name the offset)
    node = decode_node(spec, code, raw, pos, "", warnings)  # typed, lenient: an unfit value is kept raw
    whole = encode_tlv(spec, node)                          # type, length, value (errors name the TLV path)
    raw = generic_bytes(spec, node)                         # not None: the forms show it as a GenericTLV

A file's framing (MICs, end marker, padding, MTA delimiters and hash) is ``config.framing``'s; this
module knows one TLV at a time.
"""

from __future__ import annotations

from hfcprov.config.dictionary import FRAGMENTED, MAX_VALUE, Spec, check_vendor, children_for
from hfcprov.config.errors import ConfigError
from hfcprov.config.tree import Tlv

# Values in BER may use encodings we would not produce (long-form lengths...); such a
# value is kept as raw bytes so the file re-encodes to the same bytes.
BER_TYPES = ("snmp_varbind_ber", "ber_oid", "ber_oid+uint8")
RAW_TYPES = ("bytes", "md5_digest", "empty")  # leaf types whose value is bytes anyway
_SHOWN_RAW = RAW_TYPES + BER_TYPES  # leaf types whose value may be bytes without being unfit


def value_at(data: bytes, pos: int, path: str, base: int = 0, parent: bool = False) -> tuple[bytes, int]:
    """Value bytes and end position of the TLV at ``pos`` in ``data`` (a file, or the value of a
    compound TLV that starts at file offset ``base``); errors name the file offset."""
    if pos + 2 > len(data):
        raise ConfigError("TLV truncated: no length byte", offset=base + pos, path=path)
    length = data[pos + 1]
    end = pos + 2 + length
    if end > len(data):
        what = "its parent" if parent else "the file"
        raise ConfigError(f"length {length} overruns {what} ({len(data) - pos - 2} bytes left)",
                          offset=base + pos, path=path)
    return data[pos + 2:end], end


def decode_node(spec: Spec | None, code: int, raw: bytes, offset: int, parent_path: str, warnings: list,
                sub: int | None = None, memo: dict | None = None) -> Tlv:
    """One TLV's value ``raw`` (at file ``offset``) as a ``Tlv``: typed by ``spec``, sub-TLVs decoded.

    Lenient: a value that does not fit its type is kept as raw bytes (``unfit``) with a warning in
    ``warnings``; BER the encoder would not write the same way is kept as raw bytes. A sub-TLV length
    overrunning its parent is always an error. ``sub``: this TLV's code under ``parent_path``.

    ``memo`` (a reader of many files, ``config.lint``, that never changes the nodes): sub-TLVs decoded before
    without a warning, by their bytes and their parent's dictionary entry, are the same ``Tlv`` objects
    again."""
    # the path string is built only when needed (errors, children): most TLVs are leaves
    path = parent_path if sub is None else f"{parent_path}.{sub}"
    if spec is None:
        return Tlv(code, bytes(raw))  # unknown: kept as raw bytes, rendered as hex
    if spec.compound:
        subs, pos, base, n = [], 0, offset + 2, len(raw)
        while pos < n:  # the framing first: a length overrunning its parent is an error, never lenient
            sub_code = raw[pos]
            end = pos + 2 + (raw[pos + 1] if pos + 1 < n else 0)
            if pos + 2 > n or end > n:
                value_at(raw, pos, f"{path}.{sub_code}", base, parent=True)  # raises with the details
            subs.append((sub_code, pos, end))
            pos = end
        kids = spec.children
        if spec.vendor_specific:
            kids = children_for(spec, [(c, raw[p + 2:e]) for c, p, e in subs if c == 8][:1])
            memo = None  # sub-TLVs typed by this file's vendor: not remembered
        if memo is None:
            children = [decode_node(kids.get(c), c, raw[p + 2:e], base + p, path, warnings, c) for c, p, e in subs]
        else:
            children = []
            for c, p, e in subs:
                key = (id(kids), bytes(raw[p:e]))  # kids: the dictionary's own table of this parent
                child = memo.get(key)
                if child is None:
                    seen = len(warnings)
                    child = decode_node(kids.get(c), c, raw[p + 2:e], base + p, path, warnings, c, memo)
                    if len(warnings) == seen:
                        memo[key] = child
                children.append(child)
        return Tlv(code, None, children)
    try:
        value = spec.decode(raw)
    except ConfigError as err:
        if spec.type in BER_TYPES and spec.length_ok(len(raw)) is None:
            value = bytes(raw)  # BER we do not re-encode identically: keep the bytes as they are
        else:
            warnings.append(ConfigError(f"{err.message}; kept as raw bytes", offset=offset, path=path))
            return Tlv(code, bytes(raw), unfit=True)
    else:
        if spec.type in BER_TYPES and _reencode(spec, value) != raw:
            value = bytes(raw)
    return Tlv(code, value)


def _reencode(spec: Spec, value) -> bytes | None:
    try:
        return spec.encode(value)
    except ConfigError:
        return None


def encode_value(spec: Spec | None, node: Tlv, path: str) -> bytes:
    """The value bytes of one TLV (without its type and length); errors name ``path``."""
    prefix = path.rsplit(".", 1)[0] + "." if "." in path else ""
    try:
        return value_bytes(spec, node, prefix)
    except ConfigError as err:
        raise err.at(path=path)


def value_bytes(spec: Spec | None, node: Tlv, prefix: str) -> bytes:
    """The value bytes of ``node`` under ``spec`` (None: unknown); ``prefix`` is its parent's path and a
    dot ('' at the top). Errors carry no path: ``encode_value`` and ``encode_tlv`` add it."""
    value = node.value
    if value is None:  # compound
        if spec is not None and not spec.compound:
            raise ConfigError(f"{spec.name} takes a value, not sub-TLVs")
        inner = f"{prefix}{node.code}."
        kids = {} if spec is None else spec.children
        if spec is not None and spec.vendor_specific:
            check_vendor(spec, node.children)
            kids = children_for(spec, node.children)
        return b"".join([encode_tlv(kids.get(c.code), c, inner) for c in node.children])
    if node.unfit:  # decoded leniently, or given as a GenericTLV: written back as it was
        return bytes(value)
    # Raw bytes given for a typed leaf (BER kept byte for byte) are checked below as bytes; anything
    # else goes through the value type. Runs for every leaf of every file.
    if spec is not None and spec.vtype is not None and (
            spec.type in RAW_TYPES or not isinstance(value, (bytes, bytearray))):
        return spec.encode(value)
    # Unknown TLV, a known compound given as raw bytes, or BER kept byte for byte.
    if not isinstance(value, (bytes, bytearray)):
        what = "an unknown TLV" if spec is None else f"{spec.name} (it has sub-TLVs)"
        raise ConfigError(f"the value of {what} must be raw bytes, got {value!r}")
    raw = bytes(value)
    why = spec.length_ok(len(raw)) if spec is not None and not spec.compound else None
    if why:
        raise ConfigError(why)
    return raw


def encode_tlv(spec: Spec | None, node: Tlv, prefix: str = "") -> bytes:
    """The whole TLV (type, length, value); ``prefix`` is the parent's path and a dot, '' at the top."""
    try:
        raw = value_bytes(spec, node, prefix)
    except ConfigError as err:
        raise err.at(path=f"{prefix}{node.code}")
    n = len(raw)
    if n > 254 or node.fragments is not None or not 0 <= node.code <= 255:
        return _long_or_bad(spec, node, raw, prefix)
    return bytes((node.code, n)) + raw


def _long_or_bad(spec: Spec | None, node: Tlv, raw: bytes, prefix: str) -> bytes:
    path = f"{prefix}{node.code}"
    if not 0 <= node.code <= 255:
        raise ConfigError(f"TLV code {node.code} is not 0..255", path=path)
    if node.code in FRAGMENTED and not prefix:
        sizes = node.fragments if node.fragments and sum(node.fragments) == len(raw) else \
            split_sizes(len(raw), FRAGMENTED[node.code])
        out, pos = bytearray(), 0
        for n in sizes:
            if n > MAX_VALUE:
                raise ConfigError(f"fragment of {n} bytes exceeds 255", path=path)
            out += bytes([node.code, n]) + raw[pos:pos + n]
            pos += n
        return bytes(out)
    if len(raw) > MAX_VALUE:
        raise too_long(spec, len(raw), path)
    return bytes((node.code, len(raw))) + raw


def split_sizes(total: int, size: int) -> tuple[int, ...]:
    """Fragment sizes of a ``total``-byte value split into TLVs of at most ``size`` bytes (CVC chains)."""
    if total == 0:
        return (0,)
    return tuple(min(size, total - i) for i in range(0, total, size))


def too_long(spec: Spec | None, n: int, path: str) -> ConfigError:
    spans = ", ".join(map(str, FRAGMENTED))
    return ConfigError(f"{spec.name if spec else 'value'} is {n} bytes; a TLV value holds at most {MAX_VALUE}"
                       f" (only TLVs {spans} may span several TLVs)", path=path)


def tlv_size(code: int, n: int, top: bool) -> int:
    """Encoded size of a TLV with an ``n``-byte value (several TLVs for a long fragmented value at the top)."""
    if top and code in FRAGMENTED and n > MAX_VALUE:
        size = FRAGMENTED[code]
        return n + 2 * -(-n // size)
    return n + 2


def generic_bytes(spec: Spec | None, node: Tlv) -> bytes | None:
    """The bytes the text, YAML and JSON forms write as a ``GenericTLV`` for ``node`` (None: it has a name).

    An unknown TLV, a value kept raw because it did not fit its type (``unfit``: decoded leniently or
    given as a GenericTLV), a known compound given as raw bytes, or raw bytes for a typed leaf that is
    neither bytes nor BER: each is written as given, so the form encodes back to the same bytes."""
    value = node.value
    if spec is None or node.unfit or (spec.compound and value is not None) or (
            isinstance(value, (bytes, bytearray)) and spec.type not in _SHOWN_RAW):
        if isinstance(value, (bytes, bytearray)):
            return bytes(value)
        return value_bytes(None, node, "") if value is None else b""  # sub-TLVs under an unknown code
    return None


def generic_form(spec: Spec | None, node: Tlv) -> tuple[int, bytes] | None:
    """(code, bytes) of the ``GenericTLV`` the forms write for ``node``, or None when it is written by name.

    ``generic_bytes``'s rule, plus an MTA file's TLV 64 (``node.wide``) that would read back as a TLV 11:
    one of 255 bytes or less, or one whose VarBind is kept as raw bytes, is written as GenericTLV 64."""
    if node.wide:
        raw = bytes(node.value) if isinstance(node.value, (bytes, bytearray)) else value_bytes(spec, node, "")
        return (64, raw) if len(raw) <= MAX_VALUE or isinstance(node.value, (bytes, bytearray)) else None
    raw = generic_bytes(spec, node)
    return None if raw is None else (node.code, raw)


def generic_node(spec: Spec | None, code: int, raw: bytes, parent_path: str) -> tuple[Tlv, list[ConfigError]]:
    """The node a ``GenericTLV`` (``code``, value ``raw``) stands for under a parent at ``parent_path`` ('' at
    the top), as decoding the same bytes makes it: typed when they fit the dictionary's ``spec``, else kept as
    given (``unfit``), written back byte for byte either way. Also the warnings (no line yet) when they do
    not fit: a modem may refuse such a TLV."""
    warnings: list[ConfigError] = []
    path = f"{parent_path}.{code}" if parent_path else str(code)
    if spec is None:
        return Tlv(code, bytes(raw), unfit=True), warnings
    try:
        node = decode_node(spec, code, raw, 0, parent_path or str(code), warnings, code if parent_path else None)
    except ConfigError as err:  # sub-TLV lengths that do not add up
        node, warnings = Tlv(code, bytes(raw), unfit=True), [ConfigError(err.message, path=err.path)]
    notes = [ConfigError(w.message.replace("; kept as raw bytes", "; written as given"), path=w.path or path)
             for w in warnings]
    if spec.compound and node.unfit:
        notes = [ConfigError(f"GenericTLV {code}: {spec.name} has sub-TLVs, and these bytes are not sub-TLVs"
                             f" ({notes[0].message}); written as given", path=path)]
    return node, notes


def typed_generics(parent: Spec | None, path: str, nodes: list[Tlv], indices, mta: bool = False):
    """Replace each ``nodes[i]`` (``i`` in ``indices``: raw GenericTLV nodes of one block under ``parent`` at
    ``path``) by ``generic_node``'s reading; ``mta``: a top-level block of an MTA file, where TLV 64 is an
    SNMP object with a 2-byte length. Yields (index, the new node, its warnings) for the forms' lines."""
    kids = {} if parent is None else children_for(parent, nodes) if parent.vendor_specific else parent.children
    for i in indices:
        node = nodes[i]
        if mta and not path and node.code == 64:
            typed, notes = generic_node(kids.get(11), 11, node.value, "")
            typed.wide = True
        else:
            typed, notes = generic_node(kids.get(node.code), node.code, node.value, path)
        nodes[i] = typed
        yield i, typed, notes


__all__ = ["BER_TYPES", "RAW_TYPES", "value_at", "decode_node", "encode_value", "value_bytes", "encode_tlv",
           "split_sizes", "too_long", "tlv_size", "generic_bytes", "generic_form", "generic_node", "typed_generics"]
