"""Files that hold a secret (a CMTS shared secret, an SNMP community, SNMPv3 keys): who may read them.

As ssh does with a private key, a secret file that others can read, or that anyone but its owner
can write, is refused: its secret is no longer one (or someone else can change it). A file only its
group can read is accepted with a warning. ``check`` says which; callers choose to raise or warn.
"""

from __future__ import annotations

import os
import stat

from hfcprov.errors import HfcprovError


class SecretFileError(HfcprovError):
    """A secret file is readable by others or writable by anyone but its owner."""


def problem(path, what: str = "secret file") -> tuple[str, str] | None:
    """("refuse" | "warn", one line) when ``path``'s permissions are too open; None when fine
    (or when the file cannot be stat'ed: reading it then gives the error)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    fix = f"(chmod 600 {path})"
    if mode & (stat.S_IROTH | stat.S_IWOTH | stat.S_IWGRP):
        who = "others" if mode & (stat.S_IROTH | stat.S_IWOTH) else "its group"
        return "refuse", f"{path}: {what} permissions {mode:04o} are too open: {who} can read or change it {fix}"
    if mode & stat.S_IRGRP:
        return "warn", f"{path}: {what} is readable by its group (permissions {mode:04o}) {fix}"
    return None


def check(path, what: str = "secret file", warn=None) -> None:
    """Raise ``SecretFileError`` for a file others can read or anyone but its owner can write;
    a group-readable one goes to ``warn(line)`` when given."""
    found = problem(path, what)
    if found is None:
        return
    level, line = found
    if level == "refuse":
        raise SecretFileError(line)
    if warn is not None:
        warn(line)
