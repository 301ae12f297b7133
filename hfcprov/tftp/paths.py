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
    return Path(locate_in_root(root, filename)[0])


def locate_in_root(root: Path, filename: str) -> tuple[str, os.stat_result | None]:
    """``resolve_in_root`` as a string, with the file's status (None: no such file), in as few
    system calls as the name allows: a name in the root itself (what modems ask for) costs one
    ``lstat``, which both rules out a symlink out of the root and is the file's status."""
    if not filename or "\0" in filename:
        raise AccessViolation(f"bad file name {filename!r}")
    name = filename.replace("\\", "/")
    root_text = str(root)
    if name.startswith("/"):
        root_prefix = root_text.rstrip("/") + "/"
        if name.startswith(root_prefix):
            name = name[len(root_prefix):]
        else:
            raise AccessViolation(f"absolute path {filename!r} is outside the root")
    if ".." in name.split("/"):
        raise AccessViolation(f"'..' in {filename!r}")
    if name and "/" not in name and name != ".":
        # It can only leave the root through a symlink, which one lstat tells, instead of
        # realpath's lstat of every folder above it.
        candidate = os.path.join(root_text, name)
        try:
            st = os.lstat(candidate)
        except OSError:
            return candidate, None  # no such file: it is nowhere but here
        if not stat.S_ISLNK(st.st_mode):
            return candidate, st
    candidate = os.path.realpath(os.path.join(root_text, name))
    if candidate != root_text and not candidate.startswith(root_text.rstrip("/") + "/"):
        raise AccessViolation(f"{filename!r} resolves outside the root")
    try:
        return candidate, os.stat(candidate)
    except OSError:
        return candidate, None
