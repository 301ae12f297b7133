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


def _nested(path: str, value):
    """``target.snmp.version`` -> {"target": {"kind": "sim", "snmp": {"version": value}}} (``[]``: a list item)."""
    node = value
    for part in reversed(path.split(".")):
        node = [node] if part.endswith("[]") else node
        node = {part.removesuffix("[]"): node}
    if "target" in node and isinstance(node["target"], dict):
        node["target"].setdefault("kind", "sim")
    return node


def test_every_documented_key_is_one_the_parser_accepts():
    import yaml

    text = reference_markdown()
    keys = [line.split("`")[1] for line in text.split("## What each run")[0].splitlines()
            if line.startswith("| `") and not line.startswith("| `grid.")]
    assert "target.snmp.version" in keys and "target.probe.namespace" in keys and "target.modems[].mac" in keys
    for key in keys:
        if key in ("target", "grid", "traffic"):
            continue
        doc = yaml.safe_dump(_nested(key, "x" if key.endswith("[].mac") else None), default_flow_style=True)
        try:
            parse_campaign(f"grid: {{upstream_rate: 1M, buffer: 16KiB}}\n{doc}\n")
        except Exception as err:  # noqa: BLE001 - only an unknown-key error is wrong here
            assert "unknown key" not in str(err), key
    # and nothing the parser takes is missing from the reference, section by section
    sections = {}
    for key in keys:
        head, _, leaf = key.rpartition(".")
        sections.setdefault(head, set()).add(leaf)
    for section, documented in sections.items():
        bogus = _nested(f"{section}.bogus_key", 1) if section else {"bogus_key": 1}
        try:
            parse_campaign("grid: {upstream_rate: 1M, buffer: 16KiB}\n" + yaml.safe_dump(bogus))
        except Exception as err:  # noqa: BLE001
            known = str(err).split("known: ")[1].rstrip(")").split(", ")
            assert sorted(known) == sorted(documented), section
        else:
            raise AssertionError(f"{section}.bogus_key was accepted")
