"""Bulk speed against the docsis C tool's batch mode: 1,000 distinct modem files, one process each way, CPU
and wall, in the same run.

    HFCPROV_DOCSIS_TOOL=/path/to/docsis .venv/bin/python bench/bulk.py [--modems 1000] [--runs 5] [--set tiers]

Files: an inventory of distinct modems over the shipped tiers (per-modem upstream and downstream rates and CPE
limit: distinct texts), rendered by hfcprov's templates; with ``--set operator`` each modem also carries
20 SNMP objects (filters, a per-modem location string), the size of files operators deploy. Rows, each
timed as one child process (user + sys CPU from wait4, and wall), interleaved run by run so the machine's
load falls on all alike:

- ``C docsis -m``: the C tool's batch mode over the rendered texts (``docsis -M MIBS -m *.cfg key .cm``; it
  prints each file's decode to stdout, sent to /dev/null); built by whoever runs this, its path from
  HFCPROV_DOCSIS_TOOL (the row is left out without it). ``-M`` gives it the MIB folders of its own sources,
  which ``make install`` puts in net-snmp's MIB path: the tool as installed loads them at start, as it
  must to resolve the DOCSIS names in operators' files (``--c-tool-mibs none``: net-snmp's default path);
- ``hfcprov config encode``: the same rendered texts, all as SOURCES of one command, into a folder (lint
  checks, CMTS MIC, atomic writes, one sync at the end);
- ``hfcprov build``: the inventory itself (rendering the templates, lint, CMTS MIC, atomic writes, one sync,
  the manifest), ``--jobs 1``: one process;
- ``baseline build`` (with ``--baseline HFCPROV``: another checkout's command, e.g. main's before a change):
  the same build by it, so before and after come from one run;
- start-up: the C tool and ``build`` on the first file alone (anchor: the C tool's one file); from these and
  the rows above, each tool's start-up and its cost per file after it.

Every row starts with no output file and writes into a folder made for that run: each creates 1,000 files.
The C tool writes each file beside its input, so each of its runs gets a new folder of hard links to the
texts. The previous run's outputs are moved aside, not deleted, until the end: on ext4 without a journal (this
machine's disk) the allocator skips an inode freed less than a minute ago after reading its dtime, so
deleting 1,000-3,000 files before each row made every new file scan them (up to ~0.4 ms of kernel time a
file, growing run by run, the same for every tool): that measured ext4, not the tools. Give the disk a
minute between two invocations for the same reason (the end of one deletes its ~25,000 files; five
minutes after a run of this bench: two minutes after a run, when the C tool still wrote beside the texts
themselves, hfcprov's rows, writing into new folders, measured up to 0.1 s more kernel time and the C
tool's row did not). Table: min / median / max per row
and each median's ratio to the C tool's (>1: hfcprov faster). The files
are compared once: hfcprov's encode and build give the same bytes, and the C tool's bytes before the MICs
are the same where it reads the text (it writes the same MICs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.startup import timed  # noqa: E402  (wall and CPU of one child process)
from hfcprov.tiers.templates import locate, render_text  # noqa: E402

TIERS = ("res-50x5", "res-100x10", "res-300x20", "res-1000x50")
SECRET = b"bench-shared-secret"


def inventory_rows(n: int, operator: bool) -> list[dict]:
    rows = []
    for i in range(n):
        row = {"mac": f"0010{i:08x}", "tier": TIERS[i % len(TIERS)], "us_rate": f"{1 + i % 20}M",
               "ds_rate": f"{50 + i % 97}M", "max_cpe": str(1 + i % 8)}
        if operator:
            objects = [f"1.3.6.1.2.1.69.1.6.4.1.{k}.{j} Integer {k}" for j in range(1, 7) for k in (3, 4, 5)]
            objects.append(f'1.3.6.1.2.1.1.6.0 String "node-{i // 32:03d}/tap-{i % 32:02d}"')
            objects.append("1.3.6.1.2.1.69.1.3.8.0 Integer 1")
            row["snmp_objects"] = "|".join(objects)
        rows.append(row)
    return rows


def write_inputs(work: Path, rows: list[dict]) -> tuple[Path, list[Path]]:
    """The inventory CSV and each row's rendered text (one folder), as the C tool and config encode read them."""
    import csv

    inv = work / "modems.csv"
    with open(inv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    texts = work / "texts"
    texts.mkdir()
    paths = []
    for row in rows:
        path = texts / f"{row['mac']}.cfg"
        path.write_text(render_text(locate(row["tier"]), row))
        paths.append(path)
    return inv, paths


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modems", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--set", choices=("tiers", "operator"), default="tiers", dest="file_set")
    ap.add_argument("--hfcprov", default=str(Path(sys.executable).with_name("hfcprov")),
                    help="the hfcprov command (default: beside this python)")
    ap.add_argument("--baseline", metavar="HFCPROV",
                    help="another hfcprov command (another checkout's .venv/bin/hfcprov): its build as one more row,"
                         " interleaved with the others (before/after figures from the same run)")
    ap.add_argument("--c-tool-mibs", default="own", choices=("own", "none"),
                    help="own: the C tool loads the MIBs of its sources (as installed); none: net-snmp's default")
    args = ap.parse_args()
    tool = os.environ.get("HFCPROV_DOCSIS_TOOL")
    work = Path(tempfile.mkdtemp(prefix="hfcprov-bulk-"))
    try:
        inv, texts = write_inputs(work, inventory_rows(args.modems, args.file_set == "operator"))
        (work / "key").write_bytes(SECRET)
        names = [p.name for p in texts]
        hf = [args.hfcprov] if Path(args.hfcprov).exists() else [sys.executable, "-m", "hfcprov"]
        rows = {}
        if tool:
            mibs = Path(tool).resolve().parent.parent / "mibs"
            path = ":".join(str(p) for p in (mibs, mibs / "ietf", mibs / "iana") if p.is_dir())
            m = ["-M", path] if path and args.c_tool_mibs == "own" else []
            # it writes each file beside its input: each run gets a fresh folder of links to the texts, as
            # hfcprov's rows get a fresh output folder (fresh folders alike, see the module's doc)
            rows["C docsis -m"] = (lambda: _fresh_links(work, texts),
                                   [tool, *m, "-m", *names, str(work / "key"), ".cm"], None)
        rows["hfcprov config encode"] = (lambda: _aside(work, [work / "enc"]), [*hf, "config", "encode", *names,
                                                                                "--secret-file", str(work / "key"),
                                                                                "-o", str(work / "enc")],
                                         work / "texts")
        rows["hfcprov build"] = (lambda: _aside(work, [work / "built"]), [*hf, "build", "-i", str(inv), "-o",
                                                                   str(work / "built"), "--secret-file",
                                                                   str(work / "key"), "--jobs", "1",
                                                                   "--no-progress"], work)
        if args.baseline:
            rows["baseline build"] = (lambda: _aside(work, [work / "base"]), [args.baseline, "build", "-i", str(inv),
                                                                           "-o", str(work / "base"), "--secret-file",
                                                                           str(work / "key"), "--jobs", "1",
                                                                           "--no-progress"], work)
        # start-up: the same two tools on one file (its first row), each row's anchor the C tool's one file
        one = work / "one"
        one.mkdir()
        shutil.copy(texts[0], one / texts[0].name)
        (one / "modems.csv").write_text("".join(inv.read_text().splitlines(keepends=True)[:2]))
        if tool:
            rows["C docsis -m, 1 file"] = (lambda: _aside(work, one.glob("*.cm")),
                                           [tool, *m, "-m", texts[0].name, str(work / "key"), ".cm"], one)
        rows["hfcprov build, 1 row"] = (lambda: _aside(work, [one / "built"]),
                                        [*hf, "build", "-i", "modems.csv", "-o", "built", "--secret-file",
                                         str(work / "key"), "--jobs", "1", "--no-progress"], one)
        wall = {name: [] for name in rows}
        cpu = {name: [] for name in rows}
        for run in range(args.runs + 1):  # the first run warms caches and .pyc files: not counted
            for name, (prepare, cmd, cwd) in rows.items():
                cwd = prepare() or cwd
                w, c = timed(cmd, cwd)
                if run:
                    wall[name].append(w)
                    cpu[name].append(c)
        check_same_files(work, texts, tool is not None)
        size = statistics.median(p.stat().st_size for p in (work / "enc").glob("*.cm"))
        print(f"{args.modems} distinct files ({args.file_set}: median {size:.0f} bytes), {args.runs} runs each,"
              f" interleaved; load {os.getloadavg()[0]:.2f}")
        print(f"{'row':<24}{'cpu min':>9}{'median':>8}{'max':>8}{'x C':>7}   {'wall min':>8}{'median':>8}{'max':>8}"
              f"{'x C':>7}")
        for name in rows:
            anchor = None if not tool else "C docsis -m, 1 file" if name.endswith(("1 file", "1 row")) else "C docsis -m"
            c, w = cpu[name], wall[name]
            rc = f"{statistics.median(cpu[anchor]) / statistics.median(c):>7.2f}" if anchor else f"{'-':>7}"
            rw = f"{statistics.median(wall[anchor]) / statistics.median(w):>7.2f}" if anchor else f"{'-':>7}"
            print(f"{name:<24}{min(c):>9.3f}{statistics.median(c):>8.3f}{max(c):>8.3f}{rc}   {min(w):>8.3f}"
                  f"{statistics.median(w):>8.3f}{max(w):>8.3f}{rw}")
        print("(seconds; x C = the C tool's median / this row's median, same run: > 1 is faster than the C tool)")
        for tool_row, one_row in (("C docsis -m", "C docsis -m, 1 file"), ("hfcprov build", "hfcprov build, 1 row")):
            if one_row in cpu:  # what each file costs once the tool has started
                per = (statistics.median(cpu[tool_row]) - statistics.median(cpu[one_row])) / max(1, args.modems - 1)
                print(f"{tool_row}: start-up {statistics.median(cpu[one_row]):.3f} s CPU, then {per * 1e3:.3f} ms a file")
        if not tool:
            print("(set HFCPROV_DOCSIS_TOOL=/path/to/docsis for the C tool's row)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


_moved = iter(range(1 << 30))


def _fresh_links(work: Path, texts: list[Path]) -> Path:
    """A new folder holding a hard link to each text (no new inode, no copy): the C tool's run writes its
    files into it. The last one made is the one ``check_same_files`` reads."""
    folder = work / "c" / str(next(_moved))
    folder.mkdir(parents=True)
    for text in texts:
        os.link(text, folder / text.name)
    _C_RUNS[:] = [folder]
    return folder


_C_RUNS: list[Path] = []  # the C tool's last run folder


def _aside(work: Path, paths) -> None:
    """Move ``paths`` (a row's previous outputs) into a folder of their own under ``work``, deleted at the end
    with the rest: no file is freed while rows run (see the module's doc)."""
    paths = [p for p in paths if p.exists()]
    if paths:
        graveyard = work / "aside" / str(next(_moved))
        graveyard.mkdir(parents=True)
        for p in paths:
            p.rename(graveyard / p.name)


def check_same_files(work: Path, texts: list[Path], c_tool: bool) -> None:
    """hfcprov's encode and build wrote the same bytes; the C tool's files (when it ran) equal them too."""
    for text in texts:
        ours = (work / "enc" / f"{text.stem}.cm").read_bytes()
        built = (work / "built" / f"{text.stem}.cm").read_bytes()
        if ours != built:
            raise SystemExit(f"{text.name}: config encode and build differ")
        base = work / "base" / f"{text.stem}.cm"
        if base.exists() and base.read_bytes() != built:
            raise SystemExit(f"{text.name}: the baseline's build and this build differ")
        if c_tool:
            theirs = (_C_RUNS[0] / f"{text.stem}.cm").read_bytes()
            if theirs != ours:
                raise SystemExit(f"{text.name}: the C tool's file differs from hfcprov's")


if __name__ == "__main__":
    sys.exit(main())
