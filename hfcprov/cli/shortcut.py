"""Plain per-file invocations without click: ``hfcprov config encode one.txt -o one.cm``.

Provisioning systems run the encoder once per modem, and importing click costs about as much as
the encode itself, so a plain invocation of a marked command is parsed here, from a table generated
from the click commands (``shortcut_table``, written by ``shortcut_gen``; a test regenerates it and
fails on any difference), and calls the function the click command calls, with the same arguments.

The click command stays the one declaration of the options. This parser knows only the plain forms:
``--name VALUE``, ``-n VALUE``, flags (``--x/--no-x`` too), counts, repeated options, plain integers
and positional arguments. Anything
else (--help or --version, an unknown token, ``--name=VALUE``, ``-nVALUE``, ``--``, a value that
starts with ``-``, a missing or extra argument, a bad choice, a path click would refuse, shell
completion) returns None from ``plain_call``, and the caller runs click on the same arguments, so
messages and exit statuses are click's own.
"""

from __future__ import annotations

import os
import stat  # site has loaded it already
import sys


def runs(target=None):
    """Mark a click callback as doing nothing but ``target(**its parameters)`` (None: nothing at
    all), so the shortcut may call ``target`` itself. Put it right above the ``def``. Both ways
    look ``target`` up by its name when called (``call``)."""
    name = "" if target is None else f"{target.__module__}:{target.__qualname__}"

    def mark(stub):
        def callback(**params):
            return call(name, params)

        callback.__name__, callback.__qualname__, callback.__doc__ = stub.__name__, stub.__qualname__, stub.__doc__
        callback.__module__ = stub.__module__
        callback.shortcut = name
        return callback

    return mark


def call(target: str, params: dict):
    """Call the function named "module:qualname" (nothing for "") with ``params``."""
    if not target:
        return None
    module, _, attr = target.partition(":")
    function = __import__(module, fromlist=[attr])
    for part in attr.split("."):
        function = getattr(function, part)
    return function(**params)


def plain_call(args: list[str]):
    """A function running the plain invocation ``args`` (as click would, minus click), or None."""
    if "_HFCPROV_COMPLETE" in os.environ:  # shell completion: click's job
        return None
    from hfcprov.cli.shortcut_table import COMMANDS

    for path, levels in COMMANDS.items():
        calls = _parse(path, levels, args)
        if calls is not None:
            return lambda: _run(calls)
    return None


def _parse(path, levels, args):
    """[(target, params)] for the root, the group(s) and the command ``path`` names, or None when
    click must decide."""
    calls, i = [], 0
    for depth, level in enumerate(levels):
        is_command = depth == len(path)
        values, positional = {}, []
        specs = {spec["name"]: spec for spec in level["params"]}
        while i < len(args):
            token = args[i]
            if token in level["stop"] or token in ("-", "--"):
                return None
            if not token.startswith("-"):
                if not is_command:
                    break  # a group's options end at its subcommand's name
                positional.append(token)
                i += 1
                continue
            name = level["options"].get(token)
            if name is None:
                return None
            param = specs[name]
            action = param["action"]
            if action == "flag":
                values[name] = True
            elif action == "switch":
                values[name] = token not in param["off"]  # the last spelling given wins, as in click
            elif action == "count":
                values[name] = values.get(name, 0) + 1
            else:
                if i + 1 == len(args) or args[i + 1].startswith("-"):
                    return None
                i += 1
                values[name] = [*values.get(name, ()), args[i]] if param["multiple"] else args[i]
            i += 1
        if not is_command:
            if i == len(args) or args[i] != path[depth]:
                return None
            i += 1
        params = _complete(level["params"], values, positional)
        if params is None:
            return None
        calls.append((level["call"], params))
    return calls


def _complete(specs, values, positional):
    """Every parameter's value as click passes it to the callback, or None if click would refuse."""
    params, rest = {}, list(positional)
    for spec in specs:
        name = spec["name"]
        if spec["kind"] == "argument":
            if spec["nargs"] == -1:
                given, rest = rest, []
            else:
                given, rest = rest[:1], rest[1:]
        elif spec["action"] == "switch":
            params[name] = values.get(name, spec["default"])
            continue
        else:
            given = values.get(name)
            if given is not None and spec["action"] == "value" and not spec["multiple"]:
                given = [given]
        if not given:
            if spec["required"]:
                return None
            params[name] = spec["default"]
            continue
        if spec.get("type") and not all(_accepts(spec["type"], item) for item in given):
            return None
        if spec.get("type", ("",))[0] == "int":
            given = [int(item) for item in given]
        if spec["kind"] == "option" and spec["action"] != "value":
            params[name] = given  # True, or the count
        elif spec.get("multiple") or spec.get("nargs") == -1:
            params[name] = tuple(given)
        else:
            params[name] = given[0]
    return None if rest else params


def _accepts(type_, value: str) -> bool:
    """Would click's type take ``value`` unchanged? (text, a choice, a path: click's own checks)"""
    kind = type_[0]
    if kind == "text":
        return True
    if kind == "choice":
        return value in type_[1]
    if kind == "int":  # plain digits in range; a sign, a space or "1_000" click decides
        return value.isascii() and value.isdigit() and \
            (type_[1] is None or int(value) >= type_[1]) and (type_[2] is None or int(value) <= type_[2])
    if kind == "path":
        rule = type_[1]
        try:
            st = os.stat(value)
        except OSError:
            return not rule["exists"]
        if (stat.S_ISREG(st.st_mode) and not rule["file_okay"]) or (stat.S_ISDIR(st.st_mode) and not rule["dir_okay"]):
            return False
        for check, mode in (("readable", os.R_OK), ("writable", os.W_OK), ("executable", os.X_OK)):
            if rule[check] and not os.access(value, mode):
                return False
        return True
    return False


def _run(calls):
    """Call each level's target in click's order (root, group, command); the command's result.
    A broken pipe and Ctrl-C end as click ends them."""
    try:
        for target, params in calls:
            result = call(target, params)
    except BrokenPipeError:
        # exit 1 without a second complaint when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except (EOFError, KeyboardInterrupt):
        # a blank line closing the terminal's ^C echo, then "aborted"
        from hfcprov.cli import echo

        echo(err=True)
        echo("hfcprov: aborted", err=True)
        sys.exit(130)
    return result
