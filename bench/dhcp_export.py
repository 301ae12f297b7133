"""Kea reservations for a whole node: `dhcp export` against Kea's own reading of the same file.

    python bench/dhcp_export.py [--modems 1000,10000] [--runs 3]

For each inventory size (generated: one fixed IPv4 address per modem, one subnet), every row is
the min/median/max CPU seconds of ``--runs`` runs, in this process for hfcprov and of the child
for Kea:

- plan + kea_config: reading the inventory and placing each reservation (library, no file);
- into a base of N: the same, placed into a base config that already holds this export's N
  reservations and N of an operator's own (the re-export an operator runs after each change);
- kea-dhcp4 -t (anchor): Kea 2.2 parsing and checking the file the export wrote, which every
  export also pays when Kea is installed.

The ratio column is each row's median over the anchor's median, in the same run. Without Kea
installed the anchor row is skipped (and so are the ratios).
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hfcprov.boot.dhcp import BootServers, kea_config, plan_reservations  # noqa: E402
from hfcprov.boot.kea import find_kea  # noqa: E402

SERVERS = BootServers(tftp=("10.0.0.1",), log=("10.0.0.2",))


def inventory(folder: Path, n: int) -> Path:
    path = folder / f"modems-{n}.csv"
    first = ipaddress.ip_address("10.64.0.10")
    rows = ["mac,tier,ip"] + [f"00:10:95:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x},res-50x5,{first + i}"
                              for i in range(n)]
    path.write_text("\n".join(rows) + "\n")
    return path


def cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def child_cpu(cmd: list[str], env: dict) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, check=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modems", default="1000,10000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    kea = find_kea(4)
    print(f"{'modems':>7}  {'row':<28} {'min':>7} {'median':>7} {'max':>7}  {'x anchor':>8}")
    with tempfile.TemporaryDirectory(prefix="hfcprov-bench-dhcp-") as tmp:
        folder = Path(tmp)
        env = dict(os.environ, KEA_LOCKFILE_DIR=tmp, KEA_PIDFILE_DIR=tmp)
        for n in map(int, args.modems.split(",")):
            inv = inventory(folder, n)
            plan = plan_reservations(inv, 4)
            config, _ = kea_config(plan, 4, SERVERS, subnets=["10.64.0.0/12"])
            own = [{"hw-address": f"02:00:{i >> 24 & 255:02x}:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}",
                    "ip-address": str(ipaddress.ip_address("10.72.0.10") + i)} for i in range(n)]
            base = json.loads(json.dumps(config))
            base["Dhcp4"]["subnet4"][0]["reservations"] += own
            out = folder / f"kea4-{n}.json"
            out.write_text(json.dumps(config))
            rows = {
                "plan + kea_config": [cpu(lambda: kea_config(plan_reservations(inv, 4), 4, SERVERS,
                                                             subnets=["10.64.0.0/12"])) for _ in range(args.runs)],
                f"into a base of {n}+{n}": [cpu(lambda: kea_config(plan_reservations(inv, 4), 4, SERVERS, base=base))
                                           for _ in range(args.runs)],
            }
            anchor = None
            if kea:
                rows["kea-dhcp4 -t (anchor)"] = [child_cpu([kea, "-t", str(out)], env) for _ in range(args.runs)]
                anchor = statistics.median(rows["kea-dhcp4 -t (anchor)"])
            for name, values in rows.items():
                med = statistics.median(values)
                ratio = f"{med / anchor:8.2f}" if anchor else f"{'-':>8}"
                print(f"{n:>7}  {name:<28} {min(values):7.3f} {med:7.3f} {max(values):7.3f}  {ratio}")


if __name__ == "__main__":
    main()
