"""File framing around the content TLVs: CM MIC, CMTS MIC, pad bytes, end marker, padding, the
prepared file that is framed once and filled per request, and PacketCable MTA files' framing.

    prepared = prepare(items, secret, holes=(19, 20))      # once per config
    data = prepared.fill({19: now, 20: "10.1.2.3"})         # per TFTP request: TLV 19/20 and fresh MICs
    verify(data, secret); verify_cm_mic(data)               # what a CMTS, and a modem, check

``encode`` is ``prepare(...).fill()`` without holes; the TFTP server keeps the prepared file and fills
it per request. The MICs follow MULPI Annex D whatever the layout:

- a CM MIC (TLV 6) is the MD5 of every byte before it, whatever those bytes are (a TLV 7 before it too);
- the CMTS MIC (TLV 7) is the HMAC-MD5 over the TLVs of ``CMTS_MIC_ORDER`` wherever they sit in the
  file (after TLV 7 too), TLV 6 included, for each code every instance in file order. A CM MIC written
  after a computed CMTS MIC would make each depend on the other: no file satisfies both, so that
  layout is refused when the CMTS MIC is to be computed.

PacketCable MTA files (PKT-SP-PROV) carry the same TLVs framed differently:

- the file starts with TLV 254 (MtaConfigDelimiter) value 1 and ends with TLV 254 value 255; there is
  no CM MIC, CMTS MIC, end-of-data marker or padding;
- SNMP objects are TLV 11 (a BER VarBind, 1-byte length); one longer than 255 bytes is TLV 64 with a
  2-byte big-endian length (only in MTA files: in a CM file TLV 64 is an ordinary 1-byte-length TLV);
- the configuration hash: SHA-1 over the whole file without the hash TLV, carried as TLV 11 setting
  pktcMtaDevProvConfigHash.0 (PacketCable, "na"; the IETF MTA MIB's, "ietf") or the Euro-PacketCable
  object ("eu") to an OCTET STRING of 20 bytes, just before the end delimiter. (The provisioning
  server may instead SET it over SNMP with pktcMtaDevConfigFile; either way it is this SHA-1.)

A decoded TLV 64 is a ``Tlv(11, VarBind, wide=True)`` so every form shows it as a ``SnmpMibObject`` and
it is written back as TLV 64; a text-built SnmpMibObject is written as TLV 64 only when it must be.
"""

from __future__ import annotations

from collections.abc import Mapping
from operator import itemgetter

from hfcprov.config.ber import VarBind
from hfcprov.config.dictionary import CM_MIC, CMTS_MIC, END, PAD, ROOT
from hfcprov.config.errors import ConfigError
from hfcprov.config.tlvio import decode_node, encode_tlv, value_at, value_bytes
from hfcprov.config.tree import ConfigTree, Layout, Tlv
from hfcprov.lazy import lazy

try:  # CPython's own MD5 for the CM MIC: hashlib loads OpenSSL, ~3 ms of a one-file encode
    from _md5 import md5
except ImportError:  # an interpreter built without it
    from hashlib import md5
hashlib, hmac = lazy("hashlib"), lazy("hmac")  # the CMTS MIC (HMAC-MD5), MTA hash (SHA-1): not per CM file

# DOCSIS 1.1+ CMTS MIC input: for each code in this order, every TLV of that code in file order
# (type, length and value). 6 is the CM MIC itself.
CMTS_MIC_ORDER = (1, 2, 3, 4, 17, 43, 6, 18, 19, 20, 22, 23, 24, 25, 28, 29, 26, 35, 36, 37, 40)
MIC_SIZE = 16


_CODE, _WHOLE = itemgetter(0), itemgetter(1)  # of a (code, whole TLV) item


def _codes(items) -> bytes:
    """The items' top-level codes, one byte each: the TLVs of a code are then found by ``bytes.find``, not a
    Python loop over a template's hundreds of items."""
    return bytes(map(_CODE, items))


def _indexes(codes: bytes, code: int) -> list[int]:
    """Where ``code`` is in ``codes``, in order."""
    out, at = [], codes.find(code)
    while at >= 0:
        out.append(at)
        at = codes.find(code, at + 1)
    return out


def _cmts_mic_input(codes: bytes) -> list[int]:
    """The CMTS MIC's input, as indexes of the items whose ``codes`` these are: each code of
    ``CMTS_MIC_ORDER`` in turn, its TLVs in file order."""
    return [i for code in CMTS_MIC_ORDER for i in _indexes(codes, code)]


def cmts_mic(items, secret: bytes) -> bytes:
    """HMAC-MD5 over the TLVs of ``CMTS_MIC_ORDER``, every instance, in file order per code.
    ``items``: (code, whole TLV) of every TLV of the file in file order (MICs included)."""
    items = list(items)
    return hmac.digest(bytes(secret), b"".join([items[i][1] for i in _cmts_mic_input(_codes(items))]), "md5")


def hole_size(code: int) -> int:
    """Value size of a top-level TLV that can be a hole (fixed-size: 19, 20, 59...)."""
    spec = ROOT.children.get(code)
    if spec is None or spec.fixed is None or code in (PAD, CM_MIC, CMTS_MIC, END):
        raise ConfigError(f"TLV {code} has no fixed size: it cannot be filled in per request")
    return spec.fixed


# --- the Extended CMTS MIC ----------------------------------------------------------------------------------------

EXTENDED_MIC = 43  # a PreparedFile step: the explicit Extended CMTS MIC digest (TLV 43.6.3)
EMIC_HMAC_TYPES = {1: "MD5 HMAC (RFC 2104)", 2: "MMH16-sigma-n HMAC (SECv3.0)", 43: "vendor specific"}
_EMIC_DIGEST_SIZE = {1: MIC_SIZE}  # the HMAC types hfcprov computes, and their digest sizes
_CABLELABS = b"\xff\xff\xff"


class ExtendedMic:
    """A file's Extended CMTS MIC Configuration Setting: ``item`` (index of its top-level TLV 43 among the
    content items), ``hmac_type`` (43.6.1), ``covered`` (the top-level types of the bitmap 43.6.2) and
    ``digest`` ((offset in the item's bytes, length) of 43.6.3's value, None when implicit)."""

    __slots__ = ("item", "hmac_type", "covered", "digest")

    def __init__(self, item: int, hmac_type: int | None, covered: frozenset[int], digest: tuple[int, int] | None):
        self.item, self.hmac_type, self.covered, self.digest = item, hmac_type, covered, digest

    def check_computable(self) -> None:
        if self.hmac_type not in _EMIC_DIGEST_SIZE:
            kind = EMIC_HMAC_TYPES.get(self.hmac_type, "unknown") if self.hmac_type is not None else "absent"
            raise ConfigError(f"Extended CMTS MIC HMAC type {self.hmac_type} ({kind}): hfcprov computes type 1 (MD5"
                              " HMAC) only; encode without the secret, or with --no-extended-mic", path="43.6.1")


def _subs(value: bytes, base: int):
    """(code, offset of the value in the item, value) of each sub-TLV; stops at broken framing."""
    pos = 0
    while pos + 2 <= len(value) and pos + 2 + value[pos + 1] <= len(value):
        yield value[pos], base + pos + 2, value[pos + 2:pos + 2 + value[pos + 1]]
        pos += 2 + value[pos + 1]


def covered_types(bitmap: bytes) -> frozenset[int]:
    """The top-level TLV types of an Extended CMTS MIC bitmap: bit N (0 = the first byte's most significant)
    for type N; bit 0 is reserved."""
    return frozenset(8 * i + b for i, byte in enumerate(bitmap) for b in range(8) if byte & (0x80 >> b)) - {0}


def extended_mic_bitmap(codes) -> bytes:
    """The bitmap (43.6.2) covering the top-level TLV ``codes``."""
    codes = sorted(set(codes) - {0})
    out = bytearray(codes[-1] // 8 + 1 if codes else 1)
    for c in codes:
        out[c // 8] |= 0x80 >> (c % 8)
    return bytes(out)


def find_extended_mic(items, codes: bytes | None = None) -> ExtendedMic | None:
    """The Extended CMTS MIC Configuration Setting of a file's content ((code, whole TLV) in file order): the
    first top-level TLV 43 of CableLabs (vendor 0xFFFFFF, or no vendor ID) holding sub-TLV 6. ``codes``: the
    items' codes (``_codes``), when the caller has them."""
    for index in _indexes(_codes(items) if codes is None else codes, 43):
        whole = items[index][1]
        subs = list(_subs(whole[2:], 2))
        vendor = next((v for c, _, v in subs if c == 8), _CABLELABS)
        setting = next(((at, v) for c, at, v in subs if c == 6), None)
        if vendor != _CABLELABS or setting is None:
            continue
        at, value = setting
        inner = {c: (a, v) for c, a, v in reversed(list(_subs(value, at)))}  # the first of each sub-TLV
        kind = inner.get(1, (0, b""))[1]
        digest = inner.get(3)
        return ExtendedMic(index, kind[0] if len(kind) == 1 else None, covered_types(inner.get(2, (0, b""))[1]),
                           (digest[0], len(digest[1])) if digest is not None else None)
    return None


def extended_mic_item(codes, explicit: bool = True, hmac_type: int = 1) -> tuple[int, bytes]:
    """A content item (TLV 43, vendor 0xFFFFFF) asking for an Extended CMTS MIC over the top-level ``codes``:
    append it to ``content_items(...)`` before ``prepare``/``assemble`` with the shared secret."""
    setting = bytes((1, 1, hmac_type))
    bitmap = extended_mic_bitmap(codes)
    setting += bytes((2, len(bitmap))) + bitmap
    if explicit:
        setting += bytes((3, _EMIC_DIGEST_SIZE.get(hmac_type, MIC_SIZE))) + bytes(_EMIC_DIGEST_SIZE.get(hmac_type, MIC_SIZE))
    value = bytes((8, 3)) + _CABLELABS + bytes((6, len(setting))) + setting
    return 43, bytes((43, len(value))) + value


def _zeroed_digest(items: list, emic: ExtendedMic) -> list:
    """``items`` with the explicit digest (43.6.3) as zero bytes of its HMAC's size: its value in the
    digest's own input, and room for the digest (a placeholder of another size is resized)."""
    code, whole = items[emic.item]
    at, n = emic.digest
    size = _EMIC_DIGEST_SIZE[emic.hmac_type]
    grow = size - n
    if grow:
        if len(whole) - 2 + grow > 255:
            raise ConfigError("TLV 43 with the Extended CMTS MIC digest is over 255 bytes", path="43.6.3")
        # the lengths of 43 (byte 1), of 43.6 and of 43.6.3 (the byte before the value) grow by ``grow``
        setting_len_at = next(a - 1 for c, a, v in _subs(whole[2:], 2) if c == 6 and a <= at < a + len(v))
        whole = bytearray(whole)
        whole[1] += grow
        whole[setting_len_at] += grow
        whole[at - 1] += grow
        whole = bytes(whole)
        emic.digest = (at, size)
    whole = whole[:at] + bytes(size) + whole[at + n:]
    out = list(items)
    out[emic.item] = (code, whole)
    return out


def extended_cmts_mic(items, secret: bytes, emic: ExtendedMic) -> bytes:
    """The Extended CMTS MIC of a file's TLVs ((code, whole TLV) in file order, MICs included): HMAC over
    every TLV whose type ``emic`` covers, in file order, never TLV 7; with an explicit digest its value is
    zeros and TLV 6 is left out (MULPI C.1.1.18.1.6.3)."""
    emic.check_computable()
    if emic.digest is not None:
        items = _zeroed_digest(items, emic)
    mac = hmac.new(bytes(secret), digestmod=hashlib.md5)
    skip = {CMTS_MIC, CM_MIC} if emic.digest is not None else {CMTS_MIC}
    for code, whole in items:
        if code in emic.covered and code not in skip:
            mac.update(whole)
    return mac.digest()


class PreparedFile:
    """A config framed once: ``data`` with zeros where the holes and the computed MICs go.

    ``fill(values)`` writes each hole's value (bytes of the hole's size, or a value its TLV type
    encodes: an int for TLV 19, an address for TLV 20/59; a hole not given stays zeros) and the MICs,
    reusing the MD5 and HMAC state of everything before the first byte that changes per fill.
    Picklable (built in a worker, filled in the server); the digest state is made where it is used.
    """

    def __init__(self, data: bytes, holes: dict[int, int], steps: list[tuple[int, int]], mic_parts: list,
                 fixed: int, secret: bytes | None, emic_parts: list | None = None):
        self.data = data
        self.holes = holes  # code -> offset of the hole's value
        # (code, offset of the value) of each computed MIC, in the order they are computed: 43 (the explicit
        # Extended CMTS MIC digest), then 6, then 7
        self.steps = steps
        self.mic_parts = mic_parts  # TLV 7's input: bytes, or (offset, size) read from the filled copy
        self.emic_parts = emic_parts or []  # the explicit Extended CMTS MIC's input, alike
        self.fixed = fixed  # bytes before this offset never change between fills
        self.secret = secret
        self.sizes = {code: hole_size(code) for code in holes}
        self._md5 = None
        self._macs: dict[str, tuple] = {}  # parts name -> (HMAC state of the fixed first part, the other parts)

    def __getstate__(self):
        return {**self.__dict__, "_md5": None, "_macs": {}}

    def fill(self, values: Mapping[int, object] | None = None) -> bytes:
        out = bytearray(self.data)
        if values:
            holes, sizes = self.holes, self.sizes
            for code, value in values.items():
                at = holes.get(code)
                if at is None:
                    raise ConfigError(f"TLV {code} is not a hole of this prepared file", path=str(code))
                size = sizes[code]
                raw = value if type(value) is bytes and len(value) == size else _hole_bytes(code, size, value)
                out[at:at + size] = raw
        if not self.steps:
            return bytes(out)
        view = memoryview(out)
        cmts = None
        for code, at in self.steps:
            if code == CM_MIC:
                if self._md5 is None:
                    self._md5 = md5(view[:self.fixed])
                digest = self._md5.copy()
                digest.update(view[self.fixed:at - 2])
                out[at:at + MIC_SIZE] = digest.digest()
            elif code == CMTS_MIC:
                if cmts is None:
                    cmts = self._hmac_of("mic_parts", view)
                out[at:at + MIC_SIZE] = cmts
            else:  # the explicit Extended CMTS MIC, before the digest is in its own input's TLV 43
                out[at:at + MIC_SIZE] = self._hmac_of("emic_parts", view)
        view.release()
        return bytes(out)

    def _hmac_of(self, name: str, view) -> bytes:
        """HMAC-MD5 with the secret over the parts ``name``; the first part, when fixed, digested once."""
        cached = self._macs.get(name)
        if cached is None:
            parts = getattr(self, name)
            first_fixed = bool(parts) and isinstance(parts[0], bytes)
            cached = self._macs[name] = (hmac.new(self.secret, parts[0] if first_fixed else b"", hashlib.md5),
                                         parts[1:] if first_fixed else parts)
        state, rest = cached
        mac = state.copy()
        for part in rest:
            mac.update(part if type(part) is bytes else view[part[0]:part[0] + part[1]])
        return mac.digest()


def _hole_bytes(code: int, size: int, value) -> bytes:
    if isinstance(value, (bytes, bytearray)):
        raw = bytes(value)
    elif value is None:
        raw = bytes(size)
    elif type(value) is int and size == 4 and 0 <= value < 1 << 32:  # TLV 19, the per-request timestamp
        raw = value.to_bytes(4, "big")
    elif type(value) is str and size in (4, 16):  # TLV 20/59, the modem's address: inet_pton is strict and fast
        import socket  # here: only a TFTP server stamping TLV 20/59 needs it, not a per-file encode

        try:
            raw = socket.inet_pton(socket.AF_INET if size == 4 else socket.AF_INET6, value)
        except OSError:
            raise ConfigError(f"TLV {code}: bad IPv{4 if size == 4 else 6} address {value!r}", path=str(code)) from None
    else:
        raw = ROOT.children[code].vtype.encode(value)  # not spec.encode: per-request values would churn its memo
    if len(raw) != size:
        raise ConfigError(f"TLV {code} takes {size} bytes, not {len(raw)}", path=str(code))
    return raw


def prepare(items, secret: bytes | None = None, holes=(), *, layout: Layout | None = None,
            decoded_cmts_mic: bytes | None = None, digests: bool = True, extended_mic: bool = True) -> PreparedFile:
    """Frame ``items`` ((code, whole TLV) of the content in file order, as ``content_items`` gives).

    ``holes``: top-level codes whose value is given per ``fill``: the first TLV of such a code becomes
    the hole (others of that code go), else the hole comes after the content, in code order (where
    ``ConfigTree.set_top`` would put it). ``secret``: the CMTS MIC is computed (else
    ``decoded_cmts_mic`` is written, else there is none in the standard trailer), and the Extended CMTS
    MIC when the content has a TLV 43.6 (``extended_mic_item`` adds one; ``extended_mic=False``: 43.6
    written as given and TLV 7 the pre-3.0 CMTS MIC, as the docsis C tool does). ``layout``: where a
    decoded file had its MICs, pad bytes, end marker and tail (None: the standard trailer).
    ``digests=False``: both MICs stay zeros.

    A caller with one secret per CMTS frames each file with that CMTS's secret: the secret is an
    argument of each ``prepare`` (and of ``assemble``, ``encode``, ``encode_text``), never a setting.
    """
    items = list(items)
    codes = _codes(items)
    emic = find_extended_mic(items, codes) if extended_mic and digests and secret is not None else None
    if emic is not None:
        emic.check_computable()
        if emic.digest is not None:
            items = _zeroed_digest(items, emic)
        emic_whole = items[emic.item][1]
    sizes = {code: hole_size(code) for code in sorted(set(holes))}
    if layout is None and emic is None and digests:
        return _prepare_standard(items, codes, secret, sizes, decoded_cmts_mic)
    framed, index = _with_holes(items, sizes)
    n = len(framed)
    kept: dict[int, bytes] = {}
    if layout is None:
        marks = [(n, CM_MIC)] + ([(n, CMTS_MIC)] if secret is not None or decoded_cmts_mic is not None else [])
        end_marker, tail = True, None
    else:
        marks = [(n if i >= len(index) else index[i], c) for i, c in layout.marks]
        end_marker, tail, kept = layout.end_marker, layout.tail, layout.kept
    computed_cmts = digests and secret is not None
    if not computed_cmts and digests and decoded_cmts_mic is None and any(
            c == CMTS_MIC and k not in kept for k, (_, c) in enumerate(marks)):
        raise ConfigError("the CMTS MIC needs the shared secret (--secret-file)", path="7")

    out = bytearray()
    hole_at: dict[int, int] = {}
    tlvs: list[tuple[int, object]] = []  # every TLV in file order: (code, whole bytes or (offset, size))
    dynamic: list[int] = []  # offsets of bytes that change per fill
    cm_steps, cmts_steps = [], []
    written = 0
    track = computed_cmts or bool(sizes)  # (an Extended CMTS MIC needs the secret: computed_cmts)
    explicit_at = None  # offset of the explicit Extended CMTS MIC digest (43.6.3) in the file
    emic_index = None  # index in tlvs of that TLV 43 (its digest zeroed in the digest's own input)

    def emit(upto: int) -> None:
        nonlocal written, explicit_at, emic_index
        if upto <= written:
            return
        if not track:  # a template's file has hundreds of TLVs: one join
            out.extend(b"".join([whole for _, whole in framed[written:upto]]))
        else:
            for code, whole in framed[written:upto]:
                if code in sizes:  # the one TLV of that code left: its placeholder
                    hole_at[code] = len(out) + 2
                    dynamic.append(len(out))
                    tlvs.append((code, (len(out), len(whole))))
                elif emic is not None and emic.digest is not None and whole is emic_whole:
                    explicit_at, emic_index = len(out) + emic.digest[0], len(tlvs)
                    dynamic.append(len(out))
                    tlvs.append((code, (len(out), len(whole))))
                else:
                    tlvs.append((code, whole))
                out.extend(whole)
        written = upto

    for k, (at, code) in enumerate(marks):
        emit(at)
        if code == PAD:
            out.append(0)
            continue
        if k in kept:  # written as decoded (a second, stale MIC; a placeholder of another length)
            whole = bytes((code, len(kept[k]))) + kept[k]
            tlvs.append((code, whole))
            out.extend(whole)
            continue
        start = len(out)
        if code == CM_MIC:
            value = bytes(MIC_SIZE)
            if digests:
                cm_steps.append((start + 2, bool(cmts_steps)))
                dynamic.append(start)
                tlvs.append((code, (start, MIC_SIZE + 2)))
            else:
                tlvs.append((code, bytes((code, MIC_SIZE)) + value))
        else:
            value = decoded_cmts_mic if digests and not computed_cmts else bytes(MIC_SIZE)
            if computed_cmts:
                cmts_steps.append(start + 2)
                dynamic.append(start)
            tlvs.append((code, bytes((code, MIC_SIZE)) + value))
        out += bytes((code, MIC_SIZE)) + value
    emit(n)
    if end_marker:
        out.append(END)
    out += b"\0" * (-len(out) % 4) if tail is None else tail

    if computed_cmts and any(after for _, after in cm_steps):
        raise ConfigError("the CM MIC (TLV 6) comes after the CMTS MIC (TLV 7): each would cover the other, so"
                          " no CMTS MIC is right; encode it in the standard layout (decode to text and encode that)",
                          path="6")
    steps = [(CM_MIC, at) for at, _ in cm_steps] + [(CMTS_MIC, at) for at in cmts_steps]
    parts: list = []
    emic_parts: list = []
    if emic is not None:  # MULPI D.2.1: the covered TLVs in file order; explicit: digest zeroed, no TLV 6
        skip = {CMTS_MIC} if explicit_at is None else {CMTS_MIC, CM_MIC}
        for i, (code, whole) in enumerate(tlvs):
            if code in emic.covered and code not in skip:
                _add_part(emic_parts, emic_whole if i == emic_index else whole)
        if explicit_at is not None:
            steps.insert(0, (EXTENDED_MIC, explicit_at))
    if computed_cmts and (emic is None or explicit_at is not None):
        for i in _cmts_mic_input(_codes(tlvs)):
            _add_part(parts, tlvs[i][1])
    elif computed_cmts:  # implicit: TLV 7 is the Extended CMTS MIC
        parts, emic_parts = emic_parts, []
    fixed = min(dynamic) if dynamic else len(out)
    return PreparedFile(bytes(out), hole_at, steps, parts, fixed, bytes(secret) if computed_cmts else None,
                        emic_parts)


def _prepare_standard(items: list, codes: bytes, secret: bytes | None, sizes: dict[int, int],
                      decoded_cmts_mic: bytes | None) -> PreparedFile:
    """``prepare`` for the standard trailer, no Extended CMTS MIC and digests computed: what every file a
    TFTP server stamps takes (``codes``: the items'). The content is joined whole and the holes found by
    their codes, not TLV by TLV; only a CMTS MIC looks at TLVs, those of its codes, for its input
    (tests/config/test_framing.py holds the two ways equal)."""
    if any(codes.find(code) >= 0 for code in sizes):  # a hole in place of the content's TLV of its code
        framed, _ = _with_holes(items, sizes)
        wholes = list(map(_WHOLE, framed))
        codes = _codes(framed)  # (a hole took the place of its code's first TLV; the others went)
        index = {code: codes.find(code) for code in sizes}
        content = b"".join(wholes)
        offsets = {i: (len(b"".join(wholes[:i])), len(wholes[i])) for i in index.values()}
    else:  # the holes after the content, in code order (where ConfigTree.set_top puts them)
        framed = list(items)
        content = b"".join(map(_WHOLE, framed))
        index, offsets = {}, {}
        for code, size in sizes.items():
            index[code] = len(framed)
            offsets[len(framed)] = (len(content), size + 2)
            framed.append((code, bytes((code, size)) + bytes(size)))
            content += framed[-1][1]
        codes += bytes(sizes)
    n = len(content)
    hole_at = {code: offsets[i][0] + 2 for code, i in index.items()}
    computed_cmts = secret is not None
    out = content + _standard_trailer(n, bytes(MIC_SIZE), bytes(MIC_SIZE) if computed_cmts else decoded_cmts_mic)
    steps = [(CM_MIC, n + 2)] + ([(CMTS_MIC, n + 2 + MIC_SIZE + 2)] if computed_cmts else [])
    parts: list = []
    if computed_cmts:
        offsets[len(framed)] = (n, MIC_SIZE + 2)  # TLV 6, after the content, is in the CMTS MIC's input
        for i in _cmts_mic_input(codes + bytes((CM_MIC,))):
            _add_part(parts, offsets.get(i) or framed[i][1])
    fixed = min([at for at, _ in offsets.values()] + [n])
    return PreparedFile(out, hole_at, steps, parts, fixed, bytes(secret) if computed_cmts else None, [])


def _add_part(parts: list, part) -> None:
    """Append a MIC input part (bytes, or (offset, size) read per fill), joining adjacent bytes."""
    if isinstance(part, bytes) and parts and isinstance(parts[-1], bytes):
        parts[-1] += part
    else:
        parts.append(part)


def _with_holes(items: list, sizes: dict[int, int]):
    """The content with a zero-valued placeholder per hole, and each item's new index (for layouts)."""
    if not sizes:
        return items, range(len(items) + 1)
    framed, index, placed = [], [], set()
    for code, whole in items:
        index.append(len(framed))
        if code in sizes:
            if code in placed:
                continue
            placed.add(code)
            whole = bytes((code, sizes[code])) + bytes(sizes[code])
        framed.append((code, whole))
    for code in sizes:
        if code not in placed:
            framed.append((code, bytes((code, sizes[code])) + bytes(sizes[code])))
    index.append(len(framed))
    return framed, index


def assemble(items, secret: bytes | None = None, *, layout: Layout | None = None,
             decoded_cmts_mic: bytes | None = None, digests: bool = True, extended_mic: bool = True) -> bytes:
    """The whole file around ``items``: ``prepare(...).fill()`` with no holes."""
    items = list(items)
    if layout is None and digests and (secret is None or not extended_mic or _codes(items).find(43) < 0):
        return _standard(items, secret, decoded_cmts_mic)
    return prepare(items, secret, layout=layout, decoded_cmts_mic=decoded_cmts_mic, digests=digests,
                   extended_mic=extended_mic).fill()


def _standard(items: list, secret: bytes | None, decoded_cmts_mic: bytes | None) -> bytes:
    """``prepare(items, secret).fill()`` for the standard trailer and no Extended CMTS MIC, straight: what
    every bulk-built file takes (tests/config/test_framing.py holds the two equal)."""
    content = b"".join([whole for _, whole in items])
    cm_mic, tlv7 = md5(content).digest(), decoded_cmts_mic
    if secret is not None:
        tlv7 = cmts_mic([*items, (CM_MIC, _CM_MIC_HEADER + cm_mic)], secret)
    return content + _standard_trailer(len(content), cm_mic, tlv7)


_CM_MIC_HEADER, _CMTS_MIC_HEADER = bytes((CM_MIC, MIC_SIZE)), bytes((CMTS_MIC, MIC_SIZE))


def _standard_trailer(length: int, cm_mic: bytes, cmts_mic: bytes | None) -> bytes:
    """What follows ``length`` bytes of content in the standard layout: TLV 6, TLV 7 when there is one,
    the end marker and zeros to a multiple of 4 bytes (``_standard`` and ``_prepare_standard``)."""
    out = _CM_MIC_HEADER + cm_mic + (b"" if cmts_mic is None else _CMTS_MIC_HEADER + cmts_mic) + bytes((END,))
    return out + bytes(-(length + len(out)) % 4)





# --- the layout as the text, YAML and JSON forms write it ---------------------------------------------------------
#
# A decoded file whose MICs, pad bytes, end marker or trailing bytes are not the standard trailer carries a
# ``Layout``; the forms write it as top-level statements where the marks were, so the file encodes back to
# the same bytes: ``CmMic;`` / ``CmtsMic;`` (computed here), ``CmMic 0x...;`` (kept as decoded), ``Pad;`` (one
# 0x00 byte) and last ``EndOfData;`` (0xFF, then the standard padding), ``EndOfData 0x...;`` (0xFF, then
# these bytes) or ``NoEndOfData;`` (the file ends there). A file with such statements is a CM file.

LAYOUT_NAMES = {"CmMic": CM_MIC, "CmtsMic": CMTS_MIC, "Pad": PAD}
END_OF_DATA, NO_END_OF_DATA = "EndOfData", "NoEndOfData"
_NAME_OF_MARK = {code: name for name, code in LAYOUT_NAMES.items()}


def written_layout(tree: ConfigTree) -> Layout | None:
    """The layout a form must spell out for ``tree`` (None: the standard trailer, nothing to write). A CM
    file whose first TLV is 254 gets its standard trailer spelt out: read back without it, it would be an
    MTA file."""
    if tree.layout is not None:
        return tree.layout
    if tree.cm_file and tree.tlvs and tree.tlvs[0].code == MTA_DELIMITER:
        n = len(tree.tlvs)
        return Layout(marks=[(n, CM_MIC)] + ([(n, CMTS_MIC)] if tree.cmts_mic is not None else []), tail=None)
    return None


def layout_statements(layout: Layout) -> tuple[dict[int, list[tuple[str, bytes | None]]], tuple[str, bytes | None]]:
    """(before each TLV index: [(statement name, kept value or None)], the last statement: (``EndOfData``, None
    for the standard padding or the bytes after 0xFF) or (``NoEndOfData``, None))."""
    before: dict[int, list] = {}
    for k, (at, code) in enumerate(layout.marks):
        before.setdefault(at, []).append((_NAME_OF_MARK[code], layout.kept.get(k)))
    return before, ((END_OF_DATA, layout.tail) if layout.end_marker else (NO_END_OF_DATA, None))


class LayoutReader:
    """Collects a form's layout statements as its top-level TLVs are read (``mark``, ``end``); ``layout()``
    is the tree's Layout, or None when the form had none."""

    def __init__(self):
        self.marks: list[tuple[int, int]] = []
        self.kept: dict[int, bytes] = {}
        self.ended = self.marker = self.seen = False
        self.tail: bytes | None = b""

    def mark(self, name: str, index: int, value: bytes | None) -> None:
        """``name`` (a ``LAYOUT_NAMES`` key) before top-level TLV ``index``; ``value``: a MIC kept as given."""
        self.check_open(name)
        code = LAYOUT_NAMES[name]
        if value is not None:
            if code == PAD:
                raise ConfigError("Pad takes no value (one 0x00 byte)")
            self.kept[len(self.marks)] = value
        self.marks.append((index, code))
        self.seen = True

    def end(self, word: str, tail: bytes | None) -> None:
        """``EndOfData``: the end marker, then ``tail`` (None: the standard padding); ``NoEndOfData``: none."""
        self.check_open(word)
        if word == NO_END_OF_DATA and tail is not None:
            raise ConfigError(f"{NO_END_OF_DATA} takes no value")
        self.ended, self.marker, self.tail, self.seen = True, word == END_OF_DATA, tail, True

    def check_open(self, what: str) -> None:
        if self.ended:
            raise ConfigError(f"{what} after the end of the file ({END_OF_DATA} or {NO_END_OF_DATA} comes last)")

    def layout(self) -> Layout | None:
        if not self.seen:
            return None
        if not self.ended:
            raise ConfigError(f"a file with layout statements ends with {END_OF_DATA} or {NO_END_OF_DATA}")
        return Layout(marks=self.marks, end_marker=self.marker, tail=self.tail if self.marker else b"",
                      kept=self.kept)


# --- checking a binary CM file ------------------------------------------------------------------------------------

MIC_NAMES = {CM_MIC: "CM MIC (TLV 6)", CMTS_MIC: "CMTS MIC (TLV 7)"}
CM_MIC_MISMATCH = "CM MIC (TLV 6) mismatch: the file was changed after it was made"


def cm_mic_matches(data: bytes, at: int, value: bytes) -> bool:
    """Whether ``value``, the CM MIC TLV starting at offset ``at``, is the MD5 of every byte before it."""
    return md5(data[:at]).digest() == value


def scan(data: bytes):
    """The TLVs of a binary CM file up to 0xFF as (code, whole TLV) in file order, and (offset, value) of
    the first CM MIC and of the first CMTS MIC (None when absent)."""
    items: list[tuple[int, bytes]] = []
    cm = cmts = None
    pos = 0
    while pos < len(data) and data[pos] != END:
        if data[pos] == PAD:
            pos += 1
            continue
        raw, end = value_at(data, pos, str(data[pos]))
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
    return None if cm_mic_matches(data, *cm) else CM_MIC_MISMATCH


def verify(data: bytes, secret: bytes) -> None:
    """Check the CM MIC, the CMTS MIC and, when the file has one, the Extended CMTS MIC of a binary file (as
    a CMTS does, MULPI D.2.1); raise ``ConfigError`` naming which fail."""
    data = bytes(data)
    items, cm, cmts = scan(data)
    failures = []
    cm_failure = _cm_mic_failure(data, cm)
    if cm_failure:
        failures.append(cm_failure)
    emic = find_extended_mic(items)
    implicit = emic is not None and emic.digest is None
    if cmts is None:
        failures.append("no CMTS MIC (TLV 7)")
    elif not hmac.compare_digest(extended_cmts_mic(items, secret, emic) if implicit else cmts_mic(items, secret),
                                 cmts[1]):
        what = "CMTS MIC (TLV 7, the Extended CMTS MIC of TLV 43.6)" if implicit else "CMTS MIC (TLV 7)"
        failures.append(f"{what} mismatch: wrong shared secret or the file was changed")
    emic_failure = None
    if emic is not None and not implicit:
        at, n = emic.digest
        given = items[emic.item][1][at:at + n]
        if n != _EMIC_DIGEST_SIZE.get(emic.hmac_type, n):
            emic_failure = f"Extended CMTS MIC digest (TLV 43.6.3) is {n} bytes, not {_EMIC_DIGEST_SIZE[emic.hmac_type]}"
        elif not hmac.compare_digest(extended_cmts_mic(items, secret, emic), given):
            emic_failure = ("Extended CMTS MIC digest (TLV 43.6.3) mismatch: a CMTS ignores the TLVs it protects"
                            " beyond the pre-3.0 CMTS MIC's")
        if emic_failure:
            failures.append(emic_failure)
    if failures:
        if cm_failure or cmts is None or len(failures) > (emic_failure is not None):
            first = cm if cm_failure else cmts
            raise ConfigError("; ".join(failures), offset=first[0] if first else None,
                              path="6" if first is cm else "7")
        raise ConfigError(emic_failure, path="43.6.3")


def verify_cm_mic(data: bytes) -> None:
    """Check the CM MIC (TLV 6) only, as a cable modem does (the CMTS MIC needs the CMTS's shared secret);
    raise ``ConfigError`` when it is missing or wrong."""
    data = bytes(data)
    _, cm, _ = scan(data)
    failure = _cm_mic_failure(data, cm)
    if failure:
        raise ConfigError(failure, offset=cm[0] if cm else None, path="6")


# --- PacketCable MTA files ----------------------------------------------------------------------------------------

MTA_DELIMITER, SNMP_OBJECT, WIDE_SNMP_OBJECT = 254, 11, 64
MTA_BEGIN, MTA_END = 1, 255
HASH_OIDS = {"na": "1.3.6.1.4.1.4491.2.2.1.1.2.7.0",  # pktcMtaDevProvConfigHash.0 (PKTC-MTA-MIB, PKT-SP-PROV)
             "eu": "1.3.6.1.4.1.7432.1.1.2.9.0",  # Euro-PacketCable's config hash object
             "ietf": "1.3.6.1.2.1.140.1.2.11.0"}  # pktcMtaDevProvConfigHash.0 (PKTC-IETF-MTA-MIB, RFC 5098)
_HASH_OF_OID = {oid: name for name, oid in HASH_OIDS.items()}


def is_mta(data: bytes) -> bool:
    """Whether a binary file is an MTA file: it starts with MtaConfigDelimiter 1 (begin)."""
    return data[:3] == bytes((MTA_DELIMITER, 1, MTA_BEGIN))


def decode_mta(data: bytes, *, strict: bool = False) -> ConfigTree:
    """Decode an MTA file; lenient like ``decode`` (odd fields kept raw, a wrong hash or delimiter noted
    in ``tree.warnings``), ``strict`` raises the first warning. Broken framing is an error."""
    data = bytes(data)
    if not data:
        raise ConfigError("empty file: no TLVs")
    tree = ConfigTree(mta=True)
    tree.offsets = []  # each top-level TLV's file offset (config.lint.locate)
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
            node = decode_node(spec11, SNMP_OBJECT, data[pos + 3:end], pos, "64", tree.warnings)
            node.wide = True
        else:
            raw, end = value_at(data, pos, str(code))
            node = decode_node(ROOT.children.get(code), code, raw, pos, str(code), tree.warnings)
        tree.tlvs.append(node)
        tree.offsets.append(pos)
        pos = end
    for problem in mta_framing_problems(tree.tlvs):
        tree.warnings.append(problem)
    for kind, at, given in _hashes(data):
        if given != config_hash(data, at):
            tree.warnings.append(ConfigError(f"configuration hash ({kind}) mismatch: the file was changed after"
                                             " it was hashed", offset=at[0], path="11"))
    if strict and tree.warnings:
        raise tree.warnings[0]
    return tree


def mta_framing_problems(tlvs) -> list[ConfigError]:
    """What is wrong with an MTA file's delimiters: it starts with MtaConfigDelimiter 1 and ends with
    MtaConfigDelimiter 255 (PKT-SP-PROV)."""
    out = []
    if not (tlvs and tlvs[0].code == MTA_DELIMITER and tlvs[0].value == MTA_BEGIN):
        out.append(ConfigError("an MTA file starts with MtaConfigDelimiter 1", offset=0, path="254"))
    if not (len(tlvs) > 1 and tlvs[-1].code == MTA_DELIMITER and tlvs[-1].value == MTA_END):
        out.append(ConfigError("an MTA file ends with MtaConfigDelimiter 255", path="254"))
    return out


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


DIALPLAN_OID = "1.3.6.1.4.1.4491.2.2.8.2.1.1.3.1.1.2.1"  # pktcEUERSTDMValue.1 (CL-PKTC-EUE-RST-MIB)
MAX_DIALPLAN = 8192  # bytes, the MIB's limit


def dialplan_object(plan: bytes) -> Tlv:
    """The PacketCable 2.0 dial plan as the docsis C tool's ``-dialplan`` inserts it: a TLV 64 setting
    pktcEUERSTDMValue.1 to ``plan``, its SEQUENCE and OCTET STRING lengths in that tool's forms (``82 hh ll``
    from 128 bytes on for both)."""
    if len(plan) > MAX_DIALPLAN:
        raise ConfigError(f"the dial plan has {len(plan)} bytes; at most {MAX_DIALPLAN}")

    def length(n: int) -> bytes:
        return bytes((n,)) if n < 0x80 else bytes((0x82, n >> 8, n & 0xFF))

    from hfcprov.config.ber import encode_oid

    body = encode_oid(DIALPLAN_OID) + b"\x04" + length(len(plan)) + plan
    return Tlv(SNMP_OBJECT, b"\x30" + length(len(body)) + body, wide=True)


def encode_mta(tree: ConfigTree, hash: str | None = None, dialplan: bytes | None = None) -> bytes:
    """An MTA file from ``tree``: TLVs as they are (SnmpMibObjects over 255 bytes, decoded TLV 64s and any
    other TLV 64 as TLV 64 with a 2-byte length), with every configuration hash TLV recomputed; ``hash``
    ("na", "eu" or "ietf") adds one before the end delimiter when the tree has none; ``dialplan`` adds the
    dial plan object there first (``dialplan_object``). The file must start with MtaConfigDelimiter 1
    (``mta_framing_problems``: a missing end delimiter is for lint to report)."""
    tlvs = list(tree.tlvs)
    if not tree.mta and not (tlvs and tlvs[0].code == MTA_DELIMITER and tlvs[0].value == MTA_BEGIN):
        raise ConfigError("an MTA file starts with MtaConfigDelimiter 1 and ends with MtaConfigDelimiter 255",
                          path="254")
    if dialplan is not None:
        tlvs.insert(len(tlvs) - 1 if tlvs and tlvs[-1].code == MTA_DELIMITER else len(tlvs), dialplan_object(dialplan))
    if hash is not None:
        if hash not in HASH_OIDS:
            raise ConfigError(f"unknown configuration hash {hash!r}: expected {', '.join(HASH_OIDS)}")
        if not any(_is_hash(t) for t in tlvs):
            at = len(tlvs) - 1 if tlvs and tlvs[-1].code == MTA_DELIMITER else len(tlvs)
            tlvs.insert(at, Tlv(SNMP_OBJECT, VarBind(HASH_OIDS[hash], "OctetString", bytes(20))))
    spec11 = ROOT.children[SNMP_OBJECT]
    out, hashes = bytearray(), []
    for t in tlvs:
        if t.code in (SNMP_OBJECT, WIDE_SNMP_OBJECT) and not t.compound:
            raw = value_bytes(spec11 if t.code == SNMP_OBJECT else None, t, "")
            if t.wide or t.code == WIDE_SNMP_OBJECT or len(raw) > 255:
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


__all__ = ["prepare", "PreparedFile", "assemble", "cmts_mic", "hole_size", "CMTS_MIC_ORDER", "MIC_NAMES",
           "cm_mic_matches", "scan", "verify", "verify_cm_mic", "is_mta", "decode_mta", "encode_mta", "verify_mta",
           "mta_framing_problems", "config_hash", "HASH_OIDS", "dialplan_object", "DIALPLAN_OID", "LAYOUT_NAMES", "END_OF_DATA", "NO_END_OF_DATA",
           "LayoutReader",
           "written_layout", "layout_statements", "ExtendedMic", "find_extended_mic", "extended_mic_item",
           "extended_mic_bitmap", "covered_types", "extended_cmts_mic", "EMIC_HMAC_TYPES"]
