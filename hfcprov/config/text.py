"""The ``Main { ... }`` text form, as written for the widely used DOCSIS text tools.

    Main {
        NetworkAccess 1;
        UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; BufferControl { TargetBuffer 16384; } }
        SnmpMibObject 1.3.6.1.2.1.69.1.3.8.0 Integer 1;
        GenericTLV TlvCode 200 TlvLength 3 TlvValue 0xaabbcc;
    }

Comments: ``/* ... */``, ``//`` and ``#`` to the end of the line. The MICs are rendered as
comments (the encoder computes them); parsing ignores them.
"""

from __future__ import annotations

import re

from hfcprov.config.ber import VarBind
from hfcprov.config.codec import content_items, encode
from hfcprov.config.dictionary import FRAGMENTED, MAX_VALUE, ROOT, Spec, check_vendor, children_for
from hfcprov.config.framing import (END_OF_DATA, LAYOUT_NAMES, NO_END_OF_DATA, WIDE_SNMP_OBJECT, LayoutReader,
                                    assemble, layout_statements, written_layout)
from hfcprov.config.names import DIGITMAP_OID, MAX_DIGITMAP, loose_spec
from hfcprov.config.tlvio import (BER_TYPES, RAW_TYPES, encode_tlv, generic_form, tlv_size, too_long,
                                  typed_generics, value_bytes)
from hfcprov.config.errors import ConfigError
from hfcprov.config.tree import ConfigTree, Tlv
from hfcprov.config.types import TYPES, hex_text, parse_hex, parse_int, unquote

# One match per meaningful token: the blanks and comments before it are skipped inside the
# regex (same alternatives, same order as a token-by-token scan), so Python sees ~1/3 of the matches.
_TOKEN = re.compile(r'''
    (?:[ \t\r\f\v\n]+ | /\*.*?\*/ | //[^\n]* | \#[^\n]*)*
    (?: (?P<str>"(?:[^"\\\n]|\\[^\n])*") | (?P<punct>[{};])
      | (?P<word>[^\s{};"](?:[^\s{};"]|"(?:[^"\\\n]|\\[^\n])*")*)  # a MIB name may quote its index: a."b c"
      | (?P<eof>\Z) | (?P<bad>.) )
''', re.DOTALL | re.VERBOSE)


# Template-built configs repeat most lines, so each line's tokens are remembered (bounded), with
# its shape for encode_text: (brace depth change, ends with ';' or '}'), or None when it has no
# tokens. Only lines without block comments: they are the one token-level construct that spans lines.
_LINES: dict[str, tuple[tuple[tuple[str, str], ...], tuple[int, bool] | None]] = {}
_LINE_MEMO_SIZE = 16384
_ONE_STATEMENT = (0, True)  # the common line's shape: whole statements, braces balanced


def _tokens(text: str, source: str, first_line: int = 1) -> list[tuple[str, str, int]]:
    """(kind, token, line) for every word, string and punctuation mark, then ("eof", "", last line)."""
    if "/*" in text:
        return _scan(text, source, first_line)
    out = []
    line = first_line - 1
    for line, text_line in enumerate(text.split("\n"), first_line):
        for kind, tok in _line_tokens(text_line, source, line):
            out.append((kind, tok, line))
    out.append(("eof", "", line))
    return out


def _line_tokens(text_line: str, source: str, line: int) -> tuple[tuple[str, str], ...]:
    """(kind, token) of one line without block comments, remembered; errors name ``line``."""
    return _line(text_line, source, line)[0]


def _line(text_line: str, source: str, line: int):
    """The remembered (tokens, shape) of one line (see ``_LINES``)."""
    entry = _LINES.get(text_line)
    if entry is None:
        toks = tuple((kind, tok) for kind, tok, _ in _scan(text_line, source, line)[:-1])
        shape = None
        if toks:
            shape = (sum((tok == "{") - (tok == "}") for kind, tok in toks if kind == "punct"), toks[-1][0] == "punct")
            if shape == _ONE_STATEMENT:
                shape = _ONE_STATEMENT  # one object, so encode_text's loop can test it with 'is'
        if len(_LINES) >= _LINE_MEMO_SIZE:
            _LINES.clear()
        entry = _LINES[text_line] = (toks, shape)
    return entry


def _scan(text: str, source: str, line: int) -> list[tuple[str, str, int]]:
    """The tokens of ``text``, whose first line is ``line``, by the regex."""
    out = []
    counted = 0
    count = text.count
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        start = m.start(kind)
        line += count("\n", counted, start)
        counted = start
        if kind == "eof":
            out.append(("eof", "", line))
            return out
        tok = m.group(kind)
        if kind == "bad":
            raise ConfigError(f"unexpected character {tok!r}" + (" (unterminated string?)" if tok == '"' else ""),
                              line=line, source=source)
        out.append((kind, tok, line))
    out.append(("eof", "", line))  # not reached: \Z always matches last
    return out


_LAYOUT_WORDS = frozenset(LAYOUT_NAMES) | {END_OF_DATA, NO_END_OF_DATA}


class _Parser:
    def __init__(self, text: str, source: str, first_line: int = 1):
        self.source = source
        self.mta = False  # the first TLV is MtaConfigDelimiter: an MTA file's sizes (TLV 64)
        self.mta_begin = False  # ... with value 1 (MTA begin): TLV 0, 6, 7 and 255 are content, not layout
        self.toks = _tokens(text, source, first_line)
        self.i = 0
        self.warnings: list[ConfigError] = []  # what the text has that a modem or CMTS may refuse, with its line
        self.layout = LayoutReader()  # the file's layout statements (CmMic; Pad; EndOfData...), if any
        self.lines: dict[int, int] | None = None  # id(node) -> line, when asked (lint names lines)

    def peek(self):
        return self.toks[self.i]

    def take(self):
        tok = self.toks[self.i]
        if tok[0] != "eof":  # eof stays put for whoever looks next
            self.i += 1
        return tok

    def fail(self, message, line, path=None):
        return ConfigError(message, line=line, path=path, source=self.source)

    def expect(self, want: str):
        kind, tok, line = self.take()
        if tok != want:
            raise self.fail(f"expected {want!r}, found {tok or 'end of text'!r}", line)

    def parse(self) -> ConfigTree:
        kind, tok, line = self.peek()
        if kind == "word" and tok == "Main":
            self.take()
            self.expect("{")
            tlvs = self.block(ROOT, "", closing=True)
        else:
            tlvs = self.block(ROOT, "", closing=False)
        kind, tok, line = self.peek()
        if kind != "eof":
            raise self.fail(f"unexpected {tok!r} after the end of Main", line)
        try:
            layout = self.layout.layout()
        except ConfigError as err:
            raise err.at(line=line, source=self.source)
        return ConfigTree(tlvs=tlvs, layout=layout, warnings=self.warnings, cm_file=layout is not None)

    def warn(self, err: ConfigError, line: int, path: str | None = None) -> None:
        self.warnings.append(err.at(line=line, path=path, source=self.source))

    def block(self, parent: Spec | None, path: str, closing: bool) -> list[Tlv]:
        out: list[Tlv] = []
        generics: list[tuple[int, int]] = []  # (index in out, line) of each GenericTLV: typed when the block ends
        toks = self.toks
        lines = self.lines
        size = 0  # encoded bytes of this block so far: a value over 255 bytes is reported with its line
        while True:
            kind, tok, line = toks[self.i]  # self.take(), inlined
            if kind == "eof":
                if closing:
                    raise self.fail("missing '}' at the end of the text", line)
                self.size = size
                return self.typed_generics(parent, path, out, generics) if generics else out
            self.i += 1
            if tok == "}":
                if not closing:
                    raise self.fail("unexpected '}'", line)
                self.size = size
                return self.typed_generics(parent, path, out, generics) if generics else out
            if tok == ";":
                continue
            if kind != "word":
                raise self.fail(f"expected a TLV name, found {tok!r}", line)
            if tok == "GenericTLV":
                node = self.generic(path, line)
                size += self.sized(None, node.code, len(node.value), path, line)
                generics.append((len(out), line))
                out.append(node)
                if lines is not None:
                    lines[id(node)] = line
                continue
            name = tok
            if not path and tok in _LAYOUT_WORDS and not self.mta_begin:
                self.layout_statement(tok, len(out), line)
                continue
            spec = parent.child_named(tok) if parent is not None else None
            if spec is None:
                spec, here = self.loose(parent, tok, path, line)
                if not here:  # a name from elsewhere in the dictionary, and no sub-TLV of its code here
                    node = self.foreign(spec, tok, path, line)
                    size += self.sized(None, node.code, len(value_bytes(None, node, "")), path, line)
                    out.append(node)
                    if lines is not None:
                        lines[id(node)] = line
                    continue
            if spec.compound:
                sub_path = f"{path}.{spec.code}" if path else str(spec.code)
                self.expect("{")
                node = Tlv(spec.code, None, self.block(spec, sub_path, closing=True))
                size += self.sized(spec, spec.code, self.size, path, line)
                if spec.vendor_specific:
                    try:
                        check_vendor(spec, node.children)
                    except ConfigError as err:
                        raise err.at(line=line, source=self.source)
                out.append(node)
                if lines is not None:
                    lines[id(node)] = line
                continue
            # the value's words up to ';' (value_words, inlined: this is the parser's hot loop)
            i, words = self.i, []
            while True:
                kind, tok, wline = toks[i]
                if tok == ";" or kind == "eof" or tok == "{" or tok == "}" or wline != line:
                    break
                words.append(tok)
                i += 1
            if tok != ";":
                self.i = i
                self.value_words(line)  # raises the missing-';' error
            self.i = i + 1
            try:
                if name in CVC_FILE_NAMES and len(words) == 1 and words[0][:1] == '"':
                    value = self.read_file(unquote(words[0]), "CVC")
                elif name == "DigitMap" and len(words) == 1 and words[0][:1] == '"':
                    value = VarBind(DIGITMAP_OID, "OctetString", self.read_file(unquote(words[0]), "DigitMap",
                                                                                MAX_DIGITMAP))
                elif len(words) == 1 and spec.type in BER_TYPES and words[0][:2].lower() == "0x":
                    value = parse_hex(words[0])  # BER kept byte for byte
                else:
                    value = spec.from_text(words[0] if len(words) == 1 else " ".join(words))
                node = Tlv(spec.code, value)
                n = len(value_bytes(spec, node, ""))  # type, length, range checks (the parser's TLV path is added below)
            except ConfigError as err:
                raise err.at(line=line, path=f"{path}.{spec.code}" if path else str(spec.code), source=self.source)
            if not path and not out and spec.code == 254:
                self.mta = True  # a PacketCable MTA file: long SNMP objects become TLV 64
                self.mta_begin = value == 1
            size += 2 + n if n <= 255 else self.sized(spec, spec.code, n, path, line)
            out.append(node)
            if lines is not None:
                lines[id(node)] = line

    def read_file(self, name: str, what: str, limit: int | None = None) -> bytes:
        """A file named in the text, as the docsis C tool takes CVCs and DigitMaps: relative to the text's
        folder (or, failing that, the current one, where the C tool looks)."""
        from pathlib import Path

        path = Path(name) if Path(name).is_absolute() or self.source.startswith("<") else \
            Path(self.source).parent / name
        if not path.exists() and Path(name).exists():
            path = Path(name)
        try:
            data = path.read_bytes()
        except OSError as err:
            raise ConfigError(f"cannot read the {what} file {str(path)!r}: {err.strerror}") from None
        if limit is not None and len(data) > limit:
            raise ConfigError(f"the {what} file {str(path)!r} has {len(data)} bytes; at most {limit}")
        return data

    def layout_statement(self, word: str, index: int, line: int) -> None:
        """``CmMic;``, ``CmtsMic 0x...;``, ``Pad;``, ``EndOfData [0x...];`` at the top level (see framing)."""
        words, _ = self.value_words(line)
        try:
            if len(words) > 1:
                raise ConfigError(f"{word} takes at most one value (hex bytes)")
            value = parse_hex(words[0]) if words else None
            if word in (END_OF_DATA, NO_END_OF_DATA):
                self.layout.end(word, value)
            else:
                self.layout.mark(word, index, value)
        except ConfigError as err:
            raise err.at(line=line, source=self.source)

    def loose(self, parent: Spec | None, name: str, path: str, line: int) -> tuple[Spec, bool]:
        """(spec, whether it is this block's) for a name this block does not know: the docsis C tool's loose
        lookup, with a warning naming what to write; an error with "did you mean" when nothing fits."""
        try:
            spec, here, note = loose_spec(parent, name, path)
        except ConfigError as err:
            raise err.at(line=line, path=path or None, source=self.source)
        self.warn(note, line)
        return spec, here

    def foreign(self, spec: Spec, name: str, path: str, line: int) -> Tlv:
        """A TLV named after ``spec`` from elsewhere in the dictionary, where this block has no such sub-TLV:
        written with that spec's code and value type, as raw bytes (the docsis C tool does the same)."""
        if self.toks[self.i][1] == "{":  # used as a block: its sub-TLVs are GenericTLVs or more loose names
            self.i += 1
            return Tlv(spec.code, None, self.block(None, f"{path}.{spec.code}", closing=True))
        words, _ = self.value_words(line)
        try:
            if spec.compound:
                raise ConfigError(f"{name} takes sub-TLVs ({{ ... }}), not a value")
            raw = value_bytes(spec, Tlv(spec.code, spec.from_text(" ".join(words))), "")
        except ConfigError as err:
            raise err.at(line=line, path=f"{path}.{spec.code}", source=self.source)
        return Tlv(spec.code, raw, unfit=True)

    def typed_generics(self, parent: Spec | None, path: str, out: list[Tlv], generics) -> list[Tlv]:
        """Each GenericTLV of this block as decoding its bytes makes it (``tlvio.typed_generics``), its
        warnings with its line."""
        line_of = dict(generics)
        for index, typed, notes in typed_generics(parent, path, out, line_of, self.mta):
            if self.lines is not None:
                self.lines[id(typed)] = line_of[index]
            for note in notes:
                self.warn(note, line_of[index])
        return out

    def sized(self, spec, code: int, n: int, path: str, line: int) -> int:
        """Encoded size of a TLV with an ``n``-byte value; over 255 bytes (unless it may be fragmented)
        is an error naming the line."""
        if n > MAX_VALUE and not path and code in (11, WIDE_SNMP_OBJECT) and self.mta and n <= 0xFFFF:
            return n + 3
        if n > MAX_VALUE and not (not path and code in FRAGMENTED):
            raise too_long(spec, n, f"{path}.{code}" if path else str(code)).at(line=line, source=self.source)
        return tlv_size(code, n, not path)

    def value_words(self, line):
        """The words of a value up to ';', all on the line of the name (values never span lines)."""
        words = []
        while True:
            kind, tok, wline = self.take()
            if tok == ";":
                return words, wline
            if kind == "eof" or tok in ("{", "}") or wline != line:
                raise self.fail(f"missing ';' at the end of the line (found {tok or 'end of text'!r}"
                                + (f" on line {wline})" if wline != line else ")"), line)
            words.append(tok)

    def generic(self, path: str, line: int) -> Tlv:
        words, _ = self.value_words(line)
        fields = {}
        it = iter(words)
        for key in it:
            val = next(it, None)
            if val is None:
                raise self.fail(f"GenericTLV: {key} has no value", line)
            fields[key] = val
        if "TlvCode" not in fields:
            raise self.fail("GenericTLV needs TlvCode", line)
        try:
            code = parse_int(fields["TlvCode"])
            if "TlvType" in fields:  # the docsis C tool's typed form: TlvType Integer|Short|Char|IPAddress
                value = _typed_generic(fields["TlvType"], fields.get("TlvValue", ""))
            elif "TlvValue" in fields:
                value = parse_hex(fields["TlvValue"])
            elif "TlvString" in fields:
                value = unquote(fields["TlvString"]).encode("latin-1")
            elif "TlvStringZero" in fields:
                value = unquote(fields["TlvStringZero"]).encode("latin-1") + b"\0"
            else:
                value = b""
            if not 0 <= code <= 255:  # (0 and 255 at the top: content of an MTA file; a CM file's encoder refuses them)
                raise ConfigError(f"TlvCode {code} is not 0..255")
            if "TlvLength" in fields and parse_int(fields["TlvLength"]) != len(value):
                raise ConfigError(f"TlvLength {fields['TlvLength']} does not match the {len(value)}-byte value")
            unknown = set(fields) - {"TlvCode", "TlvLength", "TlvValue", "TlvString", "TlvStringZero", "TlvType"}
            if unknown:
                raise ConfigError(f"GenericTLV: unknown field {sorted(unknown)[0]!r}")
        except (ConfigError, UnicodeEncodeError) as err:
            if isinstance(err, UnicodeEncodeError):
                err = ConfigError("GenericTLV strings must be latin-1 text")
            raise err.at(line=line, path=f"{path}.{fields.get('TlvCode')}" if path else fields.get("TlvCode"),
                         source=self.source)
        return Tlv(code, value)


# The docsis C tool's names that take a CVC's file name (TLV 32, 33, 81, 82; hfcprov's names take the bytes).
CVC_FILE_NAMES = frozenset({"ManufacturerCVC", "CoSignerCVC", "ManufacturerCVCChainFile", "CoSignerCVCChainFile"})
_CMTS_MIC_COMMENT = re.compile(r"/\*\s*CmtsMic\b")


def _typed_generic(kind: str, text: str) -> bytes:
    size = {"integer": 4, "short": 2, "char": 1}.get(kind.lower())
    if size:
        n = parse_int(text)
        if not 0 <= n < 1 << (8 * size):
            raise ConfigError(f"TlvValue {n} does not fit {kind} ({size} bytes)")
        return n.to_bytes(size, "big")
    if kind.lower() == "ipaddress":
        return TYPES["ipv4"].encode(text)
    raise ConfigError(f"TlvType {kind!r}: expected Integer, Short, Char or IPAddress")


def parse_text(text: str, source: str = "<text>", *, lines: bool = False) -> ConfigTree:
    """Parse the ``Main { ... }`` form (the ``Main`` wrapper is optional). A ``/* CmtsMic ... */``
    comment (as ``render_text`` writes) marks the tree as carrying a CMTS MIC (``encode`` then wants
    the shared secret). What a modem or CMTS may refuse but the encoder writes as given (a GenericTLV
    whose bytes do not fit its TLV, a name from another block read the docsis C tool's way) is in
    ``tree.warnings``, each naming its line. ``lines``: also ``tree.lines``, each node's line by ``id``."""
    parser = _Parser(text, source)
    if lines:  # tree.lines: id(node) -> its line, for config.lint.locate
        parser.lines = {}
    tree = parser.parse()
    if lines:
        tree.lines = parser.lines
    tree.carries_cmts_mic = "CmtsMic" in text and bool(_CMTS_MIC_COMMENT.search(text))
    return tree


def encode_text(text: str, secret: bytes | None = None, source: str = "<text>", *,
                extended_mic: bool = True) -> bytes:
    """``encode(parse_text(text, source), secret)``, with each top-level statement's TLVs remembered.

    Configs built from templates repeat most statements: a modem's 200 SNMP objects are
    mostly another modem's. The text is cut, at line ends, into top-level statements (one
    line, or a compound block over several); a statement seen before is a lookup of its
    encoded TLVs, a new one is parsed and encoded by the parser and codec and remembered.
    Anything else (block comments, a brace where a statement should end, layout statements,
    an MTA file, any error) takes ``parse_text`` and ``encode`` whole, so results and errors
    are theirs exactly.
    """
    items = None if "MtaConfigDelimiter" in text else statement_items(text, source)
    if items is None:
        return encode(parse_text(text, source), secret, extended_mic=extended_mic)
    return assemble(items, secret, extended_mic=extended_mic)


def text_items(text: str, source: str = "<text>") -> list[tuple[int, bytes]]:
    """``content_items(parse_text(text, source).tlvs)``: each top-level TLV, encoded, statements remembered
    (see ``encode_text``); for whoever frames the file itself (the TFTP server stamps TLV 19/20)."""
    items = statement_items(text, source)
    return items if items is not None else content_items(parse_text(text, source).tlvs)


# Top-level statement text (its lines, joined) -> (code, whole TLV) of what it encodes to, bounded.
_STATEMENTS: dict[str, tuple[tuple[int, bytes], ...]] = {}
_STATEMENT_MEMO_SIZE = 16384


def statement_items(text: str, source: str) -> list[tuple[int, bytes]] | None:
    """Top-level content items of ``text`` statement by statement, remembered (see ``encode_text``); None:
    the whole parse must decide (block comments, layout statements, a statement with a warning, any error)."""
    if "/*" in text:
        return None  # the one construct that spans lines
    try:
        lines = text.split("\n")
        first = next((n for n, line in enumerate(lines) if _line(line, source, n + 1)[1] is not None), None)
        if first is None:
            return None
        start, end = first, len(lines)
        head = _line_tokens(lines[first], source, first + 1)
        if head[0] == ("word", "Main"):  # "Main {" or "Main" then "{"; the closing "}" alone last
            if head == (("word", "Main"), ("punct", "{")):
                start = first + 1
            elif len(head) == 1:
                brace = next((n for n in range(first + 1, len(lines))
                              if _line(lines[n], source, n + 1)[1] is not None), None)
                if brace is None or _line_tokens(lines[brace], source, brace + 1) != (("punct", "{"),):
                    return None
                start = brace + 1
            else:
                return None
            end = next(n for n in range(len(lines) - 1, -1, -1) if _line(lines[n], source, n + 1)[1] is not None)
            if end < start or _line_tokens(lines[end], source, end + 1) != (("punct", "}"),):
                return None
        out: list[tuple[int, bytes]] = []
        remembered, line_of = _STATEMENTS.get, _LINES.get
        at, depth = None, 0  # first line of the statement being gathered, its brace depth
        for n in range(start, end):
            line = lines[n]
            if at is None:  # between statements: a remembered line is a whole statement (the common case)
                items = remembered(line)
                if items is not None:
                    out += items
                    continue
            entry = line_of(line) or _line(line, source, n + 1)
            shape = entry[1]  # where statements end; a brace out of place is the parser's to report
            if shape is None:
                continue  # blank or comment only: between statements, or inside one
            if at is None:
                if shape is _ONE_STATEMENT:
                    out += _parse_statement(line, source, n + 1)
                    continue
                at = n
            depth += shape[0]
            if depth == 0 and shape[1]:
                key = "\n".join(lines[at:n + 1])
                items = remembered(key)
                out += items if items is not None else _parse_statement(key, source, at + 1)
                at = None
        return None if at is not None else out
    except ConfigError:
        return None  # the whole parse reports it, with its own words


def _parse_statement(text: str, source: str, first_line: int) -> tuple[tuple[int, bytes], ...]:
    """A whole top-level statement (or several on one line), parsed, encoded and remembered."""
    items = _composed(text, source)
    if items is None:
        parser = _Parser(text, source, first_line)
        tlvs = parser.block(ROOT, "", closing=False)
        if parser.layout.seen or parser.warnings:  # the whole parse frames the file, or reports the warnings
            raise ConfigError("the whole parse decides")  # statement_items: None
        items = tuple(content_items(tlvs))
    if len(_STATEMENTS) >= _STATEMENT_MEMO_SIZE:
        _STATEMENTS.clear()
    _STATEMENTS[text] = items
    return items


# (parent TLV path, line) -> the whole sub-TLV that one-statement line encodes to, in that parent, bounded.
_CHILDREN: dict[tuple[str, str], bytes] = {}
_BRACE, _CLOSE = (("punct", "{"),), (("punct", "}"),)


def _composed(text: str, source: str) -> tuple[tuple[int, bytes], ...] | None:
    """A new block statement (``UsServiceFlow {`` ... ``}``, one sub-TLV per line) as its header and the
    sub-TLVs each of its lines encodes to, those remembered: a template's flows differ from modem to modem
    by a line or two. None where the parse must decide: a line that is not one whole sub-TLV, a vendor-
    specific block, a GenericTLV, a loose name, over 254 bytes, any error (the parse reports it)."""
    lines = text.split("\n")
    if len(lines) < 2 or _line_tokens(lines[-1], source, 0) != _CLOSE:
        return None
    try:
        found = _block_bytes(ROOT, "", lines, 0, source)
    except ConfigError:
        return None
    return None if found is None or found[1] != len(lines) else (found[0],)


def _block_bytes(parent: Spec, path: str, lines: list[str], at: int, source: str):
    """((code, whole TLV), index after its closing line) for the block opening at ``lines[at]``, or None."""
    head = _line_tokens(lines[at], source, 0)
    if len(head) != 2 or head[0][0] != "word" or head[1:] != _BRACE:
        return None
    spec = parent.child_named(head[0][1])
    if spec is None or not spec.compound or spec.vendor_specific or (not path and spec.code in FRAGMENTED):
        return None
    inner = f"{path}.{spec.code}" if path else str(spec.code)
    body, i = [], at + 1
    while i < len(lines):
        line = lines[i]
        whole = _CHILDREN.get((inner, line))
        if whole is not None:  # a line met before in this parent: one whole sub-TLV (checked then)
            body.append(whole)
            i += 1
            continue
        toks, shape = _line(line, source, 0)
        if shape is None:  # blank or a comment
            i += 1
        elif toks == _CLOSE:
            raw = b"".join(body)
            return ((spec.code, bytes((spec.code, len(raw))) + raw), i + 1) if len(raw) <= 254 else None
        elif shape == (1, True):  # a sub-block
            found = _block_bytes(spec, inner, lines, i, source)
            if found is None:
                return None
            body.append(found[0][1])
            i = found[1]
        elif shape is _ONE_STATEMENT and toks[0] != ("word", "GenericTLV") and \
                [tok for _, tok in toks].count(";") == 1:
            parser = _Parser(line, source)
            nodes = parser.block(spec, inner, closing=False)
            if parser.warnings or len(nodes) != 1:
                return None
            node = nodes[0]
            whole = encode_tlv(spec.children.get(node.code), node, inner + ".")
            if len(_CHILDREN) >= _STATEMENT_MEMO_SIZE:
                _CHILDREN.clear()
            _CHILDREN[(inner, line)] = whole
            body.append(whole)
            i += 1
        else:
            return None
    return None


def render_text(tree: ConfigTree, indent: str = "\t", names: bool = False, c_tool: bool = False) -> str:
    """The tree in the ``Main { ... }`` form, one TLV per line; MICs as comments.

    ``names``: show SNMP OIDs by their MIB names (``docsDevNmAccessStatus.1``) where
    ``hfcprov.mib`` knows them; parsing resolves them back to the same numbers.
    ``c_tool``: write what the docsis C tool reads (SNMP types String/HexString, IPAddress,
    ObjectID; ``addr/port``; ``Name 0x00;`` for an empty TLV; OIDs with a leading dot); hfcprov
    reads both. A file whose MICs, pad bytes or end marker are not the standard trailer has them
    written where they were (``CmMic;``, ``Pad;``, ``EndOfData 0x...;``: see ``config.framing``), so
    it encodes back to the same bytes; the C tool's dialect leaves them out."""
    lines = ["Main", "{"]
    layout = None if c_tool else written_layout(tree)
    _render(tree.tlvs, ROOT, 1, indent, lines, _oid_namer() if names else None, c_tool,
            layout_statements(layout) if layout is not None else None)
    if tree.cm_mic is not None:
        lines.append(f"{indent}/* CmMic {hex_text(tree.cm_mic)}; */")
    if tree.cmts_mic is not None:
        lines.append(f"{indent}/* CmtsMic {hex_text(tree.cmts_mic)}; */")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _oid_namer():
    try:
        from hfcprov.mib import name_of
    except ImportError:
        return None
    return name_of


def _layout_line(pad: str, name: str, value: bytes | None) -> str:
    return f"{pad}{name};" if value is None else f"{pad}{name} {hex_text(value)};"


def _render(nodes, parent: Spec | None, depth: int, indent: str, lines: list[str], namer=None,
            c_tool: bool = False, layout=None) -> None:
    pad = indent * depth
    kids = {} if parent is None else children_for(parent, nodes) if parent.vendor_specific else parent.children
    before, end = layout if layout is not None else ({}, None)
    for index, node in enumerate(nodes):
        for name, value in before.get(index, ()):
            lines.append(_layout_line(pad, name, value))
        spec = kids.get(node.code)
        generic = generic_form(spec, node)
        if generic is not None:
            code, raw = generic
            lines.append(f"{pad}GenericTLV TlvCode {code} TlvLength {len(raw)} TlvValue {hex_text(raw)};")
        elif node.compound:
            lines.append(f"{pad}{spec.name}")
            lines.append(f"{pad}{{")
            _render(node.children, spec, depth + 1, indent, lines, namer, c_tool)
            lines.append(f"{pad}}}")
        else:
            if isinstance(node.value, (bytes, bytearray)) and spec.type not in RAW_TYPES:
                shown = hex_text(node.value)  # BER kept byte for byte
            else:
                shown = spec.vtype.to_text(node.value)
                if c_tool:
                    shown = "0x00" if spec.type == "empty" else \
                        spec.vtype.to_c_tool(node.value) if hasattr(spec.vtype, "to_c_tool") else shown
                if namer is not None and spec.type == "snmp_varbind_ber":
                    name = namer(node.value.oid)
                    if name:
                        shown = name + shown[len(node.value.oid):]
            lines.append(f"{pad}{spec.name} {shown};" if shown != "" else f"{pad}{spec.name};")
    if layout is not None:
        for name, value in before.get(len(nodes), ()):
            lines.append(_layout_line(pad, name, value))
        lines.append(_layout_line(pad, *end))
