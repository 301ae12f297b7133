"""Where hfcprov keeps what it can compute again: ``$HFCPROV_CACHE_DIR``, else ``$XDG_CACHE_HOME/hfcprov``,
else ``~/.cache/hfcprov``. Everything in it is keyed by the content it was made from, so a stale entry is
never read, and losing the folder costs only time; a folder that cannot be written (or is not this
user's alone) means reading and compiling again each run.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

ENV = "HFCPROV_CACHE_DIR"


def cache_root() -> Path:
    """The cache folder, whether or not it exists yet."""
    given = os.environ.get(ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hfcprov"


def private_folder(name: str) -> Path | None:
    """``cache_root()/name``, created mode 0700, for a cache whose content is run (compiled code): None when
    the folder cannot be made, or it (or the cache root) is not this user's alone: as ssh treats a key
    file others could have written, code they could have written is not loaded."""
    root = cache_root()
    folder = root / name
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        for path in (root, folder):
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
                return None
    except OSError:
        return None
    return folder
