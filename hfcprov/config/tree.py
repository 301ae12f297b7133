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

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Tlv:
    code: int
    value: Any = None
    children: list[Tlv] = field(default_factory=list)
    # CVC chains (81/82) only: fragment sizes seen on decode when they were not the
    # standard 254-byte split, so the file re-encodes to the same bytes.
    fragments: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
    # Decoded leniently: a known TLV whose bytes do not fit its type, kept as they were (``value`` is the
    # raw bytes) so the file re-encodes byte for byte; text and YAML show it as a GenericTLV.
    unfit: bool = field(default=False, compare=False, repr=False)
    # MTA files only: an SNMP object read from (and written back as) TLV 64 with a 2-byte length.
    wide: bool = field(default=False, compare=False, repr=False)

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


@dataclass
class Layout:
    """Where a decoded file put its MICs, pad bytes and end marker (non-standard files only).

    ``marks``: (index into ``tlvs``, code) pairs in file order, code 6/7 for a MIC or 0 for
    one pad byte, meaning "this came just before ``tlvs[index]``" (index == len: at the end).
    ``end_marker``: whether 0xFF was present. ``tail``: the bytes after 0xFF as they were.
    ``kept``: mark number -> MIC value written as decoded instead of computed: a second CM MIC that
    did not match, a second CMTS MIC unlike the first, a MIC TLV that is not 16 bytes long.
    """

    marks: list[tuple[int, int]] = field(default_factory=list)
    end_marker: bool = True
    tail: bytes = b""
    kept: dict[int, bytes] = field(default_factory=dict)


@dataclass
class ConfigTree:
    tlvs: list[Tlv] = field(default_factory=list)
    # MIC values as decoded (16 bytes each), or None. encode() recomputes the CM MIC and,
    # given a secret, the CMTS MIC; without a secret it keeps ``cmts_mic``.
    cm_mic: bytes | None = field(default=None, compare=False)
    cmts_mic: bytes | None = field(default=None, compare=False)
    layout: Layout | None = field(default=None, compare=False, repr=False)
    # What a lenient decode noticed (ConfigError objects naming offset and TLV path), in file order.
    warnings: list = field(default_factory=list, compare=False, repr=False)
    # The source carried a CMTS MIC (YAML ``CmtsMic``, a text ``/* CmtsMic */`` comment): encoding without
    # the shared secret must say so rather than drop it.
    carries_cmts_mic: bool = field(default=False, compare=False, repr=False)
    # A PacketCable MTA file (hfcprov.config.mta), decoded: written back in that framing as it was.
    mta: bool = field(default=False, compare=False, repr=False)

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
