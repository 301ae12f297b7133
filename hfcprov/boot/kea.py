"""Talking to Kea, the ISC DHCP server: its config files, its ``-t`` check and its control socket.

- ``read_config(path)``: a Kea config file as Kea reads it (JSON with ``#``, ``//`` and ``/* */``
  comments); a mistake is one line with file, line and column.
- ``check_config(config, family)``: ``kea-dhcp4 -t`` / ``kea-dhcp6 -t`` on it; Kea's own reason
  when it refuses.
- ``KeaControl(socket_path)``: commands over the server's UNIX control socket
  (``"control-socket": {"socket-type": "unix", "socket-name": ...}``): ``config-get``,
  ``config-test``, ``config-set`` (a new config without a restart), and with the
  ``lease_cmds`` hook ``lease4-get``/``lease6-get``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.fileio import read_user_text

BINARIES = {4: "kea-dhcp4", 6: "kea-dhcp6"}
SERVICE = {4: "Dhcp4", 6: "Dhcp6"}
RESULT_EMPTY = 3  # Kea's "command succeeded, nothing found"


class KeaError(HfcprovError):
    """Kea refused a config or a command, or cannot be reached; the message carries Kea's reason."""


def find_kea(family: int) -> str | None:
    """Path of ``kea-dhcp4``/``kea-dhcp6`` (PATH, then /usr/sbin where Debian puts it), or None."""
    name = BINARIES[family]
    return shutil.which(name) or next((str(p) for p in (Path("/usr/sbin") / name, Path("/usr/local/sbin") / name)
                                       if p.is_file() and os.access(p, os.X_OK)), None)


def kea_version(family: int = 4, binary: str | None = None) -> tuple[int, ...] | None:
    """The installed server's version (``(2, 2, 0)``), or None when it is not installed."""
    binary = binary or find_kea(family)
    if not binary:
        return None
    try:
        out = subprocess.run([binary, "-v"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return tuple(map(int, m.groups())) if m else None


def strip_comments(text: str) -> str:
    """Kea's JSON with its comments (``#``, ``//``, ``/* */`` outside strings) blanked out.

    Comments become spaces (newlines kept), so a JSON error still points at the right line."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "#" or text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def read_config(path: str | Path) -> dict:
    """A Kea config file as a dict (comments allowed; ``<?include?>`` is refused with a clear error)."""
    path = Path(path)
    return parse_config(read_user_text(path, KeaError, "Kea config"), str(path))


def parse_config(text: str, source: str = "<config>") -> dict:
    clean = strip_comments(text)
    include = re.search(r"<\?include", clean)
    if include:
        line = clean.count("\n", 0, include.start()) + 1
        raise KeaError(f"{source} line {line}: <?include?> is not followed here: give the flattened config "
                       f"(or the running server's, through its control socket)")
    try:
        data = json.loads(clean)
    except json.JSONDecodeError as err:
        raise KeaError(f"{source} line {err.lineno} column {err.colno}: not valid JSON: {err.msg}") from None
    if not isinstance(data, dict):
        raise KeaError(f"{source}: a Kea config is a JSON object with Dhcp4 or Dhcp6")
    return data


def check_config(config: dict | str | Path, family: int, binary: str | None = None) -> None:
    """Run ``kea-dhcp4 -t`` (``kea-dhcp6 -t``) on ``config`` (a dict or a file); ``KeaError`` with
    Kea's reason if it refuses. Raises ``KeaError`` too when Kea is not installed."""
    binary = binary or find_kea(family)
    if not binary:
        raise KeaError(f"{BINARIES[family]} is not installed (Debian: kea-dhcp{family}-server): cannot check the config")
    tmp = None
    if isinstance(config, dict):
        fd, tmp = tempfile.mkstemp(prefix="hfcprov-kea-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(config, f)
        path = tmp
    else:
        path = str(config)
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="hfcprov-kea-") as scratch:  # -t still wants its lock/pid folders
        env.setdefault("KEA_LOCKFILE_DIR", scratch)
        env.setdefault("KEA_PIDFILE_DIR", scratch)
        try:
            result = subprocess.run([binary, "-t", path], capture_output=True, text=True, timeout=60, env=env)
        except subprocess.TimeoutExpired:
            raise KeaError(f"{binary} -t did not finish in 60 s") from None
        finally:
            if tmp:
                os.unlink(tmp)
    if result.returncode != 0:
        raise KeaError(f"{BINARIES[family]} -t refused the config: {_kea_reason(result.stdout + result.stderr)}")


def _kea_reason(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for line in reversed(lines):
        if "rror" in line or "ERROR" in line or "FATAL" in line:
            return re.sub(r"^\S+ \S+ +(ERROR|FATAL) +\[[^]]*\] +", "", line)
    return lines[-1] if lines else "no reason given"


class KeaControl:
    """Commands over a Kea server's UNIX control socket, one connection each (Kea closes it after
    answering). ``command`` returns the answer's ``arguments`` (``{}`` when Kea found nothing) or
    raises ``KeaError`` with Kea's text."""

    def __init__(self, path: str | Path, timeout: float = 10.0):
        self.path = str(path)
        self.timeout = timeout

    def __repr__(self):
        return f"KeaControl({self.path!r})"

    def command(self, name: str, arguments: dict | None = None) -> dict:
        answer = self.answer(name, arguments)
        result = answer.get("result")
        if result == RESULT_EMPTY:
            return {}
        if result != 0:
            raise KeaError(f"Kea refused {name}: {answer.get('text', 'no reason given')}")
        return answer.get("arguments") or {}

    def answer(self, name: str, arguments: dict | None = None) -> dict:
        """Kea's whole answer (``result``, ``text``, ``arguments``) to one command."""
        request = {"command": name}
        if arguments is not None:
            request["arguments"] = arguments
        data = json.dumps(request).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(self.timeout)
                s.connect(self.path)
                s.sendall(data)
                chunks = []
                while chunk := s.recv(1 << 16):  # Kea closes the connection after its answer
                    chunks.append(chunk)
        except OSError as err:
            raise KeaError(f"Kea control socket {self.path}: {err.strerror or err}") from None
        try:
            answer = json.loads(b"".join(chunks))
        except ValueError:
            raise KeaError(f"Kea control socket {self.path}: no complete answer to {name}") from None
        if isinstance(answer, list):  # through kea-ctrl-agent: one answer per service
            answer = answer[0]
        if not isinstance(answer, dict):
            raise KeaError(f"Kea control socket {self.path}: unexpected answer to {name}")
        return answer

    def version(self) -> tuple[int, ...] | None:
        """The running server's version (``version-get``)."""
        m = re.search(r"(\d+)\.(\d+)\.(\d+)", str(self.answer("version-get").get("text", "")))
        return tuple(map(int, m.groups())) if m else None

    def config_get(self) -> dict:
        """The running configuration (``{"Dhcp4": {...}}``)."""
        config = self.command("config-get")
        config.pop("hash", None)  # Kea 2.4+ adds the digest of the config beside it
        return config

    def config_test(self, config: dict) -> None:
        self.command("config-test", config)

    def config_set(self, config: dict) -> None:
        """Replace the running configuration: reservations apply at once, no restart, no lease lost."""
        self.command("config-set", config)

    def lease(self, family: int, address: str) -> dict | None:
        """The lease of ``address`` (``lease4-get``/``lease6-get``; Kea needs the lease_cmds hook), or None."""
        args = {"ip-address": address}
        if family == 6:
            args["type"] = "IA_NA"
        return self.command(f"lease{family}-get", args) or None


__all__ = ["KeaControl", "KeaError", "check_config", "find_kea", "kea_version", "parse_config", "read_config",
           "strip_comments"]
