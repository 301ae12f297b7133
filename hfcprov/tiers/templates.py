"""The environment for tier templates (jinja2: StrictUndefined, hfcprov's unit filters, one-line errors).

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
import json
import os
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path

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
    return size_buffer(tier, table=False).target


@functools.lru_cache(maxsize=16)
def environment(folder: str):
    """One environment per template folder (jinja2 caches compiled templates in it); a template edited
    on disk is compiled again at its next use (jinja2 stats the file at every use, includes too: what a
    long-running TFTP server wants)."""
    return new_environment(folder)


def new_environment(folder: str, reload: bool = True):
    """An environment for the templates of ``folder`` (and the shipped ones); ``reload=False``: each template
    is read and compiled once, at its first use, and never looked at on disk again (``Renderers``)."""
    import jinja2

    env = jinja2.Environment(
        loader=_loader(search_path(folder)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=reload,
    )
    env.filters.update(FILTERS)
    env.globals.update(GLOBALS)
    env.bytecode_cache = _bytecode_cache()
    return env


def search_path(folder: str) -> list[str]:
    """Where templates named from ``folder``'s are looked up, in order: ``folder``, then the shipped ones."""
    return [folder] + ([str(SHIPPED)] if Path(folder).resolve() != SHIPPED else [])


def template_source(search: list[str], name: str) -> tuple[str, str] | None:
    """(text, file name) of template ``name`` (``a/b.j2``: slash-separated, no ``..``), the first found in
    the folders of ``search``; None: none has it. The one lookup of jinja2's environments (``_loader``)
    and of what hfcprov reads of a template without jinja2 (digests, what it reads, the fast path)."""
    pieces = []
    for piece in name.split("/"):
        if os.sep in piece or (os.altsep and os.altsep in piece) or piece == os.pardir:
            return None
        if piece and piece != ".":
            pieces.append(piece)
    for folder in search:
        filename = os.path.join(folder, *pieces)
        if os.path.isfile(filename):
            with open(filename, encoding="utf-8") as f:
                return f.read(), os.path.normpath(filename)
    return None


def _loader(search: list[str]):
    """A jinja2 loader over ``template_source`` (reloading a template whose file changed, as jinja2's own)."""
    import jinja2

    class Loader(jinja2.BaseLoader):
        def get_source(self, environment, template):
            found = template_source(search, template)
            if found is None:
                raise jinja2.TemplateNotFound(template)
            source, filename = found
            mtime = os.path.getmtime(filename)

            def uptodate() -> bool:
                try:
                    return os.path.getmtime(filename) == mtime
                except OSError:
                    return False

            return source, filename, uptodate

    return Loader()


@functools.lru_cache(maxsize=1)
def _compiled_folder() -> Path | None:
    """The private cache folder (``hfcprov.cachedir``) of compiled templates (jinja2's bytecode, the fast
    path's functions) and of what each reads: a process that builds one modem's file spends more compiling
    and reading its templates (~40 ms) than rendering them. Entries are keyed by the template's text."""
    from hfcprov.cachedir import private_folder

    return private_folder("templates")


@functools.lru_cache(maxsize=1)
def _bytecode_cache():
    """jinja2's file cache in ``_compiled_folder``, where a damaged entry (a disk that filled mid-write
    elsewhere, a truncated copy) is compiled again instead of raising from its unpickling."""
    import jinja2

    class BytecodeFiles(jinja2.FileSystemBytecodeCache):
        def load_bytecode(self, bucket) -> None:
            try:
                super().load_bytecode(bucket)
            except Exception:  # noqa: BLE001 - any damage: the template's source is at hand
                bucket.reset()

    folder = _compiled_folder()
    return BytecodeFiles(str(folder), "%s.jinja") if folder is not None else None


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

    remembered.cached = cached  # for the fast path (``fastrender``), where any error falls back to jinja2
    return remembered


_BPS, _BYTES, _US, _ADVISE_BUFFER = (_remembered(f) for f in (bps, to_bytes, us, advise_buffer))  # one memory each
# what a template's environment has beside jinja2's own: the fast path (``fastrender``) calls the same
FILTERS = {"bps": _BPS, "bytes": _BYTES, "us": _US, "mac_colon": macaddr.colon}
GLOBALS = {"advise_buffer": _ADVISE_BUFFER}

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


def load(template: str | Path, env=None):
    """``template``'s jinja2 Template, in ``env`` (default: its folder's ``environment``)."""
    import jinja2

    path = locate(template)
    if env is None:
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
    return render_loaded(load(template), variables)


class Renderers:
    """``render_text`` for many rows, one bulk build's: each template, and what it includes, read and
    compiled once at its first use and never looked up or stat'ed again (jinja2 would stat each file,
    includes too, at every row). The build's input hashes hold the templates' digests as it read them."""

    def __init__(self):
        self._envs: dict = {}  # folder -> its jinja2 environment, this build's
        self._render: dict[str, Callable[[dict], str]] = {}

    def __call__(self, template: str | Path) -> Callable[[dict], str]:
        """A function rendering ``template`` with a row's variables (the text, or ``TemplateError``): the
        template's plain Python function (``fastrender``) where it takes the row, else jinja2's render
        (jinja2 is imported, and the template compiled, at the first row that needs it)."""
        key = os.fspath(template)
        found = self._render.get(key)
        if found is None:
            path = locate(template)
            loaded = []

            def slow(variables: dict) -> str:
                if not loaded:
                    loaded.append(load(path, self._env(path)))
                return render_loaded(loaded[0], variables)

            fast = _fast_function(path, lambda: self._env(path))
            found = self._render[key] = slow if fast is None else functools.partial(_render_fast, fast, slow)
        return found

    def reads(self, template: str | Path) -> tuple[str, ...] | None:
        """The names whose values decide what ``template`` renders, sorted: what it reads (``template_reads``)
        and the environment's globals (a row's column of a global's name hides the global). None: unknown."""
        path = locate(template)
        names = _reads_in(search_path(str(path.parent)), path.name, str(path))
        return None if names is None else tuple(sorted(names | _global_names()))

    def _env(self, path: Path):
        folder = str(path.parent)
        env = self._envs.get(folder)
        if env is None:
            env = self._envs[folder] = new_environment(folder, reload=False)
        return env


def _render_fast(fast, slow, variables: dict) -> str:
    """``slow(variables)`` (jinja2's render), by ``fast`` (``fastrender``) when it takes the row."""
    out: list[str] = []
    try:
        fast({k: v for k, v in variables.items() if v is not None}, out.append)
    except Exception:  # noqa: BLE001 - Fallback, or anything the row does to it: jinja2 says what it is
        return slow(variables)
    return "".join(out)


def _global_names() -> set[str]:
    """The names of a template environment's globals: jinja2's own (range, dict, ...) and ``GLOBALS``."""
    return set(_JINJA2_GLOBALS) | set(GLOBALS)


# jinja2's default globals (jinja2.defaults.DEFAULT_NAMESPACE), named without importing jinja2;
# tests/tiers/test_fastrender.py holds the list equal to jinja2's
_JINJA2_GLOBALS = ("range", "dict", "lipsum", "cycler", "joiner", "namespace")


def _fast_function(path: Path, env_of: Callable[[], object]):
    """``path``'s ``fastrender`` function (None: jinja2 renders its every row), its compiled code remembered
    in the private cache folder by the text of the templates it reads and this Python's version (marshal's
    format); ``env_of()``: the jinja2 environment that writes it when the cache has none."""
    import marshal

    from hfcprov.tiers import fastrender

    name = path.name
    try:
        sources = [(n, source) for n, source, _ in _tree_in(search_path(str(path.parent)), name, False, str(path))]
    except TemplateError:
        return None  # jinja2's render says what is wrong
    digest = hashlib.sha256(json.dumps([fastrender.FORMAT, sys.version, _jinja2_version(), sorted(_global_names()),
                                        sorted(FILTERS), sources]).encode()).hexdigest()
    folder = _compiled_folder()
    cache = os.path.join(folder, f"{digest}.fast") if folder is not None else None
    code = None
    if cache is not None:
        try:
            with open(cache, "rb") as f:
                data = f.read()
            code = marshal.loads(data) if data else ""  # "": a template the function does not take
        except (OSError, ValueError, EOFError, TypeError):  # none yet, or damaged: written again
            code = None
        if code and not isinstance(code, types.CodeType):
            code = None  # damaged into another object
    if code is None:
        import jinja2

        try:
            source = fastrender.source_of(env_of(), name, FILTERS, GLOBALS)
        except jinja2.TemplateError:
            return None  # jinja2's render says what is wrong
        code = compile(source, str(path), "exec") if source is not None else ""
        if cache is not None:
            _cache_write(cache, marshal.dumps(code) if code else b"")
    if not code:
        return None
    try:
        return fastrender.function_of(code, FILTERS, GLOBALS)
    except Exception:  # noqa: BLE001 - a damaged cache entry: jinja2 renders
        return None


def render_loaded(tmpl, variables: dict) -> str:
    """A loaded template rendered with ``variables`` (None: not given); errors as ``render_text`` says."""
    import jinja2

    try:
        return tmpl.render({k: v for k, v in variables.items() if v is not None})
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
    except (TypeError, ValueError, ArithmeticError, AttributeError, LookupError) as err:
        # a row's value of the wrong kind meeting the template (an int where a string is split): one line
        where = _template_frame(sys.exc_info()[2], tmpl.filename)
        raise TemplateError(f"{where}: {type(err).__name__}: {err}") from None


def render_tree(template: str | Path, variables: dict):
    """A tier template rendered with ``variables`` and parsed into a ConfigTree."""
    from hfcprov.config import parse_text

    path = locate(template)
    return parse_text(render_text(path, variables), source=rendered_name(path, variables))


def rendered_name(template: str | Path, variables: dict) -> str:
    """How a parse error names the rendered text: 'res-100x10.j2 rendered for 001122aabbcc'."""
    name = os.path.basename(os.fspath(template))
    return f"{name} rendered for {variables['mac']}" if "mac" in variables else f"{name} rendered"


def _template_tree(template: str | Path, contextual: bool = False):
    """(name, source, parsed) of the template and of every template it includes, imports or extends,
    recursively, once each, in a stable order (``contextual``: only those that see the row's variables,
    not imports without context). A missing template or bad syntax raises TemplateError."""
    path = locate(template)
    yield from _tree_in(search_path(str(path.parent)), path.name, contextual, str(path))


def _tree_in(search: list[str], top: str, contextual: bool, where: str):
    seen: set[str] = set()
    todo = [top]
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        found = template_source(search, name)
        if found is None:
            raise TemplateError(f"{where}: included template {name!r} not found")
        source, filename = found
        parsed = _parsed(name, source, filename)
        yield name, source, parsed
        todo.extend(sorted(r for r, sees in parsed.refs if r and (sees or not contextual)))


class _Parsed:
    """What a template's syntax tree says: the templates it names ((name, sees the row's variables); name
    None: a dynamic one) and the variables it reads itself."""

    def __init__(self, refs: list[tuple[str | None, bool]], reads: frozenset):
        self.refs, self.reads = refs, reads

    @classmethod
    def of(cls, ast) -> _Parsed:
        import jinja2.meta
        from jinja2 import nodes

        refs = [(name, not isinstance(node, (nodes.Import, nodes.FromImport, nodes.Include)) or node.with_context)
                for node, name in _references(ast)]
        return cls(refs, frozenset(jinja2.meta.find_undeclared_variables(ast)))


def _references(ast):
    """(node, template name or None when dynamic) for each extends, include and import, as
    ``jinja2.meta.find_referenced_templates`` names them (one per name of an include's list)."""
    import jinja2.meta
    from jinja2 import nodes

    for node in ast.find_all((nodes.Extends, nodes.FromImport, nodes.Import, nodes.Include)):
        for name in jinja2.meta.find_referenced_templates(nodes.Template([node])):
            yield node, name


# (name, source) -> _Parsed: a bulk build digests every tier, and each includes the same _common.j2 and
# _flows.j2; a template edited on disk is another source, so parsed afresh.
_PARSED: dict[tuple[str, str], _Parsed] = {}


def _parsed(name: str, source: str, filename: str | None) -> _Parsed:
    key = (name, source)  # every hfcprov environment parses alike (new_environment's settings)
    found = _PARSED.get(key)
    if found is None:
        found = _remembered_parse(name, source)
        if found is None:
            import jinja2

            try:
                ast = environment(str(SHIPPED)).parse(source, name, filename)
            except jinja2.TemplateSyntaxError as err:
                raise TemplateError(f"{filename} line {err.lineno}: template syntax error: {err.message}") from None
            found = _Parsed.of(ast)
            _remember_parse(name, source, found)
        if len(_PARSED) >= 256:
            _PARSED.clear()
        _PARSED[key] = found
    return found


_PARSE_FORMAT = 1  # of the .parsed.json files: a new one never reads an old one


@functools.lru_cache(maxsize=1)
def _jinja2_version() -> str:
    """jinja2's version, part of every cache key: read from its package without importing it (~35 ms, which
    a bulk build whose templates are all cached does not pay)."""
    if "jinja2" in sys.modules:
        return sys.modules["jinja2"].__version__
    import importlib.util

    try:
        spec = importlib.util.find_spec("jinja2")
        with open(spec.origin, encoding="utf-8") as f:
            found = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', f.read(), re.M)
        if found:
            return found.group(1)
    except (OSError, AttributeError, TypeError, ValueError):
        pass
    import jinja2

    return jinja2.__version__


def _parse_file(name: str, source: str) -> str | None:
    """The cache file of a template's ``_Parsed`` (None: no cache folder); jinja2's version is in the key."""
    folder = _compiled_folder()
    if folder is None:
        return None
    digest = hashlib.sha256(f"{_PARSE_FORMAT}\0{_jinja2_version()}\0{name}\0{source}".encode()).hexdigest()
    return os.path.join(folder, f"{digest}.parsed.json")


def _remembered_parse(name: str, source: str) -> _Parsed | None:
    path = _parse_file(name, source)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        return _Parsed([(r, bool(sees)) for r, sees in d["refs"]], frozenset(d["reads"]))
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or damaged: parse again
        return None


def _remember_parse(name: str, source: str, parsed: _Parsed) -> None:
    path = _parse_file(name, source)
    if path is not None:
        _cache_write(path, json.dumps({"refs": parsed.refs, "reads": sorted(parsed.reads)}))


def _cache_write(path: str, data: bytes | str) -> None:
    """An entry of ``_compiled_folder``, written whole or not at all; a failure (a full disk) only means
    the next process makes it again."""
    from hfcprov.fileio import atomic_write

    try:
        atomic_write(path, data, mode=0o600, durable=False)
    except (OSError, HfcprovError):
        pass


def template_digest(template: str | Path) -> str:
    """sha256 over the template's text and every template it includes, imports or extends (recursively).

    Part of a bulk build's input hash: editing a shared ``_common.j2`` rebuilds every file that uses it.
    A dynamic include cannot be followed; the template's own text still changes the hash.
    """
    h = hashlib.sha256()
    for name, source, _ in _template_tree(template):
        h.update(name.encode() + b"\0" + source.encode() + b"\0")
    return h.hexdigest()


def template_reads(template: str | Path) -> frozenset | None:
    """The variable names a template and everything it includes, extends or imports with context read,
    found statically (a template imported without context sees none of them, whatever it reads).

    None when that cannot be told (a dynamic include, a missing template, bad syntax: the render
    reports those). Rows equal on these names render the same text, which lets the TFTP server
    build one file for many modems and a bulk build render once per distinct set of them.
    """
    path = locate(template)
    return _reads_in(search_path(str(path.parent)), path.name, str(path))


def _reads_in(search: list[str], name: str, where: str) -> frozenset | None:
    names: set[str] = set()
    try:
        for _, _, parsed in _tree_in(search, name, True, where):
            if any(ref is None and sees for ref, sees in parsed.refs):
                return None
            names |= parsed.reads
    except TemplateError:
        return None
    return frozenset(names)


def _template_frame(tb, fallback: str | None) -> str:
    """'file line N' of the innermost template frame in a jinja2-rewritten traceback."""
    where = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith(SUFFIX) or filename == fallback:
            where = f"{filename} line {tb.tb_lineno}"
        tb = tb.tb_next
    return where or str(fallback)


def _undefined_name(err) -> str:
    # jinja2 says "'rate' is undefined" or "'dict object' has no attribute 'x'"
    msg = str(err)
    return msg.replace(" is undefined", "") if msg.endswith(" is undefined") else msg
