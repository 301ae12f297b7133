"""Map a requested TFTP file name to a file inside the served root, or refuse.

Modems ask for names like ``cm/gold.cm`` or ``/tftpboot/001122334455.cm``. A name
is taken relative to the root; a leading ``/`` is stripped only when the rest is
the root itself (some CMTS DHCP setups hand out the absolute path). Anything that
would leave the root (``..``, an absolute path elsewhere, a symlink pointing out)
is an access violation, decided on the fully resolved path so that a symlink
inside the root cannot escape it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hfcprov.errors import HfcprovError


class AccessViolation(HfcprovError):
    """The requested name resolves outside the served root."""


def resolve_in_root(root: Path, filename: str) -> Path:
    """The real path of ``filename`` inside ``root`` (which must be already resolved).

    Raises ``AccessViolation`` for names that leave the root. The file need not exist.
    """
    if not filename or "\0" in filename:
        raise AccessViolation(f"bad file name {filename!r}")
    name = filename.replace("\\", "/")
    if name.startswith("/"):
        root_prefix = str(root).rstrip("/") + "/"
        if name.startswith(root_prefix):
            name = name[len(root_prefix):]
        else:
            raise AccessViolation(f"absolute path {filename!r} is outside the root")
    if any(part == ".." for part in name.split("/")):
        raise AccessViolation(f"'..' in {filename!r}")
    if name and "/" not in name and name != ".":
        # A name in the root itself (what modems ask for): it can only leave the root through a
        # symlink, which one lstat tells, instead of realpath's lstat of every folder above it.
        candidate = root / name
        try:
            if not stat.S_ISLNK(os.lstat(candidate).st_mode):
                return candidate
        except OSError:
            return candidate  # no such file: it is nowhere but here
    candidate = Path(os.path.realpath(root / name))
    if candidate != root and root not in candidate.parents:
        raise AccessViolation(f"{filename!r} resolves outside the root")
    return candidate
