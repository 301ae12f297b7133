"""Where the files hfcprov ships beside its code live: tier templates and MIB definitions.

The sources users edit stay at the top of the repository (``templates/``, ``mibs/``) and the
docs point there. A wheel carries copies inside the package (``hfcprov/templates``,
``hfcprov/mibs``): ``setup.py`` maps those two package folders onto the top-level ones
(``package_dir``), so a built wheel holds them and nothing is kept twice in the repository.
An installed package finds its own copy; a source checkout or an editable install (where
``hfcprov/`` is the checkout's folder) finds the top-level one.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def shipped_dir(name: str) -> Path:
    """The folder of shipped ``name`` files (``"templates"`` or ``"mibs"``): the package's own
    copy when installed from a wheel, else the checkout's top-level folder."""
    inside = _PACKAGE / name
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / name
