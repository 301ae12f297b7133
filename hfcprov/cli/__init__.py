"""The ``hfcprov`` command: a thin shell over the library.

Each domain has its own module here exposing one click command or group; they
are imported only when used, so ``hfcprov config decode`` does not pay for
pysnmp, scapy or matplotlib.

One error funnel (``main``): a library error (``HfcprovError``), an ``OSError`` on a
user's path and a damaged SQLite database each become one line on stderr naming the
path and the cause, exit status 1. ``-v`` adds the traceback. Anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import importlib
import sys

import click

from hfcprov import __version__
from hfcprov.errors import HfcprovError

# command name -> "module:attribute" of a click command/group
COMMANDS = {
    "config": ("hfcprov.cli.config_cmd:config", "Encode, decode, verify and diff DOCSIS config files."),
    "build": ("hfcprov.cli.build_cmd:build", "Build one config file per modem from a tier template and an inventory."),
    "buffer": ("hfcprov.cli.build_cmd:buffer", "Buffer Control sizing: advice and predicted latency/throughput tables."),
    "tcp": ("hfcprov.cli.build_cmd:tcp", "TCP tuning rules for HFC paths (socket-buffer sizing)."),
    "tftp": ("hfcprov.cli.tftp_cmd:tftp", "Serve config files to modems over TFTP."),
    "snmp": ("hfcprov.cli.snmp_cmd:snmp", "Audit, reset and list modems over SNMP."),
    "sim": ("hfcprov.cli.sim_cmd:sim", "Simulate a service flow carrying TCP and probe traffic."),
    "emu": ("hfcprov.cli.emu_cmd:emu", "Emulated cable modem in Linux network namespaces (root)."),
    "probe": ("hfcprov.cli.probe_cmd:probe", "Measure latency under load and TCP throughput on a path."),
    "campaign": ("hfcprov.cli.campaign_cmd:campaign", "Run, resume and report lab campaigns."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(name for name, (target, _) in COMMANDS.items() if _importable(target))

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        target, _ = COMMANDS[name]
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name == module_name:
                return None  # that domain is not built yet
            raise
        return getattr(module, attr)

    def format_commands(self, ctx, formatter):
        rows = [(name, help_) for name, (target, help_) in COMMANDS.items() if _importable(target)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))


def _importable(target: str) -> bool:
    import importlib.util  # only for listing commands (--help): ~3 ms a per-file call need not pay

    return importlib.util.find_spec(target.split(":")[0]) is not None


EXIT_CODES = """\b
Exit status:
  0    everything asked for was done
  1    an error: bad input, a file that cannot be read or written, a damaged database
       (one line on stderr says what and where; nothing half-written is left)
  2    bad usage (unknown option, missing argument); `snmp audit`: modems out of sync
  3    some rows or points failed (`build`, `campaign run`); the others are done
  130  interrupted (Ctrl-C)"""

# -1 = quiet (-q: results and errors only), 0 = normal, 1+ = verbose (-v: tracebacks on errors)
_verbosity = 0


def verbosity() -> int:
    """The global -q/-v level for commands: -1 quiet, 0 normal, >= 1 verbose."""
    return _verbosity


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES)
@click.version_option(__version__, prog_name="hfcprov")
@click.option("-v", "--verbose", count=True, help="More detail; with an error, also its traceback.")
@click.option("-q", "--quiet", is_flag=True, help="Only results and errors: no progress, no notes.")
def cli(verbose, quiet):
    """hfcprov: DOCSIS/HFC config files, provisioning, measurement and simulation."""
    global _verbosity
    _verbosity = -1 if quiet else verbose


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


def main(argv=None):
    try:
        # A command may return its exit status (e.g. 2 = modems out of sync); other return values mean 0.
        status = cli.main(args=argv, prog_name="hfcprov", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("hfcprov: aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except click.exceptions.Exit as err:
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("hfcprov: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    except Exception as err:  # noqa: BLE001 - the one funnel; a bug is re-raised below
        line = error_line(err)
        if line is None or _verbosity > 0:
            raise
        click.echo(f"hfcprov: error: {line}", err=True)
        sys.exit(1)
    sys.exit(status if isinstance(status, int) and not isinstance(status, bool) else 0)
