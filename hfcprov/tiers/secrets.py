"""CMTS shared secrets, one per CMTS: which secret signs (CMTS MIC, TLV 7) which modem's file.

An operator holds one shared secret per CMTS, and a modem's file must carry the MIC of the
CMTS it registers with. The inventory names the CMTS (a column, ``cmts`` by default) and a
map file gives each CMTS's secret file (paths relative to the map; each read as
``hfcprov config encode --secret-file`` reads one)::

    # secrets.yaml
    cmts-east: keys/east.key
    cmts-west: keys/west.key

A row without a CMTS takes the default secret (``--secret-file``), if any; a row naming a CMTS
the map does not have is an error for that row, never a file without a MIC. Secrets are read
once, kept as bytes and never printed: errors name the CMTS, not the secret.
"""

from __future__ import annotations

from pathlib import Path

from hfcprov.errors import HfcprovError
from hfcprov.yamlfile import read_yaml

DEFAULT_COLUMN = "cmts"


class SecretMapError(HfcprovError):
    """A bad secret map, or a row whose CMTS it does not name."""


class SecretMap:
    """CMTS name -> shared secret (bytes), with a default for rows that name none."""

    def __init__(self, secrets: dict[str, bytes] | None = None, default: bytes | None = None,
                 column: str = DEFAULT_COLUMN, source: str = "secret map"):
        self._secrets = dict(secrets or {})
        self.default = default
        self.column = column
        self.source = source

    def __repr__(self):  # never the secrets themselves
        return f"SecretMap({sorted(self._secrets)}, default={'set' if self.default else 'none'}, column={self.column!r})"

    def __bool__(self) -> bool:
        return bool(self._secrets) or self.default is not None

    def with_default(self, default: bytes | None) -> SecretMap:
        """The same map with ``default`` for rows that name no CMTS."""
        return SecretMap(self._secrets, default, self.column, self.source)

    @property
    def names(self) -> list[str]:
        return sorted(self._secrets)

    @classmethod
    def load(cls, path: str | Path | None, default: bytes | None = None, column: str = DEFAULT_COLUMN) -> SecretMap:
        """The map file at ``path`` (None: only ``default``)."""
        if path is None:
            return cls({}, default, column)
        from hfcprov.config import read_secret

        path = Path(path)
        data = read_yaml(path, SecretMapError, "secret map")
        if not isinstance(data, dict) or not data:
            raise SecretMapError(f"{path}: expected a mapping of CMTS name to secret file (cmts-east: east.key)")
        secrets = {}
        for name, file in data.items():
            if not isinstance(file, str) or not file.strip():
                raise SecretMapError(f"{path}: CMTS {name!r}: expected the path of its secret file")
            secrets[str(name)] = read_secret(path.parent / file)
        return cls(secrets, default, column, str(path))

    def cmts_of(self, row: dict) -> str | None:
        """The CMTS a row names (None: the default secret applies; always None without a map)."""
        if not self._secrets:
            return None
        value = row.get(self.column)
        return None if value in (None, "") else str(value)

    def secret_for(self, row: dict) -> bytes | None:
        """The secret that signs this row's file (None: no CMTS MIC)."""
        name = self.cmts_of(row)
        if name is None:
            return self.default
        try:
            return self._secrets[name]
        except KeyError:
            known = ", ".join(self.names) or "none"
            raise SecretMapError(f"{self.column} {name!r} has no secret in {self.source} (known: {known})") from None


__all__ = ["DEFAULT_COLUMN", "SecretMap", "SecretMapError"]
