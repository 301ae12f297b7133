"""A module imported on first use: for imports that only some paths of a command need.

``yaml = lazy("yaml")`` at the top of a module costs nothing; ``yaml.safe_load`` imports
PyYAML then. Per-file CLI calls (one ``hfcprov config encode`` per modem) are mostly
import time, and a text config never needs PyYAML (~10 ms) or json.
"""

from __future__ import annotations

import importlib


class lazy:  # noqa: N801 - used like a module name
    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        self._name = name
        self._module = None

    def __getattr__(self, attr: str):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (loaded)' if self._module is not None else ''}>"
