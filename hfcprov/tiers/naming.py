"""The name of a modem's config file: one rule for the bulk build, the TFTP server and DHCP.

``hfcprov build --pattern`` writes each file under this name, the dynamic TFTP provider's
``filename:`` finds the modem by it, and ``hfcprov dhcp export --pattern`` hands it out as the
DHCP boot file name (DHCPv4 ``file``/option 67, DHCPv6 vendor option 17 sub-option 33). The
same pattern in all three gives the same name, so the modem asks for the file that exists.
"""

from __future__ import annotations

from hfcprov.errors import HfcprovError

DEFAULT_PATTERN = "{mac}.cm"  # mac: 12 lowercase hex digits (hfcprov.macaddr.normalize)


class FileNameError(HfcprovError):
    """A pattern that names a missing column, or gives a name outside the TFTP root."""


def config_file_name(pattern: str, row: dict, flat: bool = False) -> str:
    """``pattern`` filled from an inventory row (``"{mac}.cm"`` -> ``"001095000001.cm"``).

    ``flat``: the name must be a plain file name (the bulk build writes one folder)."""
    try:
        name = pattern.format_map(row)
    except KeyError as err:
        raise FileNameError(f"file pattern {pattern!r} names {{{err.args[0]}}}, which this row does not have") from None
    except (ValueError, IndexError, AttributeError) as err:
        raise FileNameError(f"bad file pattern {pattern!r}: {err}") from None
    if flat and (not name or "/" in name or name.startswith(".")):
        raise FileNameError(f"file name {name!r} from pattern {pattern!r} is not a plain file name in the output folder")
    if not name or name.startswith("/") or "\0" in name or ".." in name.split("/"):
        raise FileNameError(f"file name {name!r} from pattern {pattern!r} is not a name inside the TFTP root")
    return name


__all__ = ["DEFAULT_PATTERN", "FileNameError", "config_file_name"]
