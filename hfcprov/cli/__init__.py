"""The ``hfcprov`` command: a thin shell over the library.

``main`` is the console script's entry point. It imports no click: a plain per-file invocation
(``hfcprov config encode one.txt -o one.cm``) is parsed by ``shortcut`` from a table generated from
the click commands and calls the very function the click command calls; anything else (help, an
unknown or odd option, a usage error, other commands) goes to the click root in ``root``, whose
domains each live in their own module, imported only when used.

One error funnel (``finish``): a library error (``HfcprovError``), an ``OSError`` on a user's path
and a damaged SQLite database each become one line on stderr naming the path and the cause, exit
status 1 (``OptionError``, a bad option value hfcprov found itself: 2, as click's usage errors).
``-v`` adds the traceback. Anything else is a bug and keeps its traceback.

Exit statuses never share a meaning (``EXIT_*``; README and ``hfcprov --help`` list them).
"""

from __future__ import annotations

import sys

from hfcprov.errors import HfcprovError, OptionError

# One meaning per exit status, for every command.
EXIT_OK = 0  # everything asked for was done
EXIT_ERROR = 1  # an error: the one line on stderr says what and where
EXIT_USAGE = 2  # bad usage: an unknown option, a missing argument, a bad option value
EXIT_FAILED = 3  # some rows, points or modems failed (each named); the others are done
EXIT_DRIFT = 4  # compared and found different: `snmp audit` modems out of sync, `config diff` files differ
EXIT_INTERRUPTED = 130  # Ctrl-C

# -1 = quiet (-q: results and errors only), 0 = normal, 1+ = verbose (-v: tracebacks on errors)
_verbosity = 0


def verbosity() -> int:
    """The global -q/-v level for commands: -1 quiet, 0 normal, >= 1 verbose."""
    return _verbosity


def set_verbosity(verbose: int, quiet: bool) -> None:
    """The root options -v (repeatable) and -q."""
    global _verbosity
    _verbosity = -1 if quiet else verbose


def echo(text: str = "", err: bool = False, nl: bool = True) -> None:
    """``click.echo`` for plain text, without importing click for it.

    Only where the two could differ (an ANSI escape click strips off a terminal, a stream with an
    ASCII encoding click re-wraps) is click itself asked."""
    stream = sys.stderr if err else sys.stdout
    encoding = (getattr(stream, "encoding", None) or "ascii").lower().replace("_", "-")
    if "\x1b" in text or encoding not in ("utf-8", "utf8"):
        import click

        click.echo(text, err=err, nl=nl)
        return
    stream.write(text + "\n" if nl else text)
    stream.flush()


def error_line(err: BaseException) -> str | None:
    """The one line a user sees for ``err``, or None when it is a bug (keeps its traceback)."""
    if isinstance(err, HfcprovError):
        return str(err)
    if isinstance(err, OSError):
        return os_error_line(err)
    sqlite3 = sys.modules.get("sqlite3")  # only a command that opened a database can raise its errors
    if sqlite3 is not None and isinstance(err, sqlite3.DatabaseError):
        return f"database error: {err} (the file may be damaged or not a campaign database)"
    return None


def os_error_line(err: OSError) -> str:
    """'out/x.cm: Permission denied', naming both paths of a failed rename or link."""
    cause = err.strerror or str(err) or type(err).__name__
    if err.filename is None:
        return cause
    if getattr(err, "filename2", None) is not None:
        return f"{err.filename} -> {err.filename2}: {cause}"
    return f"{err.filename}: {cause}"


def finish(run) -> None:
    """Call ``run()`` and exit: its returned int is the exit status (``EXIT_FAILED``, ``EXIT_DRIFT``;
    other return values mean 0); an error becomes one line and status 1 (see the module's doc)."""
    try:
        status = run()
    except KeyboardInterrupt:
        echo("hfcprov: interrupted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as err:  # noqa: BLE001 - the one funnel; a bug is re-raised below
        line = error_line(err)
        if line is None or _verbosity > 0:
            raise
        echo(f"hfcprov: error: {line}", err=True)
        sys.exit(EXIT_USAGE if isinstance(err, OptionError) else EXIT_ERROR)
    sys.exit(status if isinstance(status, int) and not isinstance(status, bool) else 0)


def main(argv=None):
    from hfcprov.cli import shortcut

    args = sys.argv[1:] if argv is None else list(argv)
    call = shortcut.plain_call(args)
    if call is None:
        from hfcprov.cli import root

        finish(lambda: root.run(args))
    else:
        finish(call)
