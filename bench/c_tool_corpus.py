"""Byte parity with the docsis C tool on its own test corpus: its tests/*.txt, encoded with its tests/key,
against the tests/*.cm it ships, by the C tool and by hfcprov, in the same run.

    HFCPROV_DOCSIS_TOOL=/path/to/docsis/src/docsis .venv/bin/python bench/c_tool_corpus.py [--corpus DIR]

The C tool is built by whoever runs this (its sources are not part of hfcprov); the corpus is the
folder ``tests`` beside its ``src`` unless --corpus says otherwise, and the C tool is given its own MIB
folders (``-M``) so its MIB names resolve. Printed: how many references each tool rebuilds byte for
byte, and for each input hfcprov does not rebuild, why (its error, or the first differing byte and the
TLV there, and the cause where it is one of the known deliberate differences below), marked "C tool too"
when the C tool cannot rebuild that reference either. Exit status 1 when hfcprov misses a reference the
C tool rebuilds for any other cause.

The other way: each reference decoded by hfcprov in the C tool's dialect (``decode --c-tool``) and encoded
by the C tool again: how many come back byte for byte (the C tool reads hfcprov's text).

Deliberate differences, each checked here on the file rather than assumed:
- the C tool's CMTS MIC walker reads every TLV 64 with a 2-byte length (the MTA form) even in a CM file,
  so the TLVs after a TLV 64 (the CM MIC included) drop out of its CMTS MIC: a CMTS computing MULPI D.2.1
  refuses such a file; hfcprov writes the MULPI MIC (shown when emulating that walker gives the reference);
- the C tool writes an Extended CMTS MIC setting (TLV 43.6) as given; hfcprov computes it with the secret
  (MULPI C.1.1.18.1.6), and writes it as given with --no-extended-mic (shown when that gives the reference).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.config import ConfigError, encode, parse_any, read_config, read_secret  # noqa: E402
from hfcprov.config.text import render_text  # noqa: E402
from hfcprov.config.framing import CMTS_MIC_ORDER, scan  # noqa: E402


def c_tool_mib_path(tool: Path) -> str:
    mibs = tool.resolve().parent.parent / "mibs"
    return ":".join(str(p) for p in (mibs, mibs / "ietf", mibs / "iana") if p.is_dir())


def c_tool_rebuilds(tool: Path, txt: Path, key: Path, out: Path, reference: Path | None = None) -> bool:
    out.unlink(missing_ok=True)
    mibs = c_tool_mib_path(tool)
    subprocess.run([str(tool), *(["-M", mibs] if mibs else []), "-e", str(txt), str(key), str(out)],
                   capture_output=True, timeout=60)
    return out.exists() and out.read_bytes() == (reference or txt.with_suffix(".cm")).read_bytes()


def first_difference(ours: bytes, theirs: bytes) -> str:
    at = next((i for i in range(min(len(ours), len(theirs))) if ours[i] != theirs[i]), min(len(ours), len(theirs)))
    try:
        items, _, _ = scan(theirs)
    except ConfigError:
        items = []
    pos, code = 0, None
    for c, whole in items:
        if pos <= at < pos + len(whole):
            code = c
            break
        pos += len(whole)
    where = f" in TLV {code}" if code is not None else ""
    return f"{len(ours)} vs {len(theirs)} bytes, first difference at byte {at}{where}"


def c_tool_tlv64_walker_mic(data: bytes, secret: bytes) -> bytes | None:
    """The CMTS MIC the C tool's walker computes for ``data`` (TLV 64 read with a 2-byte length), or None
    when the file has no top-level TLV 64."""
    items, _, cmts = scan(data)
    if cmts is None or 64 not in {code for code, _ in items}:
        return None
    content = data[:cmts[0] - 2]
    mac = hmac.new(secret, digestmod=hashlib.md5)
    for code in CMTS_MIC_ORDER:
        pos = 0
        while pos + 1 < len(content):
            if content[pos] == code:
                mac.update(content[pos:pos + 2 + content[pos + 1]])
                pos += 2 + content[pos + 1]
            elif content[pos] == 64:
                pos += 3 + int.from_bytes(content[pos + 1:pos + 3], "big")
            else:
                pos += 2 + content[pos + 1]
    return mac.digest()


def known_cause(txt: Path, ours: bytes, theirs: bytes, secret: bytes) -> str | None:
    """Which deliberate difference (module docstring) explains a miss, checked on the bytes."""
    if encode(read_config(txt), secret, extended_mic=False) == theirs:
        return "Extended CMTS MIC (43.6) computed per MULPI C.1.1.18.1.6; the C tool writes it as given" \
               " (byte-exact with --no-extended-mic)"
    _, _, cmts = scan(theirs)
    if cmts is not None and c_tool_tlv64_walker_mic(theirs, secret) == cmts[1]:
        return "the C tool's CMTS MIC skips the TLVs after a TLV 64 (it reads 64 with a 2-byte length in a CM" \
               " file); hfcprov's is MULPI D.2.1's, which a CMTS checks"
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", help="folder of the C tool's tests (*.txt, *.cm, key)")
    ap.add_argument("--encode-only", action="store_true",
                    help="leave out the other way (the C tool re-encoding hfcprov's --c-tool text): half the time")
    args = ap.parse_args()
    tool = os.environ.get("HFCPROV_DOCSIS_TOOL")
    if not tool:
        print("set HFCPROV_DOCSIS_TOOL=/path/to/docsis (built by you; its sources' tests/ is the corpus)")
        return 0
    tool_path = Path(tool)
    corpus = Path(args.corpus) if args.corpus else tool_path.resolve().parent.parent / "tests"
    texts = sorted(p for p in corpus.glob("*.txt") if p.with_suffix(".cm").exists())
    key = corpus / "key"
    secret = read_secret(key)
    rows, c_ok, ours_ok, ours_where_c, explained, c_reads_ours = [], 0, 0, 0, 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for txt in texts:
            theirs = txt.with_suffix(".cm").read_bytes()
            c_rebuilds = c_tool_rebuilds(tool_path, txt, key, Path(tmp) / "c.cm")
            c_ok += c_rebuilds
            cause = None
            try:
                ours = encode(read_config(txt), secret)
                why = None if ours == theirs else first_difference(ours, theirs)
                cause = why and known_cause(txt, ours, theirs, secret)
            except ConfigError as err:
                why = str(err).replace(str(txt), txt.name)
            ours_ok += why is None
            ours_where_c += why is None and c_rebuilds
            explained += bool(cause) and c_rebuilds
            if not args.encode_only:
                ours_text = Path(tmp) / "ours.txt"
                ours_text.write_text(render_text(parse_any(theirs), c_tool=True))
                c_reads_ours += c_tool_rebuilds(tool_path, ours_text, key, Path(tmp) / "back.cm",
                                                txt.with_suffix(".cm"))
            if why:
                rows.append((txt.name, "" if c_rebuilds else " (C tool too)", why + (f": {cause}" if cause else "")))
    n = len(texts)
    print(f"corpus: {corpus} ({n} inputs with a reference .cm)")
    print(f"{'encoder':<10}{'byte-exact':>12}")
    print(f"{'C tool':<10}{c_ok:>8} / {n}")
    print(f"{'hfcprov':<10}{ours_ok:>8} / {n}   ({ours_where_c} of the {c_ok} the C tool rebuilds)")
    print(f"{'':<10}{'':>12}   ({explained} more differ deliberately: see the causes)")
    if not args.encode_only:
        print(f"the C tool re-encodes hfcprov's --c-tool decode of a reference byte for byte: {c_reads_ours} / {n}")
    for name, both, why in rows:
        print(f"  miss{both}: {name}: {why}")
    return 1 if ours_where_c + explained < c_ok else 0


if __name__ == "__main__":
    sys.exit(main())
