"""Modem inventories: one row per modem (MAC, tier, per-modem overrides), from CSV, YAML or JSON.

Every row becomes a plain dict of template variables. ``mac`` is normalised to
12 lowercase hex digits (``001122aabbcc``), the way CM config files are usually
named; empty CSV cells are dropped so the template's default applies. A bad row
is reported with its line (CSV) or entry number (YAML/JSON) and never silently
skipped: ``read_rows`` + ``check_row`` let the bulk build report it and go on,
``load_inventory`` stops at the first one.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from hfcprov import macaddr
from hfcprov.errors import HfcprovError
from hfcprov.fileio import read_user_text

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_USABLE: set = set()  # column names found usable


class InventoryError(HfcprovError, ValueError):
    """A bad inventory file or row; the message names the file and row."""


@dataclass(frozen=True)
class InventoryRow:
    """One modem's row: its cells by column, and where it is in the inventory."""

    where: str  # "modems.csv line 4" / "modems.yaml entry 3": what a user needs to find the row
    fields: dict
    problem: str | None = None  # found while reading (e.g. more cells than columns); reported by check_row


@dataclass(frozen=True)
class Inventory:
    """An inventory as read: its rows, and the columns it has (a CSV's header; for YAML/JSON every key
    an entry or the ``defaults:`` uses), so a misspelt column is found once, not once per row."""

    path: Path
    columns: tuple[str, ...]
    rows: list[InventoryRow]

    def require(self, *names: str, why: str) -> None:
        """``InventoryError`` in one line unless one of ``names`` is a column: the column wanted, the
        columns found and the one that looks like a misspelling of it (``teir`` for ``tier``)."""
        if any(n in self.columns for n in names) or not self.rows:
            return
        wanted = " or ".join(repr(n) for n in names)
        raise InventoryError(f"{self.path}: no {wanted} column {why} (columns found: "
                             f"{', '.join(self.columns) or 'none'}){misspelt(names, self.columns)}")

    def checked(self) -> list[dict]:
        """Every row as template variables, each with at least ``mac``; the first bad row raises."""
        rows = []
        seen: dict[str, str] = {}
        for raw in self.rows:
            row = check_row(raw)
            if row["mac"] in seen:
                raise InventoryError(f"{raw.where}: mac {row['mac']} already on {seen[row['mac']]}")
            seen[row["mac"]] = raw.where
            rows.append(row)
        return rows


def misspelt(wanted, columns) -> str:
    """``"; is 'teir' meant to be 'tier'?"`` when a column found looks like a misspelling of one wanted."""
    from hfcprov.suggest import close_names

    for name in wanted:
        for column in close_names(name, columns, n=1):
            return f"; is {column!r} meant to be {name!r}?"
    return ""


def read_inventory(path: str | Path) -> Inventory:
    """An inventory's rows (each with where it came from) and columns; the format is chosen by content."""
    path = Path(path)
    text = read_user_text(path, InventoryError, "inventory", encoding="utf-8-sig")
    if _looks_like_csv(path, text):
        header, rows = _csv_rows(path, text)
    else:
        rows = _structured_rows(path, text)
        header = list(dict.fromkeys(k for r in rows for k in r.fields))
    return Inventory(path, tuple(str(h) for h in header), rows)


def read_rows(path: str | Path) -> list[InventoryRow]:
    """The raw rows of an inventory, each with where it came from; the format is chosen by content."""
    return read_inventory(path).rows


def check_row(row: InventoryRow) -> dict:
    """Template variables of one row, or InventoryError naming the row."""
    fields = row.fields
    if row.problem:
        raise InventoryError(f"{row.where}: {row.problem}")
    if isinstance(fields.get("mac"), (int, float)):
        # YAML 1.1 reads 00:11:22:33:44:55 as a base-60 number and 001122334455 as octal
        raise InventoryError(f"{row.where}: mac must be quoted in YAML ('00:11:22:33:44:55'), it was read as a number")
    if "mac" not in fields or fields["mac"] in (None, ""):
        raise InventoryError(f"{row.where}: no mac")
    try:
        mac = macaddr.normalize(fields["mac"])
    except ValueError as err:
        raise InventoryError(f"{row.where}: {err}") from None
    for key in fields:
        if key not in _USABLE:  # every row of an inventory has the same few columns: each checked once
            if not isinstance(key, str) or not _IDENT.match(key):
                raise InventoryError(f"{row.where}: column {key!r} is not a usable variable name (letters, digits, _)")
            if len(_USABLE) >= 4096:
                _USABLE.clear()
            _USABLE.add(key)
    out = dict(fields)
    out["mac"] = mac
    return out


def load_inventory(path: str | Path) -> list[dict]:
    """Every row of a CSV or YAML/JSON inventory as a dict with at least ``mac`` (12 hex digits)."""
    return read_inventory(path).checked()


def _looks_like_csv(path: Path, text: str) -> bool:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return True
    if suffix in (".yaml", ".yml", ".json"):
        return False
    first = next((line for line in text.splitlines() if line.strip()), "")
    return "," in first and not first.lstrip().startswith(("-", "{", "[", "#")) and ":" not in first.split(",")[0]


def _csv_rows(path: Path, text: str) -> tuple[list[str], list[InventoryRow]]:
    # Comment lines (#...) are allowed but still count for line numbers.
    if "#" in text:
        text = "".join(line if not line.lstrip().startswith("#") else "\n" for line in text.splitlines(keepends=True))
    reader = csv.reader(io.StringIO(text))
    name = path.name
    header = None
    rows = []
    for record in reader:
        lineno = reader.line_num
        if not any(cell.strip() for cell in record):
            continue
        if header is None:
            header = [cell.strip() for cell in record]
            if "mac" not in header:
                raise InventoryError(f"{path} line {lineno}: header has no 'mac' column (columns found: "
                                     f"{', '.join(header)}){misspelt(['mac'], header)}")
            dupes = {h for h in header if header.count(h) > 1}
            if dupes:
                raise InventoryError(f"{path} line {lineno}: column {sorted(dupes)[0]!r} appears twice")
            continue
        where = f"{name} line {lineno}"
        if len(record) > len(header):
            rows.append(InventoryRow(where, {}, f"{len(record)} cells but the header has {len(header)} columns"))
            continue
        fields = {h: cell for h, cell in zip(header, map(str.strip, record)) if cell}
        rows.append(InventoryRow(where, fields))
    if header is None:
        raise InventoryError(f"{path}: empty inventory")
    return header, rows


def _structured_rows(path: Path, text: str) -> list[InventoryRow]:
    import yaml  # only for a YAML or JSON inventory: ~30 ms of a CSV build's start

    try:
        data = yaml.safe_load(text)  # YAML is a superset of JSON
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InventoryError(f"{path}{where}: not valid YAML/JSON: {problem}") from None
    if isinstance(data, dict) and isinstance(data.get("modems"), list):
        defaults = {k: v for k, v in data.items() if k != "modems"}
        entries = data["modems"]
    elif isinstance(data, list):
        defaults, entries = {}, data
    else:
        raise InventoryError(f"{path}: expected a list of modems or a mapping with 'modems:'")
    rows = []
    for i, entry in enumerate(entries, 1):
        where = f"{path.name} entry {i}"
        if not isinstance(entry, dict):
            rows.append(InventoryRow(where, {}, f"expected a mapping of fields, got {type(entry).__name__}"))
            continue
        # an optional top-level `defaults:` mapping applies to every modem; the entry overrides it
        base = defaults.get("defaults") if isinstance(defaults.get("defaults"), dict) else {}
        fields = {**base, **entry}
        rows.append(InventoryRow(where, {k: v for k, v in fields.items() if v is not None}))
    return rows
