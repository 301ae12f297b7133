"""Bulk-build throughput: ``hfcprov build`` against pydocsis, one file at a time, in the same run.

    python bench/build.py [--modems 100000] [--runs 3] [--jobs 2]

Every figure is the median of ``--runs`` full builds (fresh output folder) of the
same generated inventory (residential tiers, per-modem rate overrides, a CMTS
shared secret). Rows:

- hfcprov build --jobs N: the real command path (plan, hash inputs, render, parse,
  encode with both MICs, atomic write, one sync, manifest). Each worker parses and
  encodes a distinct rendered text once: modems of one tier with the same overrides
  share it (this inventory has 40 distinct texts), so this row is mostly rendering
  and file writing;
- hfcprov build, unchanged: the same build run again (incremental: nothing rewritten);
- hfcprov one at a time: render + parse + encode + atomic write in one loop, no
  manifest, the same shape as the peer loop;
- pydocsis one at a time: the same jinja2 rendering, then the same content
  encoded and written by ``pydocsis.CmConfig.encode``. pydocsis has no text form,
  so the rendered text is parsed by hfcprov and its TLVs handed to pydocsis as
  hex values; that parse is counted in the peer's time as it is in ours. pydocsis
  writes without fsync or rename, and its CMTS MIC uses a fixed key.

The bytes before the MICs are compared between the two outputs for every tier.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.tiers.bulk import build  # noqa: E402
from hfcprov.tiers.inventory import check_row, read_rows  # noqa: E402
from hfcprov.tiers.templates import locate, render_text, render_tree  # noqa: E402
from hfcprov.config import encode, parse_text  # noqa: E402
from hfcprov.config.tlvio import encode_value  # noqa: E402
from hfcprov.config.dictionary import ROOT  # noqa: E402
from hfcprov.fileio import atomic_write  # noqa: E402

TIERS = ("res-50x5", "res-100x10", "res-300x20", "res-1000x50")
SECRET = b"bench-shared-secret"


def make_inventory(path: Path, n: int) -> None:
    with open(path, "w") as f:
        f.write("mac,tier,us_rate,max_cpe\n")
        for i in range(n):
            mac = f"0010{i:08x}"
            f.write(f"{mac},{TIERS[i % len(TIERS)]},{1 + i % 20}M,{1 + i % 8}\n")


def rows_of(inv: Path) -> list[dict]:
    return [check_row(r) for r in read_rows(inv)]


def ours_bulk(inv: Path, out: Path, jobs: int) -> float:
    t = time.perf_counter()
    s = build(inv, out, secret=SECRET, jobs=jobs)
    assert not s.failed, s.failed[:3]
    return time.perf_counter() - t


def ours_loop(rows: list[dict], out: Path) -> float:
    t = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        tree = render_tree(locate(row["tier"]), row)
        atomic_write(out / f"{row['mac']}.cm", encode(tree, SECRET), durable=False)
    return time.perf_counter() - t


def to_pydocsis(nodes, parent_spec, tags):
    from pydocsis import TLV

    out = []
    for node in nodes:
        spec = parent_spec.children.get(node.code) if parent_spec else None
        key = f"{node.code:02d}"
        entry = tags[key]
        if node.children:
            out.append(TLV(tag=key, datatype="aggregate", value="",
                           subTLVs=to_pydocsis(node.children, spec, entry["subTlvs"])))
        else:
            raw = encode_value(spec, node, key)
            out.append(TLV(tag=key, datatype=entry["datatype"], value=raw.hex().upper()))
    return out


def peer_loop(rows: list[dict], out: Path) -> float:
    from pydocsis import TLV, CmConfig
    from pydocsis.docsisTlvs import DocsisTlvs

    out.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    for row in rows:
        text = render_text(locate(row["tier"]), row)
        tree = parse_text(text)
        cm = CmConfig()
        cm.tlvs = to_pydocsis(tree.tlvs, ROOT, DocsisTlvs) + [
            TLV(tag="06", datatype="md5", value=""), TLV(tag="07", datatype="md5", value=""),
            TLV(tag="255", datatype="", value=""),
        ]
        cm.configFilePath = str(out / f"{row['mac']}.cm")
        cm.encode()
    return time.perf_counter() - t




def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modems", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-loop", action="store_true", help="skip the hfcprov one-at-a-time row (saves a third)")
    args = ap.parse_args()
    try:
        import pydocsis  # noqa: F401
    except ImportError:
        sys.exit("pydocsis is the peer: pip install 'hfcprov[bench]' (or pip install pydocsis)")

    work = Path(tempfile.mkdtemp(prefix="hfcprov-bench-build-"))
    try:
        inv = work / "modems.csv"
        make_inventory(inv, args.modems)
        rows = rows_of(inv)
        times: dict[str, list[float]] = {k: [] for k in ("bulk", "unchanged", "loop", "peer")}
        for run in range(args.runs):
            paths = [("bulk", lambda o: ours_bulk(inv, o, args.jobs)), ("loop", lambda o: ours_loop(rows, o)),
                     ("peer", lambda o: peer_loop(rows, o))]
            for key, fn in paths:
                if key == "loop" and args.no_loop:
                    continue
                out = work / f"{key}"
                shutil.rmtree(out, ignore_errors=True)
                times[key].append(fn(out))
                if key == "loop":
                    shutil.rmtree(out, ignore_errors=True)  # only bulk and peer outputs are compared
                print(f"run {run + 1}/{args.runs} {key}: {times[key][-1]:.1f} s", file=sys.stderr, flush=True)
            times["unchanged"].append(ours_bulk(inv, work / "bulk", args.jobs))
        # Same content: per tier, the TLVs before the MICs are byte-identical.
        same = all(
            _tlv_bytes((work / "bulk" / f"{r['mac']}.cm").read_bytes())
            == _tlv_bytes((work / "peer" / f"{r['mac']}.cm").read_bytes())
            for r in rows[: len(TIERS) * 2]
        )
        peer = statistics.median(times["peer"])
        print(f"\nbulk build of {args.modems} modems, median of {args.runs} runs, {os.cpu_count()} cores"
              f" (TLV bytes identical to pydocsis output: {'yes' if same else 'NO'})")
        print(f"{'path':<40} {'median s':>9} {'files/s':>9} {'vs pydocsis':>12}")
        labels = {
            "bulk": f"hfcprov build --jobs {args.jobs}",
            "unchanged": f"hfcprov build --jobs {args.jobs} (unchanged)",
            "loop": "hfcprov one at a time",
            "peer": "pydocsis one at a time",
        }
        for key in ("bulk", "unchanged", "loop", "peer"):
            if not times[key]:
                continue
            m = statistics.median(times[key])
            print(f"{labels[key]:<40} {m:>9.2f} {args.modems / m:>9.0f} {peer / m:>11.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _tlv_bytes(data: bytes) -> bytes:
    """The TLVs before the CM MIC (TLV 6): the content, without the MICs and padding."""
    pos = 0
    while pos < len(data) and data[pos] != 6:
        pos += 2 + data[pos + 1]
    return data[:pos]


if __name__ == "__main__":
    main()
