"""The config tree: TLVs in file order, every instance kept.

A ``Tlv`` is either a leaf (``value`` is a typed Python value: int, str, bytes, list,
``VarBind``...) or compound (``value`` is None, ``children`` holds the sub-TLVs).
Unknown TLVs are leaves whose value is the raw bytes.

The CM MIC, CMTS MIC, end marker and padding are not content: ``encode`` computes them.
``ConfigTree.layout`` remembers where a decoded file put them when that differs from the
standard trailer (``... TLV6 TLV7 0xFF 0x00-padding to a multiple of 4``), so
``encode(decode(b)) == b`` holds for any valid file; trees built from text have no layout.
"""

from __future__ import annotations

# Plain classes written as the dataclasses they were (same __init__, ==, repr, slots): every per-file
# `hfcprov config encode` imports this module, and the dataclasses machinery (its import and the code
# it generates per class) was ~3 ms of that process.


class Tlv:
    """One TLV. Equal when code, value and children are; the other fields are how it was written."""

    __slots__ = ("code", "value", "children", "fragments", "unfit", "wide")
    __match_args__ = __slots__
    __hash__ = None  # mutable, compared by content

    def __init__(self, code: int, value=None, children: list[Tlv] | None = None,
                 fragments: tuple[int, ...] | None = None, unfit: bool = False, wide: bool = False):
        self.code = code
        self.value = value
        self.children = [] if children is None else children
        # CVC chains (81/82) only: fragment sizes seen on decode when they were not the
        # standard 254-byte split, so the file re-encodes to the same bytes.
        self.fragments = fragments
        # Decoded leniently: a known TLV whose bytes do not fit its type, kept as they were (``value`` is the
        # raw bytes) so the file re-encodes byte for byte; text and YAML show it as a GenericTLV.
        self.unfit = unfit
        # MTA files only: an SNMP object read from (and written back as) TLV 64 with a 2-byte length.
        self.wide = wide

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.code, self.value, self.children) == (other.code, other.value, other.children)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(code={self.code!r}, value={self.value!r}, children={self.children!r})"

    @property
    def compound(self) -> bool:
        return self.value is None

    def find(self, path: str) -> list[Tlv]:
        """Descendants at a relative dotted path (``"35.2"`` under a service flow)."""
        nodes = [self]
        for part in path.split("."):
            code = int(part)
            nodes = [c for n in nodes for c in n.children if c.code == code]
        return nodes

    def get(self, code: int, default=None):
        """Value of the first child with this code (a leaf), or ``default``."""
        for c in self.children:
            if c.code == code:
                return c.value
        return default


class Layout:
    """Where a decoded file put its MICs, pad bytes and end marker (non-standard files only).

    ``marks``: (index into ``tlvs``, code) pairs in file order, code 6/7 for a MIC or 0 for
    one pad byte, meaning "this came just before ``tlvs[index]``" (index == len: at the end).
    ``end_marker``: whether 0xFF was present. ``tail``: the bytes after 0xFF as they were, None for the
    standard padding (0x00 to a multiple of 4 bytes).
    ``kept``: mark number -> MIC value written as decoded instead of computed: a second CM MIC that
    did not match, a second CMTS MIC unlike the first, a MIC TLV that is not 16 bytes long.
    """

    __hash__ = None

    def __init__(self, marks: list[tuple[int, int]] | None = None, end_marker: bool = True, tail: bytes | None = b"",
                 kept: dict[int, bytes] | None = None):
        self.marks = [] if marks is None else marks
        self.end_marker = end_marker
        self.tail = tail
        self.kept = {} if kept is None else kept

    def _fields(self) -> tuple:
        return self.marks, self.end_marker, self.tail, self.kept

    def __eq__(self, other):
        return self._fields() == other._fields() if other.__class__ is self.__class__ else NotImplemented

    def __repr__(self) -> str:
        return (f"{type(self).__qualname__}(marks={self.marks!r}, end_marker={self.end_marker!r}, "
                f"tail={self.tail!r}, kept={self.kept!r})")


class ConfigTree:
    """The TLVs of one file. Equal when the TLVs are; the rest is how the file was framed."""

    __hash__ = None

    def __init__(self, tlvs: list[Tlv] | None = None, cm_mic: bytes | None = None, cmts_mic: bytes | None = None,
                 layout: Layout | None = None, warnings: list | None = None, carries_cmts_mic: bool = False,
                 mta: bool = False, cm_file: bool = False):
        self.tlvs = [] if tlvs is None else tlvs
        # MIC values as decoded (16 bytes each), or None. encode() recomputes the CM MIC and,
        # given a secret, the CMTS MIC; without a secret it keeps ``cmts_mic``.
        self.cm_mic = cm_mic
        self.cmts_mic = cmts_mic
        self.layout = layout
        # What a lenient decode noticed (ConfigError objects naming offset and TLV path), in file order.
        self.warnings = [] if warnings is None else warnings
        # The source carried a CMTS MIC (YAML ``CmtsMic``, a text ``/* CmtsMic */`` comment): encoding without
        # the shared secret must say so rather than drop it.
        self.carries_cmts_mic = carries_cmts_mic
        # A PacketCable MTA file (hfcprov.config.mta), decoded: written back in that framing as it was.
        self.mta = mta
        # Decoded as a CM file (codec.decode of a file not opening with MtaConfigDelimiter 1): written back
        # as one even when its first TLV is 254, which otherwise (text, YAML) makes encode() write an MTA file.
        self.cm_file = cm_file
        # Where the TLVs came from, for messages (config.lint.locate): a form's id(node) -> line, a binary
        # file's top-level TLV offsets. None when not recorded.
        self.lines: dict[int, int] | None = None
        self.offsets: list[int] | None = None

    def __eq__(self, other):
        return self.tlvs == other.tlvs if other.__class__ is self.__class__ else NotImplemented

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(tlvs={self.tlvs!r}, cm_mic={self.cm_mic!r}, cmts_mic={self.cmts_mic!r})"

    def __iter__(self):
        return iter(self.tlvs)

    def __len__(self):
        return len(self.tlvs)

    def find(self, path: str) -> list[Tlv]:
        """Every TLV at a dotted path, in file order: ``find("24.35.2")`` -> all TargetBuffers."""
        first, _, rest = path.partition(".")
        code = int(first)
        nodes = [t for t in self.tlvs if t.code == code]
        return [d for n in nodes for d in n.find(rest)] if rest else nodes

    def set_top(self, code: int, value) -> None:
        """Replace every top-level TLV of ``code`` with one (where the first was), or append it.

        ``value`` is a ``Tlv``, a list of child ``Tlv`` (compound), or a leaf value.
        """
        if isinstance(value, Tlv):
            node = value
        elif isinstance(value, list) and all(isinstance(v, Tlv) for v in value) and value:
            node = Tlv(code, None, list(value))
        else:
            node = Tlv(code, value)
        positions = [i for i, t in enumerate(self.tlvs) if t.code == code]
        if not positions:
            self.tlvs.append(node)
            return
        self.tlvs[positions[0]] = node
        for i in reversed(positions[1:]):
            del self.tlvs[i]
        if self.layout and len(positions) > 1:
            self.layout = None  # indices moved; fall back to the standard trailer

    def remove(self, code: int) -> None:
        self.tlvs = [t for t in self.tlvs if t.code != code]
        self.layout = None
