"""Atomic file output: a reader never sees a half-written file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: str | os.PathLike, data: bytes | str, mode: int = 0o644, durable: bool = True) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and rename it.

    The rename is atomic on POSIX, so ``path`` holds either the old content or the
    whole new content, never a part. The temporary file is removed on any error.
    ``durable=False`` skips the per-file fsync (a bulk writer that syncs once at the
    end and verifies files by hash afterwards: one fsync per file costs ~5 ms).
    """
    path = Path(path)
    if isinstance(data, str):
        data = data.encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            if durable:
                os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path
