"""Reading a YAML file a user wrote: the document, or one line saying which file, which line and what."""

from __future__ import annotations

from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.fileio import read_user_text


def read_yaml(path: str | Path, error: type[HfcprovError] = HfcprovError, what: str = "file"):
    """The YAML document at ``path``; ``error("PATH line N: not valid YAML: ...")`` or
    ``error("PATH: cannot read <what>: ...")`` for a user's mistake."""
    import yaml

    text = read_user_text(path, error, what)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise error(f"{path}{where}: not valid YAML: {getattr(err, 'problem', None) or err}") from None


__all__ = ["read_yaml"]
