"""Per-file CLI cost: one fresh `hfcprov config encode one.txt -o one.cm` process against `python -c pass`.

Provisioning systems call an encoder once per modem (the C `docsis` tool is used that way), so the
cost of one whole process matters, and it is mostly imports. Each command runs --runs times,
interleaved (A B C A B C ...) so a busy machine slows them alike; the table gives min / median / max
wall time and each median as a ratio to `python -c pass` run by the same interpreter in the same
run (the anchor: what any Python CLI pays before its first import).

    .venv/bin/python bench/startup.py                  # >= 20 runs each
    .venv/bin/python bench/startup.py --docsis /tmp/docsis/src/docsis   # the C tool beside it
    .venv/bin/python bench/startup.py --compare /tmp/old/.venv/bin/python   # another checkout, same run (repeatable)
    .venv/bin/python bench/startup.py --python /tmp/wheel-venv/bin/python     # an installed wheel
    .venv/bin/python bench/startup.py --wheel        # also this checkout's wheel, built and installed here

The C tool is optional: build it yourself in a temporary folder and pass its path; its
`docsis -e one.txt key one.cm` is timed the same way (it needs a key file; one is written).
Absolute figures depend on the machine and its load; the ratios are what to compare.

The anchor is `python -c pass` of the interpreter given: its site runs that environment's .pth files
(an editable install's finder imports pathlib, re and urllib: about half of the anchor, which hfcprov
then finds loaded). For an installed wheel, pass its venv's python (`--python /venv/bin/python`), or
give --wheel: the bench builds this checkout's wheel (`pip wheel`, as `pip install .` does), installs
it into a fresh venv in its temporary folder (the dependencies come through a .pth line to this
interpreter's site-packages, which runs no editable finder) and times that venv's rows beside the
first ones, each against its own anchor. The console script pip writes (`hfcprov config encode` row)
imports re before hfcprov does; the text parser needs re anyway, so it agrees with the
`python -m hfcprov` row. The target (issue 18) is an encode at most 3x its own anchor, wall medians.
`python -S -c pass` (no site at all) is shown as the interpreter's floor. Besides wall time, each
run's CPU time (user + sys of the child, from wait4) is given: on a shared machine it moves much
less with the load than wall time.

Children run without PYTHONDONTWRITEBYTECODE, so the warm-up run writes the .pyc files an install
has (pip compiles on install; a checkout writes them on first run); with the variable set, every
run would compile hfcprov's modules from source (~30 ms).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

TEXT = """Main {
  NetworkAccess 1;
  MaxCPE 2;
  UsServiceFlow {
    UsServiceFlowRef 1;
    QosParamSetType 7;
    MaxRateSustained 10000000;
  }
  DsServiceFlow {
    DsServiceFlowRef 2;
    QosParamSetType 7;
    MaxRateSustained 50000000;
  }
}
"""

# the same config in the C docsis tool's own text form
DOCSIS_TEXT = """Main {
  NetworkAccess 1;
  MaxCPE 2;
  UsServiceFlow { UsServiceFlowRef 1; QosParamSetType 7; MaxRateSustained 10000000; }
  DsServiceFlow { DsServiceFlowRef 2; QosParamSetType 7; MaxRateSustained 50000000; }
}
"""


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
REPO = Path(__file__).resolve().parents[1]


def wheel_python(work: Path) -> str:
    """The python of a fresh venv in ``work`` holding this checkout's wheel (and nothing else)."""
    def run(*cmd):
        return subprocess.run(cmd, cwd=work, env=ENV, check=True, capture_output=True, text=True).stdout

    src = work / "wheel-src"  # a copy: building leaves build/ and *.egg-info in the source folder
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv", ".git", "__pycache__", "*.egg-info", "build",
                                                             "dist", ".pytest_cache", ".hypothesis"))
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src), "-w", str(work / "dist"))
    venv = work / "wheel-venv"
    run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    python = str(venv / "bin" / "python")
    run(sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps",
        str(next((work / "dist").glob("hfcprov-*.whl"))))
    site = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "zz_bench_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    where = run(python, "-c", "import hfcprov; print(hfcprov.__file__)")
    if not where.startswith(site):
        raise SystemExit(f"the wheel venv imports hfcprov from {where.strip()}, not from the wheel")
    return python


def encode_command(python: str) -> list[str]:
    """The console script pip wrote beside ``python``, else ``python -m hfcprov``."""
    script = Path(python).with_name("hfcprov")
    return [str(script) if script.exists() else python] + ([] if script.exists() else ["-m", "hfcprov"]) + \
        ["config", "encode", "one.txt", "-o", "one.cm"]


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of ``cmd``; cpu = the child's user + sys time."""
    with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=null, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.read().decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=25, help="runs per command (>= 20)")
    ap.add_argument("--docsis", help="path of a built C docsis tool to time beside it")
    ap.add_argument("--python", default=sys.executable, help="interpreter (default: this one)")
    ap.add_argument("--compare", metavar="PYTHON", action="append", default=[],
                    help="also time the encode of PYTHON's venv (e.g. of an older checkout or wheel: before/after "
                         "in one run); repeatable")
    ap.add_argument("--wheel", action="store_true", help="also time this checkout's wheel in a fresh venv")
    args = ap.parse_args()
    if args.runs < 20:
        ap.error("--runs must be at least 20")
    work = Path(tempfile.mkdtemp(prefix="hfcprov-startup-"))
    try:
        (work / "one.txt").write_text(TEXT)
        pythons = {"": args.python}
        if args.wheel:
            pythons["wheel: "] = wheel_python(work)
        commands = {}
        for label, python in pythons.items():
            commands.update({
                f"{label}python -c pass (anchor)": [python, "-c", "pass"],
                f"{label}python -S -c pass (no site)": [python, "-S", "-c", "pass"],
                f"{label}python -c 'import click'": [python, "-c", "import click"],
                f"{label}hfcprov config encode": encode_command(python),
                f"{label}python -m hfcprov config encode": [python, "-m", "hfcprov", "config", "encode", "one.txt",
                                                            "-o", "one.cm"],
            })
        for i, python in enumerate(args.compare, 1):  # each with its own anchor (a wheel's venv has no editable finder)
            label = f"compared {i}: "
            pythons[label] = python
            commands[f"{label}python -c pass (anchor)"] = [python, "-c", "pass"]
            commands[f"{label}hfcprov config encode"] = encode_command(python)
        if args.docsis:
            (work / "one.docsis.txt").write_text(DOCSIS_TEXT)
            (work / "key").write_text("secret\n")
            commands["C docsis -e"] = [args.docsis, "-e", "one.docsis.txt", "key", "one-c.cm"]
        for cmd in commands.values():  # warm the page cache and .pyc files once
            timed(cmd, work)
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        load = os.getloadavg()[0]
        for _ in range(args.runs):
            for name, cmd in commands.items():
                w, c = timed(cmd, work)
                wall[name].append(w)
                cpu[name].append(c)
        print(f"{args.runs} runs each, interleaved; {os.cpu_count()} CPUs; load {load:.2f} -> "
              f"{os.getloadavg()[0]:.2f}; {args.python}")
        if args.wheel:
            print(f"wheel: {pythons['wheel: ']} (this checkout's wheel in a fresh venv)")
        for i, python in enumerate(args.compare, 1):
            print(f"compared {i}: {python}")
        print(f"{'command':<41} {'wall min':>8} {'median':>7} {'max':>7} {'x anchor':>8}"
              f"  {'cpu min':>7} {'median':>7} {'max':>7} {'x anchor':>8}")
        label_of = {name: next((lb for lb in pythons if lb and name.startswith(lb)), "") for name in commands}
        for name in commands:
            w, c = wall[name], cpu[name]
            anchor = f"{label_of[name]}python -c pass (anchor)"
            print(f"{name:<41} {min(w) * 1e3:>8.1f} {statistics.median(w) * 1e3:>7.1f} {max(w) * 1e3:>7.1f} "
                  f"{statistics.median(w) / statistics.median(wall[anchor]):>8.2f}  {min(c) * 1e3:>7.1f} "
                  f"{statistics.median(c) * 1e3:>7.1f} {max(c) * 1e3:>7.1f} "
                  f"{statistics.median(c) / statistics.median(cpu[anchor]):>8.2f}")
        print("(ms; x anchor = median / median of python -c pass of the same interpreter, same run;"
              " the C tool's: of the first)")
        for label in pythons:
            ratios = [statistics.median(times[f"{label}hfcprov config encode"]) /
                      statistics.median(times[f"{label}python -c pass (anchor)"]) for times in (wall, cpu)]
            print(f"{label or ('first: ' if len(pythons) > 1 else '')}hfcprov config encode / python -c pass, medians: "
                  f"wall {ratios[0]:.2f}, cpu {ratios[1]:.2f} (target <= 3)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
