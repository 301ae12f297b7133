"""``python -m hfcprov.probe.worker SPEC_JSON OUT``: one measurement in this process's namespace.

Used where the probe must run inside another network namespace (the emulated
CPE host); errors go to stderr as one line and exit status 1.
"""

from __future__ import annotations

import json
import sys

from hfcprov.errors import HfcprovError
from hfcprov.fileio import atomic_write
from hfcprov.probe.run import ProbeSpec, measure


def main(argv: list[str]) -> int:
    spec = ProbeSpec(**json.loads(argv[0]))
    try:
        result = measure(spec)
    except HfcprovError as err:
        print(f"hfcprov: error: {err}", file=sys.stderr)
        return 1
    atomic_write(argv[1], json.dumps(result.to_dict()) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
