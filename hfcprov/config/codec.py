"""Binary DOCSIS config files <-> ``ConfigTree``, with the CM and CMTS MICs.

File layout (MULPI Annex D): TLVs (1-byte type, 1-byte length, value), then TLV 6 CM MIC
(MD5 of every byte before it), TLV 7 CMTS MIC (HMAC-MD5 keyed by the shared secret over
the TLVs listed in ``CMTS_MIC_ORDER``), the end-of-data marker 0xFF and 0x00 padding to a
multiple of 4 bytes. In a CM file every TLV, 64 included, has a 1-byte length.
"""

from __future__ import annotations

from hfcprov.config.dictionary import (CM_MIC, CMTS_MIC, END, FRAGMENTED, MAX_VALUE, PAD, ROOT, Spec,
                                       check_vendor, children_for)
from hfcprov.config.errors import ConfigError
from hfcprov.config.framing import CMTS_MIC_ORDER, assemble, cmts_mic, md5
from hfcprov.config.tree import ConfigTree, Layout, Tlv
from hfcprov.config.types import RAW
from hfcprov.lazy import lazy

hmac = lazy("hmac")  # verify with a shared secret only

# Values in BER may use encodings we would not produce (long-form lengths...); such a
# value is kept as raw bytes so the file re-encodes to the same bytes.
BER_TYPES = ("snmp_varbind_ber", "ber_oid", "ber_oid+uint8")
RAW_TYPES = ("bytes", "md5_digest", "empty")  # leaf types whose value is bytes anyway
MTA_DELIMITER = 254  # a file that starts with it is a PacketCable MTA file (hfcprov.config.mta)


def is_mta(data: bytes) -> bool:
    """Whether a binary file is an MTA file: it starts with MtaConfigDelimiter 1 (begin)."""
    return data[:3] == bytes((MTA_DELIMITER, 1, 1))
MIC_NAMES = {CM_MIC: "CM MIC (TLV 6)", CMTS_MIC: "CMTS MIC (TLV 7)"}


def decode(data: bytes, secret: bytes | None = None, *, strict: bool = False) -> ConfigTree:
    """Decode a binary config file; with ``secret``, verify both MICs first.

    Lenient: a known TLV whose bytes do not fit its type is kept as raw bytes, a wrong or missing CM
    MIC is noted, each in ``tree.warnings`` (a ``ConfigError`` naming offset and TLV path); the file
    still re-encodes byte for byte. ``strict``: the first warning is raised instead. Broken framing
    (a length overrunning the file or its parent TLV) is always an error."""
    data = bytes(data)
    if not data:
        raise ConfigError("empty file: no TLVs, no CM MIC")
    if secret is not None:
        verify(data, secret)
    # A file that does not open with MtaConfigDelimiter 1 is a CM file even when its first TLV is
    # 254: it re-encodes as one (encode() would otherwise pick MTA framing and refuse it).
    tree = ConfigTree(cm_file=not is_mta(data))
    warnings = tree.warnings
    marks: list[tuple[int, int]] = []
    kept: dict[int, bytes] = {}
    end_marker, tail = False, b""
    pos, last_fragmented = 0, False
    while pos < len(data):
        code = data[pos]
        if code == PAD:
            marks.append((len(tree.tlvs), PAD))
            pos += 1
            last_fragmented = False
            continue
        if code == END:
            end_marker, tail = True, data[pos + 1:]
            break
        raw, end = _read(data, pos, str(code))
        if code in (CM_MIC, CMTS_MIC):
            _mic(tree, data, pos, code, raw, marks, kept)
            last_fragmented = False
        elif code in FRAGMENTED and last_fragmented and tree.tlvs[-1].code == code:
            node = tree.tlvs[-1]
            sizes = (node.fragments or _split_sizes(len(node.value), FRAGMENTED[code])) + (len(raw),)
            node.value += raw
            node.fragments = None if sizes == _split_sizes(len(node.value), FRAGMENTED[code]) else sizes
        else:
            node = _decode_node(ROOT.children.get(code), code, raw, pos, str(code), warnings)
            if code in FRAGMENTED and len(raw) > FRAGMENTED[code]:
                node.fragments = (len(raw),)  # longer than the standard fragment: keep as is
            tree.tlvs.append(node)
            last_fragmented = code in FRAGMENTED
        pos = end
    if tree.cm_mic is None:
        warnings.append(ConfigError("no CM MIC (TLV 6): a cable modem refuses this file", path="6"))
    n = len(tree.tlvs)
    standard_marks = [(n, CM_MIC)] + ([(n, CMTS_MIC)] if tree.cmts_mic else [])
    if not (marks == standard_marks and not kept and end_marker and tail == b"\0" * _pad(pos + 1)):
        tree.layout = Layout(marks=marks, end_marker=end_marker, tail=tail, kept=kept)
    if strict and warnings:
        raise warnings[0]
    return tree


def _mic(tree: ConfigTree, data: bytes, pos: int, code: int, raw: bytes, marks: list, kept: dict) -> None:
    """A MIC TLV met at ``pos``: the first of each code is the file's; later ones are recomputed on encode
    when they were right (a second CM MIC over what precedes it, a CMTS MIC equal to the first), else kept."""
    k = len(marks)
    marks.append((len(tree.tlvs), code))
    if len(raw) != 16:
        kept[k] = raw
        tree.warnings.append(ConfigError(f"{MIC_NAMES[code]} is {len(raw)} bytes, not 16: kept as it is",
                                         offset=pos, path=str(code)))
    elif code == CM_MIC:
        right = md5(data[:pos]).digest() == raw
        if tree.cm_mic is None:
            tree.cm_mic = raw
            if not right:
                tree.warnings.append(ConfigError("CM MIC (TLV 6) mismatch: the file was changed after it was made",
                                                 offset=pos, path="6"))
        elif not right:
            kept[k] = raw
    elif tree.cmts_mic is None:
        tree.cmts_mic = raw
    elif raw != tree.cmts_mic:
        kept[k] = raw


def _split_sizes(total: int, size: int) -> tuple[int, ...]:
    if total == 0:
        return (0,)
    return tuple(min(size, total - i) for i in range(0, total, size))


def _pad(length: int) -> int:
    return -length % 4


def _read(data: bytes, pos: int, path: str, base: int = 0, parent: bool = False) -> tuple[bytes, int]:
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


def _decode_node(spec: Spec | None, code: int, raw: bytes, offset: int, parent_path: str, warnings: list,
                 sub: int | None = None) -> Tlv:
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
                _read(raw, pos, f"{path}.{sub_code}", base, parent=True)  # raises with the details
            subs.append((sub_code, pos, end))
            pos = end
        kids = spec.children
        if spec.vendor_specific:
            kids = children_for(spec, [(c, raw[p + 2:e]) for c, p, e in subs if c == 8][:1])
        children = [_decode_node(kids.get(c), c, raw[p + 2:e], base + p, path, warnings, c) for c, p, e in subs]
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
        return _value(spec, node, prefix)
    except ConfigError as err:
        raise err.at(path=path)


def _value(spec: Spec | None, node: Tlv, prefix: str) -> bytes:
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
    if node.unfit:  # decoded leniently: written back as it was read
        return bytes(value)
    # Raw bytes given for a typed leaf (BER kept byte for byte, or a GenericTLV with a known code) are
    # checked below as bytes; anything else goes through the value type. Runs for every leaf of every file.
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
        raw = _value(spec, node, prefix)
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
            _split_sizes(len(raw), FRAGMENTED[node.code])
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


def encode(tree: ConfigTree, secret: bytes | None = None) -> bytes:
    """Binary config file: the TLVs, CM MIC, CMTS MIC (computed with ``secret``, else the
    decoded one if any), end marker and padding, in the tree's layout or the standard one.
    A tree whose source carried a CMTS MIC (YAML/JSON ``CmtsMic``) needs the secret to write it."""
    if tree.mta or not tree.cm_file and tree.tlvs and tree.tlvs[0].code == MTA_DELIMITER:  # the C tool's rule too
        from hfcprov.config.mta import encode_mta

        return encode_mta(tree)
    if secret is None and tree.cmts_mic is None and tree.carries_cmts_mic:
        raise ConfigError("the source carries a CMTS MIC (TLV 7), which needs the shared secret (--secret-file);"
                          " remove CmtsMic from it to write a file without one", path="7")
    return assemble(content_items(tree.tlvs), secret, layout=tree.layout, decoded_cmts_mic=tree.cmts_mic)


def content_items(tlvs) -> list[tuple[int, bytes]]:
    """(code, whole encoded TLV) of each top-level TLV in file order: the content ``assemble`` frames.
    A CVC chain (81/82) longer than one TLV is one item holding all its fragments."""
    items = []
    for t in tlvs:
        if t.code in (PAD, CM_MIC, CMTS_MIC, END):
            raise ConfigError("pad, MICs and end marker are computed by the encoder, not content",
                              path=str(t.code))
        items.append((t.code, encode_tlv(ROOT.children.get(t.code), t)))
    return items


def _scan(data: bytes):
    """The TLVs of a binary file up to 0xFF as (code, whole TLV) in file order, and (offset, value) of the
    first CM MIC and of the first CMTS MIC (None when absent)."""
    items: list[tuple[int, bytes]] = []
    cm = cmts = None
    pos = 0
    while pos < len(data) and data[pos] != END:
        if data[pos] == PAD:
            pos += 1
            continue
        raw, end = _read(data, pos, str(data[pos]))
        code = data[pos]
        items.append((code, data[pos:end]))
        if code == CM_MIC and cm is None:
            cm = (pos, raw)
        elif code == CMTS_MIC and cmts is None:
            cmts = (pos, raw)
        pos = end
    return items, cm, cmts


def _cm_mic_failure(data: bytes, cm) -> str | None:
    if cm is None:
        return "no CM MIC (TLV 6)"
    if md5(data[:cm[0]]).digest() != cm[1]:
        return "CM MIC (TLV 6) mismatch: the file was changed after it was made"
    return None


def verify(data: bytes, secret: bytes) -> None:
    """Check the CM MIC and the CMTS MIC of a binary file; raise ``ConfigError`` naming which fails."""
    data = bytes(data)
    items, cm, cmts = _scan(data)
    failures = []
    cm_failure = _cm_mic_failure(data, cm)
    if cm_failure:
        failures.append(cm_failure)
    if cmts is None:
        failures.append("no CMTS MIC (TLV 7)")
    elif not hmac.compare_digest(cmts_mic(items, secret), cmts[1]):
        failures.append("CMTS MIC (TLV 7) mismatch: wrong shared secret or the file was changed")
    if failures:
        first = cm if cm_failure else cmts
        raise ConfigError("; ".join(failures), offset=first[0] if first else None,
                          path="6" if first is cm else "7")


def verify_cm_mic(data: bytes) -> None:
    """Check the CM MIC (TLV 6) only, as a cable modem does (the CMTS MIC needs the CMTS's shared secret);
    raise ``ConfigError`` when it is missing or wrong."""
    data = bytes(data)
    _, cm, _ = _scan(data)
    failure = _cm_mic_failure(data, cm)
    if failure:
        raise ConfigError(failure, offset=cm[0] if cm else None, path="6")


def read_secret(path) -> bytes:
    """A shared-secret file as DOCSIS tools read it: its bytes, trailing CR/LF removed."""
    from pathlib import Path

    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise ConfigError(f"cannot read secret file: {err.strerror}", source=str(path)) from None
    data = data.rstrip(b"\r\n")
    if not data:
        raise ConfigError("secret file is empty", source=str(path))
    return data


__all__ = ["decode", "encode", "content_items", "assemble", "verify", "verify_cm_mic", "cmts_mic", "read_secret", "CMTS_MIC_ORDER", "RAW"]
