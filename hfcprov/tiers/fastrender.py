"""A tier template as one plain Python function, for the rows of a bulk build: jinja2 stays the renderer.

jinja2's own compiled code builds a Context per row and per include, looks up the parent and included
templates, makes an Undefined per missing variable and runs a generator per template: ~50 us a row of
a residential tier, about a fifth of a bulk build. Here jinja2's syntax tree of a template (and of what it
includes or extends) is written out as one straight Python function over a dict of the row's values, for
the few constructs tier templates use: text, ``{{ }}``, ``set``, ``if``, ``for ... if``, ``include``,
``extends`` without blocks, ``import``/``from ... import`` of a template of macros and calling those
macros (positional and keyword arguments, defaults), the filters ``default``, ``trim`` and ``int`` and
hfcprov's own, the tests ``defined``, ``undefined``, ``none`` and ``string``, comparisons,
``and``/``or``/``not``, ``+ - * / // %``, conditional expressions, calling a global (``advise_buffer``, ``range``) and
``str.split``.

Anything else, and anything unusual at run time (an undefined value used, a filter or call that fails, a
construct not listed: a macro defined in the rendered template itself, a call block, a block), raises
``Fallback`` where it is reached, and the row is
rendered by jinja2 itself: the text or the error is then jinja2's. So the function gives jinja2's text or
nothing (tests/tiers/test_fastrender.py holds the two equal over generated rows on every shipped template).
The function's source is what ``source_of`` returns; its compiled code is cached beside jinja2's compiled
templates (``templates._compiled_folder``), keyed by the templates' text.
"""

from __future__ import annotations

import itertools

FORMAT = 6  # of the generated source: a new one never reads an old one


class Fallback(Exception):
    """This row takes jinja2's own rendering."""


class _Undefined:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED = _Undefined()  # a name neither the row, a ``set`` nor a global gives


def _fail(*_args, **_kwargs):
    raise Fallback


def _defined(x):
    """``x`` for any use but ``default`` and the tests: jinja2's StrictUndefined raises there."""
    if x is UNDEFINED:
        raise Fallback
    return x


def _str(x) -> str:
    if x is UNDEFINED:
        raise Fallback
    return x if type(x) is str else str(x)


def _default(x, value="", boolean=False):  # jinja2's ``default`` filter
    if x is UNDEFINED or boolean and not _defined(x):
        return value
    return x


def _trim(x):  # jinja2's ``trim`` filter, without its chars argument
    if type(x) is str:
        return x.strip()
    return (x if isinstance(_defined(x), str) else str(x)).strip()


def _split(x, sep):  # ``x.split(sep)`` of a string
    if type(x) is not str or type(sep) is not str:
        raise Fallback
    return x.split(sep)


def _int(x):  # jinja2's ``int`` filter, without arguments: 0 for what does not convert
    if x is UNDEFINED or type(x) is _Bound:
        raise Fallback
    try:
        return int(x, 10) if isinstance(x, str) else int(x)
    except (TypeError, ValueError):
        try:
            return int(float(x))
        except (TypeError, ValueError, OverflowError):
            return 0


class _Bound:
    """What an ``import`` binds a name to (a template of macros, or one macro of it): the statement's
    number and the values its macros see. Used any other way than calling the macro (written out,
    compared, filtered), it makes the row fall back: jinja2 has its own object there."""

    __slots__ = ("k", "ctx")

    def __init__(self, k: int, ctx: dict):
        self.k, self.ctx = k, ctx

    def _no(self, *_args, **_kwargs):
        raise Fallback

    __str__ = __repr__ = __format__ = __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _no
    __hash__ = __iter__ = __len__ = __contains__ = __int__ = __float__ = __index__ = __getattr__ = _no


class _Missing:
    __slots__ = ()


MISSING = _Missing()  # a macro's argument the call does not give


def _ctx(x, k: int) -> dict:
    """The values seen by the macros that import statement ``k`` bound ``x`` to (else jinja2 renders)."""
    if type(x) is _Bound and x.k == k:
        return x.ctx
    raise Fallback


def _own(ctx: dict, name: str) -> dict:
    """``ctx`` if ``name`` there is its template's macro, not a value of the row (else jinja2 renders)."""
    if name in ctx:
        raise Fallback
    return ctx


RUNTIME = {"U": UNDEFINED, "_fail": _fail, "_d": _defined, "_s": _str, "_default": _default, "_trim": _trim,
           "_split": _split, "_int": _int, "_B": _Bound, "_M": MISSING, "_ctx": _ctx, "_own": _own}
# jinja2's own globals the function calls itself (the environment's must be these very objects)
BUILTIN_GLOBALS = {"range": range}

_TESTS = {"defined": "({} is not U)", "undefined": "({} is U)", "none": "({} is None)",
          "string": "isinstance({}, str)"}
_COMPARE = {"eq": "==", "ne": "!=", "lt": "<", "gt": ">", "lteq": "<=", "gteq": ">=", "in": "in",
            "notin": "not in"}
_ARITHMETIC = frozenset({"+", "-", "*", "/", "//", "%"})
_SPECIAL = frozenset({"loop", "self", "caller", "varargs", "kwargs", "super"})  # jinja2 gives these meaning


class Unsupported(Exception):
    """A template whose whole shape the function cannot take (a block): jinja2 renders every row."""


def source_of(env, top: str, filters: dict, globals_: dict) -> str | None:
    """Python source defining ``render(v, a)`` for template ``top`` of ``env`` (``v``: the row's values, None
    dropped; ``a``: the output list's append), or None when the template's shape is not one it takes.
    ``filters``/``globals_``: hfcprov's own (``templates.FILTERS``, ``GLOBALS``), passed by name in ``F_*``
    and ``G_*`` at run time; jinja2's other globals (range, dict, ...) make the row fall back."""
    gen = _Generator(env, filters, globals_)
    try:
        gen.function(top)
    except Unsupported:
        return None
    return "\n".join(gen.lines + [f"render = {gen.names[top]}", ""])


class _Generator:
    def __init__(self, env, filters: dict, globals_: dict):
        self.env, self.filters, self.globals = env, filters, globals_
        self.jinja_globals = set(env.globals)
        self.names: dict[str, str] = {}  # template name -> its function's name
        self.temps = itertools.count()  # names of the generated code's temporaries, and import statements
        self.lines: list[str] = []
        self.modules: dict[str, dict | None] = {}  # template of macros -> {macro: _Macro}; None: not taken
        # what the function being written knows: names its import statements bound ({name: (statement
        # number, template, macro or None for the whole template)}), or the macro it is (``_Macro``)
        self.bound: dict = {}
        self.macro: _Macro | None = None

    def function(self, name: str) -> str:
        from jinja2 import nodes

        if name in self.names:
            return self.names[name]
        fn = self.names[name] = f"t_{len(self.names)}"
        saved, self.bound, self.macro = (self.bound, self.macro), {}, None
        source, filename, _ = self.env.loader.get_source(self.env, name)
        ast = self.env.parse(source, name, filename)
        if any(True for _ in ast.find_all((nodes.Block,))):
            raise Unsupported(name)
        body = list(ast.body)
        out = [f"def {fn}(v, a):"]
        extends = [i for i, n in enumerate(body) if isinstance(n, nodes.Extends)]
        parent = None
        if extends:  # sets, then extends (a child's other content would need jinja2's output rules)
            i = extends[0]
            node = body[i]
            if i != len(body) - 1 or not all(isinstance(n, nodes.Assign) for n in body[:i]) or \
                    not (isinstance(node.template, nodes.Const) and isinstance(node.template.value, str)):
                raise Unsupported(name)
            body, parent = body[:i], node.template.value
        self._block(body, out, 1, {}, False)
        if parent is not None:
            out.append(f"    {self.function(parent)}(v, a)")
        out.append("    return None")
        self.lines += out
        self.bound, self.macro = saved
        return fn

    def module(self, name: str) -> dict | None:
        """The macros of template ``name``, each written as a function ``(ctx, *arguments) -> str``: {macro
        name: _Macro}. None when the template holds anything but macros (its other output is dropped by
        an import, but a ``set`` or an expression would need jinja2's module rules)."""
        from jinja2 import nodes

        if name in self.modules:
            return self.modules[name]
        self.modules[name] = None  # a template importing itself is left to jinja2
        source, filename, _ = self.env.loader.get_source(self.env, name)
        ast = self.env.parse(source, name, filename)
        macros: dict[str, _Macro] = {}
        for node in ast.body:
            if isinstance(node, nodes.Output) and all(isinstance(n, nodes.TemplateData) for n in node.nodes):
                continue
            if not isinstance(node, nodes.Macro):
                return None
            macros[node.name] = _Macro(node, f"m_{next(self.temps)}_{node.name}", name)
        self.modules[name] = macros
        for macro in macros.values():
            self._macro_function(macro, macros)
        return macros

    def _macro_function(self, macro: _Macro, macros: dict) -> None:
        """``def m_N(c, p0, p1, ...)``: the macro's text, its arguments ``_M`` where the call gives none;
        ``c``: the values its template sees (the row's, as the import found them, with context)."""
        saved, self.bound, self.macro = (self.bound, self.macro), {}, macro
        macro.siblings = macros
        out = [f"def {macro.fn}(c, {', '.join(f'p{i}' for i in range(len(macro.params)))}):"
               if macro.params else f"def {macro.fn}(c):", "    v = dict(c)"]
        first_default = len(macro.params) - len(macro.node.defaults)
        for i, param in enumerate(macro.params):  # in order: a default may use the arguments before it
            if i >= first_default:
                default = self._expr(macro.node.defaults[i - first_default], {})
                out.append(f"    v[{param!r}] = ({default}) if p{i} is _M else p{i}")
            else:
                out.append(f"    v[{param!r}] = U if p{i} is _M else p{i}")
        if macro.taken:
            out.append("    _o = []")
            out.append("    a = _o.append")
            self._block(macro.node.body, out, 1, {}, False)
            out.append("    return ''.join(_o)")
        else:
            out.append("    _fail()")
        self.lines += out
        self.bound, self.macro = saved

    # --- statements ---------------------------------------------------------------------------------------------

    def _block(self, body, out: list[str], depth: int, local: dict, in_loop: bool) -> None:
        for node in body:
            self._statement(node, out, depth, local, in_loop)

    def _statement(self, node, out, depth, local, in_loop) -> None:
        from jinja2 import nodes

        pad = "    " * depth
        if isinstance(node, nodes.Output):
            pieces = []
            for child in node.nodes:
                if isinstance(child, nodes.TemplateData):
                    pieces.append((repr(child.data), False))
                else:
                    code, maybe = self._code(child, local)
                    # jinja2 writes str(value); a value that may be undefined goes through _s, which falls back
                    pieces.append((f"{'_s' if maybe else 'str'}({code})", isinstance(child, nodes.Name)))
            # a name written twice in one output (a loop's item: "...{{ i }}.0 Integer {{ i }};") is made
            # text once: nothing between can change it
            names = [text for text, is_name in pieces if is_name]
            made: dict[str, str] = {}
            for text in names:
                if names.count(text) > 1 and text not in made:
                    made[text] = f"_w{next(self.temps)}"
                    out.append(f"{pad}{made[text]} = {text}")
            for text, _ in pieces:
                out.append(f"{pad}a({made.get(text, text)})")
        elif isinstance(node, nodes.Assign) and not in_loop:
            target = node.target
            if isinstance(target, nodes.Name) and target.name not in _SPECIAL:
                out.append(f"{pad}v[{target.name!r}] = {self._expr(node.node, local)}")
            elif isinstance(target, nodes.Tuple) and all(isinstance(t, nodes.Name) and t.name not in _SPECIAL
                                                         for t in target.items):
                n = len(target.items)
                out.append(f"{pad}_t = {self._strict(node.node, local)}")
                out.append(f"{pad}if type(_t) not in (tuple, list) or len(_t) != {n}: _fail()")
                for j, t in enumerate(target.items):
                    out.append(f"{pad}v[{t.name!r}] = _t[{j}]")
            else:
                out.append(f"{pad}_fail()")
        elif isinstance(node, nodes.If):
            out.append(f"{pad}if {self._strict(node.test, local)}:")
            self._block(node.body, out, depth + 1, local, in_loop)
            out.append(f"{pad}    pass")
            for elif_ in node.elif_:
                out.append(f"{pad}elif {self._strict(elif_.test, local)}:")
                self._block(elif_.body, out, depth + 1, local, in_loop)
                out.append(f"{pad}    pass")
            if node.else_:
                out.append(f"{pad}else:")
                self._block(node.else_, out, depth + 1, local, in_loop)
                out.append(f"{pad}    pass")
        elif isinstance(node, nodes.For) and isinstance(node.target, nodes.Name) and not node.else_ and \
                not node.recursive and node.target.name not in _SPECIAL:
            var = f"l{depth}_{node.target.name}"
            out.append(f"{pad}for {var} in {self._strict(node.iter, local)}:")
            inner = {**local, node.target.name: var}
            if node.test is not None:
                out.append(f"{pad}    if not {self._strict(node.test, inner)}: continue")
            self._block(node.body, out, depth + 1, inner, True)
            out.append(f"{pad}    pass")
        elif isinstance(node, (nodes.Import, nodes.FromImport)) and not in_loop and self.macro is None and \
                isinstance(node.template, nodes.Const) and isinstance(node.template.value, str):
            self._import(node, out, pad)
        elif isinstance(node, nodes.Include) and node.with_context and not node.ignore_missing and not in_loop \
                and isinstance(node.template, nodes.Const) and isinstance(node.template.value, str):
            # jinja2 gives an included template a new context: its sets stay in it (in a macro: the
            # macro's arguments and sets over the values its template sees, as ``v`` holds them)
            out.append(f"{pad}{self.function(node.template.value)}(dict(v), a)")
        else:  # a macro of its own, a call block, with, do, a loop's set...: jinja2 renders the row
            out.append(f"{pad}_fail()")

    def _import(self, node, out: list[str], pad: str) -> None:
        """``import T as name`` / ``from T import m as name``: the name holds a ``_Bound`` of this statement
        and the values T's macros see (a copy of the row's as they are now, with context; none without),
        and calls through it are written as calls of T's macro functions."""
        from jinja2 import nodes

        macros = self.module(node.template.value)
        if macros is None:
            out.append(f"{pad}_fail()")
            return
        k = next(self.temps)
        out.append(f"{pad}_c{k} = {'dict(v)' if node.with_context else '{}'}")
        if isinstance(node, nodes.Import):
            targets = [(node.target, None)]
        else:
            targets = [(n, n) if isinstance(n, str) else (n[1], n[0]) for n in node.names]  # (target, macro)
        for target, macro in targets:
            if target in _SPECIAL or macro is not None and (macro.startswith("_") or macro not in macros):
                out.append(f"{pad}_fail()")  # jinja2 exports no macro named _x: its error
                return
        for target, macro in targets:
            out.append(f"{pad}v[{target!r}] = _B({k}, _c{k})")
            self.bound[target] = (k, node.template.value, macro)

    # --- expressions --------------------------------------------------------------------------------------------

    def _expr(self, node, local: dict) -> str:
        """The expression's code; its value may be UNDEFINED (a name, ``default``, a conditional)."""
        return self._code(node, local)[0]

    def _strict(self, node, local: dict) -> str:
        """The expression's code, falling back where jinja2's StrictUndefined would raise."""
        code, maybe = self._code(node, local)
        return f"_d({code})" if maybe else code

    def _code(self, node, local: dict) -> tuple[str, bool]:
        """(code, whether its value may be UNDEFINED)."""
        from jinja2 import nodes

        e, d = self._expr, self._strict
        if isinstance(node, nodes.Const):
            if node.value is None or type(node.value) in (str, int, float, bool):
                return repr(node.value), False
        elif isinstance(node, nodes.Name) and node.ctx == "load":
            name = node.name
            if name in local:
                return local[name], False  # a loop's item
            if name in _SPECIAL:
                return "_fail()", False
            if name in self.jinja_globals:
                if name in self.globals and self.env.globals[name] is self.globals[name]:
                    return f"v.get({name!r}, G_{name})", False
                return "_fail()", False
            return f"v.get({name!r}, U)", True
        elif isinstance(node, (nodes.Tuple, nodes.List)):
            items = [d(i, local) for i in node.items]
            if isinstance(node, nodes.List):
                return f"[{', '.join(items)}]", False
            return f"({', '.join(items)}{',' if len(items) == 1 else ''})", False
        elif isinstance(node, nodes.Filter) and node.node is not None and not node.kwargs and \
                node.dyn_args is None and node.dyn_kwargs is None:
            if node.name == "default" and len(node.args) <= 2:
                if len(node.args) <= 1 and all(isinstance(a, (nodes.Const, nodes.Name)) for a in node.args):
                    # a constant or a name as the default: nothing to evaluate eagerly, so inline
                    temp = f"_v{next(self.temps)}"
                    other = e(node.args[0], local) if node.args else "''"
                    return f"({other} if ({temp} := {e(node.node, local)}) is U else {temp})", True
                return f"_default({', '.join([e(node.node, local), *[e(a, local) for a in node.args]])})", True
            if node.name == "trim" and not node.args:
                return f"_trim({e(node.node, local)})", False
            if node.name == "int" and not node.args and self.env.filters.get("int") is _jinja2_int():
                return f"_int({e(node.node, local)})", False
            if node.name in self.filters and self.env.filters.get(node.name) is self.filters[node.name]:
                return f"F_{node.name}({', '.join(d(x, local) for x in [node.node, *node.args])})", False
        elif isinstance(node, nodes.Test) and node.name in _TESTS and not node.args and not node.kwargs and \
                node.dyn_args is None and node.dyn_kwargs is None:
            return _TESTS[node.name].format(e(node.node, local)), False
        elif isinstance(node, nodes.Compare) and len(node.ops) == 1 and node.ops[0].op in _COMPARE:
            return f"({d(node.expr, local)} {_COMPARE[node.ops[0].op]} {d(node.ops[0].expr, local)})", False
        elif isinstance(node, nodes.BinExpr) and node.operator in _ARITHMETIC:
            # a plain environment (not a sandbox) applies Python's operator; an undefined side raises
            return f"({d(node.left, local)} {node.operator} {d(node.right, local)})", False
        elif isinstance(node, nodes.And):
            return f"({d(node.left, local)} and {d(node.right, local)})", False
        elif isinstance(node, nodes.Or):
            return f"({d(node.left, local)} or {d(node.right, local)})", False
        elif isinstance(node, nodes.Not):
            return f"(not {d(node.node, local)})", False
        elif isinstance(node, nodes.CondExpr):
            other = e(node.expr2, local) if node.expr2 is not None else "U"
            return f"({e(node.expr1, local)} if {d(node.test, local)} else {other})", True
        elif isinstance(node, nodes.Call) and node.dyn_args is None and node.dyn_kwargs is None:
            args = [d(a, local) for a in node.args]
            kwargs = [f"{k.key}={d(k.value, local)}" for k in node.kwargs]
            callee = node.node
            macro_call = self._macro_call(node, local)
            if macro_call is not None:
                return macro_call, False
            if isinstance(callee, nodes.Getattr) and callee.attr == "split" and len(args) == 1 and not kwargs:
                return f"_split({d(callee.node, local)}, {args[0]})", False
            if isinstance(callee, nodes.Name) and callee.name not in local and callee.name in BUILTIN_GLOBALS and \
                    self.env.globals.get(callee.name) is BUILTIN_GLOBALS[callee.name]:
                return f"(G_{callee.name} if v.get({callee.name!r}, G_{callee.name}) is G_{callee.name} " \
                       f"else _fail())({', '.join(args + kwargs)})", False
            if isinstance(callee, nodes.Name) and callee.name not in local and callee.name in self.globals and \
                    self.env.globals.get(callee.name) is self.globals[callee.name]:
                # the global itself, unless the row's column of its name hides it
                return f"(G_{callee.name} if v.get({callee.name!r}, G_{callee.name}) is G_{callee.name} " \
                       f"else _fail())({', '.join(args + kwargs)})", False
        return "_fail()", False


    def _macro_call(self, node, local: dict) -> str | None:
        """The code of a call of an imported macro (``sf.upstream(...)``, ``upstream(...)`` after ``from``)
        or, in a macro, of another macro of its template; None: not such a call."""
        from jinja2 import nodes

        callee = node.node
        if isinstance(callee, nodes.Getattr) and isinstance(callee.node, nodes.Name) and \
                callee.node.name not in local and callee.node.name in self.bound:
            k, template, macro = self.bound[callee.node.name]
            if macro is not None or callee.attr.startswith("_") or callee.attr not in self.modules[template]:
                return "_fail()"
            return self._bind(self.modules[template][callee.attr], node, local,
                              f"_ctx(v.get({callee.node.name!r}, U), {k})")
        if not isinstance(callee, nodes.Name) or callee.name in local:
            return None
        if callee.name in self.bound:
            k, template, macro = self.bound[callee.name]
            if macro is None:
                return "_fail()"
            return self._bind(self.modules[template][macro], node, local, f"_ctx(v.get({callee.name!r}, U), {k})")
        here = self.macro
        if here is not None and callee.name in here.siblings and callee.name not in here.params and \
                callee.name not in here.assigned:
            # the template's own macro, unless the row has a value of that name
            return self._bind(here.siblings[callee.name], node, local, f"_own(c, {callee.name!r})")
        return None

    def _bind(self, macro: _Macro, node, local: dict, ctx: str) -> str:
        """The call ``node`` of ``macro``, its arguments put in place of the parameters they give."""
        if not macro.taken or len(node.args) > len(macro.params):
            return "_fail()"  # more arguments than parameters: jinja2's error (or its varargs)
        slots = ["_M"] * len(macro.params)
        for i, arg in enumerate(node.args):
            slots[i] = self._expr(arg, local)
        for kw in node.kwargs:
            if kw.key not in macro.params or slots[macro.params.index(kw.key)] != "_M":
                return "_fail()"  # an unknown or repeated argument: jinja2's error (or its kwargs)
            slots[macro.params.index(kw.key)] = self._expr(kw.value, local)
        return f"{macro.fn}({', '.join([ctx, *slots])})"


class _Macro:
    """A macro of a template of macros and the name of its function."""

    def __init__(self, node, fn: str, template: str):
        from jinja2 import nodes

        self.node, self.fn, self.template = node, fn, template
        self.params = [a.name for a in node.args]
        self.siblings: dict = {}
        # the names the macro's own ``set``s assign (those hide the template's macros)
        self.assigned = {n.name for a in node.find_all(nodes.Assign) for n in a.target.find_all(nodes.Name)}
        first_default = len(self.params) - len(node.defaults)
        # a parameter of jinja2's own meaning, or a default reading a parameter not yet set: jinja2 calls it
        self.taken = not _SPECIAL.intersection(self.params) and len(set(self.params)) == len(self.params) and all(
                n.name not in self.params[first_default + j:]
                for j, d in enumerate(node.defaults) for n in d.find_all(nodes.Name))


def _jinja2_int():
    from jinja2 import filters

    return filters.do_int


def function_of(code, filters: dict, globals_: dict):
    """The ``render(v, a)`` function of ``code`` (``source_of``'s source, compiled), bound to hfcprov's filters
    and globals."""
    namespace = dict(RUNTIME)
    # a remembered filter's cache itself (``templates._remembered``): a value it cannot take (unhashable)
    # raises, and the row falls back to jinja2's render, which converts it
    namespace.update({f"F_{k}": getattr(f, "cached", f) for k, f in filters.items()})
    namespace.update({f"G_{k}": getattr(f, "cached", f) for k, f in globals_.items()})
    namespace.update({f"G_{k}": f for k, f in BUILTIN_GLOBALS.items()})
    exec(code, namespace)  # noqa: S102 - our own code, from jinja2's syntax tree
    return namespace["render"]
