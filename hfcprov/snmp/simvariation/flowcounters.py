"""snmpsim variation module: a per-flow counter served from a JSON file another process rewrites.

snmpsim executes this file (``--variation-modules-dir``) and calls ``variate`` for each record
tagged ``TAG:flowcounters``, whose value names where the number is::

    1.3.6.1.4.1.4491.2.1.21.1.4.1.1.2.1|70:flowcounters|file=/run/.../counters.json,stage=0,lane=0,key=packets

The emulated modem's AQM stage (``hfcprov.emu.aqmstage``, in the delay line process) writes that
file as it counts, so the modem's SNMP answers are what its queue really did. The file is read
again when it changed; a missing file, stage or key reads as 0 (the stage has not counted yet).
Keys ``hist_edges_us``/``hist_counts`` are served as 4-octet words (tag ``4x``). This folder holds
only variation modules (snmpsim loads every ``.py`` in it and stops at one without its handlers), so
it has no ``__init__.py``; setup.cfg ships it as package data.
"""

import json
import os

_files = {}  # path -> (mtime_ns, parsed)


def init(**context):
    pass


def _load(path):
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return {}
    cached = _files.get(path)
    if cached is None or cached[0] != stamp:
        try:
            with open(path) as f:
                cached = (stamp, json.load(f))
        except (OSError, ValueError):
            return cached[1] if cached else {}
        _files[path] = cached
    return cached[1]


def variate(oid, tag, value, **context):
    if not context["nextFlag"] and not context["exactMatch"]:
        return context["origOid"], tag, context["errorStatus"]
    settings = recordContext.get("settings")  # noqa: F821 - snmpsim puts recordContext in this module's globals
    if settings is None:
        settings = dict(item.split("=", 1) for item in value.split(","))
        recordContext["settings"] = settings  # noqa: F821
    try:
        lane = _load(settings["file"])["stages"][int(settings["stage"])][int(settings["lane"])]
        found = lane[settings["key"]]
    except (LookupError, ValueError, TypeError):
        found = [] if settings["key"].startswith("hist_") else 0
    if settings["key"].startswith("hist_"):
        return oid, "4x", "".join(f"{int(x) % 2**32:08x}" for x in found)
    return oid, tag, int(found)


def record(oid, tag, value, **context):
    return oid, tag, value


def shutdown(**context):
    pass
