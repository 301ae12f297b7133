"""The one base class for errors a user can cause.

Library code raises a subclass of ``HfcprovError``; the CLI catches it and
prints ``str(err)`` as one line (no traceback). Anything else is a bug and keeps
its traceback.
"""


class HfcprovError(Exception):
    """A user-facing error: the message says what went wrong and where."""


class UnitError(HfcprovError, ValueError):
    """A quantity such as ``5M``, ``64KiB`` or ``40ms`` could not be parsed."""
