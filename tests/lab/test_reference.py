"""docs/campaign-reference.md is what the spec declares, and every example in it parses."""

from __future__ import annotations

import math

from hfcprov.lab.reference import reference_markdown
from hfcprov.lab.schema import AXES
from hfcprov.lab.spec import parse_campaign
from tests.support import REPO


def test_the_reference_is_generated_from_the_declaration():
    on_disk = (REPO / "docs" / "campaign-reference.md").read_text()
    assert on_disk == reference_markdown(), (
        "docs/campaign-reference.md drifted: run python -m hfcprov.lab.reference > docs/campaign-reference.md")


def test_every_grid_example_in_the_reference_parses():
    grid = "\n".join(f"  {name}: {a.example}" for name, a in AXES.items())
    camp = parse_campaign(f"grid:\n{grid}\ntraffic: {{duration: 30s, warmup: 5s, probe_interval: 100ms}}\n"
                          "repetitions: 3\nseed: 7\njobs: 2\ndescription: x\n")
    per_axis = [len(v) for v in camp.grid.values()]
    assert per_axis[:4] == [4, 1, 2, 3]  # the examples' lists: rates, downstream, RTTs, buffers
    assert len(camp.points()) == math.prod(per_axis) * 3


def test_every_documented_key_is_one_the_parser_accepts():
    text = reference_markdown()
    sections = {"": text.split("## Top level")[1].split("## `grid`")[0],
                "traffic": text.split("## `traffic`")[1].split("## `target`")[0],
                "target": text.split("## `target`")[1].split("## What each run")[0]}
    for section, body in sections.items():
        keys = [line.split("`")[1].split(".")[-1] for line in body.splitlines() if line.startswith("| `")]
        assert keys
        for key in keys:
            if key in ("target", "grid", "traffic"):
                continue
            doc = f"{key}: null" if not section else f"{section}: {{kind: sim, {key}: null}}" \
                if section == "target" else f"{section}: {{{key}: null}}"
            try:
                parse_campaign(f"grid: {{upstream_rate: 1M, buffer: 16KiB}}\n{doc}\n")
            except Exception as err:  # noqa: BLE001 - only an unknown-key error is wrong here
                assert "unknown key" not in str(err), (section, key)
        # and nothing the parser takes is missing from the reference
        try:
            parse_campaign("grid: {upstream_rate: 1M, buffer: 16KiB}\n" +
                           (f"{section}: {{bogus_key: 1}}\n" if section else "bogus_key: 1\n"))
        except Exception as err:  # noqa: BLE001
            known = str(err).split("known: ")[1].rstrip(")").split(", ")
            assert sorted(known) == sorted(keys), section
