"""The kernel's view of a modem direction's queues, read with tc as a person would."""

from __future__ import annotations

import json
import re

from hfcprov.emu import netns
from hfcprov.units import parse_rate


def classes(lab, dev: str) -> dict[str, dict]:
    """htb classid -> {"rate": bit/s, "ceil": bit/s, "burst": bytes, "leaf": handle}."""
    out = {}
    for line in netns.run(["tc", "class", "show", "dev", dev], ns=lab.ns("cm")).splitlines():
        f = line.split()
        if f[:2] != ["class", "htb"]:
            continue
        out[f[2]] = {"rate": parse_rate(f[f.index("rate") + 1]), "ceil": parse_rate(f[f.index("ceil") + 1]),
                     "burst": int(f[f.index("burst") + 1].rstrip("b")),
                     "leaf": f[f.index("leaf") + 1] if "leaf" in f else None}
    return out


def qdiscs(lab, dev: str, stats: bool = False) -> list[dict]:
    argv = ["tc", *(["-s"] if stats else []), "-j", "qdisc", "show", "dev", dev]
    return json.loads(netns.run(argv, ns=lab.ns("cm")))


def leaf(lab, dev: str, classid: str, stats: bool = False) -> dict | None:
    return next((q for q in qdiscs(lab, dev, stats) if q.get("parent") == classid), None)


def filters(lab, dev: str) -> list[dict]:
    """u32 filters: [{"prio": int, "flowid": str, "matches": ["00110000/00ff0000 at 8", ...]}]."""
    out, cur = [], None
    for line in netns.run(["tc", "filter", "show", "dev", dev], ns=lab.ns("cm")).splitlines():
        m = re.search(r"pref (\d+) u32 .*flowid (\S+)", line)
        if m:
            cur = {"prio": int(m.group(1)), "flowid": m.group(2), "matches": []}
            out.append(cur)
        elif cur is not None and line.strip().startswith("match "):
            cur["matches"].append(line.strip()[len("match "):])
    return out
