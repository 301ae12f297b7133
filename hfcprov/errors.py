"""The one base class for errors a user can cause.

Library code raises a subclass of ``HfcprovError``; the CLI catches it and
prints ``str(err)`` as one line (no traceback). Anything else is a bug and keeps
its traceback.
"""


class HfcprovError(Exception):
    """A user-facing error: the message says what went wrong and where."""


class UnitError(HfcprovError, ValueError):
    """A quantity such as ``5M``, ``64KiB`` or ``40ms`` could not be parsed."""


class OutputError(HfcprovError, OSError):
    """An output file could not be written; the message names it and the cause.

    Also an ``OSError`` (with the cause's errno), so code that handles I/O errors still sees one."""

    def __init__(self, path, cause: OSError):
        where = f" ({cause.filename})" if cause.filename not in (None, str(path)) else ""
        super().__init__(cause.errno, f"{path}: cannot write: {cause.strerror or cause}{where}")
        self.message = self.args[1]
        self.filename = str(path)

    def __str__(self) -> str:
        return self.message


class OptionError(HfcprovError, ValueError):
    """A bad option value or combination that hfcprov itself found (not click): the CLI exits with the
    usage status, 2, as it does for click's own ``--format xml``."""
