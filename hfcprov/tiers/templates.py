"""The jinja2 environment for tier templates: StrictUndefined, hfcprov's unit filters, one-line errors.

A template is config text (``Main { ... }``) with jinja2 variables. Filters turn
what an engineer writes into the integers the TLVs hold:

    {{ rate|bps }}          5M, 5Mbps, 5000000   -> 5000000 (bits/s)
    {{ buffer|bytes }}      64K, 64KiB, 65536    -> 65536
    {{ latency|us }}        10ms                 -> 10000 (microseconds, e.g. MaxLatency)
    {{ mac|mac_colon }}     001122aabbcc         -> 00:11:22:aa:bb:cc
    {{ advise_buffer(rate, rtt) }}               -> TargetBuffer bytes by the sizing policy
    {{ advise_buffer(rate, rtt, flows, '150ms', congestion_control='cubic', aqm='docsis-pie', mac='docsis',
                     profile='docsis3.1') }}

Templates are looked up next to the requested file first, then in the shipped
``templates/`` folder (``hfcprov.shipped``), so a site template can ``{% include "_common.j2" %}``.
Any error (undefined variable, bad syntax, bad unit) becomes a TemplateError
that names the template, the line and the variable.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

import jinja2
import jinja2.meta

from hfcprov import macaddr
from hfcprov.errors import HfcprovError
from hfcprov.queue.inputs import (
    DEFAULT_CONGESTION_CONTROL,
    DEFAULT_PROFILE,
    DEFAULT_UPSTREAM_MODEL,
    G114_ONE_WAY_BUDGET,
    SizingInputs,
    aqm_latency_target,
)
from hfcprov.queue.sizing import size_buffer
from hfcprov.shipped import shipped_dir
from hfcprov.units import parse_bytes, parse_duration, parse_rate, parse_rtt

SHIPPED = shipped_dir("templates")
SUFFIX = ".j2"


class TemplateError(HfcprovError, ValueError):
    """A template could not be found, parsed or rendered; the message names template and line."""


def bps(value) -> int:
    return round(parse_rate(value))


def to_bytes(value) -> int:
    return parse_bytes(value)


def us(value) -> int:
    return round(parse_duration(value) * 1e6)


def advise_buffer(rate, rtt, flows=1, latency_budget=G114_ONE_WAY_BUDGET, congestion_control=None, aqm=None,
                  mac=None, profile=None) -> int:
    """TargetBuffer bytes by the sizing policy (``hfcprov.queue.sizing.size_buffer``), the answer
    ``buffer advise`` gives for the same tier: ``aqm`` is none, docsis-pie, lld (DOCSIS-PIE at its
    10 ms default), a latency target (``20ms``), or None / modem (what the profile's modem runs);
    ``mac`` docsis or tokenbucket; ``profile`` the modem profile (``docsis3.1``, ``docsis3.0-4ch``, ...).
    None: the one set of defaults (``hfcprov.queue.inputs``)."""
    tier = SizingInputs(parse_rate(rate), parse_rtt(rtt), int(flows),
                        congestion_control or DEFAULT_CONGESTION_CONTROL, mac or DEFAULT_UPSTREAM_MODEL,
                        aqm_latency_target(aqm), parse_duration(latency_budget), profile or DEFAULT_PROFILE)
    return size_buffer(tier).target


@functools.lru_cache(maxsize=16)
def environment(folder: str) -> jinja2.Environment:
    """One environment per template folder (jinja2 caches compiled templates in it)."""
    search = [folder] + ([str(SHIPPED)] if Path(folder).resolve() != SHIPPED else [])
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(search),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(bps=_remembered(bps), bytes=_remembered(to_bytes), us=_remembered(us), mac_colon=macaddr.colon)
    env.globals.update(advise_buffer=_remembered(advise_buffer))
    return env


def _remembered(fn):
    """``fn`` with its results remembered: every modem's render converts the same few values ('10M',
    '64K'), and the TFTP server renders hundreds of modems in a boot storm. ``typed``: True is not 1
    (a unit filter refuses a bool). An unhashable value (a list) is converted each time."""
    cached = functools.lru_cache(maxsize=4096, typed=True)(fn)

    @functools.wraps(fn)
    def remembered(*args, **kwargs):
        try:
            return cached(*args, **kwargs)
        except TypeError:  # unhashable: fn says what it makes of it
            return fn(*args, **kwargs)

    return remembered


# Paths locate() has returned: asked again (every modem of a bulk build or of a TFTP storm), such a path
# is still itself once it is a file, so one stat replaces resolve()'s walk over every folder of the path.
_RESOLVED: set[str] = set()


def locate(template: str | Path) -> Path:
    """A template file: a path as given, or a shipped tier name (``res-100x10`` or ``res-100x10.j2``)."""
    key = str(template)
    if key in _RESOLVED and os.path.isfile(key):
        return template if isinstance(template, Path) else Path(key)
    p = Path(template)
    if p.is_file():
        found = p.resolve()
        _RESOLVED.add(str(found))
        return found
    for candidate in (SHIPPED / p.name, SHIPPED / (p.name + SUFFIX)):
        if p.parent == Path(".") and candidate.is_file():
            return candidate
    shipped = ", ".join(sorted(t.stem for t in SHIPPED.glob("*" + SUFFIX) if not t.name.startswith("_")))
    raise TemplateError(f"no template {str(template)!r} (a file, or one of the shipped tiers: {shipped})")


def load(template: str | Path) -> jinja2.Template:
    path = locate(template)
    env = environment(str(path.parent))
    try:
        return env.get_template(path.name)
    except jinja2.TemplateSyntaxError as err:
        raise TemplateError(f"{err.filename or path} line {err.lineno}: template syntax error: {err.message}") from None
    except jinja2.TemplateNotFound as err:
        raise TemplateError(f"{path}: included template {err.name!r} not found") from None


def render_text(template: str | Path, variables: dict) -> str:
    """The template rendered with ``variables``: config text, not yet parsed.

    A variable that is None counts as not given, so the template's default applies
    (the lab passes None for "no override"; a CSV's empty cell is dropped the same way).
    """
    tmpl = load(template)
    try:
        return tmpl.render(**{k: v for k, v in variables.items() if v is not None})
    except jinja2.TemplateSyntaxError as err:  # a syntax error in a template pulled in at render time
        raise TemplateError(f"{err.filename} line {err.lineno}: template syntax error: {err.message}") from None
    except jinja2.TemplateNotFound as err:
        raise TemplateError(f"{tmpl.filename}: included template {err.name!r} not found") from None
    except jinja2.UndefinedError as err:
        where = _template_frame(sys.exc_info()[2], tmpl.filename)
        raise TemplateError(f"{where}: undefined variable: {_undefined_name(err)}") from None
    except HfcprovError as err:  # a bad unit in a filter: 'bad rate ...'
        where = _template_frame(sys.exc_info()[2], tmpl.filename)
        raise TemplateError(f"{where}: {err}") from None
    except (TypeError, ValueError, ArithmeticError) as err:
        where = _template_frame(sys.exc_info()[2], tmpl.filename)
        raise TemplateError(f"{where}: {type(err).__name__}: {err}") from None


def render_tree(template: str | Path, variables: dict):
    """A tier template rendered with ``variables`` and parsed into a ConfigTree."""
    from hfcprov.config import parse_text

    path = locate(template)
    return parse_text(render_text(path, variables), source=rendered_name(path, variables))


def rendered_name(template: str | Path, variables: dict) -> str:
    """How a parse error names the rendered text: 'res-100x10.j2 rendered for 001122aabbcc'."""
    name = Path(template).name
    return f"{name} rendered for {variables['mac']}" if "mac" in variables else f"{name} rendered"


def _template_tree(template: str | Path):
    """(name, source, ast, refs) of the template and of every template it includes, imports or
    extends, recursively, once each, in a stable order. A missing template or bad syntax raises
    TemplateError. refs holds None for a dynamic include, which cannot be followed."""
    path = locate(template)
    env = environment(str(path.parent))
    seen: set[str] = set()
    todo = [path.name]
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        try:
            source, filename, _ = env.loader.get_source(env, name)
        except jinja2.TemplateNotFound:
            raise TemplateError(f"{path}: included template {name!r} not found") from None
        try:
            ast = env.parse(source, name, filename)
        except jinja2.TemplateSyntaxError as err:
            raise TemplateError(f"{filename} line {err.lineno}: template syntax error: {err.message}") from None
        refs = list(jinja2.meta.find_referenced_templates(ast))
        yield name, source, ast, refs
        todo.extend(sorted(r for r in refs if r))


def template_digest(template: str | Path) -> str:
    """sha256 over the template's text and every template it includes, imports or extends (recursively).

    Part of a bulk build's input hash: editing a shared ``_common.j2`` rebuilds every file that uses it.
    A dynamic include cannot be followed; the template's own text still changes the hash.
    """
    h = hashlib.sha256()
    for name, source, _, _ in _template_tree(template):
        h.update(name.encode() + b"\0" + source.encode() + b"\0")
    return h.hexdigest()


def template_reads(template: str | Path) -> frozenset | None:
    """The variable names a template and everything it includes or imports read, found statically.

    None when that cannot be told (a dynamic include, a missing template, bad syntax: the render
    reports those). Rows equal on these names render the same text, which lets the TFTP server
    build one file for many modems.
    """
    names: set[str] = set()
    try:
        for _, _, ast, refs in _template_tree(template):
            if None in refs:
                return None
            names |= jinja2.meta.find_undeclared_variables(ast)
    except TemplateError:
        return None
    return frozenset(names)


def preload(template: str | Path) -> None:
    """Compile a template and every template it includes, imports or extends now, as its first render
    would: a TFTP build worker does this before the first modem of a storm asks."""
    path = locate(template)
    env = environment(str(path.parent))
    for name, _, _, _ in _template_tree(path):  # a syntax error is its TemplateError already
        env.get_template(name)


def _template_frame(tb, fallback: str | None) -> str:
    """'file line N' of the innermost template frame in a jinja2-rewritten traceback."""
    where = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith(SUFFIX) or filename == fallback:
            where = f"{filename} line {tb.tb_lineno}"
        tb = tb.tb_next
    return where or str(fallback)


def _undefined_name(err: jinja2.UndefinedError) -> str:
    # jinja2 says "'rate' is undefined" or "'dict object' has no attribute 'x'"
    msg = str(err)
    return msg.replace(" is undefined", "") if msg.endswith(" is undefined") else msg
