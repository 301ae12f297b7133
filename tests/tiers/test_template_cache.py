"""Compiled templates and what each reads, kept on disk (``HFCPROV_CACHE_DIR``) between processes: a
second process renders the same text and reads the same names without compiling, a damaged entry is
compiled again, an edited template is never served from the old entry, and a folder others could
write is not used (its code would run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hfcprov.cachedir import private_folder

RENDER = """
import json, sys
from hfcprov.tiers.templates import render_text, template_reads
path = sys.argv[1]
print(json.dumps({"text": render_text(path, {"mac": "001122334455", "rate": "7M"}),
                  "reads": sorted(template_reads(path))}))
"""


def _render(path, cache, script=RENDER):
    env = {**os.environ, "HFCPROV_CACHE_DIR": str(cache)}
    p = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, env=env,
                       timeout=120, check=False)
    assert p.returncode == 0 and not p.stderr, p.stderr
    return json.loads(p.stdout)


@pytest.fixture
def site(tmp_path):
    (tmp_path / "_part.j2").write_text("    MaxRateSustained {{ rate|bps }};\n")
    tier = tmp_path / "tier.j2"
    tier.write_text("Main { UsServiceFlow { UsServiceFlowRef 1;\n{% include '_part.j2' %}\n} }\n")
    return tmp_path, tier


def test_a_second_process_uses_the_cache_and_gets_the_same_answers(site, tmp_path_factory):
    folder, tier = site
    cache = tmp_path_factory.mktemp("cache")
    first = _render(tier, cache)
    assert "MaxRateSustained 7000000;" in first["text"] and first["reads"] == ["rate"]
    kept = sorted(p.name.split(".", 1)[1] for p in (cache / "templates").iterdir())
    assert kept.count("jinja") == 2 and kept.count("parsed.json") == 2  # the tier and its include, each
    assert _render(tier, cache) == first


def test_a_damaged_cache_entry_is_compiled_again(site, tmp_path_factory):
    folder, tier = site
    cache = tmp_path_factory.mktemp("cache")
    first = _render(tier, cache)
    from jinja2.bccache import bc_magic

    for entry in (cache / "templates").iterdir():  # every entry damaged past its header, or cut short
        entry.write_bytes(bc_magic + b"\x80\x05garbage" if entry.suffix == ".jinja" else b'{"refs": 3')
    assert _render(tier, cache) == first


def test_an_edited_template_is_not_served_from_its_old_entry(site, tmp_path_factory):
    folder, tier = site
    cache = tmp_path_factory.mktemp("cache")
    _render(tier, cache)
    (folder / "_part.j2").write_text("    MaxRateSustained {{ rate|bps }};\n    MaxTrafficBurst {{ burst }};\n")
    with pytest.raises(AssertionError, match="_part.j2 line 2: undefined variable: 'burst'"):  # its new text is read
        _render(tier, cache)
    (folder / "_part.j2").write_text("    MaxRateSustained {{ (rate|bps) // 2 }};\n")
    edited = _render(tier, cache)
    assert "MaxRateSustained 3500000;" in edited["text"] and edited["reads"] == ["rate"]


def test_a_cache_folder_others_can_write_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("HFCPROV_CACHE_DIR", str(tmp_path / "c"))
    assert private_folder("templates") == tmp_path / "c" / "templates"
    assert (tmp_path / "c" / "templates").stat().st_mode & 0o777 == 0o700
    os.chmod(tmp_path / "c", 0o777)
    assert private_folder("templates") is None
    os.chmod(tmp_path / "c", 0o700)
    os.chmod(tmp_path / "c" / "templates", 0o775)
    assert private_folder("templates") is None


BUILD_RENDER = """
import json, sys
from hfcprov.tiers.templates import Renderers
print(json.dumps({"text": Renderers()(sys.argv[1])({"mac": "001122334455", "rate": "7M"}),
                  "jinja2": "jinja2" in sys.modules}))
"""


def _build_render(path, cache):
    return _render(path, cache, BUILD_RENDER)


def test_a_builds_fast_path_is_cached_and_a_damaged_entry_written_again(site, tmp_path_factory):
    """A bulk build's second process renders from the cache without importing jinja2; a damaged entry of
    the fast path (``tiers.fastrender``) is written again, with the same text."""
    folder, tier = site
    cache = tmp_path_factory.mktemp("cache")
    first = _build_render(tier, cache)
    assert "MaxRateSustained 7000000;" in first["text"] and first["jinja2"]
    again = _build_render(tier, cache)
    assert again == {**first, "jinja2": False}
    fast = [p for p in (cache / "templates").iterdir() if p.suffix == ".fast"]
    assert len(fast) == 1
    for damage in (b"\xe3garbage", fast[0].read_bytes()[:20]):
        fast[0].write_bytes(damage)
        assert _build_render(tier, cache)["text"] == first["text"]
