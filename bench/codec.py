"""Config codec throughput: hfcprov.config against pydocsis (PyPI) on the same file, same run.

    .venv/bin/python bench/codec.py [--runs 5] [--bulk 10000]

The file is a realistic ~2 KB DOCSIS 3.0 config: 16 service flows (8 up, 8 down) with
Buffer Control, 16 classifiers, 20 SNMP MIB objects, BPI settings. Figures are medians
of ``--runs`` repetitions; "ratio" is hfcprov's rate over pydocsis's (>1: hfcprov faster).
The bulk run encodes 10,000 distinct per-modem files to disk (atomic writes) and decodes
them back, as a provisioning system rebuilding its TFTP tree would, and turns 1,000
distinct per-modem texts into binary both by ``parse_text`` + ``encode`` and by
``encode_text`` (which remembers top-level statements; the TFTP server's path).
"""

from __future__ import annotations

import argparse
import binascii
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.config import content_items, decode, encode, encode_text, parse_text, prepare
from hfcprov.fileio import atomic_write

SECRET = b"bench-shared-secret"


def realistic_text(seed: int = 0) -> str:
    lines = ["Main {", "NetworkAccess 1;", "GlobalPrivacyEnable 1;", f"MaxCPE {4 + seed % 8};", "MaxClassifiers 32;",
             "BaselinePrivacy { AuthTimeout 10; ReAuthTimeout 10; AuthGraceTime 600; OperTimeout 1; ReKeyTimeout 1;"
             " TEKGraceTime 600; AuthRejectTimeout 60; }"]
    for i in range(8):
        ref = i + 1
        lines.append(f"UsServiceFlow {{ UsServiceFlowRef {ref}; QosParamSetType 7; TrafficPriority {i % 8};"
                     f" MaxRateSustained {(5 + i + seed % 50) * 1_000_000}; MaxTrafficBurst 30000; MaxConcatenatedBurst 3044;"
                     f" SchedulingType 2; ServiceClassName \"up_{ref:02d}_{seed % 1000}\"; BufferControl {{ MinimumBuffer 3044; TargetBuffer {32768 + 1024 * i};"
                     f" MaximumBuffer 131072; }} }}")
        lines.append(f"DsServiceFlow {{ DsServiceFlowRef {ref + 8}; QosParamSetType 7; TrafficPriority {i % 8};"
                     f" MaxRateSustained {(50 + i + seed % 500) * 1_000_000}; MaxTrafficBurst 100000;"
                     f" ServiceClassName \"down_{ref:02d}_{seed % 1000}\";"
                     f" BufferControl {{ TargetBuffer {262144 + 4096 * i}; }} }}")
        lines.append(f"UsPacketClass {{ ClassifierRef {ref}; ServiceFlowRef {ref}; RulePriority 64; ActivationState 1;"
                     f" IpPacketClassifier {{ IpProto 17; SrcPortStart {5060 + i}; SrcPortEnd {5061 + i}; }} }}")
        lines.append(f"DsPacketClass {{ ClassifierRef {ref + 8}; ServiceFlowRef {ref + 8}; RulePriority 64;"
                     f" ActivationState 1; IpPacketClassifier {{ IpProto 6; DstPortStart {8000 + i}; DstPortEnd {8001 + i}; }} }}")
    for i in range(20):
        if i % 3 == 0:
            lines.append(f"SnmpMibObject 1.3.6.1.2.1.69.1.2.1.2.{i + 1} IpAddress 10.{seed % 250}.0.{i + 1};")
        elif i % 3 == 1:
            lines.append(f'SnmpMibObject 1.3.6.1.2.1.69.1.2.1.4.{i + 1} String "community-{i}";')
        else:
            lines.append(f"SnmpMibObject 1.3.6.1.2.1.69.1.2.1.7.{i + 1} Integer 4;")
    lines.append("}")
    return "\n".join(lines)


def rate(fn, n: int, runs: int) -> float:
    """Median calls per second of ``fn`` over ``runs`` repetitions of ``n`` calls."""
    rates = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rates.append(n / (time.perf_counter() - t0))
    return statistics.median(rates)


def pydocsis_ops(data: bytes):
    try:
        from pydocsis.cmConfig import CmConfig
        from pydocsis.docsisTlvs import DocsisTlvs
    except ImportError:
        return None
    hexdata = binascii.hexlify(data).decode()

    def parse():
        c = CmConfig()
        c.parse(hexdata, DocsisTlvs)
        return c

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            parsed = parse()
    except Exception as err:  # pydocsis is the peer: report, do not hide, its failure
        print(f"pydocsis cannot parse the file: {err}")
        return None

    def enc():
        parsed.hashme = []
        with contextlib.redirect_stdout(io.StringIO()):
            parsed.encode()

    return parse, enc


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--n", type=int, default=300, help="calls per run for the single-file figures")
    ap.add_argument("--bulk", type=int, default=10_000)
    args = ap.parse_args()

    tree = parse_text(realistic_text())
    data = encode(tree, SECRET)
    assert encode(decode(data)) == data
    prepared = prepare(content_items(tree.tlvs), SECRET, holes=(19, 20))
    size = len(data)
    print(f"file: {size} bytes, {len(tree.find('24')) + len(tree.find('25'))} service flows, "
          f"{len(tree.find('22')) + len(tree.find('23'))} classifiers, {len(tree.find('11'))} SNMP objects; "
          f"median of {args.runs} runs x {args.n} calls")
    rows = [
        ("decode", rate(lambda: decode(data), args.n, args.runs)),
        ("decode+verify MICs", rate(lambda: decode(data, SECRET), args.n, args.runs)),
        ("encode+MICs", rate(lambda: encode(tree, SECRET), args.n, args.runs)),
        # what the TFTP server does per request: the prepared file, TLV 19/20 and both MICs filled in
        ("prepared fill 19/20", rate(lambda: prepared.fill({19: 1700000000, 20: "10.1.2.3"}), args.n * 10, args.runs)),
    ]
    peer = pydocsis_ops(data)
    peer_rows = {}
    if peer:
        parse, enc = peer
        with contextlib.redirect_stdout(io.StringIO()):
            peer_rows["decode"] = rate(parse, max(args.n // 10, 10), args.runs)
            peer_rows["encode+MICs"] = rate(enc, args.n, args.runs)
    print(f"\n{'operation':<22}{'hfcprov files/s':>16}{'MB/s':>8}{'pydocsis files/s':>18}{'MB/s':>8}{'ratio':>8}")
    for name, r in rows:
        p = peer_rows.get(name)
        peer_cols = f"{p:>18.0f}{p * size / 1e6:>8.2f}{r / p:>8.1f}" if p else f"{'-':>18}{'-':>8}{'-':>8}"
        print(f"{name:<22}{r:>16.0f}{r * size / 1e6:>8.2f}{peer_cols}")
    if peer:
        print("(pydocsis 'encode' hashes with a fixed key over all TLVs, so its CMTS MIC is not the DOCSIS one;"
              " its parse raises on unknown TLVs)")

    # Bulk: N distinct files (per-modem rates and addresses) encoded to disk and decoded back.
    texts = [realistic_text(i) for i in range(min(args.bulk, 1000))]
    t0 = time.perf_counter()
    trees = [parse_text(t) for t in texts]
    t_parse = (time.perf_counter() - t0) / len(texts)
    # Text to binary for the same distinct texts, both ways (encode_text remembers statements: per-modem
    # files repeat most of them); each the median of --runs passes over all the texts. Two sets: the
    # texts above (a flow per line, per-modem values in most lines) and what a tier template renders
    # (the boot-storm bench's tier: a statement per line, 30-360 SNMP objects).
    from hfcprov.tiers.templates import render_text

    tier = Path(__file__).resolve().parent / "padded-tier.j2"
    text_sets = [("per-modem texts above", texts),
                 ("padded-tier.j2 renders", [render_text(tier, {"filler": f}) for f in range(30, 361)])]
    to_binary = []
    for name, these in text_sets:
        assert all(encode_text(t, SECRET) == encode(parse_text(t), SECRET) for t in these)
        whole = statistics.median(_per_file(lambda t: encode(parse_text(t), SECRET), these) for _ in range(args.runs))
        stmts = statistics.median(_per_file(lambda t: encode_text(t, SECRET), these) for _ in range(args.runs))
        to_binary.append((name, len(these), whole, stmts))
    trees = [trees[i % len(trees)] for i in range(args.bulk)]  # 1,000 distinct modems, cycled
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        total = 0
        for i, t in enumerate(trees):
            blob = encode(t, SECRET)
            total += len(blob)
            atomic_write(Path(tmp) / f"cm{i:05d}.cm", blob)
        t_enc = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(args.bulk):
            decode((Path(tmp) / f"cm{i:05d}.cm").read_bytes(), SECRET)
        t_dec = time.perf_counter() - t0
    print(f"\nbulk: {args.bulk} files, {total / 1e6:.1f} MB")
    print(f"{'encode+MICs+atomic write':<28}{t_enc:>8.1f} s{args.bulk / t_enc:>10.0f} files/s{total / t_enc / 1e6:>8.2f} MB/s")
    print(f"{'read+decode+verify':<28}{t_dec:>8.1f} s{args.bulk / t_dec:>10.0f} files/s{total / t_dec / 1e6:>8.2f} MB/s")
    print(f"{'parse text form (per file)':<28}{t_parse * 1e3:>8.2f} ms")
    print(f"\n{'text -> binary, ms per file':<36}{'parse_text+encode':>18}{'encode_text':>12}{'ratio':>7}")
    for name, n, whole, stmts in to_binary:
        print(f"{f'{name} ({n})':<36}{whole * 1e3:>18.3f}{stmts * 1e3:>12.3f}{whole / stmts:>6.1f}x")


def _per_file(fn, texts) -> float:
    t0 = time.perf_counter()
    for t in texts:
        fn(t)
    return (time.perf_counter() - t0) / len(texts)


if __name__ == "__main__":
    main()
