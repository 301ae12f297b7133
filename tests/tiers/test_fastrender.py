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
    _text_or_declined(path, row)


def _text_or_declined(path: Path, row: dict, taken: bool = False) -> None:
    """The function's text of ``row`` is jinja2's, or it declines the row (``taken``: it takes the template)."""
    fast = _fast(path)
    assert fast is not None or not taken
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


# --- macros, imports, range and int: a pool of templates, each rendered for generated rows ---------------------

_MACROS = '''{#- macros for the pool -#}
{% macro flow(ref, rate, burst="3K", peak=none, prio=ref|int + 1, aqm=none) %}
    UsServiceFlow {
        UsServiceFlowRef {{ ref }};
        TrafficPriority {{ prio }};
        MaxRateSustained {{ rate|bps }};
        MaxTrafficBurst {{ burst|bytes }};
{% if peak is not none %}
        UpstreamPeakTrafficRate {{ peak|bps }};
{% endif %}
{% set note = max_cpe|default("2") %}
        MaxConcatenatedBurst {{ note|int + 1500 }};
{% if aqm in ("docsis-pie", "lld") %}
        AQMEncodings { SFAQMDisable 0; }
{% endif %}
    }
{% endmacro %}
{% macro pair(rate) %}
{{ flow(1, rate) }}{{ flow(2, rate, peak=us_peak|default(none)) }}
{% endmacro %}
{% macro with_common(rate, max_cpe=none) %}
{% set extra = rate|default("1M") %}
    Main {
{% include "c.j2" %}
    }
{% endmacro %}
{% macro _hidden() %}x{% endmacro %}
{% macro uses_kwargs() %}{{ kwargs }}{% endmacro %}
{% macro uses_undefined(x) %}{{ x is defined }} {{ x }}{% endmacro %}
'''

_POOL = {
    "import-with-context": '{% import "m.j2" as sf with context %}Main {\n{{ sf.flow(1, us_rate|default("5M")) }}'
                           '{{ sf.pair(ds_rate|default("7M")) }}}\n',
    "import-without-context": '{% import "m.j2" as sf %}Main {\n{{ sf.flow(3, "1M", burst=us_burst|default("2K")) }}}\n',
    "from-import": '{% from "m.j2" import flow as f, pair with context %}Main {\n{{ f(4, us_rate|default("5M"), '
                   'aqm=aqm|default(none)) }}{{ pair("2M") }}}\n',
    "set-then-import": '{% set max_cpe = "7" %}{% import "m.j2" as sf with context %}{% set max_cpe = "9" %}'
                       'Main {\n{{ sf.flow(1, "1M") }}}\n',
    "import-in-if": '{% if aqm|default(none) == "lld" %}{% from "m.j2" import flow with context %}{% endif %}'
                    'Main {\n{{ flow(5, "1M") }}}\n',
    "loop-of-calls": '{% import "m.j2" as sf with context %}Main {\n{% for r in (us_rate|default("1M,2M")).split(",") %}'
                     '{{ sf.flow(loop_ref|default(1), r) }}{% endfor %}}\n',
    "range-int": 'Main {\n{% for i in range(filler|int) %}  SnmpMibObject 1.3.6.1.2.1.1.{{ i }}.0 Integer {{ i }};\n'
                 '{% endfor %}{% for i in range(1, max_cpe|default(3)|int, 2) %}  MaxCPE {{ i }};\n{% endfor %}}\n',
    "bad-calls": '{% import "m.j2" as sf with context %}Main {\n{{ sf.flow(1, "1M", "2K", none, 3, none, 7) if '
                 'filler|default("") == "1" else sf.flow(1, "1M", nope=2) if filler|default("") == "2" else '
                 'sf._hidden() if filler|default("") == "3" else sf.uses_kwargs(z=1) if filler|default("") == "4" '
                 'else sf.uses_undefined(us_rate) if filler|default("") == "5" else sf }}}\n',
    "include-in-macro": '{% import "m.j2" as sf with context %}{{ sf.with_common(us_rate|default(none), '
                        'max_cpe=filler|default(none)) }}{{ sf.with_common("2M") }}',
    "missing-argument": '{% from "m.j2" import flow %}Main {\n{{ flow(2) }}}\n',
    "repeated-argument": '{% from "m.j2" import flow %}Main {\n{{ flow(2, "1M", ref=3) }}}\n',
    "shadowed": '{% import "m.j2" as sf with context %}{% set flow = us_rate|default("x") %}Main {\n'
                '{{ sf.pair("1M") }}{{ range }}}\n',
}
_POOL_NAMES = ["us_rate", "ds_rate", "us_burst", "us_peak", "aqm", "max_cpe", "filler", "loop_ref", "sf", "flow",
               "pair", "range", "f"]
_pool_value = st.one_of(st.none(), st.sampled_from(["1M", "5M", "2K", "0", "1", "2", "3", "4", "5", "7", "12",
                                                    "2.7", "1e3", "lld", "docsis-pie", "bad", "", "3M,4M",
                                                    " 6 ", "0x10", "inf", "nan"]),
                        st.integers(-3, 40), st.booleans(), st.floats(allow_nan=False, max_value=50, min_value=-5))
_pool_rows = st.dictionaries(st.sampled_from(_POOL_NAMES), _pool_value, max_size=6).map(
    lambda r: {"mac": "001122aabbcc", **r})


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pool")
    (folder / "m.j2").write_text(_MACROS)
    (folder / "c.j2").write_text("    MaxCPE {{ max_cpe|default(4) }};\n    X {{ extra }} {{ rate }} {{ aqm|default('') }};\n")
    for name, text in _POOL.items():
        (folder / f"{name}.j2").write_text(text)
    return folder


@pytest.mark.parametrize("name", sorted(_POOL))
@settings(max_examples=80, deadline=None)
@given(row=_pool_rows)
def test_macros_imports_and_ranges_give_jinja2s_text_or_decline(pool, name, row):
    _text_or_declined(pool / f"{name}.j2", row, taken=True)


@pytest.mark.parametrize("name, row", [
    ("import-with-context", {"us_rate": "6M"}),
    ("import-without-context", {}),
    ("from-import", {"aqm": "lld"}),
    ("set-then-import", {}),
    ("import-in-if", {"aqm": "lld"}),
    ("loop-of-calls", {"us_rate": "1M,3M,5M", "loop_ref": "4"}),
    ("range-int", {"filler": "12", "max_cpe": "9"}),
    ("range-int", {"filler": "2.7"}),
    ("include-in-macro", {"us_rate": "3M", "filler": "5"}),
])
def test_macros_and_ranges_take_the_function(pool, name, row):
    """Operators' tiers call macros in loops: those rows are written by the function, not jinja2."""
    out = []
    _fast(pool / f"{name}.j2")({"mac": "001122aabbcc", **row}, out.append)
    assert "".join(out) == render_text(pool / f"{name}.j2", {"mac": "001122aabbcc", **row})


@pytest.mark.parametrize("name, row", [
    ("bad-calls", {"filler": "1"}), ("bad-calls", {"filler": "2"}), ("bad-calls", {"filler": "3"}),
    ("bad-calls", {"filler": "4"}), ("bad-calls", {}), ("missing-argument", {}), ("repeated-argument", {}),
    ("shadowed", {"pair": "x"}), ("import-in-if", {}), ("range-int", {}),
])
def test_what_jinja2_refuses_or_renders_its_own_way_falls_back(pool, name, row):
    with pytest.raises(fastrender.Fallback):
        _fast(pool / f"{name}.j2")({"mac": "001122aabbcc", **row}, [].append)


def test_the_bench_tier_and_the_lld_tiers_take_the_function(tmp_path):
    """The boot-storm bench's padded tier (macros through an import, a range loop) and the Low Latency
    tiers (``from _flows.j2 import``) render without jinja2."""
    bench = Path(__file__).resolve().parents[2] / "bench" / "padded-tier.j2"
    (tmp_path / "padded.j2").write_text(bench.read_text())
    for path, row in [(tmp_path / "padded.j2", {"filler": "40"}), (SHIPPED / "lld-100x10.j2", {}),
                      (SHIPPED / "res-100x10.j2", {"aqm": "lld"}), (SHIPPED / "business-voice.j2", {})]:
        row = {"mac": "001122aabbcc", **row}
        out = []
        _fast(path)(dict(row), out.append)
        assert "".join(out) == render_text(path, row)
