"""The codec's one error type: what went wrong, where (byte offset or line) and at which TLV path."""

from __future__ import annotations

from hfcprov.errors import HfcprovError


class ConfigError(HfcprovError, ValueError):
    """A config file or text that cannot be decoded, encoded or parsed.

    ``offset`` is the byte offset of the offending TLV in a binary file, ``line`` the
    line number in a text/YAML/JSON form, ``path`` the TLV path such as ``24.35.2``,
    ``source`` the file name when known. ``str(err)`` is one line naming all of them.
    """

    def __init__(self, message: str, *, offset: int | None = None, line: int | None = None,
                 path: str | None = None, source: str | None = None):
        self.message = message
        self.offset = offset
        self.line = line
        self.path = path
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        where = []
        if self.source:
            where.append(self.source if self.line is None else f"{self.source}:{self.line}")
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.offset is not None:
            where.append(f"byte {self.offset}")
        if self.path:
            where.append(f"TLV {self.path}")
        return f"{', '.join(where)}: {self.message}" if where else self.message

    def at(self, **kw) -> ConfigError:
        """The same error with missing location fields filled in (inner errors know less)."""
        for key, value in kw.items():
            if getattr(self, key) is None and value is not None:
                setattr(self, key, value)
        self.args = (str(self),)
        return self
