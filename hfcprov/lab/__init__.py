"""Lab campaigns: a YAML spec, a resumable runner, an SQLite store and a report.

- ``spec``: ``load_campaign(path) -> Campaign``; the grid expands to ``Point`` objects.
- ``store``: ``Store(path)``, one SQLite file (WAL) per campaign; points are
  committed together with their results, so a resumed run never loses or repeats one.
- ``runner``: ``run_campaign(campaign, store, ...)``; backends ``sim``, ``emu``, ``modem``.
- ``report``: ``write_report(store, "report.html")``: HTML with embedded plots, PNGs, CSV.

Units inside are plain numbers (bits/s, bytes, seconds), parsed once in ``spec``.
"""

from hfcprov.lab.spec import (
    Campaign,
    CampaignError,
    Point,
    load_campaign,
    parse_campaign,
)

__all__ = ["Campaign", "CampaignError", "Point", "load_campaign", "parse_campaign"]
