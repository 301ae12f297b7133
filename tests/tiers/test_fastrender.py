"""The bulk build's plain-Python renderer of a tier template (``tiers.fastrender``) gives jinja2's text or
falls back: on every shipped template, for generated rows (present, missing and odd values of every
name the templates read), the function either declines the row or writes exactly what jinja2 renders;
and a bulk build's ``Renderers`` give jinja2's text or jinja2's error for every row."""

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hfcprov.tiers import fastrender
from hfcprov.tiers.templates import (SHIPPED, SUFFIX, Renderers, TemplateError, _fast_function, render_text,
                                     template_reads)

TIERS = sorted(p for p in SHIPPED.glob("*" + SUFFIX) if not p.name.startswith("_"))
NAMES = sorted(set().union(*(template_reads(p) or () for p in TIERS)) | {"advise_buffer", "range", "us_default"})

_value = st.one_of(
    st.none(),
    st.sampled_from(["5M", "100M", "1G", "20000000", "64K", "1600", "3K", "40ms", "800us", "0", "1", "2", "lld",
                     "docsis-pie", "none", "20ms", "docsis3.0-4ch", "cubic", "tokenbucket", "001122aabbcc",
                     "bad", "-5M", "", " ", "1.3.6.1.2.1.1.6.0 String \"x\"|1.3.6.1.2.1.69.1.3.8.0 Integer 1"]),
    st.text(max_size=8),
    st.integers(-5, 10**9),
    st.booleans(),
    st.lists(st.sampled_from(["1.3.6.1.2.1.1.6.0 String \"x\"", " ", "1.3.6.1.2.1.69.1.3.8.0 Integer 1"]),
             max_size=3),
)
_rows = st.dictionaries(st.sampled_from(NAMES), _value, max_size=8).map(lambda r: {"mac": "001122aabbcc", **r})


def _fast(path: Path):
    renderers = Renderers()
    return _fast_function(path, lambda: renderers._env(path))


def _jinja(path: Path, row: dict):
    try:
        return render_text(path, row)
    except Exception as err:  # noqa: BLE001 - whatever jinja2's render raises, the build's raises too
        return (type(err).__name__, str(err))


@pytest.mark.parametrize("path", TIERS, ids=lambda p: p.name)
@settings(max_examples=150, deadline=None)
@given(row=_rows)
def test_the_function_writes_jinja2s_text_or_declines(path, row):
    fast = _fast(path)
    if fast is None:
        return  # a template it does not take: jinja2 renders every row
    out = []
    try:
        fast({k: v for k, v in row.items() if v is not None}, out.append)
    except Exception:  # noqa: BLE001 - declined: the row takes jinja2
        return
    assert "".join(out) == _jinja(path, row)


@pytest.mark.parametrize("path", TIERS, ids=lambda p: p.name)
@settings(max_examples=60, deadline=None)
@given(row=_rows)
def test_a_builds_renderer_gives_jinja2s_text_or_error(path, row):
    render = Renderers()(path)
    try:
        got = render(row)
    except Exception as err:  # noqa: BLE001
        got = (type(err).__name__, str(err))
    assert got == _jinja(path, row)


@pytest.mark.parametrize("tier", ["res-50x5", "res-100x10", "res-300x20", "res-1000x50", "docsis10-cos"])
def test_the_residential_tiers_take_the_function(tier):
    """What makes a bulk build of residential modems quick: their rows do not fall back to jinja2."""
    path = SHIPPED / f"{tier}{SUFFIX}"
    fast = _fast(path)
    assert fast is not None
    row = {"mac": "001122aabbcc", "us_rate": "7M", "ds_rate": "77M", "max_cpe": "3",
           "snmp_objects": "1.3.6.1.2.1.1.6.0 String \"node 1\"| 1.3.6.1.2.1.69.1.3.8.0 Integer 1 "}
    out = []
    fast(row, out.append)
    assert "".join(out) == render_text(path, row)


def test_an_undefined_value_falls_back_to_jinja2s_error(tmp_path):
    (tmp_path / "t.j2").write_text("Main {\n    MaxCPE {{ cpe }};\n}\n")
    fast = _fast(tmp_path / "t.j2")
    assert fast is not None
    with pytest.raises(fastrender.Fallback):
        fast({}, [].append)
    with pytest.raises(TemplateError, match="undefined variable: 'cpe'"):
        Renderers()(tmp_path / "t.j2")({"mac": "001122aabbcc"})


def test_a_block_leaves_the_template_to_jinja2(tmp_path):
    (tmp_path / "base.j2").write_text("Main {\n{% block body %}{% endblock %}}\n")
    (tmp_path / "t.j2").write_text('{% extends "base.j2" %}{% block body %}    MaxCPE 2;\n{% endblock %}')
    assert _fast(tmp_path / "t.j2") is None
    assert Renderers()(tmp_path / "t.j2")({}) == "Main {\n    MaxCPE 2;\n}\n"


def test_the_global_names_are_jinja2s():
    """What ``Renderers.reads`` names without importing jinja2 are an environment's globals."""
    from hfcprov.tiers.templates import _global_names, environment

    assert _global_names() == set(environment(str(SHIPPED)).globals)


def test_the_cache_keys_name_jinja2s_version():
    import jinja2

    from hfcprov.tiers.templates import _jinja2_version

    _jinja2_version.cache_clear()
    assert _jinja2_version() == jinja2.__version__
