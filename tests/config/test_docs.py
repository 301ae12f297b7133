"""docs/config-formats.md stays in step with the dictionary, and its examples parse."""

import re

from hfcprov.config import parse_text, parse_yaml
from hfcprov.config.docgen import DOC, rendered

from .. import support


def test_tlv_listing_in_docs_is_generated_from_the_table():
    page = DOC.read_text()
    assert rendered(page) == page, "run: python -m hfcprov.config.docgen"
    assert re.search(r"^24\.35\.2 +TargetBuffer +uint32 +fixed:4", page, re.MULTILINE)


def test_docs_examples_parse():
    page = (support.REPO / "docs" / "config-formats.md").read_text()
    blocks = re.findall(r"```(\w*)\n(.*?)```", page, re.DOTALL)
    text = next(b for lang, b in blocks if b.startswith("Main\n{"))
    yaml_block = next(b for lang, b in blocks if lang == "yaml")
    tree = parse_text(text)
    assert tree.find("24.35.2")[0].value == 16384
    assert parse_yaml(yaml_block).find("24.35.2")[0].value == 16384
