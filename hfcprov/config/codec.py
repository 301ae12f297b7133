"""Binary DOCSIS config files <-> ``ConfigTree``, with the CM and CMTS MICs.

File layout (MULPI Annex D): TLVs (1-byte type, 1-byte length, value), then TLV 6 CM MIC
(MD5 of every byte before it), TLV 7 CMTS MIC (HMAC-MD5 keyed by the shared secret over
the TLVs listed in ``CMTS_MIC_ORDER``), the end-of-data marker 0xFF and 0x00 padding to a
multiple of 4 bytes. In a CM file every TLV, 64 included, has a 1-byte length.
"""

from __future__ import annotations

from hfcprov.config.dictionary import CM_MIC, CMTS_MIC, END, FRAGMENTED, PAD, ROOT
from hfcprov.config.errors import ConfigError
from hfcprov.config.framing import (CM_MIC_MISMATCH, CMTS_MIC_ORDER, MIC_NAMES, assemble, cm_mic_matches, cmts_mic,
                                    MTA_DELIMITER, encode_mta, is_mta, verify, verify_cm_mic)
from hfcprov.config.tlvio import decode_node, encode_tlv, split_sizes, value_at
from hfcprov.config.tree import ConfigTree, Layout
from hfcprov.config.types import RAW


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
    offsets = tree.offsets = []  # each top-level TLV's file offset (config.lint.locate)
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
        raw, end = value_at(data, pos, str(code))
        if code in (CM_MIC, CMTS_MIC):
            _mic(tree, data, pos, code, raw, marks, kept)
            last_fragmented = False
        elif code in FRAGMENTED and last_fragmented and tree.tlvs[-1].code == code:
            node = tree.tlvs[-1]
            sizes = (node.fragments or split_sizes(len(node.value), FRAGMENTED[code])) + (len(raw),)
            node.value += raw
            node.fragments = None if sizes == split_sizes(len(node.value), FRAGMENTED[code]) else sizes
        else:
            node = decode_node(ROOT.children.get(code), code, raw, pos, str(code), warnings)
            if code in FRAGMENTED and len(raw) > FRAGMENTED[code]:
                node.fragments = (len(raw),)  # longer than the standard fragment: keep as is
            tree.tlvs.append(node)
            offsets.append(pos)
            last_fragmented = code in FRAGMENTED
        pos = end
    if tree.cm_mic is None:
        warnings.append(ConfigError("no CM MIC (TLV 6): a cable modem refuses this file", path="6"))
    n = len(tree.tlvs)
    standard_marks = [(n, CM_MIC)] + ([(n, CMTS_MIC)] if tree.cmts_mic else [])
    standard_tail = end_marker and tail == b"\0" * _pad(pos + 1)
    if not (marks == standard_marks and not kept and standard_tail):
        # tail None: the standard padding (what the forms write as ``EndOfData;``)
        tree.layout = Layout(marks=marks, end_marker=end_marker, tail=None if standard_tail else tail, kept=kept)
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
        right = cm_mic_matches(data, pos, raw)
        if tree.cm_mic is None:
            tree.cm_mic = raw
            if not right:
                tree.warnings.append(ConfigError(CM_MIC_MISMATCH, offset=pos, path="6"))
        elif not right:
            kept[k] = raw
    elif tree.cmts_mic is None:
        tree.cmts_mic = raw
    elif raw != tree.cmts_mic:
        kept[k] = raw


def _pad(length: int) -> int:
    return -length % 4


def encode(tree: ConfigTree, secret: bytes | None = None, *, extended_mic: bool = True) -> bytes:
    """Binary config file: the TLVs, CM MIC, CMTS MIC (computed with ``secret``, else the
    decoded one if any), end marker and padding, in the tree's layout or the standard one.
    A tree whose source carried a CMTS MIC (YAML/JSON ``CmtsMic``) needs the secret to write it.
    With ``secret``, a TLV 43.6 Extended CMTS MIC is computed as the file asks (``extended_mic=False``:
    written as given; see ``config.framing``)."""
    if tree.mta or not tree.cm_file and tree.tlvs and tree.tlvs[0].code == MTA_DELIMITER:  # the C tool's rule too
        return encode_mta(tree)
    if secret is None and tree.cmts_mic is None and tree.carries_cmts_mic:
        raise ConfigError("the source carries a CMTS MIC (TLV 7), which needs the shared secret (--secret-file);"
                          " remove CmtsMic from it to write a file without one", path="7")
    return assemble(content_items(tree.tlvs), secret, layout=tree.layout, decoded_cmts_mic=tree.cmts_mic,
                    extended_mic=extended_mic)


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


__all__ = ["decode", "encode", "content_items", "assemble", "verify", "verify_cm_mic", "cmts_mic", "read_secret",
           "is_mta", "CMTS_MIC_ORDER", "RAW"]
