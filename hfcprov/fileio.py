"""Atomic file output: a reader never sees a half-written file; a user's text file read with one-line errors.

No pathlib here: ``atomic_write`` is on the path of a per-file ``hfcprov config encode``, where
importing pathlib costs ~4 ms of ~30; a target is spelled as ``str(Path(path))`` would spell it.
"""

from __future__ import annotations

import itertools
import os

from hfcprov.errors import HfcprovError, OutputError


def read_user_text(path, error: type[HfcprovError] = HfcprovError, what: str = "file",
                   encoding: str = "utf-8") -> str:
    """The text of a file a user named, or ``error("PATH: cannot read <what>: ...")`` /
    ``error("PATH: not a text file (byte N)")``: one line, never a traceback."""
    try:
        with open(path, encoding=encoding) as f:
            return f.read()
    except OSError as err:
        raise error(f"{path}: cannot read {what}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise error(f"{path}: not a text file (byte {err.start})") from None


def atomic_write(path: str | os.PathLike, data: bytes | str, mode: int = 0o644, durable: bool = True):
    """Write ``data`` to ``path`` through a temporary file in the same folder and rename it.

    The rename is atomic on POSIX, so ``path`` holds either the old content or the
    whole new content, never a part. The temporary file is removed on any error.
    ``durable=False`` skips the per-file fsync (a bulk writer that syncs once at the
    end and verifies files by hash afterwards: one fsync per file costs ~5 ms).
    A failure raises ``OutputError`` naming ``path`` and the cause. Returns ``path`` as given.
    """
    target = posix_path(path)
    if isinstance(data, str):
        data = data.encode()
    try:
        _write(target, data, mode, durable)
    except OSError as err:
        raise OutputError(target, err) from err
    return path


def atomic_write_in(folder: str, name: str, data: bytes, mode: int = 0o644, durable: bool = True) -> str:
    """``atomic_write`` of file ``name`` (a plain name) in ``folder`` (as ``posix_path`` spells it, existing):
    what a bulk writer calls thousands of times, without taking each path apart again. Returns the path."""
    path = folder + name if folder.endswith("/") else f"{folder}/{name}"
    try:
        _write(path, data, mode, durable, folder, name)
    except OSError as err:
        raise OutputError(path, err) from err
    return path


def ensure_folder(path: str | os.PathLike):
    """``path`` as a folder that exists (made with its parents); ``OutputError`` names it if it cannot be."""
    from pathlib import Path

    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise OutputError(path, err) from err
    return path


def check_writable(path: str | os.PathLike):
    """Fail now, naming ``path``, if a file cannot be created in its folder (made if missing):
    before a long run rather than after it. Tries a real file: as root, permission bits say nothing."""
    from pathlib import Path

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _create_temporary(str(path), ".probe")
        os.close(fd)
        os.unlink(tmp)
    except OSError as err:
        raise OutputError(path, err) from err
    return path


def posix_path(path: str | os.PathLike) -> str:
    """``str(pathlib.Path(path))`` on POSIX: no empty or "." parts, no trailing "/", "." for nothing."""
    path = os.fspath(path)
    root = "//" if path[:2] == "//" and path[2:3] != "/" else "/" if path[:1] == "/" else ""
    return root + "/".join(part for part in path.split("/") if part not in ("", ".")) or "."


def _make_folder(folder: str, parents: bool = True) -> None:
    """``Path(folder).mkdir(parents=True, exist_ok=True)`` step for step, so errors name the same path."""
    try:
        os.mkdir(folder)
    except FileNotFoundError:
        parent = os.path.dirname(folder) or "."
        if not parents or parent == folder:
            raise
        _make_folder(parent)
        _make_folder(folder, parents=False)
    except OSError:
        if not os.path.isdir(folder):
            raise


def _write(path: str, data: bytes, mode: int, durable: bool, folder: str | None = None,
           name: str | None = None) -> None:
    try:  # the folder exists in all but the first write of a bulk run: no mkdir attempt per file
        fd, tmp = _create_temporary(path, ".tmp", folder, name)
    except (FileNotFoundError, NotADirectoryError):  # the folder is missing, or a file: as pathlib would say
        _make_folder(os.path.dirname(path) or ".")
        fd, tmp = _create_temporary(path, ".tmp", folder, name)
    try:
        try:  # plain fd calls: a bulk build writes thousands of small files
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


_serial = itertools.count()
_pid = [os.getpid()]  # a temporary name's pid, asked once per process (a bulk build names thousands)
os.register_at_fork(after_in_child=lambda: _pid.__setitem__(0, os.getpid()))


def _create_temporary(path: str, suffix: str, folder: str | None = None, name: str | None = None) -> tuple[int, str]:
    """A new file beside ``path`` (``folder``/``name``, when the caller has them apart) that nothing else can
    have opened (O_EXCL; name from pid and a counter).

    Not tempfile.mkstemp: importing tempfile (shutil, random, bz2, lzma...) is ~7 ms of a ~60 ms
    one-file ``hfcprov config encode``."""
    if folder is None or name is None:
        folder, name = os.path.split(path)
    while True:
        tmp = os.path.join(folder, f".{name}.{_pid[0]}.{next(_serial)}{suffix}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600), tmp
        except FileExistsError:
            continue  # left by a killed process with the same pid


def output_folder(path: str | os.PathLike | None, mkdir: bool = False, creates: int = 0) -> None:
    """Before any work: the folder an output ``path`` goes into must exist (``OutputError`` naming it
    otherwise), unless ``mkdir``, which creates it with its parents. A typo in ``-o /srv/tfpt/x.cm``
    must not grow a new tree. The one rule of every ``-o``/``--out`` a user names (``--mkdir``).

    ``creates``: how many missing folder levels the command makes itself and documents (``build -o
    DIR`` makes DIR, ``campaign run -d out/x.db`` makes out/): the folder above them must exist."""
    if path is None:
        return
    folder = os.path.dirname(posix_path(path)) or "."
    existing, missing = folder, 0
    while not os.path.exists(existing):
        existing, missing = os.path.dirname(existing) or ".", missing + 1
    if not os.path.isdir(existing):
        raise OutputError(path, NotADirectoryError(20, f"{existing} is not a folder"))
    if missing <= creates:
        return
    if not mkdir:
        raise OutputError(path, FileNotFoundError(2, f"folder {folder} does not exist (--mkdir creates it)"))
    try:
        _make_folder(folder)
    except OSError as err:
        raise OutputError(path, err) from err
