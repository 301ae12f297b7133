"""YAML and JSON forms of a config tree, and ``read_config`` for any form by content.

Both forms are a list under ``Main`` that keeps order and repeats; a compound TLV holds a
list of its sub-TLVs (a mapping is accepted too when names do not repeat); a leaf holds
its value as in the text form (numbers stay numbers); unknown TLVs are
``GenericTLV: {TlvCode: 200, TlvValue: "0xaabbcc"}``.

    Main:
      - NetworkAccess: 1
      - UsServiceFlow:
          - UsServiceFlowRef: 1
          - BufferControl:
              - TargetBuffer: 16384
      - SnmpMibObject: 1.3.6.1.2.1.69.1.3.8.0 Integer 1
"""

from __future__ import annotations

import re

from hfcprov.config.codec import decode
from hfcprov.config.dictionary import FRAGMENTED, MAX_VALUE, ROOT, Spec, check_vendor, children_for
from hfcprov.config.errors import ConfigError
from hfcprov.config.framing import (END_OF_DATA, LAYOUT_NAMES, NO_END_OF_DATA, MTA_DELIMITER, WIDE_SNMP_OBJECT, LayoutReader,
                                    decode_mta, is_mta, layout_statements, written_layout)
from hfcprov.config.names import loose_spec, unknown_name
from hfcprov.config.text import parse_text
from hfcprov.config.tlvio import BER_TYPES, encode_value, generic_form, tlv_size, too_long, typed_generics
from hfcprov.config.tree import ConfigTree, Tlv
from hfcprov.config.types import hex_text, parse_hex, parse_int
from hfcprov.lazy import lazy

json = lazy("json")  # only the YAML and JSON forms need these; a text config loads neither
yaml = lazy("yaml")

MIC_KEYS = ("CmMic", "CmtsMic")


# --- render -------------------------------------------------------------------------------

def to_plain(tree: ConfigTree) -> dict:
    layout = written_layout(tree)
    doc = {"Main": _plain(tree.tlvs, ROOT, layout_statements(layout) if layout is not None else None)}
    if tree.cm_mic is not None:
        doc["CmMic"] = hex_text(tree.cm_mic)
    if tree.cmts_mic is not None:
        doc["CmtsMic"] = hex_text(tree.cmts_mic)
    return doc


def _plain(nodes, parent: Spec | None, layout=None) -> list:
    out = []
    kids = {} if parent is None else children_for(parent, nodes) if parent.vendor_specific else parent.children
    before, end = layout if layout is not None else ({}, None)
    for index, node in enumerate(nodes):
        for name, value in before.get(index, ()):
            out.append({name: None if value is None else hex_text(value)})
        spec = kids.get(node.code)
        generic = generic_form(spec, node)
        if generic is not None:
            out.append({"GenericTLV": {"TlvCode": generic[0], "TlvValue": hex_text(generic[1])}})
        elif node.compound:
            out.append({spec.name: _plain(node.children, spec)})
        elif isinstance(node.value, (bytes, bytearray)) and spec.type in BER_TYPES:
            out.append({spec.name: hex_text(node.value)})
        else:
            out.append({spec.name: spec.vtype.to_plain(node.value)})
    if layout is not None:
        for name, value in before.get(len(nodes), ()):
            out.append({name: None if value is None else hex_text(value)})
        out.append({end[0]: None if end[1] is None else hex_text(end[1])})
    return out


def render_yaml(tree: ConfigTree) -> str:
    return yaml.safe_dump(to_plain(tree), sort_keys=False, default_flow_style=False, allow_unicode=False)


def render_json(tree: ConfigTree) -> str:
    return json.dumps(to_plain(tree), indent=2) + "\n"


# --- parse (walks YAML nodes so every error names its line) ---------------------------------

def parse_yaml(text: str, source: str = "<yaml>") -> ConfigTree:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise ConfigError(f"not valid YAML: {getattr(err, 'problem', None) or err}",
                          line=mark.line + 1 if mark else None, source=source) from None
    return _from_node(node, source)


def parse_json(text: str, source: str = "<json>") -> ConfigTree:
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        raise ConfigError(f"not valid JSON: {err.msg}", line=err.lineno, source=source) from None
    return parse_yaml(text, source)  # JSON is YAML; its node marks give line numbers


def _line(node) -> int:
    return node.start_mark.line + 1


def _from_node(doc, source: str) -> ConfigTree:
    if doc is None:
        raise ConfigError("empty document", source=source)
    carries = False
    if isinstance(doc, yaml.MappingNode):
        main = None
        for k, v in doc.value:
            carries = carries or k.value == "CmtsMic"
            if k.value == "Main":
                main = v
            elif k.value not in MIC_KEYS:
                raise ConfigError(f"unexpected top-level key {k.value!r} (expected Main)", line=_line(k), source=source)
        if main is None:
            raise ConfigError("no 'Main' key", line=_line(doc), source=source)
        doc = main
    reader = _Reader(source)
    tlvs = reader.entries(doc, ROOT, "")[0]
    try:
        layout = reader.layout.layout()
    except ConfigError as err:
        raise err.at(line=_line(doc), source=source)
    tree = ConfigTree(tlvs=tlvs, carries_cmts_mic=carries, layout=layout, warnings=reader.warnings,
                      cm_file=layout is not None)
    tree.lines = reader.lines
    return tree


def _pairs(node, source):
    """(key node, value node) pairs of a list of single-key mappings, or of one mapping."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if not isinstance(item, yaml.MappingNode) or len(item.value) != 1:
                raise ConfigError("each entry must be one 'Name: value'", line=_line(item), source=source)
            yield item.value[0]
    elif isinstance(node, yaml.MappingNode):
        yield from node.value
    elif isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null"):
        return
    else:
        raise ConfigError("expected a list of 'Name: value' entries", line=_line(node), source=source)


_LAYOUT_WORDS = frozenset(LAYOUT_NAMES) | {END_OF_DATA, NO_END_OF_DATA}


class _Reader:
    """YAML/JSON nodes into TLVs; collects the warnings (with lines) and the layout statements."""

    def __init__(self, source: str):
        self.source = source
        self.warnings: list[ConfigError] = []
        self.layout = LayoutReader()
        self.mta = False  # as text's _Parser: sizes of an MTA file
        self.mta_begin = False  # first TLV MtaConfigDelimiter 1: TLV 0, 6, 7, 255 are content, not layout
        self.lines: dict[int, int] = {}  # id(node) -> line (config.lint.locate)

    def warn(self, err: ConfigError, line: int) -> None:
        self.warnings.append(err.at(line=line, source=self.source))

    def entries(self, node, parent: Spec | None, path: str) -> tuple[list[Tlv], int]:
        """The TLVs of a list of entries and their encoded size (a value over 255 bytes is reported with its line)."""
        out: list[Tlv] = []
        generics: list[tuple[int, int]] = []
        size = 0
        source = self.source

        def sized(spec, code, n, line):
            if n > MAX_VALUE and not path and code in (11, WIDE_SNMP_OBJECT) and self.mta and n <= 0xFFFF:
                return n + 3  # a PacketCable MTA file: a long SNMP object is TLV 64
            if n > MAX_VALUE and not (not path and code in FRAGMENTED):
                raise too_long(spec, n, f"{path}.{code}" if path else str(code)).at(line=line, source=source)
            return tlv_size(code, n, not path)

        for key, value in _pairs(node, source):
            name, line = key.value, _line(key)
            if name == "GenericTLV":
                tlv = _generic(value, path, source)
                size += sized(None, tlv.code, len(tlv.value), line)
                generics.append((len(out), line))
                out.append(tlv)
                continue
            if not path and name in _LAYOUT_WORDS and not self.mta_begin:
                self.layout_entry(name, value, len(out), line)
                continue
            spec = parent.child_named(name) if parent is not None else None
            here = True
            if spec is None:
                try:
                    spec, here, note = loose_spec(parent, name, path) if path else (None, True, None)
                except ConfigError as err:
                    raise err.at(line=line, path=path or None, source=source)
                if spec is None:
                    raise unknown_name(parent, name).at(line=line, source=source)
                self.warn(note, line)
            sub = f"{path}.{spec.code}" if path else str(spec.code)
            if spec.compound or not here and isinstance(value, (yaml.SequenceNode, yaml.MappingNode)):
                children, inner = self.entries(value, spec if here else None, sub)
                size += sized(spec, spec.code, inner, line)
                node = Tlv(spec.code, None, children)
                if here and spec.vendor_specific:
                    try:
                        check_vendor(spec, node.children)
                    except ConfigError as err:
                        raise err.at(line=line, source=source)
                out.append(node)
                self.lines[id(node)] = line
                continue
            try:
                plain = _scalar(value)
                if spec.type in BER_TYPES and isinstance(plain, str) and plain.lower().startswith("0x") and " " not in plain:
                    v = parse_hex(plain)
                else:
                    v = spec.from_plain(plain)
                raw = encode_value(spec, Tlv(spec.code, v), sub)
            except ConfigError as err:
                raise err.at(line=_line(value), path=sub, source=source)
            if not path and not out and spec.code == MTA_DELIMITER:
                self.mta = True
                self.mta_begin = v == 1
            size += sized(spec, spec.code, len(raw), _line(value))
            out.append(Tlv(spec.code, v) if here else Tlv(spec.code, raw, unfit=True))
            self.lines[id(out[-1])] = line
        line_of = dict(generics)
        for index, typed, notes in typed_generics(parent, path, out, line_of, self.mta):
            self.lines[id(typed)] = line_of[index]
            for note in notes:
                self.warn(note, line_of[index])
        return out, size

    def layout_entry(self, name: str, value, index: int, line: int) -> None:
        try:
            plain = _scalar(value)
            raw = parse_hex(str(plain)) if plain not in ("", None) else None
            if name in (END_OF_DATA, NO_END_OF_DATA):
                self.layout.end(name, raw)
            else:
                self.layout.mark(name, index, raw)
        except ConfigError as err:
            raise err.at(line=line, source=self.source)


def _scalar(node):
    if isinstance(node, yaml.SequenceNode):
        return [_scalar(n) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        raise ConfigError("expected a value, not a mapping")
    if node.tag.endswith(":null"):
        return ""
    return node.value


def _generic(node, path, source) -> Tlv:
    line = _line(node)
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError("GenericTLV needs {TlvCode: N, TlvValue: 0x...}", line=line, source=source)
    fields = {k.value: v.value for k, v in node.value if isinstance(v, yaml.ScalarNode)}
    try:
        code = parse_int(fields.get("TlvCode", "x"))
        if not 0 <= code <= 255:  # (0 and 255 at the top: content of an MTA file; a CM file's encoder refuses them)
            raise ConfigError(f"TlvCode {code} is not 0..255")
        raw = parse_hex(fields.get("TlvValue", "0x"))
        if "TlvLength" in fields and parse_int(fields["TlvLength"]) != len(raw):
            raise ConfigError("TlvLength does not match TlvValue")
    except ConfigError as err:
        raise err.at(line=line, path=path or None, source=source)
    return Tlv(code, raw)


# --- any form -------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f]")  # in no text form: a binary file
_COMMENTS = re.compile(r"(/\*.*?\*/|//[^\n]*|#[^\n]*|\s+)*", re.DOTALL)


_TEXT_START = re.compile(r"Main\s*\{|[A-Za-z]\w*\s+[^:\s]")  # "Main {", or "Name value" (not "key: value")


def detect(data: bytes) -> str:
    """'binary', 'text', 'yaml' or 'json', from the content alone."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "binary"
    return detect_text(text)


# _CONTROL's characters as 0, every other byte as 1: an ASCII text's test by bytes.translate (a C loop, ~5x
# the regex's speed over a 2 KB config: bulk encodes and builds test every file)
_CONTROL_BYTES = bytes(0 if _CONTROL.match(chr(c)) else 1 for c in range(256))


def _has_control(text: str) -> bool:
    """Whether the first 4 KiB of ``text`` hold a character of ``_CONTROL``."""
    head = text[:4096]
    if head.isascii():
        return b"\0" in head.encode("ascii").translate(_CONTROL_BYTES)
    return _CONTROL.search(head) is not None


def detect_text(text: str) -> str:
    """``detect`` of content already decoded: 'binary' (control characters), 'text', 'yaml' or 'json'."""
    if not text.strip() or _has_control(text):
        return "binary"
    start = _COMMENTS.match(text).end()
    if text[start:start + 1] in ("{", "["):
        return "json"
    if _TEXT_START.match(text, start):
        return "text"
    return "yaml"


def parse_any(data: bytes | str, source: str = "<input>", secret: bytes | None = None, *,
              strict: bool = False, lines: bool = False) -> ConfigTree:
    """A config in any form, told apart by its content; a binary one is decoded leniently (warnings in
    ``tree.warnings``, each naming ``source``) unless ``strict``. ``lines``: a text form records each
    TLV's line (``tree.lines``; YAML and JSON always do), for ``config.lint.locate``."""
    if isinstance(data, str):
        data = data.encode()
    if not data.strip():
        raise ConfigError("empty file: nothing to decode", source=source)
    form = detect(data)
    if form == "binary":
        try:
            if is_mta(data):
                tree = decode_mta(data, strict=strict)
            else:
                tree = decode(data, secret, strict=strict)
        except ConfigError as err:
            raise err.at(source=source)
        for warning in tree.warnings:
            warning.at(source=source)
        return tree
    text = data.decode("utf-8")
    if form == "text":
        return parse_text(text, source, lines=lines)
    return {"yaml": parse_yaml, "json": parse_json}[form](text, source)


def read_config(path, secret: bytes | None = None, *, strict: bool = False, lines: bool = False) -> ConfigTree:
    """A config from a file in any form: binary ``.cm``, ``Main { ... }`` text, YAML or JSON."""
    try:
        with open(path, "rb") as f:  # not pathlib: ~4 ms of a per-file encode
            data = f.read()
    except OSError as err:
        raise ConfigError(f"cannot read: {err.strerror}", source=str(path)) from None
    return parse_any(data, str(path), secret, strict=strict, lines=lines)
