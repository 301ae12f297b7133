""""Did you mean ...?": the one spelling-suggestion rule for names a user types.

TLV names, campaign and scenario keys, inventory columns and options all go
through ``did_you_mean`` so a typo (``MaxRateSustaind``, ``teir``) gets the same
kind of hint everywhere.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_names(word: str, known: Iterable[str], n: int = 3, cutoff: float = 0.75) -> list[str]:
    """Up to ``n`` known names that ``word`` is probably a misspelling of (case-insensitive), best first."""
    by_lower: dict[str, str] = {}
    for name in known:
        by_lower.setdefault(str(name).lower(), str(name))
    found = difflib.get_close_matches(str(word).lower(), list(by_lower), n=n, cutoff=cutoff)
    return [by_lower[f] for f in found]


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """``"; did you mean X?"`` (or ``"X or Y"``) to append to an error message, or ``""`` when nothing is close."""
    names = close_names(word, known)
    if not names:
        return ""
    return "; did you mean " + " or ".join(names) + "?"


__all__ = ["close_names", "did_you_mean"]
