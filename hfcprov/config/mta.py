"""PacketCable MTA config files (PKT-SP-PROV): the same TLVs as a CM file, framed differently.

- The file starts with TLV 254 (MtaConfigDelimiter) value 1 and ends with TLV 254 value 255; there is
  no CM MIC, CMTS MIC, end-of-data marker or padding.
- SNMP objects are TLV 11 (a BER VarBind, 1-byte length); one longer than 255 bytes is TLV 64 with a
  2-byte big-endian length (only in MTA files: in a CM file TLV 64 is an ordinary 1-byte-length TLV).
- The configuration hash: SHA-1 over the whole file without the hash TLV, carried as TLV 11 setting
  pktcMtaDevProvConfigHash.0 (PacketCable, "na") or the Euro-PacketCable object ("eu") to an OCTET
  STRING of 20 bytes, just before the end delimiter. (The provisioning server may instead SET it over
  SNMP with pktcMtaDevConfigFile; either way it is this SHA-1.)

A decoded TLV 64 is a ``Tlv(11, VarBind, wide=True)`` so every form shows it as a ``SnmpMibObject`` and
it is written back as TLV 64; a text-built SnmpMibObject is written as TLV 64 only when it must be.
"""

from __future__ import annotations

from hfcprov.config.ber import VarBind
from hfcprov.config.codec import _decode_node, _read, _value, encode_tlv, is_mta
from hfcprov.config.dictionary import ROOT
from hfcprov.config.errors import ConfigError
from hfcprov.config.tree import ConfigTree, Tlv
from hfcprov.lazy import lazy

hashlib = lazy("hashlib")  # the configuration hash (SHA-1): MTA files only

DELIMITER, SNMP_OBJECT, WIDE_SNMP_OBJECT = 254, 11, 64
BEGIN, END = 1, 255
HASH_OIDS = {"na": "1.3.6.1.4.1.4491.2.2.1.1.2.7.0",  # pktcMtaDevProvConfigHash.0 (PKT-SP-PROV)
             "eu": "1.3.6.1.4.1.7432.1.1.2.9.0"}  # Euro-PacketCable's config hash object
_HASH_OF_OID = {oid: name for name, oid in HASH_OIDS.items()}


def decode_mta(data: bytes, *, strict: bool = False) -> ConfigTree:
    """Decode an MTA file; lenient like ``decode`` (odd fields kept raw, a wrong hash or delimiter noted
    in ``tree.warnings``), ``strict`` raises the first warning. Broken framing is an error."""
    data = bytes(data)
    if not data:
        raise ConfigError("empty file: no TLVs")
    tree = ConfigTree(mta=True)
    spec11 = ROOT.children[SNMP_OBJECT]
    pos = 0
    while pos < len(data):
        code = data[pos]
        if code == WIDE_SNMP_OBJECT:
            if pos + 3 > len(data):
                raise ConfigError("TLV truncated: no 2-byte length", offset=pos, path="64")
            end = pos + 3 + int.from_bytes(data[pos + 1:pos + 3], "big")
            if end > len(data):
                raise ConfigError(f"length {end - pos - 3} overruns the file ({len(data) - pos - 3} bytes left)",
                                  offset=pos, path="64")
            node = _decode_node(spec11, SNMP_OBJECT, data[pos + 3:end], pos, "64", tree.warnings)
            node.wide = True
        else:
            raw, end = _read(data, pos, str(code))
            node = _decode_node(ROOT.children.get(code), code, raw, pos, str(code), tree.warnings)
        tree.tlvs.append(node)
        pos = end
    _check(tree, data)
    if strict and tree.warnings:
        raise tree.warnings[0]
    return tree


def _check(tree: ConfigTree, data: bytes) -> None:
    tlvs = tree.tlvs
    if not (tlvs and tlvs[0].code == DELIMITER and tlvs[0].value == BEGIN):
        tree.warnings.append(ConfigError("an MTA file starts with MtaConfigDelimiter 1", offset=0, path="254"))
    if not (tlvs and tlvs[-1].code == DELIMITER and tlvs[-1].value == END):
        tree.warnings.append(ConfigError("an MTA file ends with MtaConfigDelimiter 255", path="254"))
    for kind, at, given in _hashes(data):
        if given != config_hash(data, at):
            tree.warnings.append(ConfigError(f"configuration hash ({kind}) mismatch: the file was changed after"
                                             " it was hashed", offset=at[0], path="11"))


def config_hash(data: bytes, at: tuple[int, int]) -> bytes:
    """SHA-1 of the file without the hash TLV at ``at`` (start, end)."""
    return hashlib.sha1(data[:at[0]] + data[at[1]:]).digest()


def _hashes(data: bytes):
    """(kind, (start, end), value) of each hash TLV in an encoded MTA file."""
    pos = 0
    while pos < len(data):
        code = data[pos]
        if code == WIDE_SNMP_OBJECT:
            pos += 3 + int.from_bytes(data[pos + 1:pos + 3], "big")
            continue
        end = pos + 2 + data[pos + 1]
        if code == SNMP_OBJECT:
            vb = _hash_varbind(data[pos + 2:end])
            if vb is not None:
                yield _HASH_OF_OID[vb.oid], (pos, end), vb.value
        pos = end


def _hash_varbind(raw: bytes) -> VarBind | None:
    try:
        vb = ROOT.children[SNMP_OBJECT].decode(raw)
    except ConfigError:
        return None
    return vb if vb.oid in _HASH_OF_OID and vb.type == "OctetString" else None


def encode_mta(tree: ConfigTree, hash: str | None = None) -> bytes:
    """An MTA file from ``tree``: TLVs as they are (SnmpMibObjects over 255 bytes, and decoded TLV 64s,
    as TLV 64 with a 2-byte length), with every configuration hash TLV recomputed; ``hash`` ("na" or
    "eu") adds one before the end delimiter when the tree has none. A tree built from text must start
    with MtaConfigDelimiter 1 and end with MtaConfigDelimiter 255 (a decoded one is written back as it was)."""
    tlvs = list(tree.tlvs)
    if not tree.mta:
        first, last = (tlvs[0], tlvs[-1]) if tlvs else (None, None)
        if not (first and first.code == DELIMITER and first.value == BEGIN
                and last.code == DELIMITER and last.value == END and len(tlvs) > 1):
            raise ConfigError("an MTA file starts with MtaConfigDelimiter 1 and ends with MtaConfigDelimiter 255",
                              path="254")
    if hash is not None:
        if hash not in HASH_OIDS:
            raise ConfigError(f"unknown configuration hash {hash!r}: expected na or eu")
        if not any(_is_hash(t) for t in tlvs):
            at = len(tlvs) - 1 if tlvs and tlvs[-1].code == DELIMITER else len(tlvs)
            tlvs.insert(at, Tlv(SNMP_OBJECT, VarBind(HASH_OIDS[hash], "OctetString", bytes(20))))
    spec11 = ROOT.children[SNMP_OBJECT]
    out, hashes = bytearray(), []
    for t in tlvs:
        if t.code == SNMP_OBJECT and not t.compound:
            raw = _value(spec11, t, "")
            if t.wide or len(raw) > 255:
                if len(raw) > 0xFFFF:
                    raise ConfigError(f"SnmpMibObject is {len(raw)} bytes; TLV 64 holds at most 65535", path="11")
                out += bytes((WIDE_SNMP_OBJECT,)) + len(raw).to_bytes(2, "big") + raw
                continue
            if _is_hash(t):
                hashes.append((len(out), len(out) + 2 + len(raw)))
            out += bytes((SNMP_OBJECT, len(raw))) + raw
        else:
            out += encode_tlv(ROOT.children.get(t.code), t)
    for start, end in hashes:  # each over the file without itself
        digest = config_hash(bytes(out), (start, end))
        out[end - 20:end] = digest
    return bytes(out)


def _is_hash(t: Tlv) -> bool:
    v = t.value
    return t.code == SNMP_OBJECT and isinstance(v, VarBind) and v.oid in _HASH_OF_OID and v.type == "OctetString" \
        and len(v.value) == 20


def verify_mta(data: bytes) -> str:
    """Check an MTA file's delimiters and configuration hash; raise ``ConfigError`` naming what fails, else
    say which hash it carries."""
    tree = decode_mta(data)
    framing = [w for w in tree.warnings if w.path in ("254", "11")]
    if framing:
        raise framing[0]
    kinds = [kind for kind, _, _ in _hashes(bytes(data))]
    if not kinds:
        raise ConfigError("no configuration hash (pktcMtaDevProvConfigHash) in the file", path="11")
    return ", ".join(kinds)


__all__ = ["is_mta", "decode_mta", "encode_mta", "verify_mta", "config_hash", "HASH_OIDS"]
